// The tests' main(), the same for Catch2 2 and 3 (h2o_catch.hpp): Catch2 2 compiles its runner
// into this file (CATCH_CONFIG_RUNNER), Catch2 3 has it in its library.
#define CATCH_CONFIG_RUNNER
#include "h2o_catch.hpp"

#if H2O_CATCH2_MAJOR == 3
#include <catch2/catch_session.hpp>
#endif

int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
