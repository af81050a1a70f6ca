#!/usr/bin/env bash
# The measurements docs/seeds.md still lacks (lab/reports/plots.py says "not measured yet" without them),
# in one device call: each seed's experiment through `ringmm bench` and the lab's `ringmm-lab`
# (ladder, seed003, microbench).
# Usage, repository root on the GPU machine (device_run.sh's `seeds` step runs it):
#   lab/device/seeds_runs.sh <ringmm executable> [<ringmm-lab executable>]
# Records go to $OUT (or /tmp/seeds) as seeds-<gpu>-<date>-<experiment>.json, the names lab/reports/plots.py
# looks for once they are copied into lab/results/ (it reads only seeds-h100-* files).
# Estimated device time (H100, from the recorded runs' kernel and transfer times, plus about 3 s of
# start-up and ceilings per command): about 5 minutes in all; each command is capped at 120 s.
set -uo pipefail
tool=${1:?usage: seeds_runs.sh <ringmm executable> [<ringmm-lab executable>]}
lab_tool=${2:-$(dirname "$(dirname "$tool")")/lab/kernels/ringmm-lab}
out=${OUT:-/tmp/seeds}
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case $gpu in
  *H100*) gpu=h100 ;;
  *H200*) gpu=h200 ;;
  *) gpu=gpu ;;
esac
prefix=$out/seeds-$gpu-$(date -u +%F)
status=0
timings=()
run() {  # run <experiment> <ringmm arguments...>: one command, its record file and its time
  local name=$1 start=$SECONDS
  shift
  local exe=$tool
  [ "$1" = lab ] && { exe=$lab_tool; shift; }  # "lab <command>": ringmm-lab's command
  echo "== $(basename "$exe") $* --out $(basename "$prefix")-$name.json"
  timeout 120 "$exe" "$@" --out "$prefix-$name.json" || { status=1; echo "!! $name failed"; }
  timings+=("$name $((SECONDS - start)) s")
}

# Seed 004: the ceilings of every semiring and type (~15 s).
run microbench lab microbench
# The README's headline: every semiring and type at 4096³ beside its ceilings and cuBLAS, in one run
# (~45 s: about 20 pairs, each timed on device buffers and host-to-host).
run all-4096 bench --backend cuda --semiring all --type all --shapes 4096 --ceilings

# Seed 000: each border policy on the seed's wA = hB = 32 and 64, then 128, 1000 and 4097, with
# hA = wB from 1000 to 4097 (none a multiple of 128) and rectangular shapes, for f32 max-plus,
# plus-times and max-min and i32 min-plus (~25 s per policy: 64 cases, the largest 4097³).
border_shapes=1000x1000x32,2000x2000x32,4097x4097x32,1000x1000x64,2000x2000x64,4097x4097x64
border_shapes+=,1000x1000x128,2000x2000x128,4097x4097x128,1000,4097
border_shapes+=,4097x1000x64,1000x4097x32,2000x4097x1000,4097x1000x4097,131072x16x16
for border in pad predicate auto; do
  run border-$border bench --backend cuda --border $border --semiring max-plus,plus-times,max-min --type f32 \
    --shapes $border_shapes
  run border-$border-i32 bench --backend cuda --border $border --semiring min-plus --type i32 --shapes $border_shapes
done

# Seed 001: the ladder with the serial CPU loop where it takes seconds, not minutes (~15 s: the
# naive loop at 1024³ runs 4 times per semiring), then the larger sizes without it (~8 s).
run ladder-serial lab ladder --serial --shapes 256,512,1024
run ladder lab ladder --shapes 2048,4096

# Seed 002: with transfers from pageable and from pinned host memory (~15 s each; the 8192³ copies
# dominate).
run transfers-pageable bench --backend cuda --semiring max-plus,plus-times --type f32 --shapes 1024,2048,4096,8192
run transfers-pinned bench --backend cuda --host-memory pinned --semiring max-plus,plus-times --type f32 \
  --shapes 1024,2048,4096,8192

# Seed 003: Aᵀ·A in f64: ringmm's syrk beside cublasDsyrk and the seed's naive and optimised kernels
# (~25 s), cublasDgemm of the same n (~5 s)
# and the ladder's straightforward kernel as a naive n×n×n product (~6 s).
run syrk bench --backend cuda --product syrk --semiring plus-times --type f64 --shapes 1024,2048,4096,8192
run syrk-published lab seed003 --shapes 1024,2048,4096,8192
run gemm-f64 bench --backend cuda --semiring plus-times --type f64 --shapes 1024,2048,4096
run ladder-f64 lab ladder --semiring plus-times --type f64 --shapes 1024,2048,4096

# Seed 004: Ninst batches of 1024³ against one large product, up to the seed's 10K (~3 s per
# batch count, ~12 s for the large products).
for batch in 1 2 5 10 20; do
  run ninst-$batch bench --backend cuda --product batched --batch $batch --semiring max-plus --type i32,f32 --shapes 1024
done
run large bench --backend cuda --semiring max-plus --type i32,f32 --shapes 1024,4096,8192,10240
# ... and A read transposed, against the plain runs above (~10 s).
run transpose bench --backend cuda --transpose-a --semiring max-plus --type i32,f32 --shapes 1024,4096,10240

echo "== summary"
printf '%s\n' "${timings[@]}"
ls -1 "$prefix"-*.json 2>/dev/null | sed "s|^$out/||"
exit $status
