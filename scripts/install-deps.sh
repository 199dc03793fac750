#!/usr/bin/env bash
# Installs what this project builds with, but only what is missing, with the system's own package
# manager:
#   conda / mamba  when a conda environment is active (packages from conda-forge, into that env)
#   apt            Debian 12, 13, unstable; Ubuntu (run here: Debian 12, 13 and unstable)
#   dnf            Fedora
#   brew           macOS with Homebrew
# H2O_PACKAGE_MANAGER=apt|dnf|brew|conda chooses one by hand. On any other system it prints what
# to install and exits 1. docs/setup.md says which systems were run and which are documented only,
# and lists the package names per system.
#
#   install-deps.sh [NAME...]        the project's packages, plus NAME... (scripts/fuzz.sh asks
#                                    for clang and libclang-rt-dev so)
#   install-deps.sh --only NAME...   just NAME... (scripts/train-model.sh asks for PyTorch so)
# NAME is a Debian package name; the few that other scripts ask for are translated for the other
# package managers (package_name below), any other name is passed on unchanged. Works as root, or
# as a normal user through sudo (apt, dnf; Homebrew and conda never need it). python3 is for the
# tests of training/'s command lines; building and testing never install PyTorch.
set -euo pipefail

# The package manager of this system (empty when none is known).
detect_manager() {
  if [ -n "${H2O_PACKAGE_MANAGER:-}" ]; then echo "$H2O_PACKAGE_MANAGER"; return; fi
  if [ -n "${CONDA_PREFIX:-}" ] && command -v conda >/dev/null 2>&1; then echo conda; return; fi
  if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
    echo apt; return
  fi
  if command -v dnf >/dev/null 2>&1; then echo dnf; return; fi
  if command -v brew >/dev/null 2>&1; then echo brew; return; fi
  echo ""
}

# The project's own packages for each package manager. OpenMP (--threads N) comes with the
# compiler: g++ brings GCC's libgomp (apt, dnf), conda's cxx-compiler its libgomp; Apple's clang
# has none, so Homebrew's libomp is added (src/CMakeLists.txt looks for it there). xtensor-blas is
# packaged by Debian, Ubuntu and conda-forge only; on Fedora and Homebrew check_xtensor_blas
# explains how to add it.
project_packages() {
  case "$1" in
    apt) echo g++ cmake make pkg-config libxtensor-dev libxtensor-blas-dev libopenblas-dev catch2 \
              python3 ;;
    dnf) echo gcc-c++ cmake make xtensor-devel openblas-devel catch-devel python3 ;;
    brew) echo cmake xtensor openblas catch2 python libomp ;;
    conda) echo cxx-compiler cmake make xtensor xtensor-blas openblas catch2 python ;;
  esac
}

# The name on package manager $1 of the Debian package $2 (other scripts ask by Debian names).
package_name() {
  case "$1:$2" in
    apt:*) echo "$2" ;;
    dnf:clang | dnf:clang-*) echo clang ;;
    dnf:libclang-rt-*) echo compiler-rt ;;
    dnf:libomp-dev) echo libomp-devel ;;
    brew:libomp-dev) echo libomp ;;
    conda:libomp-dev) echo llvm-openmp ;;
    brew:python3 | conda:python3) echo python ;;
    brew:python3-torch | conda:python3-torch) echo pytorch ;;
    brew:python3-numpy | conda:python3-numpy) echo numpy ;;
    brew:clang | brew:clang-* | brew:libclang-rt-*) echo llvm ;;
    conda:clang | conda:clang-*) echo clangxx ;;
    conda:libclang-rt-*) echo compiler-rt ;;
    *) echo "$2" ;;
  esac
}

is_installed() {
  case "$1" in
    apt) dpkg-query -W -f='${Status}' "$2" 2>/dev/null | grep -q "install ok installed" ;;
    dnf) rpm -q "$2" >/dev/null 2>&1 ;;
    brew) brew list --versions "$2" >/dev/null 2>&1 ;;
    conda) conda list -p "$CONDA_PREFIX" --full-name "$2" 2>/dev/null | grep -q "^$2 " ;;
  esac
}

# Fedora and Homebrew have no xtensor-blas package (header-only: three commands install it).
check_xtensor_blas() {
  local prefix=/usr/local
  if [ "$1" = brew ]; then prefix="$(brew --prefix)"; fi
  for dir in /usr/include "$prefix/include"; do
    if [ -f "$dir/xtensor-blas/xlinalg.hpp" ]; then return 0; fi
  done
  cat >&2 <<EOF
install-deps: xtensor-blas is not packaged for $1; it is header-only, install it from source:
  git clone --depth 1 --branch 0.23.0 https://github.com/xtensor-stack/xtensor-blas
  cmake -S xtensor-blas -B xtensor-blas/build -DCMAKE_INSTALL_PREFIX=$prefix
  ${sudo_word}cmake --install xtensor-blas/build
then run this command again.
EOF
  exit 1
}

manager="$(detect_manager)"
only=0
if [ "${1:-}" = "--only" ]; then
  shift
  [ $# -gt 0 ] || { echo "install-deps: --only needs package names" >&2; exit 2; }
  only=1
fi

if [ -z "$manager" ]; then
  echo "install-deps: no package manager this script knows (apt, dnf, brew, conda) was found." >&2
  echo "Install with your system's tools: a C++17 compiler, CMake >= 3.18, make, xtensor 0.24-0.27" \
       "(with xtl), xtensor-blas, OpenBLAS (with cblas.h), Catch2 2 or 3, python3${*:+, and $*};" \
       "then run scripts/build.sh. docs/setup.md lists the package names per system." >&2
  exit 1
fi
case "$manager" in
  apt | dnf | brew | conda) ;;
  *) echo "install-deps: H2O_PACKAGE_MANAGER must be apt, dnf, brew or conda, not '$manager'" >&2
     exit 2 ;;
esac

packages=()
if [ "$only" -eq 0 ]; then read -r -a packages <<<"$(project_packages "$manager")"; fi
for name in "$@"; do packages+=("$(package_name "$manager" "$name")"); done

missing=()
for p in "${packages[@]}"; do
  if ! is_installed "$manager" "$p"; then missing+=("$p"); fi
done

sudo_cmd=()
sudo_word=""
if [ "$manager" = apt ] || [ "$manager" = dnf ]; then
  if [ "$(id -u)" -ne 0 ]; then
    sudo_cmd=(sudo)
    sudo_word="sudo "
  fi
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present ($manager: ${packages[*]})"
else
  if [ ${#sudo_cmd[@]} -gt 0 ] && ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing packages (${missing[*]}) and no sudo to install them; run as root" >&2
    exit 1
  fi
  echo "install-deps: installing with $manager: ${missing[*]}"
  case "$manager" in
    apt)
      "${sudo_cmd[@]}" apt-get update -qq
      DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" ;;
    dnf) "${sudo_cmd[@]}" dnf install -y "${missing[@]}" ;;
    brew) brew install "${missing[@]}" ;;
    conda)
      installer=conda
      if command -v mamba >/dev/null 2>&1; then installer=mamba; fi
      "$installer" install -y -p "$CONDA_PREFIX" -c conda-forge "${missing[@]}" ;;
  esac
fi

if [ "$only" -eq 0 ] && { [ "$manager" = dnf ] || [ "$manager" = brew ]; }; then
  check_xtensor_blas "$manager"
fi
