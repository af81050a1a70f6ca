#!/usr/bin/env bash
# Times `ringmm apsp` on random dense graphs on the GPU: the block-size sweep at 8192 vertices,
# then 16384 vertices (the target: distances and successors in at most 1.0 s), f32 min-plus, and
# the plain and argmax min-plus products of the same run for comparison.
# Usage, repository root on the GPU machine:  lab/device/apsp_bench.sh <ringmm executable> [tag]
# Records go to $OUT (or /tmp/apsp-bench) as apsp-<tag>-*.json.
set -uo pipefail
tool=${1:?usage: apsp_bench.sh <ringmm executable> [tag]}
tag=${2:-gpu}
out=${OUT:-/tmp/apsp-bench}
mkdir -p "$out"
status=0
run() {  # run <name> <ringmm apsp arguments...>
  local name=$1
  shift
  echo "== ringmm apsp --backend cuda $*"
  timeout 300 "$tool" apsp --backend cuda "$@" --record "$out/apsp-$tag-$name.json" || status=1
}
for block in 128 256 384 512 768 1024; do run "8192-b$block" --bench 8192 --block "$block" --reps 3; done
run 16384 --bench 16384 --reps 3  # the default block, 1024
run 16384-b256 --bench 16384 --block 256 --reps 3
run 16384-b512 --bench 16384 --block 512 --reps 3
# The min-plus rates of the same run beside the effective one: the plain and the argmax product at
# 16384³ and at the shape of a round's whole-matrix update (K = the default block).
for product in gemm argmax; do
  echo "== ringmm bench --product $product --semiring min-plus --type f32"
  timeout 200 "$tool" bench --backend cuda --product "$product" --semiring min-plus --type f32 \
    --shapes 16384,16384x16384x512 --reps 3 --out "$out/apsp-$tag-minplus-$product.json" || status=1
done
exit $status
