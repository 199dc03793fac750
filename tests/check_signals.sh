#!/usr/bin/env bash
# check_signals.sh BIN_DIR WORK_DIR: a program stopped by a signal while it writes its outputs
# leaves nothing behind (base/output_file.hpp): no "*.tmp-*" file and not the folder it made, for
# every signal that ends a program and that it can catch, and for two signals in quick succession
# (Ctrl-C twice, or `timeout` signalling twice), and it dies of the signal (exit status 128 + its
# number), as a shell expects.
#
# The program is make_random_model --shape 15m: it makes its folder and both output files at
# once, then spends a second making 60 MB of weights, so the signal lands while the temporary files
# exist (the script waits to see them first). Each run stops within milliseconds of starting.
set -u
bin="$1"
work="$2"
rm -rf "$work"
mkdir -p "$work"
set -m       # background programs in their own process group: SIGINT and SIGQUIT not ignored
ulimit -c 0  # the signals whose default action dumps core (QUIT, ABRT, XCPU, XFSZ) write none
failures=0
runs=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}

# run_signalled NAME SIGNAL...: starts the program, waits for its temporary files, sends the
# signals back to back, and checks what is left and how it ended.
run_signalled() {
  local name="$1"
  shift
  local dir="$work/run"
  rm -rf "$dir"
  mkdir -p "$dir"
  "$bin/make_random_model" --shape 15m --out "$dir/made/model" >/dev/null 2>"$work/err.txt" &
  local pid=$!
  local tries=0
  until ls "$dir/made/model" 2>/dev/null | grep -q '\.tmp-'; do
    tries=$((tries + 1))
    if [ "$tries" -gt 2000 ] || ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"
      fail "$name: the program ended (or took 20 s) before its temporary files appeared"
      return
    fi
    sleep 0.01
  done
  for signal in "$@"; do kill -s "$signal" "$pid" 2>/dev/null; done
  wait "$pid" 2>/dev/null  # (the shell's own note of how the job ended: not wanted)
  local rc=$?
  runs=$((runs + 1))
  local expected=""
  for signal in "$@"; do expected="$expected $((128 + $(kill -l "$signal")))"; done
  if [[ " $expected " != *" $rc "* ]]; then
    fail "$name: exit status $rc, expected one of$expected (died of the signal)"
  fi
  if [ -e "$dir/made" ]; then
    fail "$name: left $(find "$dir/made" | tr '\n' ' ')"
  fi
}

# Every catchable signal whose default ends the program, once each (three rounds).
signals=(INT TERM HUP QUIT USR1 USR2 ALRM XCPU XFSZ PIPE VTALRM PROF ABRT)
for round in 1 2 3; do
  for signal in "${signals[@]}"; do run_signalled "SIG$signal (round $round)" "$signal"; done
done
# Two quick signals: the second may land while the handler removes the files.
for round in $(seq 1 10); do
  run_signalled "SIGINT twice (round $round)" INT INT
  run_signalled "SIGTERM twice (round $round)" TERM TERM
  run_signalled "SIGINT then SIGTERM (round $round)" INT TERM
  run_signalled "SIGHUP then SIGUSR1 (round $round)" HUP USR1
done

if [ "$failures" -ne 0 ]; then
  echo "$failures of $runs signalled runs failed"
  exit 1
fi
echo "every signalled run ($runs) left nothing behind and died of its signal"
