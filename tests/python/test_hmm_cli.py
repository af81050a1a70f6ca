"""`ringmm hmm viterbi|forward` against a numpy implementation of both algorithms.

The tool is found through RINGMM_CLI (scripts/test.sh sets it to the build's binary), else on
PATH; without it these tests skip.
"""

import os
import shutil
import subprocess

import numpy as np
import pytest

from reference import numpy_forward, numpy_viterbi

CLI = os.environ.get("RINGMM_CLI") or shutil.which("ringmm")
pytestmark = pytest.mark.skipif(not CLI or not os.access(CLI, os.X_OK), reason="the ringmm tool was not found (set RINGMM_CLI)")


def run(tmp_path, command, init, trans, emit):
    steps, batch, states = emit.shape
    np.save(tmp_path / "init.npy", init.reshape(1, states))
    np.save(tmp_path / "trans.npy", trans)
    np.save(tmp_path / "emit.npy", emit.reshape(steps * batch, states))
    args = [CLI, "hmm", command, "--init", str(tmp_path / "init.npy"), "--trans", str(tmp_path / "trans.npy"),
            "--emit", str(tmp_path / "emit.npy"), "--batch", str(batch), "--out", str(tmp_path / "out.npy")]
    if command == "viterbi":
        args += ["--scores", str(tmp_path / "scores.npy")]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    if command == "viterbi":
        return np.load(tmp_path / "out.npy"), np.load(tmp_path / "scores.npy").ravel()
    return np.load(tmp_path / "out.npy").ravel()


def model(rng, batch, states, steps, dtype, forbid=0.0, coarse=False):
    def draw(shape):
        x = rng.uniform(-4, 0, shape)
        return np.floor(x) / 4 if coarse else x
    init, trans, emit = draw(states), draw((states, states)), draw((steps, batch, states))
    init[rng.random(states) < forbid] = -np.inf
    trans[rng.random((states, states)) < forbid] = -np.inf
    return init.astype(dtype), trans.astype(dtype), emit.astype(dtype)


CASES = [(1, 1, 1, 0.0, False), (1, 1, 6, 0.0, False), (3, 4, 1, 0.0, False), (1, 5, 7, 0.0, False),
         (4, 6, 9, 0.3, False), (5, 5, 8, 0.0, True), (6, 7, 10, 0.5, True), (16, 20, 12, 0.1, False)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch,states,steps,forbid,coarse", CASES)
def test_viterbi_matches_numpy(tmp_path, dtype, batch, states, steps, forbid, coarse):
    init, trans, emit = model(np.random.default_rng(batch * 100 + states), batch, states, steps, dtype, forbid, coarse)
    path, score = run(tmp_path, "viterbi", init, trans, emit)
    want_path, want_score = numpy_viterbi(init, trans, emit)
    assert path.dtype == np.int32 and path.shape == (batch, steps)
    np.testing.assert_array_equal(path, want_path)
    np.testing.assert_array_equal(score, want_score.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch,states,steps,forbid,coarse", CASES)
def test_forward_matches_numpy(tmp_path, dtype, batch, states, steps, forbid, coarse):
    init, trans, emit = model(np.random.default_rng(batch * 100 + states + 1), batch, states, steps, dtype, forbid, coarse)
    loglik = run(tmp_path, "forward", init, trans, emit)
    want = numpy_forward(init, trans, emit)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(loglik, want, rtol=tol, atol=tol)


def test_nan_is_refused_and_nothing_is_written(tmp_path):
    init, trans, emit = model(np.random.default_rng(3), 2, 3, 4, np.float32)
    trans[1, 2] = np.nan
    np.save(tmp_path / "init.npy", init.reshape(1, 3))
    np.save(tmp_path / "trans.npy", trans)
    np.save(tmp_path / "emit.npy", emit.reshape(8, 3))
    done = subprocess.run([CLI, "hmm", "viterbi", "--init", str(tmp_path / "init.npy"), "--trans", str(tmp_path / "trans.npy"),
                           "--emit", str(tmp_path / "emit.npy"), "--batch", "2", "--out", str(tmp_path / "out.npy")],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "trans.npy: element 5 (row-major) is nan" in done.stderr
    assert not (tmp_path / "out.npy").exists()
