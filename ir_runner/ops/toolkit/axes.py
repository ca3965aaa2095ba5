"""Axes: the one normaliser of an axis and of a list of axes, and the readers of an axis or axes input.

Every operation normalises its axes here, so that an axis out of range is refused with one wording:
``axis=5 is out of the range [-2, 1] for rank 2`` (an InferenceError naming the layer and, when the axis comes
from an input, its port). Where an operation accepts no negative axis (Softmax-1), ``negative=False`` makes the
range ``[0, rank-1]``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..api import OpContext


def normalise_axis(ctx: OpContext, axis: int, rank: int | None, *, what: str = "axis", position: int | None = None,
                   negative: bool = True, hint: str | None = None) -> int:
    """``axis`` in ``[-rank, rank-1]`` (``[0, rank-1]`` when not ``negative``) made non-negative; kept as given
    when the rank is unknown (None). Out of range: an InferenceError (``what`` names the axis in it)."""
    if rank is None:
        return axis
    low = -rank if negative else 0
    if not low <= axis < rank:
        ctx.fail(f"{what}={axis} is out of the range [{low}, {rank - 1}] for rank {rank}", position=position,
                 hint=hint)
    return axis + rank if axis < 0 else axis


def normalise_axes(ctx: OpContext, axes: Iterable[int], rank: int, *, position: int | None = None,
                   unique: bool = False) -> tuple[int, ...]:
    """Axes normalised by :func:`normalise_axis`, sorted, each once; ``unique``: an axis given twice (as ``1``
    and ``-1`` too) is refused instead of counted once."""
    given = list(axes)
    out = [normalise_axis(ctx, axis, rank, position=position) for axis in given]
    if unique and len(set(out)) != len(out):
        ctx.fail(f"axes {given} repeat an axis", position=position)
    return tuple(sorted(set(out)))


def scalar_axis(ctx: OpContext, position: int, rank: int | None) -> int | None:
    """The constant scalar (or 1-element) axis of input ``position``, normalised against ``rank`` (None: not
    constant; kept as given when the rank is unknown)."""
    spec = ctx.inputs[position]
    if spec.shape.rank is not None and (spec.shape.rank > 1 or spec.shape.rank == 1 and spec.shape.dims[0].lo > 1):
        ctx.fail(f"axis must be a scalar or have 1 element, got shape {spec.shape.brief()}", position=position)
    value = ctx.const_value(position)
    if value is None:
        return None
    if value.size != 1:
        ctx.fail(f"axis must have 1 element, it has {value.size}", position=position)
    return normalise_axis(ctx, int(value.reshape(-1)[0]), rank, position=position)


def const_axes(ctx: OpContext, position: int, rank: int | None, *, unique: bool = True) -> tuple[int, ...] | None:
    """The constant axes of input ``position`` (a scalar or 1-D) normalised by :func:`normalise_axes` (None
    when not constant or the rank is unknown)."""
    spec = ctx.inputs[position]
    if spec.shape.rank is not None and spec.shape.rank > 1:
        ctx.fail(f"axes must be a scalar or 1-D, got shape {spec.shape.brief()}", position=position)
    value = ctx.const_value(position)
    if value is None or rank is None:
        return None
    return normalise_axes(ctx, [int(v) for v in value.reshape(-1)], rank, position=position, unique=unique)
