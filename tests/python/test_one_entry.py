"""The one-call path of ringmm.matmul and ringmm.syrk (_core.one_call_matmul, _core.one_call_syrk)
against the general path it stands in for: the same results, the same writes to out, the same errors;
and the common calls really take it."""

import numpy as np
import pytest

import ringmm
from ringmm import _core, _matmul
from devices import cuda_build_with_device


def general_matmul(a, b, semiring="max_plus", *, c=None, alpha=None, beta=None, trans_a=False, trans_b=False, out=None,
                   return_argmax=False, backend="auto"):
    return _matmul._general(a, b, semiring, c, alpha, beta, trans_a, trans_b, out, return_argmax, backend)


def frameworks():
    names = ["numpy", "torch"]
    try:
        import torch

        if torch.cuda.is_available() and cuda_build_with_device():
            names.append("torch_cuda")
    except ImportError:
        pass
    return names


@pytest.fixture(params=frameworks())
def make(request):
    """Arrays of one framework from numpy arrays; make.cuda says whether they are on a GPU."""
    if request.param == "numpy":
        def make(x):
            return x
        make.cuda = False
        return make
    torch = pytest.importorskip("torch")
    device = "cuda" if request.param == "torch_cuda" else "cpu"
    ringmm.matmul(torch.zeros(1, 1, device=device), torch.zeros(1, 1, device=device))  # registers torch

    def make(x):
        return torch.from_numpy(np.ascontiguousarray(x)).to(device)
    make.cuda = device == "cuda"
    return make


def host(x):
    if isinstance(x, tuple):
        return tuple(host(y) for y in x)
    return x.cpu().numpy() if hasattr(x, "cpu") else np.asarray(x)


def outcome(f, *args, **kwargs):
    try:
        return "ok", host(f(*args, **kwargs))
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)


def same(x, y):
    if x[0] != y[0] or x[0] != "ok":
        return x == y
    xs, ys = (x[1], y[1]) if isinstance(x[1], tuple) else ((x[1],), (y[1],))
    return all(p.shape == q.shape and p.dtype == q.dtype and np.array_equal(p, q) for p, q in zip(xs, ys))


RNG = np.random.default_rng(3)
F32 = {s: RNG.integers(-4, 5, size=s).astype(np.float32) for s in [(3, 4), (4, 5), (2, 3, 4), (4,), (5,), (1, 4, 5)]}
CASES = [  # (a, b, keyword arguments, whether the one-call path takes it)
    ("3,4", "4,5", {}, True),
    ("3,4", "4,5", {"semiring": "min-plus", "alpha": 2.0, "backend": "cpu"}, True),
    ("2,3,4", "4,5", {"return_argmax": True}, True),
    ("2,3,4", "1,4,5", {}, True),
    ("4,", "4,5", {}, True),
    ("3,4", "4,", {"return_argmax": True}, True),
    ("4,", "4,", {}, True),
    ("4,5", "4,5", {"trans_a": True}, True),
    ("3,4", "4,5", {"out": (3, 5)}, True),
    ("3,4", "4,5", {"out": (3, 5), "c": "out", "beta": 1}, True),
    ("4,", "4,5", {"out": (5,)}, True),
    ("3,4", "4,5", {"c": (3, 5)}, False),  # c copied into the result
    ("3,4", "4,5", {"alpha": np.float32(2)}, False),  # a numpy scalar: the general path converts it
    ("3,4", "4,5", {"out": (3, 4)}, False),  # refused: wrong shape
    ("3,4", "3,4", {}, False),  # refused: inner dimensions
    ("3,4", "4,5", {"semiring": "bogus"}, False),
    ("3,4", "4,5", {"semiring": "plus_times", "return_argmax": True}, False),
    ("3,4", "4,5", {"beta": 2.0}, False),
    ("3,4", "4,5", {"backend": "gpu"}, False),
    ("4,", "4,5", {"trans_a": True}, False),
]


def operand(text):
    return F32[tuple(int(d) for d in text.split(",") if d)]


@pytest.mark.parametrize("a,b,kwargs,one_call", CASES)
def test_matmul_as_the_general_path(make, a, b, kwargs, one_call):
    x, y = make(operand(a)), make(operand(b))
    semiring = kwargs.get("semiring", "max_plus")

    def arguments():
        kw = {k: v for k, v in kwargs.items() if k != "semiring"}
        if "out" in kw:
            kw["out"] = make(np.full(kw["out"], 7, np.float32))
            if kw.get("c") == "out":
                kw["c"] = kw["out"]
        elif "c" in kw:
            kw["c"] = make(np.full(kw["c"], 1, np.float32))
        return kw

    probe = arguments()
    taken = _core.one_call_matmul(x, y, semiring, probe.get("c"), probe.get("alpha"), probe.get("beta"),
                                  probe.get("trans_a", False), probe.get("trans_b", False), probe.get("out"),
                                  probe.get("return_argmax", False), probe.get("backend", "auto"))
    if make.cuda and kwargs.get("backend") == "cpu":
        one_call = False  # refused: the CPU backend cannot read arrays on a GPU
    assert (taken is not NotImplemented) == one_call
    fast, slow = arguments(), arguments()
    assert same(outcome(ringmm.matmul, x, y, semiring, **fast), outcome(general_matmul, x, y, semiring, **slow))
    if "out" in fast:
        np.testing.assert_array_equal(host(fast["out"]), host(slow["out"]))


@pytest.mark.parametrize("shape,trans,out", [((3, 4), False, None), ((3, 4), True, (3, 3)), ((2, 3, 4), False, None),
                                             ((3, 4), False, (3, 3)), ((2, 3, 4), False, (2, 4, 4))])
def test_syrk_as_the_general_path(make, monkeypatch, shape, trans, out):
    a = make(F32[shape])

    def call(one_call):
        if not one_call:
            monkeypatch.setattr(_core, "one_call_syrk", lambda *args: NotImplemented)
        kw = {"trans": trans}
        if out is not None:
            kw["out"] = make(np.full(out, 7, np.float32))
        result = outcome(ringmm.syrk, a, "max_plus", **kw)
        monkeypatch.undo()
        return result, host(kw["out"]) if out is not None else None

    assert _core.one_call_syrk(a, "max_plus", trans, None, "auto") is not NotImplemented
    (fast, fast_out), (slow, slow_out) = call(True), call(False)
    assert same(fast, slow)
    if out is not None:
        np.testing.assert_array_equal(fast_out, slow_out)
