#!/usr/bin/env bash
# The Python package on the GPU machine (no network): installs the build requirements from
# WHEELS (default .carry/wheels: `pip download scikit-build-core nanobind pytest -d .carry/wheels`
# on a machine with network), builds the `ringmm` tool (build-tool, for the CLI tests and the C++
# figures) beside `pip install .` with the CUDA backend, runs the pytest suite with torch, cupy and
# jax on the GPU, then the Python benchmarks (lab/python). Usage, repository root:
#   lab/device/python_run.sh [results-dir]     (default $OUT or /tmp; pytest and bench output there)
set -uo pipefail
root=$(pwd)
out=${1:-${OUT:-/tmp}}
wheels=${WHEELS:-$root/.carry/wheels}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"

python3 -m pip install -q --no-index --find-links "$wheels" scikit-build-core nanobind pytest > "$out/pip-requirements.log" 2>&1 ||
  { tail -3 "$out/pip-requirements.log"; exit 1; }
(cmake -S . -B build-tool -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DRINGMM_ENABLE_CUDA=ON \
   -DRINGMM_ENABLE_BLAS=OFF -DRINGMM_BUILD_TESTS=OFF -DRINGMM_BUILD_EXAMPLES=OFF > "$out/tool.log" 2>&1 &&
 cmake --build build-tool --target ringmm-cli -j 8 >> "$out/tool.log" 2>&1) &
tool=$!
CMAKE_BUILD_PARALLEL_LEVEL=8 CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90a" \
  python3 -m pip install --no-build-isolation --no-deps . > "$out/pip-install.log" 2>&1 ||
  { tail -20 "$out/pip-install.log"; exit 1; }
wait $tool || { tail -20 "$out/tool.log"; exit 1; }
python3 -c "import ringmm; i = ringmm.info(); print('ringmm', i['version'], i['cuda_status'], i['cuda_devices'])"

RINGMM_CLI=$root/build-tool/tools/ringmm python3 -m pytest tests/python -q -rs -p no:cacheprovider > "$out/pytest.log" 2>&1
echo "pytest: $(tail -1 "$out/pytest.log")"
grep -E "^(FAILED|ERROR)" "$out/pytest.log" | head -20

cd lab/python
python3 call_overhead.py --ringmm "$root/build-tool/tools/ringmm" --out "$out/python-call-overhead.json" 2>&1 | tail -24
python3 large_product.py --ringmm "$root/build-tool/tools/ringmm" --out "$out/python-large-product.json" 2>&1 | tail -8
timeout 240 python3 training_step.py --out "$out/python-training-step.json" 2>&1 | tail -8
