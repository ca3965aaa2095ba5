"""Outputs inference computed, handed over to the layer's kernel.

An operation whose output length only its computation decides (NonMaxSuppression's count of boxes, Unique's
count of uniques) runs its kernel in ``infer`` when every input is constant (the plan is then made per value of
the inputs): that gives the exact length. :func:`outputs_from_constants` keeps those outputs in the kernel
parameters, and the kernel wrapped
by :func:`computed_once` returns them when it is called on the same inputs, so a run computes them once, as any
other layer's, instead of once more. Called on other inputs (a crosscheck moving an input), it computes. The
outputs are handed over once and dropped: a later run on the same values computes them again, as every other
layer of the plan does (so that ``ir-run bench`` times a detector's selection, and a plan cache of 64 plans made
per value holds no outputs).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from ...types import Dim
from ..api import OpContext

_SMALL = 4096  # inputs up to this many bytes are kept whole, larger ones by digest


class Computed:
    """A kernel's outputs and what identifies the inputs they were computed from: dtype, shape and bytes (a
    caller's array changed later cannot make them stale), or for a large input its BLAKE2 digest (a plan cache
    keeps no copy of a detector's scores per plan). The outputs are handed over once (see the module
    docstring)."""

    __slots__ = ("_inputs", "_outputs", "_count")

    def __init__(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None:
        self._inputs = tuple(_identity(a) for a in inputs)
        kept = tuple(np.array(a) for a in outputs)
        self._count = len(kept)
        self._outputs = [kept]  # (emptied by the hand-over: list.pop is atomic)

    @property
    def name(self) -> str:
        """What a report shows of it (as of an enumeration's value)."""
        return f"{self._count} outputs computed at inference"

    def outputs_for(self, inputs: Sequence[np.ndarray]) -> tuple[np.ndarray, ...] | None:
        """The outputs (the caller's to keep) when ``inputs`` are those they were computed from and they have not
        been handed over yet; else None."""
        if not self._outputs or len(inputs) != len(self._inputs) or any(
                _identity(a) != seen for a, seen in zip(inputs, self._inputs)):
            return None
        try:
            return self._outputs.pop()
        except IndexError:  # (another thread took them meanwhile)
            return None


def _identity(a: np.ndarray) -> tuple:
    """What tells ``a`` from other inputs: its dtype (the object: ml_dtypes' 1-byte types all have the ``str``
    '<V1'), shape, and bytes or their digest."""
    a = np.ascontiguousarray(a)
    if a.nbytes <= _SMALL:
        return a.dtype, a.shape, a.tobytes()
    import hashlib  # (here: a plain run imports no more than it needs, tests/cli/test_lazy_imports.py)

    return a.dtype, a.shape, hashlib.blake2b(a.reshape(-1).view(np.uint8)).digest()


def computed_once(kernel: Callable[..., tuple]) -> Callable[..., tuple]:
    """``kernel`` also taking ``computed`` (a :class:`Computed` from :func:`count_from_constants`, or none):
    its outputs when the inputs are those, else ``kernel``'s."""
    @functools.wraps(kernel)
    def run(*inputs: np.ndarray, computed: Computed | None = None, **params) -> tuple:
        if computed is not None:
            found = computed.outputs_for(inputs)
            if found is not None:
                return found
        return kernel(*inputs, **params)

    return run


def outputs_from_constants(ctx: OpContext, kernel: Callable[..., tuple], params: dict) -> tuple | None:
    """The outputs of the layer when every input is constant: ``kernel`` (a :func:`computed_once` kernel) run on
    them with ``params``, and handed over in ``params['computed']``; None when an input is not constant."""
    values = [ctx.const_value(i) for i in range(len(ctx.inputs))]
    if any(v is None for v in values):
        return None
    result = kernel(*values, **params)
    params["computed"] = Computed(values, result)
    return result


def count_from_constants(ctx: OpContext, kernel: Callable[..., tuple], params: dict, output: int) -> Dim | None:
    """The exact length of output ``output`` when every input of the layer is constant (see
    :func:`outputs_from_constants`); None when an input is not constant."""
    result = outputs_from_constants(ctx, kernel, params)
    return None if result is None else Dim(len(result[output]), len(result[output]))
