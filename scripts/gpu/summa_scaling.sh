#!/usr/bin/env bash
# Strong scaling of `ringmm summa` on one host's GPUs (issue 4, item 7); docs/distributed.md has
# the commands of the recorded runs.
#
# Usage, repository root on the GPU machine:
#   scripts/gpu/summa_scaling.sh [tool] [sizes] [semirings] [grids] [variants]
#     tool       a ringmm executable built with CUDA, MPI and NCCL, or a build dir holding
#                tools/ringmm (configured and built here when missing)
#     sizes      comma list, default 16384,32768
#     semirings  comma list of semiring:type, default plus-times:f32,max-plus:f32
#     grids      comma list of PRxPC, default 1x1,1x2,2x1 (1x1 is the baseline of the efficiency)
#     variants   comma list, default broadcast,ring (1x1 runs broadcast only: it moves no panels)
# One record per run goes to $OUT (or /tmp/summa-scaling) as summa_<semiring>_<type>_<n>_<grid>_<variant>.json,
# and summary.txt lists time, rate and efficiency E = T(1x1) / (P · T(grid)) per run.
set -uo pipefail
build=${1:-build-summa}
reps=${SUMMA_REPS:-5}
sizes=${2:-16384,32768}
semirings=${3:-plus-times:f32,max-plus:f32}
grids=${4:-1x1,1x2,2x1}
variants=${5:-broadcast,ring}
out=${OUT:-/tmp/summa-scaling}
mkdir -p "$out"
summary=$out/summary.txt

# NCCL lives in the nvidia-nccl wheel of python3 on the GPU machines (libnccl.so.2 only).
nccl=$(python3 -c 'import nvidia.nccl as m; print(m.__path__[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl:+$nccl/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0   # no NVLink multicast on these machines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tool=$build/tools/ringmm
[ -f "$build" ] && [ -x "$build" ] && tool=$build
if [ ! -x "$tool" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRINGMM_ENABLE_CUDA=ON -DRINGMM_ENABLE_MPI=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90a -DRINGMM_BUILD_TESTS=OFF -DRINGMM_BUILD_EXAMPLES=OFF > "$out/configure.log" 2>&1 ||
    { echo "configure failed"; tail -20 "$out/configure.log"; exit 1; }
  grep -E 'ringmm .*NCCL=' "$out/configure.log"
  ninja -C "$build" ringmm-cli > "$out/build.log" 2>&1 || { echo "build failed"; tail -30 "$out/build.log"; exit 1; }
fi

nvidia-smi --query-gpu=index,name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$summary"
nvidia-smi topo -m >> "$summary" 2>&1

for pair in ${semirings//,/ }; do
  semiring=${pair%%:*}
  type=${pair##*:}
  for n in ${sizes//,/ }; do
    for grid in ${grids//,/ }; do
      ranks=$(( ${grid%x*} * ${grid#*x} ))
      for variant in ${variants//,/ }; do
        [ "$grid" = 1x1 ] && [ "$variant" != broadcast ] && continue
        record=$out/summa_${semiring}_${type}_${n}_${grid}_${variant}.json
        # --bind-to none: each rank drives one GPU (cudaSetDevice(node-local rank)) and uses its own CPU threads.
        timeout 400 mpirun -np "$ranks" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
          "$tool" summa --size "$n" --semiring "$semiring" --type "$type" --grid "$grid" --block 1024 \
          --variant "$variant" --backend cuda --reps "$reps" --results "$record" > "$out/run.log" 2>&1
        rc=$?
        echo "== $semiring $type n=$n grid=$grid $variant rc=$rc" >> "$out/runs.log"
        cat "$out/run.log" >> "$out/runs.log"
        [ $rc -ne 0 ] && { echo "$semiring $type n=$n $grid $variant FAILED rc=$rc: $(tail -3 "$out/run.log" | tr '\n' ' ')" | tee -a "$summary"; }
      done
    done
  done
done

# Efficiency against the 1x1 record of the same semiring, type and size.
python3 "$(dirname "${BASH_SOURCE[0]}")/../../bench/summa_table.py" --one-run "$out"/summa_*.json | tee -a "$summary"
echo "== summary =="; cat "$summary"
