"""Every public call of ringmm is one _core entry, which checks, allocates, copies and runs: the same
results, writes to out and errors for every framework; no Python-level step for numpy arrays and torch
tensors read in place; the framework adapter (python/ringmm/_frameworks.py) reached only for what the
framework itself must do (convert a list, copy an operand, fill k_star)."""

import numpy as np
import pytest

import ringmm
from ringmm import _core
from devices import cuda_build_with_device
from entry_probe import recorded


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
F32 = {s: RNG.integers(-4, 5, size=s).astype(np.float32)
       for s in [(3, 4), (4, 5), (3, 5), (2, 3, 4), (4,), (5,), (1, 4, 5), (2, 1, 3, 4), (3, 4, 5), (3, 8), (8, 5)]}
CASES = [  # (a, b, keyword arguments, whether numpy arrays and torch tensors take a Python-level step)
    ("3,4", "4,5", {}, False),
    ("3,4", "4,5", {"semiring": "min-plus", "alpha": 2.0, "backend": "cpu"}, False),
    ("2,3,4", "4,5", {"return_argmax": True}, False),
    ("2,3,4", "1,4,5", {}, False),
    ("4,", "4,5", {}, False),
    ("3,4", "4,", {"return_argmax": True}, False),
    ("4,", "4,", {}, False),
    ("4,5", "4,5", {"trans_a": True}, False),
    ("3,4", "4,5", {"out": (3, 5)}, False),
    ("3,4", "4,5", {"out": (3, 5), "c": "out", "beta": 1}, False),
    ("4,", "4,5", {"out": (5,)}, False),
    ("3,4", "4,5", {"alpha": np.float32(2)}, False),  # a numpy scalar is a number too
    ("3,4", "4,5", {"trans_a": 0, "return_argmax": np.bool_(False)}, False),  # flags by their truth
    # the framework copies: c into the result, operands no view describes, out written apart, k_star's -1
    ("3,4", "4,5", {"c": (3, 5)}, True),
    ("3,4", "4,5", {"c": (5,), "beta": 2, "out": (3, 5)}, True),
    ("3,8", "8,5", {"strided": True}, True),
    ("2,1,3,4", "3,4,5", {}, True),
    ("3,4", "4,5", {"out": "strided"}, True),
    ("3,4", "4,5", {"c": (3, 5), "return_argmax": True}, True),
    # refused, by the entry itself
    ("3,4", "4,5", {"out": (3, 4)}, False),
    ("3,4", "3,4", {}, False),
    ("3,4", "4,5", {"semiring": "bogus"}, False),
    ("3,4", "4,5", {"semiring": 3}, False),
    ("3,4", "4,5", {"semiring": "plus_times", "return_argmax": True}, False),
    ("3,4", "4,5", {"beta": 2.0}, False),
    ("3,4", "4,5", {"alpha": "x"}, False),
    ("3,4", "4,5", {"backend": "gpu"}, False),
    ("3,4", "4,5", {"backend": None}, False),
    ("4,", "4,5", {"trans_a": True}, False),
    ("3,4", "4,5", {"c": (2, 5)}, False),
]


def operand(text):
    return F32[tuple(int(d) for d in text.split(",") if d)]


def arguments(make, a, b, kwargs):
    """The call's arrays and keyword arguments in make's framework."""
    x, y = make(operand(a)), make(operand(b))
    if kwargs.get("strided"):
        x, y = x[:, ::2], y[::2]
    kw = {k: v for k, v in kwargs.items() if k not in ("semiring", "strided")}
    if kw.get("out") == "strided":
        kw["out"] = make(np.full((3, 10), 7, np.float32))[:, ::2]
    elif "out" in kw:
        kw["out"] = make(np.full(kw["out"], 7, np.float32))
    if kw.get("c") == "out":
        kw["c"] = kw["out"]
    elif "c" in kw:
        kw["c"] = make(np.full(kw["c"], 1, np.float32))
    return x, y, kw


@pytest.mark.parametrize("a,b,kwargs,python_steps", CASES)
def test_every_framework_takes_the_one_entry(make, a, b, kwargs, python_steps):
    semiring = kwargs.get("semiring", "max_plus")
    x, y, kw = arguments(make, a, b, kwargs)
    with recorded() as log:
        got = outcome(ringmm.matmul, x, y, semiring, **kw)
    adapted = [step for step, _ in log if step == "adapt"]
    assert len(adapted) == (1 if python_steps else 0), log
    # The same call on numpy arrays gives the same outcome: values, errors and what out holds.
    nx, ny, nkw = arguments(lambda z: z, a, b, kwargs)
    want = outcome(ringmm.matmul, nx, ny, semiring, **nkw)
    if make.cuda and kwargs.get("backend") == "cpu":
        assert got == ("ValueError", "backend 'cpu' cannot read arrays on cuda:0")
        return
    assert same(got, want), (got, want)
    if "out" in kw:
        np.testing.assert_array_equal(host(kw["out"]), host(nkw["out"]))


@pytest.mark.parametrize("a,b,kwargs", [case[:3] for case in CASES if not {"c", "out", "strided"} & set(case[2])])
def test_lists_are_read_through_the_adapter_once(a, b, kwargs):
    x, y, kw = arguments(lambda z: z, a, b, kwargs)
    semiring = kwargs.get("semiring", "max_plus")
    want = outcome(ringmm.matmul, x.astype(np.float64), y.astype(np.float64), semiring, **kw)
    with recorded() as log:
        got = outcome(ringmm.matmul, x.tolist(), y.tolist(), semiring, **kw)
    assert same(got, want), (got, want)
    # Arguments refused before the arrays are read (names, numbers) never reach the adapter.
    refused_first = not isinstance(semiring, str) or "backend" in kw and not isinstance(kw["backend"], str) or \
        isinstance(kw.get("alpha"), str)
    assert [step for step, _ in log].count("adapt") == (0 if refused_first else 1)


def test_each_public_function_is_one_core_call(monkeypatch):
    calls = []

    def counted(name, f):
        def call(*args):
            calls.append(name)
            return f(*args)
        return call

    for name in ("matmul", "syrk", "apsp", "route", "hmm"):
        monkeypatch.setattr(_core, name, counted(name, getattr(_core, name)))
    monkeypatch.setattr(ringmm._matmul, "_entry", _core.matmul)
    a = F32[(3, 4)]
    w = np.array([[0, 1, np.inf], [np.inf, 0, 2], [1, np.inf, 0]])
    init, trans, emission = np.log([0.5, 0.5]), np.log([[0.9, 0.1], [0.2, 0.8]]), np.log([[0.7, 0.3], [0.1, 0.9]])
    for f, expected in [(lambda: ringmm.matmul(a, a.T), "matmul"), (lambda: ringmm.syrk(a), "syrk"),
                        (lambda: ringmm.apsp(w), "apsp"), (lambda: ringmm.route(ringmm.apsp(w)[1], 0, 2), "route"),
                        (lambda: ringmm.hmm_viterbi(init, trans, emission, np.array([0, 1, 1])), "hmm"),
                        (lambda: ringmm.hmm_forward(init, trans, emission, np.array([[0, 1], [1, 1]])), "hmm")]:
        calls.clear()
        f()
        assert calls[-1] == expected and calls.count(expected) == 1


def test_syrk_takes_the_adapter_only_to_copy(make):
    a = make(F32[(3, 4)])
    with recorded() as log:
        want = host(ringmm.syrk(a, "max_plus"))
    assert log == []
    strided = make(F32[(3, 8)])[:, ::2]
    out = make(np.full((2, 4, 4), 7, np.float32))
    with recorded() as log:
        got = host(ringmm.syrk(strided, "max_plus"))
        ringmm.syrk(make(np.stack([F32[(3, 4)]] * 2)), "max_plus", out=out)  # a batch goes through a new array
    assert [step for step, _ in log].count("adapt") == 2
    np.testing.assert_array_equal(got, host(ringmm.syrk(np.ascontiguousarray(F32[(3, 8)][:, ::2]), "max_plus")))
    np.testing.assert_array_equal(host(out), np.stack([want] * 2))


def test_errors_name_the_argument_for_every_framework(make):
    a = make(F32[(3, 4)])
    for call, kind, match in [
        (lambda: ringmm.matmul(a, a, out=[1]), TypeError, "out must be an array, not list"),
        (lambda: ringmm.matmul(a, object()), TypeError, "b is not an array of numbers"),
        (lambda: ringmm.matmul(a, make(F32[(4, 5)]), beta=[1], c=a), TypeError, "beta must be a number, not list"),
        (lambda: ringmm.syrk(a, "max_plus", out=make(np.zeros((3, 3), np.float32))), ValueError,
         "out has shape \\(3, 3\\) but the result has shape \\(4, 4\\)"),
        (lambda: ringmm.apsp(a), ValueError, "weights has shape \\(3, 4\\): an adjacency matrix is square"),
        (lambda: ringmm.apsp(make(np.zeros((2, 2))), block="x"), TypeError, "block must be an integer, not str"),
        (lambda: ringmm.route(make(np.zeros((2, 2), np.int32)), 0, 2), ValueError, "j: vertex 2 is out of range 0..1"),
        (lambda: ringmm.hmm_forward(a, a), ValueError, "init has shape \\(3, 4\\)"),
    ]:
        with pytest.raises(kind, match=match):
            call()


def test_torch_tensors_that_require_grad_and_subclasses(make):
    if make.cuda or not hasattr(make(F32[(3, 4)]), "requires_grad"):
        pytest.skip("torch on the CPU")
    import torch

    a = make(F32[(3, 4)]).requires_grad_()
    b = torch.nn.Parameter(make(F32[(4, 5)]))
    c = make(F32[(3, 5)]).requires_grad_()
    got = ringmm.matmul(a, b, c=c)  # a Parameter is read through the adapter, detached
    assert not got.requires_grad and got.grad_fn is None
    np.testing.assert_array_equal(got.numpy(), ringmm.matmul(F32[(3, 4)], F32[(4, 5)], c=F32[(3, 5)]))
