#!/usr/bin/env bash
# Issue 12 ("Speed where the workloads are"): every row of its table in one session of
# `ringmm bench --backend cuda`, each command beside the pairs' register-register ceilings.
# Usage, repository root on the GPU machine (device_run.sh's `shapes` step runs it):
#   lab/device/shapes_runs.sh <ringmm executable> [tag]
# Records go to $OUT (or /tmp/shapes) as shapes-<gpu>-<date>[-<tag>]-<part>.json, <date> the UTC
# day (SHAPES_DATE overrides it), <tag> the second argument or SHAPES_TAG (none by default; give
# one for a second session on the same day); <part> names have no hyphen, so that the session is
# the file name without its last "-<part>". Copied into lab/results/, lab/reports/shapes_table.py
# (lab/reports/make_docs.sh) writes docs/perf/shapes.md from the latest session; it prints the table last.
# Estimated device time (H100, from the recorded runs' kernel and transfer times; every rep also
# times the product host to host, and a few seconds of start-up and ceilings per command): about
# 2.5 minutes in all, most of it pairs4097's pageable copies; each command is capped at 150 s.
set -uo pipefail
tool=${1:?usage: shapes_runs.sh <ringmm executable> [tag]}
tag=${2:-${SHAPES_TAG:-}}
out=${OUT:-/tmp/shapes}
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case $gpu in
  *H100*) gpu=h100 ;;
  *H200*) gpu=h200 ;;
  *) gpu=gpu ;;
esac
prefix=$out/shapes-$gpu-${SHAPES_DATE:-$(date -u +%F)}${tag:+-$tag}
status=0
timings=()
run() {  # run <part> <ringmm bench arguments...>: one command, its record file and its time
  local part=$1 start=$SECONDS
  shift
  echo "== ringmm bench --backend cuda $* --out $(basename "$prefix")-$part.json"
  timeout 150 "$tool" bench --backend cuda "$@" --out "$prefix-$part.json" || { status=1; echo "!! $part failed"; }
  timings+=("$part $((SECONDS - start)) s")
}

# Batches of small products (~5 s: each call well under 1 ms, the 64 MB pageable copies dominate
# host to host); 32³ in i32 comes along.
run batch4096 --product batched --batch 4096 --shapes 64,32 --semiring max-plus --type f32,i32 --reps 20
run batch100000 --product batched --batch 100000 --shapes 16 --semiring max-plus --type f32 --reps 20
# Small squares and skinny shapes, f32 max-plus (~10 s: 8192x8192x32's 256 MB C dominates).
run small --shapes 256,512,1000,2000 --semiring max-plus --type f32 --reps 20
run skinny --shapes 65536x64x64,64x64x65536,131072x16x16,8192x8192x32 --semiring max-plus --type f32 --reps 20
# The large squares at 8192³ (~25 s: 45-115 ms products, 0.2-0.5 s with the copies).
run large --shapes 8192 --semiring max-plus --type f32,i32,i16x2,f64 --reps 5
run largemin --shapes 8192 --semiring min-plus --type f32 --reps 5
# Every pair the bench builds at 4096³ and 4097³: the 4096³ rows of the table, the 4097/4096 time
# ratios and 4096³ max-plus f32 host to host (seconds_with_transfers) (~60 s: 20 pairs × 2 shapes ×
# 11 calls each on device buffers and host to host; plus-times f32/f64 also time ringmm's own
# kernel and cuBLAS, log-plus cuBLAS).
run pairs4097 --shapes 4096,4097 --semiring all --type all --reps 10
# For comparison beside the default pageable host memory: the same host-to-host call from pinned
# buffers (~3 s).
run pinned --host-memory pinned --shapes 4096 --semiring max-plus --type f32 --reps 10

echo "== summary"
printf '%s\n' "${timings[@]}"
ls -1 "$prefix"-*.json 2>/dev/null | sed "s|^$out/||"
echo "== issue 12's table (lab/reports/shapes_table.py)"
python3 "$(dirname "${BASH_SOURCE[0]}")/../../lab/reports/shapes_table.py" "$prefix"-*.json || status=1
exit $status
