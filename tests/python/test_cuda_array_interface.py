"""Arrays that expose only __cuda_array_interface__ (numba's device arrays, or a class of one's own):
read in place as CudaArray views, results returned as CudaArrays that own their device memory.

The view arithmetic and the interface's checks run everywhere; a CPU-only build must refuse such
arrays clearly; the products themselves need a GPU with torch (or cupy), whose arrays the tests wrap
in a class that exposes nothing but their __cuda_array_interface__, and skip without one."""

import gc

import numpy as np
import pytest

import ringmm
from ringmm import CudaArray
from reference import assert_matches, numpy_forward, numpy_viterbi, random_graph, random_operand, reference


class Interface:
    """Another array's memory, exposed through __cuda_array_interface__ only (optionally naming the
    stream whose work writes it, as CAI v3 producers do)."""

    def __init__(self, array, stream=None):
        self._array = array  # keeps the memory alive
        self._stream = stream

    @property
    def __cuda_array_interface__(self):
        cai = dict(self._array.__cuda_array_interface__)
        if self._stream is not None:
            cai.update(version=3, stream=self._stream)
        return cai


class Described:
    """A bare interface dictionary, for memory that is never read."""

    def __init__(self, **cai):
        self.__cuda_array_interface__ = {"version": 3, "strides": None, "data": (1 << 30, False), **cai}


@pytest.fixture
def rng():
    return np.random.default_rng(13)


# ---- CudaArray views (no GPU needed: views are pointer arithmetic) --------------------------------------

def view_of(x):
    """A CudaArray describing a numpy array's memory, to compare view arithmetic with numpy's."""
    return CudaArray(x.ctypes.data, x.shape, x.strides, x.dtype, 0, owner=x)


def address(x):
    return x.__cuda_array_interface__["data"][0] if isinstance(x, CudaArray) else x.ctypes.data


@pytest.mark.parametrize("key", [0, -1, (1, 2), slice(1, 3), (slice(None), None, 1), (Ellipsis, 0), (None, Ellipsis, None),
                                 slice(None, None, -2), (slice(4, 1, -1), slice(None, None, 3)), Ellipsis, (),
                                 (slice(2, 2), 0)])
def test_views_index_as_numpy_does(key):
    x = np.arange(60, dtype=np.float32).reshape(5, 12)[:, 1:]  # not contiguous
    view = view_of(x)[key]
    key = key if isinstance(key, tuple) else (key,)
    want = x[key if Ellipsis in key else key + (Ellipsis,)]  # a 0-d view rather than a scalar
    assert (view.shape, view.strides, view.dtype) == (want.shape, want.strides, want.dtype)
    if want.size:
        assert address(view) == address(want)
    assert view.is_c_contiguous() == want.flags.c_contiguous


@pytest.mark.parametrize("shape,to", [((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((1, 1), (1, 1)), ((2, 1, 3), (2, 5, 3))])
def test_broadcast_to_as_numpy(shape, to):
    x = np.zeros(shape, np.float64)
    view, want = view_of(x).broadcast_to(to), np.broadcast_to(x, to)
    assert view.shape == want.shape
    assert [s for s, d in zip(view.strides, to) if d > 1] == [s for s, d in zip(want.strides, to) if d > 1]
    with pytest.raises(ValueError, match="cannot broadcast"):
        view_of(np.zeros((3, 2))).broadcast_to((3, 3))


def test_the_interface_a_view_exposes():
    x = np.zeros((4, 6), np.int32)
    cai = view_of(x).__cuda_array_interface__
    assert cai == {"version": 3, "shape": (4, 6), "typestr": "<i4", "data": (x.ctypes.data, False), "strides": None,
                   "stream": None}
    cai = view_of(x)[:, ::2].with_stream(7).__cuda_array_interface__
    assert cai["strides"] == (24, 8) and cai["stream"] == 7 and cai["shape"] == (4, 3)
    assert view_of(x).__dlpack_device__() == (2, 0)


def test_view_errors():
    view = view_of(np.zeros((2, 3), np.float32))
    with pytest.raises(IndexError, match="too many indices"):
        view[0, 0, 0]
    with pytest.raises(IndexError, match="index 2 is out of bounds for a dimension of size 2"):
        view[2]
    with pytest.raises(TypeError, match="CudaArray takes basic indexes only"):
        view[[0, 1]]
    with pytest.raises(IndexError, match="single ellipsis"):
        view[..., ...]


def test_interfaces_that_cannot_be_read_are_refused_before_any_device_call():
    for cai, match in [({"shape": (2,), "typestr": ">f4"}, "typestr '>f4': ringmm reads native"),
                       ({"shape": (2,), "typestr": "<f4", "mask": object()}, "has a mask"),
                       ({"shape": (2, 2), "typestr": "<f4", "strides": (6, 2)}, "not whole elements"),
                       ({"shape": (2,), "typestr": "<f4", "data": (0, False)}, "null data pointer for 2 elements"),
                       ({"typestr": "<f4"}, "is malformed")]:
        with pytest.raises(ValueError, match=match):
            CudaArray.from_interface(Described(**cai))


@pytest.mark.skipif(ringmm.info()["cuda_compiled"], reason="checks the refusal of a build without CUDA")
def test_a_cpu_only_build_refuses_them_clearly():
    m = Described(shape=(3, 3), typestr="<f4")
    calls = [lambda: ringmm.matmul(m, m, "max_plus"), lambda: ringmm.syrk(m), lambda: ringmm.apsp(m),
             lambda: ringmm.route(m, 0, 1), lambda: ringmm.hmm_viterbi(m, m, scores=m),
             lambda: ringmm.hmm_forward(m, m, scores=m)]
    for call in calls:
        with pytest.raises(TypeError, match="Described exposes __cuda_array_interface__, but this build of ringmm has "
                                            "no CUDA backend"):
            call()


def test_they_do_not_mix_with_other_frameworks():
    m = Described(shape=(3, 3), typestr="<f4")
    with pytest.raises(TypeError, match="a is a numpy array but out is a __cuda_array_interface__ array"):
        ringmm.matmul(np.ones((3, 3), np.float32), np.ones((3, 3), np.float32), out=m)


# ---- products on the GPU ------------------------------------------------------------------------------

def host(x, torch):
    """A CudaArray's contents, read by torch through the interface (as any consumer would)."""
    return torch.as_tensor(x, device="cuda").cpu().numpy()


def test_matmul_reads_in_place_and_returns_memory_it_owns(torch_cuda, rng):
    torch = torch_cuda
    a = random_operand("max_plus", "float32", (3, 37, 65), rng)
    b = random_operand("max_plus", "float32", (65, 29), rng)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    assert address(CudaArray.from_interface(Interface(ta))) == ta.data_ptr()  # a view, not a copy
    got = ringmm.matmul(Interface(ta), Interface(tb), "max_plus")
    assert isinstance(got, CudaArray) and got.shape == (3, 37, 29) and got.dtype == np.float32
    cai = got.__cuda_array_interface__
    assert cai["version"] == 3 and cai["stream"] == 1  # the legacy default stream: no stream was named
    want = reference("max_plus", a, b)
    assert_matches("max_plus", host(got, torch), want, 65)
    assert_matches("max_plus", torch.from_dlpack(got).cpu().numpy(), want, 65)
    # Views keep the memory alive after the array they came from is gone.
    first = got[0]
    del got, ta, tb
    gc.collect()
    assert_matches("max_plus", host(first, torch), want[0], 65)


def test_matmul_views_copies_c_and_out(torch_cuda, rng):
    torch = torch_cuda
    a = random_operand("min_plus", "int32", (20, 33), rng)
    b = random_operand("min_plus", "int32", (33, 17), rng)
    c = random_operand("min_plus", "int32", (17,), rng)
    ta, tb, tc = (torch.from_numpy(x).cuda() for x in (a, b, c))
    # Transposed views are read in place; a view no leading dimension describes is copied.
    got = ringmm.matmul(Interface(tb.T), Interface(ta.T), "min_plus")
    assert_matches("min_plus", host(got, torch), reference("min_plus", b.T, a.T), 33)
    got = ringmm.matmul(Interface(ta[:, ::2]), Interface(tb[::2]), "min_plus")
    assert_matches("min_plus", host(got, torch), reference("min_plus", a[:, ::2], b[::2]), 17)
    # c broadcast into the result, out written where it lies, a vector operand.
    out = torch.full((20, 17), 5, dtype=torch.int32, device="cuda")
    assert isinstance(ringmm.matmul(Interface(ta), Interface(tb), "min_plus", c=Interface(tc), out=Interface(out)),
                      Interface)
    assert_matches("min_plus", out.cpu().numpy(), reference("min_plus", a, b, c=c), 33)
    got = ringmm.matmul(Interface(ta[0]), Interface(tb), "min_plus")
    assert got.shape == (17,)
    assert_matches("min_plus", host(got, torch), reference("min_plus", a[:1], b)[0], 33)


def test_work_runs_on_the_stream_the_interface_names(torch_cuda, rng):
    torch = torch_cuda
    a = random_operand("max_plus", "float64", (64, 64), rng)
    producer, other = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(producer):
        ta = torch.from_numpy(a).cuda()
    with torch.cuda.stream(other):
        tb = torch.from_numpy(a).cuda() * 1
    got = ringmm.matmul(Interface(ta, producer.cuda_stream), Interface(tb, other.cuda_stream), "max_plus")
    assert got.stream == producer.cuda_stream
    producer.synchronize()
    assert_matches("max_plus", host(got, torch), reference("max_plus", a, a), 64)


def test_refusals(torch_cuda):
    torch = torch_cuda
    x = torch.ones(3, 3, device="cuda")
    host_memory = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError, match="Described's __cuda_array_interface__ points to memory that is not CUDA device"):
        ringmm.matmul(Described(shape=(3, 3), typestr="<f4", data=(host_memory.ctypes.data, False)), Interface(x))
    readonly = Described(shape=(3, 3), typestr="<f4", data=(x.data_ptr(), True))
    with pytest.raises(ValueError, match="out is not a writable array"):
        ringmm.matmul(Interface(x), Interface(x), out=readonly)
    with pytest.raises(TypeError, match="b has dtype float64 but a has float32"):
        ringmm.matmul(Interface(x), Interface(x.double()))


def test_syrk_apsp_route_and_hmms(torch_cuda, rng):
    torch = torch_cuda
    a = random_operand("max_plus", "float32", (2, 30, 12), rng)
    got = ringmm.syrk(Interface(torch.from_numpy(a).cuda()), "max_plus")
    assert isinstance(got, CudaArray)
    assert_matches("max_plus", host(got, torch), reference("max_plus", np.swapaxes(a, -1, -2), a), 30)

    w = random_graph(40, 0.2, rng)
    dist, successors = ringmm.apsp(Interface(torch.from_numpy(w).cuda()))
    assert isinstance(dist, CudaArray) and successors.dtype == np.int32
    d = host(dist, torch)
    assert np.array_equal(d, ringmm.apsp(w, backend="cpu")[0])
    for i, j in [(0, 39), (5, 5), (17, 3)]:
        path = ringmm.route(successors, i, j)
        assert (path == []) == (not np.isfinite(d[i, j]))
        assert sum(w[u, v] for u, v in zip(path, path[1:])) == (d[i, j] if path else 0)

    init, trans = np.log(rng.dirichlet(np.ones(4))), np.log(rng.dirichlet(np.ones(4), 4))
    scores = np.log(rng.random((3, 10, 4)))  # (B, T, S)
    model = [Interface(torch.from_numpy(x).cuda()) for x in (init, trans, scores)]
    path, score = ringmm.hmm_viterbi(model[0], model[1], scores=model[2])
    want_path, want_score = numpy_viterbi(init, trans, np.swapaxes(scores, 0, 1))
    np.testing.assert_array_equal(host(path, torch), want_path)
    np.testing.assert_array_equal(host(score, torch), want_score)
    loglik = ringmm.hmm_forward(model[0], model[1], scores=model[2])
    np.testing.assert_allclose(host(loglik, torch), numpy_forward(init, trans, np.swapaxes(scores, 0, 1)), rtol=0,
                               atol=1e-10)


def test_cupy_arrays_wrapped(cupy, rng):
    a = random_operand("plus_times", "float64", (30, 20), rng)
    b = random_operand("plus_times", "float64", (20, 10), rng)
    got = ringmm.matmul(Interface(cupy.asarray(a)), Interface(cupy.asarray(b)), "plus_times")
    assert isinstance(got, CudaArray)
    assert_matches("plus_times", cupy.asnumpy(cupy.asarray(got)), reference("plus_times", a, b), 20)
