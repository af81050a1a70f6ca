"""The caller's array framework: it allocates results, copies the operands that ringmm cannot read
in place, and names the stream the product runs on. ringmm reads every framework's arrays through
DLPack; only these steps need the framework itself."""

import numpy as np


def framework_name(x):
    """'numpy', 'torch', 'cupy', 'jax', ... : the package an array type comes from."""
    name = type(x).__module__.split(".")[0]
    return "jax" if name == "jaxlib" else name


def as_array(x, name):
    """x itself when it is an array any framework exports through DLPack; numpy's view of
    anything else (lists, scalars), as numpy.matmul reads them."""
    if hasattr(x, "__dlpack__"):
        return x
    try:
        array = np.asarray(x)
    except Exception as e:
        raise TypeError(f"{name} is not an array: {type(x).__name__} ({e})") from None
    if array.dtype == object:
        raise TypeError(f"{name} is not an array of numbers: {type(x).__name__}")
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

    def broadcast_copy(self, x, shape):
        return np.ascontiguousarray(np.broadcast_to(x, shape))

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

    def __init__(self, like):
        import torch

        self._torch = torch
        self._device = like.device

    def prepare(self, x):
        # DLPack refuses tensors that require grad; ringmm.matmul itself is not differentiable
        # (ringmm.torch.matmul is).
        return x.detach()

    def empty(self, shape, dtype):
        return self._torch.empty(shape, dtype=getattr(self._torch, dtype), device=self._device)

    def full(self, shape, dtype, value):
        return self._torch.full(shape, value, dtype=getattr(self._torch, dtype), device=self._device)

    def broadcast_copy(self, x, shape):
        return x.expand(shape).contiguous()

    def assign(self, dst, src):
        dst.copy_(src)

    def stream(self):
        if self._device.type != "cuda":
            return 0
        return self._torch.cuda.current_stream(self._device).cuda_stream

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

    def broadcast_copy(self, x, shape):
        with self._device:
            return self._cupy.ascontiguousarray(self._cupy.broadcast_to(x, shape))

    def assign(self, dst, src):
        with self._device:
            self._cupy.copyto(dst, src)

    def stream(self):
        with self._device:
            return self._cupy.cuda.get_current_stream().ptr

    def result(self, x):
        return x


_FRAMEWORKS = {"numpy": NumPy, "jax": Jax, "torch": Torch, "cupy": CuPy}


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
