#!/usr/bin/env bash
# Makes the project's own small story model, from nothing, into a new folder (build/model/ unless
# --out says otherwise); with --install it then copies the result into data/, where every program
# looks by default:
#   model.bin, tokenizer.bin (llama2.c formats), heldout_story.txt, heldout_stories.txt,
#   heldout_names.txt, loss.csv, loss.svg  (data/names.txt is the input list of names).
# data/ is never touched without --install, so a trial run cannot replace the shipped model; to
# get the shipped files back after an install: git checkout data/
# Steps: install python3-torch if missing, generate stories, sample plain-English stories from
# a teacher model (stories260K, found in ../shared/models; training text only, never committed),
# train the tokenizer, pretokenize, train, measure the result on the generator's held-out stories
# and on the hand-written ones: about 85 minutes in all on 2 cores.
# Work files (the generated corpus, token ids, logs) go to build/train/, never committed.
#
# Usage: bash scripts/train-model.sh [--out DIR] [--install] [--seed N] [--schedule SPEC]
#                                    [--threads N] [--stories N] [--teacher DIR|none]
#                                    [--teacher-stories N] [--bos-windows long|all]
#                                    [--init MODEL] [--regroup-heads H:KV] [--lr X]
#                                    [--copy-share X] [--copy-passages N]
#                                    [--copy-gaps uniform|mixed] [--eval-every N]
#   --out DIR       folder for the new model's files (default build/model)
#   --install       when everything succeeded, copy the seven files into data/
#   --seed N        training seed (default 1); corpus seeds stay fixed: train 1, held-out 2,
#                   lesson story 3
#   --schedule S    phases SEQxBATCH:STEPS (default: train.py's, the shipped run's)
#   --threads N     CPU threads for PyTorch (default: train.py's, 2, the shipped run's; on a
#                   machine busy with other work one thread can be as fast)
#   --stories N     training stories to generate with make_corpus.py (default 12000)
#   --teacher DIR   folder holding stories260K.bin and tok512.bin (default
#                   ../shared/models/stories260K); 'none' trains on generated stories alone
#   --teacher-stories N
#                   stories to sample from the teacher (default 40000; seeds 1000000 on)
#   --bos-windows W which training phases start every window at a story's BOS: long (default,
#                   the full-length phase only, the shipped run) or all (every phase)
#   --init MODEL    start from this checkpoint (e.g. data/model.bin) instead of random weights,
#                   keeping the tokenizer.bin beside it (no new tokenizer is trained)
#   --regroup-heads H:KV
#                   with --init: merge its attention heads into H query and KV key/value heads
#                   of a larger size, the weights kept (4:2 turns 8 heads of 16 into 4 of 32)
#   --lr X          peak learning rate (default: train.py's, 2e-3; 5e-4 suits --init)
#   --copy-share X  share 0..1 of the training rows that carry a passage written twice, the
#                   second reading at a new distance in every row, to teach copying by content
#                   (default 0, the shipped run); the copy probe is then written to
#                   DIR/copy_probe.csv at every evaluation (docs/models.md)
#   --copy-passages N
#                   passages written twice in each such row, none overlapping (default 1)
#   --copy-gaps G   the distances between a passage's two readings: uniform over the window
#                   (default) or mixed (half of them log-uniform, so short ones are as common)
#   --eval-every N  steps between evaluations (default: train.py's, 500)
# The defaults reproduce the shipped files (the model up to PyTorch's CPU non-determinism).
set -euo pipefail
# The script works from the checkout's root; paths given on the command line are the caller's,
# so they are read from the folder the script was started in.
caller_dir=$PWD
cd "$(dirname "${BASH_SOURCE[0]}")/.."
from_caller() { case "$1" in /*|none|"") printf '%s' "$1" ;; *) printf '%s/%s' "$caller_dir" "$1" ;; esac; }

seed=1
schedule=""  # empty: train.py's default (it owns the shipped run's settings)
threads=""
stories=12000
teacher=../shared/models/stories260K
teacher_stories=40000
out=build/model
install=0
bos_windows=""  # empty: train.py's default (long)
init=""        # empty: random weights and a new tokenizer
regroup_heads=""
lr=""
copy_share=""
copy_passages=""
copy_gaps=""
eval_every=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seed|--schedule|--threads|--stories|--out|--teacher|--teacher-stories|--bos-windows|\
    --init|--regroup-heads|--lr|--copy-share|--copy-passages|--copy-gaps|\
    --eval-every)
      [ $# -ge 2 ] || { echo "train-model: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --seed) seed="$2" ;;
        --schedule) schedule="$2" ;;
        --threads) threads="$2" ;;
        --stories) stories="$2" ;;
        --out) out="$(from_caller "$2")" ;;
        --teacher) teacher="$(from_caller "$2")" ;;
        --teacher-stories) teacher_stories="$2" ;;
        --bos-windows) bos_windows="$2" ;;
        --init) init="$(from_caller "$2")" ;;
        --regroup-heads) regroup_heads="$2" ;;
        --lr) lr="$2" ;;
        --copy-share) copy_share="$2" ;;
        --copy-passages) copy_passages="$2" ;;
        --copy-gaps) copy_gaps="$2" ;;
        --eval-every) eval_every="$2" ;;
      esac
      shift 2 ;;
    --install) install=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "train-model: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
# Every option is checked before anything is installed or written (train.py checks the rest of
# its own before it reads a file).
bad() { echo "train-model: $*" >&2; exit 2; }
[[ "$seed" =~ ^[0-9]{1,9}$ ]] || bad "--seed expects a whole number 0..999999999, got '$seed'"
[[ "$stories" =~ ^[0-9]{1,8}$ ]] && [ "$stories" -ge 1 ] ||
  bad "--stories expects a whole number 1..10000000, got '$stories'"
[[ "$teacher_stories" =~ ^[0-9]{1,8}$ ]] && [ "$teacher_stories" -ge 1 ] ||
  bad "--teacher-stories expects a whole number 1..10000000, got '$teacher_stories'"
[ -z "$threads" ] || [[ "$threads" =~ ^[0-9]{1,4}$ && "$threads" -ge 1 ]] ||
  bad "--threads expects a whole number 1..1024, got '$threads'"
[ -z "$schedule" ] || [[ "$schedule" =~ ^[0-9]+x[0-9]+:[0-9]+(,[0-9]+x[0-9]+:[0-9]+)*$ ]] ||
  bad "--schedule must look like 256x16:2400,1024x4:300, got '$schedule'"
[ -z "$lr" ] || { [[ "$lr" =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)([eE]-?[0-9]+)?$ ]] &&
  awk -v x="$lr" 'BEGIN { exit !(x > 0 && x <= 1) }'; } ||
  bad "--lr expects a number above 0 and at most 1, such as 5e-4, got '$lr'"
[ -z "$copy_share" ] || [[ "$copy_share" =~ ^(0(\.[0-9]+)?|1(\.0+)?|\.[0-9]+)$ ]] ||
  bad "--copy-share expects a number 0..1, such as 0.25, got '$copy_share'"
[ -z "$copy_passages" ] || [[ "$copy_passages" =~ ^[0-9]{1,2}$ && "$copy_passages" -ge 1 &&
  "$copy_passages" -le 16 ]] || bad "--copy-passages expects a whole number 1..16, got '$copy_passages'"
[ -z "$copy_gaps" ] || [[ "$copy_gaps" =~ ^(uniform|mixed)$ ]] ||
  bad "--copy-gaps expects uniform or mixed, got '$copy_gaps'"
for given in "--copy-passages:$copy_passages" "--copy-gaps:$copy_gaps"; do
  [ -z "${given#*:}" ] || [ -n "$copy_share" ] ||
    bad "${given%%:*} shapes the copy rows: give --copy-share too"
done
[ -z "$eval_every" ] || [[ "$eval_every" =~ ^[0-9]{1,9}$ && "$eval_every" -ge 1 ]] ||
  bad "--eval-every expects a whole number 1..999999999, got '$eval_every'"
[ -z "$regroup_heads" ] || [[ "$regroup_heads" =~ ^[1-9][0-9]{0,3}:[1-9][0-9]{0,3}$ ]] ||
  bad "--regroup-heads expects H:KV, two whole numbers such as 4:2, got '$regroup_heads'"
[ -z "$regroup_heads" ] || [ -n "$init" ] || bad "--regroup-heads regroups --init's heads: give --init"
if [ -n "$init" ]; then
  [ -f "$init" ] || bad "--init '$init' is not a file"
  [ -f "$(dirname "$init")/tokenizer.bin" ] ||
    bad "--init '$init' has no tokenizer.bin beside it (the tokenizer it was trained with)"
fi
[ -n "$out" ] || bad "--out needs a folder"
if [ -e "$out" ] && [ ! -d "$out" ]; then bad "--out '$out' is not a folder"; fi
case "$(realpath -m "$out")" in
  "$(realpath -m data)") bad "--out must not be data/ (use --install to copy a finished model there)" ;;
esac
if [ "$teacher" != none ]; then
  for f in stories260K.bin tok512.bin; do
    [ -f "$teacher/$f" ] ||
      bad "no teacher model: '$teacher/$f' is missing (stories260K from ../shared/models, or \
--teacher none to train on generated stories alone)"
  done
fi
mkdir -p "$out" 2>/dev/null || bad "cannot create the folder '$out'"
[ -w "$out" ] || bad "cannot write into the folder '$out'"

py=/usr/bin/python3  # Debian's Python, where python3-torch installs (not a pyenv python3)

# -- python3-torch, if missing (as root, or through sudo) -------------------------------------
bash scripts/install-deps.sh --only python3 python3-torch python3-numpy
# -- the C++ build's packages, for the project's generate program (the teacher's sampler)
if [ "$teacher" != none ]; then bash scripts/install-deps.sh; fi

work=build/train
mkdir -p "$work"
train_options=(--seed "$seed")
if [ -n "$schedule" ]; then train_options+=(--schedule "$schedule"); fi
if [ -n "$threads" ]; then train_options+=(--threads "$threads"); fi
if [ -n "$bos_windows" ]; then train_options+=(--bos-windows "$bos_windows"); fi
if [ -n "$lr" ]; then train_options+=(--lr "$lr"); fi
if [ -n "$eval_every" ]; then train_options+=(--eval-every "$eval_every"); fi
if [ -n "$init" ]; then train_options+=(--init "$init"); fi
if [ -n "$regroup_heads" ]; then train_options+=(--regroup-heads "$regroup_heads"); fi
if [ -n "$copy_share" ]; then
  train_options+=(--copy-share "$copy_share" --copy-probe "$out/copy_probe.csv")
fi
if [ -n "$copy_passages" ]; then train_options+=(--copy-passages "$copy_passages"); fi
if [ -n "$copy_gaps" ]; then train_options+=(--copy-gaps "$copy_gaps"); fi
train_files=(--train "$work/train.u16" --heldout "$work/heldout.u16" --tokenizer "$out/tokenizer.bin"
  --out "$out/model.bin" --csv "$out/loss.csv" --svg "$out/loss.svg")
# train.py's own checks of these options, now rather than at step 5.
$py training/train.py "${train_files[@]}" "${train_options[@]}" --check-options >/dev/null
t0=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - t0 )) s)"; }

step "1/8 stories: $stories for training (seed 1), 50 held-out (seed 2), a lesson story (seed 3)"
$py training/make_corpus.py --seed 1 --stories "$stories" --out "$work/generated.txt"
$py training/make_corpus.py --seed 2 --stories 50 --out "$out/heldout_stories.txt" \
  --names-out "$work/heldout_names.txt"
$py training/make_corpus.py --seed 3 --stories 300 --out "$work/lesson_pool.txt" \
  --names-out "$work/lesson_pool_names.txt"

if [ "$teacher" != none ]; then
  step "2/8 teacher stories: $teacher_stories sampled from $teacher/stories260K.bin"
  H2O_BUILD_TARGETS=generate bash scripts/build.sh
  $py training/teacher_stories.py --generate build/bin/generate \
    --model "$teacher/stories260K.bin" --tokenizer "$teacher/tok512.bin" \
    --stories "$teacher_stories" --seed 1000000 --out "$work/teacher.txt"
  # One story file: the generated stories, then the teacher's (train.py draws its windows
  # anywhere in the stream, so their order does not matter).
  { cat "$work/generated.txt"; printf '\n<|story|>\n\n'; cat "$work/teacher.txt"; } \
    > "$work/train.txt"
else
  step "2/8 no teacher stories (--teacher none)"
  cp "$work/generated.txt" "$work/train.txt"
fi

if [ -n "$init" ]; then
  step "3/8 tokenizer: the one beside $init"
  cp "$(dirname "$init")/tokenizer.bin" "$out/tokenizer.bin.new"
  mv -f "$out/tokenizer.bin.new" "$out/tokenizer.bin"
else
  step "3/8 tokenizer"
  $py training/train_tokenizer.py --corpus "$work/train.txt" --vocab-size 4096 \
    --out "$out/tokenizer.bin" --check "$out/heldout_stories.txt"
fi

step "4/8 lesson story of 900-1000 tokens"
$py training/pick_story.py --tokenizer "$out/tokenizer.bin" --corpus "$work/lesson_pool.txt" \
  --min 900 --max 1000 --out "$out/heldout_story.txt"
# The names the programs count by default (--names): those of the held-out stories and those of
# the pool that the lesson story uses, list and invented ones.
tr -cs 'A-Za-z' '\n' <"$out/heldout_story.txt" | sort -u |
  comm -12 - <(sort -u "$work/lesson_pool_names.txt") |
  sort -u - "$work/heldout_names.txt" >"$out/heldout_names.txt"

step "5/8 token ids"
$py training/pretokenize.py --tokenizer "$out/tokenizer.bin" --corpus "$work/train.txt" \
  --out "$work/train.u16"
$py training/pretokenize.py --tokenizer "$out/tokenizer.bin" --corpus "$out/heldout_stories.txt" \
  --out "$work/heldout.u16"

step "6/8 training (train.py ${train_options[*]})"
$py training/train.py "${train_files[@]}" "${train_options[@]}" | tee "$work/train.log"

step "7/8 held-out perplexity and name recall (full context, sliding windows of 64 and 128)"
$py training/evaluate.py --model "$out/model.bin" --tokenizer "$out/tokenizer.bin" \
  --stories "$out/heldout_stories.txt" --names "$out/heldout_names.txt" --window 64,128 \
  | tee "$work/evaluate.txt"
echo "-- the hand-written stories (never trained on):"
$py training/evaluate.py --model "$out/model.bin" --tokenizer "$out/tokenizer.bin" \
  --stories data/handwritten_stories.txt --names data/handwritten_names.txt --window 64,128 \
  | tee -a "$work/evaluate.txt"

step "8/8 checksums"
cp data/names.txt "$out/names.txt"
(cd "$out" && sha256sum model.bin tokenizer.bin names.txt heldout_story.txt heldout_stories.txt \
  heldout_names.txt loss.csv loss.svg) | tee "$work/sha256.txt"
if [ "$install" = 1 ]; then
  # Each file replaces its data/ copy whole (a copy beside it, then a rename); undo with
  # git checkout data/. A failed copy or Ctrl-C leaves no half-copied data/.NAME.installing.
  remove_copies() { rm -f data/.*.installing; }
  trap remove_copies EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  for f in model.bin tokenizer.bin heldout_story.txt heldout_stories.txt heldout_names.txt \
    loss.csv loss.svg; do
    cp "$out/$f" "data/.$f.installing"
  done
  for f in model.bin tokenizer.bin heldout_story.txt heldout_stories.txt heldout_names.txt \
    loss.csv loss.svg; do
    mv -f "data/.$f.installing" "data/$f"
  done
  echo "train-model: installed into data/ (git checkout data/ brings the shipped files back)"
else
  echo "train-model: the new model is in $out/; data/ is unchanged (--install copies it there)"
fi
echo "train-model: done in $(( $(date +%s) - t0 )) s; logs in $work/"
