"""ringmm.matmul(..., return_argmax=True) against the numpy reference: the value, then the first k
whose term equals it, -1 where every term is 0̄ (and, with c, where beta ⊗ c wins or ties); every
selecting semiring × dtype, odd shapes, deliberate ties, transposed, strided, batched and broadcast
operands, vectors, out=, and torch tensors."""

import numpy as np
import pytest

import ringmm
from reference import SPECS, random_operand, reference, reference_argmax

SELECTING = ("max_plus", "min_plus", "max_min", "max_times", "min_max")
PAIRS = [(s.name, d) for s in ringmm.semirings() if s.name in SELECTING for d in s.dtypes]
SHAPES = [(0, 5, 3), (4, 0, 6), (5, 3, 0), (1, 1, 1), (7, 33, 5), (33, 7, 129), (129, 33, 7), (1, 129, 2)]


@pytest.fixture
def rng():
    return np.random.default_rng(23)


def tied_operand(semiring, dtype, shape, rng):
    """Few distinct values (small integers, some 0̄), so that many entries have several winning k."""
    spec, dtype = SPECS[semiring], np.dtype(dtype)
    x = rng.integers(spec.low, spec.high + 1, shape).astype(dtype)
    x[rng.random(shape) < 0.1] = spec.zero(dtype)
    return x


def check(semiring, a, b, got, **kwargs):
    """got = (value, k_star) of a ⊗ b against the reference; kwargs: c and beta."""
    value, k_star = got
    want = reference(semiring, a, b, kwargs.get("c"), beta=kwargs.get("beta"))
    np.testing.assert_array_equal(value, want)
    assert k_star.dtype == np.int32 and k_star.shape == want.shape
    np.testing.assert_array_equal(k_star, reference_argmax(semiring, a, b, **kwargs))


@pytest.mark.parametrize("semiring,dtype", PAIRS)
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_every_pair_and_shape(semiring, dtype, m, k, n, rng):
    a = random_operand(semiring, dtype, (m, k), rng)
    b = random_operand(semiring, dtype, (k, n), rng)
    check(semiring, a, b, ringmm.matmul(a, b, semiring, return_argmax=True))


@pytest.mark.parametrize("semiring,dtype", PAIRS)
def test_ties_go_to_the_smallest_k(semiring, dtype, rng):
    a = tied_operand(semiring, dtype, (37, 65), rng)
    b = tied_operand(semiring, dtype, (65, 29), rng)
    got = ringmm.matmul(a, b, semiring, return_argmax=True)
    check(semiring, a, b, got)
    terms = SPECS[semiring].mul(a[:, :, None], b[None, :, :], a.dtype)
    winners = (terms == got[0][:, None, :]).sum(axis=1)
    assert (winners > 1).mean() > 0.2  # the test data tie often


@pytest.mark.parametrize("semiring,dtype", PAIRS)
def test_entries_of_zero_get_minus_one(semiring, dtype, rng):
    a = random_operand(semiring, dtype, (6, 9), rng, zeros=0)
    b = random_operand(semiring, dtype, (9, 5), rng, zeros=0)
    zero = SPECS[semiring].zero(dtype)
    a[2] = zero  # row 2 of the result has no term but 0̄
    b[:, 3] = zero  # nor has column 3
    value, k_star = ringmm.matmul(a, b, semiring, return_argmax=True)
    assert (k_star[2] == -1).all() and (k_star[:, 3] == -1).all()
    assert (value[2] == zero).all() and (value[:, 3] == zero).all()
    assert (np.delete(np.delete(k_star, 2, axis=0), 3, axis=1) >= 0).all()


@pytest.mark.parametrize("semiring,dtype", [("max_plus", "float32"), ("min_plus", "int32"), ("max_times", "float64")])
def test_transposes_strides_and_views(semiring, dtype, rng):
    base_a = tied_operand(semiring, dtype, (40, 70), rng)
    base_b = tied_operand(semiring, dtype, (70, 50), rng)
    cases = {
        "trans flags": (base_a.T.copy(), base_b.T.copy(), True, True),
        "transposed views": (base_a.T.copy().T, base_b.T.copy().T, False, False),
        "row slices": (base_a[::2], base_b[:, :25], False, False),
        "strided both ways (copied)": (base_a[::2, ::3], base_b[::3, ::2], False, False),
        "reversed (copied)": (base_a[::-1], base_b[:, ::-1], False, False),
    }
    for name, (a, b, ta, tb) in cases.items():
        k = a.shape[0] if ta else a.shape[1]
        b = b[:k] if not tb else b[:, :k]
        got = ringmm.matmul(a, b, semiring, trans_a=ta, trans_b=tb, return_argmax=True)
        check(semiring, a.T if ta else a, b.T if tb else b, got)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((3, 7, 5), (3, 5, 4)),
    ((2, 3, 7, 5), (5, 4)),  # one b for every member: stride 0
    ((1, 7, 5), (4, 5, 4)),
    ((2, 1, 7, 5), (3, 5, 4)),  # broadcast copies
    ((0, 7, 5), (5, 4)),
    ((4, 33, 1), (1, 1, 9)),
])
def test_batches_broadcast(a_shape, b_shape, rng):
    a = tied_operand("max_plus", "float32", a_shape, rng)
    b = tied_operand("max_plus", "float32", b_shape, rng)
    value, k_star = ringmm.matmul(a, b, "max_plus", return_argmax=True)
    assert value.shape == np.matmul(np.ones(a_shape), np.ones(b_shape)).shape
    check("max_plus", a, b, (value, k_star))


@pytest.mark.parametrize("a_shape,b_shape", [((5,), (5, 3)), ((4, 5), (5,)), ((5,), (5,)), ((2, 4, 5), (5,))])
def test_vectors(a_shape, b_shape, rng):
    a = tied_operand("min_plus", "int32", a_shape, rng)
    b = tied_operand("min_plus", "int32", b_shape, rng)
    value, k_star = ringmm.matmul(a, b, "min_plus", return_argmax=True)
    want_shape = np.matmul(np.ones(a_shape), np.ones(b_shape)).shape
    assert np.shape(value) == want_shape and np.shape(k_star) == want_shape
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    np.testing.assert_array_equal(np.reshape(k_star, want_shape),
                                  reference_argmax("min_plus", a2, b2).reshape(want_shape))


@pytest.mark.parametrize("semiring,dtype", PAIRS)
def test_c_wins_its_ties_and_gets_minus_one(semiring, dtype, rng):
    a = tied_operand(semiring, dtype, (9, 17), rng)
    b = tied_operand(semiring, dtype, (17, 6), rng)
    product = reference(semiring, a, b)
    c = product.copy()
    c[::2] = tied_operand(semiring, dtype, c[::2].shape, rng)  # odd rows tie with the product exactly
    got = ringmm.matmul(a, b, semiring, c=c, return_argmax=True)
    check(semiring, a, b, got, c=c)
    assert (got[1][1::2] == -1).all()
    beta = SPECS[semiring].one(dtype)
    check(semiring, a, b, ringmm.matmul(a, b, semiring, c=c[0], beta=beta, return_argmax=True), c=c[0], beta=beta)


def test_split_k_carries_the_index(rng):
    """The rule for c gives split-K at once: the second part's -1 keeps the first part's index."""
    a = tied_operand("max_plus", "float64", (20, 30), rng)
    b = tied_operand("max_plus", "float64", (30, 10), rng)
    first, k_first = ringmm.matmul(a[:, :12], b[:12], "max_plus", return_argmax=True)
    value, k_second = ringmm.matmul(a[:, 12:], b[12:], "max_plus", c=first, return_argmax=True)
    k_star = np.where(k_second >= 0, k_second + 12, k_first)
    check("max_plus", a, b, (value, k_star))


@pytest.mark.parametrize("semiring,dtype", PAIRS)
def test_k_star_is_int32_below_k_two_to_the_31(semiring, dtype, rng):
    """matmul allocates an int64 k_star only past K = 2**31 - 1, too long a product to run here: the
    library's int64 argmax is tested by tests/cpu/argmax_int64_test.cpp (and its CUDA twin)."""
    a = tied_operand(semiring, dtype, (9, 17), rng)
    b = tied_operand(semiring, dtype, (17, 6), rng)
    value, k_star = ringmm.matmul(a, b, semiring, return_argmax=True)
    assert k_star.dtype == np.int32 and k_star.shape == value.shape
    # With c, k_star starts at -1 (filled by the framework) and the product keeps it where c wins.
    _, k_with_c = ringmm.matmul(a, b, semiring, c=value, return_argmax=True)
    assert k_with_c.dtype == np.int32 and (k_with_c == -1).all()


def test_out(rng):
    a = tied_operand("max_min", "float32", (2, 8, 11), rng)
    b = tied_operand("max_min", "float32", (11, 7), rng)
    out = np.empty((2, 8, 7), np.float32)
    got = ringmm.matmul(a, b, "max_min", out=out, return_argmax=True)
    assert got[0] is out
    check("max_min", a, b, got)
    transposed = np.empty((2, 7, 8), np.float32).transpose(0, 2, 1)  # written in place
    assert ringmm.matmul(a, b, "max_min", out=transposed, return_argmax=True)[0] is transposed
    np.testing.assert_array_equal(transposed, out)


@pytest.mark.parametrize("semiring,dtype", [("plus_times", "float32"), ("log_plus", "float64"), ("lor_land", "bool")])
def test_semirings_that_do_not_select_are_refused(semiring, dtype, rng):
    a = random_operand(semiring, dtype, (3, 4), rng)
    b = random_operand(semiring, dtype, (4, 5), rng)
    out = np.full((3, 5), 7, dtype)
    with pytest.raises(TypeError, match=f"return_argmax needs a semiring whose ⊕ selects one term "
                                        f"\\(max_plus, min_plus, max_min, max_times, min_max\\), not {semiring}"):
        ringmm.matmul(a, b, semiring, out=out, return_argmax=True)
    np.testing.assert_array_equal(out, np.full((3, 5), 7, dtype))


def test_torch_cpu_tensors(rng):
    torch = pytest.importorskip("torch")
    a = tied_operand("max_plus", "float32", (3, 37, 65), rng)
    b = tied_operand("max_plus", "float32", (65, 29), rng)
    value, k_star = ringmm.matmul(torch.from_numpy(a).requires_grad_(), torch.from_numpy(b), "max_plus",
                                  return_argmax=True)
    assert isinstance(k_star, torch.Tensor) and k_star.dtype == torch.int32 and k_star.device.type == "cpu"
    check("max_plus", a, b, (value.numpy(), k_star.numpy()))
    value, k_star = ringmm.matmul(torch.from_numpy(b).T, torch.from_numpy(a[:1]).transpose(-1, -2), "max_plus",
                                  return_argmax=True)
    check("max_plus", b.T, a[:1].transpose(0, 2, 1), (value.numpy(), k_star.numpy()))
