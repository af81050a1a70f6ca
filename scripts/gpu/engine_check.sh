#!/usr/bin/env bash
# One device run for the CUDA engine: SASS evidence, the GPU tests, and a subset under
# compute-sanitizer. Usage (repository root, on the GPU machine):
#   scripts/gpu/engine_check.sh [bin-dir] [steps...]   steps: sass tests sanitize (default all)
# bin-dir holds cuda_engine_test (the build's tests/cuda, or an unpacked bins.tar.xz). The engine's
# timings come from `ringmm bench`: scripts/gpu/bench_targets.sh and config_sweep.sh.
# Full outputs go to $OUT (or /tmp/engine-check); a summary is printed last.
set -uo pipefail
bins=${1:-build-gpu-engine/tests/cuda}
shift || true
steps=${*:-sass tests sanitize}
out=${OUT:-/tmp/engine-check}
mkdir -p "$out"
test_bin=$bins/cuda_engine_test
summary=$out/summary.txt
: > "$summary"

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$summary"

# Count, per gemm kernel, the opcodes that show which instructions its inner loop uses.
sass_counts() {
  awk -v ops="VIADDMNMX,VIMNMX,IMNMX,FMNMX,FADD,FSETP,FSEL,DMNMX,DADD,DSETP,FFMA,DFMA,LDS,LDG,STL,LDL" '
    BEGIN { n = split(ops, op, ",") }
    /Function :/ { fn = $3 }
    fn ~ /gemm_kernel/ { for (i = 1; i <= n; i++) if (index($0, " " op[i]) > 0) cnt[fn, op[i]]++ }
    END { for (k in cnt) { split(k, p, SUBSEP); printf "%s %d %s\n", p[2], cnt[k], p[1] } }' "$1" | sort -k3,3 -k1,1 | c++filt
}

for step in $steps; do
  case $step in
    sass)
      cuobjdump -sass "$test_bin" > /tmp/engine.sass
      sass_counts /tmp/engine.sass > "$out/sass_counts.txt"
      {
        echo "== SASS opcode counts of the 128x128 pad kernels (opcode count kernel) =="
        grep "Tile<128, 128" "$out/sass_counts.txt" | grep "(ringmm::cuda_detail::Border)0" |
          sed -e 's/ringmm::cuda_detail::gemm_kernel<ringmm::\([A-Za-z]*<[a-z0-9:_]*>\).*/\1/'
        echo "== sample =="; grep -m 2 VIADDMNMX /tmp/engine.sass
      } >> "$summary"
      ;;
    tests)
      timeout ${TEST_TIMEOUT:-300} "$test_bin" --gtest_brief=1 > "$out/tests.txt" 2>&1
      echo "== tests (rc $?) ==" >> "$summary"; tail -25 "$out/tests.txt" >> "$summary"
      ;;
    sanitize)
      filter='CudaEngine/3.*:CudaEngine/5.SymmetricProductComputesOneTriangle:CudaEngine/6.Batched:CudaEngineRefusals.*'
      timeout ${SANITIZE_TIMEOUT:-150} compute-sanitizer --tool memcheck --error-exitcode 9 "$test_bin" --gtest_brief=1 --gtest_filter="$filter" > "$out/memcheck.txt" 2>&1
      echo "== memcheck (rc $?) ==" >> "$summary"; tail -6 "$out/memcheck.txt" >> "$summary"
      timeout ${SANITIZE_TIMEOUT:-150} compute-sanitizer --tool racecheck --error-exitcode 9 "$test_bin" --gtest_brief=1 --gtest_filter='CudaEngine/3.EveryConfigurationAndBorderMatchesReference:CudaEngine/13.Batched' > "$out/racecheck.txt" 2>&1
      echo "== racecheck (rc $?) ==" >> "$summary"; tail -6 "$out/racecheck.txt" >> "$summary"
      ;;
  esac
done
echo "================ summary ================"
cat "$summary"
