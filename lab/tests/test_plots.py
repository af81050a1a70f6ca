"""lab/reports/plots.py: docs/seeds.md gets every seed's section with a verdict and every figure it links,
and says "not measured yet" instead of inventing numbers where records are missing. Skipped without
matplotlib (CI's environment need not have it; lab/reports/make_docs.sh requires it)."""

import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")
ROOT = pathlib.Path(__file__).resolve().parents[2]
SEEDS = ("000", "001", "002", "003", "004")


def plot(results, out):
    page = out / "seeds.md"
    subprocess.run([sys.executable, str(ROOT / "lab" / "reports" / "plots.py"), "--results", str(results),
                    "--img", str(out / "img"), "--page", str(page)], check=True, capture_output=True)
    return page.read_text()


def test_recorded_results_give_every_seed_a_verdict_and_every_linked_figure(tmp_path):
    text = plot(ROOT / "lab" / "results", tmp_path)
    for seed in SEEDS:
        assert f"## Seed {seed}:" in text
    assert text.count("**Verdict.**") == len(SEEDS)
    figures = re.findall(r"\(img/([^)]+\.png)\)", text)
    assert "headline.png" in figures
    for name in figures:
        assert (tmp_path / "img" / name).stat().st_size > 0


def test_missing_records_say_not_measured_and_draw_nothing(tmp_path):
    empty = tmp_path / "results"
    empty.mkdir()
    text = plot(empty, tmp_path)
    assert text.count("| not measured yet |") == len(SEEDS)
    assert not list((tmp_path / "img").glob("*.png"))
