"""C-ordered copies of strided views (a Transpose's view reshaped, an output that may alias), bit for bit.

A Reshape of a Transpose's view must copy; numpy's copy then loops over the destination's last dim for every
row. When that dim holds a few elements (MobileViT's unfold of 2x2 patches: ``[1,144,32,32]`` viewed as
``[2304,2,16,2]``, transposed to ``[2304,16,2,2]`` and reshaped) each loop moves 2 floats: 0.37 ms for 147K
elements, about 1 GB/s. :func:`copy_into` moves the contiguous innermost run as one unsigned integer of its
width (2 f32 as one u8) and, when the last dim left is short and another dim reads the source in order,
iterates that short dim in Python so that numpy's loop runs along the ordered one (0.04 ms there). Bits move
as they are (NaN payloads, -0.0, any dtype of 1-8 bytes); object arrays and the rest take numpy's copy.
A large copy (PARALLEL_MIN_ELEMENTS) is split along its first axis longer than 1 over threads
(:func:`~ir_runner.parallel.run_chunked`; a strided copy then runs at about twice the speed on 2 cores).
"""

from __future__ import annotations

import math

import numpy as np

from .parallel import PARALLEL_MIN_ELEMENTS, run_chunked

_SHORT = 8  # a last dim this short (after widening) is iterated in Python
_LONG = 16  # when another dim this long reads the source in order
_SMALL = 1024  # elements: numpy's copy of a new array (1 us against 3 us through the checks, for 1000)


def c_ordered_copy(x: np.ndarray) -> np.ndarray:
    """A new C-contiguous array equal to ``x`` bit for bit (:func:`copy_into`; numpy's copy up to _SMALL
    elements, whose checks cost more than the technique gains)."""
    if x.size <= _SMALL:
        return np.array(x, order="C")
    out = np.empty(x.shape, x.dtype)
    copy_into(out, x)
    return out


def copy_into(target: np.ndarray, value: np.ndarray) -> None:
    """``np.copyto(target, value)`` for a C-contiguous ``target``: of ``value``'s shape and dtype by the strided
    technique (see the module), split over threads when large; anything else (a broadcast, a cast) by numpy."""
    if value.shape != target.shape or value.dtype != target.dtype or not target.flags.c_contiguous:
        np.copyto(target, value)
        return
    cut = next((axis for axis, n in enumerate(value.shape) if n > 1), None)  # (dims before it are 1)
    if value.size < PARALLEL_MIN_ELEMENTS or cut is None:
        _copy(target, value)
        return

    def work(lo: int, hi: int) -> None:
        where = (slice(None),) * cut + (slice(lo, hi),)
        _copy(target[where], value[where])

    run_chunked(value.shape[cut], value.size // value.shape[cut], work)


def _copy(target: np.ndarray, x: np.ndarray) -> None:
    """``x`` into the C-contiguous ``target`` of its shape and dtype."""
    if x.size == 0 or x.ndim < 2 or x.dtype.hasobject or x.flags.c_contiguous:
        np.copyto(target, x)
        return
    run = _inner_run(x)
    source, target = _as_units(x, run), _as_units(target, run)
    unit = source.itemsize
    ordered = any(n >= _LONG and s == unit for n, s in zip(source.shape[:-1], source.strides[:-1]))
    if source.ndim >= 2 and source.shape[-1] <= _SHORT and source.strides[-1] != unit and ordered:
        for j in range(source.shape[-1]):
            np.copyto(target[..., j], source[..., j])
    else:
        np.copyto(target, source)


def _inner_run(x: np.ndarray) -> int:
    """How many innermost dims of ``x`` to view as one unsigned integer: those read in order, when they hold
    2, 4 or 8 bytes and more than one element (0: none)."""
    run, size = 0, x.itemsize
    for n, stride in zip(reversed(x.shape), reversed(x.strides)):
        if stride != size and n != 1:
            break
        run, size = run + 1, size * n
    return run if size in (2, 4, 8) and size > x.itemsize else 0


def _as_units(x: np.ndarray, run: int) -> np.ndarray:
    """``x`` with its ``run`` innermost dims (read in order) viewed as one unsigned integer."""
    if not run:
        return x
    lead = x.shape[:x.ndim - run]
    size = math.prod(x.shape[x.ndim - run:]) * x.itemsize
    merged = x.reshape(lead + (math.prod(x.shape[x.ndim - run:]),))  # (a view: those dims are in order)
    return merged.view(np.dtype(f"u{size}")).reshape(lead)
