#!/usr/bin/env bash
# One device run for the measurement code (tools/measure): the measure tests, a ladder subset under
# compute-sanitizer (memcheck, racecheck), then `ringmm microbench` (ceilings for every semiring
# and type) and `ringmm bench --ladder` (the kernel ladder beside the engine, cuBLAS and the
# ceiling). Usage, repository root on the GPU machine:
#   scripts/gpu/ladder_run.sh [build-dir] [steps...]   steps: tests sanitize bench (default all)
# The build dir is configured and built on the development machine (-DCMAKE_CUDA_ARCHITECTURES=90a).
# Carry either the two executables or, when they exceed the carry limit, <build>/carry holding
# tools.tar.xz (measure_tests and ringmm, stripped) and the runtime libraries the device image may
# lack (libgomp.so.1).
# Full outputs go to $OUT (or /tmp/ladder-run); a summary is printed last.
set -uo pipefail
build=${1:-build-gpu-tools}
shift || true
steps=${*:-tests sanitize bench}
out=${OUT:-/tmp/ladder-run}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/$build/carry:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
tests=$build/tests/measure/measure_tests
tool=$build/tools/ringmm
if [ -f "$build/carry/tools.tar.xz" ]; then
  tar -C "$build/carry" -xJf "$build/carry/tools.tar.xz"
  tests=$build/carry/measure_tests
  tool=$build/carry/ringmm
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
      timeout 120 "$tool" microbench --out "$out/microbench.json" > "$out/bench.log" 2>&1
      echo "microbench rc=$?" | tee -a "$summary"
      timeout 180 "$tool" bench --ladder --shapes 1024,4096 --reps 10 --out "$out/ladder.json" >> "$out/bench.log" 2>&1
      echo "ladder rc=$?" | tee -a "$summary"
      ;;
  esac
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$summary"
echo "== summary =="; cat "$summary"
echo "== bench =="; cat "$out/bench.log" 2>/dev/null
