#!/usr/bin/env bash
# The Python benchmarks of issue 11 on a CUDA machine with torch: builds the `ringmm` tool (for the
# C++ figures) and the Python package, both with the CUDA backend, then runs call_overhead.py,
# large_product.py and training_step.py, each writing its JSON into the results directory.
# Usage, repository root: lab/python/run.sh [results-dir]   (default: lab/results/python-<UTC date>)
# Environment: RINGMM_BUILD_DIR (default build-pybench), RINGMM_JOBS (default: all cores).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${RINGMM_BUILD_DIR:-$ROOT/build-pybench}"
RESULTS="${1:-$ROOT/lab/results/python-$(date -u +%Y-%m-%d)}"
log() { echo "[ringmm python bench] $*" >&2; }

if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)
mkdir -p "$BUILD"
log "building the ringmm tool in $BUILD"
cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DRINGMM_ENABLE_CUDA=ON \
  -DRINGMM_BUILD_TESTS=OFF -DRINGMM_BUILD_EXAMPLES=OFF >"$BUILD/configure-tool.log" 2>&1 ||
  { tail -20 "$BUILD/configure-tool.log"; exit 1; }
cmake --build "$BUILD" --target ringmm-cli -j "${RINGMM_JOBS:-$(nproc)}" >"$BUILD/build-tool.log" 2>&1 ||
  { tail -40 "$BUILD/build-tool.log"; exit 1; }
log "building the Python package with its CUDA backend"
PY=$(RINGMM_PYTHON_CUDA=ON "$ROOT/scripts/python.sh" "$BUILD")

mkdir -p "$RESULTS"
cd "$ROOT"
"$PY" lab/python/call_overhead.py --ringmm "$BUILD/tools/ringmm" --out "$RESULTS/call-overhead.json"
"$PY" lab/python/large_product.py --ringmm "$BUILD/tools/ringmm" --out "$RESULTS/large-product.json"
"$PY" lab/python/training_step.py --out "$RESULTS/training-step.json"
log "results in $RESULTS"
