"""ringmm: dense matrix multiplication over semirings (max-plus, min-plus, max-min, or-and, ...)
on the CPU and on NVIDIA GPUs, for numpy, torch and cupy arrays.

    >>> import numpy as np, ringmm
    >>> a = np.array([[0, 2], [1, 0]], np.float32); b = np.array([[0, 5], [3, 0]], np.float32)
    >>> ringmm.matmul(a, b, "max_plus")     # c[i, j] = max_k a[i, k] + b[k, j]
    array([[5., 5.],
           [3., 6.]], dtype=float32)
"""

from dataclasses import dataclass

# numpy before the extension: on the H100 machine (torch 2.11), `import ringmm` with _core loaded
# first and torch imported after it crashed in torch's import; with numpy first it does not.
import numpy  # noqa: F401

from . import _core, networks
from ._applications import apsp, hmm_forward, hmm_viterbi, route, syrk
from ._cuda_array import CudaArray
from ._einsum import EinsumPath, einsum, einsum_path
from ._matmul import matmul

__all__ = ["matmul", "einsum", "einsum_path", "EinsumPath", "networks", "syrk", "apsp", "route", "hmm_viterbi", "hmm_forward",
           "semirings", "info", "Semiring", "CudaArray"]


@dataclass(frozen=True)
class Semiring:
    name: str  # the GraphBLAS name ringmm.matmul takes ("max_plus", "lor_land")
    spelling: str  # the command line's spelling ("max-plus", "or-and"), also accepted
    use: str  # what it is used for
    dtypes: tuple  # the numpy dtype names it multiplies


def semirings():
    """The built-in semirings and the dtypes each multiplies, from ringmm's registry."""
    return [Semiring(s["name"], s["spelling"], s["use"], tuple(s["dtypes"])) for s in _core.semirings()]


def info():
    """What this build of ringmm contains and runs on: version, backends, CUDA devices."""
    d = _core.info()
    d["backends"] = ["cpu", "cuda"] if d["cuda_compiled"] else ["cpu"]
    d["jax_handlers"] = hasattr(_core, "jax_handlers")  # ringmm.jax's custom calls (built where jaxlib was)
    return d


__version__ = _core.__version__


def __getattr__(name):
    # ringmm.torch (differentiable products) needs torch, ringmm.jax (XLA custom calls) jax: each is
    # imported on first use, so that `import ringmm` imports neither.
    if name in ("torch", "jax"):
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'ringmm' has no attribute {name!r}")
