"""`ringmm apsp` against scipy.sparse.csgraph.shortest_path on random graphs.

Runs the built command-line tool: $RINGMM_CLI, else <build>/tools/ringmm with <build> from
$RINGMM_BUILD_DIR or ./build (scripts/test.sh sets RINGMM_CLI). Skipped without scipy or the tool.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from reference import random_graph, scipy_distances

pytest.importorskip("scipy.sparse.csgraph")  # the reference


def cli():
    root = Path(__file__).resolve().parents[2]
    build = Path(os.environ.get("RINGMM_BUILD_DIR", root / "build"))
    path = Path(os.environ.get("RINGMM_CLI", build / "tools" / "ringmm"))
    if not path.is_file():
        pytest.skip(f"the ringmm tool is not built ({path}); set RINGMM_CLI")
    return str(path)


def solve(tmp_path, w, *extra):
    np.save(tmp_path / "g.npy", w)
    run = subprocess.run([cli(), "apsp", str(tmp_path / "g.npy"), "--out", str(tmp_path / "d.npy"),
                          "--next", str(tmp_path / "n.npy"), *extra], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return np.load(tmp_path / "d.npy"), np.load(tmp_path / "n.npy")


def check_routes(w, d, nxt):
    n = len(w)
    for i in range(n):
        for j in range(n):
            if not np.isfinite(d[i, j]):
                assert nxt[i, j] == -1
                continue
            v, length, hops = i, 0.0, 0
            while v != j:
                u = nxt[v, j]
                assert 0 <= u < n and np.isfinite(w[v, u]), (i, j, v, u)
                length, v, hops = length + w[v, u], u, hops + 1
                assert hops <= n
            assert length == d[i, j], (i, j)


@pytest.mark.parametrize("n,density,block", [(1, 0.5, 0), (7, 0.5, 3), (60, 0.1, 16), (129, 0.05, 32), (100, 1.0, 0)])
def test_matches_scipy(tmp_path, n, density, block):
    rng = np.random.default_rng(n * 7 + block)
    w = random_graph(n, density, rng)
    d, nxt = solve(tmp_path, w, "--block", str(block)) if block else solve(tmp_path, w)
    np.testing.assert_array_equal(d, scipy_distances(w, "FW"))
    check_routes(w, d, nxt)


def test_negative_edges_match_johnson(tmp_path):
    rng = np.random.default_rng(5)
    w = random_graph(90, 0.2, rng, negative=True)
    d, nxt = solve(tmp_path, w, "--block", "20")
    np.testing.assert_array_equal(d, scipy_distances(w, "J"))
    check_routes(w, d, nxt)


def test_float32_input_gives_float32_distances(tmp_path):
    rng = np.random.default_rng(6)
    w = random_graph(50, 0.3, rng)
    d, _ = solve(tmp_path, w.astype(np.float32))
    assert d.dtype == np.float32
    np.testing.assert_array_equal(d, scipy_distances(w, "D").astype(np.float32))


def test_negative_cycle_writes_nothing(tmp_path):
    w = np.full((4, 4), np.inf)
    w[0, 1], w[1, 2], w[2, 0] = 1.0, 1.0, -3.0
    np.save(tmp_path / "g.npy", w)
    run = subprocess.run([cli(), "apsp", str(tmp_path / "g.npy"), "--out", str(tmp_path / "d.npy")],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert "negative cycle" in run.stderr and "0, 1, 2" in run.stderr
    assert not (tmp_path / "d.npy").exists()
