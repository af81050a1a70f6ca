"""lab/reports/campaigns.py finds the latest campaign of a kind and packs one session's files into one;
lab/reports/headline.py draws each pair's default call beside its baseline from the newest campaign
that covers every pair, and names that campaign in its caption."""

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lab" / "reports"))
import campaigns  # noqa: E402
import headline  # noqa: E402

DEVICE = "NVIDIA H100 80GB HBM3"
PAIRS = [("plus-times", "f32"), ("max-plus", "f32"), ("or-and", "u8"), ("log-plus", "f32")]


def bench(semiring, typ, rate, backend="cuda", kernel="ringmm", choice=None, date="2026-11-25T10:00:00Z"):
    r = {"suite": "bench", "device": DEVICE, "backend": backend, "kernel": kernel, "semiring": semiring, "type": typ,
         "product": "gemm", "m": 4096, "n": 4096, "k": 4096, "batch": 1, "seconds": 4096 ** 3 / rate,
         "updates_per_s": rate, "date": date}
    if choice:
        r["choice"] = choice
    return r


def ceiling(semiring, typ, rate):
    return {"suite": "bench", "device": DEVICE, "backend": "ceiling", "kernel": "microbench", "semiring": semiring,
            "type": typ, "product": "reg-reg", "updates_per_s": rate, "date": "2026-11-25T10:00:00Z"}


def campaign(results, kind, name, records):
    path = results / kind / f"{name}.jsonl"
    campaigns.write(path, records)
    return path


def full_run(date="2026-11-25T10:00:00Z"):
    return [bench("plus-times", "f32", 25e12, choice="cublas (heuristic)", date=date),
            bench("plus-times", "f32", 25.1e12, backend="cublas", kernel="cublasSgemm", date=date),
            bench("max-plus", "f32", 12e12, choice="b128x128_k8_t8x8_bcyc pad split 1 (heuristic)", date=date),
            ceiling("max-plus", "f32", 16e12),
            bench("or-and", "u8", 600e12, choice="tensor cores (heuristic)", date=date),
            bench("plus-times", "bf16", 390e12, backend="cublas", kernel="cublasGemmEx bf16", date=date),
            bench("log-plus", "f32", 20e12, choice="shift trick (heuristic)", date=date),
            ceiling("log-plus", "f32", 0.27e12)]


def test_latest_is_the_last_name_and_pack_keeps_the_part(tmp_path):
    assert campaigns.latest("shapes", tmp_path) is None
    campaign(tmp_path, "shapes", "2026-11-24-h100-d", [{"a": 1}])
    newest = campaign(tmp_path, "shapes", "2026-11-25-h100", [{"a": 2}])
    assert campaigns.latest("shapes", tmp_path) == newest
    for part in ("small", "large"):
        (tmp_path / f"shapes-h100-2026-11-26-{part}.json").write_text(json.dumps([{"suite": "bench", "m": 1}]))
    out, n = campaigns.pack("shapes", "2026-11-26-h100", sorted(tmp_path.glob("shapes-h100-*.json")), results=tmp_path)
    assert n == 2 and campaigns.latest("shapes", tmp_path) == out
    assert [(r["part"], r["_file"]) for r in campaigns.read(out)] == [("large", "large"), ("small", "small")]


def test_baselines_per_route():
    records = full_run()
    calls = headline.default_calls(records)
    assert headline.baseline(records, ("plus-times", "f32"), calls[("plus-times", "f32")])[1:] == (25.1e12, "cublas")
    assert headline.baseline(records, ("max-plus", "f32"), calls[("max-plus", "f32")])[1:] == (16e12, "ceiling")
    assert headline.baseline(records, ("or-and", "u8"), calls[("or-and", "u8")])[1:] == (390e12, "bf16")
    # log-plus is set beside SGEMM, never beside its streaming kernel's ceiling
    assert headline.baseline(records, ("log-plus", "f32"), calls[("log-plus", "f32")])[1:] == (25.1e12, "sgemm")
    assert headline.route(calls[("max-plus", "f32")]) == "own SIMT kernel"
    assert headline.route(calls[("or-and", "u8")]) == "tensor cores"


def test_the_newest_campaign_that_covers_every_pair_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    campaign(tmp_path, "targets", "2026-11-23-h100", full_run("2026-11-23T10:00:00Z"))
    campaign(tmp_path, "shapes", "2026-11-25-h100", full_run())
    campaign(tmp_path, "seeds", "2026-11-26-h100", full_run("2026-11-26T10:00:00Z")[:2])  # newer, not every pair
    name, caption = headline.draw(tmp_path, tmp_path / "img", PAIRS)
    assert name == "headline.png" and (tmp_path / "img" / name).stat().st_size > 0
    assert "shapes/2026-11-25-h100.jsonl" in caption and "not in that campaign" not in caption


def test_the_caption_goes_between_the_readme_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{headline.BEGIN}\nold text\n{headline.END}\n\nrest\n")
    headline.write_caption(readme, "New caption.")
    text = readme.read_text()
    assert "old text" not in text and "New caption." in text and text.endswith("\n\nrest\n")
