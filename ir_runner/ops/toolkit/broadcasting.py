"""Helpers shared by the elementwise operation modules (``binary``, ``unary``): running a ufunc-like
computation over broadcast operands in threads and cache-sized blocks, interval arithmetic for value
inference, and the batch-axis rule of broadcasting operations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ...parallel import MAX_PIECES, pieces_for, run_by_cost
from ...types import ELEMENT_TYPES, MAX_DIM, Dim, TensorSpec

UNCOMPUTED_TYPES = frozenset(t.name for t in ELEMENT_TYPES.values() if t.is_packed or t.bits == 8 and t.kind == "float")
"""Element types the elementwise operations refuse: sub-byte types (u1..u6, i4, nf4, f4e2m1) and 8-bit floats
(OpenVINO's reference computes none of these operations on them either)."""

BLOCK = 1 << 16
"""Elements per block for computations of several passes (kept in cache between passes). Measured on one thread
(CPU time, medians, Swish and HSwish on EfficientNet-B0's [1,96,112,112], [1,144,56,56], [1,240,28,28]): 64K
elements were 2-13% faster than 32K and as fast as 128K-256K; on threads, fewer blocks are fewer hand-offs of
the GIL between the threads' numpy calls."""

# the cost of an output element on one thread, for the split over threads (measured on f32, one thread, this
# machine): one pass (Add, Multiply with broadcasting, Relu): 0.3-0.6 ns; several passes through temporaries
# (HSwish 1.2 ns, Swish and Sigmoid 2-5 ns): the cheapest of them, so that a split never gets pieces too small
STREAM_NS = 0.4
PASSES_NS = 1.2
_STREAM_UNIT = 1024  # elements: one pass is cut at multiples of this (whole cache lines and vectors)
_EVEN_PIECES = 4


def one_call(size: int, blocked: bool) -> bool:
    """Whether :func:`run_elementwise` computes an output of ``size`` elements in one call of its function on
    the calling thread (a kernel prepared for that size may call the function itself: the same bits)."""
    return size <= BLOCK or not blocked and pieces_for(size * STREAM_NS, size) is None


def run_elementwise(fn: Callable[..., None], operands: Sequence[np.ndarray], out: np.ndarray, *,
                    blocked: bool = False) -> np.ndarray:
    """``fn(*operand_views, out=out_view)`` over ``out`` (the operands broadcast to its shape). ``blocked``
    (for ``fn`` that make several passes over their data, with temporaries): in parts of about BLOCK elements,
    kept in cache. Work estimated at SPLIT_MIN_NS or more (STREAM_NS or PASSES_NS an element) is cut into
    pieces run over threads (:func:`~ir_runner.parallel.pieces_for`), each a contiguous range of ``out``: of
    flat elements when every operand has ``out``'s shape, else of slices along the first axis whose slices fit
    a part (the axes before it iterated). One pass: one call per piece. The bits never depend on the split."""
    shape = out.shape
    size = out.size
    if size == 0:
        return out
    if shape == ():  # as 1-element arrays: numpy gives scalars, not arrays, for 0-D operations
        fn(*(op.reshape(1) for op in operands), out=out.reshape(1))
        return out
    if one_call(size, blocked):
        fn(*operands, out=out)
        return out
    cost = size * (PASSES_NS if blocked else STREAM_NS)
    if all(op.shape == shape and op.flags.c_contiguous for op in operands) and out.flags.c_contiguous:
        flat = [op.reshape(-1) for op in operands]
        flat_out = out.reshape(-1)
        step = _block_step(size, cost) if blocked else _STREAM_UNIT

        def work_flat(start: int, stop: int) -> None:
            with np.errstate(all="ignore"):  # (every piece quiet, whatever the caller's state)
                if not blocked:
                    lo, hi = start * step, min(stop * step, size)
                    fn(*[x[lo:hi] for x in flat], out=flat_out[lo:hi])
                    return
                for lo in range(start * step, min(stop * step, size), step):
                    hi = min(lo + step, size)
                    fn(*[x[lo:hi] for x in flat], out=flat_out[lo:hi])

        run_by_cost(cost, -(-size // step), work_flat)
        return out
    limit = BLOCK if blocked else max(BLOCK, -(-size // MAX_PIECES))
    axis, row = 0, math.prod(shape[1:])
    while row > limit:  # slices along ``axis`` (``row`` elements each) fit a block; the axes before are iterated
        axis += 1
        row //= shape[axis]
    rows, per = shape[axis], max(1, limit // max(row, 1))
    views = [np.broadcast_to(op, shape) for op in operands]
    parts = [(*where, slice(lo, min(lo + per, rows))) for where in np.ndindex(shape[:axis])
             for lo in range(0, rows, per)]

    def work(start: int, stop: int) -> None:
        with np.errstate(all="ignore"):  # (every piece quiet, whatever the caller's state)
            for part in parts[start:stop]:
                fn(*[v[part] for v in views], out=out[part])

    run_by_cost(cost, len(parts), work)
    return out


def _block_step(size: int, cost: float) -> int:
    """Elements per block of a blocked computation over ``size`` flat elements: at most BLOCK; when split in a
    few pieces (at most _EVEN_PIECES), in a number of blocks the pieces divide evenly (188K elements in 2 pieces:
    4 blocks of 47K, not 64K, 64K and 60K, which would leave one thread idle for a block); with more pieces,
    claimed as the threads free up, the threads end within a block of each other anyway. A multiple of 16
    elements (whole cache lines)."""
    blocks = -(-size // BLOCK)
    pieces = pieces_for(cost, blocks)
    if pieces is not None and len(pieces) <= _EVEN_PIECES:
        blocks = -(-blocks // len(pieces)) * len(pieces)
    return -(-size // (blocks * 16)) * 16


# -- value inference on intervals (shape subgraphs) ---------------------------------------------------------


def _bounded(lo: int, hi: int | None) -> Dim | None:
    """A Dim for ``[lo, hi]`` when it is a valid one (``0 <= lo``, ``hi`` within int64), else None."""
    if hi is not None and hi > MAX_DIM:
        hi = None
    if lo < 0 or lo > MAX_DIM or hi is not None and hi < lo:
        return None
    return Dim(lo, hi)


def interval(name: str, x: Dim, y: Dim) -> Dim | None:
    """``x <name> y`` on intervals of non-negative integers (``hi`` None: unbounded), as OpenVINO's bounds
    propagation; exact values are computed exactly (a negative result too: Reshape's -1). None: nothing
    known (the caller then says 'unknown')."""
    if x.is_static and y.is_static:
        exact = _exact(name, x.lo, y.lo)
        return None if exact is None or not -(2**63) <= exact <= MAX_DIM else Dim(exact, exact)
    if x.lo < 0 or y.lo < 0:
        return None
    if name == "add":
        return _bounded(x.lo + y.lo, None if x.hi is None or y.hi is None else x.hi + y.hi)
    if name == "subtract":
        if y.hi is None:
            return None
        return _bounded(x.lo - y.hi, None if x.hi is None else x.hi - y.lo)
    if name == "multiply":
        zero = x.hi == 0 or y.hi == 0
        return _bounded(x.lo * y.lo, 0 if zero else None if x.hi is None or y.hi is None else x.hi * y.hi)
    if name == "divide":
        if y.lo == 0:
            return None
        return _bounded(0 if y.hi is None else x.lo // y.hi, None if x.hi is None else x.hi // y.lo)
    if name == "maximum":
        return Dim(max(x.lo, y.lo), None if x.hi is None or y.hi is None else max(x.hi, y.hi))
    if name == "minimum":
        his = [h for h in (x.hi, y.hi) if h is not None]
        return Dim(min(x.lo, y.lo), min(his) if his else None)
    return None


def _exact(name: str, a: int, b: int) -> int | None:
    if name == "add":
        return a + b
    if name == "subtract":
        return a - b
    if name == "multiply":
        return a * b
    if name == "divide":
        return None if b == 0 else a // b
    if name == "maximum":
        return max(a, b)
    if name == "minimum":
        return min(a, b)
    return None


def broadcast_values(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> list[tuple[Dim, Dim]] | None:
    """Pairs of elements of two flat partial values broadcast against each other (one may have 1 element)."""
    if len(a) == len(b):
        return list(zip(a, b))
    if len(a) == 1:
        return [(a[0], y) for y in b]
    if len(b) == 1:
        return [(x, b[0]) for x in a]
    return None


# -- batch axes ---------------------------------------------------------------------------------------------


def aligned_batch(inputs: Sequence[TensorSpec], outputs: Sequence[TensorSpec], axes: Sequence[int | None],
                  offsets: Sequence[int] | None = None, *, broadcast: bool = True) -> list[int | None] | str:
    """The one batch rule of operations whose inputs line up with the output (broadcasting, or equal shapes):
    input ``i``'s axis ``k`` lies on output axis ``k + offsets[i]`` (numpy, the default: ``rank(out) -
    rank(in)``; pdpd and Select give others). Every batched input must bring its batch axis to one output axis,
    and there keep its rows (a batch dim of 1 broadcast over more rows would pair the block's rows with one);
    an input without a batch axis must not span that axis, unless it broadcasts a static 1 there and
    ``broadcast`` allows it (an operation without broadcasting: never). Returns that axis for every output
    (None for all when no input is batched), or why the rows would mix."""
    out_rank = outputs[0].shape.rank
    if out_rank is None or any(spec.shape.rank is None for spec in inputs):
        return "a dynamic rank hides where the batch axis goes"
    if offsets is None:
        offsets = [out_rank - spec.shape.rank for spec in inputs]
    places = sorted({axis + offset for axis, offset in zip(axes, offsets) if axis is not None})
    if len(places) > 1:
        return f"the inputs bring their batch axes to different output axes {places}: rows would be paired"
    if not places:
        return [None] * len(outputs)
    where = places[0]
    out_dim = outputs[0].shape.dims[where]
    for i, (spec, axis, offset) in enumerate(zip(inputs, axes, offsets)):
        local = where - offset
        if not 0 <= local < spec.shape.rank:
            continue
        dim = spec.shape.dims[local]
        if axis is None and (not broadcast or dim != Dim(1, 1)):
            return (f"input {i} has no batch axis, but its dim {local} ({dim}) spans output axis {where}: each"
                    " block would need the rows of the whole run")
        if axis is not None and dim == Dim(1, 1) and out_dim != Dim(1, 1):
            return f"input {i} broadcasts its batch axis of size 1 over output axis {where}"
    return [where] * len(outputs)
