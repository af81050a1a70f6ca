#!/usr/bin/env bash
# Installs what ringmm needs (when missing and installable), then configures and builds it.
# Usage: scripts/setup.sh [--tests] [build-dir]   (sourced by run.sh and test.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WITH_TESTS=OFF
if [[ "${1:-}" == "--tests" ]]; then WITH_TESTS=ON; shift; fi
BUILD_DIR="${1:-${RINGMM_BUILD_DIR:-$ROOT/build}}"

log() { echo "[ringmm setup] $*"; }

# Debian packages: the compiler and build tools, OpenMP (with g++), OpenBLAS, Open MPI, GoogleTest.
PACKAGES=(cmake ninja-build g++ libopenblas-dev libopenmpi-dev openmpi-bin)
[[ "$WITH_TESTS" == ON ]] && PACKAGES+=(libgtest-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    log "installing: ${missing[*]}"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
      log "warning: could not install ${missing[*]} (no network?); continuing with what is present"
    fi
  else
    log "warning: missing ${missing[*]} and not root: continuing with what is present"
  fi
fi
for tool in cmake c++; do
  command -v "$tool" >/dev/null || { log "error: '$tool' is required but not installed"; exit 1; }
done

# nvcc is optional: the CUDA backend is built when it is found.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  log "configuring in $BUILD_DIR"
  cmake -S "$ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DRINGMM_BUILD_TESTS="$WITH_TESTS" \
    -DRINGMM_BUILD_LAB="$WITH_TESTS" ${RINGMM_CMAKE_ARGS:-}
else
  cmake "$BUILD_DIR" -DRINGMM_BUILD_TESTS="$WITH_TESTS" -DRINGMM_BUILD_LAB="$WITH_TESTS" >/dev/null
fi
JOBS="${RINGMM_JOBS:-$(nproc)}"
log "building with $JOBS jobs"
cmake --build "$BUILD_DIR" -j "$JOBS"
