"""ringmm.matmul: the semiring product on arrays, with numpy.matmul's shapes."""

from . import _core, _narrow
from . import _frameworks  # noqa: F401  (registers the frameworks with _core)

_entry = _core.matmul


def matmul(a, b, semiring="max_plus", *, c=None, alpha=None, beta=None, trans_a=False, trans_b=False, out=None,
           return_argmax=False, backend="auto", trust_inputs=False):
    """Multiply over a semiring: alpha ⊗ (op(a) ⊗ op(b)) ⊕ beta ⊗ c, with op(x) = xᵀ when trans_x.

    a, b: arrays of one framework (numpy, torch, cupy; jax on the host), one dtype, one device.
        bfloat16 and float16 operands multiply in float32, int8 operands in int32 (max_plus and
        min_plus, where -128 is −∞ and 127 is +∞ respectively): the result is float32 (int32),
        or rounded back (to nearest, ties to even) into an out of the operands' float type.
        int8 matrices and batches of them without c, out or return_argmax go to the C++
        library as they are; on a GPU, from host arrays too, they
        multiply as 16-bit lane pairs. Other narrow operands are widened first, by their own
        framework and on their own device.
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
    trust_inputs: skip the check of the values against the semiring's domain (the integer pairs,
        max_times and log_plus check theirs; out-of-domain values then give unspecified results).
        The check of GPU arrays waits for the device, so these pairs need it to be captured in a
        CUDA graph (torch.cuda.graph).

    Returns an array of a's framework and device, or (result, k_star) with return_argmax. A bad
    argument raises ValueError or TypeError naming it, before anything is written to out (the C++
    library's messages, which it passes on, call the operands A, B and C). The GIL is released
    during the product.
    """
    # One C++ call checks, allocates, copies and multiplies, for every framework (_core.matmul); it
    # reaches python/ringmm/_frameworks.py only for what the caller's framework must do itself.
    if not (_narrow.is_narrow(a) or _narrow.is_narrow(b)):
        return _entry(a, b, semiring, c, alpha, beta, trans_a, trans_b, out, return_argmax, backend, trust_inputs)
    if _narrow.takes_int8_entry(a, b, c, out, return_argmax, beta):
        return _core.matmul_int8(a, b, semiring, alpha, trans_a, trans_b, backend, trust_inputs)
    a, b, c = _narrow.widen(a, semiring, "a"), _narrow.widen(b, semiring, "b"), _narrow.widen(c, semiring, "c")
    if out is None or _narrow.dtype_name(out) not in _narrow.FLOAT_NARROW:
        return _entry(a, b, semiring, c, alpha, beta, trans_a, trans_b, out, return_argmax, backend, trust_inputs)
    # A narrow out takes the float32 result rounded; it is written only once the product succeeded.
    if _narrow.dtype_name(a) != "float32":
        raise TypeError(f"out is {_narrow.dtype_name(out)}, but the product of these operands is {_narrow.dtype_name(a)}")
    result = _entry(a, b, semiring, c, alpha, beta, trans_a, trans_b, None, return_argmax, backend, trust_inputs)
    product = result[0] if return_argmax else result
    if tuple(out.shape) != tuple(product.shape):
        raise ValueError(f"out has shape {tuple(out.shape)}, but the product's is {tuple(product.shape)}")
    _narrow.store(out, product)
    return (out, result[1]) if return_argmax else out
