#!/usr/bin/env bash
# Issue 29's targets ("Speed where calls are many and mid-sized") in one session, with the published
# tropical kernel (CuTropicalGEMM.jl's) built from its public source and timed beside ringmm.
# Usage, repository root on the GPU machine, after a build:
#   lab/device/speed_run.sh <ringmm executable> [tag]
# The published kernel's source comes from PUBLISHED_SRC (default .carry/published/
# tropicalgemm_kernels.cu, put there by lab/device/published_source.sh and carried; never
# committed); without it that part is skipped and said so. Records go to /tmp/speed as
# speed-<gpu>-<date>[-<tag>]-<part>.json(l), and with this run's output into $OUT/speed.tgz (one
# file: the device tool brings back few); `python3 lab/reports/campaigns.py pack speed
# <date>-<gpu>[-<tag>] FILE...` makes them one campaign, from which lab/reports/speed_table.py
# (through shapes_table.py, lab/reports/make_docs.sh) writes the top of docs/perf/shapes.md.
# Device time on an H200: about a minute of commands (the session of 2026-11-29: published 15 s,
# host → host every pair 14 s, batch 6 s, large 5 s, the rest 1–3 s each), plus the two nvcc
# builds (tens of seconds); well within 4 minutes.
set -uo pipefail
tool=${1:?usage: speed_run.sh <ringmm executable> [tag]}
tag=${2:-${SPEED_TAG:-}}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=/tmp/speed
rm -rf "$out" && mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
export PATH=/usr/local/cuda/bin:$PATH
arch=${CUDA_ARCH:-sm_90a}  # the published kernel's and the harness's target (Hopper by default)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case $gpu in
  *H100*) gpu=h100 ;;
  *H200*) gpu=h200 ;;
  *) gpu=gpu ;;
esac
prefix=$out/speed-$gpu-${SPEED_DATE:-$(date -u +%F)}${tag:+-$tag}
status=0
timings=()
bench() {  # bench <part> <ringmm bench arguments...>
  local part=$1 start=$SECONDS
  shift
  echo "== ringmm bench --backend cuda $* ($part)"
  timeout 240 "$tool" bench --backend cuda "$@" --out "$prefix-$part.json" | grep -E '^\[|over |calls:' | cut -c1-150 ||
    { status=1; echo "!! $part failed"; }
  timings+=("$part $((SECONDS - start)) s")
}

# The published kernel, f32 max-plus, at the shapes the issue compares (and the large squares).
src=${PUBLISHED_SRC:-$root/.carry/published/tropicalgemm_kernels.cu}
shapes="256,512,1000,2000,2048x128x128"
if [ -f "$src" ]; then
  start=$SECONDS
  work=$(mktemp -d)
  if nvcc -DTropicalMaxPlus -DFP32 -O3 -arch="$arch" -shared -Xcompiler -fPIC "$src" -o "$work/libpublished.so" \
       > "$work/build.log" 2>&1 &&
     nvcc -std=c++17 -O3 -arch="$arch" "$root/lab/harnesses/published_kernel.cu" -ldl -o "$work/published_kernel" \
       >> "$work/build.log" 2>&1; then
    echo "== published kernel ($(sha256sum "$src" | cut -c1-16)…)"
    timeout 120 "$work/published_kernel" --lib "$work/libpublished.so" --shapes "$shapes,4096,8192" --reps 20 \
      --out "$prefix-published.jsonl" || { status=1; echo "!! published failed"; }
  else
    status=1
    echo "!! the published kernel did not build:"; tail -5 "$work/build.log"
  fi
  timings+=("published $((SECONDS - start)) s")
else
  echo "!! no published source at $src (lab/device/published_source.sh): its part is skipped"
fi

bench mid --semiring max-plus --type f32 --shapes "$shapes" --reps 20
bench large --semiring max-plus,min-plus --type f32 --shapes 4096,8192 --reps 5
bench signknown --semiring max-plus,min-plus --type f32 --shapes 8192 --reps 5 --sign-known
bench batch --product batched --batch 4096 --shapes 64 --semiring max-plus --type f32,i32 --reps 20
bench narrowf --semiring max-plus --type f32,bf16 --shapes 8192 --reps 5
bench narrowi --semiring max-plus --type i32,i8 --shapes 8192 --reps 5
bench calls --semiring max-plus --type f32 --shapes 64 --calls 10000 --reps 20
bench host --semiring all --type all --shapes 4096 --reps 3

# The 64³ call's kernel alone, for the host cost "over the kernel": ncu's gpu__time_duration of each
# launch of a ringmm bench run, at the clocks and with the caches as they are (no locking, no
# flushing); the median goes into a record of its own.
start=$SECONDS
echo "== the 64³ kernel's own time (ncu gpu__time_duration)"
timeout 120 ncu --clock-control none --cache-control none -k regex:small_kernel --metrics gpu__time_duration.sum \
  "$tool" bench --backend cuda --semiring max-plus --type f32 --shapes 64 --reps 40 > "$out/kernel-64.txt" 2>&1 ||
  { status=1; echo "!! ncu failed"; tail -3 "$out/kernel-64.txt"; }
python3 - "$out/kernel-64.txt" "$prefix-kernel.json" "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" <<'PY' ||
import json, re, statistics, sys, time
scale = {"ns": 1e-9, "us": 1e-6, "usecond": 1e-6, "nsecond": 1e-9, "ms": 1e-3, "msecond": 1e-3}
times = [float(v.replace(",", "")) * scale[u] for u, v in
         re.findall(r"gpu__time_duration\.sum\s+(\S+)\s+([\d.,]+)", open(sys.argv[1]).read())]
if not times:
    sys.exit("no gpu__time_duration in " + sys.argv[1])
record = {"suite": "kernel-duration", "device": sys.argv[3], "kernel": "small_kernel", "semiring": "max-plus",
          "type": "f32", "m": 64, "n": 64, "k": 64, "seconds": statistics.median(times), "launches": len(times),
          "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
json.dump([record], open(sys.argv[2], "w"))
print(f"64^3 kernel: median {record['seconds'] * 1e6:.2f} us over {len(times)} launches")
PY
  status=1
timings+=("kernel 64 $((SECONDS - start)) s")

# APSP 16384 with successors: the solve from its record, the whole command's wall time in a record
# of its own (so that the report reads files only).
start=$SECONDS
echo "== ringmm apsp --bench 16384"
/usr/bin/time -f "%e" -o "$out/apsp-wall.txt" timeout 120 "$tool" apsp --bench 16384 --record "$prefix-apsp.json" |
  grep -E '^(time|graph|solve|total|whole)' || { status=1; echo "!! apsp failed"; }
if [ -s "$out/apsp-wall.txt" ]; then
  printf '[{"suite": "apsp-command", "device": "%s", "n": 16384, "seconds": %s, "date": "%s"}]\n' \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" "$(tail -1 "$out/apsp-wall.txt")" \
    "$(date -u +%FT%TZ)" > "$prefix-apspwhole.json"
  echo "whole command $(tail -1 "$out/apsp-wall.txt") s"
fi
timings+=("apsp $((SECONDS - start)) s")

start=$SECONDS
echo "== ringmm hmm viterbi --bench 4096,512,1000"
timeout 120 "$tool" hmm viterbi --bench 4096,512,1000 --backend cuda --reps 5 --record "$prefix-viterbi.json" | tail -3 ||
  { status=1; echo "!! viterbi failed"; }
timings+=("viterbi $((SECONDS - start)) s")

echo "== summary"
printf '%s\n' "${timings[@]}"
ls -1 "$prefix"-* 2>/dev/null | sed "s|^$out/||"
echo "== issue 29's table (lab/reports/speed_table.py)"
python3 "$root/lab/reports/speed_table.py" --print "$prefix"-* || status=1
[ -n "${OUT:-}" ] && tar -czf "$OUT/speed.tgz" -C /tmp speed
exit $status
