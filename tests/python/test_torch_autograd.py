"""ringmm.torch: gradients by torch.autograd.gradcheck (float64; float32 for max_min and min_max,
which have no float64), against numpy oracles of the documented rules (ties to the smallest k, log-plus
against torch's logsumexp), under torch.compile(fullgraph=True), through torch.library.opcheck, and
the errors. On CPU, and on CUDA where torch and ringmm's CUDA backend have a device."""

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="ringmm.torch needs torch")
import ringmm  # noqa: E402
import ringmm.torch  # noqa: E402
from reference import SPECS, reference, reference_argmax  # noqa: E402

SELECTING = ("max_plus", "min_plus", "max_min", "max_times", "min_max")
FLOAT32_ONLY = ("max_min", "min_max")  # the registry has no float64 max-min or min-max


def cuda_ready():
    return torch.cuda.is_available() and bool(ringmm.info()["cuda_devices"])


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not cuda_ready(), reason="needs torch with a CUDA device and ringmm's CUDA backend"))]


@pytest.fixture
def rng():
    return np.random.default_rng(5)


def tensor(x, device, grad=True):
    return torch.from_numpy(np.ascontiguousarray(x)).to(device).requires_grad_(grad)


def second_best_gap(semiring, a, b):
    """The smallest distance, over entries, between the winning term and the next one, and (max-min,
    min-max) between any two operands: finite differences are valid for steps below it."""
    a = a[None, :] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    terms = np.sort(SPECS[semiring].mul(a[..., :, :, None], b[..., None, :, :], a.dtype).astype(np.float64), axis=-2)
    gaps = [np.inf]
    if terms.shape[-2] > 1:
        gaps.append(np.min(terms[..., -1, :] - terms[..., -2, :] if semiring.startswith("max")
                           else terms[..., 1, :] - terms[..., 0, :]))
    if semiring in FLOAT32_ONLY:
        gaps.append(np.min(np.abs(a[..., :, :, None] - b[..., None, :, :])))
    return float(min(gaps))


def separated_operands(semiring, a_shape, b_shape, rng, gap):
    """Random operands whose every entry wins by more than `gap` (see second_best_gap)."""
    dtype = np.float32 if semiring in FLOAT32_ONLY else np.float64
    for _ in range(50):
        if semiring in FLOAT32_ONLY:  # distinct values on a grid: every two differ by 0.25 at least
            values = rng.permutation(np.prod(a_shape) + np.prod(b_shape)) * 0.25 - 8
            a, b = values[:np.prod(a_shape)].reshape(a_shape), values[np.prod(a_shape):].reshape(b_shape)
        else:
            low = 0.5 if semiring == "max_times" else -4
            a, b = rng.uniform(low, 4, a_shape), rng.uniform(low, 4, b_shape)
        a, b = a.astype(dtype), b.astype(dtype)
        if second_best_gap(semiring, a, b) > gap:
            return a, b
    raise AssertionError(f"no {semiring} operands of shapes {a_shape}, {b_shape} with gaps above {gap}")


SHAPES = [((3, 4), (4, 5)), ((1, 1), (1, 1)), ((7, 9), (9, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
          ((4,), (4, 3)), ((3, 4), (4,)), ((2, 3, 4), (2, 4, 1))]


def gradcheck(semiring, a, b, transpose=False):
    float32 = a.dtype == torch.float32
    tolerances = dict(eps=1e-2, atol=1e-3, rtol=1e-3) if float32 else {}

    def product(x, y):
        return ringmm.torch.matmul(x.mT if transpose else x, y, semiring)

    with pytest.warns(UserWarning, match="double precision") if float32 else _no_warning():
        assert torch.autograd.gradcheck(product, (a, b), **tolerances)


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("semiring", SELECTING)
@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_gradcheck_selecting(semiring, a_shape, b_shape, device, rng):
    a, b = separated_operands(semiring, a_shape, b_shape, rng, gap=0.1)
    gradcheck(semiring, tensor(a, device), tensor(b, device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_gradcheck_log_plus(a_shape, b_shape, device, rng):
    a, b = rng.normal(0, 2, a_shape), rng.normal(0, 2, b_shape)
    gradcheck("log_plus", tensor(a, device), tensor(b, device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("semiring", ["max_plus", "log_plus"])
def test_gradcheck_transposed_view(semiring, device, rng):
    a, b = separated_operands("max_plus", (4, 6), (6, 5), rng, gap=0.1)
    gradcheck(semiring, tensor(a.T, device), tensor(b, device), transpose=True)  # a stored 6x4, read as its .mT


def oracle_gradients(semiring, a, b, grad_c):
    """dA, dB by the documented rule: grad_c[i, j] goes to the term k_star[i, j] (first winner)."""
    k_star = reference_argmax(semiring, a, b)
    grad_a, grad_b = np.zeros(a.shape), np.zeros(b.shape)
    for (i, j), k in np.ndenumerate(k_star):
        if k < 0:
            continue
        x, y, g = a[i, k], b[k, j], grad_c[i, j]
        if semiring in ("max_plus", "min_plus"):
            share = (g, g)
        elif semiring == "max_times":
            share = (g * y, g * x)
        elif semiring == "max_min":
            share = (g, 0) if x <= y else (0, g)
        else:  # min_max
            share = (g, 0) if x >= y else (0, g)
        grad_a[i, k] += share[0]
        grad_b[k, j] += share[1]
    return grad_a, grad_b


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("semiring", SELECTING)
def test_ties_send_the_gradient_to_the_smallest_k(semiring, device, rng):
    dtype = np.float32 if semiring in FLOAT32_ONLY else np.float64
    spec = SPECS[semiring]
    a = rng.integers(max(spec.low, 0), spec.high + 1, (13, 17)).astype(dtype)  # few values: many ties
    b = rng.integers(max(spec.low, 0), spec.high + 1, (17, 11)).astype(dtype)
    a[3] = spec.zero(dtype)  # row 3 of c is 0̄: no gradient flows through it
    grad_c = rng.normal(size=(13, 11)).astype(dtype)
    ta, tb = tensor(a, device), tensor(b, device)
    ringmm.torch.matmul(ta, tb, semiring).backward(tensor(grad_c, device, grad=False))
    want_a, want_b = oracle_gradients(semiring, a, b, grad_c)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(ta.grad.cpu().numpy(), want_a, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(tb.grad.cpu().numpy(), want_b, rtol=tolerance, atol=tolerance)
    assert not ta.grad[3].any()


def test_a_tie_in_plain_sight():
    # every term of max-plus ties: all of the gradient goes to k = 0
    a = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)
    ringmm.torch.matmul(a, b, "max_plus").sum().backward()  # an expanded grad_c: stride 0
    assert a.grad.tolist() == [[4, 0, 0], [4, 0, 0]]
    assert b.grad.tolist() == [[2, 2, 2, 2], [0, 0, 0, 0], [0, 0, 0, 0]]


def sum_to(x, shape):
    """x summed over the dimensions that broadcasting added to `shape` (as autograd sums gradients)."""
    x = x.sum(axis=tuple(range(x.ndim - len(shape))))
    return x.sum(axis=tuple(d for d, n in enumerate(shape) if n == 1), keepdims=True)


@pytest.mark.parametrize("device", DEVICES)
def test_log_plus_gradient_is_the_softmax_weighted_sum(device, rng):
    a, b = rng.normal(0, 3, (2, 1, 9, 14)), rng.normal(0, 3, (3, 14, 6))
    a[0, 0, 2, ::2] = -np.inf  # scattered -inf entries get gradient 0
    a[1, 0, 4] = -np.inf  # a row of -inf: that row of c is -inf and passes nothing (never NaN)
    grad_c = rng.normal(size=(2, 3, 9, 6))
    ta, tb = tensor(a, device), tensor(b, device)
    c = ringmm.torch.matmul(ta, tb, "log_plus")
    c.backward(tensor(grad_c, device, grad=False))
    want_c = reference("log_plus", a, b)
    np.testing.assert_allclose(c.detach().cpu().numpy(), want_c, rtol=1e-14, atol=1e-12)
    with np.errstate(invalid="ignore"):
        weights = np.nan_to_num(np.exp(a[..., :, :, None] + b[..., None, :, :] - want_c[..., :, None, :]))
    weighted = grad_c[..., :, None, :] * weights  # (batch, M, K, N)
    np.testing.assert_allclose(ta.grad.cpu().numpy(), sum_to(weighted.sum(axis=-1), a.shape), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tb.grad.cpu().numpy(), sum_to(weighted.sum(axis=-3), b.shape), rtol=1e-10, atol=1e-12)
    assert not ta.grad[1, 0, 4].any() and not ta.grad[0, 0, 2, ::2].any()


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_full_graph(device, rng):
    a, b = separated_operands("max_plus", (5, 8), (8, 6), rng, gap=0.1)
    w = tensor(rng.normal(size=(5, 6)), device, grad=False)

    def loss(x, y):
        c = ringmm.torch.matmul(x, y, "max_plus")
        return (c * w).sum() + ringmm.torch.matmul(c, y.mT, "log-plus").logsumexp(dim=-1).sum()

    compiled = torch.compile(loss, fullgraph=True, backend="aot_eager")
    eager_inputs = tensor(a, device), tensor(b, device)
    compiled_inputs = tensor(a, device), tensor(b, device)
    loss(*eager_inputs).backward()
    value = compiled(*compiled_inputs)
    value.backward()
    torch.testing.assert_close(value, loss(*eager_inputs).detach())
    for eager, traced in zip(eager_inputs, compiled_inputs):
        torch.testing.assert_close(traced.grad, eager.grad)


def test_opcheck(rng):
    """Schemas, fake implementations (the shapes torch.compile sees) and autograd registration."""
    a, b = separated_operands("min_plus", (2, 3, 4), (4, 5), rng, gap=0.1)
    ta, tb = tensor(a, "cpu"), tensor(b, "cpu")
    ops = torch.ops.ringmm
    for trusted in (False, True):
        torch.library.opcheck(ops.selecting_matmul, (ta, tb, "min_plus", trusted))
        torch.library.opcheck(ops.log_plus_matmul, (ta, tb, trusted))
    c, k_star = ops.selecting_matmul(ta.detach(), tb.detach(), "min_plus", False)
    grad_c = torch.ones_like(c)
    torch.library.opcheck(ops.selecting_matmul_backward, (ta.detach(), tb.detach(), k_star, grad_c, "min_plus"))
    c = ops.log_plus_matmul(ta.detach(), tb.detach(), False)
    for trusted in (False, True):
        torch.library.opcheck(ops.log_plus_matmul_backward, (ta.detach(), tb.detach(), c, grad_c, trusted))


@pytest.mark.parametrize("semiring,bad", [("log_plus", float("inf")), ("max_times", -1.0)])
def test_trusted_inputs_skip_the_value_check_and_still_differentiate(semiring, bad):
    a = torch.rand(3, 4, dtype=torch.float64)
    b = torch.rand(4, 5, dtype=torch.float64)
    a[0, 0] = bad
    with pytest.raises(ValueError, match="outside the inputs"):
        ringmm.torch.matmul(a, b, semiring)
    a.requires_grad_(True)
    b.requires_grad_(True)
    c = ringmm.torch.matmul(a, b, semiring, trust_inputs=True)
    # Row 1 holds no refused value: it equals the checked product of that row.
    torch.testing.assert_close(c[1:].detach(), ringmm.torch.matmul(a[1:].detach(), b.detach(), semiring))
    c[1:].sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    assert torch.isfinite(a.grad[1:]).all()
    with pytest.raises(TypeError, match="trust_inputs must be True or False"):
        ringmm.torch.matmul(a, b, semiring, trust_inputs=1)


def test_errors():
    a = torch.rand(3, 4, dtype=torch.float64)
    b = torch.rand(4, 5, dtype=torch.float64)
    with pytest.raises(TypeError, match="does not differentiate plus_times"):
        ringmm.torch.matmul(a, b, "plus_times")
    with pytest.raises(TypeError, match="does not differentiate lor_land"):
        ringmm.torch.matmul(a, b, "or-and")
    with pytest.raises(ValueError, match="unknown semiring 'tropical'"):
        ringmm.torch.matmul(a, b, "tropical")
    with pytest.raises(TypeError, match="semiring must be a name"):
        ringmm.torch.matmul(a, b, None)
    with pytest.raises(TypeError, match="max_plus is differentiated for torch.float32, torch.float64, not torch.int32"):
        ringmm.torch.matmul(a.int(), b.int(), "max_plus")
    with pytest.raises(TypeError, match="max_min is differentiated for torch.float32, not torch.float64"):
        ringmm.torch.matmul(a, b, "max_min")
    with pytest.raises(TypeError, match="b has dtype torch.float32 but a has torch.float64"):
        ringmm.torch.matmul(a, b.float())
    with pytest.raises(TypeError, match="b must be a torch.Tensor, not ndarray"):
        ringmm.torch.matmul(a, b.numpy())
    with pytest.raises(ValueError, match="b is on meta but a is on cpu"):
        ringmm.torch.matmul(a, b.to("meta"))
    with pytest.raises(ValueError, match="inner dimensions differ: a has 4 columns but b has 3 rows"):
        ringmm.torch.matmul(a, a.T[:3])
    with pytest.raises(ValueError, match="batch dimensions \\(2,\\) of a and \\(3,\\) of b do not broadcast"):
        ringmm.torch.matmul(a.expand(2, 3, 4), b.expand(3, 4, 5))
    with pytest.raises(ValueError, match="a is a scalar"):
        ringmm.torch.matmul(a[0, 0], b)


def test_library_refusals_reach_the_caller():
    a = torch.rand(3, 4, dtype=torch.float64) - 1  # max-times refuses negative inputs
    with pytest.raises(ValueError, match="a: "):
        ringmm.torch.matmul(a, torch.rand(4, 2, dtype=torch.float64), "max_times")
    c = ringmm.torch.matmul(torch.zeros(2, 2, dtype=torch.float64, requires_grad=True),
                            torch.zeros(2, 2, dtype=torch.float64), "log_plus")
    with pytest.raises(ValueError, match="grad_c: element \\(0, 1\\) is nan; dC must hold finite values"):
        c.backward(torch.tensor([[0, float("nan")], [0, 0]], dtype=torch.float64))


@pytest.mark.skipif(not cuda_ready(), reason="needs torch with a CUDA device and ringmm's CUDA backend")
def test_cuda_and_cpu_operands_are_refused():
    with pytest.raises(ValueError, match="b is on cpu but a is on cuda:0"):
        ringmm.torch.matmul(torch.rand(2, 2, device="cuda"), torch.rand(2, 2), "log_plus")


def test_backward_entries_check_their_arrays_and_allocate_the_gradients(rng):
    from ringmm import _core

    a, b = np.zeros((2, 3, 4)), np.zeros((4, 5))
    c, grad_c = np.zeros((2, 3, 5)), np.zeros((2, 3, 5))
    grad_a, grad_b = _core.log_plus_backward(a, b, c, grad_c)
    assert isinstance(grad_a, np.ndarray) and grad_a.shape == (2, 3, 4) and grad_b.shape == (2, 4, 5)
    assert (grad_b == 0).all()  # c = log 4, so every weight is 1/4, and grad_c = 0
    # A grad_c that no leading dimension describes (strided both ways) is copied first.
    wide = np.ones((2, 6, 10))
    grad_a2, grad_b2 = _core.log_plus_backward(a, b, c, wide[:, ::2, ::2])
    want_a, want_b = _core.log_plus_backward(a, b, c, np.ones((2, 3, 5)))
    np.testing.assert_array_equal(grad_a2, want_a)
    np.testing.assert_array_equal(grad_b2, want_b)
    with pytest.raises(ValueError, match="grad_c has shape \\(2, 3, 4\\) but a ⊗ b has matrices of 3x5"):
        _core.log_plus_backward(a, b, c, np.zeros((2, 3, 4)))
    with pytest.raises(TypeError, match="k_star has dtype float64 where the winning k's are int32"):
        _core.argmax_backward(a, b, c, grad_c, "max_plus")
    with pytest.raises(TypeError, match="argmax_backward needs a semiring whose ⊕ selects one term"):
        _core.argmax_backward(a, b, c.astype(np.int32), grad_c, "plus_times")
    with pytest.raises(TypeError, match="gradients need float32 or float64 arrays, not int32"):
        ints = [x.astype(np.int32) for x in (a, b, c, grad_c)]
        _core.argmax_backward(*ints, "max_plus")
    with pytest.raises(ValueError, match="k_star: element \\(1, 2\\) is 4, not an index in \\[-1, 4\\)"):
        k_star = np.zeros((2, 3, 5), np.int32)
        k_star[1, 1, 2] = 4
        _core.argmax_backward(a, b, k_star, grad_c, "max_plus")
    with pytest.raises(TypeError, match="b is a torch array but a is a numpy array|a is a numpy array but b is a torch"):
        _core.log_plus_backward(a, torch.zeros(4, 5, dtype=torch.float64), c, grad_c)


def test_import_ringmm_does_not_import_torch():
    code = "import sys, ringmm; assert 'torch' not in sys.modules; ringmm.torch.matmul; assert 'torch' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
