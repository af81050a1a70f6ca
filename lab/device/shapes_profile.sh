#!/usr/bin/env bash
# Issue 12's rows under ncu: one `ringmm bench` call per row (warm-up and one timed repetition),
# ringmm's own kernels only (the ceilings' microbenchmark and cuBLAS are filtered out), with the
# sections that say what bounds a kernel: speed of light, occupancy, launch statistics and the
# warp stall reasons. lab/reports/shapes_profile.py turns the CSVs into docs/perf/shapes-profile.md.
# Usage, repository root on the GPU machine (device_run.sh's `profile` step runs it):
#   lab/device/shapes_profile.sh <ringmm executable> [tag]
# Writes $OUT (or /tmp/shapes-profile)/shapes-profile-<gpu>-<date>[-<tag>]-<row>.csv. ncu locks
# the SM clock at its base (1.59 GHz on the H100), so durations here run longer than bench's.
# About 2 minutes on the H100 (ncu replays each kernel once per section group).
set -uo pipefail
tool=${1:?usage: shapes_profile.sh <ringmm executable> [tag]}
tag=${2:-${SHAPES_TAG:-}}
out=${OUT:-/tmp/shapes-profile}
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case $gpu in
  *H100*) gpu=h100 ;;
  *H200*) gpu=h200 ;;
  *) gpu=gpu ;;
esac
# The heuristics' choices, whatever tune cache a step before wrote (lab/reports/shapes_profile.py says so).
export RINGMM_TUNE_CACHE=off
prefix=$out/shapes-profile-$gpu-${SHAPES_DATE:-$(date -u +%F)}${tag:+-$tag}
kernels='regex:gemm_kernel|small_kernel|scan_kernel|pack_kernel|unpack_kernel|reduce_parts_kernel'
stalls=smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
status=0
profile() {  # profile <row> <ringmm bench arguments...>
  local row=$1
  shift
  echo "== $row: ringmm bench --backend cuda $* --reps 1"
  timeout 120 ncu --kernel-name "$kernels" --launch-count 16 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --metrics "$stalls" --csv \
    "$tool" bench --backend cuda "$@" --reps 1 > "$prefix-$row.csv" 2> "$prefix-$row.err" ||
    { status=1; echo "!! $row failed (see $(basename "$prefix")-$row.err)"; }
}

mp="--semiring max-plus --type f32"
profile batch64 $mp --product batched --batch 4096 --shapes 64
profile batch64i32 --semiring max-plus --type i32 --product batched --batch 4096 --shapes 64
profile batch32 $mp --product batched --batch 4096 --shapes 32
profile batch16 $mp --product batched --batch 100000 --shapes 16
for s in 256 512 1000 2000 65536x64x64 64x64x65536 131072x16x16 8192x8192x32 4096 4097; do
  profile "s$s" $mp --shapes $s
done
profile i32 --semiring max-plus --type i32 --shapes 4096
profile i16x2 --semiring max-plus --type i16x2 --shapes 4096
profile f64 --semiring max-plus --type f64 --shapes 4096
profile maxmin --semiring max-min --type f32 --shapes 4096
echo "== issue 12's profiles (lab/reports/shapes_profile.py)"
python3 "$(dirname "${BASH_SOURCE[0]}")/../../lab/reports/shapes_profile.py" "$prefix"-*.csv || status=1
exit $status
