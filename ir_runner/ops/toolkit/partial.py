"""Helpers for the shape and data-movement operations: partial values moved by data-movement kernels
(OpenVINO's lower/upper bound propagation); their dims' arithmetic is ``dims``.

A partial value (``api.PartialValue``) is one :class:`Dim` per element of a small integer tensor. As OpenVINO
reads bounds (``get_input_bounds``), an unbounded upper end (``hi is None``) stands for the largest int64;
a constant's negative element is ``Dim(v, v)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...errors import UnsupportedError
from ...types import DYNAMIC_DIM, NUMPY_MAX_RANK, Dim, PartialShape
from ..api import OpContext, PartialValue

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def unknown_dims(ctx: OpContext, count: int, position: int) -> tuple[Dim, ...]:
    """``count`` fully dynamic dims, for an output whose rank is an input's element count (a target shape,
    repeats or a pattern whose values are unknown). A count above numpy's rank limit is refused before the
    tuple is made (a declared length of 2**62 would not fit in memory)."""
    if count > NUMPY_MAX_RANK:
        raise UnsupportedError(f"the output's rank would be {count}, this input's length, above numpy's limit of"
                               f" {NUMPY_MAX_RANK} dims: ir-run cannot hold such a tensor", layer=ctx.ref,
                               port=ctx.input_label(position))
    return (DYNAMIC_DIM,) * count


def value_dims(ctx: OpContext, value: PartialValue, position: int) -> tuple[Dim, ...]:
    """A partial value read as output dims (an output shape or size given as an input): an element that may be
    negative is unknown; one known to be negative is refused (its shape would stay unknown when run)."""
    for i, d in enumerate(value):
        if d.hi is not None and d.hi < 0:
            ctx.fail(f"element {i} of {ctx.op.input_names[position]} is {d}: a dim cannot be negative",
                     position=position)
    return tuple(d if d.lo >= 0 else DYNAMIC_DIM for d in value)


def as_bounds(value: PartialValue) -> list[tuple[int, int]]:
    """A partial value as OpenVINO's (lower, upper) bound pairs: an unbounded upper is INT64_MAX."""
    return [(d.lo, INT64_MAX if d.hi is None else d.hi) for d in value]


def exact_ints(value: PartialValue | None) -> list[int] | None:
    """The integers of a partial value when every element is known exactly, else None."""
    if value is None or any(d.lo != d.hi for d in value):
        return None
    return [d.lo for d in value]


def moved_value(ctx: OpContext, position: int, move: Callable[[np.ndarray], np.ndarray],
                others: tuple[int, ...] = ()) -> PartialValue | None:
    """The partial value of an output that a data-movement kernel makes from input ``position`` (Reshape,
    Squeeze, Gather...): ``move`` is applied to the element indices of the input (shaped as it is) and the
    result, at most 1-D, picks the input's Dims. ``others``: more inputs concatenated along axis 0 (Concat),
    all of which must have partial values (OpenVINO's bound evaluation needs every input's)."""
    positions = (position,) + others
    values, arrays, offset = [], [], 0
    for p in positions:
        value = ctx.partial_value(p)
        shape = ctx.inputs[p].shape
        if value is None or not shape.is_static or int(np.prod(shape.to_shape())) != len(value):
            return None
        values.extend(value)
        arrays.append(np.arange(offset, offset + len(value), dtype=np.int64).reshape(shape.to_shape()))
        offset += len(value)
    try:
        picked = move(*arrays)
    except Exception:  # a value the kernel refuses: nothing known (inference reports the layer's error)
        return None
    if picked.ndim > 1 or picked.size > 64:
        return None
    return tuple(values[i] for i in picked.reshape(-1))


def shape_of_value(shape: PartialShape) -> PartialValue | None:
    """ShapeOf's value: the dims themselves."""
    return None if shape.dims is None else tuple(shape.dims)


def dynamic_like(shape: PartialShape) -> PartialShape:
    """A shape of the same rank with every dim dynamic."""
    return shape if shape.dims is None else PartialShape((DYNAMIC_DIM,) * len(shape.dims))


def input_ints(ctx: OpContext, position: int) -> list[int] | None:
    """An input's integer values when known at load (a constant, or a partial value known exactly)."""
    value = ctx.const_value(position)
    if value is not None:
        if value.dtype.kind not in "iub":
            return None
        return [int(v) for v in value.reshape(-1)]
    return exact_ints(ctx.partial_value(position))


def const_int(ctx: OpContext, position: int) -> int | None:
    """The constant integer of the scalar (or 1-element) input ``position``: None when not constant."""
    value = ctx.const_value(position)
    return None if value is None else int(np.asarray(value).reshape(-1)[0])


def const_count(ctx: OpContext, position: int) -> int | None:
    """The constant integer of the scalar (or 1-element) input ``position`` that counts something (OneHot's
    depth, TopK's k, SegmentMax's num_segments): None when not constant; a negative one is refused."""
    count = const_int(ctx, position)
    if count is None:
        return None
    if count < 0:
        ctx.fail(f"{ctx.op.input_names[position]} must not be negative, got {count}", position=position)
    return count


def check_rank_at_most_1(ctx: OpContext, position: int, what: str) -> None:
    rank = ctx.inputs[position].shape.rank
    if rank is not None and rank > 1:
        ctx.fail(f"{what} must be a scalar or 1-D, got shape {ctx.inputs[position].shape.brief()}", position=position)
