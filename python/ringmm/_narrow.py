"""Narrow dtypes in ringmm.matmul, ringmm.einsum, ringmm.torch and ringmm.jax: bfloat16 and float16
operands multiply in float32, int8 in int32.

The rule is the C++ library's (include/ringmm/narrow.hpp): every narrow value widens exactly, so the
product equals the product of the widened operands; int8 has its own 0̄ sentinel, -128 for max_plus
(−∞) and 127 for min_plus (+∞), which widens to int32's (∓1073741823). int8 matrices and batches
of them with nothing added go to the C++ library as they are (takes_int8_entry),
which on a GPU multiplies them as 16-bit lane pairs; other operands are widened by their own
framework, on their own device (torch and cupy on the GPU too), into arrays as large as they are
in float32 or int32.
"""

from . import _core

FLOAT_NARROW = ("bfloat16", "float16")
INT8_SENTINEL = {"max_plus": -128, "min_plus": 127}
INT32_ZERO = {"max_plus": -1073741823, "min_plus": 1073741823}


def dtype_name(x):
    """numpy's name of x's dtype ("float16", "bfloat16", "int8", ...), or None for a non-array."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return None
    return str(dtype).removeprefix("torch.")


def _framework(x):
    return type(x).__module__.split(".")[0]


def is_narrow(x):
    return dtype_name(x) in FLOAT_NARROW + ("int8",)


def takes_int8_entry(a, b, c, out, return_argmax, beta):
    """Whether ringmm.matmul gives a and b to the C++ library's int8 gemm (_core.matmul_int8): int8
    matrices or batches of them (on an H200 it ran 1.7–1.9× the framework's int32 copies from
    batches of 64³ members to single 8192³ products: lab/results/calls/2026-11-29-h200-i8-flat.log),
    nothing added (c, beta), a new result (out) and no k_star."""
    return (dtype_name(a) == "int8" and dtype_name(b) == "int8" and c is None and beta is None and out is None
            and not return_argmax and getattr(a, "ndim", 0) >= 2 and getattr(b, "ndim", 0) >= 2)


def widen(x, semiring, name):
    """x in float32 (bfloat16, float16) or int32 (int8, its sentinel mapped), by x's own framework;
    any other x (None included) as it is."""
    kind = dtype_name(x)
    if kind not in FLOAT_NARROW + ("int8",):
        return x
    fw = _framework(x)
    if kind in FLOAT_NARROW:
        return x.float() if fw == "torch" else x.astype("float32")
    canonical = _core.canonical_name(semiring) if isinstance(semiring, str) else None
    sentinel = INT8_SENTINEL.get(canonical)
    if sentinel is None:
        raise TypeError(f"{name} is int8: int8 operands multiply in max_plus and min_plus only (with -128 as −∞ "
                        f"and 127 as +∞), not in {semiring!r}; convert them to int32 for other semirings")
    if fw == "torch":
        import torch

        return x.to(torch.int32).masked_fill_(x == sentinel, INT32_ZERO[canonical])
    if fw in ("jax", "jaxlib"):  # immutable, and perhaps traced under jit
        import jax.numpy as jnp

        return jnp.where(x == sentinel, INT32_ZERO[canonical], x.astype(jnp.int32))
    wide = x.astype("int32")
    wide[x == sentinel] = INT32_ZERO[canonical]
    return wide


def widen_all(arrays, semiring):
    """Each array of `arrays` widened where it is narrow, the i-th named operand i."""
    return [widen(x, semiring, f"operand {i}") for i, x in enumerate(arrays)]


def store(out, result):
    """result (float32) rounded to nearest, ties to even, into out (bfloat16 or float16); returns out."""
    if _framework(out) == "torch":
        out.copy_(result)
    else:
        out[...] = result
    return out
