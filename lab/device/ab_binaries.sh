#!/usr/bin/env bash
# A/B of two trees on one GPU machine: OLD_SRC (a `git archive` .tar.gz of the earlier commit,
# default .carry/old-src.tar.gz) against this tree, `ringmm bench` on small shapes (call overhead,
# the small kernel), two rounds each, interleaved old/new, so that both see the same machine. The
# tool alone is built (no tests), both at once. Usage, repository root on the GPU machine:
#   OLD_SRC=... lab/device/ab_binaries.sh        (records and a summary under $OUT)
# About 4 minutes on the H100. It printed lab/results/ab-small-h100-2026-11-24-{a,b}-summary.txt
# (the first and second groups of cases below, run in two calls).
set -u
old_src=${OLD_SRC:-.carry/old-src.tar.gz}
out=${OUT:-/tmp/ab}
mkdir -p "$out"
rm -rf /tmp/ab-old && mkdir /tmp/ab-old && tar -C /tmp/ab-old -xzf "$old_src" || exit 1
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DRINGMM_ENABLE_CUDA=ON -DRINGMM_ENABLE_BLAS=OFF
     -DRINGMM_BUILD_TESTS=OFF -DRINGMM_ENABLE_MPI=OFF -DRINGMM_BUILD_EXAMPLES=OFF"
export PATH=/usr/local/cuda/bin:$PATH
# shellcheck disable=SC2086
(cmake -S /tmp/ab-old -B /tmp/ab-old/b $cfg > /tmp/ab-old.log 2>&1 &&
  cmake --build /tmp/ab-old/b --target ringmm-cli -j 8 >> /tmp/ab-old.log 2>&1; echo "old build rc=$?") &
# shellcheck disable=SC2086
(cmake -S . -B /tmp/ab-new $cfg > /tmp/ab-new.log 2>&1 &&
  cmake --build /tmp/ab-new --target ringmm-cli -j 8 >> /tmp/ab-new.log 2>&1; echo "new build rc=$?") &
wait
cases=(  # name:bench arguments; the first group, then the second
  "s1:--semiring max-plus --type f32 --shapes 1,64,256,512 --reps 300"
  "b1:--semiring max-plus --type f32,i32 --product batched --batch 4096 --shapes 64,32 --reps 50"
  "s2:--semiring max-plus --type f32 --shapes 65536x64x64,64x64x65536,131072x16x16,1 --reps 100"
  "b2:--semiring max-plus --type f32 --product batched --batch 100000 --shapes 16 --reps 8"
  "c2:--semiring max-plus --type f32 --product batched --batch 4096 --shapes 32 --reps 100")
for round in 1 2; do
  for which in old new; do
    tool=/tmp/ab-old/b/tools/ringmm
    [ "$which" = new ] && tool=/tmp/ab-new/tools/ringmm
    for c in "${cases[@]}"; do
      # shellcheck disable=SC2086
      timeout 100 "$tool" bench --backend cuda ${c#*:} --out "$out/ab-$which-$round-${c%%:*}.json" > /dev/null 2>&1 ||
        echo "$which round $round ${c%%:*} failed"
    done
  done
done
python3 - "$out" <<'PY'
import collections, glob, json, os, sys
t = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ab-*.json"))):
    which, rnd = os.path.basename(f).split("-")[1:3]
    for r in json.load(open(f)):
        if r.get("backend") == "cuda" and r.get("kernel") == "ringmm":
            t[(r["product"], r["type"], r["m"], r.get("batch", 1))][f"{which}{rnd}"] = r["seconds"] * 1e6
for k, v in sorted(t.items()):
    print(k, " ".join(f"{n}={v[n]:.2f}us" for n in sorted(v)))
PY
