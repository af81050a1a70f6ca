#!/usr/bin/env bash
# The portable CUDA path, tested on a Hopper GPU (issue: every NVIDIA GPU since Ampere). A build
# with PTX for compute_80 only (CMAKE_CUDA_ARCHITECTURES=80-virtual) makes the driver JIT-compile
# every kernel for the GPU and takes the branches written for GPUs before Hopper (no three-input
# integer min/max, no programmatic dependent launch), so the non-Hopper code runs here.
# Usage, repository root on the GPU machine:
#   lab/device/portable_run.sh tests   # build 80-virtual (tests, CLI, Python), ctest -L gpu, pytest
#   lab/device/portable_run.sh native-tests   # the same with the native 90a build
#   lab/device/portable_run.sh bench   # build the native 90a CLI; `ringmm bench` at 4096³ with both
#   lab/device/portable_run.sh blackwell   # compile-only: the library for sm_100 and sm_120 (any
#                                          # machine whose nvcc knows them, no GPU needed)
# Both steps in one call need about 12 minutes; as two calls, the second must come while the
# machine is warm (it reuses the first's build in /tmp/build-portable).
# The machine has no googletest: GTEST_SRC (default .carry/googletest) is built first.
set -uo pipefail
root=$(pwd)
out=${OUT:-/tmp}
portable=/tmp/build-portable native=/tmp/build-native
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L
configure() {  # <dir> <architectures> <cmake options...>
  local dir=$1 archs=$2
  shift 2
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    -DRINGMM_ENABLE_CUDA=ON -DRINGMM_ENABLE_BLAS=OFF -DRINGMM_ENABLE_MPI=OFF -DRINGMM_BUILD_LAB=OFF \
    -DRINGMM_BUILD_EXAMPLES=OFF "$@" > "$out/configure-$(basename "$dir").log" 2>&1
}
# The whole GPU suite with one build: ctest -L gpu, then pytest tests/python on its extension.
suite() {  # <dir> <architectures>
  local dir=$1 archs=$2 start
  local gtest_src=${GTEST_SRC:-$root/.carry/googletest}
  [ -d /tmp/gtest-prefix ] || { cmake -S "$gtest_src" -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX=/tmp/gtest-prefix > "$out/gtest.log" 2>&1 &&
    cmake --build /tmp/gtest-build -j "$(nproc)" --target install >> "$out/gtest.log" 2>&1; }
  start=$SECONDS
  configure "$dir" "$archs" -DRINGMM_BUILD_TESTS=ON -DRINGMM_BUILD_PYTHON=ON -DCMAKE_PREFIX_PATH=/tmp/gtest-prefix
  cmake --build "$dir" -j "$(nproc)" > "$out/build-$archs.log" 2>&1
  echo "build ($archs) rc=$? in $((SECONDS - start)) s"
  start=$SECONDS
  (cd "$dir" && ctest -L gpu -j 4 --timeout 300 > "$out/ctest-$archs.log" 2>&1)
  echo "ctest -L gpu ($archs) rc=$? in $((SECONDS - start)) s: $(grep -E 'tests passed|tests failed' "$out/ctest-$archs.log")"
  grep -E "\*\*\*Failed|Not Run|Timeout" "$out/ctest-$archs.log" | head -10
  local pkg=/tmp/package-$archs
  rm -rf "$pkg" && mkdir -p "$pkg" && cp -r "$root/python/ringmm" "$pkg/" && cp "$(find "$dir" -name '_core*.so' | head -1)" "$pkg/ringmm/"
  start=$SECONDS
  PYTHONPATH=$pkg RINGMM_CLI=$dir/tools/ringmm timeout 360 python3 -m pytest tests/python -q -p no:cacheprovider \
    > "$out/pytest-$archs.log" 2>&1
  echo "pytest tests/python ($archs) rc=$? in $((SECONDS - start)) s: $(tail -1 "$out/pytest-$archs.log")"
  grep -E "^(FAILED|ERROR)" "$out/pytest-$archs.log" | head -10
  PYTHONPATH=$pkg python3 -c "import ringmm; i = ringmm.info(); print('ringmm.info:', i['cuda_architectures'], i['cuda_devices'], i['cuda_status'])"
}
for step in "$@"; do
  case $step in
    tests) suite "$portable" 80-virtual ;;
    native-tests) suite "$native" 90a ;;
    bench)
      start=$SECONDS
      configure "$native" 90a -DRINGMM_BUILD_TESTS=ON -DCMAKE_PREFIX_PATH=/tmp/gtest-prefix
      cmake --build "$native" -j "$(nproc)" --target ringmm-cli cuda_contract_test cuda_architectures_test \
        > "$out/build-native.log" 2>&1
      echo "native build (90a) rc=$? in $((SECONDS - start)) s"
      for t in cuda_contract_test cuda_architectures_test; do
        "$native/tests/cuda/$t" --gtest_brief=1 > "$out/$t-native.log" 2>&1
        echo "$t (90a) rc=$?: $(grep -E 'PASSED|FAILED' "$out/$t-native.log" | tr '\n' ' ')"
      done
      for build in native portable; do  # the same cases, one build after the other, on this GPU
        dir=/tmp/build-$build
        [ -x "$dir/tools/ringmm" ] || { echo "no $build CLI (run the tests step first)"; continue; }
        "$dir/tools/ringmm" info | grep -E "cuda|gpu"
        "$dir/tools/ringmm" bench --backend cuda --semiring all --type f32,i32,u8 --shapes 4096 --reps 5 \
          --out "$out/bench-$build.json" > "$out/bench-$build.log" 2>&1
        echo "bench $build rc=$?"
      done
      ;;
    blackwell)
      archs=""
      for a in 100 120; do nvcc --list-gpu-arch 2>/dev/null | grep -q "compute_$a" && archs+="${archs:+;}$a-real"; done
      if [ -z "$archs" ]; then echo "blackwell: this nvcc knows neither sm_100 nor sm_120"; continue; fi
      start=$SECONDS
      configure /tmp/build-blackwell "$archs" -DRINGMM_BUILD_TESTS=OFF -DRINGMM_BUILD_TOOLS=OFF
      cmake --build /tmp/build-blackwell -j "$(nproc)" --target ringmm > "$out/build-blackwell.log" 2>&1
      rc=$?
      echo "blackwell compile-only ($archs, nvcc $(nvcc --version | grep -o 'release [0-9.]*')) rc=$rc in $((SECONDS - start)) s"
      grep -m 5 "error" "$out/build-blackwell.log"
      ;;
    *) echo "unknown step $step (tests, native-tests, bench, blackwell)" ;;
  esac
done
