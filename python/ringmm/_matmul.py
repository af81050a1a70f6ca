"""ringmm.matmul: the semiring product on arrays, with numpy.matmul's shapes."""

import numbers

import numpy as np

from . import _core
from ._frameworks import as_array, check_names, framework_of, is_array

# The one-call path (_core.one_call_matmul) allocates numpy results itself; torch registers when a Torch
# framework is first made (_frameworks.Torch).
_core.use_numpy(np.ndarray, np.empty, np.dtype("int32"))
_one_call = _core.one_call_matmul


def matmul(a, b, semiring="max_plus", *, c=None, alpha=None, beta=None, trans_a=False, trans_b=False, out=None,
           return_argmax=False, backend="auto"):
    """Multiply over a semiring: alpha ⊗ (op(a) ⊗ op(b)) ⊕ beta ⊗ c, with op(x) = xᵀ when trans_x.

    a, b: arrays of one framework (numpy, torch, cupy; jax on the host), one dtype, one device.
        Their last two dimensions are matrices; leading dimensions broadcast as in numpy.matmul,
        without copies where a missing or size-1 batch dimension can be read with stride 0.
        A 1-D a is a row vector and a 1-D b a column vector; the added dimension is dropped from
        the result. Strided and transposed views are read in place when a leading dimension
        describes them, and copied otherwise.
    semiring: a name of ringmm.semirings() ("max_plus", "min_plus", "plus_times", "lor_land", ...);
        the command line's spellings ("max-plus", "or-and") work too.
    c: added to the product (⊕) after scaling by beta (default 1̄); broadcast to the result's
        shape. c is only read, unless it is also out (then the product accumulates into it).
    alpha, beta: numbers (default 1̄; beta needs c). For integer max-plus/min-plus, ±inf is the
        0̄ sentinel.
    out: an array of the result's shape and dtype to write into; returned.
    return_argmax: also return k_star, an int32 array of the result's shape (int64 when the inner
        dimension K exceeds 2**31 - 1; a's framework and device): the k of the term op(a)[..., i, k] ⊗ op(b)[..., k, j] that won entry (i, j), the
        smallest k among equal terms, and -1 where every term is 0̄. With c, k_star is -1 too where
        beta ⊗ c wins (ties included): it names a term of the product only where one beats c.
        Only for semirings whose ⊕ selects one term: max_plus, min_plus, max_min, max_times,
        min_max (others raise TypeError).
    backend: "auto" (CUDA when compiled in and a device is present, else the CPU), "cpu" or "cuda".
        Arrays on a GPU run on CUDA, on the framework's current stream.

    Returns an array of a's framework and device, or (result, k_star) with return_argmax. A bad
    argument raises ValueError or TypeError naming it, before anything is written to out (the C++
    library's messages, which it passes on, call the operands A, B and C). The GIL is released
    during the product.
    """
    # numpy arrays and torch tensors that ringmm reads in place are checked, allocated and multiplied
    # in one C++ call; it hands every other call (and every refusal) to the general path below.
    result = _one_call(a, b, semiring, c, alpha, beta, trans_a, trans_b, out, return_argmax, backend)
    if result is not NotImplemented:
        return result
    return _general(a, b, semiring, c, alpha, beta, trans_a, trans_b, out, return_argmax, backend)


def _general(a, b, semiring, c, alpha, beta, trans_a, trans_b, out, return_argmax, backend):
    """ringmm.matmul on any framework's arrays: the Python layer allocates, copies and assigns in the
    caller's framework, between _core.plan and _core.multiply."""
    check_names(semiring, backend)
    for name, scalar in (("alpha", alpha), ("beta", beta)):
        if scalar is not None and not isinstance(scalar, numbers.Real):
            raise TypeError(f"{name} must be a number, not {type(scalar).__name__}")
    a, b = as_array(a, "a"), as_array(b, "b")
    c = None if c is None else as_array(c, "c")
    if out is not None and not is_array(out):
        raise TypeError(f"out must be an array, not {type(out).__name__}")
    fw = framework_of([("a", a), ("b", b), ("c", c), ("out", out)])
    a, b = fw.prepare(a), fw.prepare(b)
    c = None if c is None else fw.prepare(c)

    for name, x, trans in (("a", a, trans_a), ("b", b, trans_b)):
        if x.ndim == 0:
            raise ValueError(f"{name} is a scalar: matmul needs at least one dimension")
        if x.ndim == 1 and trans:
            raise ValueError(f"trans_{name} needs a matrix: {name} is a vector")
    # Vectors become matrices of one row (a) or one column (b), as in numpy.matmul.
    row, col = a.ndim == 1, b.ndim == 1
    a = a[None, :] if row else a
    b = b[:, None] if col else b
    c_full = None if c is None else _restore(c, row, col)
    out_full = None if out is None else _restore(fw.prepare(out), row, col)
    # A read-only CudaArray reaches _core as an unversioned DLPack capsule, which cannot say so.
    if getattr(out_full, "readonly", False):
        raise ValueError("out is not a writable array")

    ex = fw.exported
    shape, dtype, copies = _core.plan(ex(a), ex(b), ex(c_full), ex(out_full), semiring, trans_a, trans_b)
    batch = tuple(shape[:-2])
    if "a" in copies:
        a = fw.broadcast_copy(a, batch + tuple(a.shape[-2:]))
    if "b" in copies:
        b = fw.broadcast_copy(b, batch + tuple(b.shape[-2:]))
    # The product goes straight into out when ringmm can write it there and c is out or absent;
    # otherwise into a new array, so that out stays untouched when the call is refused.
    in_out = out is not None and "out" not in copies and (c is None or c is out)
    target = out_full if in_out else fw.empty(shape, dtype)
    if c is not None and target is not out_full:
        fw.assign(target, c_full)
    k_star = None
    if return_argmax:
        # With c the library reads k_star as well and keeps it where beta ⊗ c wins: -1 says so.
        # int32 holds every k below 2**31 - 1; a longer K takes int64.
        index_dtype = "int64" if (a.shape[-2] if trans_a else a.shape[-1]) > 2**31 - 1 else "int32"
        k_star = fw.full(shape, index_dtype, -1) if c is not None else fw.empty(shape, index_dtype)
    _core.multiply(ex(a), ex(b), ex(target), ex(k_star), semiring, trans_a, trans_b, alpha, beta, c is not None, backend,
                   fw.stream())
    if out is not None:
        if target is not out_full:
            fw.assign(out_full, target)
        result = out
    else:
        result = fw.result(_drop_vector_dims(target, row, col))
    return (result, fw.result(_drop_vector_dims(k_star, row, col))) if return_argmax else result


def _drop_vector_dims(x, row, col):
    """x, shaped as the result of the matrices, without the dimensions that vector operands added."""
    if row and col:
        return x[..., 0, 0]
    return x[..., 0, :] if row else x[..., :, 0] if col else x


def _restore(x, row, col):
    """x, shaped as the result, with the dimensions that vector operands drop put back."""
    if row and col:
        return x[..., None, None]
    if x.ndim == 0:
        return x  # broadcasts as it is
    return x[..., None, :] if row else x[..., :, None] if col else x
