"""ringmm.einsum and ringmm.einsum_path: tensor contractions over a semiring.

An expression is evaluated in three stages, each on the caller's framework (numpy, torch, cupy or
JAX) and device:
1. each operand alone: a repeated index takes the diagonal (a strided view), and an index that no
   other operand and not the output has is ⊕-reduced, as a product with a vector of 1̄;
2. the pairs of the contraction path (opt_einsum's path finders, or the caller's path): each pair is
   one batched ringmm product, its indices grouped into batch (in both and kept), left-free,
   right-free and contracted (in both, needed nowhere after); operands are permuted and reshaped into
   (batch..., M, K) and (batch..., K, N), which the framework does as views where the strides allow,
   with a transposed operand read in place (trans_a, trans_b) where its memory order asks for it;
3. the last operand permuted into the output's order.
Products run through ringmm.matmul; through ringmm.torch.matmul (or torch.matmul for plus-times)
when a torch operand requires grad, so that autograd differentiates them from the saved argmax or
result; and through ringmm.jax.matmul for JAX arrays, so that jit, vmap and grad work.
"""

import math
import string
import sys

from . import _core, _narrow

_LETTERS = string.ascii_letters


def _is_index(c):
    """An index symbol: an ASCII letter as numpy takes, or any letter or symbol beyond ASCII (the
    symbols opt_einsum.get_symbol gives for large networks)."""
    return c in _LETTERS or ord(c) > 127


def _spare_symbols(used, count):
    """`count` index symbols not in `used`: ASCII letters first, then CJK ideographs."""
    spare = [c for c in _LETTERS if c not in used]
    code = 0x4E00
    while len(spare) < count:
        if chr(code) not in used:
            spare.append(chr(code))
        code += 1
    return spare[:count]


# ---- parsing ---------------------------------------------------------------------------------------

class _Expression:
    """A parsed einsum expression: each operand's indices (one letter per dimension, ellipses
    expanded into letters of their own) and the output's."""

    def __init__(self, subscripts, shapes):
        if not isinstance(subscripts, str):
            raise TypeError(f"subscripts must be a str such as 'ij,jk->ik', not {type(subscripts).__name__}")
        text = subscripts.replace(" ", "")
        if "->" in text:
            inputs_text, _, output_text = text.partition("->")
            if "->" in output_text:
                raise ValueError(f"subscripts '{subscripts}' has more than one '->'")
        else:
            inputs_text, output_text = text, None
        terms = inputs_text.split(",")
        if len(terms) != len(shapes):
            raise ValueError(f"subscripts '{subscripts}' names {len(terms)} operands but {len(shapes)} were given")
        for where, term in [(f"operand {i}", t) for i, t in enumerate(terms)] + [("the output", output_text or "")]:
            bad = [c for c in term.replace("...", "") if not _is_index(c)]
            if bad:
                raise ValueError(f"subscripts '{subscripts}': {where} has '{bad[0]}', which is not a letter "
                                 "(indices are letters a-z, A-Z, or symbols beyond ASCII; '...' broadcasts)")
            if term.count("...") > 1 or "." in term.replace("...", ""):
                raise ValueError(f"subscripts '{subscripts}': {where} has more than one ellipsis, or a stray '.'")
        used = set(inputs_text + (output_text or ""))
        ellipsis_rank = 0
        for i, (term, shape) in enumerate(zip(terms, shapes)):
            named = len(term.replace("...", ""))
            if "..." in term:
                if named > len(shape):
                    raise ValueError(f"subscripts '{subscripts}': operand {i} has {len(shape)} dimensions, fewer "
                                     f"than the {named} indices its term '{term}' names")
                ellipsis_rank = max(ellipsis_rank, len(shape) - named)
            elif named != len(shape):
                raise ValueError(f"subscripts '{subscripts}': operand {i} has {len(shape)} dimensions but its term "
                                 f"'{term}' names {named}")
        dots = _spare_symbols(used, ellipsis_rank)  # the broadcast dimensions' indices, aligned at the right
        self.inputs = []
        for term, shape in zip(terms, shapes):
            if "..." in term:
                before, after = term.split("...")
                own = len(shape) - len(before) - len(after)
                term = before + "".join(dots[ellipsis_rank - own:]) + after
            self.inputs.append(list(term))
        if output_text is None:  # numpy's implicit output: the ellipsis, then indices seen once, sorted
            counts = {}
            for term in self.inputs:
                for c in term:
                    counts[c] = counts.get(c, 0) + 1
            self.output = dots + sorted(c for c, n in counts.items() if n == 1 and c not in dots)
        else:
            if "..." in output_text:  # (without it, the ellipsis's dimensions are ⊕-reduced, as numpy sums them)
                before, after = output_text.split("...")
                output_text = before + "".join(dots) + after
            self.output = list(output_text)
        seen_in_output = set()
        for c in self.output:
            if c in seen_in_output:
                raise ValueError(f"subscripts '{subscripts}': the output repeats index '{c}'")
            seen_in_output.add(c)
            if not any(c in term for term in self.inputs):
                raise ValueError(f"subscripts '{subscripts}': output index '{c}' appears in no operand")
        self.dots = set(dots)
        self.sizes = {}
        for i, (term, shape) in enumerate(zip(self.inputs, shapes)):
            for c, n in zip(term, shape):
                known = self.sizes.get(c)
                if known is None or known == 1 and c in self.dots:
                    self.sizes[c] = n
                elif n != known and not (n == 1 and c in self.dots):
                    raise ValueError(f"subscripts '{subscripts}': index '{c}' has size {n} in operand {i} but "
                                     f"{known} elsewhere")


# ---- frameworks ------------------------------------------------------------------------------------

_FRAMEWORKS = {"numpy": "numpy", "torch": "torch", "cupy": "cupy", "jax": "jax", "jaxlib": "jax"}


def _framework_of(x):
    return _FRAMEWORKS.get(type(x).__module__.split(".")[0])


class _Framework:
    """What einsum does with the caller's arrays: permute, reshape, diagonals, broadcasts, and the
    semiring product."""

    def __init__(self, operands):
        known = [_framework_of(x) for x in operands]
        self.name = next((k for k in known if k is not None), "numpy")
        if self.name == "numpy":  # lists and scalars are read as numpy.asarray reads them
            import numpy
            operands = [x if k == "numpy" else numpy.asarray(x) for x, k in zip(operands, known)]
            known = ["numpy"] * len(operands)
        for i, k in enumerate(known):
            if k != self.name:
                x = operands[i]
                raise TypeError(f"operand {i} is a {type(x).__module__}.{type(x).__name__} but the others are "
                                f"{self.name} arrays: all operands must belong to one framework")
        self.operands = operands
        if self.name == "jax":
            import jax.numpy as module
        else:
            module = sys.modules[self.name]
        self.module = module

    def permute(self, x, order):
        if list(order) == list(range(len(order))):
            return x
        return x.permute(*order) if self.name == "torch" else self.module.transpose(x, order)

    def diagonal(self, x, axis1, axis2):
        return self.module.diagonal(x, 0, axis1, axis2)

    def expand(self, x, shape):
        return x.expand(*shape) if self.name == "torch" else self.module.broadcast_to(x, shape)

    def vector(self, like, length, value):
        if self.name == "torch":
            return self.module.full((length,), value, dtype=like.dtype, device=like.device)
        return self.module.full((length,), value, like.dtype)

    def truth(self, x):
        """0/1 of x's entries in x's dtype: or-and's elements."""
        nonzero = x != 0
        return nonzero.to(x.dtype) if self.name == "torch" else nonzero.astype(x.dtype)

    def wants_grad(self, x):
        return self.name == "torch" and x.requires_grad

    def product(self, a, b, semiring, trans_a, trans_b, options, grad):
        """op(a) ⊗ op(b) with numpy.matmul's batch broadcasting; options: ringmm.matmul's backend and
        trust_inputs (einsum refuses trust_inputs for JAX before any product)."""
        if self.name == "jax":
            from . import jax as ringmm_jax
            return ringmm_jax.matmul(a, b, semiring, trans_a=trans_a, trans_b=trans_b)
        if grad:
            import torch
            a = a.transpose(-1, -2) if trans_a else a
            b = b.transpose(-1, -2) if trans_b else b
            if semiring == "plus_times":
                return torch.matmul(a, b)
            from . import torch as ringmm_torch
            return ringmm_torch.matmul(a, b, semiring, trust_inputs=options["trust_inputs"])
        from ._matmul import matmul
        return matmul(a, b, semiring, trans_a=trans_a, trans_b=trans_b, **options)


# ---- the contraction -------------------------------------------------------------------------------

# The most dimensions an array is given (torch's CUDA kernels take 25).
_MAX_DIMS = 25


class _Tensor:
    """An operand or intermediate: its indices, their sizes, and the array. The array has one
    dimension per index (an operand), or is a product's contiguous result whose row-major order is
    the indices' order, with runs of them merged into one dimension: an intermediate of a tensor
    network can have more indices than torch allows dimensions (25)."""

    def __init__(self, array, indices, sizes=None):
        self.array, self.indices = array, list(indices)
        self.sizes = list(array.shape) if sizes is None else list(sizes)

    def per_index(self):
        return self.array.ndim == len(self.indices) and list(self.array.shape) == self.sizes

    def arranged(self, fw, order, shape):
        """The array with its indices in `order`, reshaped to `shape`: indices consecutive in both
        orders move as one dimension."""
        if self.per_index():
            return fw.permute(self.array, [self.indices.index(c) for c in order]).reshape(shape)
        position = {c: i for i, c in enumerate(self.indices)}
        runs = []
        for c in order:
            if runs and position[c] == position[runs[-1][-1]] + 1:
                runs[-1].append(c)
            else:
                runs.append([c])
        size = {c: n for c, n in zip(self.indices, self.sizes)}
        extent = lambda run: math.prod(size[c] for c in run)  # noqa: E731
        current = sorted(runs, key=lambda run: position[run[0]])  # the runs as the array holds them
        x = self.array
        # More runs than a framework's kernels take dimensions: move them to the end a chunk at a
        # time, in their target order; the runs in between stay merged in each step.
        chunk = max(1, (_MAX_DIMS - 1) // 2)
        for start in range(0, len(runs), chunk if len(runs) > _MAX_DIMS else len(runs) or 1):
            moving = runs[start:start + chunk] if len(runs) > _MAX_DIMS else runs
            groups, staying = [], []  # dimensions of this step: runs that stay (merged), or move
            for run in current:
                if any(run is r for r in moving):
                    groups.append([run])
                elif groups and not any(groups[-1][0] is r for r in moving):
                    groups[-1].append(run)
                else:
                    groups.append([run])
            x = x.reshape(tuple(math.prod(extent(r) for r in g) for g in groups))
            stay = [i for i, g in enumerate(groups) if not any(g[0] is r for r in moving)]
            move = [next(i for i, g in enumerate(groups) if g[0] is r) for r in moving]
            x = fw.permute(x, stay + move)
            current = [r for i in stay for r in groups[i]] + list(moving)
        return x.reshape(shape)


def _take_diagonals(fw, t):
    """Each index that repeats within t (an operand) taken once, on the diagonal."""
    while True:
        repeated = next((c for c in t.indices if t.indices.count(c) > 1), None)
        if repeated is None:
            return t
        first = t.indices.index(repeated)
        second = t.indices.index(repeated, first + 1)
        array = fw.diagonal(t.array, first, second)  # the diagonal becomes the last dimension
        indices = [c for k, c in enumerate(t.indices) if k not in (first, second)] + [repeated]
        t = _Tensor(array, indices)


def _reduce(fw, t, drop, one, semiring, options):
    """t with the indices in `drop` ⊕-reduced: a product with a vector of 1̄."""
    drop = [c for c in t.indices if c in drop]
    if not drop:
        return t
    rest = [c for c in t.indices if c not in drop]
    size = dict(zip(t.indices, t.sizes))
    r, k = math.prod(size[c] for c in rest), math.prod(size[c] for c in drop)
    x = t.arranged(fw, rest + drop, (r, k))
    y = fw.product(x, fw.vector(x, k, one), semiring, False, False, options, fw.wants_grad(x))
    return _Tensor(y, rest, [size[c] for c in rest])


def _pair(fw, x, y, keep, sizes, semiring, options):
    """One pairwise contraction as a batched product: batch indices (in both, kept), left (x only),
    right (y only), contracted (in both, not kept)."""
    batch = [c for c in x.indices if c in y.indices and c in keep]
    contracted = [c for c in x.indices if c in y.indices and c not in keep]
    left = [c for c in x.indices if c not in y.indices]
    right = [c for c in y.indices if c not in x.indices]
    # The contracted order of the larger operand, whose arrangement then stays a view where it can.
    if math.prod(y.sizes) > math.prod(x.sizes):
        contracted = [c for c in y.indices if c in contracted]
    # A contracted index of size 1 on one side (a broadcast ellipsis dimension) is expanded.
    for t in (x, y):
        want = [sizes[c] if c in contracted else n for c, n in zip(t.indices, t.sizes)]
        if want != t.sizes:
            per_index = t.array if t.per_index() else t.array.reshape(tuple(t.sizes))
            t.array, t.sizes = fw.expand(per_index, tuple(want)), want
    xs, ys = dict(zip(x.indices, x.sizes)), dict(zip(y.indices, y.sizes))
    left_dims, right_dims = [xs[c] for c in left], [ys[c] for c in right]
    m, n = math.prod(left_dims), math.prod(right_dims)
    k = math.prod(sizes[c] for c in contracted)
    # Batch indices of equal sizes on both sides are one batch dimension; where one side has 1 (a
    # broadcast ellipsis dimension) each stays a dimension, which the product broadcasts.
    xb, yb = [xs[c] for c in batch], [ys[c] for c in batch]
    if xb == yb:
        xb = yb = [math.prod(xb)] if batch else []
    # Each operand's groups in the order it holds them: free before contracted, or after (then
    # read transposed).
    position = {c: i for i, c in enumerate(x.indices)}
    trans_a = bool(left) and bool(contracted) and position[contracted[0]] < position[left[0]]
    order_x = batch + (contracted + left if trans_a else left + contracted)
    position = {c: i for i, c in enumerate(y.indices)}
    trans_b = bool(right) and bool(contracted) and position[right[0]] < position[contracted[0]]
    order_y = batch + (right + contracted if trans_b else contracted + right)
    a = x.arranged(fw, order_x, tuple(xb) + ((k, m) if trans_a else (m, k)))
    b = y.arranged(fw, order_y, tuple(yb) + ((n, k) if trans_b else (k, n)))
    grad = fw.wants_grad(a) or fw.wants_grad(b)
    c = fw.product(a, b, semiring, trans_a, trans_b, options, grad)
    batch_sizes = [max(xs[i], ys[i]) for i in batch]
    return _Tensor(c, batch + left + right, batch_sizes + left_dims + right_dims)


def _path(inputs, output, shapes, optimize):
    """The contraction path of operands with these indices and shapes: tuples of positions in the
    list of operands, as opt_einsum gives them (those are removed and their product appended)."""
    count = len(inputs)
    if isinstance(optimize, (list, tuple)) and not isinstance(optimize, str):
        steps = list(optimize[1:] if optimize and optimize[0] == "einsum_path" else optimize)
        alive = count
        for s, step in enumerate(steps):
            if not isinstance(step, (list, tuple)) or not step or any(
                    not isinstance(p, int) or not 0 <= p < alive for p in step) or len(set(step)) != len(step):
                raise ValueError(f"optimize: step {s} of the path, {step!r}, does not name distinct operands among "
                                 f"the {alive} left")
            alive -= len(step) - 1
        if alive != 1:
            raise ValueError(f"optimize: the path leaves {alive} operands, not one")
        return [tuple(step) for step in steps], None
    if count == 1:
        return [], None
    if count == 2:
        return [(0, 1)], None
    try:
        import opt_einsum
    except ImportError:
        raise ImportError("ringmm.einsum with three or more operands finds its contraction order with opt_einsum "
                          "(pip install opt_einsum), or takes a path: optimize=[(0, 1), (0, 1), ...]") from None
    if optimize is None or optimize is False:
        optimize = "auto"
    elif optimize == "cotengra":
        try:
            import cotengra
        except ImportError:
            raise ImportError("optimize='cotengra' needs cotengra (pip install cotengra)") from None
        optimize = cotengra.HyperOptimizer(progbar=False)
    elif not (isinstance(optimize, str) or hasattr(optimize, "__call__") or hasattr(optimize, "search")):
        raise TypeError(f"optimize must be 'auto', 'greedy', 'optimal', 'cotengra', an opt_einsum optimizer or a "
                        f"path, not {type(optimize).__name__}")
    equation = ",".join("".join(t) for t in inputs) + "->" + "".join(output)
    key = (equation, tuple(map(tuple, shapes)), optimize) if isinstance(optimize, str) else None
    found = _PATHS.get(key) if key else None
    if found is None:
        path, info = opt_einsum.contract_path(equation, *shapes, shapes=True, optimize=optimize)
        found = [tuple(step) for step in path], info
        if key:
            if len(_PATHS) >= 256:  # a bounded cache: the oldest entry goes
                _PATHS.pop(next(iter(_PATHS)))
            _PATHS[key] = found
    return found


# Paths found by name ("auto", "greedy", ...) for an equation and shapes: a loop that contracts
# the same expression again skips the search.
_PATHS = {}


def _prepare(subscripts, operands, semiring):
    if not operands:
        raise ValueError("einsum needs at least one operand")
    fw = _Framework(list(operands))
    operands = fw.operands
    name = _core.canonical_name(semiring) if isinstance(semiring, str) else None
    if name is None:
        raise TypeError(f"semiring must be a name such as 'max_plus', not {type(semiring).__name__}")
    dtype = str(operands[0].dtype).replace("torch.", "")
    for i, x in enumerate(operands[1:], 1):
        other = str(x.dtype).replace("torch.", "")
        if other != dtype:
            raise TypeError(f"operand {i} has dtype {other} but operand 0 has {dtype} (ringmm does not convert "
                            "types: convert one of them)")
    if dtype in _narrow.FLOAT_NARROW + ("int8",):  # multiplied as float32 (int32), as ringmm.matmul does
        operands = _narrow.widen_all(operands, name)
        dtype = "float32" if dtype in _narrow.FLOAT_NARROW else "int32"
    one = _core.unit(name, dtype)  # refuses a dtype the semiring does not multiply, as matmul does
    shapes = [tuple(x.shape) for x in operands]
    return fw, operands, name, one, _Expression(subscripts, shapes), shapes


def einsum(subscripts, *operands, semiring="max_plus", optimize="auto", out=None, backend="auto",
           trust_inputs=False):
    """Contract tensors over a semiring, as numpy.einsum does over (+, ×).

    subscripts: numpy's notation, e.g. "ij,jk->ik", "bij,bjk->bik", "ii->i", "...ij,...jk", with
        implicit output (no "->": the ellipsis, then the indices seen once, sorted) as numpy's.
    operands: arrays of one framework and dtype (numpy, torch, cupy, JAX), on one device; bfloat16
        and float16 contract in float32, int8 in int32 (max_plus, min_plus), as in ringmm.matmul.
    semiring: a name of ringmm.semirings(): ⊗ combines the operands' entries, ⊕ runs over every
        index absent from the output. An index in the output and in several operands is a batch
        index; a repeated index within one operand takes the diagonal; "..." broadcasts.
    optimize: the contraction order of three or more operands: "auto", "greedy", "optimal" (or any
        opt_einsum path finder), "cotengra" (needs cotengra), or a path [(0, 1), (0, 1), ...]
        (numpy's ["einsum_path", ...] form too).
    out: an array of the result's shape and dtype to write into (numpy, torch, cupy); returned.
    backend: "auto", "cpu" or "cuda", as for ringmm.matmul.
    trust_inputs: skip every product's check of the values against the semiring's domain, as for
        ringmm.matmul (numpy, torch and cupy operands; ringmm.jax checks values in its own calls).

    Returns an array of the operands' framework. Differentiable where its products are: torch
    operands that require grad go through ringmm.torch (log_plus, max_plus, min_plus, max_min,
    max_times, min_max; plus_times through torch.matmul), JAX operands through ringmm.jax (jit, vmap
    and grad). Integer semirings: intermediate results must stay within the input range (±2²⁸ for
    int32 max-plus and min-plus), or the next product refuses them.
    """
    fw, operands, semiring, one, expr, shapes = _prepare(subscripts, operands, semiring)
    if not isinstance(trust_inputs, bool):
        raise TypeError(f"trust_inputs must be True or False, not {type(trust_inputs).__name__}")
    if trust_inputs and fw.name == "jax":
        raise ValueError("trust_inputs applies to numpy, torch and cupy operands; ringmm.jax checks values itself")
    options = {"backend": backend, "trust_inputs": trust_inputs}
    output = set(expr.output)
    tensors = []
    for x, indices in zip(operands, expr.inputs):
        t = _take_diagonals(fw, _Tensor(x, indices))
        elsewhere = output.union(*(set(i) for j, i in enumerate(expr.inputs) if i is not indices))
        tensors.append(_reduce(fw, t, set(t.indices) - elsewhere, one, semiring, options))
    path, _ = _path([t.indices for t in tensors], expr.output, [tuple(t.sizes) for t in tensors], optimize)
    for step in path:
        chosen = [tensors[p] for p in step]
        tensors = [t for p, t in enumerate(tensors) if p not in step]
        keep = output.union(*(set(t.indices) for t in tensors))
        t = chosen[0]
        for other in chosen[1:]:
            rest = keep.union(*(set(u.indices) for u in chosen if u is not t and u is not other))
            t = _pair(fw, t, other, rest, expr.sizes, semiring, options)
        tensors.append(_reduce(fw, t, set(t.indices) - keep, one, semiring, options))
    (t,) = tensors
    t = _reduce(fw, t, set(t.indices) - output, one, semiring, options)
    size = dict(zip(t.indices, t.sizes))
    result = t.arranged(fw, expr.output, tuple(size[c] for c in expr.output))
    if semiring == "lor_land":  # an operand that no product read still holds any nonzero byte
        result = fw.truth(result)
    if out is None:
        return result
    if fw.name == "jax":
        raise TypeError("out is not supported for JAX arrays, which are immutable")
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"out has shape {tuple(out.shape)} but the result has shape {tuple(result.shape)}")
    if fw.name == "torch":
        out.copy_(result)
    else:
        fw.module.copyto(out, result)
    return out


class EinsumPath:
    """What ringmm.einsum_path reports: the path, its cost and the memory of its intermediates."""

    def __init__(self, path, cost, largest, peak_bytes, text):
        self.path = path  # ["einsum_path", (i, j), ...], as numpy.einsum_path gives it
        self.cost = cost  # opt_einsum's count of ⊗ operations (None for one or two operands)
        self.largest_intermediate = largest  # elements
        self.peak_bytes = peak_bytes  # the intermediates alive at once, at most, in bytes
        self._text = text

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"EinsumPath(path={self.path!r}, peak_bytes={self.peak_bytes})"


def einsum_path(subscripts, *operands, semiring="max_plus", optimize="auto"):
    """The contraction path ringmm.einsum would take, as numpy.einsum_path reports it: returns
    (path, info), path in numpy's form ["einsum_path", (0, 1), ...] (ringmm.einsum takes it as
    optimize), info an EinsumPath with the cost, the largest intermediate and the peak memory of the
    intermediates (bytes), which str() prints. Nothing is computed."""
    fw, operands, semiring, one, expr, shapes = _prepare(subscripts, operands, semiring)
    output = set(expr.output)
    itemsize = _itemsize(operands[0])
    current = []
    for indices in expr.inputs:
        unique = list(dict.fromkeys(indices))
        elsewhere = output.union(*(set(i) for i in expr.inputs if i is not indices))
        current.append([c for c in unique if c in elsewhere])
    path, info = _path(current, expr.output, [tuple(expr.sizes[c] for c in t) for t in current], optimize)
    sizes = [0] * len(current)  # elements of each operand that is an intermediate (0: an input)
    peak = largest = 0
    for step in path:
        chosen = [current[p] for p in step]
        inputs_alive = sum(sizes)  # the step's own inputs are alive while it runs
        current = [t for p, t in enumerate(current) if p not in step]
        sizes = [n for p, n in enumerate(sizes) if p not in step]
        keep = output.union(*(set(t) for t in current))
        indices = [c for c in dict.fromkeys(sum(chosen, [])) if c in keep]
        size = math.prod(expr.sizes[c] for c in indices)
        largest = max(largest, size)
        peak = max(peak, inputs_alive + size)
        current.append(indices)
        sizes.append(size)
    text = [f"  Semiring: {semiring}", f"  Path: {path}",
            f"  Largest intermediate: {largest} elements", f"  Peak memory of intermediates: {peak * itemsize} bytes"]
    if info is not None:
        text += [f"  opt_einsum's cost (sum-product operations): {info.opt_cost}"]
    return ["einsum_path", *path], EinsumPath(["einsum_path", *path], None if info is None else info.opt_cost, largest,
                                              peak * itemsize, "\n".join(text))


def _itemsize(x):
    size = getattr(getattr(x, "dtype", None), "itemsize", None)
    if size is None:  # torch
        size = x.element_size()
    return size
