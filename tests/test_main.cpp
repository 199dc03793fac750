// The tests' main(), the same for Catch2 2 and 3 (h2o_catch.hpp): Catch2 2 compiles its runner
// into this file (CATCH_CONFIG_RUNNER), Catch2 3 has it in its library.
//
// Under OPENBLAS_CORETYPE=NAME (tests/CMakeLists.txt runs the numeric tests so, once per OpenBLAS
// kernel a student's CPU may select) it first makes sure the run means something: a CPU that
// cannot run that kernel, or an OpenBLAS built for one CPU only (which ignores the variable),
// prints "SKIPPED: ..." and ends the run, which CTest then reports as skipped.
#define CATCH_CONFIG_RUNNER
#include "h2o_catch.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <strings.h>

#if H2O_CATCH2_MAJOR == 3
#include <catch2/catch_session.hpp>
#endif

extern "C" char* openblas_get_corename(void);

namespace {

// Whether this CPU has the instructions OpenBLAS's kernels for `core` use.
bool cpu_runs_openblas_core(const std::string& core) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (strcasecmp(core.c_str(), "Prescott") == 0) return __builtin_cpu_supports("sse3");
  if (strcasecmp(core.c_str(), "Nehalem") == 0) return __builtin_cpu_supports("sse4.2");
  if (strcasecmp(core.c_str(), "Sandybridge") == 0) return __builtin_cpu_supports("avx");
  if (strcasecmp(core.c_str(), "Haswell") == 0 || strcasecmp(core.c_str(), "Zen") == 0) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  if (strcasecmp(core.c_str(), "SkylakeX") == 0) {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512cd");
  }
#endif
  (void)core;
  return false;
}

}  // namespace

int main(int argc, char* argv[]) {
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  if (core != nullptr && core[0] != '\0') {
    if (!cpu_runs_openblas_core(core)) {
      std::printf("SKIPPED: this CPU cannot run OpenBLAS's %s kernels\n", core);
      return 0;
    }
    const char* running = openblas_get_corename();
    if (running == nullptr || strcasecmp(running, core) != 0) {
      std::printf("SKIPPED: OPENBLAS_CORETYPE=%s, but this OpenBLAS runs its %s kernels (built "
                  "for one CPU?)\n", core, running ? running : "unknown");
      return 0;
    }
  }
  return Catch::Session().run(argc, argv);
}
