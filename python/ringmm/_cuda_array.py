"""CudaArray: a strided view of CUDA device memory, for arrays that expose only
__cuda_array_interface__ (numba's device arrays, or a class of one's own). ringmm reads such arrays
through CudaArray views, without copies, and returns its results as CudaArrays in memory it
allocates."""

import operator

import numpy as np

from . import _core

# CAI v3's stream numbers, which the CUDA runtime also takes as stream handles.
LEGACY_DEFAULT_STREAM = 1


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class CudaArray:
    """A strided view of CUDA device memory.

    It exposes ``__cuda_array_interface__`` (version 3) and ``__dlpack__``, so cupy.asarray,
    torch.as_tensor, torch.from_dlpack and numba.cuda.as_cuda_array read it without a copy, and so
    does ringmm. Integers, slices, None and ... index it (basic indexing), giving views that keep the
    memory alive. Memory that ringmm allocates (with cudaMalloc) is freed when the last view goes.

    Attributes: shape, strides (in bytes, as numpy's), dtype (a numpy dtype), device (the GPU's
    ordinal), readonly, and stream: the CUDA stream on which the work that writes it was queued
    (1 = the legacy default stream; None = none pending). Consumers order their reads after that
    stream, as CAI v3 and DLPack ask.
    """

    __slots__ = ("_data", "shape", "strides", "dtype", "device", "readonly", "stream", "_owner")

    def __init__(self, data, shape, strides, dtype, device, owner, *, readonly=False, stream=None):
        self._data = int(data)  # the address of element [0, ..., 0]
        self.shape = tuple(int(d) for d in shape)
        self.strides = tuple(int(s) for s in strides)
        self.dtype = np.dtype(dtype)
        self.device = int(device)
        self.readonly = bool(readonly)
        self.stream = stream
        self._owner = owner  # what keeps the memory alive

    @classmethod
    def from_interface(cls, obj):
        """A view of the memory that obj's __cuda_array_interface__ (version 0 to 3) describes."""
        what = f"{type(obj).__name__}'s __cuda_array_interface__"
        cai = obj.__cuda_array_interface__
        try:
            shape = tuple(operator.index(d) for d in cai["shape"])
            dtype = np.dtype(cai["typestr"])
            data, readonly = cai["data"]
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{what} is malformed: {e}") from None
        if not dtype.isnative and dtype.itemsize > 1:
            raise ValueError(f"{what} has typestr {cai['typestr']!r}: ringmm reads native (little-endian) data only")
        if cai.get("mask") is not None:
            raise ValueError(f"{what} has a mask: masked arrays are not supported")
        strides = cai.get("strides")
        strides = _c_strides(shape, dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
        if len(strides) != len(shape) or any(s % dtype.itemsize for s in strides):
            raise ValueError(f"{what} has strides {strides}, which are not whole elements of its shape {shape}")
        size = int(np.prod(shape))
        if size and not data:
            raise ValueError(f"{what} has a null data pointer for {size} elements")
        device = _core.pointer_device(data, type(obj).__name__) if data else 0
        stream = cai.get("stream")  # version 3: None, or the stream whose work writes the array
        if stream == 0:  # disallowed by the protocol; the runtime reads it as the legacy default stream
            stream = LEGACY_DEFAULT_STREAM
        return cls(data, shape, strides, dtype, device, obj, readonly=bool(readonly), stream=stream)

    @classmethod
    def empty(cls, shape, dtype, device):
        """A new C-contiguous array in device memory that it owns."""
        shape, dtype = tuple(shape), np.dtype(dtype)
        memory = _core.DeviceMemory(int(np.prod(shape)) * dtype.itemsize, device)
        return cls(memory.data, shape, _c_strides(shape, dtype.itemsize), dtype, device, memory)

    def _view(self, data, shape, strides, stream=...):
        return CudaArray(data, shape, strides, self.dtype, self.device, self._owner, readonly=self.readonly,
                         stream=self.stream if stream is ... else stream)

    def with_stream(self, stream):
        """The same view, written by work queued on `stream` (None: nothing pending)."""
        return self._view(self._data, self.shape, self.strides, stream)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d CudaArray")
        return self.shape[0]

    def is_c_contiguous(self):
        return self.size == 0 or all(
            size == 1 or stride == expected
            for size, stride, expected in zip(self.shape, self.strides, _c_strides(self.shape, self.dtype.itemsize)))

    def broadcast_to(self, shape):
        """A view with numpy's broadcasting: new and size-1 dimensions step by 0."""
        shape = tuple(shape)
        extra = len(shape) - self.ndim
        if extra < 0:
            raise ValueError(f"cannot broadcast shape {self.shape} to {shape}")
        strides = []
        for d, size in enumerate(shape):
            own = d - extra
            if own < 0 or (self.shape[own] == 1 and size != 1):
                strides.append(0)
            elif self.shape[own] == size:
                strides.append(self.strides[own])
            else:
                raise ValueError(f"cannot broadcast shape {self.shape} to {shape}")
        return self._view(self._data, shape, strides)

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if sum(k is Ellipsis for k in key) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        indexed = sum(k is not None and k is not Ellipsis for k in key)
        if indexed > self.ndim:
            raise IndexError(f"too many indices: the array has {self.ndim} dimensions but {indexed} were indexed")
        fill = (slice(None),) * (self.ndim - indexed)
        if Ellipsis in key:
            at = next(i for i, k in enumerate(key) if k is Ellipsis)
            key = key[:at] + fill + key[at + 1:]
        else:
            key = key + fill
        data, shape, strides, dim = self._data, [], [], 0
        for k in key:
            if k is None:
                shape.append(1)
                strides.append(0)
                continue
            size, stride = self.shape[dim], self.strides[dim]
            dim += 1
            if isinstance(k, slice):
                start, stop, step = k.indices(size)
                count = len(range(start, stop, step))
                data += start * stride if count else 0
                shape.append(count)
                strides.append(stride * step)
                continue
            try:
                i = operator.index(k)
            except TypeError:
                raise TypeError(f"CudaArray takes basic indexes only (integers, slices, None, ...), "
                                f"not {type(k).__name__}") from None
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for a dimension of size {size}")
            data += (i % size) * stride
        return self._view(data, shape, strides)

    @property
    def __cuda_array_interface__(self):
        return {
            "version": 3,
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self._data, self.readonly),
            "strides": None if self.is_c_contiguous() else self.strides,
            "stream": self.stream,
        }

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # DLPack: the consumer names its stream (None: the legacy default, -1: no ordering wanted).
        if self.stream is not None and stream != -1:
            consumer = LEGACY_DEFAULT_STREAM if stream is None else stream
            _core.stream_wait(consumer, self.stream, self.device)
        itemsize = self.dtype.itemsize
        view = _core.dlpack_view(self._data, self.shape, [s // itemsize for s in self.strides], self.dtype.name,
                                 self.device, self.readonly, self)
        if not hasattr(view, "__dlpack__"):
            return view  # nanobind's ndarray without a framework comes to Python as the capsule itself
        options = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
        return view.__dlpack__(**{k: v for k, v in options.items() if v is not None})

    def __dlpack_device__(self):
        return (2, self.device)  # kDLCUDA

    def __repr__(self):
        return f"CudaArray(shape={self.shape}, dtype={self.dtype.name}, device=cuda:{self.device})"
