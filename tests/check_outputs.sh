#!/usr/bin/env bash
# check_outputs.sh BIN_DIR WORK_DIR: no output is lost silently (base/output_file.hpp, app/cli.hpp).
#   1. every program exits non-zero with one line on stderr when stdout cannot be written;
#   2. output paths are checked before the work: a device, a folder, a folder nobody may write;
#   3. an existing file survives a run that fails, and no temporary file is left behind;
#   4. a write that fails half-way (a file size limit, as a full disk) is an error, not a cut file;
#   5. the same for the training scripts (those that run without PyTorch);
#   6. text from files reaches the terminal escaped, and errors quoting it stay short;
#   7. no two outputs on one path, no output on an input: refused before any work;
#   8. all outputs or none: a failed run leaves no file and no folder it made; a run that
#      measures nothing fails and writes nothing;
#   9. a text's UTF-8 byte-order mark is no text: the same numbers with or without one.
set -u
bin="$1"
work="$2"
rm -rf "$work"
mkdir -p "$work"
failures=0
fail() {
  echo "FAILED: $*"
  failures=$((failures + 1))
}
# expect_error NAME TEXT COMMAND...: non-zero exit, no crash, one line on stderr containing TEXT
# (with LAST_LINE=1: the last line of stderr, for a program that reports on stderr as it runs).
expect_error() {
  local name="$1" text="$2"
  shift 2
  "$@" >"$work/out.txt" 2>"$work/err.txt"
  local rc=$?
  if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ]; then
    fail "$name: exit code $rc, expected an error"
  elif [ "${LAST_LINE:-0}" = 1 ]; then
    tail -n 1 "$work/err.txt" >"$work/err_last.txt"
    if grep -qF -- "$text" "$work/err_last.txt"; then echo "ok: $name"; else
      fail "$name: the last line of stderr lacks '$text': $(cat "$work/err.txt")"
    fi
  elif [ "$(wc -l <"$work/err.txt")" -ne 1 ]; then
    fail "$name: the error is not one line: $(cat "$work/err.txt")"
  elif ! grep -qF -- "$text" "$work/err.txt"; then
    fail "$name: stderr lacks '$text': $(cat "$work/err.txt")"
  else
    echo "ok: $name"
  fi
}
# unchanged NAME FILE CONTENT: FILE still holds CONTENT and nothing else is in its folder.
unchanged() {
  if [ "$(cat "$2")" != "$3" ]; then fail "$1: $2 was changed"; fi
  local extra
  extra="$(ls -A "$(dirname "$2")" | grep -c '\.tmp-' || true)"
  if [ "$extra" -ne 0 ]; then fail "$1: a temporary file was left in $(dirname "$2")"; fi
}

# 1. stdout on a full disk, for every program (a short run each).
model="$work/model"
"$bin/make_random_model" --shape 260k --seq-len 512 --out "$model" >/dev/null || fail "make_random_model"
printf 'Tom had a red ball. Tom gave the ball to Lily. Lily said thank you to Tom.\n' >"$work/story.txt"
small=(--model "$model/model.bin" --tokenizer "$model/tok.bin" --text "$work/story.txt")
for lesson in 01_heavy_and_recent 02_score_accumulation 03_evict_rows 04_online_tokens \
  05_attention_qkv 06_kv_cache 07_h2o_tensor_cache 08_full_vs_h2o; do
  expect_error "$lesson > /dev/full" "cannot write the output to stdout" \
    bash -c '"$0" >/dev/full' "$bin/$lesson"
done
expect_error "compare_policies > /dev/full" "cannot write the output to stdout" \
  bash -c '"$0" "$@" >/dev/full' "$bin/compare_policies" "${small[@]}" --budgets 50 --policies full,h2o
LAST_LINE=1 expect_error "generate > /dev/full" "cannot write the output to stdout" \
  bash -c '"$0" "$@" >/dev/full' "$bin/generate" --model "$model/model.bin" \
  --tokenizer "$model/tok.bin" --steps 5
expect_error "generate --help > /dev/full" "cannot write the output to stdout" \
  bash -c '"$0" --help >/dev/full' "$bin/generate"
expect_error "make_random_model > /dev/full" "cannot write the output to stdout" \
  bash -c '"$0" --shape 260k --seq-len 64 --out "$1" >/dev/full' "$bin/make_random_model" "$work/m2"

# 2. Output paths checked before the work starts.
expect_error "--svg /dev/full" "the picture '/dev/full' is not a regular file" \
  "$bin/compare_policies" "${small[@]}" --svg /dev/full
expect_error "--svg a folder" "is a folder, not a file" "$bin/compare_policies" "${small[@]}" --svg "$work"
expect_error "--svg in a missing folder" "does not exist" \
  "$bin/compare_policies" "${small[@]}" --svg "$work/missing/x.svg"
# /sys refuses new files even to root; a folder without write permission refuses everyone else.
expect_error "--svg in a read-only folder" "cannot create a file in its folder" \
  "$bin/compare_policies" "${small[@]}" --svg /sys/h2o_check.svg
expect_error "lesson 11 --csv /dev/full" "the CSV file '/dev/full' is not a regular file" \
  "$bin/11_how_much_cache" --csv /dev/full
expect_error "lesson 11 --pictures read-only" "--pictures '/sys/h2o_check'" \
  "$bin/11_how_much_cache" --pictures /sys/h2o_check
expect_error "lesson 10 --pictures read-only" "--pictures '/sys/h2o_check'" \
  "$bin/10_sparse_attention" --pictures /sys/h2o_check
expect_error "make_random_model --out read-only" "cannot create" \
  "$bin/make_random_model" --shape 260k --out /sys/h2o_check
mkdir -p "$work/locked" && chmod 555 "$work/locked"
if [ "$(id -u)" -ne 0 ]; then
  expect_error "--svg in a folder without write permission" "Permission denied" \
    "$bin/compare_policies" "${small[@]}" --svg "$work/locked/x.svg"
fi
chmod 755 "$work/locked"

# 3. An existing file survives a failed run (here the model cannot be read, after the paths were
#    checked), and no temporary file stays behind.
mkdir -p "$work/keep"
echo "old picture" >"$work/keep/p.svg"
echo "old table" >"$work/keep/t.csv"
expect_error "compare_policies fails, --svg kept" "does not exist" \
  "$bin/compare_policies" --model "$work/none.bin" --svg "$work/keep/p.svg"
unchanged "compare_policies fails" "$work/keep/p.svg" "old picture"
expect_error "lesson 11 fails, --csv kept" "does not exist" \
  "$bin/11_how_much_cache" --model "$work/none.bin" --csv "$work/keep/t.csv"
unchanged "lesson 11 fails" "$work/keep/t.csv" "old table"

# 4. A write that fails half-way: a file size limit of 64 KiB (ulimit -f, SIGXFSZ ignored so the
#    write returns EFBIG as a full disk returns ENOSPC). The 15m model does not fit.
mkdir -p "$work/big"
echo "old model" >"$work/big/model.bin"
expect_error "make_random_model on a full disk" "checkpoint '$work/big/model.bin': cannot write it" \
  bash -c 'trap "" XFSZ; ulimit -f 64; "$0" --shape 15m --out "$1"' "$bin/make_random_model" "$work/big"
unchanged "make_random_model on a full disk" "$work/big/model.bin" "old model"
[ -e "$work/big/tok.bin" ] && fail "make_random_model on a full disk: tok.bin written alone"
# Lesson 11's CSV and pictures on a full disk (a limit of 4 KiB, less than each of its charts
# needs, on the small model): the error names the file, and neither folder keeps a temporary file
# (the program's error ends it through run_program, so every OutputFile removes its own), nor is
# the old CSV replaced.
mkdir -p "$work/full/pictures"
echo "old table" >"$work/full/t.csv"
expect_error "lesson 11 --csv --pictures on a full disk" "cannot write it (File too large)" \
  bash -c 'trap "" XFSZ; ulimit -f 4; "$0" "${@:3}" --budgets 10,50 --csv "$1" --pictures "$2" \
    >/dev/null' "$bin/11_how_much_cache" "$work/full/t.csv" "$work/full/pictures" "${small[@]}"
unchanged "lesson 11 on a full disk" "$work/full/t.csv" "old table"
left="$(ls -A "$work/full/pictures" | grep -c '\.tmp-' || true)"
[ "$left" -eq 0 ] || fail "lesson 11 on a full disk: $left temporary files left in --pictures"
# The same run with room to spare writes both files whole.
"$bin/make_random_model" --shape 260k --seq-len 64 --out "$work/big" >/dev/null || fail "rerun"
[ "$(stat -c %s "$work/big/model.bin")" -gt 100000 ] || fail "model.bin not written"

# 6. Text from files reaches the terminal escaped, and errors quoting it stay short: a names file
#    whose bad line is almost 1 MiB, and lesson 10 listing the tokens of a text of escape
#    sequences, NUL bytes and invalid UTF-8.
{ printf 'Lily\n'; head -c 1000000 /dev/zero | tr '\0' 'x'; printf '\033[2J!\n'; } >"$work/names.txt"
expect_error "a 1 MB bad line in a names file" "is not one name" \
  "$bin/compare_policies" "${small[@]}" --names "$work/names.txt"
[ "$(wc -c <"$work/err.txt")" -lt 1000 ] || fail "the names error is $(wc -c <"$work/err.txt") bytes"
for i in $(seq 1 40); do printf 'a\033[31m\000b\377\300 \001'; done >"$work/control.txt"
if "$bin/10_sparse_attention" --model "$model/model.bin" --tokenizer "$model/tok.bin" \
  --text "$work/control.txt" >"$work/out.txt" 2>"$work/err.txt"; then
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$work/out.txt" ||
    [ "$(tr -d '\000' <"$work/out.txt" | wc -c)" -ne "$(wc -c <"$work/out.txt")" ] ||
    ! iconv -f UTF-8 -t UTF-8 "$work/out.txt" >/dev/null 2>&1; then
    fail "lesson 10 printed a control byte or invalid UTF-8 from the text"
  elif ! grep -qF '\x1b' "$work/out.txt"; then
    fail "lesson 10 did not show the escape character escaped"
  else
    echo "ok: lesson 10 shows control characters and invalid UTF-8 escaped"
  fi
else
  fail "lesson 10 on a text of control characters failed: $(cat "$work/err.txt")"
fi

# 7. Two outputs on one path, or an output on an input, is a usage error before any work, and the
#    file is left as it was (it was replaced by the picture, the page or the CSV before).
mkdir -p "$work/same"
printf 'Tom had a red ball. Tom gave the ball to Lily.\n' >"$work/same/story.txt"
ln "$work/same/story.txt" "$work/same/hard_link.txt"
echo "old page" >"$work/same/page.html"
echo "old table" >"$work/same/t.csv"
same_story() { unchanged "$1" "$work/same/story.txt" "Tom had a red ball. Tom gave the ball to Lily."; }
expect_error "compare_policies --text S --svg S" "--svg names the file --text reads" \
  "$bin/compare_policies" "${small[@]:0:4}" --text "$work/same/story.txt" --svg "$work/same/story.txt"
same_story "compare_policies --text S --svg S"
expect_error "compare_policies --svg on a hard link of --text" "--svg names the file --text reads" \
  "$bin/compare_policies" "${small[@]:0:4}" --text "$work/same/story.txt" \
  --svg "$work/same/hard_link.txt"
same_story "compare_policies --svg on a hard link"
expect_error "explore --out X --kept X" "--kept names the same file as --out" \
  "$bin/explore" "${small[@]}" --out "$work/same/page.html" --kept "$work/same/../same/page.html"
unchanged "explore --out X --kept X" "$work/same/page.html" "old page"
expect_error "explore --out X --kept X, X new" "--kept names the same file as --out" \
  "$bin/explore" "${small[@]}" --out "$work/same/new.html" --kept "$work/same/./new.html"
[ -e "$work/same/new.html" ] && fail "explore --out X --kept X: X written"
cp "$model/model.bin" "$work/same/model.bin"
expect_error "explore --out on the model" "--out names the file --model reads" \
  "$bin/explore" --model "$work/same/model.bin" "${small[@]:2}" --out "$work/same/model.bin"
cmp -s "$model/model.bin" "$work/same/model.bin" || fail "explore --out on the model: model changed"
echo "Tom had a red ball." >"$work/same/explorer.html"
expect_error "explore --text on its default --out" "--out names the file --text reads" \
  bash -c 'cd "$1" && "$0" "${@:2}"' "$(cd "$bin" && pwd)/explore" "$work/same" "${small[@]:0:4}" \
  --text explorer.html
unchanged "explore --text on its default --out" "$work/same/explorer.html" "Tom had a red ball."
expect_error "lesson 11 --csv X --pictures X" "--pictures names the same file as --csv" \
  "$bin/11_how_much_cache" "${small[@]}" --csv "$work/same/t.csv" --pictures "$work/same/t.csv"
unchanged "lesson 11 --csv X --pictures X" "$work/same/t.csv" "old table"
expect_error "lesson 11 --csv on --text" "--csv names the file --text reads" \
  "$bin/11_how_much_cache" "${small[@]:0:4}" --text "$work/same/story.txt" --csv "$work/same/story.txt"
same_story "lesson 11 --csv on --text"
for lesson in 10_sparse_attention 12_evict_or_quantise 14_rules_per_head; do
  expect_error "lesson $lesson --pictures on --tokenizer" "--pictures names the file --tokenizer reads" \
    "$bin/$lesson" "${small[@]}" --pictures "$model/tok.bin"
done

# 8. All outputs or none. A run that fails after making its --pictures folder takes the folder
#    away again (and the parents it made); one that fails writing --kept leaves no page either;
#    one whose every policy is refused measures nothing: an error, and no picture.
expect_error "lesson 11 fails, its new --pictures folder removed" "does not exist" \
  "$bin/11_how_much_cache" --model "$work/none.bin" --pictures "$work/made/charts"
[ -e "$work/made" ] && fail "lesson 11 failed but left the folder it made: $(find "$work/made")"
expect_error "lesson 10 fails, its new --pictures folder removed" "does not exist" \
  "$bin/10_sparse_attention" --model "$work/none.bin" --pictures "$work/made/pictures"
[ -e "$work/made" ] && fail "lesson 10 failed but left the folder it made"
mkdir -p "$work/kept_full"
echo "old page" >"$work/kept_full/page.html"
page_kib=0
kept_kib=0
if "$bin/explore" "${small[@]}" --out "$work/page_size.html" --kept "$work/kept_size.txt" >/dev/null
then
  page_kib=$(($(stat -c %s "$work/page_size.html") / 1024 + 1))
  kept_kib=$(($(stat -c %s "$work/kept_size.txt") / 1024))
fi
if [ "$kept_kib" -le "$page_kib" ]; then
  fail "the kept positions ($kept_kib KiB) are no larger than the page ($page_kib KiB)"
else
  # A file size limit the page fits in and the kept positions do not (as a disk that fills up).
  expect_error "explore: --kept cannot be written" "the kept positions" \
    bash -c 'trap "" XFSZ; ulimit -f "$1"; "$0" "${@:2}" >/dev/null' "$bin/explore" "$page_kib" \
    "${small[@]}" --out "$work/kept_full/page.html" --kept "$work/kept_full/kept.txt"
  unchanged "explore: --kept cannot be written" "$work/kept_full/page.html" "old page"
  [ -e "$work/kept_full/kept.txt" ] && fail "explore: a cut --kept file was left"
fi
expect_error "compare_policies: every policy refused" "nothing to measure" \
  "$bin/compare_policies" "${small[@]}" --policies fastgen --fastgen-profile 1 \
  --svg "$work/refused.svg"
[ -e "$work/refused.svg" ] && fail "compare_policies measured nothing but wrote a picture"

# 9. A byte-order mark before a text (as some editors write) is no text: the same file with one
#    and without reads the same tokens, so every number printed is the same.
mkdir -p "$work/bom" "$work/plain"
cp "$work/story.txt" "$work/plain/story.txt"
{ printf '\357\273\277'; cat "$work/story.txt"; } >"$work/bom/story.txt"
for program in compare_policies 09_real_model; do
  args=(--model "$model/model.bin" --tokenizer "$model/tok.bin")
  [ "$program" = compare_policies ] && args+=(--budgets 50 --policies full,h2o)
  [ "$program" = 09_real_model ] && args+=(--budgets 50 --unseen "$work/plain/story.txt")
  "$bin/$program" "${args[@]}" --text "$work/plain/story.txt" >"$work/plain/out.txt" 2>&1
  "$bin/$program" "${args[@]}" --text "$work/bom/story.txt" >"$work/bom/out.txt" 2>&1
  if ! grep -q perplexity "$work/plain/out.txt"; then
    fail "$program on the small story printed no perplexity: $(tail -n 3 "$work/plain/out.txt")"
  elif ! cmp -s "$work/plain/out.txt" "$work/bom/out.txt"; then
    fail "$program reads a text with a byte-order mark differently: $(diff "$work/plain/out.txt" \
      "$work/bom/out.txt" | head -n 6)"
  else
    echo "ok: $program reads a text with a byte-order mark as without"
  fi
done

# 5. The training scripts (standard library only here): a failed run leaves the old file.
training="$(dirname "$0")/../training"
data="$(dirname "$0")/../data"
if command -v python3 >/dev/null; then
  mkdir -p "$work/train"
  echo "old tokenizer" >"$work/train/tok.bin"
  printf 'Zyxwvut\n' >"$work/train/names.txt"
  expect_error "train_tokenizer fails its names check, old file kept" "was not written" \
    python3 "$training/train_tokenizer.py" --corpus "$data/heldout_stories.txt" --vocab-size 400 \
    --names "$work/train/names.txt" --out "$work/train/tok.bin"
  unchanged "train_tokenizer fails" "$work/train/tok.bin" "old tokenizer"
  echo "old loss picture" >"$work/train/loss.svg"
  printf 'step,tokens,train_loss,heldout_loss,lr,seconds\n50,100,inf,,0.001,1.0\n' >"$work/train/l.csv"
  expect_error "plot_loss refuses an infinite loss, old file kept" "not a finite number" \
    python3 "$training/plot_loss.py" --csv "$work/train/l.csv" --out "$work/train/loss.svg"
  unchanged "plot_loss fails" "$work/train/loss.svg" "old loss picture"
  # A full disk (a limit of 4 KiB): the error names the file, and no temporary file is left.
  mkdir -p "$work/train_full"
  echo "old corpus" >"$work/train_full/c.txt"
  expect_error "make_corpus on a full disk" "cannot write '$work/train_full/c.txt': File too large" \
    bash -c 'trap "" XFSZ; ulimit -f 4; python3 "$0" --stories 100 --out "$1"' \
    "$training/make_corpus.py" "$work/train_full/c.txt"
  unchanged "make_corpus on a full disk" "$work/train_full/c.txt" "old corpus"
  # A diverged model (one weight NaN) is refused before PyTorch is needed.
  python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[28:32] = b"\x00\x00\xc0\x7f"; open(sys.argv[2], "wb").write(b)' \
    "$data/model.bin" "$work/train/nan_model.bin"
  expect_error "evaluate refuses a NaN model" "1 of its weights are NaN or infinite" \
    python3 "$training/evaluate.py" --model "$work/train/nan_model.bin" \
    --tokenizer "$data/tokenizer.bin" --stories "$data/heldout_story.txt"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every output check passed"
