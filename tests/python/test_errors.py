"""Every bad argument raises ValueError or TypeError naming the problem, before anything is written."""

import numpy as np
import pytest

import ringmm
from reference import I32_FINITE

A = np.arange(12, dtype=np.float32).reshape(3, 4)
B = np.arange(20, dtype=np.float32).reshape(4, 5)


def raises(kind, match, *args, **kwargs):
    with pytest.raises(kind, match=match):
        ringmm.matmul(*args, **kwargs)


def test_unknown_semiring_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown semiring 'max_times_plus'") as e:
        ringmm.matmul(A, B, "max_times_plus")
    for s in ringmm.semirings():
        assert s.name in str(e.value)
    raises(TypeError, "semiring must be a name", A, B, 3)


def test_dtypes():
    raises(TypeError, "max_plus does not support dtype uint8 \\(supported: float32, float64, int32\\)",
           A.astype(np.uint8), B.astype(np.uint8))
    raises(TypeError, "max_plus does not support dtype int64", A.astype(np.int64), B.astype(np.int64))
    raises(TypeError, "lor_land does not support dtype float32", A, B, "lor_land")
    raises(TypeError, "max_min does not support dtype float64", A.astype(np.float64), B.astype(np.float64), "max_min")
    raises(TypeError, "does not support dtype complex64", A.astype(np.complex64), B.astype(np.complex64))
    raises(TypeError, "b has dtype float64 but a has float32", A, B.astype(np.float64))


def test_shapes():
    raises(ValueError, "inner dimensions differ: op\\(a\\) is 3x4 but op\\(b\\) is 5x4 \\(b transposed\\)",
           A, B, trans_b=True)
    raises(ValueError, "inner dimensions differ", A, A)
    raises(ValueError, "batch dimensions \\(2,\\) of a and \\(3,\\) of b do not broadcast",
           np.zeros((2, 3, 4), np.float32), np.zeros((3, 4, 5), np.float32))
    raises(ValueError, "a is a scalar", np.float32(1), B)
    raises(ValueError, "trans_a needs a matrix: a is a vector", A[0], B, trans_a=True)
    raises(TypeError, "b is not an array of numbers", A, object())


def test_out_and_c():
    raises(ValueError, "out has shape \\(3, 4\\) but the result has shape \\(3, 5\\)", A, B,
           out=np.empty((3, 4), np.float32))
    raises(TypeError, "out has dtype float64 but a has float32", A, B, out=np.empty((3, 5)))
    readonly = np.empty((3, 5), np.float32)
    readonly.flags.writeable = False
    raises(ValueError, "out is not a writable array", A, B, out=readonly)
    raises(TypeError, "out must be an array", A, B, out=[[0] * 5] * 3)
    raises(ValueError, "c has shape \\(2, 5\\), which does not broadcast to the result's \\(3, 5\\)", A, B,
           c=np.zeros((2, 5), np.float32))
    raises(TypeError, "c has dtype float64", A, B, c=np.zeros((3, 5)))
    raises(ValueError, "beta scales c: pass c as well", A, B, beta=2.0)


def test_out_overlapping_an_operand():
    x = np.zeros((4, 4), np.float32)
    raises(ValueError, "overlaps", x, x, out=x)


def test_backend():
    raises(ValueError, "backend: unknown value 'gpu' \\(valid: auto, cpu, cuda\\)", A, B, backend="gpu")
    raises(TypeError, "backend must be 'auto', 'cpu' or 'cuda'", A, B, backend=None)
    if "cuda" not in ringmm.info()["default_backend"]:
        raises(ValueError, "cuda requested but", A, B, backend="cuda")


def test_library_refusals_name_the_value_and_leave_out_untouched():
    a = np.zeros((2, 3, 4), np.int32)
    a[1, 2, 3] = I32_FINITE + 1  # outside max-plus i32's domain, in the second member
    b = np.zeros((4, 5), np.int32)
    out = np.full((2, 3, 5), 7, np.int32)
    with pytest.raises(ValueError, match="a: element .* = 268435457 is outside the inputs max-plus i32 accepts"):
        ringmm.matmul(a, b, "max_plus", out=out)
    np.testing.assert_array_equal(out, 7)
    # The same through a c that is copied first: out still untouched.
    with pytest.raises(ValueError, match="outside the inputs"):
        ringmm.matmul(a, b, "max_plus", c=np.zeros((3, 5), np.int32), out=out)
    np.testing.assert_array_equal(out, 7)
    with pytest.raises(ValueError, match="c: element .* is outside"):
        ringmm.matmul(b.T, b, "min_plus", c=np.full((5, 5), -I32_FINITE - 5, np.int32))
    with pytest.raises(ValueError, match="finite nonnegative"):
        ringmm.matmul(-np.ones((2, 2)), np.ones((2, 2)), "max_times")
    with pytest.raises(ValueError, match="alpha: value 2.5"):
        ringmm.matmul(b.T, b, "plus_times", alpha=2.5)
    big = np.full((4, 4), 2**15, np.int32)
    with pytest.raises(ValueError, match="INT32_MAX|overflow|exceed"):
        ringmm.matmul(big, big, "plus_times")


def test_trusted_inputs_are_not_checked():
    a = -np.ones((2, 2))
    with pytest.raises(ValueError, match="outside the inputs"):
        ringmm.matmul(a, np.ones((2, 2)), "max_times", backend="cpu")
    c = ringmm.matmul(a, np.ones((2, 2)), "max_times", backend="cpu", trust_inputs=True)
    assert c.shape == (2, 2)
    with pytest.raises(ValueError, match="outside the inputs"):
        ringmm.syrk(a, "max_times", backend="cpu")
    assert ringmm.syrk(a, "max_times", backend="cpu", trust_inputs=True).shape == (2, 2)


def test_jax_on_gpu_is_refused_clearly():
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("jax has no GPU here")
    x = jax.numpy.ones((2, 2), jax.numpy.float32)
    raises(TypeError, "jax arrays on a GPU are not supported yet", x, x)


def test_arguments_that_no_conversion_reads_are_named():
    a = np.zeros((3, 3), np.float32)
    with pytest.raises(TypeError, match="alpha must be a number, not str"):
        ringmm.matmul(a, a, alpha="x")
    with pytest.raises(TypeError, match="beta must be a number, not list"):
        ringmm.matmul(a, a, c=a, beta=[1])
    with pytest.raises(TypeError, match="b has dtype >f4"):
        ringmm.matmul(a, a.astype(">f4"))
    with pytest.raises(TypeError, match="a is not an array of numbers"):
        ringmm.matmul([["x", "y"]], a[:2, :2])
    with pytest.raises(ValueError, match="i = 1180591620717411303424 is out of range"):
        ringmm.route(np.zeros((2, 2), np.int32), 2**70, 1)
