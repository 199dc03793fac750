#!/usr/bin/env bash
# Runs Debian's chromium headless and isolated, for the explorer page's browser test and its
# screenshot: a fresh profile folder (removed afterwards), no GPU, no sandbox (containers often
# run as root), none of chromium's own network services. Arguments go to chromium, e.g.
#
#   scripts/headless-chromium.sh --dump-dom "file:///tmp/page.html#step=12"    the DOM after scripts
#   scripts/headless-chromium.sh --window-size=1400,1200 --screenshot=shot.png "file:///tmp/page.html"
#
# Exits 3 when chromium is not installed (a teacher installs it with
# `bash scripts/install-deps.sh --only chromium`); chromium's own chatter on stderr (D-Bus and
# the like) is shown only when it fails.
set -euo pipefail
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "headless-chromium: chromium is not installed (bash scripts/install-deps.sh --only chromium)" >&2
  exit 3
fi
profile="$(mktemp -d "${TMPDIR:-/tmp}/h2o-chromium.XXXXXX")"
trap 'rm -rf "$profile"' EXIT
status=0
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
  --virtual-time-budget=5000 --user-data-dir="$profile" "$@" 2>"$profile/stderr" || status=$?
if [ "$status" -ne 0 ]; then
  cat "$profile/stderr" >&2
  echo "headless-chromium: chromium exited $status" >&2
fi
exit "$status"
