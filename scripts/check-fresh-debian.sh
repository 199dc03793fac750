#!/usr/bin/env bash
# Runs the README's two commands on fresh Debian systems, exactly as a new user there would:
# debootstrap makes a minimal Debian (only git and ca-certificates added, to clone), the project's
# committed HEAD is cloned into it, and inside it, with chroot and as root,
#   bash scripts/run-lessons.sh && bash scripts/run-tests.sh
# run from the clone. Prints how long each part took and the package versions the system got.
# Run it whenever a build file or a dependency changes. Needs root and the debootstrap package.
#
#   bash scripts/check-fresh-debian.sh [--cache DIR] [--mirror URL] [SUITE...]
#
# SUITE: Debian release names (default: trixie sid, i.e. Debian 13 and unstable).
# --cache DIR: where the systems live (default /var/tmp/h2o-fresh-debian). DIR/SUITE-base is the
#   bare debootstrap result, made once and reused (delete it to start from a newer Debian);
#   DIR/SUITE-run is a fresh copy of it for each check (left for inspection afterwards);
#   DIR/SUITE-apt keeps downloaded .deb files, so a rerun does not download them again;
#   DIR/SUITE-log.txt is the whole output, every line stamped with seconds since its command began.
# --mirror URL: the Debian mirror (default: the one this machine's apt uses).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "check-fresh-debian: $*" >&2; exit 1; }

cache=/var/tmp/h2o-fresh-debian
mirror=""
suites=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --cache) [ $# -ge 2 ] || die "--cache needs a folder"; cache="$2"; shift 2 ;;
    --mirror) [ $# -ge 2 ] || die "--mirror needs a URL"; mirror="$2"; shift 2 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) suites+=("$1"); shift ;;
  esac
done
[ ${#suites[@]} -gt 0 ] || suites=(trixie sid)

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mount and chroot)"
command -v debootstrap >/dev/null 2>&1 || die "needs debootstrap (apt-get install debootstrap)"
for suite in "${suites[@]}"; do
  [ -f "/usr/share/debootstrap/scripts/$suite" ] || die "debootstrap does not know suite '$suite'"
done

# The first Debian (not security) mirror of this machine's apt sources, deb822 or one-line style.
default_mirror() {
  local uri
  uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs: *\([^ ]*\).*/\1/p' |
         grep -v security | grep debian | head -n 1 || true)"
  if [ -z "$uri" ]; then
    uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
           sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\).*/\2/p' | grep -v security | grep debian |
           head -n 1 || true)"
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}
[ -n "$mirror" ] || mirror="$(default_mirror)"

commit="$(git -C "$root" rev-parse HEAD)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  echo "check-fresh-debian: note: uncommitted changes are not part of the check (it clones HEAD)"
fi
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

# Mounts made inside a run folder, unmounted (last first) however the script ends.
mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null || true
  done
  mounted=()
}
trap unmount_all EXIT
trap 'exit 130' INT TERM
mount_in() {  # mount_in TARGET MOUNT-ARGUMENTS...
  local target="$1"
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
}
# Removes a run folder, but never while anything is mounted below it (rm -rf would follow a bind
# mount of /dev into the host's own /dev).
remove_run_folder() {
  local folder="$1"
  if grep -q " $folder/" /proc/mounts; then die "$folder still has mounts; not removing it"; fi
  rm -rf --one-file-system "$folder"
}

now() { echo "$EPOCHREALTIME"; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }
# Every line of stdin, stamped with the seconds since $1, appended to log $2.
stamp_lines() {
  local start="$1" log="$2" line
  while IFS= read -r line; do
    printf '%7s %s\n' "$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')" \
      "$line" >>"$log"
  done
}
# The stamp (seconds) of the first log line from the command begun at $2 that matches regex $3.
first_stamp() {
  awk -v section="$2" -v pattern="$3" '
    $0 == "=== " section { inside = 1; next }
    /^=== / { inside = 0 }
    inside && substr($0, 9) ~ pattern { printf "%.0f", $1; exit }' "$1"
}
# How many seconds the command begun at $2 took, from log $1's "=== end" line.
section_seconds() {
  awk -v section="$2" '
    $0 == "=== " section { inside = 1; next }
    inside && /^=== end/ { sub(/.* after /, ""); sub(/ s\)$/, ""); print; exit }' "$1"
}
# In chroot $1, as a new user's login shell would run it: bash -c "$2", output stamped into $3.
run_inside() {
  local run="$1" command="$2" log="$3" start status
  echo "=== $command" >>"$log"
  start="$(now)"
  set +e
  chroot "$run" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /root/h2o-lessons && $command" 2>&1 | stamp_lines "$start" "$log"
  status="${PIPESTATUS[0]}"
  set -e
  echo "=== end (exit $status after $(seconds_since "$start") s)" >>"$log"
  return "$status"
}

summary=()
failed=0
for suite in "${suites[@]}"; do
  base="$cache/$suite-base"
  run="$cache/$suite-run"
  log="$cache/$suite-log.txt"
  : >"$log"
  echo "check-fresh-debian: $suite from $mirror (log: $log)"

  # 1. The bare system, made once.
  debootstrap_time="cached"
  if [ ! -d "$base" ]; then
    start="$(now)"
    rm -rf --one-file-system "$base.partial"
    debootstrap --variant=minbase --include=git,ca-certificates "$suite" "$base.partial" \
      "$mirror" >>"$log" 2>&1 || die "debootstrap of $suite failed (see $log)"
    mv "$base.partial" "$base"
    debootstrap_time="$(seconds_since "$start") s"
  fi

  # 2. A fresh copy of it, with the host's name resolution; the .deb cache survives between runs.
  remove_run_folder "$run"
  cp -a "$base" "$run"
  cp /etc/resolv.conf "$run/etc/resolv.conf"
  # A mirror's Release file is only "valid" for about a week after the mirror last synced; this
  # check tests the project, not how fresh the mirror is, so an older sync must not stop apt.
  echo 'Acquire::Check-Valid-Until "false";' >"$run/etc/apt/apt.conf.d/99check-fresh-debian"
  mkdir -p "$cache/$suite-apt/partial"
  mount_in "$run/proc" -t proc proc
  mount_in "$run/sys" -t sysfs sysfs
  mount_in "$run/dev" --bind /dev
  mount_in "$run/dev/pts" --bind /dev/pts
  mount_in "$run/var/cache/apt/archives" --bind "$cache/$suite-apt"

  # 3. The project, as `git clone` gives it to a new user (the committed HEAD of this checkout).
  git clone --quiet --no-hardlinks "$root" "$run/root/h2o-lessons"
  git -C "$run/root/h2o-lessons" checkout --quiet --detach "$commit"

  # 4. The README's two commands.
  result="passed"
  lessons_status=0
  tests_status=0
  run_inside "$run" "bash scripts/run-lessons.sh" "$log" || lessons_status=$?
  if [ "$lessons_status" -eq 0 ]; then
    run_inside "$run" "bash scripts/run-tests.sh" "$log" || tests_status=$?
  fi
  if [ "$lessons_status" -ne 0 ]; then
    result="FAILED: run-lessons.sh exit $lessons_status"
  elif [ "$tests_status" -ne 0 ]; then
    result="FAILED: run-tests.sh exit $tests_status"
  fi
  [ "$result" = passed ] || failed=1

  # shellcheck disable=SC2016  # dpkg-query expands ${Package}, not the shell
  versions="$(chroot "$run" dpkg-query -W -f='${Package} ${Version}\n' g++ cmake libxtensor-dev \
              libxtensor-blas-dev catch2 libopenblas-dev python3 2>/dev/null | tr '\n' ',' |
              sed 's/,$//; s/,/, /g' || true)"
  unmount_all

  lessons_section="bash scripts/run-lessons.sh"
  tests_section="bash scripts/run-tests.sh"
  build_start="$(first_stamp "$log" "$lessons_section" '^\[ *[0-9]+%\]')"
  lesson01="$(awk -v section="$lessons_section" '
    $0 == "=== " section { inside = 1; next }
    /^=== / { inside = 0 }
    inside && seen && NF > 1 { printf "%.0f", $1; exit }
    inside && /lesson 01_/ { seen = 1 }' "$log")"
  lessons_total="$(section_seconds "$log" "$lessons_section")"
  ctest_start="$(first_stamp "$log" "$tests_section" '^Test project')"
  tests_total="$(section_seconds "$log" "$tests_section")"
  ctest_line="$(grep -E 'tests passed|tests failed' "$log" | tail -n 1 | cut -c9- || true)"
  skipped="$(grep -c '(Skipped)' "$log" || true)"
  summary+=("$suite: $result
  packages: $versions
  debootstrap: $debootstrap_time; run-lessons.sh: ${lessons_total:-?} s (packages and configure until ${build_start:-?} s, lesson 01's first line at ${lesson01:-?} s)
  run-tests.sh: ${tests_total:-(not run)} s (build until ${ctest_start:-?} s, then ctest); ${ctest_line:-no ctest summary}, $skipped skipped")
  if [ "$result" != passed ]; then
    echo "check-fresh-debian: $suite $result; the log's last lines:" >&2
    tail -n 30 "$log" >&2
  fi
done

echo
echo "check-fresh-debian: commit $commit"
for line in "${summary[@]}"; do echo "$line"; done
exit "$failed"
