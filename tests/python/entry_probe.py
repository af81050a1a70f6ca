"""What ringmm._core's entries ask of the caller's framework: an adapter that records every call of
_frameworks.adapt and every framework step (empty, full, assign, stream, result) it leads to."""

import contextlib
import numbers

from ringmm import _core, _frameworks


class Recorder:
    """A framework adapter that logs its calls as (method, arguments) before making them."""

    def __init__(self, framework, log):
        self._framework, self._log = framework, log

    def __getattr__(self, name):
        method = getattr(self._framework, name)

        def call(*args):
            self._log.append((name, args))
            return method(*args)
        return call


@contextlib.contextmanager
def recorded():
    """Yields the log of the adapter's calls made meanwhile: ("adapt", names) for each reading of a
    call's arguments through Python, then the framework steps."""
    log = []

    def adapt(names, values):
        log.append(("adapt", names))
        framework, prepared = _frameworks.adapt(names, values)
        return Recorder(framework, log), prepared

    _core.use_adapter(adapt, numbers.Real)
    try:
        yield log
    finally:
        _core.use_adapter(_frameworks.adapt, numbers.Real)


def matmul_copies(matmul, a, b, semiring, out=None, **kwargs):
    """The arguments that a matmul call copies ("a", "b": operands no view describes; "out": written
    through a copy) rather than reading or writing them in place."""
    with recorded() as log:
        matmul(a, b, semiring, out=out, **kwargs)
    copied = []
    for step, args in log:
        if step == "assign":
            dst, src = args
            copied += ["a"] if src is a else ["b"] if src is b else ["out"] if dst is out else []
    return copied
