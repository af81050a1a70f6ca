"""torch, cupy and jax arrays through DLPack: results in the caller's type, on the caller's device
and stream. Each test skips cleanly where its framework (or a CUDA device) is missing (conftest.py)."""

import numpy as np
import pytest

import ringmm
from devices import cuda_build_with_device
from reference import assert_matches, random_operand, reference


@pytest.fixture
def rng():
    return np.random.default_rng(7)


# ---- torch ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("semiring,dtype", [("max_plus", "float32"), ("min_plus", "int32"), ("plus_times", "float64"),
                                            ("lor_land", "bool"), ("max_min", "float32")])
def test_torch(torch, device, semiring, dtype, rng):
    if device == "cuda" and not (torch.cuda.is_available() and cuda_build_with_device()):
        pytest.skip("needs torch with a CUDA device and ringmm's CUDA backend")
    a = random_operand(semiring, dtype, (3, 37, 65), rng)
    b = random_operand(semiring, dtype, (65, 29), rng)
    ta, tb = torch.from_numpy(a).to(device), torch.from_numpy(b).to(device)
    got = ringmm.matmul(ta, tb, semiring)
    assert isinstance(got, torch.Tensor) and got.device == ta.device and got.dtype == ta.dtype
    assert_matches(semiring, got.cpu().numpy(), reference(semiring, a, b), 65)
    # transposed views, a broadcast batch of 1 and a vector
    got = ringmm.matmul(tb.T, ta[:1].transpose(-1, -2), semiring)
    assert_matches(semiring, got.cpu().numpy(), reference(semiring, b.T, a[:1].transpose(0, 2, 1)), 29)
    got = ringmm.matmul(ta, tb[:, 0], semiring)
    assert_matches(semiring, got.cpu().numpy(), reference(semiring, a, b[:, :1])[..., 0], 65)


def test_torch_requires_grad_out_and_c(torch, rng):
    a = torch.from_numpy(random_operand("max_plus", "float32", (2, 1, 6, 9), rng)).requires_grad_()
    b = torch.from_numpy(random_operand("max_plus", "float32", (3, 9, 4), rng))
    c = torch.from_numpy(random_operand("max_plus", "float32", (4,), rng))
    out = torch.empty(2, 3, 6, 4)
    assert ringmm.matmul(a, b, c=c, out=out) is out
    want = reference("max_plus", a.detach().numpy(), b.numpy(), c.numpy())
    np.testing.assert_array_equal(out.numpy(), want)


def test_torch_cuda_runs_on_the_current_stream(torch_cuda, rng):
    torch = torch_cuda
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        a = torch.rand(8, 300, 200, device="cuda")
        b = torch.rand(200, 100, device="cuda")
        a.mul_(3)  # queued on `stream` before the product, which must see it
        got = ringmm.matmul(a, b, "max_plus")
        got.add_(1)  # queued after it
    stream.synchronize()
    want = reference("max_plus", a.cpu().numpy(), b.cpu().numpy()) + np.float32(1)
    np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_torch_cuda_out_c_and_errors(torch_cuda, rng):
    torch = torch_cuda
    a = torch.from_numpy(random_operand("min_plus", "float64", (5, 7), rng)).cuda()
    b = torch.from_numpy(random_operand("min_plus", "float64", (7, 3), rng)).cuda()
    c = torch.from_numpy(random_operand("min_plus", "float64", (5, 3), rng)).cuda()
    out = torch.empty(3, 5, dtype=torch.float64, device="cuda").T  # a transposed view, written in place
    assert ringmm.matmul(a, b, "min_plus", c=c, beta=1.0, out=out) is out
    want = reference("min_plus", a.cpu().numpy(), b.cpu().numpy(), c.cpu().numpy())
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    with pytest.raises(ValueError, match="b is on cpu but a is on cuda:0"):
        ringmm.matmul(a, b.cpu(), "min_plus")
    with pytest.raises(ValueError, match="backend 'cpu' cannot read arrays on cuda:0"):
        ringmm.matmul(a, b, "min_plus", backend="cpu")
    bad = torch.full((5, 7), 2**29, dtype=torch.int32, device="cuda")
    keep = torch.full((5, 5), 3, dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match="outside the inputs"):
        ringmm.matmul(bad, bad.T, "max_plus", out=keep)
    assert bool((keep == 3).all())


# ---- cupy ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("semiring,dtype", [("max_plus", "float32"), ("max_plus", "int32"), ("min_max", "float32"),
                                            ("lor_land", "uint8"), ("max_times", "float64")])
def test_cupy(cupy, semiring, dtype, rng):
    a = random_operand(semiring, dtype, (2, 45, 33), rng)
    b = random_operand(semiring, dtype, (1, 33, 70), rng)
    got = ringmm.matmul(cupy.asarray(a), cupy.asarray(b), semiring)
    assert isinstance(got, cupy.ndarray)
    assert_matches(semiring, cupy.asnumpy(got), reference(semiring, a, b), 33)
    # strides no leading dimension describes: copied on the device
    ca = cupy.asarray(a)[:, ::2, ::3]
    got = ringmm.matmul(ca, cupy.asarray(b)[:, :11], semiring)
    assert_matches(semiring, cupy.asnumpy(got), reference(semiring, a[:, ::2, ::3], b[:, :11]), 11)


def test_cupy_runs_on_the_current_stream(cupy, rng):
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        a = cupy.random.rand(4, 256, 128, dtype=cupy.float32)
        b = cupy.random.rand(128, 64, dtype=cupy.float32)
        a *= 2
        got = ringmm.matmul(a, b, "min_plus")
        got += 1
    stream.synchronize()
    want = reference("min_plus", cupy.asnumpy(a), cupy.asnumpy(b)) + np.float32(1)
    np.testing.assert_array_equal(cupy.asnumpy(got), want)


# ---- jax -----------------------------------------------------------------------------------------

def test_jax_on_the_host(rng):
    jax = pytest.importorskip("jax")
    cpu = jax.devices("cpu")[0]
    a = random_operand("max_plus", "float32", (6, 5), rng)
    b = random_operand("max_plus", "float32", (5, 4), rng)
    got = ringmm.matmul(jax.device_put(a, cpu), jax.device_put(b, cpu), "max_plus")
    assert isinstance(got, jax.Array)
    np.testing.assert_array_equal(np.asarray(got), reference("max_plus", a, b))
