#!/usr/bin/env bash
# The Python package on the GPU machine (no network): one CMake tree builds the extension (with
# ringmm.jax's handlers where the machine's jax has its headers; nanobind comes from the machine),
# the CLI and the CUDA test targets named in CPP_TESTS; those tests run, then the whole Python
# suite against the built extension (PYTHONPATH, no pip install), then the benchmarks of lab/python
# named in BENCH (default: all five), each writing its records and log to $OUT.
# Usage, repository root on the GPU machine:
#   CPP_TESTS="workspace backward" BENCH="jax_calls einsum_bench" lab/device/python_run.sh
# (EINSUM_ARGS goes to einsum_bench.py, e.g. "--only tse").
# The machine has no googletest: GTEST_SRC (default .carry/googletest) is built first when
# CPP_TESTS names any. Wheels in .carry/wheels (torch-semiring-einsum, networkx, opt_einsum) are
# installed where the machine lacks them (it has no network).
set -uo pipefail
root=$(pwd)
out=${OUT:-/tmp}
build=${BUILD:-/tmp/build-python-run}
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L
for wheel in "$root"/.carry/wheels/*.whl; do
  [ -e "$wheel" ] || continue
  module=$(basename "$wheel" | cut -d- -f1)
  python3 -c "import $module" 2>/dev/null || python3 -m pip install -q --no-deps --no-index "$wheel"
done
tests=() targets=(_core ringmm-cli)
for t in ${CPP_TESTS:-}; do tests+=("cuda_${t}_test"); targets+=("cuda_${t}_test"); done
options=(-DRINGMM_BUILD_TESTS=OFF)
if [ ${#tests[@]} -gt 0 ]; then
  gtest_src=${GTEST_SRC:-$root/.carry/googletest}
  cmake -S "$gtest_src" -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/gtest-prefix \
    > "$out/gtest.log" 2>&1 && cmake --build /tmp/gtest-build -j "$(nproc)" --target install >> "$out/gtest.log" 2>&1
  options=(-DRINGMM_BUILD_TESTS=ON -DCMAKE_PREFIX_PATH=/tmp/gtest-prefix)
fi
start=$SECONDS
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DRINGMM_ENABLE_CUDA=ON \
  -DRINGMM_ENABLE_BLAS=OFF -DRINGMM_BUILD_PYTHON=ON -DRINGMM_BUILD_LAB=OFF -DRINGMM_ENABLE_MPI=OFF "${options[@]}" \
  > "$out/configure.log" 2>&1
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" > "$out/build.log" 2>&1
echo "build rc=$? in $((SECONDS - start)) s: $(grep -o 'ringmm: Python package[^(]*' "$out/configure.log")"
for t in "${tests[@]}"; do
  "$build/tests/cuda/$t" --gtest_brief=1 > "$out/$t.log" 2>&1
  echo "$t rc=$?: $(grep -E 'PASSED|FAILED' "$out/$t.log" | tr '\n' ' ')"
done
pkg=/tmp/python-run-package
rm -rf "$pkg" && mkdir -p "$pkg" && cp -r "$root/python/ringmm" "$pkg/" && cp "$(find "$build" -name '_core*.so' | head -1)" "$pkg/ringmm/"
export PYTHONPATH=$pkg RINGMM_CLI=$build/tools/ringmm
start=$SECONDS
timeout 400 python3 -m pytest tests/python -q -rs -p no:cacheprovider > "$out/pytest.log" 2>&1
echo "pytest tests/python rc=$? in $((SECONDS - start)) s: $(tail -1 "$out/pytest.log")"
grep -E "^(FAILED|ERROR)" "$out/pytest.log" | head -20
for bench in ${BENCH-call_overhead large_product training_step jax_calls einsum_bench}; do
  case $bench in
    call_overhead | large_product) (cd lab/python && timeout 300 python3 $bench.py --ringmm "$build/tools/ringmm" --out "$out/python-$bench.json") ;;
    training_step) (cd lab/python && timeout 240 python3 training_step.py --out "$out/python-training-step.json") ;;
    jax_calls) (cd lab/python && timeout 200 python3 jax_calls.py --ringmm "$build/tools/ringmm" --out "$out/jax-calls.json") ;;
    einsum_bench) timeout 300 python3 lab/python/einsum_bench.py --out "$out/einsum.jsonl" ${EINSUM_ARGS:-} ;;
    *) echo "unknown benchmark $bench" ;;
  esac > "$out/$bench.log" 2>&1
  echo "$bench rc=$?"; tail -25 "$out/$bench.log"
done
