"""lab/reports/calls_table.py: one row per `ringmm calls` record (a refused graph said so), the
host -> host ratio, the sign-known gain paired by semiring and shape, and each narrow type's rate
beside its accumulator type's."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def record(**fields):
    base = {"device": "GPU", "backend": "cuda", "semiring": "max-plus", "type": "f32", "m": 64, "n": 64, "k": 64}
    return dict(base, **fields)


def test_rows_ratio_and_gain(tmp_path):
    calls = [
        record(kernel="ringmm calls", part="calls-f32", seconds=7e-6, host_seconds=5e-6, graph_seconds=6e-6),
        record(kernel="ringmm calls", part="calls-routes", type="i32", seconds=35e-6, host_seconds=35e-6),
        record(kernel="ringmm", part="calls-f32", seconds=1e-5),
        record(kernel="ringmm", part="host-4096", m=4096, n=4096, k=4096, seconds=0.005, seconds_with_transfers=0.0075),
    ]
    sign = [
        record(kernel="ringmm", part="generic", m=8192, n=8192, k=8192, updates_per_s=12e12),
        record(kernel="ringmm sign-known", part="known", m=8192, n=8192, k=8192, updates_per_s=15e12),
        record(kernel="ringmm sign-known", part="known-tile64", m=4096, n=4096, k=4096, updates_per_s=13e12),
        dict(backend="ceiling", device="GPU", kernel="microbench", semiring="max-plus", type="f32", updates_per_s=16e12),
    ]
    calls_path, sign_path, no_narrow = tmp_path / "calls.jsonl", tmp_path / "sign.jsonl", tmp_path / "narrow.jsonl"
    calls_path.write_text("".join(json.dumps(r) + "\n" for r in calls))
    sign_path.write_text("".join(json.dumps(r) + "\n" for r in sign))
    no_narrow.write_text("")
    out = subprocess.run([sys.executable, str(ROOT / "lab" / "reports" / "calls_table.py"), "--calls", str(calls_path),
                          "--sign-known", str(sign_path), "--narrow", str(no_narrow)],
                         capture_output=True, text=True, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert "| max-plus | f32 | 64³ | calls-f32 | 5.00 | 7.00 | 6.00 |" in rows
    assert "| max-plus | i32 | 64³ | calls-routes | 35.00 | 35.00 | refused |" in rows
    assert "| max-plus | f32 | 5.000 | 7.500 | 1.50× |" in rows
    assert "| max-plus | 8192³ | 12.00 | 15.00 | 1.25× |" in rows
    assert not any("4096³" in r for r in rows)  # a tile run has no generic partner
    assert "is 16.00." in out


def test_narrow_rows_pair_with_their_accumulator_type(tmp_path):
    narrow = [
        record(kernel="ringmm", part="floats", m=8192, n=8192, k=8192, updates_per_s=12.5e12),
        record(kernel="ringmm", part="floats", type="bf16", m=8192, n=8192, k=8192, updates_per_s=12.25e12),
        record(kernel="ringmm", part="int8", type="i32", semiring="min-plus", updates_per_s=10e12),
        record(kernel="ringmm", part="int8", type="i8", semiring="min-plus", updates_per_s=9.5e12),
        record(kernel="ringmm", part="int8", type="i8", semiring="max-plus", updates_per_s=9e12),  # no i32 partner
    ]
    paths = {}
    for name, records in (("calls", [record(kernel="ringmm calls", part="calls-f32", seconds=7e-6, host_seconds=5e-6)]),
                          ("sign", []), ("narrow", narrow)):
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in records))
    out = subprocess.run([sys.executable, str(ROOT / "lab" / "reports" / "calls_table.py"), "--calls", str(paths["calls"]),
                          "--sign-known", str(paths["sign"]), "--narrow", str(paths["narrow"])],
                         capture_output=True, text=True, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert "| max-plus | 8192³ | bf16 | 12.25 | f32 | 12.50 | 0.980 |" in rows
    assert "| min-plus | 64³ | i8 | 9.50 | i32 | 10.00 | 0.950 |" in rows
    assert not any("| max-plus | 64³ | i8" in r for r in rows)
