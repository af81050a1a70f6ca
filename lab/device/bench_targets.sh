#!/usr/bin/env bash
# The official `ringmm bench` run for the CUDA engine's targets (issue 3), in one device call:
# every semiring/type at 4096³ and 4097³, the target pairs at 8192³, batches of 20 × 1024³ and
# Aᵀ·A at 4096 and 8192, and the published tropical kernel's small and skinny shapes (DESIGN.md),
# each beside cuBLAS (plus-times) and the microbenchmark ceilings.
# Usage, repository root on the GPU machine:  lab/device/bench_targets.sh <ringmm executable> [tag]
# Records go to $OUT (or /tmp/bench-targets) as bench-<tag>-*.json; lab/reports/targets.py prints the
# target table last.
set -uo pipefail
tool=${1:?usage: bench_targets.sh <ringmm executable> [tag]}
tag=${2:-gpu}
out=${OUT:-/tmp/bench-targets}
mkdir -p "$out"
status=0
run() {  # run <name> <ringmm bench arguments...>
  local name=$1
  shift
  echo "== ringmm bench --backend cuda $* --out bench-$tag-$name.json"
  timeout 300 "$tool" bench --backend cuda "$@" --out "$out/bench-$tag-$name.json" || status=1
}
run all-4096-4097 --semiring all --type all --shapes 4096,4097 --ceilings
run targets-8192 --semiring max-plus,min-plus,plus-times --type f32,i32,i16x2,f64 --shapes 8192
run batched --product batched --batch 20 --shapes 1024 --semiring max-plus,plus-times --type f32,i32
run syrk --product syrk --shapes 4096,8192 --semiring max-plus,plus-times --type f32,f64
run published-shapes --semiring max-plus --type f32,f64 --shapes 1000,2000,8192x8192x32,8192x8192x128,131072x16x16
echo "== targets (lab/reports/targets.py)"
python3 "$(dirname "${BASH_SOURCE[0]}")/../../lab/reports/targets.py" "$out"/bench-"$tag"-*.json || status=1
exit $status
