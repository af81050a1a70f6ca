"""What the product is for: ringmm.syrk, all-pairs shortest paths (ringmm.apsp, ringmm.route) and
hidden Markov models (ringmm.hmm_viterbi, ringmm.hmm_forward), on arrays of any framework that
ringmm.matmul takes. Each function is one _core call that checks its arguments before it writes
anything, allocates and copies in the caller's framework, runs with the GIL released and on the
framework's current stream, and returns arrays of the caller's framework on the caller's device."""

import sys

import numpy as np

from . import _core
from . import _frameworks  # noqa: F401  (registers the frameworks with _core)


def syrk(a, semiring="plus_times", *, trans=False, out=None, backend="auto", trust_inputs=False):
    """The symmetric product op(a)ᵀ ⊗ op(a) over a semiring: aᵀ ⊗ a, or a ⊗ aᵀ with trans=True.

    a: an array of at least 2 dimensions (numpy, torch, cupy, jax on the host, or
        __cuda_array_interface__); its last two are the matrix, leading ones a batch. An (K, N) a
        gives an (N, N) result, (N, N) with trans=True for an (N, K) a. Strided views are read in
        place where a leading dimension describes them.
    semiring: a name of ringmm.semirings(); the dtypes are that semiring's, as for matmul.
    out: an array of the result's shape and dtype to write into; returned. It must not overlap a.
    backend: "auto", "cpu" or "cuda", as for matmul.
    trust_inputs: skip the check of the values against the semiring's domain, as for matmul.

    Result entry (i, j) is ⊕_k op(a)[k, i] ⊗ op(a)[k, j]. One triangle is computed and mirrored,
    since every built-in ⊗ is commutative. Returns an array of a's framework and device. A bad
    argument raises ValueError or TypeError naming it, before anything is written to out.
    """
    return _core.syrk(a, semiring, trans, out, backend, trust_inputs)


def apsp(weights, *, longest=False, block=None, return_next=True, backend="auto"):
    """All-pairs shortest paths (longest with longest=True) with their routes: blocked
    Floyd–Warshall whose block updates are min-plus (max-plus) argmax products.

    weights: an n × n adjacency matrix, float32 or float64: weights[i, j] is the length of the
        edge i → j, +inf where there is none (also with longest=True). Zero is an edge of length 0.
        A self-loop counts only when it makes a cycle of the wrong sign. NaN and -inf are refused.
        A scipy.sparse matrix is read as `ringmm apsp` reads a Matrix Market file: every stored
        entry is an edge (explicit zeros too) and a missing one is none; repeated entries keep the
        best weight (smallest, largest with longest); NaN and infinite entries are refused; a
        boolean matrix is a pattern whose True entries weigh 1. It gives float64 distances (float32
        for a float32 matrix), on the host.
    longest: longest paths over max-plus, exact for DAGs (any graph without a positive cycle).
    block: vertices per Floyd–Warshall block; None or 0 for the backend's default (128 on the
        CPU, 1024 on CUDA, its maximum).
    return_next: also return the successor matrix.
    backend: "auto", "cpu" or "cuda", as for matmul.

    Returns (dist, next), or dist alone with return_next=False, in the weights' framework:
    dist[i, j] is the length of a shortest i → j path, +inf where j is unreachable (-inf with
    longest), dist[i, i] = 0; next[i, j] (int32) is the vertex after i on that path, -1 where j
    is unreachable, next[i, i] = i. ringmm.route(next, i, j) follows it. A negative cycle (a
    positive one with longest) raises ValueError listing vertices on one.
    """
    sparse = sys.modules.get("scipy.sparse")  # imported already when weights is one of its matrices
    if sparse is not None and sparse.issparse(weights):
        weights = _dense_weights(weights, longest)
    return _core.apsp(weights, longest, block, return_next, backend)


def route(next, i, j):
    """The vertices of the path i → … → j that a successor matrix (apsp's next) gives: [i] when
    i = j, [] when j is unreachable from i. next may be on a GPU; only its column j is read.
    A vertex outside 0..n-1 raises ValueError, and so does a matrix that does not lead from i
    to j (not a successor matrix)."""
    return _core.route(next, i, j)


def hmm_viterbi(init, trans, emission=None, observations=None, *, scores=None, backend="auto"):
    """The most likely state paths of sequences under a hidden Markov model, with their log-scores
    (max-plus: one (B×S)·(S×S) product with argmax per step).

    The model, in log-probabilities (float32 or float64; -inf forbids; NaN and +inf are refused):
        init: (S,), log P(state s at step 0);
        trans: (S, S), trans[s, s'] = log P(s' at step t+1 | s at step t);
    and the observations, either
        emission: (S, V), emission[s, v] = log P(symbol v | state s), with
        observations: int32 or int64 symbols, (T,) for one sequence or (B, T) for B of them;
    or, for any other observation model,
        scores: the emission log-scores themselves, (T, S) or (B, T, S): scores[b, t, s] is the
            log-likelihood of sequence b's step t in state s.
    All sequences of a batch have the same length T ≥ 1 (one call per length for others).
    backend: "auto", "cpu" or "cuda". GPU arrays run on CUDA on the current stream; host arrays
        on the CPU ("cuda" is refused for them).

    Returns (path, score): path is int32, (T,) or (B, T), the states of the best path (ties go to
    the smallest state); score is its log-score, a scalar or (B,). A sequence with no path of
    finite score gets score -inf and path -1 at every step.
    """
    return _core.hmm(True, init, trans, emission, observations, scores, backend)


def hmm_forward(init, trans, emission=None, observations=None, *, scores=None, backend="auto"):
    """The log-likelihood of sequences under a hidden Markov model: the forward algorithm, one
    (B×S)·(S×S) log-plus product per step. The arguments are hmm_viterbi's.

    Returns log P(observations), a scalar for one sequence or (B,) for a batch; -inf for a
    sequence the model cannot produce.
    """
    return _core.hmm(False, init, trans, emission, observations, scores, backend)


def _dense_weights(matrix, longest):
    """A scipy.sparse adjacency matrix as a dense numpy one, by the rules `ringmm apsp` applies to
    a Matrix Market file (see apsp)."""
    if len(matrix.shape) != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"weights has shape {matrix.shape}: an adjacency matrix is square")
    entries = matrix.tocoo()
    rows, cols, values = entries.row, entries.col, entries.data
    kind = values.dtype.kind
    if kind == "b":  # a pattern: the True entries are the edges
        rows, cols, values = rows[values], cols[values], np.ones(int(values.sum()))
    elif kind not in "iuf":
        raise TypeError(f"weights has dtype {values.dtype}: a sparse adjacency matrix holds real, integer or "
                        "boolean weights")
    dtype = np.float32 if values.dtype == np.float32 else np.float64
    values = values.astype(dtype)
    bad = ~np.isfinite(values)
    if bad.any():
        at = np.flatnonzero(bad)[0]
        raise ValueError(f"weights: the stored entry ({rows[at]}, {cols[at]}) is {values[at]}: a sparse matrix's "
                         "entries are edges, which have finite weights (leave a missing edge out instead)")
    n = matrix.shape[0]
    if longest:  # the largest of repeated entries; -inf marks "none yet"
        dense = np.full((n, n), -np.inf, dtype)
        np.maximum.at(dense, (rows, cols), values)
        dense[dense == -np.inf] = np.inf
    else:
        dense = np.full((n, n), np.inf, dtype)
        np.minimum.at(dense, (rows, cols), values)
    return dense
