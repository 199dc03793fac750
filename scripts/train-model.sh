#!/usr/bin/env bash
# Makes the project's own small story model, from nothing, into a new folder (build/model/ unless
# --out says otherwise); with --install it then copies the result into data/, where every program
# looks by default:
#   model.bin, tokenizer.bin (llama2.c formats), heldout_story.txt, heldout_stories.txt,
#   loss.csv, loss.svg  (data/names.txt is the input list of names).
# data/ is never touched without --install, so a trial run cannot replace the shipped model; to
# get the shipped files back after an install: git checkout data/
# Steps: install python3-torch if missing, generate stories, train the tokenizer,
# pretokenize, train (about 35 minutes on 2 cores), measure the result.
# Work files (the generated corpus, token ids, logs) go to build/train/, never committed.
#
# Usage: bash scripts/train-model.sh [--out DIR] [--install] [--seed N] [--schedule SPEC]
#                                    [--threads N] [--stories N]
#   --out DIR       folder for the new model's files (default build/model)
#   --install       when everything succeeded, copy the six files into data/
#   --seed N        training seed (default 1); corpus seeds stay fixed: train 1, held-out 2,
#                   lesson story 3
#   --schedule S    phases SEQxBATCH:STEPS (default: train.py's, the shipped run's)
#   --threads N     CPU threads for PyTorch (default: train.py's, 2, the shipped run's; on a
#                   machine busy with other work one thread can be as fast)
#   --stories N     training stories to generate (default 20000)
# The defaults reproduce the shipped files (the model up to PyTorch's CPU non-determinism).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seed=1
schedule=""  # empty: train.py's default (it owns the shipped run's settings)
threads=""
stories=20000
out=build/model
install=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seed|--schedule|--threads|--stories|--out)
      [ $# -ge 2 ] || { echo "train-model: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --seed) seed="$2" ;;
        --schedule) schedule="$2" ;;
        --threads) threads="$2" ;;
        --stories) stories="$2" ;;
        --out) out="$2" ;;
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
[ -z "$threads" ] || [[ "$threads" =~ ^[0-9]{1,4}$ && "$threads" -ge 1 ]] ||
  bad "--threads expects a whole number 1..1024, got '$threads'"
[ -z "$schedule" ] || [[ "$schedule" =~ ^[0-9]+x[0-9]+:[0-9]+(,[0-9]+x[0-9]+:[0-9]+)*$ ]] ||
  bad "--schedule must look like 256x16:2400,1024x4:300, got '$schedule'"
[ -n "$out" ] || bad "--out needs a folder"
if [ -e "$out" ] && [ ! -d "$out" ]; then bad "--out '$out' is not a folder"; fi
case "$(realpath -m "$out")" in
  "$(realpath -m data)") bad "--out must not be data/ (use --install to copy a finished model there)" ;;
esac
mkdir -p "$out" 2>/dev/null || bad "cannot create the folder '$out'"
[ -w "$out" ] || bad "cannot write into the folder '$out'"

py=/usr/bin/python3  # Debian's Python, where python3-torch installs (not a pyenv python3)

# -- python3-torch, if missing (as root, or through sudo) -------------------------------------
bash scripts/install-deps.sh --only python3 python3-torch python3-numpy

work=build/train
mkdir -p "$work"
train_options=(--seed "$seed")
if [ -n "$schedule" ]; then train_options+=(--schedule "$schedule"); fi
if [ -n "$threads" ]; then train_options+=(--threads "$threads"); fi
train_files=(--train "$work/train.u16" --heldout "$work/heldout.u16" --tokenizer "$out/tokenizer.bin"
  --out "$out/model.bin" --csv "$out/loss.csv" --svg "$out/loss.svg")
# train.py's own checks of these options, now rather than at step 5.
$py training/train.py "${train_files[@]}" "${train_options[@]}" --check-options >/dev/null
t0=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - t0 )) s)"; }

step "1/7 stories: $stories for training (seed 1), 50 held-out (seed 2), a lesson story (seed 3)"
$py training/make_corpus.py --seed 1 --stories "$stories" --out "$work/train.txt"
$py training/make_corpus.py --seed 2 --stories 50 --out "$out/heldout_stories.txt"
$py training/make_corpus.py --seed 3 --stories 300 --out "$work/lesson_pool.txt"

step "2/7 tokenizer"
$py training/train_tokenizer.py --corpus "$work/train.txt" --vocab-size 2048 \
  --out "$out/tokenizer.bin" --check "$out/heldout_stories.txt"

step "3/7 lesson story of 900-1000 tokens"
$py training/pick_story.py --tokenizer "$out/tokenizer.bin" --corpus "$work/lesson_pool.txt" \
  --min 900 --max 1000 --out "$out/heldout_story.txt"

step "4/7 token ids"
$py training/pretokenize.py --tokenizer "$out/tokenizer.bin" --corpus "$work/train.txt" \
  --out "$work/train.u16"
$py training/pretokenize.py --tokenizer "$out/tokenizer.bin" --corpus "$out/heldout_stories.txt" \
  --out "$work/heldout.u16"

step "5/7 training (train.py ${train_options[*]})"
$py training/train.py "${train_files[@]}" "${train_options[@]}" | tee "$work/train.log"

step "6/7 held-out perplexity and name recall (full context, sliding windows of 64 and 128)"
$py training/evaluate.py --model "$out/model.bin" --tokenizer "$out/tokenizer.bin" \
  --stories "$out/heldout_stories.txt" --window 64,128 | tee "$work/evaluate.txt"

step "7/7 checksums"
cp data/names.txt "$out/names.txt"
(cd "$out" && sha256sum model.bin tokenizer.bin names.txt heldout_story.txt heldout_stories.txt \
  loss.csv loss.svg) | tee "$work/sha256.txt"
if [ "$install" = 1 ]; then
  # Each file replaces its data/ copy whole (a copy beside it, then a rename); undo with
  # git checkout data/
  for f in model.bin tokenizer.bin heldout_story.txt heldout_stories.txt loss.csv loss.svg; do
    cp "$out/$f" "data/.$f.installing"
  done
  for f in model.bin tokenizer.bin heldout_story.txt heldout_stories.txt loss.csv loss.svg; do
    mv -f "data/.$f.installing" "data/$f"
  done
  echo "train-model: installed into data/ (git checkout data/ brings the shipped files back)"
else
  echo "train-model: the new model is in $out/; data/ is unchanged (--install copies it there)"
fi
echo "train-model: done in $(( $(date +%s) - t0 )) s; logs in $work/"
