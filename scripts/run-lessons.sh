#!/usr/bin/env bash
# The first of the README's two commands: installs what is missing, builds the lessons and the
# explorer (build/bin/explore, for the classroom demo), and runs every lesson in order. The
# lessons that draw pictures (those whose --help offers --pictures: 10, 11, 12 and 14) draw them
# into build/pictures/. Extra arguments go to the lessons that read a real model (09 on), for
# example --model PATH --tokenizer PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_BUILD_DIR:-$root/build}"
lessons="$(sed -n 's/^ *h2o_lesson(\([0-9][0-9]_[a-z0-9_]*\)).*/\1/p' "$root/lessons/CMakeLists.txt")"
"$root/scripts/install-deps.sh"
# Only the lessons and the explorer (and the library they link), so the classroom demo
# (build/bin/explore) is ready too; the other tools and the tests are run-tests.sh's to build.
H2O_BUILD_TARGETS=classroom "$root/scripts/build.sh"

for lesson in $lessons; do
  printf '\n==================== lesson %s ====================\n\n' "$lesson"
  number="${lesson%%_*}"
  args=()
  if [ "$number" -ge 9 ]; then args+=("$@"); fi
  case "$("$build/bin/$lesson" --help)" in
    *--pictures*) args+=(--pictures "$build/pictures") ;;
  esac
  "$build/bin/$lesson" "${args[@]+"${args[@]}"}"
done
