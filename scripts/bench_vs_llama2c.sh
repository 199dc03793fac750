#!/usr/bin/env bash
# Speed of this project next to llama2.c's run.c, measured side by side in one run, on the
# stories260K shape and random checkpoints of the stories15M and stories110M shapes that this
# script writes itself (bin/make_random_model: llama2.c format, made-up tokenizer, no download).
#
#   scripts/bench_vs_llama2c.sh --runc PATH/TO/run.c     (run.c is never part of this project)
#   scripts/bench_vs_llama2c.sh                                 (this project's figures only)
#
# Prints, per shape: decode tok/s (greedy, no prompt) of the project and of run.c built twice
# (gcc -O3, and gcc -Ofast -march=native), and whether the texts are byte-identical; prompt tok/s
# (the project reads a prompt in batches, run.c one token at a time); start-up (a whole process
# that runs one position: load, check, one forward); the project's decode tok/s with 2 threads
# for the weight products; and, from bench_decode, H2O's scoring + eviction as a share of the
# attention of the same cache (budgets 64, 256, 1024) and batched versus token-by-token prompts.
# Each figure is the median of --repeats runs, the programs alternating within each repeat; the
# machine's load (uptime) is printed before and after. The project is the default build: x86-64
# baseline code, its vector kernels picked at start-up (AVX2 + FMA where the CPU has them),
# OpenBLAS choosing its own kernels; nothing is built with -march=native.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_BUILD_DIR:-$root/build}"
me="bench_vs_llama2c"

usage() {
  cat <<EOF
usage: scripts/$me.sh [--runc FILE] [--shapes LIST] [--repeats N] [--work DIR] [--no-build]

Decode, prompt and start-up speed of this project next to llama2.c's run.c, side by side.

options:
  --runc FILE     llama2.c's run.c (you provide it); built here with gcc -O3 and with
                  gcc -Ofast -march=native. Without it only the project is measured.
  --shapes LIST   any of 260k,15m,110m (default: all three)
  --repeats N     runs per figure, median shown, 1..50 (default 3)
  --work DIR      where the random models and run.c builds go (default /tmp/h2o_bench; the
                  110M model is 438 MB, written once and reused)
  --no-build      use the existing build in $build instead of building first
  --help          this text
EOF
}

fail() {
  echo "$me: error: $*" >&2
  exit 2
}

runc="" shapes="260k,15m,110m" repeats=3 work="/tmp/h2o_bench" do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --help | -h) usage; exit 0 ;;
    --runc) [ $# -ge 2 ] || fail "--runc needs a value"; runc="$2"; shift 2 ;;
    --shapes) [ $# -ge 2 ] || fail "--shapes needs a value"; shapes="$2"; shift 2 ;;
    --repeats) [ $# -ge 2 ] || fail "--repeats needs a value"; repeats="$2"; shift 2 ;;
    --work) [ $# -ge 2 ] || fail "--work needs a value"; work="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    *) fail "unknown option $1 (see --help)" ;;
  esac
done
[[ "$repeats" =~ ^[0-9]+$ ]] && [ "$repeats" -ge 1 ] && [ "$repeats" -le 50 ] ||
  fail "--repeats must be a whole number from 1 to 50, got '$repeats'"
IFS=',' read -r -a shape_list <<<"$shapes"
[ ${#shape_list[@]} -ge 1 ] || fail "--shapes is empty"
for s in "${shape_list[@]}"; do
  case "$s" in
    260k | 15m | 110m) ;;
    *) fail "--shapes: unknown shape '$s' (260k, 15m or 110m)" ;;
  esac
done
if [ -n "$runc" ]; then
  [ -f "$runc" ] || fail "--runc '$runc' is not a file"
  command -v gcc >/dev/null || fail "gcc is needed to build run.c"
fi
mkdir -p "$work" 2>/dev/null && [ -w "$work" ] || fail "--work '$work' is not a writable folder"

if [ "$do_build" -eq 1 ]; then
  "$root/scripts/build.sh" >/dev/null
fi
bin="$build/bin"
for program in generate bench_decode make_random_model; do
  [ -x "$bin/$program" ] || fail "$bin/$program is missing (build first, or drop --no-build)"
done

if [ -n "$runc" ]; then
  gcc -O3 -o "$work/run_O3" "$runc" -lm || fail "could not build $runc with gcc -O3"
  gcc -Ofast -march=native -o "$work/run_fast" "$runc" -lm ||
    fail "could not build $runc with gcc -Ofast -march=native"
fi

# ------------------------------------------------------------------------------------------------
# Helpers

median() {  # numbers on stdin -> their median
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
fmt() { awk -v a="$1" 'BEGIN { if (a >= 100) printf "%.0f", a; else printf "%.2f", a }'; }
now_us() { echo "${EPOCHREALTIME/./}"; }

# "achieved tok/s: X" (run.c and generate print it to stderr) from a run's stderr file.
achieved() { sed -n 's/^achieved tok\/s: *\([0-9.]*\).*/\1/p' "$1" | tail -1; }

# Wall-clock seconds of one whole process (start-up measurements).
wall_seconds() {
  local start end
  start=$(now_us)
  "$@" >/dev/null 2>&1
  end=$(now_us)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", (b - a) / 1e6 }'
}

load() { uptime | sed 's/.*load average: *//'; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "load before (1, 5, 15 min): $(load)"
echo "project: default build (baseline x86-64, vector kernels dispatched at start-up), 1 thread"
[ -n "$runc" ] && echo "run.c:   $runc, gcc $(gcc -dumpfullversion) -O3 and -Ofast -march=native"
echo "repeats: $repeats (medians), programs alternating"
echo

# A prompt text of 3n/2 bytes: at least about n tokens, and at most 3n/2 + 2 (every token holds a
# byte or more), so it fits the models' seq_len.
prompt_text() {
  local n="$1" text=""
  while [ ${#text} -lt $((n * 3 / 2)) ]; do
    text+="the little cat sat on a warm mat and looked at the sky "
  done
  echo "${text:0:$((n * 3 / 2))}"
}

# One row of the results table: shape, measure, the project's figure, run.c -O3's and -Ofast's
# ("" when not measured), a note. The ratios are project / run.c.
declare -a table_rows=()
row() {
  local o3="${4:--}" fast="${5:--}" r1="-" r2="-"
  if [ -n "$4" ]; then r1="$(ratio "$3" "$4")x" r2="$(ratio "$3" "$5")x"; fi
  table_rows+=("| $1 | $2 | $3 | $o3 | $fast | $r1 | $r2 | $6 |")
}

for shape in "${shape_list[@]}"; do
  # ----------------------------------------------------------------------------------------------
  # The model: stories260K's shape (seq_len 512), stories15M's (seq_len 1024, so that a 512-token
  # prompt fits; speed per token does not depend on it), stories110M's (seq_len 1024).
  case "$shape" in
    260k) seq=512 steps=512 prompt_tokens=256 ;;
    15m) seq=1024 steps=256 prompt_tokens=512 ;;
    110m) seq=1024 steps=1024 prompt_tokens=512 ;;
  esac
  dir="$work/$shape"
  if [ ! -f "$dir/model.bin" ] || [ ! -f "$dir/tok.bin" ] ||
    [ "$(cat "$dir/shape" 2>/dev/null)" != "$shape $seq" ]; then
    "$bin/make_random_model" --shape "$shape" --seq-len "$seq" --out "$dir" >/dev/null
    echo "$shape $seq" >"$dir/shape"
  fi
  model="$dir/model.bin" tok="$dir/tok.bin"
  echo "== $shape: $("$bin/generate" --model "$model" --tokenizer "$tok" --steps 1 2>&1 >/dev/null |
    sed -n 's/^model: //p')"

  # Decode: greedy, no prompt, `steps` positions.
  : >"$work/dec_project" >"$work/dec_O3" >"$work/dec_fast" >"$work/dec_threads"
  same="-"
  for ((r = 0; r < repeats; r++)); do
    "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 --steps "$steps" \
      >"$work/text_project" 2>"$work/err"
    achieved "$work/err" >>"$work/dec_project"
    "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 --steps "$steps" \
      --threads 2 >/dev/null 2>"$work/err"
    achieved "$work/err" >>"$work/dec_threads"
    if [ -n "$runc" ]; then
      "$work/run_O3" "$model" -z "$tok" -t 0 -n "$steps" >/dev/null 2>"$work/err"
      achieved "$work/err" >>"$work/dec_O3"
      "$work/run_fast" "$model" -z "$tok" -t 0 -n "$steps" >"$work/text_runc" 2>"$work/err"
      achieved "$work/err" >>"$work/dec_fast"
      if cmp -s "$work/text_project" "$work/text_runc"; then same="yes"; else same="NO"; fi
    fi
  done
  p=$(median <"$work/dec_project") t2=$(median <"$work/dec_threads")
  if [ -n "$runc" ]; then
    o3=$(median <"$work/dec_O3") fast=$(median <"$work/dec_fast")
    row "$shape" "decode tok/s ($steps positions)" "$(fmt "$p")" "$(fmt "$o3")" "$(fmt "$fast")" \
      "text identical: $same"
  else
    row "$shape" "decode tok/s ($steps positions)" "$(fmt "$p")" "" "" ""
  fi
  row "$shape" "decode tok/s, 2 threads" "$(fmt "$t2")" "" "" "$(ratio "$t2" "$p")x of 1 thread"

  # Prompt: a text of about prompt_tokens tokens; -n / --steps = its length, so every position
  # is a prompt position (run.c's achieved tok/s is then its prompt speed).
  text="$(prompt_text "$prompt_tokens")"
  n_prompt=$("$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 --steps 1 \
    --prompt "$text" 2>&1 >/dev/null | sed -n 's/^note: the prompt has \([0-9]*\) tokens.*/\1/p')
  n_prompt=${n_prompt:-$prompt_tokens}
  if [ "$n_prompt" -gt "$prompt_tokens" ]; then n_prompt=$prompt_tokens; fi
  : >"$work/pr_project" >"$work/pr_O3" >"$work/pr_fast"
  for ((r = 0; r < repeats; r++)); do
    "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 --steps "$n_prompt" \
      --prompt "$text" >/dev/null 2>"$work/err"
    sed -n 's/^prompt: [0-9]* tokens in batches, \([0-9.]*\) tok\/s/\1/p' "$work/err" \
      >>"$work/pr_project"
    if [ -n "$runc" ]; then
      "$work/run_O3" "$model" -z "$tok" -t 0 -n "$n_prompt" -i "$text" >/dev/null 2>"$work/err"
      achieved "$work/err" >>"$work/pr_O3"
      "$work/run_fast" "$model" -z "$tok" -t 0 -n "$n_prompt" -i "$text" >/dev/null 2>"$work/err"
      achieved "$work/err" >>"$work/pr_fast"
    fi
  done
  p=$(median <"$work/pr_project")
  if [ -n "$runc" ]; then
    o3=$(median <"$work/pr_O3") fast=$(median <"$work/pr_fast")
    row "$shape" "prompt tok/s ($n_prompt tokens)" "$(fmt "$p")" "$(fmt "$o3")" "$(fmt "$fast")" ""
  else
    row "$shape" "prompt tok/s ($n_prompt tokens)" "$(fmt "$p")" "" "" ""
  fi

  # Start-up: a whole process that runs one position (load, checks, one forward pass).
  : >"$work/st_project" >"$work/st_O3" >"$work/st_fast"
  for ((r = 0; r < repeats + 2; r++)); do
    wall_seconds "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 --steps 1 \
      >>"$work/st_project"
    echo >>"$work/st_project"
    if [ -n "$runc" ]; then
      wall_seconds "$work/run_O3" "$model" -z "$tok" -t 0 -n 1 >>"$work/st_O3"
      echo >>"$work/st_O3"
      wall_seconds "$work/run_fast" "$model" -z "$tok" -t 0 -n 1 >>"$work/st_fast"
      echo >>"$work/st_fast"
    fi
  done
  p=$(median <"$work/st_project")
  if [ -n "$runc" ]; then
    o3=$(median <"$work/st_O3") fast=$(median <"$work/st_fast")
    row "$shape" "start-up s (one position)" "$p" "$o3" "$fast" "lower is better"
  else
    row "$shape" "start-up s (one position)" "$p" "" "" "lower is better"
  fi
  echo "   done (load now $(load))"
done

echo
echo "| shape | measure | project | run.c -O3 | run.c -Ofast -march=native | project / -O3 |" \
  "project / fast | note |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${table_rows[@]}"
echo

# H2O's bookkeeping and batched prompts, from bench_decode (in-memory random weights).
for shape in "${shape_list[@]}"; do
  [ "$shape" = "110m" ] && continue  # the 15M row already shows the memory-bound regime
  echo "== bench_decode --shape $shape"
  "$bin/bench_decode" --shape "$shape" --sections eviction,prompt --budgets 64,256,1024 \
    --prompt 512 --repeats "$repeats" | sed 1,2d
done
echo "load after (1, 5, 15 min): $(load)"
