"""lab/reports/summa_table.py: efficiency against the 1x1 run, of the same size for strong scaling and of
the base size for weak scaling (records with weak_base, as lab/device/summa_scaling.sh writes them)."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def record(n, grid, seconds, weak_base=None, variant="broadcast"):
    rows, cols = (int(x) for x in grid.split("x"))
    r = {"suite": "summa", "device": "GPU", "semiring": "max-plus", "type": "f32", "n": n, "ranks": rows * cols,
         "grid_rows": rows, "grid_cols": cols, "variant": variant, "block": 1024, "seconds": seconds,
         "updates_per_s": n ** 3 / seconds, "bytes_received_mean": 0, "lower_bound_bytes": 0, "resident": True,
         "distribution_seconds": 0.5}
    if weak_base is not None:
        r["weak_base"] = weak_base
    return r


def table(tmp_path, records):
    paths = []
    for i, r in enumerate(records):
        path = tmp_path / f"run{i}.json"
        path.write_text(json.dumps(r))
        paths.append(str(path))
    done = subprocess.run([sys.executable, str(ROOT / "lab" / "reports" / "summa_table.py"), "--one-run", "--markdown", *paths],
                          capture_output=True, text=True, check=True)
    return [line.split(" | ") for line in done.stdout.splitlines()[2:]]


def test_strong_and_weak_efficiency(tmp_path):
    n0 = 16384
    rows = table(tmp_path, [
        record(n0, "1x1", 1.0),
        record(n0, "1x2", 0.625),                        # strong: 1 / (2 · 0.625) = 0.8
        record(n0, "1x1", 1.0, weak_base=n0),            # weak baseline: the 1x1 run of n0
        record(2 * n0, "2x2", 8 / 3.6, weak_base=n0),    # 8 n0³ updates at 3.6 × the 1x1 rate: 0.9
    ])
    by_grid = {(r[4], r[5]): r for r in rows}
    assert by_grid[("16384", "1x2")][10] == "0.800"
    assert by_grid[("32768 (weak 16384)", "2x2")][10] == "0.900"
    assert by_grid[("16384 (weak 16384)", "1x1")][10] == "1.000"
    # A weak run is never measured against the strong 1x1 run of its own n (there is none here).
    assert by_grid[("16384", "1x1")][10] == "1.000"


def test_efficiency_is_against_the_fastest_one_gpu_record(tmp_path):
    n = 16384
    slow_block = dict(record(n, "1x1", 1.25), block=2048)
    channels = dict(record(n, "2x2", 0.3125, variant="ring"), nccl_max_channels=4)
    rows = table(tmp_path, [record(n, "1x1", 1.0), slow_block, record(n, "2x2", 0.3125, variant="ring"), channels])
    multi = [r for r in rows if r[5] == "2x2"]
    # 1 / (4 · 0.3125) = 0.8 against the faster 1x1 record, not 1.25 / 1.25 = 1.0 against the slower one.
    assert [r[10] for r in multi] == ["0.800", "0.800"]
    # A run under a non-default NCCL setting says so in its variant.
    assert sorted(r[6] for r in multi) == ["ring", "ring, NCCL ≤ 4 channels"]


def campaign_table(tmp_path, records):
    """The Markdown rows of one campaign (records carry their part, as campaigns.py pack writes them)."""
    path = tmp_path / "2026-01-01-gpu.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = subprocess.run([sys.executable, str(ROOT / "lab" / "reports" / "summa_table.py"), "--markdown", str(path)],
                          capture_output=True, text=True, check=True)
    return [line.split(" | ") for line in done.stdout.splitlines()[2:]]


def test_a_part_without_a_one_gpu_run_borrows_the_named_parts_and_says_so(tmp_path):
    n = 16384
    rows = campaign_table(tmp_path, [
        dict(record(n, "1x1", 1.0), part="a"),
        dict(record(n, "2x2", 0.3125, variant="ring"), part="b", baseline_part="a", panel_comm="≤8 CTAs; communication first"),
        dict(record(n, "2x2", 0.3125, variant="ring"), part="c"),             # no 1x1 and none named: no efficiency
        dict(record(n, "1x1", 0.5), part="a-spread", gpu=0, alongside=4),     # a spread run: not a baseline, not a row
    ])
    by_part = {r[0].lstrip("| "): r for r in rows}
    assert by_part["b"][10] == "0.800 †"
    assert by_part["b"][6] == "ring (≤8 CTAs; communication first)"
    assert by_part["c"][10] == ""
    assert "a-spread" not in by_part
    assert by_part["a"][6] == "broadcast"
