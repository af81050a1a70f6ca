"""examples/python/hmm_torch_training.py on the CPU with small sizes: its forward algorithm through
ringmm.torch equals the same algorithm written with torch alone (values and gradients), and training
lowers the negative log-likelihood."""

import importlib.util
import math
import pathlib

import pytest

torch = pytest.importorskip("torch", reason="the example trains with torch")

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "hmm_torch_training.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("hmm_torch_training", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_forward_algorithm_and_its_gradient_match_plain_torch(example):
    generator = torch.Generator().manual_seed(3)
    truth = example.random_hmm(5, 7, generator, torch.float64, "cpu")
    x = example.sample(truth, 9, 12, generator)
    results = []
    for matmul in (example.ringmm_log_plus, example.torch_log_plus):
        logits = {name: value.clone().requires_grad_() for name, value in truth.items()}
        value = example.log_likelihood(logits, x, matmul)
        value.sum().backward()
        results.append((value.detach(), {name: p.grad for name, p in logits.items()}))
    (ours, our_grads), (theirs, their_grads) = results
    torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
    for name in our_grads:
        torch.testing.assert_close(our_grads[name], their_grads[name], rtol=1e-10, atol=1e-12)


def test_training_lowers_the_negative_log_likelihood(example, capsys):
    result = example.main(["--states", "4", "--symbols", "6", "--length", "20", "--sequences", "64", "--steps", "60",
                           "--device", "cpu"])
    assert all(math.isfinite(v) for v in result.values())
    assert result["trained"] < result["initial"] - 0.1
    assert "trained" in capsys.readouterr().out
