"""ringmm.einsum against an independent brute-force reference (every index enumerated, ⊗ across the
operands, ⊕ over the indices absent from the output): random subscripts of up to 4 operands and 6
indices with sizes 0-7 over every pair; batch indices, diagonals, reductions, ellipses (and
plus-times against numpy.einsum itself); paths; errors; torch gradients (gradcheck in float64); JAX
under jit and grad."""


import numpy as np
import pytest

import ringmm
from reference import SPECS, assert_einsum_matches, brute_force, random_operand

PAIRS = [(s.name, d) for s in ringmm.semirings() for d in s.dtypes if s.name in SPECS]


def random_expression(rng):
    """Up to 4 operands over up to 6 indices of sizes 0-7, with repeats (diagonals), indices in one
    operand only (reductions) and output indices in several (batch)."""
    pool = list("abcdef"[:rng.integers(1, 7)])
    sizes = {c: int(rng.choice([0, 1, 2, 3, 5, 7], p=[0.05, 0.15, 0.2, 0.25, 0.2, 0.15])) for c in pool}
    count = int(rng.integers(1, 5))
    terms = ["".join(rng.choice(pool, size=int(rng.integers(0, 4)))) for _ in range(count)]
    used = sorted(set("".join(terms)))
    output = "".join(rng.permutation([c for c in used if rng.random() < 0.5])) if used else ""
    return ",".join(terms) + "->" + output, sizes


@pytest.mark.parametrize("semiring,dtype", PAIRS)
def test_random_expressions_against_brute_force(semiring, dtype):
    rng = np.random.default_rng(27 + len(semiring) * 7 + len(dtype))
    for _ in range(25):
        subscripts, sizes = random_expression(rng)
        terms = subscripts.split("->")[0].split(",")
        operands = [random_operand(semiring, dtype, tuple(sizes[c] for c in t), rng) for t in terms]
        if dtype in ("float32", "float64") and semiring in ("plus_times", "max_times"):
            operands = [x / 2 for x in operands]  # keep 4-operand float products small
        want = brute_force(subscripts, operands, semiring)
        got = ringmm.einsum(subscripts, *operands, semiring=semiring)
        inner = max(1, int(np.prod([sizes[c] for c in set("".join(terms)) if c not in subscripts.split("->")[1]])))
        assert_einsum_matches(semiring, got, want, inner, len(operands)), subscripts


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(7, 33), (33, 5)]),
    ("bij,bjk->bik", [(3, 7, 4), (3, 4, 5)]),
    ("ijk,jkl->il", [(5, 4, 3), (4, 3, 6)]),           # contracted over two indices
    ("ijk,kjl->li", [(5, 4, 3), (3, 4, 6)]),           # ... in another order, output permuted
    ("ij,kj->ik", [(6, 5), (7, 5)]),                   # b read transposed
    ("ji,jk->ik", [(5, 6), (5, 7)]),                   # a read transposed
    ("ii->i", [(5, 5)]), ("iij,jk->ik", [(4, 4, 3), (3, 2)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]),
    ("ijk->kji", [(2, 3, 4)]), ("i,j->ij", [(3,), (4,)]), ("i,i->", [(5,), (5,)]), (",ij->ij", [(), (2, 3)]),
    ("ab,bc,cd,de->ae", [(3, 4), (4, 5), (5, 2), (2, 6)]), ("abc,bcd,ad->", [(2, 3, 4), (3, 4, 5), (2, 5)]),
    ("ij,ij,ij->ij", [(3, 4), (3, 4), (3, 4)]),
])
@pytest.mark.parametrize("semiring", ["max_plus", "min_plus", "log_plus", "plus_times"])
def test_named_expressions(subscripts, shapes, semiring):
    rng = np.random.default_rng(5)
    operands = [random_operand(semiring, "float64", s, rng) for s in shapes]
    want = brute_force(subscripts, operands, semiring)
    assert_einsum_matches(semiring, ringmm.einsum(subscripts, *operands, semiring=semiring), want, 200, len(operands))


@pytest.mark.parametrize("subscripts,shapes", [
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
    ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]),
    ("ij,jk", [(3, 4), (4, 5)]), ("ba,cb", [(3, 4), (5, 3)]), ("ii", [(4, 4)]), ("...ii->...i", [(2, 3, 3)]),
])
def test_ellipses_and_implicit_output_as_numpy_einsum(subscripts, shapes):
    rng = np.random.default_rng(9)
    operands = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(subscripts, *operands)
    got = ringmm.einsum(subscripts, *operands, semiring="plus_times")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_ellipsis_over_max_plus():
    rng = np.random.default_rng(10)
    a, b = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 6))
    got = ringmm.einsum("...ij,...jk->...ik", a, b, semiring="max_plus")
    np.testing.assert_array_equal(got, brute_force("xyij,yjk->xyik", [a, b], "max_plus"))


def test_paths_agree_and_einsum_path_reports_memory():
    rng = np.random.default_rng(11)
    ops = [rng.integers(-50, 50, s).astype(np.int32) for s in [(6, 7), (7, 8), (8, 3), (3, 9)]]
    want = brute_force("ab,bc,cd,de->ae", ops, "max_plus")
    for optimize in ("greedy", "optimal", "auto", [(0, 1), (0, 1), (0, 1)], ["einsum_path", (2, 3), (1, 2), (0, 1)]):
        np.testing.assert_array_equal(ringmm.einsum("ab,bc,cd,de->ae", *ops, optimize=optimize), want)
    path, info = ringmm.einsum_path("ab,bc,cd,de->ae", *ops, optimize=[(0, 1), (0, 1), (0, 1)])
    assert path == ["einsum_path", (0, 1), (0, 1), (0, 1)]
    # ab·bc → ac (6x8); then the first two of [cd, de, ac]: cd·de → ce (8x9) with ac alive; then
    # ac·ce → ae (6x9) while both are alive
    assert info.largest_intermediate == 72
    assert info.peak_bytes == 4 * max(48, 48 + 72, 48 + 72 + 54)
    assert "Peak memory" in str(info)
    path, _ = ringmm.einsum_path("ab,bc,cd,de->ae", *ops, optimize="optimal")
    np.testing.assert_array_equal(ringmm.einsum("ab,bc,cd,de->ae", *ops, optimize=path), want)


def test_out():
    a, b = np.ones((3, 4)), np.ones((4, 5))
    out = np.empty((3, 5))
    assert ringmm.einsum("ij,jk->ik", a, b, semiring="plus_times", out=out) is out
    np.testing.assert_array_equal(out, 4)
    with pytest.raises(ValueError, match="out has shape"):
        ringmm.einsum("ij,jk->ik", a, b, out=np.empty((5, 3)))


@pytest.mark.parametrize("call,error,match", [
    (lambda: ringmm.einsum("ij,jk", np.ones((2, 3))), ValueError, "names 2 operands but 1"),
    (lambda: ringmm.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5))), ValueError,
     "index 'j' has size 4 in operand 1 but 3"),
    (lambda: ringmm.einsum("ij,j1->i", np.ones((2, 3)), np.ones((3, 1))), ValueError, "operand 1 has '1'"),
    (lambda: ringmm.einsum("ijk->i", np.ones((2, 3))), ValueError, "operand 0 has 2 dimensions but its term 'ijk'"),
    (lambda: ringmm.einsum("ij->iz", np.ones((2, 3))), ValueError, "output index 'z' appears in no operand"),
    (lambda: ringmm.einsum("ij->ii", np.ones((2, 3))), ValueError, "the output repeats index 'i'"),
    (lambda: ringmm.einsum("ij,jk", np.ones((2, 3)), np.ones((3, 4), np.float32)), TypeError,
     "operand 1 has dtype float32 but operand 0 has float64"),
    (lambda: ringmm.einsum("ij", np.ones((2, 3)), semiring="max_min"), TypeError, "max_min does not support dtype float64"),
    (lambda: ringmm.einsum("ij", np.ones((2, 3)), semiring="max_pluss"), ValueError, "unknown semiring"),
    (lambda: ringmm.einsum(3, np.ones(2)), TypeError, "subscripts must be a str"),
    (lambda: ringmm.einsum("ij,jk", np.ones((2, 3)), np.ones((3, 4)), np.ones(2)), ValueError, "names 2 operands but 3"),
    (lambda: ringmm.einsum("a,b,c->", np.ones(2), np.ones(2), np.ones(2), optimize=[(0, 5)]), ValueError,
     "step 0 of the path"),
    (lambda: ringmm.einsum("a,b,c->", np.ones(2), np.ones(2), np.ones(2), optimize=[(0, 1)]), ValueError,
     "leaves 2 operands"),
])
def test_errors_name_the_subscript_or_operand(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_trusted_inputs_skip_every_products_value_check():
    """trust_inputs reaches each product: a negative max_times entry is refused by default, not when trusted."""
    a = -np.ones((2, 3))
    b, c = np.ones((3, 4)), np.ones((4, 2))
    with pytest.raises(ValueError, match="outside the inputs"):
        ringmm.einsum("ij,jk,kl->il", a, b, c, semiring="max_times", backend="cpu")
    got = ringmm.einsum("ij,jk,kl->il", a, b, c, semiring="max_times", backend="cpu", trust_inputs=True)
    assert got.shape == (2, 2)
    # An index ⊕-reduced before any pair goes through a product of its own, trusted too.
    assert ringmm.einsum("ij->i", a, semiring="max_times", backend="cpu", trust_inputs=True).shape == (2,)
    with pytest.raises(TypeError, match="trust_inputs must be True or False"):
        ringmm.einsum("ij,jk", np.ones((2, 3)), b, trust_inputs="yes")


def test_trusted_inputs_are_refused_for_jax():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.ones((2, 2), jnp.float32)
    with pytest.raises(ValueError, match="ringmm.jax checks values itself"):
        ringmm.einsum("ij,jk", x, x, trust_inputs=True)


# ---- torch gradients ---------------------------------------------------------------------------------

@pytest.mark.parametrize("semiring", ["log_plus", "max_plus", "min_plus", "plus_times"])
@pytest.mark.parametrize("subscripts,shapes", [
    ("ijk,jkl->il", [(3, 4, 2), (4, 2, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),      # batch index
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),           # diagonal
    ("ij,jk->i", [(3, 4), (4, 5)]),                # reduction after the product
    ("ijx,jk->ik", [(3, 4, 2), (4, 5)]),           # reduction before it
    ("ab,bc,cd->ad", [(3, 4), (4, 5), (5, 2)]),
])
def test_torch_gradcheck(semiring, subscripts, shapes, torch):
    gen = torch.Generator().manual_seed(3)
    operands = [torch.rand(s, generator=gen, dtype=torch.float64).mul(4).sub(2).requires_grad_() for s in shapes]
    torch.autograd.gradcheck(lambda *xs: ringmm.einsum(subscripts, *xs, semiring=semiring), operands)


def test_torch_values_and_no_grad_path(torch):
    a, b = torch.rand(5, 6, dtype=torch.float64), torch.rand(6, 7, dtype=torch.float64)
    got = ringmm.einsum("ij,jk->ik", a, b, semiring="max_plus")
    assert isinstance(got, torch.Tensor)
    np.testing.assert_array_equal(got.numpy(), brute_force("ij,jk->ik", [a.numpy(), b.numpy()], "max_plus"))


@pytest.mark.parametrize("semiring,dtype", [("max_plus", "float32"), ("min_plus", "int32"), ("log_plus", "float64"),
                                            ("plus_times", "float64"), ("lor_land", "uint8"), ("max_min", "float32")])
def test_cuda_matches_brute_force(semiring, dtype, torch_cuda):
    rng = np.random.default_rng(13)
    for _ in range(20):
        subscripts, sizes = random_expression(rng)
        terms = subscripts.split("->")[0].split(",")
        operands = [random_operand(semiring, dtype, tuple(sizes[c] for c in t), rng) for t in terms]
        got = ringmm.einsum(subscripts, *[torch_cuda.as_tensor(x, device="cuda") for x in operands], semiring=semiring)
        assert got.device.type == "cuda"
        want = brute_force(subscripts, operands, semiring)
        assert_einsum_matches(semiring, got.cpu().numpy(), want, 50, len(operands)), subscripts


@pytest.mark.parametrize("semiring", ["log_plus", "max_plus"])
def test_cuda_gradcheck(semiring, torch_cuda):
    torch = torch_cuda
    gen = torch.Generator(device="cuda").manual_seed(4)
    operands = [torch.rand(s, generator=gen, dtype=torch.float64, device="cuda").mul(4).sub(2).requires_grad_()
                for s in [(3, 3, 4), (4, 5), (5, 2)]]
    torch.autograd.gradcheck(lambda *xs: ringmm.einsum("iij,jk,kl->il", *xs, semiring=semiring), operands)


# ---- JAX ---------------------------------------------------------------------------------------------

def test_jax_under_jit_and_grad():
    jax = pytest.importorskip("jax")
    try:
        import ringmm.jax  # noqa: F401
    except ImportError as e:
        pytest.skip(f"ringmm.jax is unavailable: {e}")
    import jax.numpy as jnp

    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((3, 4, 2)).astype(np.float32), rng.standard_normal((4, 2, 5)).astype(np.float32)
    f = jax.jit(lambda x, y: ringmm.einsum("ijk,jkl->il", x, y, semiring="max_plus"))
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(a), jnp.asarray(b))),
                                  brute_force("ijk,jkl->il", [a, b], "max_plus"))
    g = jax.grad(lambda x, y: ringmm.einsum("ijk,jkl->il", x, y, semiring="log_plus").sum())(jnp.asarray(a),
                                                                                            jnp.asarray(b))
    want = jax.grad(lambda x, y: jax.nn.logsumexp(x[:, :, :, None] + y[None], axis=(1, 2)).sum())(jnp.asarray(a),
                                                                                                 jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("on", ["cpu", "cuda"])
def test_intermediates_with_more_indices_than_torch_has_dimensions(on, torch):
    # X ⊗ Y first: an intermediate of 30 indices (torch's CUDA kernels take 25 dimensions at most),
    # then Z1 and Z2.
    if on == "cuda" and not (torch.cuda.is_available() and ringmm.info()["cuda_devices"]):
        pytest.skip("needs torch with a CUDA device and ringmm's CUDA backend")
    letters = "abcdefghijklmnopqrstuvwxyzABCD"
    sizes = {c: 2 if i % 3 else 1 for i, c in enumerate(letters)}
    # Z1 takes indices of X and of Y in turn: arranging the intermediate for it permutes 30 indices.
    z1 = "".join(letters[i] + letters[15 + i] for i in range(6))
    terms = [letters[:15], letters[15:], z1, "".join(c for c in letters if c not in z1)]
    rng = np.random.default_rng(14)
    operands = [rng.integers(-9, 9, tuple(sizes[c] for c in t)).astype(np.float32) for t in terms]
    subscripts = ",".join(terms) + "->" + "ab"
    want = brute_force(subscripts, operands, "max_plus")
    got = ringmm.einsum(subscripts, *[torch.as_tensor(x, device=on) for x in operands], semiring="max_plus",
                        optimize=[(0, 1), (0, 1), (0, 1)])
    np.testing.assert_array_equal(got.cpu().numpy(), want)


@pytest.mark.parametrize("limit", [1, 3, 4])
def test_permutations_in_steps_when_the_runs_exceed_the_dimension_limit(limit, monkeypatch, torch):
    """With a framework limit of `limit` dimensions (25 on CUDA), intermediates are permuted a chunk
    of runs at a time: the same results."""
    from ringmm import _einsum
    monkeypatch.setattr(_einsum, "_MAX_DIMS", limit)
    rng = np.random.default_rng(15)
    letters = "abcdefghij"
    for _ in range(15):
        sizes = {c: int(rng.integers(1, 4)) for c in letters}
        terms = ["".join(rng.permutation(list(letters))[:int(rng.integers(3, 7))]) for _ in range(4)]
        used = sorted(set("".join(terms)))
        subscripts = ",".join(terms) + "->" + "".join(rng.permutation(used)[:3])
        operands = [rng.integers(-9, 9, tuple(sizes[c] for c in t)).astype(np.float32) for t in terms]
        want = brute_force(subscripts, operands, "max_plus")
        got = ringmm.einsum(subscripts, *[torch.as_tensor(x) for x in operands], semiring="max_plus",
                            optimize=[(0, 1), (0, 1), (0, 1)])
        np.testing.assert_array_equal(got.numpy(), want, err_msg=subscripts)
