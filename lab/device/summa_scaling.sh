#!/usr/bin/env bash
# Strong and weak scaling of `ringmm summa` on one host's GPUs (issue 4, item 7; issue 15 for 4 and 8 GPUs);
# docs/distributed.md has the commands of the recorded runs.
#
# Usage, repository root on the GPU machine:
#   lab/device/summa_scaling.sh [tool] [sizes] [semirings] [grids] [variants]
#     tool       a ringmm executable built with CUDA, MPI and NCCL, or a build dir holding
#                tools/ringmm (configured and built here when missing)
#     sizes      comma list, default 16384,32768; weak:N is weak scaling from N: each grid of P
#                ranks runs n = N·√P rounded to the block (1024), so that every GPU holds about N²
#                elements of each matrix, and its record carries weak_base N (lab/reports/summa_table.py
#                measures it against the 1x1 run of N)
#     semirings  comma list of semiring:type, default plus-times:f32,max-plus:f32
#     grids      comma list of PRxPC (1x1 is the baseline of the efficiency); default: every grid of
#                1x1; 1x2,2x1; 2x2,1x4; 2x4,4x2,1x8 that the GPUs of this host allow. A grid that
#                needs more ranks than there are GPUs is skipped with a note.
#     variants   comma list, default broadcast,ring (1x1 runs once, as broadcast: it moves no panels)
# SUMMA_RESIDENT=1 (the default) runs `ringmm summa --resident`: A, B and C stay on the devices, and
# each record holds the product's time (seconds) and the one-time distribution to the devices
# (distribution_seconds) apart; SUMMA_RESIDENT=0 stages the host matrices in each call, as before.
# SUMMA_ARGMAX=1 times the argmax SUMMA (`--argmax`; selecting semirings only).
# SUMMA_BLOCK (default 1024) is the panel width; records of another block carry _b<block> in their names.
# One record per run goes to $OUT (or /tmp/summa-scaling) as summa_<semiring>_<type>_<n>_<grid>_<variant>.json,
# and summary.txt lists time, rate and efficiency E = T(1x1) / (P · T(grid)) per run, with the
# distribution and the time with it for resident runs.
set -uo pipefail
build=${1:-build-summa}
reps=${SUMMA_REPS:-5}    # SUMMA_TIMEOUT (seconds per run, default 400) bounds each mpirun
block=${SUMMA_BLOCK:-1024}
block_tag=
[ "$block" = 1024 ] || block_tag=_b$block
sizes=${2:-16384,32768}
semirings=${3:-plus-times:f32,max-plus:f32}
variants=${5:-broadcast,ring}
resident=${SUMMA_RESIDENT:-1}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
default_grids=1x1
[ "$gpus" -ge 2 ] && default_grids+=,1x2,2x1
[ "$gpus" -ge 4 ] && default_grids+=,2x2,1x4
[ "$gpus" -ge 8 ] && default_grids+=,2x4,4x2,1x8
grids=${4:-$default_grids}
out=${OUT:-/tmp/summa-scaling}
mkdir -p "$out"
summary=$out/summary.txt

# NCCL lives in the nvidia-nccl wheel of python3 on the GPU machines (libnccl.so.2 only).
nccl=$(python3 -c 'import nvidia.nccl as m; print(m.__path__[0])' 2>/dev/null || true)
export LD_LIBRARY_PATH=${nccl:+$nccl/lib:}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0   # no NVLink multicast on these machines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nccl_env=()  # every NCCL_* setting of the caller reaches the ranks (NCCL_MAX_NCHANNELS, say)
for v in ${!NCCL_@}; do nccl_env+=(-x "$v"); done

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
# Clocks and power of every GPU twice a second while the runs go (gpu-samples.csv; runs.log has when each
# run ended): whether a run's GPUs held their clocks, e.g. when all of them multiply at once.
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 500 \
  >> "$out/gpu-samples.csv" 2>/dev/null &
sampler=$!
trap 'kill "$sampler" 2>/dev/null' EXIT
nvidia-smi topo -m >> "$summary" 2>&1

resident_flag=
[ "$resident" = 1 ] && resident_flag=--resident
argmax_flag=  # SUMMA_ARGMAX=1: dist::gemm_argmax (ringmm summa --argmax), records named *_argmax.json
[ "${SUMMA_ARGMAX:-0}" = 1 ] && argmax_flag=--argmax
echo "GPUs $gpus, grids $grids, resident $resident" | tee -a "$summary"

for pair in ${semirings//,/ }; do
  semiring=${pair%%:*}
  type=${pair##*:}
  for size in ${sizes//,/ }; do
    for grid in ${grids//,/ }; do
      ranks=$(( ${grid%x*} * ${grid#*x} ))
      n=$size weak_base=
      if [ "${size#weak:}" != "$size" ]; then
        weak_base=${size#weak:}
        n=$(python3 -c "import math; print(max(1024, round($weak_base * math.sqrt($ranks) / 1024) * 1024))")
      fi
      if [ "$ranks" -gt "$gpus" ]; then
        echo "$semiring $type n=$n $grid skipped: $ranks ranks, $gpus GPU(s) (one rank per GPU)" | tee -a "$summary"
        continue
      fi
      # 1x1 moves no panels: it runs once, as broadcast, whichever variants were asked for (it is
      # every other grid's baseline).
      grid_variants=$variants
      [ "$grid" = 1x1 ] && grid_variants=broadcast
      for variant in ${grid_variants//,/ }; do
        record=$out/summa_${semiring}_${type}_${weak_base:+weak${weak_base}_}${n}_${grid}_${variant}${block_tag}${argmax_flag:+_argmax}.json
        # --bind-to none: each rank drives one GPU (cudaSetDevice(node-local rank)) and uses its own CPU threads.
        timeout "${SUMMA_TIMEOUT:-400}" mpirun -np "$ranks" --bind-to none -x LD_LIBRARY_PATH "${nccl_env[@]}" \
          "$tool" summa --size "$n" --semiring "$semiring" --type "$type" --grid "$grid" --block "$block" \
          --variant "$variant" --backend cuda --reps "$reps" ${resident_flag} ${argmax_flag} --results "$record" > "$out/run.log" 2>&1
        rc=$?
        if [ $rc -eq 0 ] && [ -n "$weak_base" ]; then  # mark the record as a weak-scaling run
          python3 -c "import json, sys; p = sys.argv[1]; d = json.load(open(p)); rs = d if isinstance(d, list) else [d]
for r in rs: r['weak_base'] = int(sys.argv[2])
json.dump(d, open(p, 'w'))" "$record" "$weak_base"
        fi
        echo "== $semiring $type n=$n grid=$grid $variant rc=$rc (ended $(date -u +%H:%M:%S))" >> "$out/runs.log"
        cat "$out/run.log" >> "$out/runs.log"
        [ $rc -ne 0 ] && { echo "$semiring $type n=$n $grid $variant FAILED rc=$rc: $(tail -3 "$out/run.log" | tr '\n' ' ')" | tee -a "$summary"; }
      done
    done
  done
done

# Efficiency against the 1x1 record of the same semiring, type and size (weak: its base size).
python3 "$(dirname "${BASH_SOURCE[0]}")/../../lab/reports/summa_table.py" --one-run "$out"/summa_*.json | tee -a "$summary"
echo "== summary =="; cat "$summary"
