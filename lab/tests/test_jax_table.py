"""lab/reports/jax_table.py: one row per figure with its time and rate (none for XLA's own loop step),
and the targets as recorded."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_rows_and_targets(tmp_path):
    run = {"device": "GPU", "jax": "0.0"}
    records = [
        dict(run, kernel="ringmm.jax scan", m=64, n=64, k=64, seconds=8e-6, command_buffer=True),
        dict(run, kernel="XLA scan of an elementwise op", m=64, n=64, k=64, seconds=5e-6, what="XLA's loop step"),
        dict(run, kernel="ringmm bench", m=4096, n=4096, k=4096, seconds=4096.0 ** 3 / 12e12),
        dict(kind="target", device="GPU", name="jitted call above C++", value=-1.5, limit=5.0, unit="us", met=True),
    ]
    path = tmp_path / "jax.json"
    path.write_text(json.dumps({"records": records}))
    out = subprocess.run([sys.executable, str(ROOT / "lab" / "reports" / "jax_table.py"), str(path)],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1][:5] == ["| ringmm.jax scan", "64³", "8.00", "0.03", "yes |"]
    assert rows[2][:4] == ["| XLA scan of an elementwise op", "64³", "5.00", ""]
    assert rows[3][3] == "12.00"
    assert rows[5] == ["| jitted call above C++", "-1.500 us", "5.0 us", "yes |"]
