#!/usr/bin/env bash
# Configures and builds the project (Release) into ./build. Used by the two user-facing scripts.
# Extra arguments go to CMake's configure step (run-tests.sh --sanitize passes its options so).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${H2O_BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$jobs"
