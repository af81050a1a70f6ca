"""A straightforward numpy reference for every semiring: broadcast the terms a[i, k] ⊗ b[k, j] to
a (..., M, K, N) array and ⊕-reduce over K; and references for what the product is used for
(shortest paths, HMMs). Test data come from here too."""

import numpy as np

I32_INF = 2**30 - 1  # the integer max-plus / min-plus 0̄ sentinel (README: "Integers have no ∞")
I32_FINITE = 2**28  # finite integer tropical inputs lie within ±2^28


class Spec:
    """A semiring as numpy computes it: ⊕ as a ufunc, ⊗ as a function, 0̄ and 1̄ per dtype."""

    def __init__(self, add, mul, zero, one, low=-4, high=4):
        self.add, self._mul, self._zero, self._one = add, mul, zero, one
        self.low, self.high = low, high  # the range of test data

    def zero(self, dtype):
        return self._zero(np.dtype(dtype))

    def one(self, dtype):
        return self._one(np.dtype(dtype))

    def mul(self, x, y, dtype):
        return self._mul(np.asarray(x), np.asarray(y), np.dtype(dtype))


def _inf(sign):
    def value(dtype):
        if dtype.kind == "f":
            return dtype.type(sign * np.inf)
        return np.int32(sign * I32_INF)
    return value


def _extreme(sign):  # max-min / min-max: ±∞, or the int32 limits
    def value(dtype):
        if dtype.kind == "f":
            return dtype.type(sign * np.inf)
        info = np.iinfo(dtype)
        return dtype.type(info.max if sign > 0 else info.min)
    return value


def _tropical_mul(sign):
    """+ with the integer sentinel absorbing: a term with 0̄ is 0̄ (and sums never wrap)."""
    def mul(x, y, dtype):
        if dtype.kind == "f":
            return (x + y).astype(dtype)
        zero = -sign * I32_INF
        s = x.astype(np.int64) + y.astype(np.int64)
        return np.where((x == zero) | (y == zero), zero, s).astype(dtype)
    return mul


def _const(v):
    return lambda dtype: dtype.type(v)


def _bool_of(dtype):
    return lambda x: x.astype(bool).astype(dtype)


SPECS = {
    "plus_times": Spec(np.add, lambda x, y, t: (x * y).astype(t), _const(0), _const(1), -3, 3),
    "max_plus": Spec(np.maximum, _tropical_mul(+1), _inf(-1), _const(0)),
    "min_plus": Spec(np.minimum, _tropical_mul(-1), _inf(+1), _const(0)),
    "max_min": Spec(np.maximum, lambda x, y, t: np.minimum(x, y).astype(t), _extreme(-1), _extreme(+1)),
    "lor_land": Spec(np.logical_or, lambda x, y, t: np.logical_and(x, y).astype(t), _const(0), _const(1)),
    "max_times": Spec(np.maximum, lambda x, y, t: (x * y).astype(t), _const(0), _const(1), 0, 3),
    "min_max": Spec(np.minimum, lambda x, y, t: np.maximum(x, y).astype(t), _extreme(+1), _extreme(-1)),
    "log_plus": Spec(np.logaddexp, lambda x, y, t: (x + y).astype(t), _inf(-1), _const(0)),
}

# log-plus's bound (LogPlus::absolute_tolerance, relative_tolerance): |got − want| ≤ atol + rtol·|want|.
LOG_PLUS_TOLERANCE = {np.dtype(np.float32): (2e-5, 1e-6), np.dtype(np.float64): (1e-12, 1e-14)}


def reference(semiring, a, b, c=None, alpha=None, beta=None):
    """alpha ⊗ (a ⊗ b) ⊕ beta ⊗ c, with numpy.matmul's broadcasting (a, b at least 2-D). Float
    plus-times and log-plus are summed in float64 and rounded once, so that only ringmm's rounding
    differs."""
    spec, dtype = SPECS[semiring], a.dtype
    if semiring in ("plus_times", "log_plus") and dtype.kind == "f" and dtype != np.float64:
        wide = [None if x is None else np.asarray(x, np.float64) for x in (a, b, c)]
        return reference(semiring, *wide, alpha=alpha, beta=beta).astype(dtype)
    terms = spec.mul(a[..., :, :, None], b[..., None, :, :], dtype)
    acc = spec.add.reduce(terms, axis=-2, initial=spec.zero(dtype)).astype(dtype)
    if alpha is not None:
        acc = spec.mul(alpha, acc, dtype)
    if c is not None:
        scaled = spec.mul(spec.one(dtype) if beta is None else beta, c, dtype)
        acc = spec.add(acc, scaled).astype(dtype)
    if dtype.kind in "ub":  # or-and's outputs are 0 or 1
        acc = acc.astype(bool).astype(dtype)
    return acc


def random_operand(semiring, dtype, shape, rng, zeros=0.1):
    """Random test data in the semiring's domain, with a fraction of 0̄ entries (never all zeros)."""
    spec, dtype = SPECS[semiring], np.dtype(dtype)
    if dtype == bool:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.choice(np.array([0, 1, 7], dtype), size=shape)
    if dtype.kind == "f":
        x = rng.uniform(spec.low, spec.high, shape).astype(dtype)
    else:
        x = rng.integers(spec.low * 25, spec.high * 25 + 1, shape).astype(dtype)
    if zeros:
        x[rng.random(shape) < zeros] = spec.zero(dtype)
    return x


def assert_matches(semiring, got, want, k, scale=1):
    """Exact, except float plus-times: a sum of K terms, each at most max|a|·max|b| (times
    `scale` for alpha and c), is within K·ε of that bound times K of the exact sum (the classic
    γ_K bound, with room for any summation order); and log-plus, within its own bound."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if semiring == "plus_times" and got.dtype.kind == "f":
        k = max(k, 1)
        term = max(abs(SPECS[semiring].low), SPECS[semiring].high) ** 2
        atol = (k + 2) * np.finfo(got.dtype).eps * k * term * scale
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)
    elif semiring == "log_plus":
        atol, rtol = LOG_PLUS_TOLERANCE[got.dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


def reference_argmax(semiring, a, b, c=None, beta=None):
    """The index matrix of a selecting semiring's product (a, b at least 2-D, broadcast): the first
    k whose term a[i, k] ⊗ b[k, j] equals the entry, -1 where every term is 0̄ and, with c, where
    beta ⊗ c wins or ties."""
    spec, dtype = SPECS[semiring], a.dtype
    zero = spec.zero(dtype)
    terms = spec.mul(a[..., :, :, None], b[..., None, :, :], dtype)  # (..., M, K, N)
    best = spec.add.reduce(terms, axis=-2, initial=zero).astype(dtype)
    if terms.shape[-2] == 0:
        k_star = np.full(best.shape, -1)
    else:
        k_star = np.argmax(terms == best[..., None, :], axis=-2)  # the first k that attains it
        k_star[best == zero] = -1
    if c is not None:
        scaled = spec.mul(spec.one(dtype) if beta is None else beta, c, dtype)
        k_star = np.where(spec.add(best, scaled) == scaled, -1, k_star)
    return k_star.astype(np.int32)


# ---- applications ------------------------------------------------------------------------------

def random_graph(n, density, rng, negative=False):
    """Dense weights with +inf for no edge; integer weights, so that sums are exact in float64."""
    w = np.where(rng.random((n, n)) < density, rng.integers(1, 10, (n, n)).astype(np.float64), np.inf)
    np.fill_diagonal(w, np.inf)
    if negative:  # potentials: negative edges, but every cycle keeps its (positive) length
        p = rng.integers(-20, 21, n).astype(np.float64)
        w = w + p[:, None] - p[None, :]
    return w


def scipy_distances(w, method):
    """scipy.sparse.csgraph.shortest_path of a dense adjacency matrix (+inf: no edge; 0 is an edge)."""
    from scipy import sparse
    from scipy.sparse import csgraph

    finite = np.isfinite(w)
    rows, cols = np.nonzero(finite)
    graph = sparse.csr_matrix((w[finite], (rows, cols)), shape=w.shape)
    return csgraph.shortest_path(graph, method=method, directed=True)


def numpy_viterbi(init, trans, emit):
    """emit is (T, B, S). Ties: the smallest previous state, then the smallest final state."""
    steps, batch, states = emit.shape
    delta = init[None, :] + emit[0]
    back = np.zeros((steps, batch, states), np.int32)
    for t in range(1, steps):
        terms = delta[:, :, None] + trans[None, :, :]  # (B, s, s')
        back[t] = np.argmax(terms, axis=1)  # numpy's argmax returns the first maximum
        delta = np.max(terms, axis=1) + emit[t]
    last = np.argmax(delta, axis=1)
    score = delta[np.arange(batch), last]
    path = np.full((batch, steps), -1, np.int32)
    for b in range(batch):
        if score[b] == -np.inf:
            continue
        path[b, -1] = last[b]
        for t in range(steps - 1, 0, -1):
            path[b, t - 1] = back[t, b, path[b, t]]
    return path, score


def numpy_forward(init, trans, emit):
    alpha = (init[None, :] + emit[0]).astype(np.float64)
    for t in range(1, emit.shape[0]):
        alpha = np.logaddexp.reduce(alpha[:, :, None] + trans[None, :, :].astype(np.float64), axis=1) + emit[t]
    return np.logaddexp.reduce(alpha, axis=1)


def brute_force(subscripts, operands, semiring):
    """An einsum by enumeration: no paths, no products, no reshapes. Explicit output only; an
    ellipsis is given as letters by the caller. Size-1 dimensions broadcast."""
    inputs, output = subscripts.split("->")
    terms = inputs.split(",")
    letters = sorted(set("".join(terms)))
    sizes = {}
    for term, x in zip(terms, operands):
        for c, n in zip(term, x.shape):
            sizes[c] = max(sizes.get(c, 1), n) if n != 0 and sizes.get(c) != 0 else 0
    dtype = operands[0].dtype
    spec = SPECS[semiring]
    wide = dtype.kind == "f" and semiring in ("plus_times", "log_plus")
    work = np.float64 if wide else dtype
    grid = np.indices([sizes[c] for c in letters]) if letters else np.zeros((0,), int)
    where = {c: grid[i] for i, c in enumerate(letters)}
    total = None
    for term, x in zip(terms, operands):
        index = tuple(where[c] % max(x.shape[k], 1) if x.shape[k] == 1 else where[c] for k, c in enumerate(term))
        values = np.asarray(x, work)[index] if term else np.full([sizes[c] for c in letters], np.asarray(x, work))
        total = values if total is None else spec.mul(total, values, work)
    drop = tuple(i for i, c in enumerate(letters) if c not in output)
    reduced = spec.add.reduce(total, axis=drop, initial=spec.zero(np.dtype(work))) if drop else total
    kept = [c for c in letters if c in output]
    result = np.transpose(reduced, [kept.index(c) for c in output]) if output else reduced
    result = np.asarray(result).astype(dtype)
    if dtype.kind in "ub":
        result = result.astype(bool).astype(dtype)
    return result


def assert_einsum_matches(semiring, got, want, terms, operands=2):
    """Exact for integers and for ⊗ = min/max; for float ⊗ = + or × across three or more operands,
    within the rounding of their order (a path adds (x + y) + z where the reference adds x + (y + z))."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if semiring in ("max_plus", "min_plus", "max_times") and got.dtype.kind == "f" and operands > 2:
        eps = np.finfo(got.dtype).eps
        np.testing.assert_allclose(got, want, rtol=4 * operands * eps, atol=64 * operands * eps)
    elif semiring == "log_plus":
        atol, rtol = LOG_PLUS_TOLERANCE[got.dtype]
        np.testing.assert_allclose(got, want, rtol=rtol * 10 * terms, atol=atol * 10 * terms)
    elif semiring == "plus_times" and got.dtype.kind == "f":
        bound = np.finfo(got.dtype).eps * 16 * max(terms, 1) * 9 ** 4
        np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    else:
        np.testing.assert_array_equal(got, want)
