"""ringmm.jax: ringmm's products and applications as XLA custom calls, so that they run inside
jax.jit, vmap and grad (and eagerly), on the CPU and on CUDA.

    >>> import jax, jax.numpy as jnp, ringmm.jax as rj
    >>> a = jnp.array([[0., 2.], [1., 0.]]); b = jnp.array([[0., 5.], [3., 0.]])
    >>> jax.jit(lambda a, b: rj.matmul(a, b, "max_plus"))(a, b)     # max_k a[i, k] + b[k, j]
    Array([[5., 5.],
           [3., 6.]], dtype=float32)

Every function is a custom call of the XLA typed FFI (python/src/jax_ffi.cpp), registered when this
module is imported. XLA hands it its buffers and, on a GPU, its stream and scratch memory.

- Checks: a semiring, dtype or shape that ringmm.matmul refuses raises at trace time, with
  ringmm.matmul's message. Values outside a semiring's domain (integers out of range, NaN in
  log-plus, negative max-times inputs) are found on the device and raise when the result is
  computed, with ringmm's message.
- jit: every function. On CUDA the products whose inputs need no value check and that do not go
  to cuBLAS (float max-plus, min-plus, max-min, min-max; or-and) neither allocate nor synchronise,
  and are declared compatible with XLA's command buffers (CUDA graphs).
- vmap: a vmapped axis becomes a leading batch dimension of the product (one batched ringmm call,
  an unbatched operand read with stride 0). apsp and the HMMs run once per member (sequential).
- grad (jax.custom_vjp, first order): matmul and matmul_argmax over log_plus (softmax weights),
  the selecting semirings (max_plus, min_plus, max_min, max_times, min_max: all of grad_c[i, j]
  goes to the winning term, the smallest k on ties) and plus_times (two products), from the
  forward's saved argmax or result, never recomputed. With c, alpha or beta, and for apsp and the
  HMMs, differentiation raises TypeError.

einsum is not here yet (ringmm has no semiring einsum). float64 and int64 need JAX's
jax_enable_x64, as everywhere in JAX.
"""

import dataclasses
import functools
import importlib

import jax
import jax.numpy as jnp
import numpy as np

from . import _core, _narrow

_ffi = getattr(jax, "ffi", None) or importlib.import_module("jax.extend.ffi")  # jax.ffi from JAX 0.4.38 on

if not hasattr(_core, "jax_handlers"):
    raise ImportError("this build of ringmm has no XLA FFI handlers: jaxlib was not installed when it was built "
                      "(install jax, then reinstall ringmm)")

for _target, _platforms in _core.jax_handlers().items():
    for _platform, _handler in _platforms.items():
        _ffi.register_ffi_target(_target, _handler, platform=_platform)
del _target, _platforms, _platform, _handler

__all__ = ["matmul", "matmul_argmax", "apsp", "hmm_viterbi", "hmm_forward", "calls_in_graphs", "DIFFERENTIATED"]

_SELECTING = ("max_plus", "min_plus", "max_min", "max_times", "min_max")
DIFFERENTIATED = _SELECTING + ("log_plus", "plus_times")  # the semirings grad goes through (float dtypes)


def matmul(a, b, semiring="max_plus", *, c=None, alpha=None, beta=None, trans_a=False, trans_b=False):
    """alpha ⊗ (op(a) ⊗ op(b)) ⊕ beta ⊗ c over a semiring, as ringmm.matmul computes it.

    a, b: JAX arrays (or anything jnp.asarray takes) of one dtype; their last two dimensions are
        matrices, leading ones broadcast as in numpy.matmul; a 1-D a is a row vector and a 1-D b a
        column vector. op(x) = xᵀ (the last two dimensions swapped) when trans_x.
    semiring: a name of ringmm.semirings() ("max_plus", "min_plus", "log_plus", "lor_land", ...);
        the command line's spellings ("max-plus") work too.
    c, alpha, beta: as for ringmm.matmul (c broadcasts to the result's shape; beta needs c).
        There is no out: JAX arrays are immutable.

    bfloat16 and float16 operands multiply in float32, int8 ones in int32 (max_plus and min_plus, with
    -128 and 127 as 0̄), as ringmm.matmul's do.

    Returns a JAX array of the result's shape and a's dtype (float32 or int32 for narrow operands).
    Differentiable in a and b (see the
    module's documentation) when c, alpha and beta are absent.
    """
    return _matmul(a, b, semiring, c, alpha, beta, trans_a, trans_b, argmax=False)


def matmul_argmax(a, b, semiring="max_plus", *, c=None, alpha=None, beta=None, trans_a=False, trans_b=False):
    """matmul and, for each entry, the k of the term op(a)[..., i, k] ⊗ op(b)[..., k, j] that won it.

    As ringmm.matmul(..., return_argmax=True): only for semirings whose ⊕ selects one term (max_plus,
    min_plus, max_min, max_times, min_max); k_star is int32 (int64 when K exceeds 2**31 - 1), the
    smallest k among equal terms, -1 where every term is 0̄ or where beta ⊗ c wins.

    Returns (result, k_star). Differentiable in a and b through the result, from the saved k_star.
    """
    return _matmul(a, b, semiring, c, alpha, beta, trans_a, trans_b, argmax=True)


def apsp(weights, *, longest=False, block=None, return_next=True):
    """All-pairs shortest (with longest=True, longest) paths and their successors, as ringmm.apsp.

    weights: an (n, n) float32 or float64 JAX array, +inf where there is no edge. block: vertices
    per Floyd–Warshall block (None or 0: the backend's default). Returns (dist, next), or dist with
    return_next=False; next[i, j] is the vertex after i on a shortest i → j path (int32, -1 where j
    is unreachable); ringmm.route(numpy.asarray(next), i, j) follows it. A negative cycle (positive
    with longest) raises when the result is computed. Under vmap: one solve per member.
    """
    weights = jnp.asarray(weights)
    if weights.ndim != 2:
        raise ValueError(f"weights has {weights.ndim} dimensions: an adjacency matrix is n x n")
    if weights.shape[0] != weights.shape[1]:
        raise ValueError(f"weights has shape {weights.shape}: an adjacency matrix is square")
    if weights.dtype not in (jnp.float32, jnp.float64):
        raise TypeError(f"weights has dtype {weights.dtype}: apsp takes float32 or float64 weights (+inf for no edge)")
    block = _block(block)
    n = weights.shape[0]
    call = _ffi.ffi_call("ringmm_apsp", (jax.ShapeDtypeStruct((n, n), weights.dtype),
                                             jax.ShapeDtypeStruct((n, n), jnp.int32)), vmap_method="sequential")
    dist, next_ = _undifferentiated("apsp", lambda w: call(w, longest=bool(longest), block=np.int64(block)), weights)
    return (dist, next_) if return_next else dist


def hmm_viterbi(init, trans, emission=None, observations=None, *, scores=None):
    """The best state paths of sequences under a hidden Markov model and their log-scores, as
    ringmm.hmm_viterbi: init (S,), trans (S, S), and either emission (S, V) with integer
    observations (T,) or (B, T), or scores (T, S) or (B, T, S); float32 or float64 log-probabilities.
    A symbol outside 0..V-1 gives NaN scores, which are refused when the result is computed.
    Returns (path, score): int32 (T,) or (B, T), and a scalar or (B,).
    """
    init, trans, emit, single = _hmm_model(init, trans, emission, observations, scores)
    steps, batch, _ = emit.shape
    call = _ffi.ffi_call("ringmm_hmm_viterbi", (jax.ShapeDtypeStruct((batch, steps), jnp.int32),
                                                   jax.ShapeDtypeStruct((batch,), init.dtype)),
                            vmap_method="sequential")
    path, score = _undifferentiated("hmm_viterbi", lambda i, t, e: call(i, t, e), init, trans, emit)
    return (path[0], score[0]) if single else (path, score)


def hmm_forward(init, trans, emission=None, observations=None, *, scores=None):
    """The log-likelihood of sequences under a hidden Markov model (the forward algorithm over
    log-plus), as ringmm.hmm_forward; the arguments are hmm_viterbi's. Returns a scalar or (B,)."""
    init, trans, emit, single = _hmm_model(init, trans, emission, observations, scores)
    call = _ffi.ffi_call("ringmm_hmm_forward", jax.ShapeDtypeStruct((emit.shape[1],), init.dtype),
                            vmap_method="sequential")
    loglik = _undifferentiated("hmm_forward", lambda i, t, e: call(i, t, e), init, trans, emit)
    return loglik[0] if single else loglik


def calls_in_graphs():
    """How many ringmm.jax calls on CUDA XLA has made while capturing a CUDA graph (its command
    buffers: XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL captures custom calls),
    since the process started. Such a call is recorded once and replayed with the graph."""
    return _core.jax_calls_in_graphs()


# ---- the product ---------------------------------------------------------------------------------

def _matmul(a, b, semiring, c, alpha, beta, trans_a, trans_b, argmax):
    a, b = jnp.asarray(a), jnp.asarray(b)
    c = None if c is None else jnp.asarray(c)
    # bfloat16 and float16 multiply in float32, int8 in int32 (ringmm/_narrow.py); the casts are traced
    # and differentiable.
    a, b, c = _narrow.widen(a, semiring, "a"), _narrow.widen(b, semiring, "b"), _narrow.widen(c, semiring, "c")
    # ringmm.matmul's checks, on shapes and dtypes (raise TypeError or ValueError as it does).
    plan = _core.jax_plan(a.shape, a.dtype.name, b.shape, b.dtype.name, None if c is None else c.shape,
                          None if c is None else c.dtype.name, semiring, alpha, beta, bool(trans_a), bool(trans_b),
                          argmax)
    product = _Product(plan["semiring"], bool(trans_a), bool(trans_b), tuple(plan["shape"]),
                       tuple(plan["matrix_shape"]), plan["k_star_dtype"], plan["in_graphs"], argmax,
                       None if alpha is None else float(alpha), None if beta is None else float(beta))
    if c is None and alpha is None and beta is None:
        return _differentiable(a, b, product)
    return _undifferentiated("matmul with c, alpha or beta", lambda a, b, c: product(a, b, c), a, b, c)


@dataclasses.dataclass(frozen=True)
class _Product:
    """One checked product: the custom call and how its operands and results are shaped. Frozen,
    so hashable, as jax.custom_vjp's static arguments must be."""

    semiring: str
    trans_a: bool
    trans_b: bool
    shape: tuple  # the result's
    matrix_shape: tuple  # the result's with the dimensions that vector operands drop
    k_star_dtype: str
    in_graphs: bool  # declared capturable in CUDA graphs (jax_ffi.cpp)
    argmax: bool
    alpha: float = None
    beta: float = None

    def __call__(self, a, b, c=None, argmax=None):
        """The result (and k_star with argmax) of the custom call, in the caller's shapes."""
        argmax = self.argmax if argmax is None else argmax
        operands = list(_as_matrix(a, b))
        if c is not None:  # broadcast over the matrices here; the handler broadcasts the batch
            c = _as_result_matrix(c, a, b)
            operands.append(jnp.broadcast_to(c, c.shape[:-2] + self.matrix_shape[-2:]))
        results = [jax.ShapeDtypeStruct(self.matrix_shape, a.dtype)]
        if argmax:
            results.append(jax.ShapeDtypeStruct(self.matrix_shape, self.k_star_dtype))
        # The products that check no values and take no cuBLAS may be captured in CUDA graphs (jax_ffi.cpp).
        target = "ringmm_matmul" + ("_argmax" if argmax else "") + ("_graph" if self.in_graphs else "")
        call = _ffi.ffi_call(target, results, vmap_method="expand_dims")
        outs = call(*operands, semiring=self.semiring, trans_a=self.trans_a, trans_b=self.trans_b,
                    has_alpha=self.alpha is not None, alpha=np.float64(self.alpha or 0.0),
                    has_beta=self.beta is not None, beta=np.float64(self.beta or 0.0))
        outs = [x.reshape(x.shape[:x.ndim - len(self.matrix_shape)] + self.shape) for x in outs]
        return tuple(outs) if argmax else outs[0]


def _as_matrix(a, b):
    """a and b as the product reads them: a row vector a as (1, K), a column vector b as (K, 1)."""
    return (a[None, :] if a.ndim == 1 else a), (b[:, None] if b.ndim == 1 else b)


def _as_result_matrix(x, a, b):
    """c, shaped as the caller's result (or broadcasting to it), with the dimensions that vector
    operands drop put back (as ringmm.matmul reads it), and at least two dimensions."""
    if a.ndim == 1 and b.ndim == 1:
        x = x[..., None, None]
    elif x.ndim and a.ndim == 1:
        x = x[..., None, :]
    elif x.ndim and b.ndim == 1:
        x = x[..., None]
    return x.reshape((1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x


# ---- gradients -----------------------------------------------------------------------------------

@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _differentiable(a, b, product):
    return product(a, b)


def _differentiable_fwd(a, b, product):
    if product.semiring in _SELECTING:
        c, k_star = product(a, b, argmax=True)
        return ((c, k_star) if product.argmax else c), (a, b, k_star)
    out = product(a, b)
    return out, (a, b, out if product.semiring == "log_plus" else None)


def _differentiable_bwd(product, saved, grad):
    a, b, forward = saved  # every float pair is one of DIFFERENTIATED; JAX refuses integer inputs itself
    grad_c = grad[0] if product.argmax else grad
    # Everything as the product multiplied it: matrices op(a) (M, K) and op(b) (K, N).
    am, bm = _as_matrix(a, b)
    op_a = jnp.swapaxes(am, -1, -2) if product.trans_a else am
    op_b = jnp.swapaxes(bm, -1, -2) if product.trans_b else bm
    grad_c = grad_c.reshape(grad_c.shape[:grad_c.ndim - len(product.shape)] + product.matrix_shape)
    if product.semiring == "plus_times":
        grad_op_a = jnp.matmul(grad_c, jnp.swapaxes(op_b, -1, -2))
        grad_op_b = jnp.matmul(jnp.swapaxes(op_a, -1, -2), grad_c)
    else:
        forward = forward.reshape(forward.shape[:forward.ndim - len(product.shape)] + product.matrix_shape)
        batch = grad_c.shape[:-2]
        call = _ffi.ffi_call("ringmm_backward", (jax.ShapeDtypeStruct(batch + op_a.shape[-2:], a.dtype),
                                                    jax.ShapeDtypeStruct(batch + op_b.shape[-2:], a.dtype)),
                                vmap_method="expand_dims")
        grad_op_a, grad_op_b = call(op_a, op_b, forward, grad_c, semiring=product.semiring)
    grad_a = jnp.swapaxes(grad_op_a, -1, -2) if product.trans_a else grad_op_a
    grad_b = jnp.swapaxes(grad_op_b, -1, -2) if product.trans_b else grad_op_b
    return _sum_to(grad_a, am.shape).reshape(a.shape), _sum_to(grad_b, bm.shape).reshape(b.shape)


_differentiable.defvjp(_differentiable_fwd, _differentiable_bwd)


def _sum_to(x, shape):
    """x summed over the dimensions along which an operand of `shape` was broadcast to x's shape."""
    lead = x.ndim - len(shape)
    if lead:
        x = x.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and x.shape[i] != 1)
    return x.sum(axis=axes, keepdims=True) if axes else x


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def _undifferentiated(what, call, *args):
    return call(*args)


def _undifferentiated_fwd(what, call, *args):
    return call(*args), None


def _undifferentiated_bwd(what, call, saved, grad):
    raise TypeError(f"ringmm.jax does not differentiate {what} (it differentiates matmul and matmul_argmax "
                    f"without c, alpha and beta)")


_undifferentiated.defvjp(_undifferentiated_fwd, _undifferentiated_bwd)


# ---- the applications' arguments -------------------------------------------------------------------

def _block(block):
    if block is None:
        return 0
    block = int(block)
    if block < 0:
        raise ValueError(f"block must be a positive number of vertices, got {block}")
    return block


def _hmm_model(init, trans, emission, observations, scores):
    """init, trans and the step-major emission scores (T, B, S) of an HMM call, checked; and whether
    it is one sequence."""
    init, trans = jnp.asarray(init), jnp.asarray(trans)
    if init.dtype not in (jnp.float32, jnp.float64):
        raise TypeError(f"init has dtype {init.dtype}: HMMs take float32 or float64 log-probabilities")
    if init.ndim != 1:
        raise ValueError(f"init has shape {init.shape}: it holds one log-probability per state, (S,)")
    states = init.shape[0]
    if trans.shape != (states, states):
        raise ValueError(f"trans has shape {trans.shape} but init has {states} states: trans is (S, S)")
    if trans.dtype != init.dtype:
        raise TypeError(f"trans has dtype {trans.dtype} but init has {init.dtype}")
    if (scores is None) == (emission is None or observations is None):
        raise TypeError("pass either emission and observations, or scores")
    if scores is not None:
        scores = jnp.asarray(scores)
        if scores.ndim not in (2, 3) or scores.shape[-1] != states:
            raise ValueError(f"scores has shape {scores.shape}: it is (T, S) or (B, T, S) with S = {states}")
        if scores.dtype != init.dtype:
            raise TypeError(f"scores has dtype {scores.dtype} but init has {init.dtype}")
        single = scores.ndim == 2
        emit = jnp.swapaxes(scores[None] if single else scores, 0, 1)
    else:
        emission, observations = jnp.asarray(emission), jnp.asarray(observations)
        if emission.ndim != 2 or emission.shape[0] != states:
            raise ValueError(f"emission has shape {emission.shape}: it is (S, V) with S = {states}")
        if emission.dtype != init.dtype:
            raise TypeError(f"emission has dtype {emission.dtype} but init has {init.dtype}")
        if not jnp.issubdtype(observations.dtype, jnp.integer) or observations.ndim not in (1, 2):
            raise ValueError(f"observations has shape {observations.shape} and dtype {observations.dtype}: it holds "
                             "integer symbols, (T,) or (B, T)")
        single = observations.ndim == 1
        symbols = observations[None] if single else observations
        # (S, B, T) → (T, B, S); a symbol outside 0..V-1 reads NaN, which the call refuses.
        emit = jnp.take(emission, symbols, axis=1, mode="fill", fill_value=jnp.nan).transpose(2, 1, 0)
    if emit.shape[0] == 0:
        raise ValueError("the sequences have no steps: T must be at least 1")
    return init, trans, emit, single
