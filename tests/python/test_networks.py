"""ringmm.networks against brute force on every graph of a random family up to 20 vertices (maximum
independent set, number of independent sets, spin-glass ground energy), and against networkx's exact
maximum clique of the complement on larger graphs."""

import numpy as np
import pytest

import ringmm.networks as rn


def random_graph(n, p, rng):
    return [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p]


def brute_force(n, edges, couplings=None, fields=None):
    """Over all 2ⁿ vertex subsets (bit v of s: v is in the set, or has spin +1)."""
    s = np.arange(2 ** n, dtype=np.int64)
    bits = [(s >> v) & 1 for v in range(n)]
    independent = np.ones(2 ** n, bool)
    for u, v in edges:
        independent &= ~((bits[u] & bits[v]).astype(bool))
    sizes = sum(bits) if n else np.zeros(1, np.int64)
    spins = [2 * b - 1 for b in bits]
    energy = np.zeros(2 ** n)
    for k, (u, v) in enumerate(edges):
        energy -= (1.0 if couplings is None else couplings[k]) * spins[u] * spins[v]
    for v in range(n):
        energy -= (0.0 if fields is None else fields[v]) * spins[v]
    return int(sizes[independent].max()), int(independent.sum()), float(energy.min())


def test_every_graph_of_a_random_family_up_to_20_vertices():
    rng = np.random.default_rng(27)
    for n in range(0, 21):
        p = (0.15, 0.3, 0.5)[n % 3]
        edges = random_graph(n, p, rng)
        couplings = rng.choice([-1.0, 1.0], len(edges))
        fields = rng.normal(0, 0.5, n)
        mis, count, energy = brute_force(n, edges, couplings, fields)
        assert rn.max_independent_set_size(edges, n) == mis, (n, edges)
        assert rn.count_independent_sets(edges, n) == count, (n, edges)
        got = rn.spin_glass_ground_energy(edges, couplings, n, fields=fields)
        assert got == pytest.approx(energy, abs=1e-9), (n, edges)


@pytest.mark.parametrize("n,degree", [(40, 3), (60, 3), (50, 4)])
def test_maximum_independent_set_against_networkx(n, degree):
    nx = pytest.importorskip("networkx")
    graph = nx.random_regular_graph(degree, n, seed=n + degree)
    _, weight = nx.max_weight_clique(nx.complement(graph), weight=None)
    assert rn.max_independent_set_size(list(graph.edges()), n) == weight


def test_the_ferromagnet_and_the_empty_graph():
    ring = [(v, (v + 1) % 9) for v in range(9)]
    assert rn.spin_glass_ground_energy(ring) == -9.0  # all spins aligned
    assert rn.spin_glass_ground_energy(ring, [-1.0] * 9) == -7.0  # an odd antiferromagnetic ring is frustrated
    assert rn.max_independent_set_size([], 5) == 5
    assert rn.count_independent_sets([], 5) == 32
    assert rn.max_independent_set_size([], 0) == 0


def test_path_reports_the_largest_intermediate():
    ring = [(v, (v + 1) % 30) for v in range(30)]
    path, info = rn.path("mis", ring)
    assert path[0] == "einsum_path" and info.largest_intermediate <= 2 ** 4


@pytest.mark.parametrize("call,match", [
    (lambda: rn.max_independent_set_size([(0, 0)]), "self-loop"),
    (lambda: rn.max_independent_set_size([(0, 3)], 3), "outside 0..2"),
    (lambda: rn.spin_glass_ground_energy([(0, 1)], [1.0, 2.0]), "couplings has 2 values for 1 edges"),
    (lambda: rn.spin_glass_ground_energy([(0, 1)], [np.inf]), "finite"),
    (lambda: rn.network("clique", [(0, 1)]), "kind must be"),
    (lambda: rn.max_independent_set_size([(0, 1)], device="tpu"), "device must be"),
])
def test_refusals(call, match):
    with pytest.raises(ValueError, match=match):
        call()
