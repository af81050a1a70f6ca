"""lab/reports/shapes_profile.py: the ncu CSVs of lab/device/shapes_profile.sh, packed into a campaign of
kind shapes-profile, become one table row per profiled shape (the timed call's kernels, the longest
one's figures); only the latest campaign is read, absent rows say so, and no campaign at all is a
clear message."""

import csv
import io
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADER = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
          "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]


def launch(kid, name, duration_ns, extra=()):
    rows = [("Duration", "ns", f"{duration_ns:,}"), ("Registers Per Thread", "register/thread", "80"),
            ("Achieved Occupancy", "%", "28.9"), ("Theoretical Occupancy", "%", "37.5"),
            ("Compute (SM) Throughput", "%", "62.5"), ("DRAM Throughput", "%", "31.5"),
            ("Warp Cycles Per Issued Instruction", "cycle", "6.83"), *extra]
    return [[str(kid), "1", "ringmm", "h", name, "1", "7", "(256, 1, 1)", "(528, 1, 1)", "0", "9.0", "S", m, u, v]
            for m, u, v in rows]


def write_csv(path, launches):
    text = io.StringIO()
    text.write("==PROF== Connected to process 1\n")  # ncu's own lines come before the table
    w = csv.writer(text, quoting=csv.QUOTE_ALL)
    w.writerow(HEADER)
    for rows in launches:
        w.writerows(rows)
    path.write_text(text.getvalue())


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "lab" / "reports" / "shapes_profile.py"), *args],
                          capture_output=True, text=True)


def test_rows_from_the_timed_call(tmp_path):
    small = "void ringmm::cuda_detail::small_kernel<ringmm::MaxPlus<float>, ringmm::cuda_detail::SmallTile<64, 16, 4, 1>>"
    stalls = [("smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio", "", "2.39"),
              ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "", "0.64"),
              ("smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio", "", "1.19"),
              ("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "", "0.78")]
    # Warm-up then timed call, a scan and the product each; then a host-to-host call's kernels.
    scan = "void ringmm::cuda_detail::scan_kernel<ringmm::MaxPlus<int>>"
    new = tmp_path / "shapes-profile-h100-2026-11-25-a-batch64i32.csv"
    write_csv(new, [launch(0, scan, 50_000), launch(1, small, 130_000, stalls), launch(2, scan, 45_500),
                    launch(3, small, 121_200, stalls), launch(4, small, 900_000), launch(5, small, 900_000)])
    old = tmp_path / "shapes-profile-h100-2026-11-24-batch64i32.csv"
    write_csv(old, [launch(0, small, 1)])  # an older session
    results = tmp_path / "results"
    for name, path in (("2026-11-25-h100-a", new), ("2026-11-24-h100", old)):
        packed = run("--pack", name, "--results", str(results), str(path))
        assert packed.returncode == 0, packed.stderr
    out = tmp_path / "profile.md"
    done = run("--results", str(results), "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "shapes-profile/2026-11-25-h100-a.jsonl" in text and "2026-11-24" not in text
    line = next(l for l in text.splitlines() if l.startswith("| batch 4096 × 64³ max-plus i32 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "scan_kernel 45.5, small_kernel T64 121.2"
    assert cells[2:7] == ["80", "29 / 38", "62", "32", "6.8"]  # the longest kernel's figures
    assert cells[7] == "not selected 2.4, math pipe throttle 1.2, wait 0.8"
    assert "| 256³ max-plus f32 | not profiled |" in text


def test_no_files_is_a_message(tmp_path):
    done = run("--results", str(tmp_path))
    assert done.returncode == 1
    assert "no campaign shapes-profile/*.jsonl" in done.stderr and "Traceback" not in done.stderr
