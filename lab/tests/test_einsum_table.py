"""lab/reports/einsum_table.py: the printed table read back as records, and each ringmm.einsum row set
beside its baselines with the speed-up."""

import pathlib
import subprocess
import sys
import json

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "lab" / "reports" / "einsum_table.py"

LOG = """\
pair ijabc,abckl->ijkl                 ringmm.einsum max_plus                            6.000 ms    11.00
pair ijabc,abckl->ijkl                 ringmm.matmul max_plus (same product)             5.400 ms    12.00
bij,bjk->bik 16x256x256                ringmm.einsum log_plus                            0.250 ms         
bij,bjk->bik 16x256x256                torch-semiring-einsum log_einsum                  7.500 ms         
torch-semiring-einsum is not installed: its rows are skipped
"""


def test_log_to_records_and_page(tmp_path):
    log = tmp_path / "einsum.log"
    log.write_text(LOG)
    records = json.loads(subprocess.run([sys.executable, str(SCRIPT), "--from-log", str(log), "--device", "GPU"],
                                        capture_output=True, text=True, check=True).stdout)
    assert [r["kernel"] for r in records] == ["ringmm.einsum max_plus", "ringmm.matmul max_plus (same product)",
                                              "ringmm.einsum log_plus", "torch-semiring-einsum log_einsum"]
    assert records[0]["seconds"] == 0.006 and records[0]["updates_per_s"] == 11e12
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    page = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, check=True).stdout
    assert "| pair ijabc,abckl->ijkl | max_plus | ringmm.matmul max_plus (same product) | 6.000 | 5.400 | 0.90× |" in page
    assert "| bij,bjk->bik 16x256x256 | log_plus | torch-semiring-einsum log_einsum | 0.250 | 7.500 | 30.00× |" in page
