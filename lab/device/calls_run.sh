#!/usr/bin/env bash
# Issue 29's call cost and host costs on the GPU machine, in steps (one build in /tmp/build-calls
# that later calls reuse while the machine is warm).
# Usage, repository root on the GPU machine:
#   lab/device/calls_run.sh build tests    # native build (tests, CLI, Python), ctest -L gpu
#   lab/device/calls_run.sh pytest bench   # the CUDA-graph pytest, then the timings below
# Steps:
#   build   configure and build (googletest from GTEST_SRC, default .carry/googletest); BUILD_TARGETS
#           (space-separated) builds only those
#   tests   ctest -L gpu (CTEST_REGEX: only the tests it matches)
#   pytest  tests/python/test_torch_graphs.py, test_errors.py, test_matmul.py and test_narrow.py on the build's extension
#           (PYTEST_FILES: others, e.g. tests/python for the whole suite)
#   signknown  the sign-known products: their test, VIMNMX3 in the SASS, 8192^3..2048^3 on generic
#              and on sign-known data
#   clibuild   the CLI alone (for profile)
#   profile    sign-known 4096^3 with each heuristic tile, and ncu's scheduler, warp-state and
#              instruction sections of the generic and the sign-known kernel
#   breakdown  lab/harnesses/call_cost.cu: the host time of each step of a small call
#   narrow  cuda_narrow_test, then ringmm bench of bf16/f16 beside f32 and i8 beside i32 (8192^3, 4096^3)
#   largeab  lab/harnesses/large_kernel_ab.cu: the large kernel's tile variants on the sign-known and
#            the generic f32 max-plus update (LARGEAB_EDGES: the squares), checked against the
#            engine's tile and timed; needs no build step
#   argmaxab  lab/harnesses/argmax_max_ab.cu: the argmax max kernel's tiles and blocks per SM on
#             min-plus data >= 0 (ARGMAXAB_SHAPES: MxNxK or N each), sign-known and generic, checked
#             against the library's tile and timed; needs no build step
#   largeprofile  ncu's stall reasons of the largeab launches numbered in LARGEPROFILE_LAUNCHES (at
#                 one edge, variant v's generic launches start at 2·v·(reps + 1), its sign-known ones
#                 reps + 1 later; 21 reps below 8192); needs the largeab step
#   smallprofile  ncu of the small kernel at 1000^3 (what bounds the mid sizes)
#   smallab  lab/harnesses/small_kernel_ab.cu (the small kernel's tile variants, checked against the
#            default and timed), their SASS, ncu's stall reasons at 1000^3; needs no build step.
#            SMALLAB_BEFORE=<include dir>: the same harness built on those headers too, timed after;
#            SMALLAB_NCU=0: no ncu
#   fringesweep  ringmm bench of f32 max-plus squares (SWEEP_SHAPES) on each large tile padded, on
#                the small kernel's T = 64 (SWEEP_CONFIGS: others), and on the heuristic's choice
#   midtune ringmm tune of f32 max-plus on the mid sizes (TUNE_CLASSES), into a cache of its own:
#           every candidate's rate, the five fastest of each shape printed
#   bench   ringmm bench --calls (host cost per call, one stream, a CUDA graph) on small shapes;
#           host -> host 4096^3 f32 and i32 (ms+xfer); ringmm apsp --bench 16384 timed whole
# Everything lands in $OUT/calls.tar.gz (after every step); the summary is printed last.
set -uo pipefail
root=$(pwd)
out=${OUT:-/tmp}
res=/tmp/calls
build=/tmp/build-calls
mkdir -p "$res"
summary=$res/summary.txt
export PATH=/usr/local/cuda/bin:$PATH
note() { echo "$*" | tee -a "$summary"; }
pack() { tar -czf "$out/calls.tar.gz" -C /tmp calls; }
configure() {  # <cmake options...>: the native 90a build in $build, without BLAS, MPI, the lab, examples
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DRINGMM_ENABLE_CUDA=ON -DRINGMM_ENABLE_BLAS=OFF -DRINGMM_ENABLE_MPI=OFF -DRINGMM_BUILD_LAB=OFF \
    -DRINGMM_BUILD_EXAMPLES=OFF "$@" > "$res/configure.log" 2>&1
}
# Builds lab/harnesses/<source>.cu into /tmp/<binary> (nvcc alone: no build step needed) and runs it
# with the remaining arguments; its output goes to $res/<binary>.log and to the summary.
run_harness() {
  local source=$1 binary=$2 label=$3
  shift 3
  nvcc -std=c++20 -O3 -arch="${CUDA_ARCH:-sm_90a}" --expt-relaxed-constexpr -I "$root/include" -o "/tmp/$binary" \
    "$root/lab/harnesses/$source.cu" > "$res/$binary-build.log" 2>&1 && "/tmp/$binary" "$@" > "$res/$binary.log" 2>&1
  note "$label rc=$?"
  tee -a "$summary" < "$res/$binary.log"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$summary"
for step in "$@"; do
  start=$SECONDS
  case $step in
    build)
      gtest_src=${GTEST_SRC:-$root/.carry/googletest}
      [ -d /tmp/gtest-prefix ] || { cmake -S "$gtest_src" -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX=/tmp/gtest-prefix > "$res/gtest.log" 2>&1 &&
        cmake --build /tmp/gtest-build -j "$(nproc)" --target install >> "$res/gtest.log" 2>&1; }
      configure -DRINGMM_BUILD_TESTS=ON -DRINGMM_BUILD_PYTHON=ON -DCMAKE_PREFIX_PATH=/tmp/gtest-prefix
      cmake --build "$build" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} > "$res/build.log" 2>&1
      note "build rc=$? in $((SECONDS - start)) s"
      ;;
    tests)
      (cd "$build" && ctest -L gpu -j 4 --timeout 300 --output-on-failure ${CTEST_REGEX:+-R "$CTEST_REGEX"} \
        > "$res/ctest-gpu.log" 2>&1)
      note "ctest -L gpu rc=$? in $((SECONDS - start)) s: $(grep -E 'tests passed|tests failed' "$res/ctest-gpu.log")"
      grep -E "\*\*\*Failed|Timeout" "$res/ctest-gpu.log" | head -10 | tee -a "$summary"
      ;;
    pytest)
      pkg=/tmp/calls-package
      rm -rf "$pkg" && mkdir -p "$pkg" && cp -r "$root/python/ringmm" "$pkg/" &&
        cp "$(find "$build" -name '_core*.so' | head -1)" "$pkg/ringmm/"
      PYTHONPATH=$pkg RINGMM_CLI=$build/tools/ringmm timeout 300 python3 -m pytest -q -p no:cacheprovider \
        ${PYTEST_FILES:-tests/python/test_torch_graphs.py tests/python/test_errors.py tests/python/test_matmul.py tests/python/test_narrow.py} \
        > "$res/pytest.log" 2>&1
      note "pytest rc=$? in $((SECONDS - start)) s: $(tail -1 "$res/pytest.log")"
      grep -E "^(FAILED|ERROR)" "$res/pytest.log" | head -10 | tee -a "$summary"
      ;;
    clibuild)
      configure -DRINGMM_BUILD_TESTS=OFF -DRINGMM_BUILD_PYTHON=OFF
      cmake --build "$build" -j "$(nproc)" --target ringmm-cli > "$res/build.log" 2>&1
      note "CLI build rc=$? in $((SECONDS - start)) s"
      ;;
    profile)
      cli=$build/tools/ringmm
      for config in b64x64_k16_t4x4_blk b128x128_k8_t8x8_bcyc; do
        "$cli" bench --backend cuda --semiring max-plus --type f32 --shapes 4096 --reps 5 --sign-known --config "$config" \
          --border pad --out "$res/profile-$config.json" > "$res/profile-$config.log" 2>&1
        note "sign-known 4096^3 --config $config rc=$?: $(grep -E '^\[' "$res/profile-$config.log" | cut -c1-110)"
      done
      pack
      for flag in "" --sign-known; do
        timeout 120 ncu -k regex:gemm_kernel -c 1 --section SchedulerStats --section WarpStateStats \
          --section ComputeWorkloadAnalysis --section InstructionStats --csv --page details \
          "$cli" bench --backend cuda --semiring max-plus --type f32 --shapes 4096 --reps 1 $flag \
          > "$res/ncu${flag:+-known}.csv" 2> "$res/ncu${flag:+-known}.err"
        note "ncu ${flag:-generic} rc=$?"
        grep -E "Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Stall|Executed Ipc A|ALU|FMA|Warp Cycles Per Issued" \
          "$res/ncu${flag:+-known}.csv" | awk -F'","' '{print $(NF-2) " = " $NF}' | tr -d '"' | head -20 | tee -a "$summary"
      done
      ;;
    breakdown)
      nvcc -O3 -std=c++20 -arch=sm_90a --expt-relaxed-constexpr -I "$root/include" -I "$build/include" \
        "$root/lab/harnesses/call_cost.cu" "$build/src/libringmm.a" -Xcompiler -fopenmp -lgomp -ldl \
        -o /tmp/call_cost > "$res/call_cost-build.log" 2>&1 && /tmp/call_cost > "$res/call_cost.log" 2>&1
      note "call cost breakdown rc=$?"
      cat "$res/call_cost.log" | tee -a "$summary"
      ;;
    signknown)
      "$build/tests/cuda/cuda_sign_known_test" --gtest_brief=1 > "$res/sign-known-test.log" 2>&1
      note "cuda_sign_known_test rc=$?: $(grep -E 'PASSED|FAILED' "$res/sign-known-test.log" | tr '\n' ' ')"
      grep -B2 -A3 "Failure" "$res/sign-known-test.log" | head -20 | tee -a "$summary"
      for pair in max_plus_f32 min_plus_f32; do
        obj=$(find "$build/src" -name "$pair.cu.o" | head -1)
        note "$pair SASS: VIMNMX3 $(cuobjdump -sass "$obj" | grep -c 'VIMNMX3'), FMNMX $(cuobjdump -sass "$obj" | grep -c 'FMNMX')"
      done
      for flag in "" --sign-known; do
        "$build/tools/ringmm" bench --backend cuda --semiring max-plus,min-plus --type f32 --shapes 8192,4096,2048 \
          --reps 5 $flag --out "$res/sign${flag:+-known}.json" > "$res/sign${flag:+-known}.log" 2>&1
        note "bench f32 ${flag:-generic data} rc=$?"
        grep -E "^\[" "$res/sign${flag:+-known}.log" | cut -c1-200 | tee -a "$summary"
      done
      ;;
    narrow)
      "$build/tests/cuda/cuda_narrow_test" --gtest_brief=1 > "$res/narrow-test.log" 2>&1
      note "cuda_narrow_test rc=$?: $(grep -E 'PASSED|FAILED' "$res/narrow-test.log" | tr '\n' ' ')"
      grep -B2 -A6 "Failure" "$res/narrow-test.log" | head -30 | tee -a "$summary"
      "$build/tools/ringmm" bench --backend cuda --semiring max-plus,min-plus --type f32,bf16,f16 --shapes 8192,4096 \
        --reps 5 --out "$res/narrow-f.json" > "$res/narrow-f.log" 2>&1
      note "bench bf16/f16 rc=$?"
      grep -E "^\[|over " "$res/narrow-f.log" | cut -c1-100 | tee -a "$summary"
      "$build/tools/ringmm" bench --backend cuda --semiring max-plus,min-plus --type i32,i8 --shapes 8192,4096 \
        --reps 5 --out "$res/narrow-i.json" > "$res/narrow-i.log" 2>&1
      note "bench i8 rc=$?"
      grep -E "^\[|over " "$res/narrow-i.log" | cut -c1-100 | tee -a "$summary"
      ;;
    bench)
      cli=$build/tools/ringmm
      "$cli" bench --backend cuda --semiring max-plus --type f32 --shapes 1x1x1,64,256,512,1000 --calls 10000 \
        --reps 20 --out "$res/calls-f32.json" > "$res/calls-f32.log" 2>&1
      note "calls f32 rc=$?"
      grep -E "^\[|calls:" "$res/calls-f32.log" | cut -c1-190 | tee -a "$summary"
      "$cli" bench --backend cuda --semiring max-plus,plus-times,log-plus --type f32,i32 --shapes 64 --calls 10000 \
        --reps 20 --out "$res/calls-routes.json" > "$res/calls-routes.log" 2>&1
      note "calls routes rc=$?"
      grep -E "calls:" "$res/calls-routes.log" | cut -c1-190 | tee -a "$summary"
      "$cli" bench --backend cuda --semiring max-plus --type i32 --shapes 64 --calls 10000 --trust-inputs \
        --reps 20 --out "$res/calls-trusted.json" > "$res/calls-trusted.log" 2>&1
      note "calls i32 trusted rc=$?"
      grep -E "calls:" "$res/calls-trusted.log" | cut -c1-190 | tee -a "$summary"
      "$cli" bench --backend cuda --semiring max-plus --type f32,i32 --shapes 4096 --reps 5 \
        --out "$res/host-4096.json" > "$res/host-4096.log" 2>&1
      note "host->host 4096 rc=$?"
      grep -E "^\[" "$res/host-4096.log" | cut -c1-110 | tee -a "$summary"
      /usr/bin/time -f "whole command %e s" "$cli" apsp --bench 16384 > "$res/apsp-16384.log" 2>&1
      note "apsp 16384 rc=$?: $(grep -E '^time|whole command' "$res/apsp-16384.log" | tr '\n' ' ')"
      ;;
    smallprofile)
      # ncu's scheduler, warp-state and instruction sections of the small kernel at 1000^3 (default route)
      timeout 120 ncu -k regex:small_kernel -c 1 --section SchedulerStats --section WarpStateStats \
        --section ComputeWorkloadAnalysis --section InstructionStats --section Occupancy --csv --page details \
        "$build/tools/ringmm" bench --backend cuda --semiring max-plus --type f32 --shapes 1000 --reps 1 \
        > "$res/ncu-small.csv" 2> "$res/ncu-small.err"
      note "ncu small_kernel 1000^3 rc=$?"
      grep -E "Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Stall|Executed Ipc A|ALU|FMA|Achieved Occupancy|Warp Cycles Per Issued" \
        "$res/ncu-small.csv" | awk -F'","' '{print $(NF-2) " = " $NF}' | tr -d '"' | head -24 | tee -a "$summary"
      ;;
    largeab)
      run_harness large_kernel_ab large_ab "large kernel A/B" ${LARGEAB_EDGES:-}
      ;;
    argmaxab)
      run_harness argmax_max_ab argmax_ab "argmax max kernel A/B" ${ARGMAXAB_SHAPES:-}
      ;;
    largeprofile)
      for launch in ${LARGEPROFILE_LAUNCHES:-0 22}; do
        timeout 120 ncu -k regex:gemm_kernel --launch-skip "$launch" -c 1 --metrics \
          "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,gpu__time_duration.sum" \
          /tmp/large_ab ${LARGEAB_EDGES:-4096} > "$res/ncu-large-$launch.txt" 2>&1
        note "ncu launch $launch rc=$?: $(grep -E '^\s+(smsp__inst_executed.sum|smsp__issue_active|sm__warps_active|sm__inst_executed_pipe|gpu__time)' "$res/ncu-large-$launch.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
        grep -E "stalled_" "$res/ncu-large-$launch.txt" | awk '{v=$NF; if (v+0 >= 0.1) {sub("smsp__average_warps_issue_stalled_",""); sub("_per_issue_active.ratio",""); printf "%s=%s ", $1, v}}' | tee -a "$summary"
        echo | tee -a "$summary"
      done
      ;;
    smallab)
      # the small kernel's tile variants (lab/harnesses/small_kernel_ab.cu, nvcc alone: no build
      # step needed), their SASS, and ncu's stall reasons of each variant's first launch at 1000^3
      run_harness small_kernel_ab small_ab "small kernel A/B"
      if [ -n "${SMALLAB_BEFORE:-}" ]; then  # the same harness on another tree's headers (a commit before)
        nvcc -std=c++20 -O3 -arch="${CUDA_ARCH:-sm_90a}" --expt-relaxed-constexpr -I "$SMALLAB_BEFORE" \
          -o /tmp/small_ab_before "$root/lab/harnesses/small_kernel_ab.cu" > "$res/small_ab_before-build.log" 2>&1 &&
          /tmp/small_ab_before > "$res/small_ab_before.log" 2>&1
        note "small kernel A/B on $SMALLAB_BEFORE rc=$?"
        tee -a "$summary" < "$res/small_ab_before.log"
      fi
      cuobjdump -sass /tmp/small_ab > "$res/small_ab.sass" 2>&1
      variants=$(grep -c "^1000^3" "$res/small_ab.log")
      [ "${SMALLAB_NCU:-1}" = 0 ] && variants=0  # the timings alone
      for ((v = 0; v < variants; v++)); do  # each variant launches once to check, then 60 times
        timeout 60 ncu -k regex:small_kernel --launch-skip $((v * 61)) -c 1 --metrics \
          "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,gpu__time_duration.sum" \
          /tmp/small_ab > "$res/ncu-ab-$v.txt" 2>&1
        note "ncu variant $v rc=$?: $(grep -E '^\s+(smsp__inst_executed.sum|smsp__issue_active|sm__warps_active)' "$res/ncu-ab-$v.txt" | awk '{print $1"="$NF}' | tr '\n' ' ')"
        grep -E "stalled_" "$res/ncu-ab-$v.txt" | awk '{v=$NF; if (v+0 >= 0.1) {sub("smsp__average_warps_issue_stalled_",""); sub("_per_issue_active.ratio",""); printf "%s=%s ", $1, v}}' | tee -a "$summary"
        echo | tee -a "$summary"
      done
      ;;
    fringesweep)
      # the two large tiles, padded, on squares whose ragged fringe differs between them (the wave
      # model's choice at 2000^3 against the 64x64 tile), and the small kernel's T = 64
      # (SWEEP_CONFIGS: others)
      for config in ${SWEEP_CONFIGS:-b64x64_k16_t4x4_blk b128x128_k8_t8x8_bcyc small64}; do
        "$build/tools/ringmm" bench --backend cuda --semiring max-plus --type f32 --reps 10 --config "$config" \
          --border pad --shapes ${SWEEP_SHAPES:-1500,2000,2200,2500,3000,3500,4000,4097,6000} \
          --out "$res/sweep-$config.json" > "$res/sweep-$config.log" 2>&1
        note "sweep $config rc=$?"
        grep -E "^\[" "$res/sweep-$config.log" | cut -c1-120 | tee -a "$summary"
      done
      "$build/tools/ringmm" bench --backend cuda --semiring max-plus --type f32 --reps 10 \
        --shapes ${SWEEP_SHAPES:-1500,2000,2200,2500,3000,3500,4000,4097,6000} \
        --out "$res/sweep-heuristic.json" > "$res/sweep-heuristic.log" 2>&1
      note "sweep heuristic rc=$?"
      grep -E "^\[" "$res/sweep-heuristic.log" | cut -c1-120 | tee -a "$summary"
      ;;
    midtune)
      "$build/tools/ringmm" tune --semiring max-plus --type f32 --reps 20 --out "$res/tune-cache.json" \
        --classes "${TUNE_CLASSES:-256x256x256,512x512x512,1000x1000x1000,2000x2000x2000,2048x128x128}" \
        > "$res/tune.log" 2>&1
      note "tune rc=$? in $((SECONDS - start)) s (the five fastest candidates of each shape, then tune's table)"
      python3 - "$res/tune.log" <<'PY' | tee -a "$summary"
import re, sys
shape, rows = None, {}
for line in open(sys.argv[1]):
    if m := re.match(r"(\S+ \S+ (\S+)): \d+ candidates; heuristic (.*)", line):
        shape = m.group(2); rows[shape] = [("heuristic: " + m.group(3), None)]
    elif (m := re.match(r"\s+\[\d+/\d+\] (.*): ([\d.]+) Tupd/s", line)) and shape:
        rows[shape].append((m.group(1), float(m.group(2))))
for shape, cands in rows.items():
    best = sorted((c for c in cands if c[1] is not None), key=lambda c: -c[1])[:5]
    print(shape, "|", cands[0][0], "|", "; ".join(f"{c} {r:.2f}" for c, r in best))
PY
      sed -n '/^class (power-of-two/,$p' "$res/tune.log" | tee -a "$summary"
      ;;
    *) note "unknown step $step" ;;
  esac
  pack
done
echo "==== summary"
cat "$summary"
