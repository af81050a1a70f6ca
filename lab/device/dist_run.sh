#!/usr/bin/env bash
# ringmm::dist's device path on the GPU machine: builds the library with MPI and NCCL, the device
# tests and the CLI, then runs dist_device_test with 1, 2, ... ranks up to the GPUs present (one
# rank per GPU; GTEST_FILTER narrows it), each run timed.
# Usage, repository root on the GPU machine:
#   [GTEST_FILTER='DeviceResidentArgmax*'] lab/device/dist_run.sh
# The machine has no googletest: GTEST_SRC (default .carry/googletest) is built first.
set -uo pipefail
root=$(pwd)
out=${OUT:-/tmp}
build=/tmp/build-dist
export PATH=/usr/local/cuda/bin:$PATH
# NCCL lives in the nvidia-nccl wheel of python3 on the GPU machines (libnccl.so.2 only).
nccl=$(python3 -c 'import nvidia.nccl as m; print(m.__path__[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl:+$nccl/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L | grep -c '^GPU')
gtest_src=${GTEST_SRC:-$root/.carry/googletest}
cmake -S "$gtest_src" -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/gtest-prefix \
  > "$out/gtest.log" 2>&1 && cmake --build /tmp/gtest-build -j "$(nproc)" --target install >> "$out/gtest.log" 2>&1
start=$SECONDS
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DRINGMM_ENABLE_CUDA=ON \
  -DRINGMM_ENABLE_MPI=ON -DRINGMM_ENABLE_BLAS=OFF -DRINGMM_BUILD_TESTS=ON -DRINGMM_BUILD_LAB=OFF \
  -DRINGMM_BUILD_EXAMPLES=OFF -DCMAKE_PREFIX_PATH=/tmp/gtest-prefix > "$out/configure-dist.log" 2>&1
grep -E 'ringmm .*NCCL=' "$out/configure-dist.log"
cmake --build "$build" -j "$(nproc)" --target dist_device_test > "$out/build-dist.log" 2>&1
echo "build rc=$? in $((SECONDS - start)) s ($gpus GPUs)"
for ranks in 1 2 4 8; do
  [ "$ranks" -le "$gpus" ] || break
  start=$SECONDS
  mpirun -n "$ranks" --oversubscribe --bind-to none "$build/tests/dist/dist_device_test" --gtest_brief=1 \
    ${GTEST_FILTER:+--gtest_filter="$GTEST_FILTER"} > "$out/dist-device-np$ranks.log" 2>&1
  echo "dist_device_test np$ranks rc=$? in $((SECONDS - start)) s: $(grep -E '^\S*\[  (PASSED|FAILED|SKIPPED) ' "$out/dist-device-np$ranks.log" | tr '\n' ' ')"
  grep -E "Failure|FAILED  \]" "$out/dist-device-np$ranks.log" | head -10
done
