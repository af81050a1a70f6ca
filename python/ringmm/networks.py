"""ringmm.networks: problems on graphs solved as one tropical (or counting) tensor network each,
contracted by ringmm.einsum in the order its path finder chooses.

    >>> import ringmm.networks as rn
    >>> edges = [(0, 1), (1, 2), (2, 3), (3, 0)]          # a 4-cycle
    >>> rn.max_independent_set_size(edges), rn.count_independent_sets(edges)
    (2, 7)

Every vertex v is an index x_v of two values (not in / in the set; spin −1 / +1); every edge
(u, v) a 2 × 2 tensor over (x_u, x_v), every vertex a 2-vector over x_v. The network's value is
⊕ over all configurations of ⊗ of all tensors:
- max_independent_set_size: max-plus; vertex tensor (0, 1) counts the vertices in the set, edge
  tensor 0 except −∞ (max-plus's 0̄) where both ends are in it;
- count_independent_sets: plus-times over float64, vertex tensor (1, 1), edge tensor 1 except 0
  where both ends are in the set; exact while the count is below 2**53;
- spin_glass_ground_energy: min-plus; edge tensor −J_uv·s_u·s_v, vertex tensor −h_v·s_v: the
  least energy E(s) = −Σ J_uv s_u s_v − Σ h_v s_v over the 2ⁿ spin configurations.

Arguments shared by the three:
    edges: pairs (u, v) of vertices 0..n−1 (a list, or an (m, 2) integer array); self-loops are
        refused, repeated edges count once (their couplings add, for the spin glass);
    n: the number of vertices (default: one more than the largest vertex in edges);
    optimize: the contraction order, as for ringmm.einsum ("auto", "greedy", "cotengra", a path);
    device: "cpu" (numpy), or "cuda" (torch tensors on the current CUDA device, or cupy arrays
        where torch is missing).
The largest intermediate of the order grows as 2 to the network's contraction width: fine for
sparse graphs of a few hundred vertices with a good order (ringmm.networks.path says what an order
costs), hopeless for dense ones.
"""

import numpy as np

from ._einsum import einsum, einsum_path

__all__ = ["max_independent_set_size", "count_independent_sets", "spin_glass_ground_energy", "network", "path"]


def _symbol(i):
    """The einsum index of vertex i: a letter, then symbols beyond ASCII."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return letters[i] if i < len(letters) else chr(0x4E00 + i)


def _graph(edges, n):
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2) if len(edges) else np.zeros((0, 2), np.int64)
    if n is None:
        n = int(e.max()) + 1 if e.size else 0
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be a number of vertices, got {n}")
    if e.size and (e.min() < 0 or e.max() >= n):
        bad = e[(e < 0).any(axis=1) | (e >= n).any(axis=1)][0]
        raise ValueError(f"edge ({bad[0]}, {bad[1]}) names a vertex outside 0..{n - 1}")
    loops = e[e[:, 0] == e[:, 1]]
    if len(loops):
        raise ValueError(f"edge ({loops[0][0]}, {loops[0][1]}) is a self-loop")
    return e, n


def network(kind, edges, n=None, couplings=None, fields=None):
    """The einsum subscripts and tensors (numpy) of one of the three problems ("mis", "count",
    "spin_glass"), and its semiring; what the solvers contract."""
    e, n = _graph(edges, n)
    if kind == "mis":
        semiring, dtype = "max_plus", np.float32  # sizes up to 2**24 are exact
        vertex = np.array([0.0, 1.0])
        edge = np.array([[0.0, 0.0], [0.0, -np.inf]])
    elif kind == "count":
        semiring, dtype = "plus_times", np.float64
        vertex = np.array([1.0, 1.0])
        edge = np.array([[1.0, 1.0], [1.0, 0.0]])
    elif kind == "spin_glass":
        semiring, dtype = "min_plus", np.float64
    else:
        raise ValueError(f"kind must be 'mis', 'count' or 'spin_glass', not {kind!r}")
    terms, tensors = [], []
    spins = np.array([-1.0, 1.0])
    if kind == "spin_glass":
        j = np.ones(len(e)) if couplings is None else np.asarray(couplings, np.float64).reshape(-1)
        if len(j) != len(e):
            raise ValueError(f"couplings has {len(j)} values for {len(e)} edges")
        h = np.zeros(n) if fields is None else np.asarray(fields, np.float64).reshape(-1)
        if len(h) != n:
            raise ValueError(f"fields has {len(h)} values for {n} vertices")
        if not (np.isfinite(j).all() and np.isfinite(h).all()):
            raise ValueError("couplings and fields must be finite")
    # One tensor per distinct edge (couplings of repeated edges add); one per vertex.
    merged = {}
    for k, (u, v) in enumerate(e):
        key = (min(u, v), max(u, v))
        merged[key] = merged.get(key, 0.0) + (j[k] if kind == "spin_glass" else 0.0)
    for (u, v), coupling in merged.items():
        terms.append(_symbol(u) + _symbol(v))
        tensors.append(-coupling * np.outer(spins, spins) if kind == "spin_glass" else edge)
    for v in range(n):
        terms.append(_symbol(v))
        tensors.append(-h[v] * spins if kind == "spin_glass" else vertex)
    return ",".join(terms) + "->", [t.astype(dtype) for t in tensors], semiring


def _on_device(tensors, device):
    if device == "cpu":
        return tensors
    if device != "cuda":
        raise ValueError(f"device must be 'cpu' or 'cuda', not {device!r}")
    try:
        import torch
        return [torch.as_tensor(t, device="cuda") for t in tensors]
    except ImportError:
        import cupy
        return [cupy.asarray(t) for t in tensors]


def _solve(kind, edges, n, optimize, device, couplings=None, fields=None):
    subscripts, tensors, semiring = network(kind, edges, n, couplings, fields)
    if not tensors:
        return None
    value = einsum(subscripts, *_on_device(tensors, device), semiring=semiring, optimize=optimize)
    return float(value.item() if hasattr(value, "item") else value)


def max_independent_set_size(edges, n=None, *, optimize="auto", device="cpu"):
    """The size of a maximum independent set (max-plus). Returns an int."""
    value = _solve("mis", edges, n, optimize, device)
    return 0 if value is None else int(round(value))


def count_independent_sets(edges, n=None, *, optimize="auto", device="cpu"):
    """The number of independent sets, the empty set included (plus-times, float64). Returns an int,
    exact while the count is below 2**53."""
    value = _solve("count", edges, n, optimize, device)
    return 1 if value is None else int(round(value))


def spin_glass_ground_energy(edges, couplings=None, n=None, *, fields=None, optimize="auto", device="cpu"):
    """The least energy −Σ J_uv s_u s_v − Σ h_v s_v over spins s_v = ±1 (min-plus). couplings: one J
    per edge (default 1: the ferromagnet); fields: one h per vertex (default 0). Returns a float."""
    value = _solve("spin_glass", edges, n, optimize, device, couplings, fields)
    return 0.0 if value is None else value


def path(kind, edges, n=None, *, optimize="auto"):
    """What contracting the network of `kind` ("mis", "count", "spin_glass") would take: the
    ringmm.einsum_path report (path, cost, largest intermediate, peak memory)."""
    subscripts, tensors, semiring = network(kind, edges, n)
    return einsum_path(subscripts, *tensors, semiring=semiring, optimize=optimize)
