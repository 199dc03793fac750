#!/usr/bin/env bash
# Speed of this project next to llama2.c's run.c, measured side by side in one run, on the
# stories260K shape and random checkpoints of the stories15M and stories110M shapes that this
# script writes itself (bin/make_random_model: llama2.c format, made-up tokenizer, no download).
#
#   scripts/bench_vs_llama2c.sh --runc PATH/TO/run.c     (run.c is never part of this project)
#   scripts/bench_vs_llama2c.sh                                 (this project's figures only)
#
# Prints the CPU's model and vector flags, and the read bandwidth from memory (bench_decode
# --sections bandwidth: 256 MiB) of one core, measured at the start and again at the end, and of
# all cores (one thread per core sharing the buffer as --threads shares a product).
# Then, per shape: decode tok/s (greedy, no prompt) of the project and of run.c built twice
# (gcc -O3, and gcc -Ofast -march=native), and whether the texts are byte-identical; the same with
# the project's decode kernel forced to each other kernel this CPU can run (H2O_MATVEC_KERNEL=avx512,
# avx2, baseline: baseline is how the project runs on a CPU without AVX2); the bytes of weights
# decode streams per second (checkpoint bytes x tok/s) as a share of the measured bandwidth;
# the project's decode tok/s with --threads 2 next to run.c built with -fopenmp (runomp, 2 OpenMP
# threads), as a multiple of one thread and against the 2-thread / 1-thread bandwidth; prompt
# tok/s (the project reads a prompt in batches, run.c one token at a time); start-up (a whole process that runs one position: load,
# check, one forward; wall and CPU seconds); and, from bench_decode, H2O's scoring + eviction as
# a share of the attention of the same cache (budgets 64, 256, 1024) and batched versus
# token-by-token prompts. Each figure is the median of --repeats runs, the programs alternating
# within each repeat (so a busy moment of the machine hits all of them), with the lowest and
# highest run in brackets; the machine's load (uptime) is printed before and after. The project is
# the default build: x86-64 baseline code, its vector kernels picked at start-up (the decode kernel
# AVX-512, AVX2 + FMA or SSE2 by what the CPU has), OpenBLAS choosing its own kernels for the
# prompt; nothing is built with -march=native.
#
# --threads-only measures what --threads 2 is worth, and nothing else: per shape, decode tok/s
# of the project on 1 thread, on 2 threads as it runs (the OpenMP wait policy it chooses itself,
# and each token on 2 threads or one, whichever ran faster: row_threads.hpp), on 2 threads for
# every token (--fixed-threads), the same with OpenMP's own default wait (GOMP_SPINCOUNT=300000,
# libgomp's default when nothing is set), and runomp on 2 threads, alternating within every
# repeat, with the ratios side by side. --busy N runs N busy loops (one shell each) beside every measurement,
# as a student's machine busy with other programs; they are stopped when the script ends.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_BUILD_DIR:-$root/build}"
me="bench_vs_llama2c"

usage() {
  cat <<EOF
usage: scripts/$me.sh [--runc FILE] [--shapes LIST] [--repeats N] [--work DIR] [--no-build]
                           [--threads-only] [--busy N] [--steps N]

Decode, prompt and start-up speed of this project next to llama2.c's run.c, side by side.

options:
  --runc FILE     llama2.c's run.c (you provide it); built here with gcc -O3, with
                  gcc -Ofast -march=native, and with gcc -Ofast -march=native -fopenmp
                  (runomp). Without it only the project is measured.
  --shapes LIST   any of 260k,15m,110m (default: all three)
  --repeats N     runs per figure, median shown, 1..50 (default 3)
  --work DIR      where the random models and run.c builds go (default /tmp/h2o_bench; the
                  110M model is 438 MB, written once and reused)
  --no-build      use the existing build in $build instead of building first
  --threads-only  only decode with 1 and 2 threads (and runomp), the ratios side by side
  --busy N        N busy loops run beside every measurement, 0..16 (default 0)
  --steps N       with --threads-only: decode positions per run, 16..1024 (default 256; beside
                  busy loops OpenMP's default wait can take seconds a token)
  --help          this text
EOF
}

fail() {
  echo "$me: error: $*" >&2
  exit 2
}

runc="" shapes="260k,15m,110m" repeats=3 work="/tmp/h2o_bench" do_build=1 threads_only=0 busy=0 thread_steps=256
while [ $# -gt 0 ]; do
  case "$1" in
    --help | -h) usage; exit 0 ;;
    --runc) [ $# -ge 2 ] || fail "--runc needs a value"; runc="$2"; shift 2 ;;
    --shapes) [ $# -ge 2 ] || fail "--shapes needs a value"; shapes="$2"; shift 2 ;;
    --repeats) [ $# -ge 2 ] || fail "--repeats needs a value"; repeats="$2"; shift 2 ;;
    --work) [ $# -ge 2 ] || fail "--work needs a value"; work="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --threads-only) threads_only=1; shift ;;
    --busy) [ $# -ge 2 ] || fail "--busy needs a value"; busy="$2"; shift 2 ;;
    --steps) [ $# -ge 2 ] || fail "--steps needs a value"; thread_steps="$2"; shift 2 ;;
    *) fail "unknown option $1 (see --help)" ;;
  esac
done
[[ "$repeats" =~ ^[0-9]+$ ]] && [ "$repeats" -ge 1 ] && [ "$repeats" -le 50 ] ||
  fail "--repeats must be a whole number from 1 to 50, got '$repeats'"
[[ "$busy" =~ ^[0-9]+$ ]] && [ "$busy" -le 16 ] ||
  fail "--busy must be a whole number from 0 to 16, got '$busy'"
[[ "$thread_steps" =~ ^[0-9]+$ ]] && [ "$thread_steps" -ge 16 ] && [ "$thread_steps" -le 1024 ] ||
  fail "--steps must be a whole number from 16 to 1024, got '$thread_steps'"
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
  gcc -Ofast -march=native -fopenmp -o "$work/run_omp" "$runc" -lm ||
    fail "could not build $runc with gcc -Ofast -march=native -fopenmp"
fi

# ------------------------------------------------------------------------------------------------
# Helpers

median() {  # numbers on stdin -> their median
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
spread() {  # numbers on stdin -> "[lowest-highest]"
  sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR > 0) printf "[%s-%s]",
    (lo >= 100 ? sprintf("%.0f", lo) : sprintf("%.2f", lo)),
    (hi >= 100 ? sprintf("%.0f", hi) : sprintf("%.2f", hi)) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
fmt() { awk -v a="$1" 'BEGIN { if (a >= 100) printf "%.0f", a; else printf "%.2f", a }'; }

# "achieved tok/s: X" (run.c and generate print it to stderr) from a run's stderr file.
achieved() { sed -n 's/^achieved tok\/s: *\([0-9.]*\).*/\1/p' "$1" | tail -1; }

# Seconds of one whole process (start-up measurements): "wall cpu", cpu = user + system of the
# process and its threads (on a busy machine the wall time also holds the waits for a core).
process_seconds() {
  local TIMEFORMAT='%R %U %S' times
  times=$({ time "$@" >/dev/null 2>&1; } 2>&1)
  awk -v t="$times" 'BEGIN { split(t, f, " "); printf "%.4f %.4f\n", f[1], f[2] + f[3] }'
}

load() { uptime | sed 's/.*load average: *//'; }

echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "vector flags: $(sed -n 's/^flags[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr ' ' '\n' |
  grep -E '^(sse4_2|avx|avx2|fma|avx512f|avx512bw|avx512vl|avx512_bf16|avx_vnni|amx_tile)$' |
  tr '\n' ' ')"
echo "load before (1, 5, 15 min): $(load)"
echo "project: default build (baseline x86-64, vector kernels dispatched at start-up), 1 thread"
[ -n "$runc" ] && echo "run.c:   $runc, gcc $(gcc -dumpfullversion) -O3 and -Ofast -march=native"
echo "repeats: $repeats (medians), programs alternating"

# The model of a shape, written once into $work/SHAPE and reused: stories260K's shape (seq_len
# 512), stories15M's (seq_len 1024, so that a 512-token prompt fits; speed per token does not
# depend on it), stories110M's (seq_len 1024). Sets seq, steps, prompt_tokens, model and tok.
model_for() {
  case "$1" in
    260k) seq=512 steps=512 prompt_tokens=256 ;;
    15m) seq=1024 steps=256 prompt_tokens=512 ;;
    110m) seq=1024 steps=256 prompt_tokens=512 ;;
  esac
  dir="$work/$1"
  if [ ! -f "$dir/model.bin" ] || [ ! -f "$dir/tok.bin" ] ||
    [ "$(cat "$dir/shape" 2>/dev/null)" != "$1 $seq" ]; then
    "$bin/make_random_model" --shape "$1" --seq-len "$seq" --out "$dir" >/dev/null
    echo "$1 $seq" >"$dir/shape"
  fi
  model="$dir/model.bin" tok="$dir/tok.bin"
}

# Busy loops beside the measurements (--busy N), stopped however the script ends.
busy_pids=()
stop_busy() {
  local pid
  for pid in "${busy_pids[@]+"${busy_pids[@]}"}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop_busy EXIT
for ((i = 0; i < busy; i++)); do
  bash -c 'while :; do :; done' &
  busy_pids+=($!)
done
[ "$busy" -gt 0 ] && echo "busy loops beside every run: $busy"

if [ "$threads_only" -eq 1 ]; then
  # What --threads 2 is worth: the project on 1 and 2 threads, 2 threads with OpenMP's default
  # wait, runomp on 2 threads (and runfast, its one thread), alternating within every repeat.
  declare -a threads_rows=()
  for shape in "${shape_list[@]}"; do
    model_for "$shape"
    steps=$thread_steps
    : >"$work/t_1" >"$work/t_2" >"$work/t_2fixed" >"$work/t_2omp" >"$work/t_runomp" \
      >"$work/t_runfast"
    for ((r = 0; r < repeats; r++)); do
      for run in 1 2 2fixed 2omp runomp runfast; do
        case "$run" in
          1 | 2) "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 \
            --steps "$steps" --threads "$run" >/dev/null 2>"$work/err" ;;
          2fixed) "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 \
            --steps "$steps" --threads 2 --fixed-threads >/dev/null 2>"$work/err" ;;
          2omp) GOMP_SPINCOUNT=300000 "$bin/generate" --model "$model" --tokenizer "$tok" \
            --temperature 0 --steps "$steps" --threads 2 --fixed-threads >/dev/null \
            2>"$work/err" ;;
          runomp) [ -n "$runc" ] || continue
            OMP_NUM_THREADS=2 "$work/run_omp" "$model" -z "$tok" -t 0 -n "$steps" \
              >/dev/null 2>"$work/err" ;;
          runfast) [ -n "$runc" ] || continue
            "$work/run_fast" "$model" -z "$tok" -t 0 -n "$steps" >/dev/null 2>"$work/err" ;;
        esac
        achieved "$work/err" >>"$work/t_$run"
      done
    done
    one=$(median <"$work/t_1") two=$(median <"$work/t_2") two_omp=$(median <"$work/t_2omp")
    two_fixed=$(median <"$work/t_2fixed")
    line="| $shape | $(fmt "$one") $(spread <"$work/t_1") | $(fmt "$two") $(spread <"$work/t_2")"
    line+=" | $(ratio "$two" "$one")x | $(fmt "$two_fixed") $(spread <"$work/t_2fixed")"
    line+=" | $(ratio "$two_fixed" "$one")x | $(fmt "$two_omp") $(spread <"$work/t_2omp")"
    line+=" | $(ratio "$two_omp" "$one")x"
    if [ -n "$runc" ]; then
      omp=$(median <"$work/t_runomp") fast=$(median <"$work/t_runfast")
      line+=" | $(fmt "$omp") $(spread <"$work/t_runomp") | $(ratio "$two" "$omp")x"
      line+=" | $(ratio "$omp" "$fast")x |"
    else
      line+=" | - | - | - |"
    fi
    threads_rows+=("$line")
    echo "   $shape done (load now $(load))"
  done
  echo
  echo "decode tok/s ($steps positions), medians of $repeats alternated runs [lowest-highest];" \
    "busy loops: $busy"
  echo "| shape | 1 thread | 2 threads | 2 / 1 | 2 threads, every token | that / 1 |" \
    "2 threads, every token, OpenMP's default wait | that / 1 | runomp, 2 threads |" \
    "2 threads / runomp | runomp / runfast |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${threads_rows[@]}"
  echo "load after (1, 5, 15 min): $(load)"
  exit 0
fi

# One core's read bandwidth from memory, in GB/s (bench_decode's own test), and the decode kernel
# the project picks on this CPU.
bandwidth() {
  "$bin/bench_decode" --sections bandwidth --repeats "$repeats" |
    sed -n 's/^read bandwidth.*: \([0-9.]*\) GB\/s.*/\1/p'
}
default_kernel=$("$bin/bench_decode" --sections bandwidth --repeats 1 |
  sed -n 's/.*decode kernel \([a-z0-9]*\).*/\1/p')
bandwidth_start=$(bandwidth)
echo "read bandwidth (one core, one stream, 256 MiB, median of passes): $bandwidth_start GB/s"
# All cores: as many threads as cores, sharing the buffer's blocks (row_threads.hpp); and the
# ratio that --threads 2 can reach at best on a model that only streams its weights.
cores=$(nproc)
bandwidth_all=$("$bin/bench_decode" --sections bandwidth --repeats "$repeats" --threads "$cores" |
  sed -n 's/^read bandwidth, [0-9]* threads.*: \([0-9.]*\) GB\/s.*/\1/p')
bandwidth_all=${bandwidth_all:-$bandwidth_start}
echo "read bandwidth (all $cores cores, 256 MiB): $bandwidth_all GB/s," \
  "$(ratio "$bandwidth_all" "$bandwidth_start")x one core's"
echo "project's decode kernel on this CPU: $default_kernel"
# The other kernels this CPU can run, measured by forcing them (H2O_MATVEC_KERNEL).
forced_kernels=()
for k in avx512 avx2 baseline; do
  [ "$k" = "$default_kernel" ] && continue
  if H2O_MATVEC_KERNEL=$k "$bin/bench_decode" --sections bandwidth --repeats 1 >/dev/null 2>&1
  then forced_kernels+=("$k"); fi
done
echo "also measured, forced: ${forced_kernels[*]:-none}"
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
  model_for "$shape"
  echo "== $shape: $("$bin/generate" --model "$model" --tokenizer "$tok" --steps 1 2>&1 >/dev/null |
    sed -n 's/^model: //p')"

  # Decode: greedy, no prompt, `steps` positions. Every program once per repeat, alternating.
  : >"$work/dec_project" >"$work/dec_O3" >"$work/dec_fast" >"$work/dec_threads" >"$work/dec_omp"
  for k in "${forced_kernels[@]}"; do : >"$work/dec_$k"; done
  same="-"
  declare -A same_forced=()
  for ((r = 0; r < repeats; r++)); do
    "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 --steps "$steps" \
      >"$work/text_project" 2>"$work/err"
    achieved "$work/err" >>"$work/dec_project"
    if [ -n "$runc" ]; then
      "$work/run_fast" "$model" -z "$tok" -t 0 -n "$steps" >"$work/text_runc" 2>"$work/err"
      achieved "$work/err" >>"$work/dec_fast"
      if cmp -s "$work/text_project" "$work/text_runc"; then same="yes"; else same="NO"; fi
    fi
    for k in "${forced_kernels[@]}"; do
      H2O_MATVEC_KERNEL=$k "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 \
        --steps "$steps" >"$work/text_$k" 2>"$work/err"
      achieved "$work/err" >>"$work/dec_$k"
      if cmp -s "$work/text_$k" "$work/text_project"; then same_forced[$k]="yes"
      else same_forced[$k]="NO"; fi
    done
    if [ -n "$runc" ]; then
      "$work/run_O3" "$model" -z "$tok" -t 0 -n "$steps" >/dev/null 2>"$work/err"
      achieved "$work/err" >>"$work/dec_O3"
    fi
    "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 --steps "$steps" \
      --threads 2 >"$work/text_threads" 2>"$work/err"
    achieved "$work/err" >>"$work/dec_threads"
    if [ -n "$runc" ]; then
      OMP_NUM_THREADS=2 "$work/run_omp" "$model" -z "$tok" -t 0 -n "$steps" >/dev/null 2>"$work/err"
      achieved "$work/err" >>"$work/dec_omp"
    fi
  done
  p=$(median <"$work/dec_project") t2=$(median <"$work/dec_threads")
  p_spread=$(spread <"$work/dec_project")
  model_bytes=$(stat -c %s "$model")
  gbs() { awk -v b="$model_bytes" -v t="$1" 'BEGIN { printf "%.1f", b * t / 1e9 }'; }
  share() { awk -v g="$1" -v bw="$bandwidth_start" 'BEGIN { if (bw > 0) printf "%.0f%%", 100 * g / bw }'; }
  if [ -n "$runc" ]; then
    o3=$(median <"$work/dec_O3") fast=$(median <"$work/dec_fast")
    row "$shape" "decode tok/s ($steps positions), $default_kernel" "$(fmt "$p") $p_spread" \
      "$(fmt "$o3")" "$(fmt "$fast") $(spread <"$work/dec_fast")" "text identical: $same"
    row "$shape" "decode GB/s of weights (share of $bandwidth_start GB/s)" \
      "$(gbs "$p") ($(share "$(gbs "$p")"))" "$(gbs "$o3")" \
      "$(gbs "$fast") ($(share "$(gbs "$fast")"))" "$((model_bytes / 1000000)) MB per token"
  else
    row "$shape" "decode tok/s ($steps positions), $default_kernel" "$(fmt "$p") $p_spread" "" "" ""
    row "$shape" "decode GB/s of weights" "$(gbs "$p") ($(share "$(gbs "$p")"))" "" "" ""
  fi
  for k in "${forced_kernels[@]}"; do
    pk=$(median <"$work/dec_$k")
    if [ -n "$runc" ]; then
      row "$shape" "decode tok/s, $k kernel (forced)" "$(fmt "$pk") $(spread <"$work/dec_$k")" \
        "$(fmt "$o3")" "$(fmt "$fast")" "text = default kernel's: ${same_forced[$k]:-?}"
    else
      row "$shape" "decode tok/s, $k kernel (forced)" "$(fmt "$pk") $(spread <"$work/dec_$k")" \
        "" "" "text = default kernel's: ${same_forced[$k]:-?}"
    fi
  done
  bw_ratio=$(ratio "$bandwidth_all" "$bandwidth_start")
  if [ -n "$runc" ]; then
    omp=$(median <"$work/dec_omp")
    row "$shape" "decode tok/s, --threads 2 (run.c: runomp, 2 threads)" \
      "$(fmt "$t2") $(spread <"$work/dec_threads")" "-" "$(fmt "$omp") $(spread <"$work/dec_omp")" \
      "$(ratio "$t2" "$p")x of 1 thread (runomp $(ratio "$omp" "$fast")x of runfast);" \
      "bandwidth ${bw_ratio}x"
  else
    row "$shape" "decode tok/s, --threads 2" "$(fmt "$t2") $(spread <"$work/dec_threads")" "" "" \
      "$(ratio "$t2" "$p")x of 1 thread; bandwidth ${bw_ratio}x"
  fi

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
    process_seconds "$bin/generate" --model "$model" --tokenizer "$tok" --temperature 0 \
      --steps 1 >>"$work/st_project"
    if [ -n "$runc" ]; then
      process_seconds "$work/run_O3" "$model" -z "$tok" -t 0 -n 1 >>"$work/st_O3"
      process_seconds "$work/run_fast" "$model" -z "$tok" -t 0 -n 1 >>"$work/st_fast"
    fi
  done
  wall() { cut -d' ' -f1 <"$1" | median; }
  cpu() { cut -d' ' -f2 <"$1" | median; }
  p=$(wall "$work/st_project") pc=$(cpu "$work/st_project")
  if [ -n "$runc" ]; then
    o3=$(wall "$work/st_O3") fast=$(wall "$work/st_fast")
    row "$shape" "start-up s, wall (one position)" "$p" "$o3" "$fast" "lower is better"
    o3=$(cpu "$work/st_O3") fast=$(cpu "$work/st_fast")
    row "$shape" "start-up s, CPU (user + system)" "$pc" "$o3" "$fast" "lower is better"
  else
    row "$shape" "start-up s, wall (one position)" "$p" "" "" "lower is better"
    row "$shape" "start-up s, CPU (user + system)" "$pc" "" "" "lower is better"
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
echo "read bandwidth at the start: $bandwidth_start GB/s; at the end: $(bandwidth) GB/s"
echo "load after (1, 5, 15 min): $(load)"
