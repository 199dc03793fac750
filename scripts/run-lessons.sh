#!/usr/bin/env bash
# The first of the README's two commands: installs what is missing, builds, and runs every lesson
# in order. Extra arguments are passed to lesson 09 (for example --model PATH).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

for lesson in $(sed -n 's/^ *h2o_lesson(\([0-9][0-9]_[a-z0-9_]*\)).*/\1/p' "$root/lessons/CMakeLists.txt"); do
  printf '\n==================== lesson %s ====================\n\n' "$lesson"
  if [ "${lesson%%_*}" = "09" ]; then
    "$build/bin/$lesson" "$@"
  else
    "$build/bin/$lesson"
  fi
done
