"""SegmentMax-16 (``torch_scatter.segment_max`` / ``tf.math.segment_max``, of converted PyTorch and TensorFlow
models).

``out[s] = max(data[i] for segment_ids[i] == s)`` along axis 0; ``segment_ids`` 1-D, sorted,
non-negative, as long as the data's axis 0; ``num_segments`` (optional scalar) sets the output's first dim,
else ``segment_ids[-1] + 1``; rows whose id reaches it are dropped; empty segments take ``fill_mode`` (ZERO:
0; LOWEST: ``numeric_limits<T>::lowest()``, the most negative finite value). Bit-exact, as the reference's
loop (see :func:`segment_max`); no evaluate in the wheel: compared with the CPU plugin, which agrees except
that it computes f16 in f32 and i64 in i32 (its LOWEST is then -inf and INT32_MIN).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.partial import const_count


def _lowest(dtype: np.dtype):
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    if dtype.kind == "b":
        return False
    return -np.finfo(dtype).max  # (numeric_limits<T>::lowest: the most negative finite value, not -inf)


def infer_segment_max(ctx: OpContext):
    data, ids = ctx.inputs[0], ctx.inputs[1]
    fill = ctx.attr_choice("fill_mode", {"zero": "zero", "lowest": "lowest"}, None)
    if fill is None:
        ctx.fail("the attribute fill_mode (ZERO or LOWEST) is required")
    for position in range(1, len(ctx.inputs)):
        if ctx.inputs[position].element_type.name not in ("i32", "i64", "dynamic"):
            ctx.fail(f"{ctx.op.input_names[position]} must be i32 or i64, got {ctx.inputs[position].element_type}",
                     position=position)
    if data.element_type.kind not in ("int", "uint", "float", "dynamic") or data.element_type.dtype is None:
        ctx.fail(f"SegmentMax does not take element type {data.element_type}", position=0)
    if data.shape.rank == 0:
        ctx.fail("data must not be a scalar", position=0)
    if ids.shape.rank not in (None, 1):
        ctx.fail(f"segment_ids must be 1-D, got {ids.shape.brief()}", position=1)
    if data.shape.rank is not None and ids.shape.rank is not None and merge_dims(data.shape.dims[0],
                                                                                    ids.shape.dims[0]) is None:
        ctx.fail(f"segment_ids has {ids.shape.dims[0]} elements, data's first dim is {data.shape.dims[0]}",
                 position=1)
    id_values = ctx.const_value(1)
    if id_values is not None:
        _check_ids(id_values.reshape(-1), ctx.fail)
    count = None
    if len(ctx.inputs) == 3:
        if ctx.inputs[2].shape.rank not in (None, 0):
            ctx.fail(f"num_segments must be a scalar, got {ctx.inputs[2].shape.brief()}", position=2)
        count = const_count(ctx, 2)
    elif id_values is not None:
        count = int(id_values.max()) + 1 if id_values.size else 0
    if data.shape.rank is None:
        return [TensorSpec(data.element_type, data.shape)], {"fill": fill}
    first = DYNAMIC_DIM if count is None else Dim(count, count)
    return [TensorSpec(data.element_type, PartialShape((first,) + data.shape.dims[1:]))], {"fill": fill}


def _check_ids(ids: np.ndarray, fail) -> None:
    if ids.size and ids.min() < 0:
        fail(f"segment_ids must not be negative, got {int(ids.min())}", position=1)
    if ids.size > 1 and (np.diff(ids) < 0).any():
        fail("segment_ids must be sorted", position=1)


def _run_time_fail(detail: str, *, position: int) -> None:
    raise InputError(f"SegmentMax: {detail}", port=f"input {position}")


def segment_max(data: np.ndarray, segment_ids: np.ndarray, num_segments: np.ndarray | None = None, *,
                fill: str) -> np.ndarray:
    """SegmentMax-16 (exact), as the reference's loop: rows whose id reaches ``num_segments`` are dropped,
    each segment starts at the type's lowest finite value and takes ``x`` when ``current < x`` (so NaN never
    wins, and of equal values, signed zeros included, the first stays); a segment of only NaNs gives the
    lowest value; a segment without rows gives ``fill`` (0 or the lowest value)."""
    ids = segment_ids.reshape(-1).astype(np.int64)
    if ids.size != data.shape[0]:
        _run_time_fail(f"segment_ids has {ids.size} elements, data's first dim is {data.shape[0]}", position=1)
    _check_ids(ids, _run_time_fail)
    count = int(num_segments.reshape(-1)[0]) if num_segments is not None else (int(ids[-1]) + 1 if ids.size else 0)
    if count < 0:
        _run_time_fail(f"num_segments={count} must not be negative", position=2)
    kept = int(np.searchsorted(ids, count))
    ids, rows = ids[:kept], data[:kept]
    lowest = _lowest(data.dtype)
    out = np.full((count,) + data.shape[1:], 0 if fill == "zero" else lowest, data.dtype)
    if not kept or not rows[0].size:
        return out
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    present = ids[starts]
    wide = rows.astype(np.float32) if rows.dtype.kind == "V" else rows
    with np.errstate(invalid="ignore"):
        best = np.fmax.reduceat(wide, starts, axis=0) if wide.dtype.kind == "f" else \
            np.maximum.reduceat(wide, starts, axis=0)
    if wide.dtype.kind == "f":
        best = np.where(np.isnan(best), wide.dtype.type(lowest), best)
        best = np.maximum(best, wide.dtype.type(lowest))  # (-inf rows: the segment keeps the lowest finite value)
        zero = best == 0
        if zero.any():  # the first zero of the segment decides the sign
            order = np.where(wide == 0, np.arange(kept).reshape((-1,) + (1,) * (wide.ndim - 1)), kept)
            first = np.minimum.reduceat(order, starts, axis=0)
            signs = np.take_along_axis(np.signbit(wide), np.minimum(first, kept - 1), axis=0)
            best = np.where(zero, np.where(signs, -wide.dtype.type(0), wide.dtype.type(0)), best)
    out[present] = best.astype(data.dtype) if best.dtype != data.dtype else best
    return out


def _segment_batch(params, inputs, outputs, axes):
    if axes[0] is None and all(a is None for a in axes[1:]):
        return [None]
    if axes[0] not in (None, 0) and all(a is None for a in axes[1:]):
        return [axes[0]]
    return "segments run along the batch axis"


OPS = (
    OpDef("SegmentMax", 16, 16, LATEST_OPSET, ("data", "segment_ids", "num_segments"), infer_segment_max,
          segment_max, roles=("data", "counted", "sizes"), attrs=(Attr("fill_mode", None, ("zero", "lowest")),),
          min_inputs=2, batch=_segment_batch),
)
