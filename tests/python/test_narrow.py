"""bfloat16, float16 and int8 operands in ringmm.matmul and ringmm.torch.matmul: the product of the
widened operands (float32; int32 with int8's own sentinels), float32 results or an out of the
narrow type rounded to nearest-even, on odd shapes, transposed, batched, on the CPU and on a GPU."""

import numpy as np
import pytest

import ringmm
from reference import I32_INF, assert_matches, reference

FLOAT_SEMIRINGS = ["max_plus", "min_plus", "max_min", "min_max", "log_plus"]
SHAPES = [(0, 3, 2), (1, 1, 1), (7, 33, 5), (33, 7, 129), (129, 1, 33)]


def narrow_operand(semiring, dtype, shape, rng):
    """float16 or bfloat16 data in [-4, 4) with some entries the semiring's 0̄ (−∞, or +∞ for min_plus
    and min_max)."""
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    x[rng.random(shape) < 0.05] = np.inf if semiring in ("min_plus", "min_max") else -np.inf
    return x.astype(dtype)


def bfloat16():
    return pytest.importorskip("ml_dtypes").bfloat16


@pytest.mark.parametrize("semiring", FLOAT_SEMIRINGS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("narrow", ["float16", "bfloat16"])
def test_numpy_float_operands_multiply_as_their_float32_values(semiring, shape, narrow):
    dtype = np.float16 if narrow == "float16" else bfloat16()
    m, n, k = shape
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    a, b = narrow_operand(semiring, dtype, (m, k), rng), narrow_operand(semiring, dtype, (k, n), rng)
    got = ringmm.matmul(a, b, semiring, backend="cpu")
    assert got.dtype == np.float32
    want = reference(semiring, a.astype(np.float32), b.astype(np.float32))
    assert_matches(semiring, got, want, k)
    # Transposed and batched: the same rule.
    at = np.ascontiguousarray(np.stack([a, a]).transpose(0, 2, 1))
    got_t = ringmm.matmul(at, b, semiring, trans_a=True, backend="cpu")
    assert_matches(semiring, got_t, np.stack([want, want]), k)


@pytest.mark.parametrize("semiring", ["max_plus", "min_plus", "log_plus"])
def test_an_out_of_the_narrow_type_takes_the_result_rounded_to_nearest_even(semiring):
    rng = np.random.default_rng(3)
    a = narrow_operand(semiring, np.float16, (33, 17), rng)
    b = narrow_operand(semiring, np.float16, (17, 9), rng)
    out = np.full((33, 9), 7, np.float16)
    assert ringmm.matmul(a, b, semiring, out=out, backend="cpu") is out
    f32 = ringmm.matmul(a.astype(np.float32), b.astype(np.float32), semiring, backend="cpu")
    np.testing.assert_array_equal(out, f32.astype(np.float16))  # numpy's cast rounds to nearest-even
    # With c (beta ⊗ c enters) and the argmax.
    c = narrow_operand("max_plus", np.float16, (33, 9), rng) if semiring != "log_plus" else np.zeros((33, 9), np.float16)
    out2 = np.empty((33, 9), np.float16)
    if semiring != "log_plus":
        _, k_star = ringmm.matmul(a, b, semiring, c=c, out=out2, return_argmax=True, backend="cpu")
        _, k_want = ringmm.matmul(a.astype(np.float32), b.astype(np.float32), semiring, c=c.astype(np.float32),
                                  return_argmax=True, backend="cpu")
        np.testing.assert_array_equal(k_star, k_want)


def test_a_narrow_out_of_the_wrong_shape_is_refused_and_left_untouched():
    a = np.ones((4, 3), np.float16)
    out = np.full((4, 5), 2, np.float16)
    with pytest.raises(ValueError, match="out has shape"):
        ringmm.matmul(a, np.ones((3, 2), np.float16), "max_plus", out=out)
    np.testing.assert_array_equal(out, 2)


@pytest.mark.parametrize("semiring,sentinel", [("max_plus", -128), ("min_plus", 127)])
@pytest.mark.parametrize("shape", SHAPES)
def test_int8_operands_multiply_in_int32_with_their_own_sentinel(semiring, sentinel, shape):
    m, n, k = shape
    rng = np.random.default_rng(m + 7 * n + 31 * k)
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    a.ravel()[::5] = sentinel
    got = ringmm.matmul(a, b, semiring, backend="cpu")
    assert got.dtype == np.int32

    def wide(x):
        w = x.astype(np.int32)
        w[x == sentinel] = -I32_INF if semiring == "max_plus" else I32_INF
        return w

    np.testing.assert_array_equal(got, reference(semiring, wide(a), wide(b)))


def wide_int8(x, semiring):
    """x widened to int32 as ringmm widens int8: its sentinel becomes int32's 0̄."""
    w = np.asarray(x).astype(np.int32)
    w[np.asarray(x) == INT8_SENTINEL[semiring]] = -I32_INF if semiring == "max_plus" else I32_INF
    return w


INT8_SENTINEL = {"max_plus": -128, "min_plus": 127}


def int8_operand(shape, semiring, rng):
    x = rng.integers(-128, 128, shape, dtype=np.int8)
    x.ravel()[::5] = INT8_SENTINEL[semiring]
    return x


# Two int8 matrices go to the C++ library's i8 gemm as they are (ringmm._core.matmul_int8); the
# layouts it reads in place (row- and column-major, a leading dimension) and those copied first
# (a column stride), with trans_a, trans_b and alpha.
@pytest.mark.parametrize("semiring", ["max_plus", "min_plus"])
@pytest.mark.parametrize("shape", SHAPES + [(65, 129, 1000)])
@pytest.mark.parametrize("layout", ["rows", "columns", "row stride", "column stride"])
def test_int8_matrices_multiply_as_they_are_on_every_layout(semiring, shape, layout):
    m, n, k = shape
    rng = np.random.default_rng(m + 3 * n + 5 * k)
    trans_a, trans_b = layout in ("columns", "row stride"), layout in ("columns", "column stride")
    a = int8_operand((k, m) if trans_a else (m, k), semiring, rng)
    b = int8_operand((n, k) if trans_b else (k, n), semiring, rng)
    views = {"rows": lambda x: x, "columns": lambda x: np.asfortranarray(x),
             "row stride": lambda x: np.repeat(x, 2, axis=0)[::2], "column stride": lambda x: np.repeat(x, 2, axis=1)[:, ::2]}
    va, vb = views[layout](a), views[layout](b)
    np.testing.assert_array_equal(va, a)
    got = ringmm.matmul(va, vb, semiring, alpha=3, trans_a=trans_a, trans_b=trans_b)
    assert got.dtype == np.int32 and got.shape == (m, n)
    want = reference(semiring, wide_int8(a.T if trans_a else a, semiring), wide_int8(b.T if trans_b else b, semiring),
                     alpha=np.int32(3))
    np.testing.assert_array_equal(got, want)


def int8_entry(a, b, semiring, alpha=None, trans_a=False, trans_b=False, backend="auto"):
    """The int8 entry called directly, with the arguments that ringmm.matmul never gives it (alpha)."""
    return ringmm._core.matmul_int8(a, b, semiring, alpha, trans_a, trans_b, backend, False)


# Batches in the int8 entry: broadcast leading dimensions (read with stride 0), and batches that no
# single stride steps through (copied first).
@pytest.mark.parametrize("semiring", ["max_plus", "min_plus"])
@pytest.mark.parametrize("shapes", [((3, 7, 33), (3, 33, 5)), ((1, 7, 33), (4, 33, 129)), ((2, 1, 7, 33), (3, 33, 5)),
                                    ((7, 33), (5, 33, 1)), ((0, 7, 33), (33, 5)), ((2, 3, 0, 4), (4, 6))])
def test_int8_batches_multiply_as_they_are(semiring, shapes):
    rng = np.random.default_rng(sum(map(sum, shapes)))
    a, b = int8_operand(shapes[0], semiring, rng), int8_operand(shapes[1], semiring, rng)
    got = int8_entry(a, b, semiring)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, reference(semiring, wide_int8(a, semiring), wide_int8(b, semiring)))
    np.testing.assert_array_equal(ringmm.matmul(a, b, semiring), got)  # ringmm.matmul takes the entry
    # Members read down their columns (in place), and members with a column stride (copied first).
    down_columns = np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)
    column_stride = np.repeat(a, 2, axis=-1)[..., ::2]
    for view in (down_columns, column_stride):
        np.testing.assert_array_equal(view, a)
        np.testing.assert_array_equal(int8_entry(view, b, semiring), got)


# ringmm.matmul takes the int8 entry for int8 matrices and batches of any size with nothing added,
# which the arguments alone decide (nothing is multiplied here).
def test_which_int8_calls_take_the_int8_entry():
    from ringmm import _narrow

    def takes(a_shape, b_shape, **kw):
        a, b = np.empty(a_shape, np.int8), np.empty(b_shape, np.int8)
        args = {"c": None, "out": None, "return_argmax": False, "beta": None, **kw}
        return _narrow.takes_int8_entry(a, b, **args)

    assert takes((1, 1), (1, 1)) and takes((5000, 3), (3, 2))
    assert takes((2, 512, 512), (512, 512)) and takes((4096, 64, 64), (4096, 64, 64)) and takes((7, 1, 2), (3, 2, 5))
    assert not takes((3,), (3, 2)) and not takes((2, 2), (2,))
    assert not takes((2, 2), (2, 2), c=np.zeros((2, 2), np.int32)) and not takes((2, 2), (2, 2), beta=0)
    assert not takes((2, 2), (2, 2), out=np.zeros((2, 2), np.int32))
    assert not takes((2, 2), (2, 2), return_argmax=True)
    assert not _narrow.takes_int8_entry(np.empty((2, 2), np.int8), np.empty((2, 2), np.int32), None, None, False, None)


def test_int8_matrices_are_refused_by_name():
    a = np.ones((3, 4), np.int8)
    with pytest.raises(ValueError, match="inner dimensions differ: op\\(a\\) is 3x4 but op\\(b\\) is 3x4"):
        ringmm.matmul(a, a, "max_plus")
    with pytest.raises(TypeError, match="int8 operands multiply in max_plus and min_plus only"):
        ringmm.matmul(a, a.T, "plus_times")
    with pytest.raises(ValueError, match="alpha"):
        ringmm.matmul(a, a.T, "max_plus", alpha=0.5)
    with pytest.raises(ValueError, match="unknown backend|backend"):
        ringmm.matmul(a, a.T, "max_plus", backend="tpu")


def test_int8_is_refused_where_it_has_no_sentinel():
    a = np.ones((2, 2), np.int8)
    with pytest.raises(TypeError, match="int8 operands multiply in max_plus and min_plus only"):
        ringmm.matmul(a, a, "max_min")


def test_torch_narrow_tensors(torch):
    g = torch.Generator().manual_seed(5)
    for dtype in (torch.bfloat16, torch.float16):
        a = torch.randn(7, 33, generator=g).to(dtype)
        b = torch.randn(33, 5, generator=g).to(dtype)
        got = ringmm.matmul(a, b, "max_plus", backend="cpu")
        assert got.dtype == torch.float32
        want = ringmm.matmul(a.float(), b.float(), "max_plus", backend="cpu")
        assert torch.equal(got, want)
        out = torch.empty(7, 5, dtype=dtype)
        ringmm.matmul(a, b, "max_plus", out=out, backend="cpu")
        assert torch.equal(out, want.to(dtype))
    i8 = torch.tensor([[-128, 3], [4, 5]], dtype=torch.int8)
    got = ringmm.matmul(i8, i8, "max_plus", backend="cpu")
    assert got.dtype == torch.int32
    assert got[0, 0].item() == 3 + 4  # the -128 terms are −∞


def test_torch_autograd_through_narrow_tensors(torch):
    import ringmm.torch as rt

    g = torch.Generator().manual_seed(9)
    a = torch.randn(5, 6, generator=g).to(torch.bfloat16).requires_grad_()
    b = torch.randn(6, 4, generator=g).to(torch.bfloat16).requires_grad_()
    c = rt.matmul(a, b, "log_plus")
    assert c.dtype == torch.float32
    c.sum().backward()
    assert a.grad.dtype == torch.bfloat16 and b.grad.dtype == torch.bfloat16
    a32 = a.detach().float().requires_grad_()
    b32 = b.detach().float().requires_grad_()
    rt.matmul(a32, b32, "log_plus").sum().backward()
    assert torch.equal(a.grad, a32.grad.to(torch.bfloat16))


def test_torch_cuda_narrow_tensors(torch_cuda):
    torch = torch_cuda
    g = torch.Generator().manual_seed(2)
    for dtype in (torch.bfloat16, torch.float16):
        a = torch.randn(129, 33, generator=g).to(dtype).cuda()
        b = torch.randn(33, 1000, generator=g).to(dtype).cuda()
        got = ringmm.matmul(a, b, "min_plus")
        assert got.dtype == torch.float32 and got.is_cuda
        assert torch.equal(got.cpu(), ringmm.matmul(a.cpu(), b.cpu(), "min_plus", backend="cpu"))
    i8 = torch.randint(-128, 128, (33, 65), dtype=torch.int8).cuda()
    got = ringmm.matmul(i8, i8.T.contiguous(), "min_plus")
    assert torch.equal(got.cpu(), ringmm.matmul(i8.cpu(), i8.T.contiguous().cpu(), "min_plus", backend="cpu"))


# On a GPU two int8 matrices multiply as 16-bit lane pairs: torch tensors, their transposed views
# (read in place, column-major), and numpy arrays on the CUDA backend (up as bytes); the result is
# the widened int32 product's, exactly.
@pytest.mark.parametrize("semiring", ["max_plus", "min_plus"])
def test_int8_matrices_on_a_gpu(torch_cuda, semiring):
    torch = torch_cuda
    for m, n, k in [(1, 1, 1), (7, 33, 127), (129, 1000, 33), (1025, 7, 1000), (0, 5, 3)]:
        rng = np.random.default_rng(m + n + k)
        a, b = int8_operand((m, k), semiring, rng), int8_operand((k, n), semiring, rng)
        want = reference(semiring, wide_int8(a, semiring), wide_int8(b, semiring), alpha=np.int32(-2))
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        got = ringmm.matmul(ta, tb, semiring, alpha=-2)
        assert got.is_cuda and got.dtype == torch.int32
        np.testing.assert_array_equal(got.cpu().numpy(), want)
        np.testing.assert_array_equal(ringmm.matmul(tb.T, ta.T, semiring, alpha=-2).cpu().numpy(), want.T)
        np.testing.assert_array_equal(ringmm.matmul(a, b, semiring, alpha=-2, backend="cuda"), want)


# Batches in the int8 entry on a GPU: every member in lane pairs at once, from torch tensors and
# from host arrays on the CUDA backend.
def test_int8_batches_on_a_gpu(torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(21)
    for shapes in [((64, 64, 64), (64, 64, 64)), ((1, 33, 1000), (5, 1000, 7)), ((4096, 16, 16), (16, 16)),
                   ((3, 2, 129, 65), (2, 65, 33))]:
        a, b = int8_operand(shapes[0], "min_plus", rng), int8_operand(shapes[1], "min_plus", rng)
        want = reference("min_plus", wide_int8(a, "min_plus"), wide_int8(b, "min_plus"), alpha=np.int32(7))
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        np.testing.assert_array_equal(int8_entry(ta, tb, "min_plus", alpha=7).cpu().numpy(), want)
        np.testing.assert_array_equal(int8_entry(a, b, "min_plus", alpha=7, backend="cuda"), want)


# Nothing in the int8 call waits for the device or allocates outside torch: it replays in a CUDA graph.
def test_int8_matrices_captured_in_a_cuda_graph(torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(11)
    a = torch.from_numpy(int8_operand((257, 65), "max_plus", rng)).cuda()
    b = torch.from_numpy(int8_operand((65, 129), "max_plus", rng)).cuda()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up outside the capture, as torch asks
        ringmm.matmul(a, b, "max_plus")
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = ringmm.matmul(a, b, "max_plus")
    a.copy_(torch.from_numpy(int8_operand((257, 65), "max_plus", rng)).cuda())
    captured.fill_(0)
    graph.replay()
    torch.cuda.synchronize()
    want = reference("max_plus", wide_int8(a.cpu().numpy(), "max_plus"), wide_int8(b.cpu().numpy(), "max_plus"))
    np.testing.assert_array_equal(captured.cpu().numpy(), want)


def test_cupy_int8_matrices(cupy):
    rng = np.random.default_rng(6)
    a, b = int8_operand((33, 1000), "min_plus", rng), int8_operand((1000, 129), "min_plus", rng)
    got = ringmm.matmul(cupy.asarray(a), cupy.asarray(b)[:, ::2], "min_plus")
    want = reference("min_plus", wide_int8(a, "min_plus"), wide_int8(b[:, ::2], "min_plus"))
    np.testing.assert_array_equal(cupy.asnumpy(got), want)


def test_cupy_narrow_arrays(cupy):
    rng = np.random.default_rng(4)
    a = narrow_operand("max_plus", np.float16, (33, 129), rng)
    b = narrow_operand("max_plus", np.float16, (129, 7), rng)
    got = ringmm.matmul(cupy.asarray(a), cupy.asarray(b), "max_plus")
    np.testing.assert_array_equal(cupy.asnumpy(got), ringmm.matmul(a, b, "max_plus", backend="cpu"))


def test_the_command_line_reads_float16_and_int8_files_widened(tmp_path):
    import os
    import shutil
    import subprocess

    cli = os.environ.get("RINGMM_CLI") or shutil.which("ringmm")
    if not cli or not os.access(cli, os.X_OK):
        pytest.skip("the ringmm tool was not found (set RINGMM_CLI)")
    rng = np.random.default_rng(8)

    def run(a, b, semiring):
        np.save(tmp_path / "a.npy", a)
        np.save(tmp_path / "b.npy", b)
        out = tmp_path / "c.npy"
        if out.exists():
            out.unlink()
        done = subprocess.run([cli, "multiply", "--a", str(tmp_path / "a.npy"), "--b", str(tmp_path / "b.npy"),
                               "--semiring", semiring, "--backend", "cpu", "--out", str(out)], capture_output=True, text=True)
        return done, (np.load(out) if done.returncode == 0 else None)

    a = narrow_operand("min_plus", np.float16, (33, 7), rng)
    b = np.asfortranarray(narrow_operand("min_plus", np.float16, (7, 129), rng))  # a Fortran-order file too
    done, c = run(a, b, "min-plus")
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(c, reference("min_plus", a.astype(np.float32), b.astype(np.float32)))
    i = rng.integers(-128, 128, (7, 33), dtype=np.int8)
    j = rng.integers(-128, 128, (33, 5), dtype=np.int8)
    done, c = run(i, j, "min-plus")
    assert done.returncode == 0, done.stderr
    wide = lambda x: np.where(x == 127, I32_INF, x.astype(np.int32))  # noqa: E731
    np.testing.assert_array_equal(c, reference("min_plus", wide(i), wide(j)))
    done, c = run(i, j, "max-min")
    assert done.returncode == 1 and "int8 files multiply in max-plus and min-plus only" in done.stderr
    assert not (tmp_path / "c.npy").exists()


def test_the_command_line_multiplies_int8_files_on_a_gpu(tmp_path):
    import os
    import shutil
    import subprocess

    from devices import cuda_build_with_device

    cli = os.environ.get("RINGMM_CLI") or shutil.which("ringmm")
    if not cli or not os.access(cli, os.X_OK):
        pytest.skip("the ringmm tool was not found (set RINGMM_CLI)")
    if not cuda_build_with_device():
        pytest.skip("needs a CUDA device and ringmm's CUDA backend")
    rng = np.random.default_rng(12)
    a = int8_operand((129, 1000), "max_plus", rng)
    b = int8_operand((33, 1000), "max_plus", rng)  # read transposed (--transb)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    out = tmp_path / "c.npy"
    done = subprocess.run([cli, "multiply", "--a", str(tmp_path / "a.npy"), "--b", str(tmp_path / "b.npy"), "--transb",
                           "--semiring", "max-plus", "--alpha", "5", "--backend", "cuda", "--check", "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "from int8 operands" in done.stdout and "check     PASS (exact)" in done.stdout, done.stdout
    want = reference("max_plus", wide_int8(a, "max_plus"), wide_int8(b, "max_plus").T, alpha=np.int32(5))
    np.testing.assert_array_equal(np.load(out), want)


def test_einsum_contracts_narrow_operands_as_float32():
    rng = np.random.default_rng(12)
    x = narrow_operand("max_plus", np.float16, (7, 5), rng)
    y = narrow_operand("max_plus", np.float16, (5, 9), rng)
    z = narrow_operand("max_plus", np.float16, (9, 3), rng)
    got = ringmm.einsum("ij,jk,kl->il", x, y, z, semiring="max_plus", backend="cpu")
    want = ringmm.einsum("ij,jk,kl->il", *(t.astype(np.float32) for t in (x, y, z)), semiring="max_plus", backend="cpu")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    out = np.empty((7, 3), np.float16)
    ringmm.einsum("ij,jk,kl->il", x, y, z, semiring="max_plus", out=out, backend="cpu")
    np.testing.assert_array_equal(out, want.astype(np.float16))
    i = rng.integers(-128, 128, (4, 6), dtype=np.int8)
    got = ringmm.einsum("ij,jk->ik", i, i.T.copy(), semiring="max_plus", backend="cpu")
    wide = np.where(i == -128, -I32_INF, i.astype(np.int32))
    np.testing.assert_array_equal(got, reference("max_plus", wide, wide.T))


def test_jax_under_jit_and_grad_with_narrow_operands():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rj = pytest.importorskip("ringmm.jax")
    if not ringmm.info()["jax_handlers"]:
        pytest.skip("this build of ringmm has no JAX handlers")
    with jax.default_device(jax.devices("cpu")[0]):  # the widening is the same on a GPU; test_jax covers devices
        _jax_narrow_checks(jax, jnp, rj)


def _jax_narrow_checks(jax, jnp, rj):
    rng = np.random.default_rng(13)
    a = jnp.asarray(narrow_operand("log_plus", np.float32, (5, 7), rng)).astype(jnp.bfloat16)
    b = jnp.asarray(narrow_operand("log_plus", np.float32, (7, 3), rng)).astype(jnp.bfloat16)
    got = jax.jit(lambda x, y: rj.matmul(x, y, "log_plus"))(a, b)
    assert got.dtype == jnp.float32
    want = rj.matmul(a.astype(jnp.float32), b.astype(jnp.float32), "log_plus")
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    grad = jax.grad(lambda x: rj.matmul(x, b, "log_plus").sum())(a)
    assert grad.dtype == jnp.bfloat16
    i = jnp.asarray(rng.integers(-128, 128, (3, 4), dtype=np.int8))
    got = jax.jit(lambda x: rj.matmul(x, x.T, "min_plus"))(i)
    wide = np.where(np.asarray(i) == 127, I32_INF, np.asarray(i).astype(np.int32))
    np.testing.assert_array_equal(np.asarray(got), reference("min_plus", wide, wide.T))
