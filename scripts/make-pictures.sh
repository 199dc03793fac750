#!/usr/bin/env bash
# Draws the pictures README.md and docs/ show, into docs/pictures/ (or the folder given), from the
# project's own model and held-out story: the same programs and options a user would run.
#
#   scripts/make-pictures.sh                 build, then redraw docs/pictures/
#   scripts/make-pictures.sh --no-build DIR  draw into DIR with the binaries already built
#
# Every picture records the command that drew it in its <desc>. After retraining the model or
# changing a lesson, run this and commit docs/pictures/: CTest's "pictures_up_to_date" fails until
# then. That check reads the pictures the lesson checks draw (tests/checks/, the blocks with
# --pictures pictures_now), and a <desc> that differs from the committed one fails it, so the
# options here and there stay the same.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_BUILD_DIR:-$root/build}"
build_first=1
if [ "${1:-}" = "--no-build" ]; then build_first=0; shift; fi
if [ $# -gt 1 ]; then echo "usage: make-pictures.sh [--no-build] [DIR]" >&2; exit 2; fi
# A folder given is made and named absolutely; the default is named relative to the checkout, so
# the command each committed picture records in its <desc> holds no path of this machine.
if [ $# -eq 1 ]; then
  mkdir -p "$1"
  out="$(cd "$1" && pwd)"
else
  out=docs/pictures
fi
if [ "$build_first" = 1 ]; then "$root/scripts/build.sh"; fi

cd "$root"  # the programs' default files (data/...) are found from here
mkdir -p "$out"
# Lesson 10: one head's attention (heatmap) and accumulated attention against rank (line chart).
"$build/bin/10_sparse_attention" --pictures "$out" >/dev/null
# Lesson 11: one line chart per measure of the budget sweep.
"$build/bin/11_how_much_cache" --pictures "$out" >/dev/null
# Lesson 12: quality against KV bytes, one line per storage (float32, 8, 4 and 2 bits) under H2O.
"$build/bin/12_evict_or_quantise" --pictures "$out" >/dev/null
# Lesson 14: perplexity against KV bytes, FastGen at each target beside the window at its bytes.
"$build/bin/14_rules_per_head" --pictures "$out" >/dev/null
# compare_policies: which positions each policy keeps, step by step, at 10% of the story.
"$build/bin/compare_policies" --budgets 10 --policies h2o,window,sinks,tova \
  --svg "$out/kept_positions.svg" >/dev/null
# The explorer page (tools/explore) at one step, as a screenshot for README.md and docs/: only
# where chromium is installed (bash scripts/install-deps.sh --only chromium).
if command -v chromium >/dev/null 2>&1; then
  "$build/bin/explore" --out "$build/explorer_readme.html" >/dev/null
  bash "$root/scripts/headless-chromium.sh" --window-size=1400,1200 \
    --screenshot="$(cd "$out" && pwd)/explorer.png" \
    "file://$build/explorer_readme.html#step=300&layer=2&head=0&policy=h2o&compare=window"
fi
echo "pictures written to $out"
