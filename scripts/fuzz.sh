#!/usr/bin/env bash
# Fuzzes the loaders and parsers with the libFuzzer harnesses of fuzz/: builds them with clang
# (coverage-instrumented, with AddressSanitizer and UndefinedBehaviorSanitizer) in build/fuzz/,
# writes their seed corpora, and runs each harness for a while.
#
#   bash scripts/fuzz.sh                      every harness for 60 seconds
#   bash scripts/fuzz.sh --seconds 600 tokenizer
#
# Harnesses: checkpoint (the llama2.c checkpoint loader, then a few decoder steps), tokenizer (the
# tokenizer loader, encode against run.c's algorithm, decode round trips), options (the option
# parser with every tool's option table), text (the names file, the stories reader and the escaping
# of text shown on the terminal). The corpus each one grows is kept in
# build/fuzz/corpus/NAME and reused by the next run; an input that crashes is saved in
# build/fuzz/crashes/ and the script exits 1 (H2O_FUZZ_BUILD_DIR names another folder).
#
# Options: --seconds N (per harness, default 60); --no-install (never install packages: print
# "SKIPPED: ..." and exit 0 when clang or libFuzzer is missing, as the test suite's short runs do);
# --build-only; --no-build; --fresh (start from the seeds alone, in a temporary corpus).
# Without --no-install, missing packages (clang libclang-rt-dev: the default LLVM) are installed
# through scripts/install-deps.sh, as root or through sudo.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_FUZZ_BUILD_DIR:-$root/build/fuzz}"
models="${H2O_MODELS_DIR:-$root/../shared/models}"
all_harnesses=(checkpoint tokenizer options text)

seconds=60
install=1
do_build=1
do_run=1
fresh=0
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:?--seconds needs a number}"; shift ;;
    --no-install) install=0 ;;
    --build-only) do_run=0 ;;
    --no-build) do_build=0 ;;
    --fresh) fresh=1 ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    checkpoint|tokenizer|options|text) harnesses+=("$1") ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "fuzz.sh: --seconds expects a whole number of seconds, got '$seconds'" >&2
  exit 2
fi
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all_harnesses[@]}")

# Temporary folders (--fresh corpora) go on Ctrl-C or a kill as on a normal exit.
temp_dirs=()
remove_temp_dirs() { if [ ${#temp_dirs[@]} -gt 0 ]; then rm -rf "${temp_dirs[@]}"; fi; }
trap remove_temp_dirs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A clang++ that links libFuzzer with both sanitizers, or nothing.
find_clang() {
  local probe
  probe="$(mktemp -d)"
  # Called as $(find_clang), a subshell of its own: this trap removes the probe on every exit.
  trap 'rm -rf "$probe"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
    > "$probe/probe.cpp"
  for candidate in clang++ clang++-14 clang++-15 clang++-16 clang++-17 clang++-18 clang++-19; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" \
         >/dev/null 2>&1; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

if [ "$do_build" -eq 1 ]; then
  if ! clang="$(find_clang)"; then
    if [ "$install" -eq 0 ]; then
      echo "SKIPPED: no clang++ with libFuzzer here" \
           "(bash scripts/fuzz.sh installs clang and libclang-rt-dev)"
      exit 0
    fi
    "$root/scripts/install-deps.sh" clang libclang-rt-dev
    clang="$(find_clang)" || { echo "fuzz.sh: clang++ still cannot link libFuzzer" >&2; exit 1; }
  fi
  if [ "$install" -eq 1 ]; then "$root/scripts/install-deps.sh"; fi
  cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_BUILD_TYPE=Release \
    -DH2O_FUZZ=ON >/dev/null
  cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)"
  "$build/bin/fuzz_make_seeds" "$build/seeds" "$models/stories260K/tok512.bin"
fi
[ "$do_run" -eq 1 ] || exit 0

for harness in "${harnesses[@]}"; do
  program="$build/bin/fuzz_$harness"
  if [ ! -x "$program" ] || [ ! -d "$build/seeds/$harness" ]; then
    echo "SKIPPED: $program is not built" \
         "(no clang++ with libFuzzer: bash scripts/fuzz.sh builds it)"
    exit 0
  fi
done

status=0
for harness in "${harnesses[@]}"; do
  if [ "$fresh" -eq 1 ]; then
    corpus="$(mktemp -d)"
    temp_dirs+=("$corpus")
  else
    corpus="$build/corpus/$harness"
    mkdir -p "$corpus"
  fi
  crashes="$build/crashes/$harness"
  mkdir -p "$crashes"
  log="$build/fuzz_$harness.log"
  # -timeout: one input may take 10 s at most; -rss_limit_mb: 2 GiB of memory at most.
  if (cd "$build" && "bin/fuzz_$harness" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" \
        "$corpus" "$build/seeds/$harness") >"$log" 2>&1; then
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
    echo "fuzz $harness: ${runs:-?} inputs in ${seconds} s, no crash, no sanitizer report" \
         "(corpus $(find "$corpus" -type f | wc -l) files)"
  else
    status=1
    echo "fuzz $harness: FAILED; the input is in $crashes/, the log in $log:"
    grep -E "ERROR|broken promise|runtime error|SUMMARY|Test unit written" "$log" | head -20
  fi
  if [ "$fresh" -eq 1 ]; then rm -rf "$corpus"; fi
done
exit "$status"
