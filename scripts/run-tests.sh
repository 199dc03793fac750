#!/usr/bin/env bash
# The second of the README's two commands: installs what is missing, builds, and runs the whole
# test suite with CTest (unit tests, every lesson's output, every program's bad-input handling,
# and the numeric tests again under every decode kernel and OpenBLAS kernel this CPU can run).
#
#   bash scripts/run-tests.sh                     Release build in build/
#   bash scripts/run-tests.sh --sanitize [address]
#                                   the same suite built with AddressSanitizer and
#                                   UndefinedBehaviorSanitizer (g++'s own runtimes, which Debian
#                                   installs with g++) in build-sanitize/
#   bash scripts/run-tests.sh --sanitize thread
#                                   ThreadSanitizer, in build-tsan/: the tests and programs that
#                                   run threads (CTest label "threads"), built with clang and LLVM's
#                                   OpenMP runtime, whose Archer tool shows ThreadSanitizer how
#                                   OpenMP's threads synchronise (CMakeLists.txt says why not g++)
# Other arguments go to ctest, e.g. `bash scripts/run-tests.sh -R tokenizer`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sanitize=""
ctest_args=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  arg="${args[$i]}"
  case "$arg" in
    --sanitize=*) sanitize="${arg#--sanitize=}" ;;
    --sanitize)
      sanitize=address
      next="${args[$((i + 1))]:-}"
      if [ "$next" = address ] || [ "$next" = thread ]; then sanitize="$next"; i=$((i + 1)); fi ;;
    *) ctest_args+=("$arg") ;;
  esac
done
case "$sanitize" in
  "" | address | thread) ;;
  *) echo "run-tests: --sanitize takes address or thread, not '$sanitize'" >&2; exit 2 ;;
esac

if [ "$sanitize" = thread ]; then
  # clang, its ThreadSanitizer runtime and LLVM's OpenMP runtime (libomp, with Archer).
  "$root/scripts/install-deps.sh" clang libclang-rt-dev libomp-dev
else
  "$root/scripts/install-deps.sh"
fi
case "$sanitize" in
  address)
    export H2O_BUILD_DIR="${H2O_BUILD_DIR:-$root/build-sanitize}"
    # Optimised (xtensor crawls without it) but with line numbers in the sanitizers' reports.
    "$root/scripts/build.sh" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH2O_SANITIZE=address
    # Leaks are errors too; every report stops the program with a stack trace.
    export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    ;;
  thread)
    export H2O_BUILD_DIR="${H2O_BUILD_DIR:-$root/build-tsan}"
    clang=""
    for candidate in clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14; do
      if command -v "$candidate" >/dev/null 2>&1; then clang="$candidate"; break; fi
    done
    [ -n "$clang" ] || { echo "run-tests: --sanitize thread needs clang++" >&2; exit 1; }
    # Archer, LLVM's OpenMP tool for ThreadSanitizer: libomp loads the library this names.
    archer="$("$clang" -print-file-name=libarcher.so)"
    if [ ! -f "$archer" ]; then  # Debian keeps it in LLVM's own lib/, beside clang's bin/
      archer="$(dirname "$(readlink -f "$(command -v "$clang")")")/../lib/libarcher.so"
    fi
    if [ ! -f "$archer" ]; then
      echo "run-tests: $clang has no libarcher.so (LLVM's OpenMP runtime: libomp-dev)" >&2
      exit 1
    fi
    export OMP_TOOL_LIBRARIES="$archer"
    # Only what the "threads" tests run (lessons and other tools have no threads of their own).
    H2O_BUILD_TARGETS="${H2O_BUILD_TARGETS:-h2o_tests generate bench_decode make_random_model}" \
      "$root/scripts/build.sh" -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DH2O_SANITIZE=thread
    # Every report is an error, with the stacks of both accesses. Accesses inside libraries built
    # without ThreadSanitizer (libomp's own bookkeeping, OpenBLAS) are not checked: Archer asks for
    # this, as those would be reported without the synchronisation that orders them.
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1\
${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    ctest_args=(-L threads "${ctest_args[@]+"${ctest_args[@]}"}")
    ;;
  *) "$root/scripts/build.sh" ;;
esac
build="${H2O_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "${ctest_args[@]+"${ctest_args[@]}"}"
