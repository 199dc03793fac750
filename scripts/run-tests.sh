#!/usr/bin/env bash
# The second of the README's two commands: installs what is missing, builds Release in build/, and
# runs the test suite with CTest: the unit tests, every lesson's and tool's output, bad input to
# every program, the pictures and the docs (every test but those labelled "deep").
#
#   bash scripts/run-tests.sh                  the suite (ctest -LE deep), a few minutes
#   bash scripts/run-tests.sh -R tokenizer     other arguments go to ctest
#   bash scripts/run-tests.sh --deep [--minutes N] [STAGE...]
#       the deep run, its stages in this order (all of them unless some are named):
#         slow     in build/: the numeric tests again under every decode kernel
#                  (H2O_MATVEC_KERNEL) and every OpenBLAS kernel (OPENBLAS_CORETYPE) this CPU can
#                  run, and the output checks too slow for the suite (ctest -L deep -LE fuzz)
#         fuzz     the libFuzzer harnesses, built with clang, AddressSanitizer and
#                  UndefinedBehaviorSanitizer in build/fuzz/, 5 seconds each (ctest -L fuzz)
#         address  the suite built with AddressSanitizer and UndefinedBehaviorSanitizer (g++'s
#                  runtimes), leaks counted as errors, in build/sanitize/
#         thread   ThreadSanitizer in build/tsan/ over the tests that run threads (ctest -L
#                  threads), built with clang and LLVM's OpenMP runtime, whose Archer tool shows
#                  ThreadSanitizer how OpenMP's threads synchronise (CMakeLists.txt says why)
#       --minutes N gives the deep run N minutes: a stage that would not fit in what is left is
#       skipped, one still running when the time is up is stopped, and either is named at the end
#       without failing the run; a failed test or build fails it. It installs clang,
#       libclang-rt-dev and libomp-dev when missing.
#   bash scripts/run-tests.sh --sanitize [address|thread]
#       one stage of the deep run alone (address when none is named).
# H2O_BUILD_DIR (default build/) moves the build folder, and the deep run's folders with it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${H2O_BUILD_DIR:-$root/build}"
all_stages=(slow fuzz address thread)
# Minutes each stage takes from scratch on 2 quiet cores (docs/testing.md, "The deep run"): what
# --minutes compares with what is left.
declare -A stage_minutes=([slow]=2 [fuzz]=11 [address]=30 [thread]=6)

deep=0
minutes=""
stages=()
ctest_args=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  arg="${args[$i]}"
  case "$arg" in
    --deep) deep=1 ;;
    --minutes) minutes="${args[$((i + 1))]:-}"; i=$((i + 1)) ;;
    --minutes=*) minutes="${arg#--minutes=}" ;;
    slow | fuzz | address | thread)
      if [ "$deep" -eq 1 ]; then stages+=("$arg"); else ctest_args+=("$arg"); fi ;;
    --sanitize=*) deep=1; stages+=("${arg#--sanitize=}") ;;
    --sanitize)
      deep=1
      next="${args[$((i + 1))]:-}"
      if [ "$next" = address ] || [ "$next" = thread ]; then
        stages+=("$next"); i=$((i + 1))
      else
        stages+=(address)
      fi ;;
    *) ctest_args+=("$arg") ;;
  esac
done
for stage in "${stages[@]+"${stages[@]}"}"; do
  case "$stage" in
    slow | fuzz | address | thread) ;;
    *) echo "run-tests: --sanitize takes address or thread, not '$stage'" >&2; exit 2 ;;
  esac
done
if [ -n "$minutes" ] && ! [[ "$minutes" =~ ^[1-9][0-9]*$ ]]; then
  echo "run-tests: --minutes expects a whole number of minutes, got '$minutes'" >&2
  exit 2
fi
if [ -n "$minutes" ] && [ "$deep" -eq 0 ]; then
  echo "run-tests: --minutes is for the deep run (--deep)" >&2
  exit 2
fi
jobs="$(nproc 2>/dev/null || echo 2)"

# One stage of the deep run, in this shell (run_stage below runs it under its time limit).
stage_body() {
  case "$1" in
    slow)
      "$root/scripts/build.sh"
      cd "$base" && ctest --output-on-failure -j "$jobs" -L deep -LE fuzz \
        "${ctest_args[@]+"${ctest_args[@]}"}"
      ;;
    fuzz)
      "$root/scripts/build.sh"
      cd "$base" && ctest --output-on-failure -j "$jobs" -L fuzz \
        "${ctest_args[@]+"${ctest_args[@]}"}"
      ;;
    address)
      export H2O_BUILD_DIR="$base/sanitize"
      # Optimised (xtensor crawls without it) but with line numbers in the sanitizers' reports.
      "$root/scripts/build.sh" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH2O_SANITIZE=address
      # Leaks are errors too; every report stops the program with a stack trace.
      export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
      cd "$H2O_BUILD_DIR" && ctest --output-on-failure -j "$jobs" -LE deep \
        "${ctest_args[@]+"${ctest_args[@]}"}"
      ;;
    thread)
      export H2O_BUILD_DIR="$base/tsan"
      local clang="" candidate archer
      for candidate in clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14; do
        if command -v "$candidate" >/dev/null 2>&1; then clang="$candidate"; break; fi
      done
      [ -n "$clang" ] || { echo "run-tests: the thread stage needs clang++" >&2; return 1; }
      # Archer, LLVM's OpenMP tool for ThreadSanitizer: libomp loads the library this names.
      archer="$("$clang" -print-file-name=libarcher.so)"
      if [ ! -f "$archer" ]; then  # Debian keeps it in LLVM's own lib/, beside clang's bin/
        archer="$(dirname "$(readlink -f "$(command -v "$clang")")")/../lib/libarcher.so"
      fi
      if [ ! -f "$archer" ]; then
        echo "run-tests: $clang has no libarcher.so (LLVM's OpenMP runtime: libomp-dev)" >&2
        return 1
      fi
      export OMP_TOOL_LIBRARIES="$archer"
      # Only what the "threads" tests run (lessons and other tools have no threads of their own).
      H2O_BUILD_TARGETS="${H2O_BUILD_TARGETS:-h2o_tests generate bench_decode make_random_model}" \
        "$root/scripts/build.sh" -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DH2O_SANITIZE=thread
      # Every report is an error, with the stacks of both accesses. Accesses inside libraries built
      # without ThreadSanitizer (libomp's own bookkeeping, OpenBLAS) are not checked: Archer asks
      # for this, as those would be reported without the synchronisation that orders them.
      export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1\
${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
      cd "$H2O_BUILD_DIR" && ctest --output-on-failure -j "$jobs" -L threads \
        "${ctest_args[@]+"${ctest_args[@]}"}"
      ;;
  esac
}

# The script again, for one stage (under `timeout` when the deep run has a time budget).
if [ -n "${H2O_RUN_TESTS_STAGE:-}" ]; then
  stage_body "$H2O_RUN_TESTS_STAGE"
  exit $?
fi

if [ "$deep" -eq 0 ]; then
  "$root/scripts/install-deps.sh"
  "$root/scripts/build.sh"
  cd "$base"
  ctest --output-on-failure -j "$jobs" -LE deep "${ctest_args[@]+"${ctest_args[@]}"}"
  exit $?
fi

# The deep run.
[ ${#stages[@]} -gt 0 ] || stages=("${all_stages[@]}")
# clang with libFuzzer and ThreadSanitizer's runtime, LLVM's OpenMP runtime (libomp, with Archer).
"$root/scripts/install-deps.sh" clang libclang-rt-dev libomp-dev
start=$SECONDS
deadline=""
[ -z "$minutes" ] || deadline=$((start + minutes * 60))
summary=()
failed=0
logs="$base/deep-logs"
mkdir -p "$logs"
for stage in "${all_stages[@]}"; do
  case " ${stages[*]} " in *" $stage "*) ;; *) continue ;; esac
  limit=()
  if [ -n "$deadline" ]; then
    left=$((deadline - SECONDS))
    if [ $((stage_minutes[$stage] * 60)) -gt "$left" ]; then
      summary+=("$stage: skipped, about ${stage_minutes[$stage]} minutes and $((left / 60)) left")
      continue
    fi
    limit=(timeout --kill-after=30 "$left")
  fi
  printf '\n==================== deep run: %s ====================\n\n' "$stage"
  stage_start=$SECONDS
  set +e
  H2O_RUN_TESTS_STAGE="$stage" "${limit[@]+"${limit[@]}"}" bash "$root/scripts/run-tests.sh" \
    "${ctest_args[@]+"${ctest_args[@]}"}" 2>&1 | tee "$logs/$stage.log"
  status=${PIPESTATUS[0]}
  set -e
  took="$(((SECONDS - stage_start) / 60)) min $(((SECONDS - stage_start) % 60)) s"
  if [ "$status" -eq 0 ]; then
    summary+=("$stage: passed in $took")
  elif [ -n "$deadline" ] && { [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; } &&
       ! grep -q -E '\*\*\*(Failed|Exception|Timeout)|Error [0-9]+$' "$logs/$stage.log"; then
    # Stopped by the budget, with nothing failed before that.
    summary+=("$stage: stopped after $took, out of time (nothing had failed)")
  else
    summary+=("$stage: FAILED after $took (log: $logs/$stage.log)")
    failed=1
  fi
done
printf '\n==================== deep run: %d min %d s ====================\n' \
  $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
printf '%s\n' "${summary[@]}"
exit "$failed"
