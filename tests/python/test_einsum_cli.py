"""`ringmm einsum SPEC A.npy B.npy ... --out C.npy` against the brute-force reference (every index
enumerated): named and random expressions over every semiring and element type, diagonals,
reductions, scalars, implicit output, Fortran-order files, and its refusals.

The tool is found through RINGMM_CLI (scripts/test.sh sets it to the build's binary), else on
PATH; without it these tests skip.
"""

import os
import shutil
import subprocess

import numpy as np
import pytest

import ringmm
from devices import cuda_build_with_device
from reference import SPECS, assert_einsum_matches, brute_force, random_operand

CLI = os.environ.get("RINGMM_CLI") or shutil.which("ringmm")
pytestmark = pytest.mark.skipif(not CLI or not os.access(CLI, os.X_OK), reason="the ringmm tool was not found (set RINGMM_CLI)")

PAIRS = [(s.name, d) for s in ringmm.semirings() for d in s.dtypes if s.name in SPECS]
SPELLING = {s.name: s.spelling for s in ringmm.semirings()}  # the command line's names


def run(tmp_path, spec, operands, semiring="max_plus", fortran=False, backend="cpu"):
    paths = []
    for i, x in enumerate(operands):
        paths.append(str(tmp_path / f"x{i}.npy"))
        np.save(paths[-1], np.asfortranarray(x) if fortran else x)
    out = tmp_path / "out.npy"
    done = subprocess.run([CLI, "einsum", spec, *paths, "--out", str(out), "--semiring", SPELLING[semiring],
                           "--backend", backend], capture_output=True, text=True)
    return done, out


def contract(tmp_path, spec, operands, semiring="max_plus", fortran=False, backend="cpu"):
    done, out = run(tmp_path, spec, operands, semiring, fortran, backend)
    assert done.returncode == 0, done.stderr
    return np.load(out)


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(7, 33), (33, 5)]), ("bij,bjk->bik", [(3, 7, 4), (3, 4, 5)]),
    ("ijk,kjl->li", [(5, 4, 3), (3, 4, 6)]), ("ji,jk->ik", [(5, 6), (5, 7)]),
    ("ii->i", [(5, 5)]), ("iij,jk->ik", [(4, 4, 3), (3, 2)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]),
    ("ijk->kji", [(2, 3, 4)]), ("i,j->ij", [(3,), (4,)]), ("i,i->", [(5,), (5,)]), (",ij->ij", [(), (2, 3)]),
    ("ab,bc,cd,de->ae", [(3, 4), (4, 5), (5, 2), (2, 6)]), ("abc,bcd,ad->", [(2, 3, 4), (3, 4, 5), (2, 5)]),
    ("ij,ij,ij->ij", [(3, 4), (3, 4), (3, 4)]), ("ij,jk->ik", [(0, 3), (3, 4)]), ("ij,jk->ik", [(2, 0), (0, 4)]),
])
@pytest.mark.parametrize("semiring", ["max_plus", "min_plus", "log_plus", "plus_times"])
def test_named_expressions(tmp_path, subscripts, shapes, semiring):
    rng = np.random.default_rng(7)
    operands = [random_operand(semiring, "float64", s, rng) for s in shapes]
    want = brute_force(subscripts, operands, semiring)
    got = contract(tmp_path, subscripts, operands, semiring, fortran=len(shapes[0]) > 1)
    assert_einsum_matches(semiring, got, want, 200, len(operands))


@pytest.mark.parametrize("semiring,dtype", PAIRS)
def test_random_expressions(tmp_path, semiring, dtype):
    from test_einsum import random_expression
    rng = np.random.default_rng(31 + len(semiring) + 3 * len(dtype))
    for _ in range(6):
        subscripts, sizes = random_expression(rng)
        terms = subscripts.split("->")[0].split(",")
        operands = [random_operand(semiring, dtype, tuple(sizes[c] for c in t), rng) for t in terms]
        if dtype in ("float32", "float64") and semiring in ("plus_times", "max_times"):
            operands = [x / 2 for x in operands]
        want = brute_force(subscripts, operands, semiring)
        got = contract(tmp_path, subscripts, operands, semiring)
        if dtype == "bool":  # read as u8 0/1, and written so, as `ringmm multiply` does
            assert got.dtype == np.uint8 and set(np.unique(got)) <= {0, 1}
            got = got.astype(bool)
        inner = max(1, int(np.prod([sizes[c] for c in set("".join(terms)) if c not in subscripts.split("->")[1]])))
        assert_einsum_matches(semiring, got, want, inner, len(operands)), subscripts


@pytest.mark.skipif(not cuda_build_with_device(), reason="needs ringmm's CUDA backend and a device")
@pytest.mark.parametrize("semiring,dtype", [("max_plus", "float32"), ("min_plus", "int32"), ("log_plus", "float64"),
                                            ("plus_times", "float32"), ("lor_land", "uint8")])
def test_on_cuda(tmp_path, semiring, dtype):
    rng = np.random.default_rng(11)
    for subscripts, shapes in [("bij,bjk->bik", [(3, 33, 129), (3, 129, 7)]), ("ijk,kjl->li", [(5, 4, 3), (3, 4, 6)]),
                               ("ab,bc,cd->ad", [(7, 33), (33, 127), (127, 5)]), ("iij,j->i", [(4, 4, 3), (3,)])]:
        operands = [random_operand(semiring, dtype, s, rng) for s in shapes]
        want = brute_force(subscripts, operands, semiring)
        got = contract(tmp_path, subscripts, operands, semiring, backend="cuda")
        assert_einsum_matches(semiring, got, want, 200, len(operands)), subscripts


def test_implicit_output_is_numpys(tmp_path):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    np.testing.assert_allclose(contract(tmp_path, "ij,jk", [a, b], "plus_times"), np.einsum("ij,jk", a, b), rtol=1e-12)
    np.testing.assert_allclose(contract(tmp_path, "ba", [a], "plus_times"), np.einsum("ba", a))


@pytest.mark.parametrize("spec,operands,extra,message", [
    ("ij,jk->ik", [np.ones((2, 3))], (), "names 2 operands but 1 file was given"),
    ("ij->ij", [np.ones((2, 3, 4))], (), "has rank 3 but its subscript 'ij' names 2 axes"),
    ("ij,jk->ik", [np.ones((2, 3)), np.ones((4, 5))], (), "index 'j' is 4 here but 3 in"),
    ("ij,jk->ik", [np.ones((2, 3)), np.ones((3, 5), np.float32)], (), "holds f32 but"),
    ("...i->i", [np.ones((2, 3))], (), "'...' is not taken"),
    ("i1->i", [np.ones((2, 3))], (), "which is not a letter"),
    ("ij->k", [np.ones((2, 3))], (), "index 'k' is in no operand"),
    ("ij->ii", [np.ones((2, 2))], (), "repeats index 'i'"),
    ("ij->i", [np.ones((2, 2), np.uint8)], ("--semiring", "max-plus"), "not available for element type u8"),
    ("ij->i", [np.ones((2, 2))], ("--semiring", "tropical"), "tropical"),
])
def test_refusals_name_the_fault_and_write_nothing(tmp_path, spec, operands, extra, message):
    paths = []
    for i, x in enumerate(operands):
        paths.append(str(tmp_path / f"x{i}.npy"))
        np.save(paths[-1], x)
    out = tmp_path / "out.npy"
    args = [CLI, "einsum", spec, *paths, "--out", str(out), *(extra or ("--semiring", "max-plus"))]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode in (1, 2) and message in done.stderr, done.stderr
    assert not out.exists()
