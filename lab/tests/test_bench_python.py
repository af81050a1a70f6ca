"""lab/python: the training-step benchmark's two models agree (on the CPU, small), every script
refuses to run without a CUDA device, saying why, and call_overhead.py --cpu writes its host figures
anywhere (with the ringmm tool: RINGMM_CLI). The GPU timings need a GPU (lab/python/run.sh)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="the Python benchmarks need torch")
import ringmm  # noqa: E402

BENCH = pathlib.Path(__file__).resolve().parents[2] / "lab" / "python"
SCRIPTS = ("call_overhead.py", "large_product.py", "training_step.py")


@pytest.fixture
def training_step(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import training_step

    return training_step


@pytest.mark.parametrize("size,chunk", [(40, 16), (33, 64)])
def test_the_torch_model_computes_what_ringmm_torch_does(training_step, size, chunk):
    agreement = training_step.compare(torch, size, chunk, "cpu")
    assert agreement["loss_ringmm"] == pytest.approx(agreement["loss_torch"], rel=1e-5)
    assert agreement["grad_x_error"] < 1e-5 and agreement["grad_y_error"] < 1e-5


@pytest.mark.skipif(torch.cuda.is_available() and bool(ringmm.info()["cuda_devices"]),
                    reason="with a CUDA device the scripts would run the benchmarks")
@pytest.mark.parametrize("script", SCRIPTS)
def test_without_cuda_the_scripts_exit_saying_why(script, tmp_path):
    out = tmp_path / "result.json"
    run = subprocess.run([sys.executable, str(BENCH / script), "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "needs a CUDA device" in run.stderr or "cannot run on the GPU" in run.stderr
    assert not out.exists()


CLI = os.environ.get("RINGMM_CLI") or shutil.which("ringmm")


@pytest.mark.skipif(not CLI or not os.access(CLI, os.X_OK), reason="the ringmm tool was not found (set RINGMM_CLI)")
def test_call_overhead_on_the_host(tmp_path):
    out = tmp_path / "result.json"
    run = subprocess.run([sys.executable, str(BENCH / "call_overhead.py"), "--cpu", "--reps", "20", "--ringmm", CLI,
                          "--out", str(out)], capture_output=True, text=True, cwd=BENCH)
    assert run.returncode == 0, run.stderr
    result = json.loads(out.read_text())
    assert result["benchmark"] == "call_overhead" and result["torch"] == torch.__version__
    kernels = {(r["kernel"], r["m"]) for r in result["records"]}
    for size in (1, 8, 64):
        for call in ("numpy", "numpy out=", "torch cpu", "torch cpu out="):
            assert (f"ringmm.matmul {call}, host clock", size) in kernels
        assert ("ringmm bench (C++ API), host clock", size) in kernels
    assert all(r["backend"] == "cpu" and r["seconds"] > 0 for r in result["records"])
    assert [t["target"] for t in result["targets"]] == [
        "host call overhead above C++ (64^3 f32 max-plus, numpy)",
        "host call overhead above C++ (64^3 f32 max-plus, torch cpu)"]
