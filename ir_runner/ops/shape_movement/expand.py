"""Broadcast-1/3, Tile-1: outputs whose shape comes from input values.

Target shapes and repeats are read as OpenVINO reads them: a constant, or the bounds value propagation found
(a target computed from ShapeOf declares its dims). Broadcast returns a read-only broadcast view
(``views=True``); its ``pdpd`` mode (whose axis the IR does not keep: 0) takes data and target of one rank and
merges each dim as ``bidirectional`` does (a 1 on either side gives the other)."""

from __future__ import annotations

import numpy as np

from ...errors import KernelError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, broadcast_dims
from ..api import LATEST_OPSET, REPLICATES, SIZED, Attr, OpContext, OpDef, numpy_merge
from ..toolkit.dims import dim_mul
from ..toolkit.index_rules import require_integer
from ..toolkit.partial import INT64_MAX, as_bounds, input_ints, moved_value, unknown_dims


def _shape_from_value(ctx: OpContext, position: int, negative_to_zero: bool = False, least: int = 0
                      ) -> PartialShape | None:
    """An input's value as a shape (OpenVINO's ``evaluate_as_partial_shape``), None when nothing is known.
    An element known to be below ``least`` is refused unless ``negative_to_zero`` (a target dim of -2 would
    leave the output's shape unknown when the values are known, at run time; pdpd's -1 keeps the data's dim);
    one known to be the largest int64 is that dim (the memory checks refuse it), not an unknown one."""
    value = ctx.partial_value(position)
    if value is None:
        return None
    dims = []
    for i, (lo, hi) in enumerate(as_bounds(value)):
        if negative_to_zero:
            lo, hi = max(lo, 0), max(hi, 0)
        elif hi < least:
            ctx.fail(f"element {i} of {ctx.op.input_names[position]} is {lo if lo == hi else f'below {hi + 1}'}:"
                     " a dim cannot be negative", position=position)
        if lo < 0:
            dims.append(DYNAMIC_DIM)
        else:
            dims.append(Dim(lo, None if hi == INT64_MAX and lo < hi else hi))
    return PartialShape(tuple(dims))


# -- Broadcast ----------------------------------------------------------------------------------------------

_MODES_V1 = {"numpy": "numpy", "explicit": "explicit", "none": "explicit", "pdpd": "pdpd"}
_MODES_V3 = dict(_MODES_V1, bidirectional="bidirectional")


def _target_known(ctx: OpContext) -> bool:
    return ctx.partial_value(1) is not None


def _infer_broadcast(ctx: OpContext, version: int):
    data, target = ctx.inputs[0], ctx.inputs[1]
    mode = ctx.attr_choice("mode", _MODES_V3 if version == 3 else _MODES_V1, "numpy")
    pdpd = mode == "pdpd"
    if pdpd:  # its axis is not serialised (0): equal ranks, each dim merged as bidirectional's
        target_rank = target.shape.dims[0].lo if target.shape.is_static and target.shape.rank == 1 else None
        if data.shape.rank is not None and target_rank is not None and data.shape.rank != target_rank:
            ctx.fail(f"mode='pdpd' needs the data's rank ({data.shape.rank}) to equal the target's ({target_rank})"
                     " (OpenVINO refuses other ranks)", position=1)
        if data.shape.dims is None and _target_known(ctx):  # (OpenVINO: the target's rank, every dim ?)
            rank = len(ctx.partial_value(1))
            return [TensorSpec(data.element_type, PartialShape((DYNAMIC_DIM,) * rank))], {"shape": None, "axes": None}
        mode = "bidirectional" if _target_known(ctx) else "numpy"  # (unknown target: its length, dims ?)
    if mode == "explicit" and len(ctx.inputs) != 3:
        ctx.fail("axes_mapping must be given in explicit mode")
    if version == 3 and mode != "explicit" and len(ctx.inputs) != 2:
        ctx.fail("axes_mapping must not be given in modes other than explicit")
    require_integer(ctx, 1, "target_shape")
    if target.shape.rank is not None and target.shape.rank != 1:
        ctx.fail(f"target_shape must be 1-D, got shape {target.shape.brief()}", position=1)
    target_shape = _shape_from_value(ctx, 1, least=-1 if pdpd else 0)
    axes = None
    if mode == "explicit":
        axes_spec = ctx.inputs[2].shape
        if axes_spec.rank is not None and axes_spec.rank != 1:
            ctx.fail(f"axes_mapping must be 1-D, got shape {axes_spec.brief()}", position=2)
        values = input_ints(ctx, 2)
        axes = tuple(values) if values is not None else None
        if data.shape.dims is not None and axes_spec.is_static:
            rank = 1 if not data.shape.dims and axes_spec.dims[0].lo > 0 else len(data.shape.dims)
            if axes_spec.dims[0].lo != rank:
                ctx.fail(f"axes_mapping has {axes_spec.dims[0].lo} elements, the data's rank is {rank}", position=2)
    if target_shape is None:
        if mode == "bidirectional":
            if data.shape.dims is not None and target.shape.is_static:
                out = numpy_merge(PartialShape(unknown_dims(ctx, target.shape.dims[0].lo, 1)), data.shape)
            else:
                out = PartialShape(None)
        elif target.shape.is_static:
            out = PartialShape(unknown_dims(ctx, target.shape.dims[0].lo, 1))
        else:
            out = PartialShape(None)
        return [TensorSpec(data.element_type, out)], {"shape": None, "axes": axes}
    if mode == "numpy":
        _check_numpy(ctx, data.shape, target_shape)
        out = target_shape
    elif mode == "bidirectional":
        out = numpy_merge(data.shape, target_shape)
        if out is None:
            ctx.fail(f"data {data.shape.brief()} cannot be broadcast with the target shape {target_shape.brief()}")
    else:
        out = target_shape
        if axes is not None:
            _check_explicit(ctx, data.shape, target_shape, axes)
    return [TensorSpec(data.element_type, out)], {"shape": out.to_shape() if out.is_static else None, "axes": axes}


def _batch_broadcast(params, inputs, outputs, axes):
    """The data's rows land on the output axis its dim maps to (right-aligned, or ``axes_mapping`` in
    explicit mode); they must not be broadcast there from a single row. Shared data broadcast to a target
    computed from the block's shape (a ``zeros(batch, ...)``, ``expand(batch, -1)``) is copied into every
    row alike."""
    axis = axes[0]
    if axis is None:
        return [REPLICATES if axes[1] is SIZED else None]
    data, out = inputs[0].shape, outputs[0].shape
    if data.rank is None or out.rank is None:
        return "a dynamic rank hides where the batch axis goes"
    if len(inputs) == 3 and params["axes"] is None:
        return "its axes_mapping is only known at run time"
    place = params["axes"][axis] if len(inputs) == 3 else out.rank - data.rank + axis
    if data.dims[axis] != out.dims[place]:
        return f"it broadcasts the batch axis ({data.dims[axis]} rows) to {out.dims[place]}"
    return [place]


def _check_numpy(ctx: OpContext, data: PartialShape, target: PartialShape) -> None:
    if data.dims is None:
        return
    if len(target.dims) < len(data.dims):
        ctx.fail(f"the target shape {target.brief()} has a lower rank than the data {data.brief()}", position=1)
    start = len(target.dims) - len(data.dims)
    for i, d in enumerate(data.dims):
        t = target.dims[start + i]
        if d.is_static and t.is_static and d.lo != 1 and d.lo != t.lo:
            ctx.fail(f"data dim {i} ({d}) cannot be broadcast to {t} (numpy mode)", position=1)


def _check_explicit(ctx: OpContext, data: PartialShape, target: PartialShape, axes: tuple[int, ...]) -> None:
    if data.dims is None:
        return
    if list(axes) != sorted(axes):
        ctx.fail(f"axes_mapping {list(axes)} must be sorted (Broadcast does not transpose)", position=2)
    if not data.dims and axes and not target.dims[axes[0]].contains(1):
        ctx.fail(f"target dim {axes[0]} must be 1 for scalar data", position=2)
    for i, a in enumerate(axes):
        if not 0 <= a < len(target.dims):
            ctx.fail(f"axes_mapping[{i}]={a} exceeds the target's rank {len(target.dims)}", position=2)
        if data.dims and broadcast_dims(data.dims[i], target.dims[a]) is None and not data.dims[i].contains(1):
            ctx.fail(f"data dim {i} ({data.dims[i]}) cannot be broadcast to target dim {a} ({target.dims[a]})",
                     position=2)


def broadcast(data: np.ndarray, target: np.ndarray, axes_mapping: np.ndarray | None = None, *,
              shape: tuple[int, ...], axes: tuple[int, ...] | None) -> np.ndarray:
    """``data`` broadcast to ``shape`` (a read-only view); explicit mode places the data's dims at ``axes``."""
    if axes is not None:
        placed = [1] * len(shape)
        for dim, axis in zip(data.shape, axes):
            placed[axis] = dim
        data = data.reshape(placed)
    try:
        return np.broadcast_to(data, shape)
    except ValueError:
        raise KernelError(f"data of shape {list(data.shape)} cannot be broadcast to {list(shape)}") from None


def _broadcast_at_run(ctx: OpContext, arrays: tuple[np.ndarray, ...]) -> dict | None:
    """Broadcast's parameters for known arrays (``OpDef.at_run``) in the plain cases: numpy (or, in Broadcast-3,
    bidirectional) mode without axes_mapping, data with elements, a 1-D integer target of positive dims that
    fits the mode."""
    if len(arrays) != 2:
        return None
    data, target = arrays
    mode = (ctx.attr("mode") or "numpy").strip().lower()
    if target.ndim != 1 or target.dtype.kind not in "iu" or data.size == 0 or not (
            mode == "numpy" or mode == "bidirectional" and ctx.op.version == 3):
        return None
    dims = target.tolist()
    if min(dims, default=1) <= 0 or (mode == "numpy" and len(dims) < data.ndim):
        return None
    rank = max(len(dims), data.ndim)
    dims = [1] * (rank - len(dims)) + dims
    for axis, d in enumerate(data.shape, rank - data.ndim):
        if d != 1 and d != dims[axis]:
            if mode == "numpy" or dims[axis] != 1:
                return None
            dims[axis] = d
    return {"shape": tuple(dims), "axes": None}


def _value_broadcast(ctx: OpContext):
    outs, params = ctx.op.infer(ctx)
    shape = params["shape"]
    if shape is None or len(shape) > 1:
        return [None]
    return [moved_value(ctx, 0, lambda a: broadcast(a, None, shape=shape, axes=params["axes"]))]


# -- Tile ---------------------------------------------------------------------------------------------------

def _infer_tile(ctx: OpContext):
    data, repeats_spec = ctx.inputs
    require_integer(ctx, 1, "repeats")
    if repeats_spec.shape.rank is not None and repeats_spec.shape.rank != 1:
        ctx.fail(f"repeats must be 1-D, got shape {repeats_spec.shape.brief()}", position=1)
    repeats = _shape_from_value(ctx, 1, negative_to_zero=True)
    if repeats is None or data.shape.dims is None:
        if data.shape.dims is not None and repeats_spec.shape.is_static:
            out = PartialShape(unknown_dims(ctx, max(data.shape.rank, repeats_spec.shape.dims[0].lo), 1))
        else:
            out = PartialShape(None)
        return [TensorSpec(data.element_type, out)], {"reps": None}
    rank = max(len(data.shape.dims), len(repeats.dims))
    one = Dim(1, 1)
    dims = (one,) * (rank - len(data.shape.dims)) + data.shape.dims
    reps = (one,) * (rank - len(repeats.dims)) + repeats.dims
    zero = Dim(0, 0)  # a 0 on either side is 0, however unknown the other (as OpenVINO's interval product)
    out = PartialShape(tuple(zero if zero in (d, r) else dim_mul(d, r) for d, r in zip(dims, reps)))
    exact = all(r.is_static for r in reps)
    return [TensorSpec(data.element_type, out)], {"reps": tuple(r.lo for r in reps) if exact else None}


def tile(data: np.ndarray, repeats: np.ndarray, *, reps: tuple[int, ...]) -> np.ndarray:
    """``data`` repeated ``reps`` times along each axis (a new array)."""
    return np.tile(data, reps)


def _value_tile(ctx: OpContext):
    outs, params = ctx.op.infer(ctx)
    if params["reps"] is None or outs[0].shape.rank != 1:
        return [None]
    return [moved_value(ctx, 0, lambda a: np.tile(a, params["reps"]))]


_BROADCAST_ROLES = ("data", "target_shape", "axes")

OPS = (
    OpDef("Broadcast", 1, 1, 2, ("data", "target_shape", "axes_mapping"), lambda ctx: _infer_broadcast(ctx, 1),
          broadcast, value=_value_broadcast, views=True, min_inputs=2, roles=_BROADCAST_ROLES,
          attrs=(Attr("mode", "numpy", ("numpy", "explicit", "none", "pdpd")),), batch=_batch_broadcast,
          at_run=_broadcast_at_run),
    OpDef("Broadcast", 3, 3, LATEST_OPSET, ("data", "target_shape", "axes_mapping"),
          lambda ctx: _infer_broadcast(ctx, 3), broadcast, value=_value_broadcast, views=True, min_inputs=2,
          roles=_BROADCAST_ROLES, batch=_batch_broadcast, at_run=_broadcast_at_run,
          attrs=(Attr("mode", "numpy", ("numpy", "explicit", "none", "bidirectional", "pdpd")),)),
    OpDef("Tile", 1, 1, LATEST_OPSET, ("data", "repeats"), _infer_tile, tile, value=_value_tile),
)
