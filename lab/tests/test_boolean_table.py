"""lab/reports/boolean_table.py: the 4097³ target judged on the median of repeated runs' time ratios
(--odd), and on the routes run's own ratio without them."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def record(n, seconds, kernel="ringmm", backend="cuda"):
    return {"suite": "bench", "device": "GPU", "backend": backend, "kernel": kernel, "semiring": "or-and",
            "type": "u8", "product": "gemm", "m": n, "n": n, "k": n, "batch": 1, "seconds": seconds,
            "updates_per_s": n ** 3 / seconds}


def targets(tmp_path, routes, odd_runs):
    def write(name, records):
        path = tmp_path / name
        path.write_text(json.dumps(records))
        return str(path)

    args = [sys.executable, str(ROOT / "lab" / "reports" / "boolean_table.py"), "--routes", write("routes.json", routes),
            "--out", str(tmp_path / "boolean.md")]
    if odd_runs:
        args += ["--odd"] + [write(f"odd{i}.json", run) for i, run in enumerate(odd_runs)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if "4097³ within" in line]


def test_the_median_of_the_odd_runs_decides(tmp_path):
    routes = [record(4096, 100e-6), record(4097, 110e-6)]  # this run alone: +10 %, missed
    assert "missed" in targets(tmp_path, routes, [])[0]
    odd = [[record(4096, 100e-6), record(4097, t * 1e-6)] for t in (103, 104, 112)]
    (row,) = targets(tmp_path, routes, odd)
    assert "median of 3 runs" in row and "+4.0 %" in row and "+12.0" in row and row.endswith("met |")
    odd.append([record(4096, 100e-6), record(4097, 108e-6)])  # median (104 + 108) / 2: +6 %
    assert targets(tmp_path, routes, odd)[0].endswith("missed |")
