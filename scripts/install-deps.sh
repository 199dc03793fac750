#!/usr/bin/env bash
# Installs the Debian 12 packages this project builds with, but only those that are missing.
# Works as root, or as a normal user through sudo. Arguments name more packages to install the
# same way (scripts/fuzz.sh asks for clang-14 and libclang-rt-14-dev so); after --only, just the
# packages named (scripts/train-model.sh asks for PyTorch so). python3 is for the tests of
# training/'s command lines; building and testing never install PyTorch.
set -euo pipefail

if [ "${1:-}" = "--only" ]; then
  shift
  [ $# -gt 0 ] || { echo "install-deps: --only needs package names" >&2; exit 2; }
  packages=("$@")
else
  packages=(g++ cmake make pkg-config xtensor-dev libxtensor-blas-dev libopenblas-dev catch2 python3
            "$@")
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present (${packages[*]})"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo_cmd=()
elif command -v sudo >/dev/null 2>&1; then
  sudo_cmd=(sudo)
else
  echo "install-deps: missing packages (${missing[*]}) and no sudo to install them; run as root" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
