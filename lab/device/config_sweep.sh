#!/usr/bin/env bash
# Every CUDA configuration × border policy on a few shapes, beside the heuristic's choice, to check
# the heuristic. Usage, repository root on the GPU machine:
#   lab/device/config_sweep.sh <ringmm executable> <shapes> [semiring] [type]
# Writes one merged record file, $OUT/config-sweep.json, and prints the rates as a table.
set -uo pipefail
tool=${1:?usage: config_sweep.sh <ringmm> <shapes> [semiring] [type]}
shapes=${2:?usage: config_sweep.sh <ringmm> <shapes> [semiring] [type]}
semiring=${3:-max-plus}
type=${4:-f32}
out=${OUT:-/tmp/config-sweep}
work=$(mktemp -d)
mkdir -p "$out"
common=(bench --backend cuda --semiring "$semiring" --type "$type" --shapes "$shapes" --reps 20)
"$tool" "${common[@]}" --out "$work/auto.json" > /dev/null || exit 1
for config in b128x128_k8_t8x8_bcyc b64x64_k16_t4x4_blk b128x64_k8_t8x4_cyc b64x64_k16_t4x4_blk_breg \
              b64x64_k16_t4x4_blk_areg b64x64_k16_t4x4_blk_abreg; do
  for border in pad predicate; do
    "$tool" "${common[@]}" --config "$config" --border "$border" --out "$work/$config-$border.json" > /dev/null || exit 1
  done
done
python3 - "$work" "$out/config-sweep.json" <<'PY'
import glob, json, sys
recs = [r for f in sorted(glob.glob(sys.argv[1] + "/*.json")) for r in json.load(open(f)) if r["backend"] == "cuda"]
json.dump(recs, open(sys.argv[2], "w"), indent=1)
shapes = sorted({(r["m"], r["n"], r["k"]) for r in recs})
kernels = sorted({r["kernel"] for r in recs}, key=lambda k: (k != "ringmm", k))
print(f"{'kernel':44}" + "".join(f"{'x'.join(map(str, s)):>18}" for s in shapes))
for k in kernels:
    rate = {(r["m"], r["n"], r["k"]): r["updates_per_s"] / 1e12 for r in recs if r["kernel"] == k}
    print(f"{k:44}" + "".join(f"{rate.get(s, float('nan')):>18.3f}" for s in shapes))
PY
