#!/usr/bin/env bash
# One device call over carried binaries: the GPU tests (engine, measurement code, SUMMA under mpirun),
# compute-sanitizer and SASS evidence, the official `ringmm bench` targets, and SUMMA runs.
# Usage, repository root on the GPU machine:
#   scripts/gpu/device_pass.sh <bins.tar.xz> <tag> [steps...]
#     steps: tests sanitize bench summa (default: tests bench)
#     RANKS (default: the GPU count) ranks for the dist tests; SUMMA_ARGS the arguments after the
#     tool for scripts/gpu/summa_scaling.sh (default: 16384,32768 plus-times:f32,max-plus:f32 1x1 broadcast)
# The executables in the archive are built on the development machine (scripts/gpu/pack.sh).
# Every output lands in $OUT/device-<tag>.tar.gz; summaries are printed last.
set -uo pipefail
archive=${1:?usage: device_pass.sh <bins.tar.xz> <tag> [steps...]}
tag=${2:?usage: device_pass.sh <bins.tar.xz> <tag> [steps...]}
shift 2
steps=${*:-tests bench}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bins=/tmp/ringmm-bins
res=/tmp/device-$tag
mkdir -p "$bins" "$res"
tar -C "$bins" -xJf "$archive" || exit 1
nccl=$(python3 -c 'import nvidia.nccl as m; print(m.__path__[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH=$bins:${nccl:+$nccl/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ranks=${RANKS:-$(nvidia-smi -L | wc -l)}
summary=$res/summary.txt
{ nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
  echo "mpirun: $(mpirun --version 2>&1 | head -1); nccl wheel: ${nccl:-none}"; } | tee "$summary"

for step in $steps; do
  case $step in
    tests)
      OUT=$res/engine TEST_TIMEOUT=200 "$here/engine_check.sh" "$bins" tests > /dev/null 2>&1
      tail -4 "$res/engine/tests.txt" | sed 's/^/engine: /' >> "$summary"
      timeout 200 "$bins/measure_tests" --gtest_brief=1 --gtest_color=no > "$res/measure.txt" 2>&1
      echo "measure rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)  \] [0-9]' "$res/measure.txt" | tr '\n' ' ')" >> "$summary"
      timeout 400 mpirun -np "$ranks" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE "$bins/dist_test" --gtest_color=no > "$res/dist.txt" 2>&1
      echo "dist_test -np $ranks rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)  \] [0-9]' "$res/dist.txt" | tr '\n' ' ')" >> "$summary"
      grep -E '^\[  FAILED  \] [A-Z]|^\[  SKIPPED \] [A-Z]' "$res/dist.txt" "$res/measure.txt" | sort -u | head -20 >> "$summary"
      ;;
    sanitize)
      OUT=$res/engine SANITIZE_TIMEOUT=150 "$here/engine_check.sh" "$bins" sanitize sass > /dev/null 2>&1
      sed -n '/== memcheck/,$p' "$res/engine/summary.txt" >> "$summary"
      ;;
    bench)
      OUT=$res/bench "$here/bench_targets.sh" "$bins/ringmm" "$tag" > "$res/bench.txt" 2>&1
      echo "bench rc=$?" >> "$summary"
      sed -n '/== targets/,$p' "$res/bench.txt" >> "$summary"
      ;;
    summa)
      # shellcheck disable=SC2086
      OUT=$res/summa "$here/summa_scaling.sh" "$bins/ringmm" ${SUMMA_ARGS:-16384,32768 plus-times:f32,max-plus:f32 1x1 broadcast} > "$res/summa.txt" 2>&1
      sed -n '/^record file  /,$p' "$res/summa/summary.txt" >> "$summary"
      grep FAILED "$res/summa/summary.txt" >> "$summary"
      ;;
  esac
  tar -C "$res" -czf "${OUT:-/tmp}/device-$tag.tar.gz" .  # after every step: a run cut off at its limit keeps what it did
done
nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >> "$summary"
tar -C "$res" -czf "${OUT:-/tmp}/device-$tag.tar.gz" .
echo "================ summary ================"
cat "$summary"
