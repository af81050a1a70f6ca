"""ringmm.jax under jax.jit, vmap and grad, on the CPU and (where JAX has a GPU and ringmm its CUDA
backend) on CUDA: every pair against the numpy reference, the refusals with ringmm.matmul's
messages, batching rules, gradients against JAX's own differentiation of a jnp reference, a scan of
100 calls, APSP and the HMMs."""

import contextlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import ringmm  # noqa: E402
from devices import cuda_build_with_device  # noqa: E402
from reference import (SPECS, assert_matches, numpy_forward, numpy_viterbi, random_graph,  # noqa: E402
                       random_operand, reference, reference_argmax)

try:
    import ringmm.jax as rj
except ImportError as e:  # a build without jaxlib's headers
    pytest.skip(f"ringmm.jax is unavailable: {e}", allow_module_level=True)

PAIRS = [(s.name, d) for s in ringmm.semirings() for d in s.dtypes if s.name in SPECS]
SHAPES = [(0, 5, 3), (4, 0, 6), (1, 1, 1), (7, 33, 5), (33, 7, 127), (129, 127, 33)]


@contextlib.contextmanager
def _x64():
    state = getattr(jax, "enable_x64", None)  # a context manager in recent JAX
    if state is not None:
        with state(True):
            yield
    else:
        from jax.experimental import enable_x64
        with enable_x64():
            yield


@pytest.fixture(autouse=True)
def x64():
    """float64 and int64 as they are (JAX rounds them to 32 bits otherwise)."""
    with _x64():
        yield


def _gpu():
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        return None
    return gpus[0] if gpus and cuda_build_with_device() else None


@pytest.fixture(params=["cpu", "gpu"])
def device(request):
    if request.param == "cpu":
        return jax.devices("cpu")[0]
    gpu = _gpu()
    if gpu is None:
        pytest.skip("needs JAX with a GPU and ringmm's CUDA backend")
    return gpu


@pytest.fixture
def rng():
    return np.random.default_rng(28)


def put(device, *arrays):
    return [jax.device_put(jnp.asarray(x), device) for x in arrays]


# ---- values ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("semiring,dtype", PAIRS)
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_every_pair_under_jit(semiring, dtype, m, k, n, device, rng):
    a = random_operand(semiring, dtype, (m, k), rng)
    b = random_operand(semiring, dtype, (k, n), rng)
    got = jax.jit(lambda x, y: rj.matmul(x, y, semiring))(*put(device, a, b))
    assert got.dtype == a.dtype and list(got.devices()) == [device]
    assert_matches(semiring, np.asarray(got), reference(semiring, a, b), k)


@pytest.mark.parametrize("semiring,dtype", [p for p in PAIRS if p[0] in rj._SELECTING])
def test_argmax_under_jit(semiring, dtype, device, rng):
    a = random_operand(semiring, dtype, (3, 33, 17), rng)
    b = random_operand(semiring, dtype, (17, 9), rng)
    c, k_star = jax.jit(lambda x, y: rj.matmul_argmax(x, y, semiring))(*put(device, a, b))
    assert_matches(semiring, np.asarray(c), reference(semiring, a, b), 17)
    np.testing.assert_array_equal(np.asarray(k_star), reference_argmax(semiring, a, b))
    assert k_star.dtype == jnp.int32


def test_transposes_batches_and_vectors(device, rng):
    s = "min_plus"
    a = random_operand(s, "float32", (2, 1, 9, 7), rng)  # op(a) = aᵀ: 7 x 9
    b = random_operand(s, "float32", (3, 5, 9), rng)  # op(b) = bᵀ: 9 x 5
    got = rj.matmul(*put(device, a, b), s, trans_a=True, trans_b=True)
    want = reference(s, np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2))
    assert got.shape == (2, 3, 7, 5)
    assert_matches(s, np.asarray(got), want, 9)
    u, m = random_operand(s, "float32", (9,), rng), random_operand(s, "float32", (9, 4), rng)
    np.testing.assert_array_equal(np.asarray(rj.matmul(*put(device, u, m), s)), ringmm.matmul(u, m, s))
    np.testing.assert_array_equal(np.asarray(rj.matmul(*put(device, m.T, u), s)), ringmm.matmul(m.T, u, s))
    np.testing.assert_array_equal(np.asarray(rj.matmul(*put(device, u, u), s)), ringmm.matmul(u, u, s))


@pytest.mark.parametrize("semiring,dtype", [("max_plus", "float32"), ("max_plus", "int32"), ("plus_times", "float64"),
                                            ("min_max", "float32"), ("lor_land", "bool")])
def test_alpha_beta_c_and_argmax_with_c(semiring, dtype, device, rng):
    a, b = random_operand(semiring, dtype, (6, 11), rng), random_operand(semiring, dtype, (11, 5), rng)
    c = random_operand(semiring, dtype, (5,), rng)  # broadcast over the rows
    alpha, beta = (1, 0) if dtype == "bool" else (2, -1)
    f = jax.jit(lambda x, y, z: rj.matmul(x, y, semiring, c=z, alpha=alpha, beta=beta))
    want = reference(semiring, a, b, np.broadcast_to(c, (6, 5)), alpha, beta)
    assert_matches(semiring, np.asarray(f(*put(device, a, b, c))), want, 11, scale=3)
    if semiring in rj._SELECTING:
        cc = np.broadcast_to(c, (6, 5))
        got, k_star = rj.matmul_argmax(*put(device, a, b), semiring, c=put(device, c)[0])
        assert_matches(semiring, np.asarray(got), reference(semiring, a, b, cc), 11, scale=3)
        np.testing.assert_array_equal(np.asarray(k_star), reference_argmax(semiring, a, b, cc))


def test_a_scan_of_100_calls_matches_the_eager_calls(device, rng):
    a = random_operand("max_plus", "float32", (64, 64), rng, zeros=0)
    b = random_operand("max_plus", "float32", (64, 64), rng, zeros=0) - 1

    def step(x, _):
        y = rj.matmul(x, b, "max_plus") - 1
        return y, y[0, 0]

    last, firsts = jax.jit(lambda x: jax.lax.scan(step, x, None, length=100))(*put(device, a))
    x = put(device, a)[0]
    eager = []
    for _ in range(100):
        x = rj.matmul(x, put(device, b)[0], "max_plus") - 1
        eager.append(x[0, 0])
    np.testing.assert_array_equal(np.asarray(last), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(firsts), np.asarray(jnp.stack(eager)))


# ---- refusals --------------------------------------------------------------------------------------

def _message(call):
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    return info.type, str(info.value)


@pytest.mark.parametrize("case", [
    dict(a=((3, 4), "float32"), b=((5, 2), "float32")),  # inner dimensions
    dict(a=((2, 3, 4), "float32"), b=((3, 4, 2), "float32")),  # batches that do not broadcast
    dict(a=((3, 4), "float32"), b=((4, 2), "float64")),  # dtypes differ
    dict(a=((3, 4), "uint16"), b=((4, 2), "uint16")),  # a dtype ringmm does not multiply
    dict(a=((3, 4), "float32"), b=((4, 2), "float32"), semiring="max_pluss"),
    dict(a=((3, 4), "float32"), b=((4, 2), "float32"), semiring=3),
    dict(a=((3, 4), "float32"), b=((4, 2), "float32"), semiring="lor_land"),
    dict(a=((3, 4), "float32"), b=((4, 2), "float32"), semiring="plus_times", argmax=True),
    dict(a=((3, 4), "float32"), b=((4, 2), "float32"), beta=2.0),
    dict(a=((3, 4), "float32"), b=((4, 2), "float32"), alpha="x"),
    dict(a=((4,), "float32"), b=((4, 2), "float32"), trans_a=True),
    dict(a=((), "float32"), b=((4, 2), "float32")),
    dict(a=((3, 4), "float32"), b=((4, 2), "float32"), c=((2, 3), "float32")),
])
def test_refusals_at_trace_time_say_what_ringmm_matmul_says(case, device):
    a, b = (np.zeros(*case[x]) for x in ("a", "b"))
    c = np.zeros(*case["c"]) if "c" in case else None
    kw = dict(c=c, alpha=case.get("alpha"), beta=case.get("beta"), trans_a=case.get("trans_a", False))
    semiring = case.get("semiring", "max_plus")
    argmax = case.get("argmax", False)
    want = _message(lambda: ringmm.matmul(a, b, semiring, return_argmax=argmax, **kw))
    jax_call = rj.matmul_argmax if argmax else rj.matmul
    args = put(device, a, b)
    kw["c"] = None if c is None else put(device, c)[0]
    assert _message(lambda: jax.jit(lambda x, y: jax_call(x, y, semiring, **kw))(*args)) == want


def test_values_out_of_range_raise_at_run_time_with_ringmm_s_message(device):
    a = np.full((3, 4), 2**29, np.int32)  # beyond ±2**28
    b = np.zeros((4, 2), np.int32)
    f = jax.jit(lambda x, y: rj.matmul(x, y, "max_plus"))
    with pytest.raises(Exception, match="a: .*536870912"):
        np.asarray(f(*put(device, a, b)))
    logs = np.array([[0.0, np.nan]], np.float32)
    with pytest.raises(Exception, match="NaN|nan"):
        np.asarray(jax.jit(lambda x, y: rj.matmul(x, y, "log_plus"))(*put(device, logs, logs.T)))
    # the next call on the same device is unaffected
    np.testing.assert_array_equal(np.asarray(f(*put(device, a // 4, b))), ringmm.matmul(a // 4, b, "max_plus"))


# ---- vmap ------------------------------------------------------------------------------------------

def _custom_calls(jaxpr):
    """The FFI calls of a jaxpr, in order, including those inside custom_vjp and other sub-jaxprs."""
    calls = []
    for e in jaxpr.eqns:
        if e.primitive.name == "ffi_call":
            calls.append(e)
        for value in e.params.values():
            for inner in value if isinstance(value, (tuple, list)) else [value]:
                inner = getattr(inner, "jaxpr", inner)
                if hasattr(inner, "eqns"):
                    calls += _custom_calls(inner)
    return calls


def test_vmap_maps_the_axis_onto_the_batch(device, rng):
    s = "max_plus"
    a = random_operand(s, "float32", (6, 5, 7), rng)
    b = random_operand(s, "float32", (7, 3), rng)
    bs = random_operand(s, "float32", (7, 6, 3), rng)  # vmapped along axis 1
    a_, b_, bs_ = put(device, a, b, bs)
    f = jax.vmap(lambda x: rj.matmul(x, b_, s))
    np.testing.assert_array_equal(np.asarray(f(a_)), reference(s, a, b))
    g = jax.vmap(lambda x, y: rj.matmul(x, y, s), in_axes=(0, 1))
    np.testing.assert_array_equal(np.asarray(g(a_, bs_)), reference(s, a, np.moveaxis(bs, 1, 0)))
    # one custom call, not one per member
    assert len(_custom_calls(jax.make_jaxpr(f)(a_).jaxpr)) == 1
    # nested, with a partly broadcast operand (run per member by the handler)
    a4 = random_operand(s, "float32", (2, 3, 5, 7), rng)
    b3 = random_operand(s, "float32", (3, 7, 4), rng)
    h = jax.vmap(jax.vmap(lambda x, y: rj.matmul(x, y, s), in_axes=(0, 0)), in_axes=(0, None))
    np.testing.assert_array_equal(np.asarray(h(*put(device, a4, b3))), reference(s, a4, b3))


def test_vmap_of_argmax_and_of_the_gradient(device, rng):
    s = "min_plus"
    a = rng.standard_normal((4, 5, 6))
    b = rng.standard_normal((6, 3))
    a_, b_ = put(device, a, b)
    c, k_star = jax.vmap(lambda x: rj.matmul_argmax(x, b_, s))(a_)
    np.testing.assert_array_equal(np.asarray(k_star), reference_argmax(s, a, b))
    grads = jax.vmap(jax.grad(lambda x: rj.matmul(x, b_, s).sum()))(a_)
    want = jax.vmap(jax.grad(lambda x: jnp.min(x[:, :, None] + b_[None], axis=1).sum()))(a_)
    np.testing.assert_allclose(np.asarray(grads), np.asarray(want))


# ---- grad ------------------------------------------------------------------------------------------

def _jnp_product(semiring, a, b):
    terms = a[..., :, :, None] + b[..., None, :, :]
    if semiring == "max_plus":
        return terms.max(axis=-2)
    if semiring == "min_plus":
        return terms.min(axis=-2)
    if semiring == "log_plus":
        return jax.nn.logsumexp(terms, axis=-2)
    if semiring == "max_times":
        return (a[..., :, :, None] * b[..., None, :, :]).max(axis=-2)
    if semiring == "max_min":
        return jnp.minimum(a[..., :, :, None], b[..., None, :, :]).max(axis=-2)
    if semiring == "min_max":
        return jnp.maximum(a[..., :, :, None], b[..., None, :, :]).min(axis=-2)
    return jnp.matmul(a, b)


@pytest.mark.parametrize("semiring", ["max_plus", "min_plus", "log_plus", "plus_times", "max_times"])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True)])
def test_gradients_match_jax_s_on_a_jnp_reference(semiring, trans_a, trans_b, device, rng):
    # Continuous random data: no ties. Batches broadcast (a has one member for b's three).
    a = rng.uniform(0.5, 2, (1, 7, 5))
    b = rng.uniform(0.5, 2, (3, 5, 4))
    if trans_a:
        a = np.swapaxes(a, -1, -2).copy()
    if trans_b:
        b = np.swapaxes(b, -1, -2).copy()
    weights = rng.standard_normal((3, 7, 4))
    op = lambda x, t: jnp.swapaxes(x, -1, -2) if t else x  # noqa: E731

    def ours(x, y):
        return (rj.matmul(x, y, semiring, trans_a=trans_a, trans_b=trans_b) * weights).sum()

    def theirs(x, y):
        return (_jnp_product(semiring, op(x, trans_a), op(y, trans_b)) * weights).sum()

    a_, b_ = put(device, a, b)
    got = jax.jit(jax.grad(ours, argnums=(0, 1)))(a_, b_)
    want = jax.grad(theirs, argnums=(0, 1))(a_, b_)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("semiring", ["max_min", "min_max"])
def test_gradients_of_the_float32_pairs(semiring, device, rng):
    # min (max) passes the cotangent to the smaller (larger) operand of the winning term.
    a, b = put(device, *(rng.uniform(-2, 2, s).astype(np.float32) for s in [(2, 6, 9), (9, 5)]))
    weights = rng.standard_normal((2, 6, 5)).astype(np.float32)
    got = jax.grad(lambda x, y: (rj.matmul(x, y, semiring) * weights).sum(), argnums=(0, 1))(a, b)
    want = jax.grad(lambda x, y: (_jnp_product(semiring, x, y) * weights).sum(), argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("semiring", ["log_plus", "max_plus"])
def test_check_grads(semiring, device, rng):
    from jax.test_util import check_grads

    a, b = put(device, rng.standard_normal((2, 6, 9)), rng.standard_normal((9, 5)))  # tie-free
    check_grads(lambda x, y: rj.matmul(x, y, semiring), (a, b), order=1, modes=("rev",))


def test_the_forward_argmax_is_saved_not_recomputed(device, rng):
    a, b = put(device, rng.standard_normal((5, 6)), rng.standard_normal((6, 4)))
    jaxpr = jax.make_jaxpr(jax.grad(lambda x: rj.matmul(x, b, "max_plus").sum()))(a).jaxpr
    targets = [str(e.params.get("target_name", e.params)) for e in _custom_calls(jaxpr)]
    assert len(targets) == 2 and "argmax" in targets[0] and "backward" in targets[1], targets


@pytest.mark.parametrize("semiring,dtype,graph", [("max_plus", "float32", True), ("min_max", "float32", True),
                                                  ("lor_land", "bool", True), ("plus_times", "float32", False),
                                                  ("max_plus", "int32", False), ("log_plus", "float32", False),
                                                  ("max_times", "float64", False)])
def test_only_products_without_checks_or_cublas_may_be_captured(semiring, dtype, graph):
    a = jnp.zeros((3, 4), dtype)
    jaxpr = jax.make_jaxpr(lambda x: rj.matmul(x, x.T, semiring))(a).jaxpr
    (call,) = _custom_calls(jaxpr)
    assert call.params["target_name"] == ("ringmm_matmul_graph" if graph else "ringmm_matmul")


def test_gradients_that_are_not_defined_say_so(device):
    a, b, c = put(device, np.ones((2, 3)), np.ones((3, 2)), np.ones((2, 2)))
    with pytest.raises(TypeError, match="does not differentiate matmul with c"):
        jax.grad(lambda x: rj.matmul(x, b, "max_plus", c=c).sum())(a)
    with pytest.raises(TypeError, match="does not differentiate apsp"):
        jax.grad(lambda w: rj.apsp(w, return_next=False).sum())(jnp.ones((3, 3)))


# ---- applications ----------------------------------------------------------------------------------

@pytest.mark.parametrize("longest", [False, True])
def test_apsp(longest, device, rng):
    w = random_graph(37, 0.2, rng)
    if longest:  # a DAG: edges from lower to higher vertices only
        w = np.where(np.triu(np.isfinite(w), 1), w, np.inf)
    want_dist, want_next = ringmm.apsp(w, longest=longest)
    dist, next_ = jax.jit(lambda x: rj.apsp(x, longest=longest, block=16))(*put(device, w))
    np.testing.assert_array_equal(np.asarray(dist), want_dist)
    next_ = np.asarray(next_)
    for i, j in [(0, 5), (3, 30), (36, 1)]:  # walk the routes: their lengths are the distances
        path = ringmm.route(next_, i, j)
        assert sum(w[u, v] for u, v in zip(path, path[1:])) == want_dist[i, j] or not path
    batch = np.stack([w, w + 1])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda x: rj.apsp(x, return_next=False))(*put(device, batch))),
                                  np.stack([ringmm.apsp(x, return_next=False) for x in batch]))


def test_apsp_refusals():
    with pytest.raises(ValueError, match="square"):
        rj.apsp(jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="float32 or float64"):
        rj.apsp(jnp.ones((2, 2), jnp.int32))


def test_hmms(device, rng):
    states, symbols, steps, batch = 5, 4, 12, 3
    init = np.log(rng.dirichlet(np.ones(states)))
    trans = np.log(rng.dirichlet(np.ones(states), states))
    emission = np.log(rng.dirichlet(np.ones(symbols), states))
    observations = rng.integers(0, symbols, (batch, steps))
    emit = emission[:, observations].transpose(2, 1, 0)  # (T, B, S)
    want_path, want_score = numpy_viterbi(init, trans, emit)
    path, score = jax.jit(rj.hmm_viterbi)(*put(device, init, trans, emission, observations))
    np.testing.assert_array_equal(np.asarray(path), want_path)
    np.testing.assert_allclose(np.asarray(score), want_score, rtol=1e-12)
    scores = np.swapaxes(emit, 0, 1)  # (B, T, S)
    loglik = jax.jit(lambda i, t, s: rj.hmm_forward(i, t, scores=s))(*put(device, init, trans, scores))
    np.testing.assert_allclose(np.asarray(loglik), numpy_forward(init, trans, emit), rtol=1e-10)
    one = rj.hmm_viterbi(*put(device, init, trans, emission, observations[0]))
    np.testing.assert_array_equal(np.asarray(one[0]), want_path[0])


# ---- CUDA graphs -----------------------------------------------------------------------------------

_GRAPH_CHILD = r"""
import json, sys
import jax, jax.numpy as jnp, numpy as np
import ringmm.jax as rj
a = jnp.asarray(np.load(sys.argv[1])); b = jnp.asarray(np.load(sys.argv[2]))
run = jax.jit(lambda x: jax.lax.scan(lambda y, _: (rj.matmul(y, b, "max_plus"), None), x, None, length=100)[0])
np.save(sys.argv[3], np.asarray(run(a)))
np.save(sys.argv[4], np.asarray(run(a + 1)))  # a second run: the graph replayed on other data
print(json.dumps({"calls_in_graphs": rj.calls_in_graphs()}))
"""


def test_products_captured_in_xla_command_buffers(tmp_path, rng):
    """A scan of products with XLA told to capture custom calls in CUDA graphs (a process of its own:
    XLA reads its flags once): the handler runs inside a capture, and the replays give the eager
    calls' results."""
    import json
    import os
    import subprocess
    import sys

    if _gpu() is None:
        pytest.skip("needs JAX with a GPU and ringmm's CUDA backend")
    a = random_operand("max_plus", "float32", (64, 64), rng, zeros=0)
    b = random_operand("max_plus", "float32", (64, 64), rng, zeros=0) - 4
    paths = [str(tmp_path / f"{name}.npy") for name in ("a", "b", "c", "d")]
    np.save(paths[0], a)
    np.save(paths[1], b)
    env = dict(os.environ, XLA_FLAGS="--xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL --xla_gpu_graph_min_graph_size=1")
    child = subprocess.run([sys.executable, "-c", _GRAPH_CHILD, *paths], capture_output=True, text=True, env=env,
                           timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    assert json.loads(child.stdout.strip().splitlines()[-1])["calls_in_graphs"] > 0, child.stdout
    for path, start in ((paths[2], a), (paths[3], a + 1)):
        want = start
        for _ in range(100):
            want = ringmm.matmul(want, b, "max_plus")
        np.testing.assert_array_equal(np.load(path), want)


def test_info_says_the_handlers_are_built():
    assert ringmm.info()["jax_handlers"] is True
    assert ringmm.jax is rj
