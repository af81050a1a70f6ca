#!/usr/bin/env bash
# One device run for the GPU tools: the gputools tests, a ladder subset under compute-sanitizer
# (memcheck, racecheck), then ringmm-ladder-bench (microbenchmark ceilings for every semiring and
# type, the kernel ladder beside the engine and cuBLAS). Usage, repository root on the GPU machine:
#   scripts/gpu/ladder_run.sh [build-dir] [steps...]   steps: tests sanitize bench (default all)
# The build dir is configured and built on the development machine (-DCMAKE_CUDA_ARCHITECTURES=90a).
# Carry either the two executables or, when they exceed the carry limit, <build>/carry holding
# tools.tar.xz (both executables, stripped) and the runtime libraries the device image may lack
# (libgomp.so.1).
# Full outputs go to $OUT (or /tmp/ladder-run); a summary is printed last.
set -uo pipefail
build=${1:-build-gpu-tools}
shift || true
steps=${*:-tests sanitize bench}
out=${OUT:-/tmp/ladder-run}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/$build/carry:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
tests=$build/tests/gputools/gputools_tests
bench=$build/src/cuda/tools/ringmm-ladder-bench
if [ -f "$build/carry/tools.tar.xz" ]; then
  tar -C "$build/carry" -xJf "$build/carry/tools.tar.xz"
  tests=$build/carry/gputools_tests
  bench=$build/carry/ringmm-ladder-bench
fi
summary=$out/summary.txt
: > "$summary"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$summary"

for step in $steps; do
  case $step in
    tests)
      timeout 200 "$tests" > "$out/tests.log" 2>&1
      echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)  \] [0-9]' "$out/tests.log" | tr '\n' ' ')" | tee -a "$summary"
      grep -E 'mismatched|wrote outside|^\[  FAILED  \] [A-Z]' "$out/tests.log" | sort -u | head -12 | cut -c1-200 | tee -a "$summary"
      ;;
    sanitize)
      timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$tests" \
        --gtest_filter='LadderTest/3.*:LadderTest/6.*:LadderTest/13.*' > "$out/memcheck.log" 2>&1
      echo "memcheck (f32/i16x2/or-and ladder tests) rc=$? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)" | tee -a "$summary"
      timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 "$tests" \
        --gtest_filter='LadderTest/3.OddAndRectangularShapes:LadderTest/4.Batched' > "$out/racecheck.log" 2>&1
      echo "racecheck (f32/f64 ladder tests) rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/racecheck.log" | tail -1)" | tee -a "$summary"
      ;;
    bench)
      timeout 240 "$bench" --sizes 1024,4096 --reps 10 --microbench-json "$out/microbench.json" \
        --ladder-json "$out/ladder.json" > "$out/bench.log" 2>&1
      echo "bench rc=$?" | tee -a "$summary"
      ;;
  esac
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$summary"
echo "== summary =="; cat "$summary"
echo "== bench =="; cat "$out/bench.log" 2>/dev/null
