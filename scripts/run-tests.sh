#!/usr/bin/env bash
# The second of the README's two commands: installs what is missing, builds, and runs the whole
# test suite with CTest (unit tests, every lesson's output, every program's bad-input handling).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
