#!/usr/bin/env bash
# Configures and builds the project (Release) into ./build. Used by the two user-facing scripts.
# Extra arguments go to CMake's configure step (run-tests.sh --sanitize passes its options so).
# H2O_BUILD_TARGETS (space-separated) builds only those targets and what they need
# (run-lessons.sh builds just the lessons and the explorer so); unset, everything is built.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
targets=()
if [ -n "${H2O_BUILD_TARGETS:-}" ]; then read -r -a targets <<<"$H2O_BUILD_TARGETS"; fi
cmake --build "$build" -j "$jobs" ${targets[@]+--target "${targets[@]}"}
