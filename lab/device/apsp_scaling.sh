#!/usr/bin/env bash
# The distributed APSP on one host's GPUs: `ringmm apsp --summa --bench n --backend cuda` (each rank
# makes its blocks of the random graph, the solve runs on device-resident blocks) for every size and
# grid; one JSON record per run (suite "apsp") and a line of the summary each.
# Usage, repository root on the GPU machine:
#   lab/device/apsp_scaling.sh TOOL [SIZES] [GRIDS]
#     TOOL   a ringmm executable built with CUDA, MPI and NCCL
#     SIZES  comma list of vertex counts (default 16384,32768)
#     GRIDS  space- or comma-separated PRxPC (default 1x1); a grid needing more ranks than GPUs is skipped
# APSP_REPS (default 3) solves per run, the median reported (the first pays one-time costs); APSP_PART names the records' part;
# APSP_TIMEOUT (seconds per run, default 400) bounds each mpirun. Records go to $OUT (or
# /tmp/apsp-scaling) as apsp_<n>_<grid>.json.
set -uo pipefail
tool=${1:?usage: apsp_scaling.sh TOOL [SIZES] [GRIDS]}
sizes=${2:-16384,32768}
grids=${3:-1x1}
out=${OUT:-/tmp/apsp-scaling}
mkdir -p "$out"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
for n in ${sizes//,/ }; do
  for grid in ${grids//,/ }; do
    ranks=$(( ${grid%x*} * ${grid#*x} ))
    if [ "$ranks" -gt "$gpus" ]; then echo "apsp n=$n $grid skipped: $ranks ranks, $gpus GPU(s)"; continue; fi
    log=$out/apsp_${n}_${grid}.log
    timeout "${APSP_TIMEOUT:-400}" mpirun -n "$ranks" --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
      "$tool" apsp --summa --bench "$n" --grid "$grid" --backend cuda --reps "${APSP_REPS:-3}" > "$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then echo "apsp n=$n $grid FAILED rc=$rc: $(tail -3 "$log" | tr '\n' ' ')"; continue; fi
    python3 - "$log" "$out/apsp_${n}_${grid}.json" "$n" "$grid" "$device" "${APSP_PART:-run}" "${APSP_REPS:-3}" <<'PY'
import datetime, json, re, sys
log, path, n, grid, device, part, reps = sys.argv[1:]
text = open(log).read()
solve_ms = float(re.search(r"^time\s+solve ([0-9.]+) ms", text, re.M).group(1))
block = int(re.search(r"block (\d+),", text).group(1))
rows, cols = (int(x) for x in grid.split("x"))
n = int(n)
record = {"suite": "apsp", "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
          "device": device, "backend": "cuda", "semiring": "min-plus", "type": "f32", "n": n, "block": block,
          "ranks": rows * cols, "grid_rows": rows, "grid_cols": cols, "seconds": solve_ms / 1e3,
          "updates_per_s": n ** 3 / (solve_ms / 1e3), "reps": int(reps), "part": part}
json.dump(record, open(path, "w"))
print(f"apsp n={n} {grid}: solve {solve_ms:.1f} ms, {record['updates_per_s'] / 1e12:.2f}e12 updates/s, "
      f"{record['updates_per_s'] / 1e12 / (rows * cols):.2f}e12 per GPU")
PY
  done
done
