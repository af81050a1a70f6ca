"""bench/python: the training-step benchmark's two models agree (on the CPU, small), and every script
refuses to run without a CUDA device, saying why. The timings themselves need a GPU (bench/python/run.sh)."""

import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="the Python benchmarks need torch")
import ringmm  # noqa: E402

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python"
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
