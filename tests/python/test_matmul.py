"""ringmm.matmul on numpy arrays against the broadcast-and-reduce reference: every semiring × dtype
of the registry, odd shapes, transposed and strided operands, batches, vectors, alpha, beta, c."""

import numpy as np
import pytest

import ringmm
from entry_probe import matmul_copies
from reference import SPECS, assert_matches, random_operand, reference

PAIRS = [(s.name, d) for s in ringmm.semirings() for d in s.dtypes]
SHAPES = [(0, 5, 3), (4, 0, 6), (5, 3, 0), (1, 1, 1), (7, 33, 5), (33, 7, 127), (129, 127, 33), (1, 129, 2)]


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def needs_reference(semiring):
    if semiring not in SPECS:
        pytest.skip(f"no numpy reference for {semiring} in tests/python/reference.py")


def copies(a, b, out=None, trans_a=False, trans_b=False, semiring="max_plus"):
    """The operands ringmm.matmul copies: the rest are read (or written) in place."""
    return matmul_copies(ringmm.matmul, a, b, semiring, out=out, trans_a=trans_a, trans_b=trans_b)


@pytest.mark.parametrize("semiring,dtype", PAIRS)
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_every_pair_and_shape(semiring, dtype, m, k, n, rng):
    needs_reference(semiring)
    a = random_operand(semiring, dtype, (m, k), rng)
    b = random_operand(semiring, dtype, (k, n), rng)
    assert_matches(semiring, ringmm.matmul(a, b, semiring), reference(semiring, a, b), k)


@pytest.mark.parametrize("semiring,dtype", PAIRS)
def test_alpha_beta_c(semiring, dtype, rng):
    needs_reference(semiring)
    a, b, c = (random_operand(semiring, dtype, s, rng) for s in [(9, 17), (17, 6), (9, 6)])
    spec = SPECS[semiring]
    alpha, beta = (1, 0) if dtype in ("bool", "uint8") else (2, 1) if spec.low == 0 else (2, -1)
    want = reference(semiring, a, b, c, alpha, beta)
    assert_matches(semiring, ringmm.matmul(a, b, semiring, c=c, alpha=alpha, beta=beta), want, 17, scale=3)
    # c alone: beta = 1̄, and c is read, not written
    c_before = c.copy()
    assert_matches(semiring, ringmm.matmul(a, b, semiring, c=c), reference(semiring, a, b, c), 17, scale=3)
    np.testing.assert_array_equal(c, c_before)


def test_integer_tropical_alpha_takes_infinity(rng):
    a = random_operand("max_plus", "int32", (4, 5), rng)
    b = random_operand("max_plus", "int32", (5, 3), rng)
    got = ringmm.matmul(a, b, "max_plus", alpha=-np.inf)  # α = 0̄: every entry is the sentinel
    np.testing.assert_array_equal(got, np.full((4, 3), -(2**30 - 1), np.int32))


def test_hyphenated_and_registry_names(rng):
    a = random_operand("max_plus", "float32", (5, 4), rng)
    b = random_operand("max_plus", "float32", (4, 3), rng)
    want = reference("max_plus", a, b)
    for name in ("max_plus", "max-plus"):
        np.testing.assert_array_equal(ringmm.matmul(a, b, name), want)
    x = rng.random((4, 4)) < 0.5
    for name in ("lor_land", "or-and", "or_and"):
        np.testing.assert_array_equal(ringmm.matmul(x, x, name), reference("lor_land", x, x))
    np.testing.assert_array_equal(ringmm.matmul(a, b), want)  # max_plus is the default


@pytest.mark.parametrize("semiring,dtype", [("max_plus", "float32"), ("plus_times", "float64"), ("min_max", "int32")])
def test_transposes_and_views(semiring, dtype, rng):
    base_a = random_operand(semiring, dtype, (40, 70), rng)
    base_b = random_operand(semiring, dtype, (70, 50), rng)
    cases = {
        # name: (a, b, trans_a, trans_b, read in place)
        "row-major": (base_a, base_b, False, False, True),
        "transposed views": (base_a.T.copy().T, base_b.T.copy().T, False, False, True),
        "trans flags": (base_a.T.copy(), base_b.T.copy(), True, True, True),
        "trans flags on views": (base_a.T, base_b.T, True, True, True),
        "Fortran order": (np.asfortranarray(base_a), np.asfortranarray(base_b), False, False, True),
        "row slices (ld > cols)": (base_a[::2], base_b[:, :25], False, False, True),
        "column slices (ld > rows)": (base_a.T.copy()[::2].T, base_b, False, False, True),
        "strided both ways": (base_a[::2, ::3], base_b[::3, ::2], False, False, False),
        "reversed": (base_a[::-1], base_b[:, ::-1], False, False, False),
    }
    for name, (a, b, ta, tb, in_place) in cases.items():
        k = a.shape[0] if ta else a.shape[1]
        b = b[:k] if not tb else b[:, :k]
        want = reference(semiring, a.T if ta else a, b.T if tb else b)
        assert_matches(semiring, ringmm.matmul(a, b, semiring, trans_a=ta, trans_b=tb), want, k)
        assert (copies(a, b, trans_a=ta, trans_b=tb, semiring=semiring) == []) == in_place, name


@pytest.mark.parametrize("a_shape,b_shape,copied", [
    ((3, 7, 5), (3, 5, 4), []),
    ((2, 3, 7, 5), (5, 4), []),  # a matrix reused for every member: stride 0
    ((7, 5), (2, 3, 5, 4), []),
    ((1, 7, 5), (4, 5, 4), []),  # a batch dimension of 1: stride 0
    # members repeat in patterns that no single stride steps through: broadcast copies
    ((2, 1, 7, 5), (3, 5, 4), ["a", "b"]),
    ((2, 1, 7, 5), (1, 3, 5, 4), ["a", "b"]),
    ((1, 1, 7, 5), (2, 3, 5, 4), []),
    ((0, 7, 5), (5, 4), []),
])
def test_batches_broadcast(a_shape, b_shape, copied, rng):
    a = random_operand("min_plus", "float32", a_shape, rng)
    b = random_operand("min_plus", "float32", b_shape, rng)
    got = ringmm.matmul(a, b, "min_plus")
    np.testing.assert_array_equal(got, reference("min_plus", a, b))
    assert got.shape == np.matmul(np.ones(a_shape), np.ones(b_shape)).shape
    assert copies(a, b) == copied


def test_broadcast_views_are_read_in_place(rng):
    a = random_operand("max_plus", "float64", (6, 8), rng)
    b = random_operand("max_plus", "float64", (5, 8, 3), rng)
    a_view = np.broadcast_to(a, (5, 6, 8))  # read-only, batch stride 0
    assert copies(a_view, b) == []
    np.testing.assert_array_equal(ringmm.matmul(a_view, b), reference("max_plus", a_view, b))
    batch_slice = b[::2]  # every other member
    assert copies(a, batch_slice) == []
    np.testing.assert_array_equal(ringmm.matmul(a, batch_slice), reference("max_plus", a, batch_slice))


@pytest.mark.parametrize("a_shape,b_shape", [((5,), (5, 3)), ((4, 5), (5,)), ((5,), (5,)), ((2, 4, 5), (5,)),
                                             ((5,), (2, 5, 3)), ((1,), (1,))])
def test_vectors_as_numpy_matmul(a_shape, b_shape, rng):
    a = random_operand("max_plus", "int32", a_shape, rng, zeros=0)
    b = random_operand("max_plus", "int32", b_shape, rng, zeros=0)
    got = ringmm.matmul(a, b, "max_plus")
    want_shape = np.matmul(np.ones(a_shape), np.ones(b_shape)).shape
    assert np.shape(got) == want_shape
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    np.testing.assert_array_equal(np.reshape(got, want_shape),
                                  reference("max_plus", a2, b2).reshape(want_shape))


def test_vectors_with_c_and_out(rng):
    a = random_operand("min_plus", "float64", (6,), rng)
    b = random_operand("min_plus", "float64", (6, 4), rng)
    c = random_operand("min_plus", "float64", (4,), rng)
    want = reference("min_plus", a[None, :], b, c[None, :])[0]
    out = np.empty(4)
    assert ringmm.matmul(a, b, "min_plus", c=c, out=out) is out
    np.testing.assert_array_equal(out, want)


def test_out(rng):
    a = random_operand("max_min", "float32", (3, 9, 8), rng)
    b = random_operand("max_min", "float32", (8, 5), rng)
    want = reference("max_min", a, b)
    out = np.empty((3, 9, 5), np.float32)
    assert ringmm.matmul(a, b, "max_min", out=out) is out
    np.testing.assert_array_equal(out, want)
    # An out that no view describes gets the result through a copy.
    big = np.zeros((3, 9, 10), np.float32)
    strided = big[..., ::2]
    assert copies(a, b, out=strided) == ["out"]
    ringmm.matmul(a, b, "max_min", out=strided)
    np.testing.assert_array_equal(strided, want)
    np.testing.assert_array_equal(big[..., 1::2], 0)
    # A transposed out is written in place.
    out_t = np.empty((3, 5, 9), np.float32).transpose(0, 2, 1)
    assert copies(a, b, out=out_t) == []
    ringmm.matmul(a, b, "max_min", out=out_t)
    np.testing.assert_array_equal(out_t, want)


@pytest.mark.parametrize("strided_out", [False, True])
def test_c_is_out_accumulates_in_place(strided_out, rng):
    a = random_operand("plus_times", "int32", (2, 6, 7), rng)
    b = random_operand("plus_times", "int32", (2, 7, 5), rng)
    c0 = random_operand("plus_times", "int32", (2, 6, 5), rng)
    c = np.zeros((2, 6, 10), np.int32)[..., ::2] if strided_out else np.empty_like(c0)
    c[...] = c0
    assert ringmm.matmul(a, b, "plus_times", c=c, out=c, alpha=3, beta=2) is c
    np.testing.assert_array_equal(c, reference("plus_times", a, b, c0, alpha=3, beta=2))


def test_c_broadcasts(rng):
    a = random_operand("max_plus", "float32", (2, 4, 6), rng)
    b = random_operand("max_plus", "float32", (6, 3), rng)
    for c in (random_operand("max_plus", "float32", (3,), rng), random_operand("max_plus", "float32", (4, 1), rng),
              np.float32(0.5)):
        np.testing.assert_array_equal(ringmm.matmul(a, b, c=c), reference("max_plus", a, b, np.broadcast_to(c, (2, 4, 3))))


def test_lists_and_bool(rng):
    np.testing.assert_array_equal(ringmm.matmul([[1.0, 2.0]], [[3.0], [4.0]], "plus_times"), [[11.0]])
    x = rng.random((5, 5)) < 0.3
    got = ringmm.matmul(x, x, "lor_land")
    assert got.dtype == bool
    np.testing.assert_array_equal(got, (x.astype(int) @ x.astype(int)) > 0)


def test_semirings_and_info():
    names = [s.name for s in ringmm.semirings()]
    for name in ("plus_times", "max_plus", "min_plus", "max_min", "lor_land", "max_times", "min_max"):
        assert name in names
    pairs = {s.name: s.dtypes for s in ringmm.semirings()}
    assert pairs["max_plus"] == ("float32", "float64", "int32")
    assert "bool" in pairs["lor_land"]
    info = ringmm.info()
    assert info["version"] == ringmm.__version__
    assert "cpu" in info["backends"]
    assert info["default_backend"] in info["backends"]


def test_cpu_backend_by_name(rng):
    a = random_operand("max_plus", "float32", (5, 4), rng)
    np.testing.assert_array_equal(ringmm.matmul(a, a.T, backend="cpu"), reference("max_plus", a, a.T))
