// h2o_catch.hpp: Catch2 for the tests, whichever major version is installed: 2 (Debian 12, header
// catch2/catch.hpp) or 3 (Debian 13 and newer, Fedora, Homebrew, conda-forge: one header per
// part). tests/CMakeLists.txt defines H2O_CATCH2_MAJOR from the Catch2 that CMake found, so the
// choice follows the library the tests link, not whichever headers happen to be on the path.
//
// The tests write the same code for both: TEST_CASE, CHECK, GENERATE(range(...)), Approx, and
// h2o_catch::Contains for "the message contains this text" (Catch2 3 renamed that matcher
// ContainsSubstring; its Contains looks for an element of a range).
#pragma once

#include <string>

#if H2O_CATCH2_MAJOR == 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;  // Catch2 2 has it in the global namespace
#elif H2O_CATCH2_MAJOR == 2
#include <catch2/catch.hpp>
#else
#error "H2O_CATCH2_MAJOR must be 2 or 3 (tests/CMakeLists.txt defines it from find_package(Catch2))"
#endif

namespace h2o_catch {

// Matches a string holding `part` somewhere (case-sensitive).
inline auto Contains(const std::string& part) {
#if H2O_CATCH2_MAJOR == 3
  return Catch::Matchers::ContainsSubstring(part);
#else
  return Catch::Matchers::Contains(part);
#endif
}

}  // namespace h2o_catch
