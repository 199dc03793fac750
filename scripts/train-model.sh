#!/usr/bin/env bash
# Makes the project's own small story model, from nothing, into data/:
#   model.bin, tokenizer.bin (llama2.c formats), heldout_story.txt, heldout_stories.txt,
#   loss.csv, loss.svg  (data/names.txt is the input list of names).
# Steps: install python3-torch if missing, generate stories, train the tokenizer,
# pretokenize, train (about 35 minutes on 2 cores), measure the result.
# Work files (the generated corpus, token ids, logs) go to build/train/, never committed.
#
# Usage: bash scripts/train-model.sh [--seed N] [--schedule SPEC] [--threads N] [--stories N]
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
while [ $# -gt 0 ]; do
  case "$1" in
    --seed|--schedule|--threads|--stories)
      [ $# -ge 2 ] || { echo "train-model: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --seed) seed="$2" ;;
        --schedule) schedule="$2" ;;
        --threads) threads="$2" ;;
        --stories) stories="$2" ;;
      esac
      shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "train-model: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

py=/usr/bin/python3  # Debian's Python, where python3-torch installs (not a pyenv python3)

# -- python3-torch, if missing (as root, or through sudo) -------------------------------------
bash scripts/install-deps.sh --only python3 python3-torch python3-numpy

work=build/train
mkdir -p "$work" data
t0=$(date +%s)
step() { echo; echo "== $* ($(( $(date +%s) - t0 )) s)"; }

step "1/7 stories: $stories for training (seed 1), 50 held-out (seed 2), a lesson story (seed 3)"
$py training/make_corpus.py --seed 1 --stories "$stories" --out "$work/train.txt"
$py training/make_corpus.py --seed 2 --stories 50 --out data/heldout_stories.txt
$py training/make_corpus.py --seed 3 --stories 300 --out "$work/lesson_pool.txt"

step "2/7 tokenizer"
$py training/train_tokenizer.py --corpus "$work/train.txt" --vocab-size 2048 \
  --out data/tokenizer.bin --check data/heldout_stories.txt

step "3/7 lesson story of 900-1000 tokens"
$py training/pick_story.py --tokenizer data/tokenizer.bin --corpus "$work/lesson_pool.txt" \
  --min 900 --max 1000 --out data/heldout_story.txt

step "4/7 token ids"
$py training/pretokenize.py --tokenizer data/tokenizer.bin --corpus "$work/train.txt" \
  --out "$work/train.u16"
$py training/pretokenize.py --tokenizer data/tokenizer.bin --corpus data/heldout_stories.txt \
  --out "$work/heldout.u16"

train_options=(--seed "$seed")
if [ -n "$schedule" ]; then train_options+=(--schedule "$schedule"); fi
if [ -n "$threads" ]; then train_options+=(--threads "$threads"); fi
step "5/7 training (train.py ${train_options[*]})"
$py training/train.py --train "$work/train.u16" --heldout "$work/heldout.u16" \
  --tokenizer data/tokenizer.bin --out data/model.bin --csv data/loss.csv --svg data/loss.svg \
  "${train_options[@]}" | tee "$work/train.log"

step "6/7 held-out perplexity and name recall (full context, sliding windows of 64 and 128)"
$py training/evaluate.py --model data/model.bin --tokenizer data/tokenizer.bin \
  --stories data/heldout_stories.txt --window 64,128 | tee "$work/evaluate.txt"

step "7/7 checksums"
(cd data && sha256sum model.bin tokenizer.bin names.txt heldout_story.txt heldout_stories.txt \
  loss.csv loss.svg) | tee "$work/sha256.txt"
echo "train-model: done in $(( $(date +%s) - t0 )) s; logs in $work/"
