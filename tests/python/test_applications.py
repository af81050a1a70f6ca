"""ringmm.syrk, apsp, route, hmm_viterbi and hmm_forward against independent references: numpy for
syrk, scipy.sparse.csgraph and networkx for shortest paths (every route walked and its length
added up), a numpy Viterbi and forward algorithm for HMMs. On numpy and torch arrays, and on the GPU
(torch, cupy) where there is one; every refusal is checked to name its argument and to leave out
untouched. Tropical and integer results are compared exactly; float sums within stated bounds.
Over 500 lines because the applications share one set of references and array fixtures."""

import os
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ringmm
from reference import (I32_FINITE, LOG_PLUS_TOLERANCE, assert_matches, numpy_forward, numpy_viterbi, random_graph,
                       random_operand, reference, scipy_distances)


@pytest.fixture
def rng():
    return np.random.default_rng(11)


# ---- syrk ---------------------------------------------------------------------------------------

SYRK_PAIRS = [("plus_times", "float64"), ("plus_times", "float32"), ("plus_times", "int32"), ("max_plus", "float32"),
              ("min_plus", "int32"), ("max_min", "float32"), ("lor_land", "uint8"), ("lor_land", "bool"),
              ("max_times", "float64"), ("min_max", "int32"), ("log_plus", "float64")]


def transposed(x):
    return np.swapaxes(x, -1, -2)


@pytest.mark.parametrize("semiring,dtype", SYRK_PAIRS)
@pytest.mark.parametrize("k,n", [(0, 3), (3, 0), (1, 1), (7, 5), (33, 17), (40, 129)])
def test_syrk_matches_numpy(semiring, dtype, k, n, rng):
    a = random_operand(semiring, dtype, (k, n), rng)
    want = reference(semiring, a.T, a)
    assert_matches(semiring, ringmm.syrk(a, semiring), want, k)
    # a·aᵀ of the transposed view (read in place, column-major) is the same product.
    assert_matches(semiring, ringmm.syrk(a.T, semiring, trans=True), want, k)


def test_syrk_default_is_plus_times_and_the_result_is_symmetric(rng):
    a = rng.integers(-9, 10, (12, 8)).astype(np.float64)
    got = ringmm.syrk(a)
    np.testing.assert_array_equal(got, a.T @ a)  # small integers: every sum is exact
    np.testing.assert_array_equal(got, got.T)


def test_syrk_batches_out_and_views(rng):
    a = random_operand("max_plus", "float32", (2, 3, 9, 6), rng)
    want = reference("max_plus", transposed(a), a)
    np.testing.assert_array_equal(ringmm.syrk(a, "max_plus"), want)
    out = np.full((2, 3, 6, 6), 7, np.float32)
    assert ringmm.syrk(a, "max_plus", out=out) is out
    np.testing.assert_array_equal(out, want)
    # An out that no leading dimension describes, and an a that must be copied: both still work.
    backing = np.zeros((6, 12), np.float32)
    strided = random_operand("max_plus", "float32", (9, 12), rng)[:, ::2]
    ringmm.syrk(strided, "max_plus", out=backing[:, ::2])
    np.testing.assert_array_equal(backing[:, ::2], reference("max_plus", strided.T, strided))
    np.testing.assert_array_equal(backing[:, 1::2], 0)


def test_syrk_torch(torch, rng):
    a = random_operand("min_plus", "int32", (4, 11, 7), rng)
    got = ringmm.syrk(torch.from_numpy(a), "min_plus")
    assert isinstance(got, torch.Tensor) and got.dtype == torch.int32 and got.shape == (4, 7, 7)
    np.testing.assert_array_equal(got.numpy(), reference("min_plus", transposed(a), a))


def test_syrk_on_the_gpu(torch_cuda, rng):
    torch = torch_cuda
    a = random_operand("max_plus", "float32", (37, 65), rng)
    got = ringmm.syrk(torch.from_numpy(a).cuda(), "max_plus", trans=True)
    assert got.device.type == "cuda"
    np.testing.assert_array_equal(got.cpu().numpy(), reference("max_plus", a, a.T))


def test_syrk_on_the_gpu_with_cupy(cupy, rng):
    a = random_operand("plus_times", "float64", (2, 33, 20), rng)
    got = ringmm.syrk(cupy.asarray(a))
    assert isinstance(got, cupy.ndarray)
    assert_matches("plus_times", cupy.asnumpy(got), reference("plus_times", transposed(a), a), 33)


def syrk_raises(kind, match, *args, **kwargs):
    with pytest.raises(kind, match=match):
        ringmm.syrk(*args, **kwargs)


def test_syrk_errors(rng):
    a = np.ones((4, 3), np.float32)
    syrk_raises(TypeError, "max_plus does not support dtype uint8", a.astype(np.uint8), "max_plus")
    syrk_raises(TypeError, "lor_land does not support dtype float32", a, "lor_land")
    syrk_raises(ValueError, "a has 1 dimensions where at least 2 are needed", a[0])
    syrk_raises(ValueError, "out has shape \\(4, 4\\) but the result has shape \\(3, 3\\)", a, out=np.empty((4, 4), np.float32))
    syrk_raises(TypeError, "out has dtype float64 but a has float32", a, out=np.empty((3, 3)))
    readonly = np.empty((3, 3), np.float32)
    readonly.flags.writeable = False
    syrk_raises(ValueError, "out is not a writable array", a, out=readonly)
    syrk_raises(TypeError, "out must be an array", a, out=[[0.0] * 3] * 3)
    syrk_raises(ValueError, "unknown semiring 'tropical'", a, "tropical")
    syrk_raises(TypeError, "semiring must be a name", a, None)
    syrk_raises(ValueError, "backend: unknown value 'gpu'", a, backend="gpu")
    square = np.zeros((4, 4), np.float32)
    syrk_raises(ValueError, "out: C overlaps A", square, out=square)


def test_syrk_mixed_frameworks(torch):
    syrk_raises(TypeError, "a is a torch array but out is a numpy array", torch.ones(3, 2), out=np.empty((2, 2), np.float32))


@pytest.mark.parametrize("batched", [False, True])
def test_syrk_refusal_leaves_out_untouched(batched):
    a = np.zeros((2, 5, 4) if batched else (5, 4), np.int32)
    a[..., 3, 2] = I32_FINITE + 1  # outside max-plus i32's domain (in the last member of a batch)
    out = np.full(a.shape[:-2] + (4, 4), 7, np.int32)
    syrk_raises(ValueError, "a: element .* is outside the inputs max-plus i32 accepts", a, "max_plus", out=out)
    np.testing.assert_array_equal(out, 7)


# ---- all-pairs shortest paths ---------------------------------------------------------------------

def check_routes(w, dist, successors):
    """Every i → j route that ringmm.route reads from next runs along edges of w and adds up to
    dist[i, j] exactly (integer weights); unreachable pairs have no route."""
    n = len(w)
    for i in range(n):
        for j in range(n):
            path = ringmm.route(successors, i, j)
            if not np.isfinite(dist[i, j]):
                assert path == [], (i, j, path)
                continue
            assert path[0] == i and path[-1] == j and len(path) <= n, (i, j, path)
            assert sum(w[u, v] for u, v in zip(path, path[1:])) == dist[i, j], (i, j, path)


@pytest.mark.parametrize("n,density,block", [(1, 0.5, None), (7, 0.5, 3), (33, 0.2, 8), (60, 0.1, 16),
                                             (129, 0.05, 32), (100, 1.0, None)])
def test_apsp_matches_scipy_and_routes_add_up(n, density, block, rng):
    pytest.importorskip("scipy")
    w = random_graph(n, density, rng)
    dist, successors = ringmm.apsp(w, block=block)
    assert dist.dtype == np.float64 and successors.dtype == np.int32 and dist.shape == successors.shape == (n, n)
    np.testing.assert_array_equal(dist, scipy_distances(w, "FW"))
    np.testing.assert_array_equal(np.diagonal(successors), np.arange(n))
    check_routes(w, dist, successors)


def zero_weight_graph(n, density, rng, undirected):
    """Integer weights 0..3 of which about 40 % are 0, shifted by integer potentials (negative edges,
    no negative cycle): zero-weight cycles everywhere, and every 0 edge of an undirected graph is one."""
    w = np.where(rng.random((n, n)) < density, rng.integers(1, 4, (n, n)), np.inf)
    w[rng.random((n, n)) < 0.4 * density] = 0
    if undirected:
        lower = np.tril_indices(n, -1)
        w[lower] = w.T[lower]
    np.fill_diagonal(w, np.inf)
    p = rng.integers(-5, 6, n)
    return w + p[:, None] - p[None, :]


@pytest.mark.parametrize("n,block", [(8, 4), (90, None), (150, 64), (150, 7)])
@pytest.mark.parametrize("undirected", [False, True])
def test_apsp_routes_on_zero_weight_cycles(n, block, undirected, rng):
    pytest.importorskip("scipy")
    w = zero_weight_graph(n, 0.06 if n > 8 else 0.4, rng, undirected)
    dist, successors = ringmm.apsp(w, block=block, backend="cpu")
    np.testing.assert_array_equal(dist, scipy_distances(w, "J"))
    check_routes(w, dist, successors)


def test_apsp_without_vertices():
    dist, successors = ringmm.apsp(np.zeros((0, 0)))
    assert dist.shape == successors.shape == (0, 0) and successors.dtype == np.int32
    with pytest.raises(ValueError, match="i: vertex 0 is out of range \\(the graph has no vertices\\)"):
        ringmm.route(successors, 0, 0)


def test_apsp_negative_edges_match_johnson(rng):
    pytest.importorskip("scipy")
    w = random_graph(90, 0.2, rng, negative=True)
    dist, successors = ringmm.apsp(w, block=20)
    np.testing.assert_array_equal(dist, scipy_distances(w, "J"))
    check_routes(w, dist, successors)


def test_apsp_longest_paths_of_a_dag(rng):
    pytest.importorskip("scipy")
    n = 40
    w = np.where(rng.random((n, n)) < 0.2, rng.integers(-5, 10, (n, n)).astype(np.float64), np.inf)
    w[np.tril_indices(n)] = np.inf  # edges go from lower to higher vertices only
    dist, successors = ringmm.apsp(w, longest=True)
    # Longest paths of a DAG are the negated shortest paths of the negated weights.
    np.testing.assert_array_equal(dist, -scipy_distances(-w, "BF"))
    check_routes(w, dist, successors)


def test_apsp_float32_torch_and_dist_only(torch, rng):
    pytest.importorskip("scipy")
    w = random_graph(50, 0.3, rng).astype(np.float32)
    dist, successors = ringmm.apsp(torch.from_numpy(w))
    assert isinstance(dist, torch.Tensor) and dist.dtype == torch.float32 and successors.dtype == torch.int32
    np.testing.assert_array_equal(dist.numpy(), scipy_distances(w.astype(np.float64), "D").astype(np.float32))
    check_routes(w, dist.numpy(), successors)  # route reads torch tensors too
    only = ringmm.apsp(w, return_next=False, backend="cpu")
    assert isinstance(only, np.ndarray)
    np.testing.assert_array_equal(only, dist.numpy())


def test_apsp_self_loops_zero_weights_and_cycles():
    inf = np.inf
    w = np.array([[5, 0, inf], [inf, inf, 2], [1, inf, 3]], np.float64)  # positive self-loops count for nothing
    dist, successors = ringmm.apsp(w)
    np.testing.assert_array_equal(dist, [[0, 0, 2], [3, 0, 2], [1, 1, 0]])
    assert ringmm.route(successors, 2, 1) == [2, 0, 1]
    w[1, 1] = -1  # a negative self-loop is a negative cycle
    with pytest.raises(ValueError, match="negative cycle: .* 1 vertex lies on one \\(0-based\\): 1"):
        ringmm.apsp(w)
    cycle = np.full((4, 4), inf)
    cycle[0, 1], cycle[1, 2], cycle[2, 0] = 1.0, 1.0, -3.0
    with pytest.raises(ValueError, match="negative cycle: .*0, 1, 2"):
        ringmm.apsp(cycle)
    with pytest.raises(ValueError, match="positive cycle"):
        ringmm.apsp(np.where(np.isfinite(cycle), 1.0, inf), longest=True)


def test_apsp_on_networkx_graphs_through_scipy_sparse(rng):
    nx = pytest.importorskip("networkx")
    pytest.importorskip("scipy")
    graph = nx.gnp_random_graph(45, 0.08, seed=3, directed=True)
    for u, v in graph.edges:
        graph[u][v]["weight"] = int(rng.integers(0, 7))  # zero-weight edges included
    dist, successors = ringmm.apsp(nx.to_scipy_sparse_array(graph, nodelist=range(45), weight="weight"))
    lengths = dict(nx.all_pairs_dijkstra_path_length(graph))
    want = np.array([[lengths[i].get(j, np.inf) for j in range(45)] for i in range(45)])
    np.testing.assert_array_equal(dist, want)
    w = nx.to_numpy_array(graph, nodelist=range(45), nonedge=np.inf)
    check_routes(w, dist, successors)


def test_apsp_sparse_follows_the_matrix_market_rules():
    sparse = pytest.importorskip("scipy.sparse")
    inf = np.inf
    # (0, 1) twice: the best weight stays; (1, 2) an explicit zero: an edge; (2, 2) a self-loop.
    rows, cols = np.array([0, 0, 1, 2, 2, 3]), np.array([1, 1, 2, 0, 2, 1])
    m = sparse.coo_matrix((np.array([5.0, 3.0, 0.0, 4.0, 7.0, 2.0]), (rows, cols)), shape=(4, 4))
    dist, _ = ringmm.apsp(m)
    dense = np.array([[inf, 3, inf, inf], [inf, inf, 0, inf], [4, inf, 7, inf], [inf, 2, inf, inf]])
    np.testing.assert_array_equal(dist, ringmm.apsp(dense)[0])
    np.testing.assert_array_equal(dist[0], [0, 3, 3, inf])
    dag = sparse.coo_matrix((np.array([5.0, 3.0, 2.0]), (np.array([0, 0, 1]), np.array([1, 1, 2]))), shape=(3, 3))
    np.testing.assert_array_equal(ringmm.apsp(dag, longest=True)[0][0], [0, 5, 7])  # the largest of repeats
    pattern = sparse.csr_matrix(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], bool))
    np.testing.assert_array_equal(ringmm.apsp(pattern)[0][0], [0, 1, 2])
    assert ringmm.apsp(m.astype(np.int32))[0].dtype == np.float64
    assert ringmm.apsp(m.astype(np.float32))[0].dtype == np.float32


def ringmm_cli():
    root = Path(__file__).resolve().parents[2]
    path = Path(os.environ.get("RINGMM_CLI", Path(os.environ.get("RINGMM_BUILD_DIR", root / "build")) / "tools" / "ringmm"))
    if not path.is_file():
        pytest.skip(f"the ringmm tool is not built ({path}); set RINGMM_CLI")
    return str(path)


@pytest.mark.parametrize("longest", [False, True])
def test_apsp_sparse_matches_the_command_line_on_the_same_mtx(tmp_path, longest, rng):
    sparse = pytest.importorskip("scipy.sparse")
    cli = ringmm_cli()
    n, count = 30, 120
    rows, cols = rng.integers(0, n, count), rng.integers(0, n, count)  # repeats and self-loops included
    if longest:  # a DAG
        rows, cols = np.minimum(rows, cols), np.maximum(rows, cols)
        keep = rows != cols
        rows, cols = rows[keep], cols[keep]
    weights = rng.integers(0, 9, len(rows)).astype(np.float64)
    lines = [f"{r + 1} {c + 1} {w:g}" for r, c, w in zip(rows, cols, weights)]
    (tmp_path / "g.mtx").write_text(f"%%MatrixMarket matrix coordinate real general\n{n} {n} {len(lines)}\n" +
                                    "\n".join(lines) + "\n")
    run = subprocess.run([cli, "apsp", str(tmp_path / "g.mtx"), "--out", str(tmp_path / "d.npy"), "--next",
                          str(tmp_path / "n.npy"), "--backend", "cpu"] + (["--longest"] if longest else []),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    dist, successors = ringmm.apsp(sparse.coo_matrix((weights, (rows, cols)), shape=(n, n)), longest=longest,
                                   backend="cpu")
    np.testing.assert_array_equal(dist, np.load(tmp_path / "d.npy"))
    np.testing.assert_array_equal(successors, np.load(tmp_path / "n.npy"))


def test_apsp_on_the_gpu(torch_cuda, rng):
    pytest.importorskip("scipy")
    torch = torch_cuda
    w = random_graph(60, 0.15, rng, negative=True)
    dist, successors = ringmm.apsp(torch.from_numpy(w).cuda(), block=16)
    assert dist.device.type == successors.device.type == "cuda"
    np.testing.assert_array_equal(dist.cpu().numpy(), scipy_distances(w, "J"))
    check_routes(w, dist.cpu().numpy(), successors)  # routes read from the device


@pytest.mark.parametrize("undirected", [False, True])
def test_apsp_routes_on_zero_weight_cycles_on_the_gpu(torch_cuda, undirected, rng):
    pytest.importorskip("scipy")
    w = zero_weight_graph(300, 0.02, rng, undirected)
    for block in (None, 64, 100):
        dist, successors = ringmm.apsp(torch_cuda.from_numpy(w).cuda(), block=block)
        np.testing.assert_array_equal(dist.cpu().numpy(), scipy_distances(w, "J"))
        check_routes(w, dist.cpu().numpy(), successors)


def test_apsp_on_the_gpu_with_cupy(cupy, rng):
    pytest.importorskip("scipy")
    w = random_graph(45, 0.2, rng).astype(np.float32)
    dist, successors = ringmm.apsp(cupy.asarray(w))
    assert isinstance(dist, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(dist), scipy_distances(w.astype(np.float64), "FW").astype(np.float32))
    check_routes(w, cupy.asnumpy(dist), successors)


def test_apsp_errors():
    inf = np.inf
    with pytest.raises(ValueError, match="weights has shape \\(3, 4\\): an adjacency matrix is square"):
        ringmm.apsp(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="weights has 3 dimensions"):
        ringmm.apsp(np.zeros((2, 3, 3)))
    with pytest.raises(TypeError, match="weights has dtype int32: apsp takes float32 or float64 weights"):
        ringmm.apsp(np.zeros((3, 3), np.int32))
    with pytest.raises(ValueError, match="weights: weight \\(1, 2\\) is NaN"):
        ringmm.apsp(np.array([[0, 1, inf], [inf, 0, np.nan], [inf, inf, 0]]))
    with pytest.raises(ValueError, match="weights: weight \\(0, 1\\) is -inf"):
        ringmm.apsp(np.array([[0, -inf], [inf, 0]]))
    with pytest.raises(ValueError, match="block must be a positive number of vertices, got -2"):
        ringmm.apsp(np.zeros((2, 2)), block=-2)
    with pytest.raises(TypeError, match="block must be an integer, not float"):
        ringmm.apsp(np.zeros((2, 2)), block=1.5)
    with pytest.raises(ValueError, match="backend: unknown value 'gpu'"):
        ringmm.apsp(np.zeros((2, 2)), backend="gpu")
    with pytest.raises(TypeError, match="backend must be"):
        ringmm.apsp(np.zeros((2, 2)), backend=1)
    with pytest.raises(TypeError, match="weights is not an array of numbers"):
        ringmm.apsp(object())


def test_apsp_sparse_errors():
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(ValueError, match="weights has shape \\(2, 3\\): an adjacency matrix is square"):
        ringmm.apsp(sparse.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="the stored entry \\(0, 1\\) is inf"):
        ringmm.apsp(sparse.coo_matrix((np.array([np.inf]), (np.array([0]), np.array([1]))), shape=(2, 2)))
    with pytest.raises(TypeError, match="weights has dtype complex128"):
        ringmm.apsp(sparse.csr_matrix(np.ones((2, 2), np.complex128)))


def test_route_errors(torch):
    successors = ringmm.apsp(np.array([[0, 1.0], [np.inf, 0]]))[1]
    assert ringmm.route(successors, 0, 1) == [0, 1] and ringmm.route(successors, 1, 0) == []
    assert ringmm.route(successors, 1, 1) == [1]
    with pytest.raises(ValueError, match="i: vertex 2 is out of range 0..1"):
        ringmm.route(successors, 2, 0)
    with pytest.raises(ValueError, match="j: vertex -1 is out of range 0..1"):
        ringmm.route(successors, 0, -1)
    with pytest.raises(TypeError, match="i must be an integer, not str"):
        ringmm.route(successors, "0", 1)
    with pytest.raises(TypeError, match="next has dtype int64: a successor matrix is int32"):
        ringmm.route(successors.astype(np.int64), 0, 1)
    with pytest.raises(ValueError, match="next has shape \\(2, 3\\): a successor matrix is n x n"):
        ringmm.route(np.zeros((2, 3), np.int32), 0, 1)
    looping = np.array([[0, 1, 1], [0, 1, 0], [0, 1, 2]], np.int32)  # 0 → 1 → 0 → ... never reaches 2
    with pytest.raises(ValueError, match="next: the successor matrix does not lead from 0 to 2"):
        ringmm.route(looping, 0, 2)
    assert ringmm.route(torch.from_numpy(successors), 0, 1) == [0, 1]


# ---- hidden Markov models -------------------------------------------------------------------------

def hmm_model(rng, states, symbols, dtype, forbid=0.0, coarse=False):
    """Log-probabilities (not normalised: the algorithms do not need it). Coarse values (quarters)
    make ties, which must go to the smallest state."""
    def draw(shape):
        x = rng.uniform(-4, 0, shape)
        x = np.floor(x) / 4 if coarse else x
        x[rng.random(shape) < forbid] = -np.inf
        return x.astype(dtype)
    return draw(states), draw((states, states)), draw((states, symbols))


def step_major(emission, observations):
    """The (T, B, S) emission scores of (B, T) observations, as the references read them."""
    return emission.T[observations.T]


# batch (None: one sequence), states, symbols, steps, forbidden fraction, coarse
HMM_CASES = [(None, 1, 1, 1, 0.0, False), (None, 3, 4, 9, 0.0, False), (0, 2, 3, 5, 0.0, False),
             (1, 1, 2, 6, 0.0, False), (7, 5, 3, 40, 0.0, False), (33, 7, 9, 17, 0.3, False),
             (4, 33, 5, 12, 0.0, False), (6, 5, 4, 10, 0.0, True)]


def hmm_case(case, dtype, seed):
    batch, states, symbols, steps, forbid, coarse = case
    rng = np.random.default_rng(seed)
    init, trans, emission = hmm_model(rng, states, symbols, dtype, forbid, coarse)
    observations = rng.integers(0, symbols, (1 if batch is None else batch, steps))
    return init, trans, emission, observations


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", HMM_CASES)
def test_viterbi_matches_numpy(case, dtype):
    init, trans, emission, observations = hmm_case(case, dtype, 5)
    want_path, want_score = numpy_viterbi(init, trans, step_major(emission, observations))
    single = case[0] is None
    path, score = ringmm.hmm_viterbi(init, trans, emission, observations[0] if single else observations)
    if single:
        want_path, want_score = want_path[0], want_score[0]
    assert path.dtype == np.int32 and path.shape == want_path.shape and np.shape(score) == np.shape(want_score)
    np.testing.assert_array_equal(path, want_path)
    np.testing.assert_array_equal(score, want_score)
    # The same through the scores themselves, (B, T, S) or (T, S).
    scores = np.swapaxes(step_major(emission, observations), 0, 1)
    path, score = ringmm.hmm_viterbi(init, trans, scores=scores[0] if single else scores)
    np.testing.assert_array_equal(path, want_path)
    np.testing.assert_array_equal(score, want_score)


def forward_tolerance(dtype, steps):
    """Each step's log-plus product is within log-plus's bound, and adding the emission rounds
    once more: errors add up over the steps, relative to magnitudes of at most 4·T."""
    atol, rtol = LOG_PLUS_TOLERANCE[np.dtype(dtype)]
    eps = np.finfo(dtype).eps
    return steps * (atol + (rtol + eps) * 4 * steps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", HMM_CASES)
def test_forward_matches_numpy(case, dtype):
    init, trans, emission, observations = hmm_case(case, dtype, 6)
    want = numpy_forward(init, trans, step_major(emission, observations)).astype(dtype)
    single = case[0] is None
    got = ringmm.hmm_forward(init, trans, emission, observations[0] if single else observations)
    got = np.asarray(got)
    assert got.dtype == dtype and got.shape == (() if single else want.shape)
    np.testing.assert_allclose(got, want[0] if single else want, rtol=0, atol=forward_tolerance(dtype, case[3]))


def test_hmm_sequences_without_a_finite_path():
    inf = np.inf
    init = np.array([0.0, -inf])
    trans = np.array([[-1.0, -inf], [-inf, -inf]])
    emission = np.array([[0.0, -inf], [0.0, 0.0]])  # state 0 cannot emit symbol 1
    observations = np.array([[0, 0, 0], [0, 1, 0]])
    path, score = ringmm.hmm_viterbi(init, trans, emission, observations)
    np.testing.assert_array_equal(path, [[0, 0, 0], [-1, -1, -1]])
    np.testing.assert_array_equal(score, [-2.0, -inf])
    np.testing.assert_array_equal(ringmm.hmm_forward(init, trans, emission, observations), [-2.0, -inf])


def test_hmm_torch_int32_lists_and_views(torch, rng):
    init, trans, emission = hmm_model(rng, 6, 4, np.float64)
    observations = rng.integers(0, 4, (3, 8)).astype(np.int32)
    want_path, want_score = numpy_viterbi(init, trans, step_major(emission, observations))
    path, score = ringmm.hmm_viterbi(torch.from_numpy(init), torch.from_numpy(trans), torch.from_numpy(emission),
                                     torch.from_numpy(observations))
    assert isinstance(path, torch.Tensor) and path.dtype == torch.int32 and score.dtype == torch.float64
    np.testing.assert_array_equal(path.numpy(), want_path)
    np.testing.assert_array_equal(score.numpy(), want_score)
    loglik = ringmm.hmm_forward(init, trans, emission, observations[1].tolist())  # a list of symbols
    np.testing.assert_allclose(loglik, numpy_forward(init, trans, step_major(emission, observations[1:2]))[0],
                               rtol=0, atol=forward_tolerance(np.float64, 8))
    # Strided views of the model are copied, the observations read where they lie.
    wide = np.repeat(trans, 2, axis=1)
    wide[:, 1::2] = np.nan
    path, _ = ringmm.hmm_viterbi(init, wide[:, ::2], emission.T.copy().T, np.asfortranarray(observations))
    np.testing.assert_array_equal(path, want_path)


def test_hmm_on_the_gpu(torch_cuda):
    torch = torch_cuda
    init, trans, emission, observations = hmm_case((9, 12, 5, 20, 0.1, False), np.float32, 7)
    want_path, want_score = numpy_viterbi(init, trans, step_major(emission, observations))
    model = [torch.from_numpy(x).cuda() for x in (init, trans, emission, observations)]
    path, score = ringmm.hmm_viterbi(*model)
    assert path.device.type == "cuda"
    np.testing.assert_array_equal(path.cpu().numpy(), want_path)
    np.testing.assert_array_equal(score.cpu().numpy(), want_score)
    loglik = ringmm.hmm_forward(*model)
    np.testing.assert_allclose(loglik.cpu().numpy(), numpy_forward(init, trans, step_major(emission, observations)),
                               rtol=0, atol=forward_tolerance(np.float32, 20))
    scores = torch.from_numpy(np.swapaxes(step_major(emission, observations), 0, 1).copy()).cuda()
    scores[2, 3, 1] = float("nan")
    with pytest.raises(ValueError, match="scores\\[2, 3, 1\\] is nan"):
        ringmm.hmm_viterbi(model[0], model[1], scores=scores)
    bad = model[3].clone()
    bad[4, 6] = 5
    with pytest.raises(ValueError, match="observations\\[4, 6\\] = 5 is outside 0..4"):
        ringmm.hmm_forward(model[0], model[1], model[2], bad)


def test_hmm_on_the_gpu_with_cupy(cupy):
    init, trans, emission, observations = hmm_case((5, 6, 3, 9, 0.0, False), np.float64, 8)
    path, score = ringmm.hmm_viterbi(*(cupy.asarray(x) for x in (init, trans, emission, observations[0])))
    want_path, want_score = numpy_viterbi(init, trans, step_major(emission, observations[:1]))
    assert isinstance(path, cupy.ndarray) and path.shape == (9,)
    np.testing.assert_array_equal(cupy.asnumpy(path), want_path[0])
    np.testing.assert_array_equal(cupy.asnumpy(score), want_score[0])


def hmm_raises(kind, match, *args, **kwargs):
    for run in (ringmm.hmm_viterbi, ringmm.hmm_forward):
        with pytest.raises(kind, match=match):
            run(*args, **kwargs)


def test_hmm_errors(rng):
    init, trans, emission = hmm_model(rng, 3, 4, np.float32)
    obs = np.array([[0, 1, 2, 3], [3, 2, 1, 0]])
    hmm_raises(ValueError, "init has shape \\(1, 3\\): the initial log-probabilities are a vector", init[None], trans,
               emission, obs)
    hmm_raises(ValueError, "init has shape \\(0,\\)", init[:0], trans[:0, :0], emission[:0], obs)
    hmm_raises(TypeError, "init has dtype int64: HMMs take float32 or float64", np.zeros(3, np.int64), trans, emission, obs)
    hmm_raises(TypeError, "trans has dtype float64 but init has float32", init, trans.astype(np.float64), emission, obs)
    hmm_raises(ValueError, "trans has shape \\(3, 2\\) but init has 3 states", init, trans[:, :2], emission, obs)
    hmm_raises(ValueError, "emission has shape \\(2, 4\\) but init has 3 states", init, trans, emission[:2], obs)
    hmm_raises(TypeError, "emission has dtype float64 but init has float32", init, trans, emission.astype(np.float64), obs)
    hmm_raises(TypeError, "observations has dtype float64: observations are int32 or int64", init, trans, emission,
               obs.astype(np.float64))
    hmm_raises(ValueError, "observations has shape \\(1, 2, 4\\): one sequence is \\(T,\\) and a batch \\(B, T\\)", init,
               trans, emission, obs[None, :, :])
    hmm_raises(ValueError, "observations has shape \\(2, 0\\): a sequence needs at least one step", init, trans,
               emission, obs[:, :0])
    hmm_raises(ValueError, "pass scores, or emission with observations, not both", init, trans, emission, obs,
               scores=np.zeros((4, 3), np.float32))
    hmm_raises(ValueError, "pass emission and observations, or scores", init, trans)
    hmm_raises(ValueError, "emission needs observations", init, trans, emission)
    hmm_raises(ValueError, "scores has shape \\(4, 2\\): log-scores are \\(T, S\\) for one sequence", init, trans,
               scores=np.zeros((4, 2), np.float32))
    hmm_raises(ValueError, "backend 'cuda' runs HMMs on arrays in GPU memory", init, trans, emission, obs, backend="cuda")
    hmm_raises(TypeError, "backend must be", init, trans, emission, obs, backend=None)


def test_hmm_value_errors_name_the_element(rng):
    init, trans, emission = hmm_model(rng, 3, 4, np.float32)
    obs = np.array([[0, 1, 2, 3], [3, 2, 4, 0]])
    hmm_raises(ValueError, "observations\\[1, 2\\] = 4 is outside 0..3 \\(emission has 4 columns\\)", init, trans,
               emission, obs)
    hmm_raises(ValueError, "observations\\[2\\] = -1 is outside 0..3", init, trans, emission, np.array([0, 1, -1]))
    bad = emission.copy()
    bad[1, 2] = np.nan
    hmm_raises(ValueError, "emission\\[1, 2\\] is nan \\(read for observations\\[0, 2\\]\\)", init, trans, bad, obs[:1])
    scores = np.zeros((2, 4, 3), np.float32)
    scores[1, 3, 2] = np.inf
    hmm_raises(ValueError, "scores\\[1, 3, 2\\] is \\+inf; log-scores must be finite or -inf", init, trans,
               scores=scores)
    hmm_raises(ValueError, "init: element 1 is \\+inf", np.array([0, np.inf, 0], np.float32), trans, emission, obs[:1])
    bad = trans.copy()
    bad[1, 2] = np.nan
    hmm_raises(ValueError, "trans: element 5 is NaN", init, bad, emission, obs[:1])


def test_hmm_mixed_frameworks(torch, rng):
    init, trans, emission = hmm_model(rng, 3, 4, np.float32)
    hmm_raises(TypeError, "init is a torch array but trans is a numpy array", torch.from_numpy(init), trans, emission,
               [0, 1])


# ---- the GIL ---------------------------------------------------------------------------------------

def longest_pause_beside(call):
    """Runs `call` in a thread of its own while this thread keeps running Python code; returns the
    longest stretch this thread went without running and how long the call took. A call that held
    the GIL would stop this thread for the whole call."""
    took = []

    def timed():
        start = time.perf_counter()
        call()
        took.append(time.perf_counter() - start)

    worker = threading.Thread(target=timed)
    last, longest = time.perf_counter(), 0.0
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    return longest, took[0]


@pytest.mark.parametrize("application", ["apsp", "hmm_forward"])
def test_calls_release_the_gil(application, rng):
    """The problem grows until one call lasts 0.2 s; then, beside it, this thread never stops for
    half of that (a call that held the GIL would stop it for all of it; the scheduler's slices and
    the interpreter's switch interval are milliseconds)."""
    sizes = (200, 400, 800, 1600, 3200) if application == "apsp" else (200, 400, 800, 1600, 3200, 6400, 12800, 25600)
    for size in sizes:
        if application == "apsp":
            w = rng.uniform(1, 10, (size, size))
            call = lambda: ringmm.apsp(w)  # noqa: E731
        else:
            init, trans, emission = hmm_model(rng, 64, 8, np.float64)
            observations = rng.integers(0, 8, (size, 40))
            call = lambda: ringmm.hmm_forward(init, trans, emission, observations)  # noqa: E731
        start = time.perf_counter()
        call()
        if time.perf_counter() - start > 0.2:
            break
    longest, took = longest_pause_beside(call)
    assert longest < took / 2, (longest, took)


def test_core_apsp_refuses_a_matrix_that_is_not_square():
    """The extension's own check: ringmm.apsp is nothing but its one _core call."""
    from ringmm import _core

    with pytest.raises(ValueError, match="weights has shape \\(5, 3\\): an adjacency matrix is square"):
        _core.apsp(np.zeros((5, 3)), False, None, True, "cpu")
