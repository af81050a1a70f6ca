"""ringmm.torch: semiring products that PyTorch differentiates, registered as torch custom operators
(torch.library.custom_op, namespace ``ringmm``) so that torch.compile keeps them in its graph.

    >>> import torch, ringmm.torch
    >>> a = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    >>> b = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    >>> ringmm.torch.matmul(a, b, "log_plus").sum().backward()   # log Σ_k exp(a[i, k] + b[k, j])

Gradients:
    log_plus                  the softmax over k: d c[i, j] / d a[i, k] = exp(a[i, k] + b[k, j] - c[i, j])
    max_plus, min_plus,       all of grad_c[i, j] goes to the one term that won, k = k_star[i, j]
    max_min, max_times,       (the smallest k among equal terms, as ringmm.matmul(return_argmax=True)
    min_max                   says); an entry where every term is 0̄ passes nothing. Through the winning
                              term a ⊗ b: + passes it to both; × passes grad·b to a and grad·a to b;
                              min (max) passes it to the smaller (larger) operand, to a on a tie.
First-order gradients only. This module needs torch; `import ringmm` does not import it.
"""

import torch

from . import _core, _narrow, semirings
from ._frameworks import Torch
from ._matmul import matmul as _matmul

Torch.register()  # _core reads and allocates torch tensors itself from now on

__all__ = ["matmul", "SEMIRINGS"]

_SELECTING = ("max_plus", "min_plus", "max_min", "max_times", "min_max")
SEMIRINGS = _SELECTING + ("log_plus",)  # the semirings ringmm.torch.matmul differentiates

# Built once from the registry, so that the checks torch.compile traces are plain Python.
_CANONICAL = {}  # every accepted spelling ("max-plus", "max_plus") -> the GraphBLAS name
_FLOAT_DTYPES = {}  # name -> the torch dtypes it multiplies and differentiates
for _s in semirings():
    for _spelling in (_s.name, _s.spelling, _s.spelling.replace("-", "_")):
        _CANONICAL[_spelling] = _s.name
    _FLOAT_DTYPES[_s.name] = tuple(getattr(torch, d) for d in _s.dtypes if d in ("float32", "float64"))
del _s, _spelling


def matmul(a, b, semiring="max_plus", *, trust_inputs=False):
    """The semiring product of torch tensors, differentiable in a and b.

    a, b: float tensors of one dtype on one device (CPU, or CUDA with ringmm's CUDA backend; bfloat16
        and float16 multiply in float32 and give a float32 result), shaped
        as torch.matmul takes them: leading dimensions broadcast, and the gradients are summed over
        the dimensions a and b were broadcast along; a 1-D a is a row vector, a 1-D b a column.
    semiring: one of SEMIRINGS ("max_plus", "min_plus", "max_min", "max_times", "min_max",
        "log_plus"); the command line's spellings ("max-plus") work too. max_min and min_max take
        float32 only; max_times needs nonnegative inputs.
    trust_inputs: skip the check of the values against the semiring's domain (log_plus refuses +inf
        and NaN, max_times negative values and +inf), as ringmm.matmul does: the caller vouches for
        them, and log_plus's backward skips its check too. The check waits for the device, so a
        product that checks cannot be captured in a CUDA graph (torch.cuda.graph); with
        trust_inputs=True it can. The selecting semirings' backward still checks k_star's indexes
        (they guard its memory accesses), so their backward waits. Off by default.

    Runs on torch's current stream. Refuses a non-tensor, an unsupported semiring or dtype
    (TypeError), mismatched devices or shapes (ValueError) before any work.
    """
    name = _checked_semiring(semiring)
    # bfloat16 and float16 multiply in float32 (the casts are differentiable: gradients return in the
    # operands' dtype); the result is float32.
    if _narrow.dtype_name(a) in _narrow.FLOAT_NARROW:
        a = a.float()
    if _narrow.dtype_name(b) in _narrow.FLOAT_NARROW:
        b = b.float()
    _check_operands(a, b, name)
    if not isinstance(trust_inputs, bool):
        raise TypeError(f"trust_inputs must be True or False, not {type(trust_inputs).__name__}")
    row, col = a.dim() == 1, b.dim() == 1
    a_matrix = a.unsqueeze(0) if row else a
    b_matrix = b.unsqueeze(-1) if col else b
    if name == "log_plus":
        c = torch.ops.ringmm.log_plus_matmul(a_matrix, b_matrix, trust_inputs)
    else:
        c, _ = torch.ops.ringmm.selecting_matmul(a_matrix, b_matrix, name, trust_inputs)
    if row:
        c = c.squeeze(-2)
    return c.squeeze(-1) if col else c


def _checked_semiring(semiring):
    if not isinstance(semiring, str):
        raise TypeError(f"semiring must be a name such as 'max_plus', not {type(semiring).__name__}")
    name = _CANONICAL.get(semiring)
    if name is None:
        raise ValueError(f"unknown semiring '{semiring}' (differentiable ones: {', '.join(SEMIRINGS)})")
    if name not in SEMIRINGS:
        raise TypeError(f"ringmm.torch.matmul does not differentiate {name} (it does: {', '.join(SEMIRINGS)})")
    return name


def _check_operands(a, b, name):
    for arg, x in (("a", a), ("b", b)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{arg} must be a torch.Tensor, not {type(x).__name__}")
        if x.dim() == 0:
            raise ValueError(f"{arg} is a scalar: matmul needs at least one dimension")
    if b.dtype != a.dtype:
        raise TypeError(f"b has dtype {b.dtype} but a has {a.dtype} (convert one of them)")
    if a.dtype not in _FLOAT_DTYPES[name]:
        supported = ", ".join(str(d) for d in _FLOAT_DTYPES[name])
        raise TypeError(f"{name} is differentiated for {supported}, not {a.dtype}")
    if b.device != a.device:
        raise ValueError(f"b is on {b.device} but a is on {a.device}: both must be on one device")
    k_a, k_b = a.shape[-1], b.shape[0] if b.dim() == 1 else b.shape[-2]
    if k_a != k_b:
        raise ValueError(f"inner dimensions differ: a has {k_a} columns but b has {k_b} rows")
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    try:
        torch.broadcast_shapes(batch_a, batch_b)
    except RuntimeError:
        raise ValueError(f"batch dimensions {tuple(batch_a)} of a and {tuple(batch_b)} of b do not broadcast") from None


# ---- the operators ---------------------------------------------------------------------------------
# Each takes matrices (at least 2-D) and returns new tensors; the fake implementations give torch.compile
# their shapes. The backward operators return gradients of the full batch shape, and the autograd
# formulas sum them to the operands' shapes with torch operations that torch.compile sees.

def _result_shape(a, b):
    return torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])


@torch.library.custom_op("ringmm::selecting_matmul", mutates_args=())
def _selecting_matmul(a: torch.Tensor, b: torch.Tensor, semiring: str,
                      trust_inputs: bool) -> tuple[torch.Tensor, torch.Tensor]:
    c, k_star = _matmul(a, b, semiring, return_argmax=True, trust_inputs=trust_inputs)
    return c, k_star


@_selecting_matmul.register_fake
def _(a, b, semiring, trust_inputs):
    shape = _result_shape(a, b)
    return a.new_empty(shape), a.new_empty(shape, dtype=torch.int32)


@torch.library.custom_op("ringmm::log_plus_matmul", mutates_args=())
def _log_plus_matmul(a: torch.Tensor, b: torch.Tensor, trust_inputs: bool) -> torch.Tensor:
    return _matmul(a, b, "log_plus", trust_inputs=trust_inputs)


@_log_plus_matmul.register_fake
def _(a, b, trust_inputs):
    return a.new_empty(_result_shape(a, b))


def _gradient_buffers(a, b, grad_c):
    batch = grad_c.shape[:-2]
    return a.new_empty(batch + a.shape[-2:]), b.new_empty(batch + b.shape[-2:])


@torch.library.custom_op("ringmm::selecting_matmul_backward", mutates_args=())
def _selecting_matmul_backward(a: torch.Tensor, b: torch.Tensor, k_star: torch.Tensor, grad_c: torch.Tensor,
                               semiring: str) -> tuple[torch.Tensor, torch.Tensor]:
    # One C++ call: checks, copies what it cannot read in place (an expanded grad_c), allocates the
    # gradients beside a and runs on torch's current stream.
    return _core.argmax_backward(a, b, k_star, grad_c, semiring)


@_selecting_matmul_backward.register_fake
def _(a, b, k_star, grad_c, semiring):
    return _gradient_buffers(a, b, grad_c)


@torch.library.custom_op("ringmm::log_plus_matmul_backward", mutates_args=())
def _log_plus_matmul_backward(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, grad_c: torch.Tensor,
                              trust_inputs: bool) -> tuple[torch.Tensor, torch.Tensor]:
    return _core.log_plus_backward(a, b, c, grad_c, trust_inputs)


@_log_plus_matmul_backward.register_fake
def _(a, b, c, grad_c, trust_inputs):
    return _gradient_buffers(a, b, grad_c)


# ---- autograd --------------------------------------------------------------------------------------

def _save_selecting(ctx, inputs, output):
    a, b, semiring, _ = inputs
    ctx.save_for_backward(a, b, output[1])
    ctx.semiring = semiring


def _selecting_backward(ctx, grad_c, grad_k_star):
    a, b, k_star = ctx.saved_tensors
    grad_a, grad_b = torch.ops.ringmm.selecting_matmul_backward(a, b, k_star, grad_c, ctx.semiring)
    return grad_a.sum_to_size(a.shape), grad_b.sum_to_size(b.shape), None, None


def _save_log_plus(ctx, inputs, output):
    a, b, trust_inputs = inputs
    ctx.save_for_backward(a, b, output)
    ctx.trust_inputs = trust_inputs  # a trusted product's backward skips the value check too


def _log_plus_backward(ctx, grad_c):
    a, b, c = ctx.saved_tensors
    grad_a, grad_b = torch.ops.ringmm.log_plus_matmul_backward(a, b, c, grad_c, ctx.trust_inputs)
    return grad_a.sum_to_size(a.shape), grad_b.sum_to_size(b.shape), None


_selecting_matmul.register_autograd(_selecting_backward, setup_context=_save_selecting)
_log_plus_matmul.register_autograd(_log_plus_backward, setup_context=_save_log_plus)
