"""lab/reports/portable_table.py: ringmm's rows of the native and portable builds side by side, and the
target's verdict."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "lab" / "reports" / "portable_table.py"


def record(part, semiring, rate, kernel="ringmm"):
    return {"suite": "bench", "device": "GPU", "kernel": kernel, "semiring": semiring, "type": "f32", "m": 4096,
            "n": 4096, "k": 4096, "updates_per_s": rate, "part": part, "choice": "cfg"}


def test_ratios_and_target(tmp_path):
    path = tmp_path / "2026-01-01-gpu.jsonl"
    records = [record("native", "max-plus", 12e12), record("portable", "max-plus", 9e12),
               record("native", "min-plus", 12e12), record("native", "max-plus", 16e12, kernel="microbench")]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    page = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, check=True).stdout
    assert "| max-plus | f32 | 4096³ | 12.00 | 9.00 | 0.75× | cfg |" in page
    assert "min-plus" not in page  # measured in one build only
    assert "0.75×, missed." in page
