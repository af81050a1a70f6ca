"""The caller's array framework, as ringmm._core's entries use it. Every public call is one _core
call, which reads numpy arrays and torch tensors itself; any other argument reaches `adapt`, which
converts lists and scalars, names the framework (one per call) and prepares its arrays for DLPack.
The framework object it returns is the small set of callables the entry calls where the framework
itself must act: empty, full, assign (copies, broadcasting), stream and result. What to allocate or
copy, and when, is decided in C++. Arrays that only expose __cuda_array_interface__ have no framework
behind them: ringmm allocates and copies those itself (CudaArray)."""

import numbers

import numpy as np

from . import _core
from ._cuda_array import LEGACY_DEFAULT_STREAM, CudaArray

CUDA_ARRAY_INTERFACE = "__cuda_array_interface__"


def framework_name(x):
    """'numpy', 'torch', 'cupy', 'jax', ... : the package an array type comes from, or
    '__cuda_array_interface__' for other arrays that expose it (numba's, ringmm's CudaArray)."""
    name = type(x).__module__.split(".")[0]
    if name == "jaxlib":
        return "jax"
    if name not in _FRAMEWORKS and hasattr(x, CUDA_ARRAY_INTERFACE):
        return CUDA_ARRAY_INTERFACE
    return name


def is_array(x):
    """Whether ringmm reads x as it is: DLPack or __cuda_array_interface__."""
    return hasattr(x, "__dlpack__") or hasattr(x, CUDA_ARRAY_INTERFACE)


def as_array(x, name):
    """x itself when it is an array ringmm reads as it is (is_array); numpy's view of anything
    else (lists, scalars), as numpy.matmul reads them."""
    if isinstance(x, np.ndarray) and (not x.dtype.isnative or x.dtype.kind not in "biufc"):
        # DLPack exports neither, and the conversion's own error would not name the argument.
        raise TypeError(f"{name} has dtype {x.dtype.str} ({x.dtype}): ringmm reads numeric arrays "
                        "arrays in the machine's byte order (x.astype(x.dtype.newbyteorder('=')) converts)")
    if is_array(x):
        return x
    try:
        array = np.asarray(x)
    except Exception as e:
        raise TypeError(f"{name} is not an array: {type(x).__name__} ({e})") from None
    if array.dtype.kind not in "biufc":
        raise TypeError(f"{name} is not an array of numbers: {type(x).__name__} of dtype {array.dtype}")
    return array


class NumPy:
    """Host arrays: numpy's, and those of frameworks whose host arrays numpy reads (jax)."""

    def __init__(self, like):
        pass

    def prepare(self, x):
        return x

    def empty(self, shape, dtype):
        return np.empty(shape, dtype)

    def full(self, shape, dtype, value):
        return np.full(shape, value, dtype)

    def assign(self, dst, src):
        np.copyto(dst, src)

    def stream(self):
        return 0

    def result(self, x):
        return x


class Jax(NumPy):
    """jax arrays on the host. jax arrays are immutable, so out= is refused, and jax exposes no
    stream for the GPU: jax arrays on a GPU are refused (pass torch or cupy arrays there)."""

    def __init__(self, like):
        import jax.numpy

        self._jnp = jax.numpy
        if any(d.platform != "cpu" for d in like.devices()):
            raise TypeError(
                "jax arrays on a GPU are not supported yet (jax exposes no stream to run on): "
                "use torch or cupy arrays there, or move the operands to the host")

    def result(self, x):
        return self._jnp.asarray(x)


class Torch:
    """torch tensors on the CPU or a CUDA device; the product runs on torch's current stream."""

    _torch = _current_stream = None  # set by the first Torch made (_setup)

    def __init__(self, like):
        Torch.register()
        self._device = like.device

    @staticmethod
    def register():
        """Registers torch with _core once (ringmm.torch calls it; so does the first Torch made)."""
        if Torch._torch is None:
            Torch._setup()

    @staticmethod
    def _setup():
        """Imports torch once, and registers its tensors with _core, which then reads and allocates them itself."""
        import torch

        from torch.utils.dlpack import to_dlpack

        # The current stream's cudaStream_t of a device index, without making a torch.cuda.Stream.
        current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if current_stream is None:
            def current_stream(device):
                return torch.cuda.current_stream(device).cuda_stream
        Torch._current_stream = staticmethod(current_stream)
        Torch._torch = torch
        _core.use_torch(torch.Tensor, torch, to_dlpack, current_stream)

    def prepare(self, x):
        # DLPack refuses tensors that require grad, and a copy of one would carry its graph into the
        # result; ringmm.matmul itself is not differentiable (ringmm.torch.matmul is).
        return x.detach()

    def empty(self, shape, dtype):
        return self._torch.empty(shape, dtype=getattr(self._torch, dtype), device=self._device)

    def full(self, shape, dtype, value):
        return self._torch.full(shape, value, dtype=getattr(self._torch, dtype), device=self._device)

    def assign(self, dst, src):
        dst.copy_(src)

    def stream(self):
        if self._device.type != "cuda":
            return 0
        return self._current_stream(self._device.index)

    def result(self, x):
        return x


class CuPy:
    """cupy arrays; the product runs on cupy's current stream of the arrays' device."""

    def __init__(self, like):
        import cupy

        self._cupy = cupy
        self._device = like.device

    def prepare(self, x):
        return x

    def empty(self, shape, dtype):
        with self._device:
            return self._cupy.empty(shape, dtype)

    def full(self, shape, dtype, value):
        with self._device:
            return self._cupy.full(shape, value, dtype)

    def assign(self, dst, src):
        with self._device:
            self._cupy.copyto(dst, src)

    def stream(self):
        with self._device:
            return self._cupy.cuda.get_current_stream().ptr

    def result(self, x):
        return x


class CudaArrayInterface:
    """Arrays that expose only __cuda_array_interface__, read in place as CudaArray views; results
    are CudaArrays in memory ringmm allocates. The work runs on the stream that the first array's
    interface names (CAI v3), or on the legacy default stream when it names none; it waits for the
    streams that the other arrays name."""

    def __init__(self, like):
        if not _core.has_cuda:
            raise TypeError(f"{type(like).__name__} exposes __cuda_array_interface__, but this build of ringmm has no "
                            "CUDA backend (it was built for the CPU only): reinstall it where nvcc is found, or pass "
                            "host arrays")
        first = self._view(like)
        self._device = first.device
        self._stream = LEGACY_DEFAULT_STREAM if first.stream is None else first.stream

    @staticmethod
    def _view(x):
        return x if isinstance(x, CudaArray) else CudaArray.from_interface(x)

    def prepare(self, x):
        view = self._view(x)
        if view.stream is not None:
            _core.stream_wait(self._stream, view.stream, view.device)
        return view.with_stream(None)  # ordered before the work: nothing left to wait for

    def empty(self, shape, dtype):
        return CudaArray.empty(shape, dtype, self._device)

    def full(self, shape, dtype, value):
        # Only return_argmax with c needs it (k_star starting at -1); CudaArray has no fill yet.
        raise TypeError("return_argmax with c is not supported for __cuda_array_interface__ arrays yet: "
                        "pass torch or cupy arrays, or leave out c")

    def assign(self, dst, src):
        _core.device_copy(dst, src.broadcast_to(dst.shape), self._stream)

    def stream(self):
        return self._stream

    def result(self, x):
        return x.with_stream(self._stream)


_FRAMEWORKS = {"numpy": NumPy, "jax": Jax, "torch": Torch, "cupy": CuPy, CUDA_ARRAY_INTERFACE: CudaArrayInterface}


def framework_of(arrays):
    """The framework of the named arrays (None entries skipped); they must share one."""
    present = [(name, x) for name, x in arrays if x is not None]
    first_name, first = present[0]
    kind = framework_name(first)
    for name, x in present[1:]:
        if framework_name(x) != kind:
            raise TypeError(f"{first_name} is a {kind} array but {name} is a {framework_name(x)} array: "
                            "pass arrays of one framework")
    if kind not in _FRAMEWORKS:
        raise TypeError(f"arrays of {kind} are not supported (supported: {', '.join(_FRAMEWORKS)}; "
                        "numpy.asarray() converts host arrays)")
    return _FRAMEWORKS[kind](first)


def adapt(names, values):
    """(framework, prepared values) for one call's array arguments, named as the caller knows them:
    inputs are read as as_array reads them, outputs ("out") must be arrays already; all belong to one
    framework, whose prepare gives what _core reads through DLPack. _core calls it for every call
    whose arrays are not all numpy arrays or all torch tensors, and for copies in those frameworks."""
    arrays = []
    for name, x in zip(names, values):
        if name == "out":
            if not is_array(x):
                raise TypeError(f"out must be an array, not {type(x).__name__}")
            arrays.append(x)
        else:
            arrays.append(as_array(x, name))
    fw = framework_of(list(zip(names, arrays)))
    return fw, tuple(fw.prepare(x) for x in arrays)


_core.use_numpy(np.ndarray, np.empty, np.dtype)
_core.use_adapter(adapt, numbers.Real)
