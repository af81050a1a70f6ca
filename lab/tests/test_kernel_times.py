"""lab/reports/kernel_times.py: an ncu duration profile summed by kernel name and grid, in ms whatever
unit ncu wrote, longest first; an unknown unit or a file without ncu rows is refused, saying which."""

import csv
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "lab" / "reports" / "kernel_times.py"
HEAD = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
        "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]


def write(path, kernels):
    with open(path, "w", newline="") as f:
        f.write("==PROF== Connected to process 1\n")  # ncu's own lines are not rows
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(HEAD)
        for i, (name, grid, unit, value) in enumerate(kernels):
            w.writerow([i, 1, "ringmm", "host", name, 1, 7, "(256, 1, 1)", grid, 0, "9.0", "Command line profiler metrics",
                        "gpu__time_duration.sum", unit, value])


def run(path):
    return subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True)


def test_sums_by_name_and_grid_in_ms(tmp_path):
    path = tmp_path / "run.csv"
    write(path, [
        ("void graph::<unnamed>::diagonal_kernel<float>(T1 *, long, int *, long, int, bool, T1 *)", "(1, 1, 1)", "usecond", "250"),
        ("void graph::<unnamed>::diagonal_kernel<float>(T1 *, long, int *, long, int, bool, T1 *)", "(1, 1, 1)", "nsecond", "250,000"),
        ("void cuda_detail::argmax_max_kernel<MinPlus<float>>(cuda_detail::ArgmaxMaxArgs<T1>)", "(32768, 1, 1)", "msecond", "3"),
        ("void cuda_detail::argmax_max_kernel<MinPlus<float>>(cuda_detail::ArgmaxMaxArgs<T1>)", "(2048, 1, 1)", "usecond", "500"),
        ("graph::(anonymous namespace)::gather_kernel(int *, long)", "(16, 132, 1)", "ns", "1000"),
    ])
    result = run(path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "4.0 ms in 5 kernels (ncu's clocks)"
    rows = [line.split() for line in lines[2:]]
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("3.00", "1", "argmax_max_kernel"), ("0.50", "2", "diagonal_kernel"), ("0.50", "1", "argmax_max_kernel"),
        ("0.00", "1", "gather_kernel")]
    assert rows[0][1] == "75.0%"


def test_refuses_an_unknown_unit_and_a_file_without_rows(tmp_path):
    path = tmp_path / "run.csv"
    write(path, [("void k(int)", "(1, 1, 1)", "cycle", "10")])
    result = run(path)
    assert result.returncode != 0 and "unknown time unit 'cycle'" in result.stderr
    empty = tmp_path / "empty.csv"
    empty.write_text("==PROF== Disconnected\n")
    result = run(empty)
    assert result.returncode != 0 and "no ncu rows" in result.stderr
