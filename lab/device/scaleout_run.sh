#!/usr/bin/env bash
# ringmm::dist on the GPUs of one host: builds the library with MPI and NCCL, then runs the named
# steps in the order given. Usage, repository root on the GPU machine:
#   lab/device/scaleout_run.sh <steps...>
# Steps:
#   build       configure and build /tmp/build-dist (CUDA 90a, MPI, NCCL): dist_device_test and the CLI.
#               The machine has no googletest: GTEST_SRC (default .carry/googletest) is built first.
#   tests       dist_device_test with 1, 2, 4, 8 ranks up to the GPUs present (one rank per GPU;
#               GTEST_FILTER narrows it), each run timed around mpirun
#   apsp-check  `ringmm apsp --bench N` on one GPU, then `mpirun ringmm apsp --summa --bench N` on each
#               multi-GPU grid; the distance and successor files must be the same bytes (N: APSP_CHECK_N,
#               default 16384)
#   apsp        lab/device/apsp_scaling.sh: the distributed solve's time per grid and size
#               (APSP_SIZES, default 16384,32768; APSP_GRIDS, default every grid of the GPUs present)
#   summa       lab/device/summa_scaling.sh with SUMMA_ARGS (sizes semirings grids variants), into
#               summa[-argmax][-$SUMMA_PART]
#   spread      the one-GPU product on each GPU alone, then on all of them at once (`ringmm summa`
#               1x1, resident, SPREAD_ARGS "n semiring:type", default "32768 plus-times:f32"): whether
#               the GPUs of the host differ, and whether they hold their rate when all of them work
#               (records in spread/, with the fields gpu and alongside)
#   defaults    `ringmm summa --resident` on every GPU with no --grid, --block or --variant: the grid,
#               panel width and variant it chooses, and its time (n: DEFAULTS_N, default 16384)
#   curve       the local products' rate curve for the scaling model: `ringmm bench` of max-plus and
#               plus-times gemm and min-plus argmax on panel shapes M×N×K (CURVE_SHAPES)
# Results land in /tmp/scaleout, packed after every step into $OUT/scaleout.tar.gz beside a copy
# of summary.txt (so that a call cut off keeps what it did); the summary is printed last.
set -uo pipefail
root=$(pwd)
out=/tmp/scaleout
mkdir -p "$out" "${OUT:=/tmp/scaleout-out}"
build=/tmp/build-dist
tool=$build/tools/ringmm
summary=$out/summary.txt
export PATH=/usr/local/cuda/bin:$PATH
# NCCL lives in the nvidia-nccl wheel of python3 on the GPU machines (libnccl.so.2 only).
nccl=$(python3 -c 'import nvidia.nccl as m; print(m.__path__[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl:+$nccl/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L | grep -c '^GPU')
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
note() { echo "$*" | tee -a "$summary"; }
note "$gpus x $device"

# The grids of the GPUs present with more than one rank.
multi_gpu_grids() {
  local grids=
  [ "$gpus" -ge 2 ] && grids+=" 1x2 2x1"
  [ "$gpus" -ge 4 ] && grids+=" 2x2 1x4 4x1"
  [ "$gpus" -ge 8 ] && grids+=" 2x4 4x2 1x8"
  echo $grids
}

step_build() {
  local gtest_src=${GTEST_SRC:-$root/.carry/googletest} start=$SECONDS
  cmake -S "$gtest_src" -B /tmp/gtest-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/tmp/gtest-prefix \
    > "$out/gtest.log" 2>&1 && cmake --build /tmp/gtest-build -j "$(nproc)" --target install >> "$out/gtest.log" 2>&1
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DRINGMM_ENABLE_CUDA=ON \
    -DRINGMM_ENABLE_MPI=ON -DRINGMM_ENABLE_BLAS=OFF -DRINGMM_BUILD_TESTS=ON -DRINGMM_BUILD_LAB=OFF \
    -DRINGMM_BUILD_EXAMPLES=OFF -DCMAKE_PREFIX_PATH=/tmp/gtest-prefix > "$out/configure-dist.log" 2>&1
  grep -E 'ringmm .*NCCL=' "$out/configure-dist.log"
  cmake --build "$build" -j "$(nproc)" --target dist_device_test ringmm-cli > "$out/build-dist.log" 2>&1
  local rc=$?
  note "build rc=$rc in $((SECONDS - start)) s"
  [ $rc -eq 0 ] || { grep -E "error|FAILED" "$out/build-dist.log" | head -20; exit 1; }
}

step_tests() {
  for ranks in 1 2 4 8; do
    [ "$ranks" -le "$gpus" ] || break
    local start=$SECONDS log=$out/dist-device-np$ranks.log
    timeout "${TESTS_TIMEOUT:-300}" mpirun -n "$ranks" --oversubscribe --bind-to none "$build/tests/dist/dist_device_test" \
      ${GTEST_FILTER:+--gtest_filter="$GTEST_FILTER"} > "$log" 2>&1
    note "dist_device_test np$ranks rc=$? in $((SECONDS - start)) s: $(grep -E '^\S*\[  (PASSED|FAILED|SKIPPED) ' "$log" | tr '\n' ' ')"
    grep -E "Failure|FAILED  \]" "$log" | head -10 | tee -a "$summary"
    # The slowest tests (rank 0's times), for the time budget of the multi-rank runs.
    grep -E '^\[       OK \]' "$log" | sed -E 's/.* ([^ ]+) \(([0-9]+) ms\)/\2 \1/' | sort -rn | head -6 | tee -a "$summary"
  done
}

step_apsp_check() {
  local n=${APSP_CHECK_N:-16384} dir=/tmp/apsp-check
  mkdir -p "$dir"
  "$tool" apsp --bench "$n" --backend cuda --out "$dir/one_d.npy" --next "$dir/one_n.npy" > "$out/apsp-check-one.log" 2>&1
  note "apsp check n=$n, one GPU: rc=$? $(grep -E '^time' "$out/apsp-check-one.log")"
  for grid in $(multi_gpu_grids); do
    local ranks=$(( ${grid%x*} * ${grid#*x} ))
    rm -f "$dir/many_d.npy" "$dir/many_n.npy"
    mpirun -n "$ranks" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE "$tool" apsp --bench "$n" --summa --grid "$grid" \
      --backend cuda --out "$dir/many_d.npy" --next "$dir/many_n.npy" > "$out/apsp-check-$grid.log" 2>&1
    local rc=$? verdict=
    for f in d n; do
      if cmp -s "$dir/one_$f.npy" "$dir/many_$f.npy"; then verdict+=" $f:same"; else verdict+=" $f:DIFFER"; fi
    done
    note "apsp check n=$n, $grid: rc=$rc$verdict $(grep -E '^time' "$out/apsp-check-$grid.log")"
  done
}

step_apsp() {
  OUT=$out/apsp APSP_PART=${APSP_PART:-run} "$root/lab/device/apsp_scaling.sh" "$tool" "${APSP_SIZES:-16384,32768}" \
    "${APSP_GRIDS:-1x1 $(multi_gpu_grids)}" | tee -a "$summary"
}

step_summa() {
  # shellcheck disable=SC2086
  OUT=$out/summa${SUMMA_ARGMAX:+-argmax}${SUMMA_PART:+-$SUMMA_PART} "$root/lab/device/summa_scaling.sh" "$tool" ${SUMMA_ARGS:-} | grep -E '^(\| |one run)|FAILED' | tee -a "$summary"
}

step_spread() {
  local args=(${SPREAD_ARGS:-32768 plus-times:f32}) dir=$out/spread
  local n=${args[0]} semiring=${args[1]%%:*} type=${args[1]##*:}
  mkdir -p "$dir"
  nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 500 \
    >> "$dir/gpu-samples.csv" 2>/dev/null &
  local sampler=$!
  one() {  # <gpu> <alongside>: one 1x1 run on that GPU, its record marked
    local record=$dir/spread_${semiring}_${type}_${n}_gpu$1_alongside$2.json
    CUDA_VISIBLE_DEVICES=$1 timeout 300 mpirun -n 1 --bind-to none -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES "$tool" summa \
      --size "$n" --semiring "$semiring" --type "$type" --grid 1x1 --block 1024 --backend cuda --resident \
      --reps "${SPREAD_REPS:-5}" --results "$record" > "$dir/gpu$1-alongside$2.log" 2>&1 ||
      { note "spread gpu $1 with $2 at once FAILED: $(tail -2 "$dir/gpu$1-alongside$2.log" | tr '\n' ' ')"; return; }
    python3 -c "import json, sys; p = sys.argv[1]; d = json.load(open(p)); rs = d if isinstance(d, list) else [d]
for r in rs: r.update(gpu=int(sys.argv[2]), alongside=int(sys.argv[3]))
json.dump(d, open(p, 'w'))" "$record" "$1" "$2"
    note "spread $semiring $type n=$n gpu $1 with $2 at once: $(grep -E '^(time|rate) ' "$dir/gpu$1-alongside$2.log" | tr -s ' ' | tr '\n' ' ')"
  }
  for ((g = 0; g < gpus; ++g)); do one "$g" 1; done
  for ((g = 0; g < gpus; ++g)); do one "$g" "$gpus" & done
  wait $(jobs -p | grep -v "^$sampler$")
  kill "$sampler" 2> /dev/null
}

step_defaults() {
  local log=$out/defaults.log
  timeout 200 mpirun -n "$gpus" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE "$tool" summa \
    --size "${DEFAULTS_N:-16384}" --semiring max-plus --resident --reps 3 > "$log" 2>&1
  note "defaults np$gpus rc=$?: $(grep -E '^(grid|backend|rate) ' "$log" | tr -s ' ' | tr '\n' ' ')"
}

step_curve() {
  local shapes=${CURVE_SHAPES:-8192x8192x1024,16384x16384x1024,32768x32768x1024,16384x16384x256,16384x16384x512,32768x16384x1024}
  "$tool" bench --backend cuda --semiring max-plus,plus-times --type f32 --shapes "$shapes" --reps 3 \
    --out "$out/curve-gemm.json" > "$out/curve-gemm.log" 2>&1
  note "curve gemm rc=$?"
  "$tool" bench --backend cuda --semiring min-plus --type f32 --product argmax --shapes "$shapes" --reps 3 \
    --out "$out/curve-argmax.json" > "$out/curve-argmax.log" 2>&1
  note "curve argmax rc=$?"
  grep -hE "ringmm " "$out"/curve-*.log | head -30 | tee -a "$summary"
}

for step in "$@"; do
  case $step in
    build) step_build ;;
    tests) step_tests ;;
    apsp-check) step_apsp_check ;;
    apsp) step_apsp ;;
    summa) step_summa ;;
    spread) step_spread ;;
    defaults) step_defaults ;;
    curve) step_curve ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
  tar czf "$OUT/scaleout.tar.gz" -C "$out" . && cp "$summary" "$OUT/summary.txt"
done
echo "== summary =="
cat "$summary"
