#!/usr/bin/env bash
# Builds the Python package with `pip install .` into a virtual environment and prints that
# environment's python. Usage: scripts/python.sh [build-dir]   (run.sh and test.sh call it)
#
# The environment is <build-dir>/python-venv (it sees the machine's own packages, so torch, cupy
# or jax installed there are tested too); scikit-build-core builds in <build-dir>/python, so a
# second run rebuilds only what changed.
#
# The package's CUDA backend is built where nvcc is found and a GPU answers. Without a GPU it
# could not run, and building its kernels a second time (the C++ build has them) would add ~7
# minutes on two cores, so the package is then built for the CPU; a plain `pip install .` builds
# CUDA wherever nvcc is found. RINGMM_PYTHON_CUDA=ON|OFF|AUTO overrides the choice. Here the kernels
# are built for the GPU present (RINGMM_CUDA_ARCHS=native); `pip install .` and wheels build every
# architecture since Ampere (pyproject.toml).
#
# Exit status: 0 when installed; 2 when the build requirements cannot be had (no network and not
# installed): callers skip the Python steps then; anything else is a failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-${RINGMM_BUILD_DIR:-$ROOT/build}}"
VENV="$BUILD_DIR/python-venv"
LOG="$BUILD_DIR/python-install.log"
log() { echo "[ringmm python] $*" >&2; }

mkdir -p "$BUILD_DIR"
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv --system-site-packages "$VENV" 2>"$LOG" || {
    log "cannot create a virtual environment (python3 -m venv: $(tail -1 "$LOG")); on Debian: apt-get install python3-venv"
    exit 2
  }
fi
PY="$VENV/bin/python"

# The build requirements of pyproject.toml and the test runner, installed once (pip's build
# isolation would fetch them again on every build).
REQUIREMENTS=("scikit-build-core>=0.10" "nanobind>=2.2" "numpy>=1.22" "pytest>=7")
if ! "$PY" -c "import scikit_build_core, nanobind, numpy, pytest" 2>/dev/null; then
  log "installing ${REQUIREMENTS[*]}"
  "$PY" -m pip install -q --disable-pip-version-check "${REQUIREMENTS[@]}" >"$LOG" 2>&1 || {
    log "cannot install the build requirements (no network?): $(tail -1 "$LOG")"
    exit 2
  }
fi

# Optional test dependencies, best effort: scipy checks `ringmm apsp` (tests/python/test_apsp_cli.py,
# which skips without it). Bounded retries, so that a machine without network does not wait.
if ! "$PY" -c "import scipy" 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check --retries 0 --timeout 15 scipy >"$LOG" 2>&1 ||
    log "scipy could not be installed ($(tail -1 "$LOG")); the apsp pytest will skip"
fi
# torch: ringmm.torch and its autograd tests (tests/python/test_torch_autograd.py skips without it).
# The wheel is large (~540 MB with its CUDA libraries, about a minute): two retries, then the tests skip.
if ! "$PY" -c "import torch" 2>/dev/null; then
  log "installing torch (large: about a minute)"
  "$PY" -m pip install -q --disable-pip-version-check --retries 2 --timeout 30 torch >"$LOG" 2>&1 ||
    log "torch could not be installed ($(tail -1 "$LOG")); the ringmm.torch tests will skip"
fi

# jax: ringmm.jax's XLA FFI handlers are built only where jaxlib's headers are found at build time,
# and tests/python/test_jax.py skips without it. The CPU wheels (about 80 MB): two retries, then skip.
if ! "$PY" -c "import jax" 2>/dev/null; then
  log "installing jax (ringmm.jax's custom calls are built against jaxlib's headers)"
  "$PY" -m pip install -q --disable-pip-version-check --retries 2 --timeout 30 jax >"$LOG" 2>&1 ||
    log "jax could not be installed ($(tail -1 "$LOG")); ringmm.jax is not built and its tests skip"
fi

# networkx checks ringmm.networks beyond brute force (tests/python/test_networks.py skips those
# cases without it); opt_einsum finds einsum's paths (jax brings it too). Small: one try each.
for module in networkx opt_einsum; do
  if ! "$PY" -c "import $module" 2>/dev/null; then
    "$PY" -m pip install -q --disable-pip-version-check --retries 0 --timeout 15 "$module" >"$LOG" 2>&1 ||
      log "$module could not be installed ($(tail -1 "$LOG")); the tests that need it skip"
  fi
done

cuda="${RINGMM_PYTHON_CUDA:-}"
if [[ -z "$cuda" ]]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then cuda=AUTO; else cuda=OFF; fi
fi
# As setup.sh: nvcc may be installed without being on PATH.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
log "building the package (CUDA backend: $cuda; log: $LOG)"
if ! "$PY" -m pip install --disable-pip-version-check --no-build-isolation -v "$ROOT" \
    -Cbuild-dir="$BUILD_DIR/python" -Ccmake.define.RINGMM_ENABLE_CUDA="$cuda" \
    -Ccmake.define.RINGMM_CUDA_ARCHS=native >"$LOG" 2>&1; then
  tail -40 "$LOG" >&2
  log "error: pip install failed (the whole log: $LOG)"
  exit 1
fi
echo "$PY"
