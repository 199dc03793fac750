#!/usr/bin/env bash
# The second of the README's two commands: installs what is missing, builds, and runs the whole
# test suite with CTest (unit tests, every lesson's output, every program's bad-input handling).
#
#   bash scripts/run-tests.sh              Release build in build/
#   bash scripts/run-tests.sh --sanitize   the same suite built with AddressSanitizer and
#                                          UndefinedBehaviorSanitizer (g++'s own runtimes, which
#                                          Debian installs with g++) in build-sanitize/
# Other arguments go to ctest, e.g. `bash scripts/run-tests.sh -R tokenizer`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitize=0
ctest_args=()
for arg in "$@"; do
  if [ "$arg" = "--sanitize" ]; then sanitize=1; else ctest_args+=("$arg"); fi
done

"$root/scripts/install-deps.sh"
if [ "$sanitize" -eq 1 ]; then
  export H2O_BUILD_DIR="${H2O_BUILD_DIR:-$root/build-sanitize}"
  # Optimised (xtensor crawls without it) but with line numbers in the sanitizers' reports.
  "$root/scripts/build.sh" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH2O_SANITIZE=ON
  # Leaks are errors too; every report stops the program with a stack trace.
  export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
else
  "$root/scripts/build.sh"
fi
build="${H2O_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "${ctest_args[@]}"
