"""lab/reports/scaling_model.py on synthetic records: the broadcast and overlap rules, efficiency 1 on one GPU, the
memory rule, and a calibration that recovers the link it was generated with. No GPU, no recorded campaign."""

import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "lab" / "reports"))
import scaling_model as sm  # noqa: E402

NET = sm.Network(nvlink_alpha=10e-6, nvlink_beta=300e9, ib_alpha=5e-6, ib_beta=40e9, gpus_per_node=8)
TRUE_ALPHA, TRUE_BETA = 30e-6, 40e9
FAST = 2e14  # updates/s: so fast that the synthetic runs are bound by their transfers


def settings(**changes):
    base = dict(net=NET, memory=80e9, block=1024, apsp_block=1024, sub_block=128, strip_overhead=50e-6,
                argmax_factor=0.55, noise=0.02, gpus=(64,), sizes=(65536,))
    return sm.Settings(**{**base, **changes})


def flat(rate):
    """A local rate that does not depend on the shape."""
    return sm.RateModel(rate, (1, 1, 1))


def test_broadcast_to_one_rank_is_free():
    for variant in ("broadcast", "ring"):
        for across in (False, True):
            assert sm.broadcast(1e9, 1, across, variant, NET).time(NET.nvlink_alpha, NET.nvlink_beta) == 0
    tree, ring = (sm.broadcast(8e6, 8, False, v, NET).time(1e-5, 1e10) for v in ("broadcast", "ring"))
    assert tree == pytest.approx(3 * 1e-5 + 8e6 / 1e10) and ring == pytest.approx(7 * (1e-5 + 8e6 / 1e10))  # store and forward


def test_grid_and_placement():
    assert [sm.near_square_grid(p) for p in (1, 6, 7, 12, 64, 1024)] == [(1, 1), (2, 3), (1, 7), (3, 4), (8, 8),
                                                                         (32, 32)]
    assert sm.spans_nodes(8, 8, 8) == (False, True)    # rows of 8 in a node of 8, columns across nodes
    assert sm.spans_nodes(8, 8, 4) == (True, True)
    assert sm.spans_nodes(2, 4, 8) == (False, False)   # the whole grid in one node


def test_efficiency_is_one_on_one_gpu():
    fit = sm.Fit(NET.nvlink_alpha, NET.nvlink_beta, {"broadcast": 0.9, "ring": 0.9})
    for variant in ("broadcast", "ring"):
        row = sm.summa_prediction(16384, 1, variant, flat(1e13), fit, settings())
        assert row["efficiency"] == pytest.approx(1, abs=1e-12) and row["comm_share"] == pytest.approx(0, abs=1e-12)
    assert sm.apsp_prediction(16384, 1, flat(5e12), NET, settings())["efficiency"] == pytest.approx(1, abs=1e-12)


def test_transfers_hide_behind_a_long_product():
    fit = sm.Fit(NET.nvlink_alpha, NET.nvlink_beta, {})
    slow = sm.summa_prediction(131072, 64, "broadcast", flat(1e12), fit, settings())
    steps = sm.summa_steps(131072, 131072, 131072, 8, 8, 1024, "broadcast", 4, flat(1e12), NET)
    assert slow["comm_share"] < 1e-3 and slow["efficiency"] == pytest.approx(1, abs=1e-3)
    assert steps.time(NET.nvlink_alpha, NET.nvlink_beta) == pytest.approx(steps.compute(), rel=1e-3)
    fast = sm.summa_prediction(131072, 64, "broadcast", flat(1e15), fit, settings())
    assert fast["efficiency"] < 0.5  # the same transfers, now longer than the product


def test_does_not_fit():
    # n = 2^20 f32 on 8x8: A, B and C of 2^36 bytes each plus panels, more than 80 GB; on 16x16 a quarter of it.
    assert sm.summa_memory(2 ** 20, 2 ** 20, 2 ** 20, 8, 8, 1024, 4) > 80e9
    assert sm.summa_memory(2 ** 20, 2 ** 20, 2 ** 20, 16, 16, 1024, 4) < 80e9
    assert sm.apsp_memory(2 ** 20, 8, 8, 1024, 4) == 3 * 4 * 2 ** 34  # distances, successors, k buffer
    fit = sm.Fit(NET.nvlink_alpha, NET.nvlink_beta, {})
    assert not sm.summa_prediction(2 ** 20, 64, "ring", flat(1e13), fit, settings())["fits"]
    assert sm.summa_prediction(2 ** 20, 256, "ring", flat(1e13), fit, settings())["fits"]
    assert not sm.apsp_prediction(2 ** 20, 64, flat(1e13), NET, settings())["fits"]


def summa_record(n, pr, pc, variant, seconds):
    return {"suite": "summa", "device": "GPU", "part": "synthetic", "semiring": "max-plus", "type": "f32", "m": n,
            "n": n, "k": n, "ranks": pr * pc, "grid_rows": pr, "grid_cols": pc, "block": 256, "variant": variant,
            "seconds": seconds, "updates_per_s": n ** 3 / seconds}


def synthetic_campaign():
    """1x1 records at a fast rate and multi-GPU records timed by the model itself with the true link."""
    true_net = sm.Network(TRUE_ALPHA, TRUE_BETA, NET.ib_alpha, NET.ib_beta, 8)
    records = []
    for n in (2048, 4096, 8192):
        records.append(summa_record(n, 1, 1, "broadcast", n ** 3 / FAST))
        for pr, pc in ((1, 2), (2, 1), (2, 2), (1, 4)):
            for variant in ("broadcast", "ring"):
                steps = sm.summa_steps(n, n, n, pr, pc, 256, variant, 4, flat(FAST), true_net)
                records.append(summa_record(n, pr, pc, variant, float(steps.time(TRUE_ALPHA, TRUE_BETA))))
    return records


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def run(tmp_path, *extra):
    out = tmp_path / "model.json"
    md = tmp_path / "model.md"
    summa = write(tmp_path / "summa.jsonl", synthetic_campaign())
    sm.main(["--summa", summa, "--json", str(out), "--markdown", str(md), "--gpus", "64", "--sizes", "65536", *extra])
    return json.loads(out.read_text()), md.read_text()


def test_calibration_recovers_the_link(tmp_path, capsys):
    model, text = run(tmp_path)
    fit = model["fit"]
    assert fit["identified"] and fit["cases"] == 24
    assert fit["alpha"] == pytest.approx(TRUE_ALPHA, rel=0.05)
    assert fit["beta"] == pytest.approx(TRUE_BETA, rel=0.05)
    assert fit["eta"] == {"broadcast": 1.0, "ring": 1.0}  # the transfers hide the products: eta keeps 1
    assert all(abs(r["error"]) < 0.01 for r in model["check"])
    # The 4-GPU records, predicted by the fit on the 1- and 2-GPU records alone.
    assert len(model["held_out"]) == 12 and all(abs(r["error"]) < 0.01 for r in model["held_out"])
    assert text.startswith("Generated by `lab/reports/scaling_model.py` from SUMMA: ")
    assert sm.REFERENCE in text and capsys.readouterr().out == text


def test_apsp_records_are_compared(tmp_path):
    apsp = [{"suite": "apsp", "ranks": r, "grid_rows": 1, "grid_cols": r, "n": 8192, "block": 1024,
             "seconds": s, "type": "f32", "device": "GPU", "part": "synthetic"} for r, s in ((1, 10.0), (2, 6.0))]
    model, text = run(tmp_path, "--apsp", write(tmp_path / "apsp.jsonl", apsp))
    rows = model["apsp_check"]
    assert [r["grid"] for r in rows] == ["1x1", "1x2"] and rows[1]["measured_efficiency"] == pytest.approx(10 / 12)
    assert "APSP records against the model" in text


def test_clear_errors(tmp_path, capsys):
    with pytest.raises(SystemExit):
        sm.main(["--summa", str(tmp_path / "missing.jsonl")])
    assert "no such file" in capsys.readouterr().err
    empty = write(tmp_path / "bench.jsonl", [{"suite": "bench", "m": 1, "n": 1, "k": 1}])
    with pytest.raises(SystemExit):
        sm.main(["--summa", empty])
    assert "no usable SUMMA records" in capsys.readouterr().err
    only_multi = write(tmp_path / "multi.jsonl", [summa_record(4096, 1, 2, "ring", 1.0)])
    with pytest.raises(SystemExit):
        sm.main(["--summa", only_multi])
    assert "no 1x1 SUMMA record" in capsys.readouterr().err
