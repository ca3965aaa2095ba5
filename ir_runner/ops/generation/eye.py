"""Eye-9: a batch of matrices with ones on one diagonal: ``out[..., i, i + diagonal_index] = 1``.

Inputs: ``num_rows``, ``num_columns``, ``diagonal_index`` (scalars or 1-element 1-D, i32/i64) and the
optional ``batch_shape`` (1-D); the output is ``batch_shape + [num_rows, num_columns]`` of ``output_type``.
A diagonal outside the matrix gives zeros. Sizes computed at run time (torch's ``eye(seq_len)`` from a
ShapeOf, as in XLNet) are planned per value; until then a dim is what value inference knows of them."""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.partial import unknown_dims

# OpenVINO accepts any output_type; its reference evaluates bf16, f16, f32, f64, i8, i32, i64 and u8, its CPU
# plugin also boolean, i16, u16, u32 and u64 (the same ones and zeros): those are computed too
OUTPUT_TYPES = ("boolean", "bf16", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
NAMES = ("num_rows", "num_columns", "diagonal_index", "batch_shape")


def _size(ctx: OpContext, position: int) -> Dim:
    """A size input as a dim: its constant or the bounds value inference found (dynamic otherwise)."""
    value = ctx.partial_value(position)
    if value is None or len(value) != 1:
        return DYNAMIC_DIM
    dim = value[0]
    if dim.is_static and dim.lo < 0:
        ctx.fail(f"{NAMES[position]} must not be negative, got {dim.lo}", position=position)
    return Dim(max(dim.lo, 0), dim.hi)


def infer_eye(ctx: OpContext):
    et = ctx.attr_element_type("output_type")
    if et.name not in OUTPUT_TYPES:
        ctx.fail(f"output_type must be one of {', '.join(OUTPUT_TYPES)}, got {et}")
    for position, spec in enumerate(ctx.inputs):
        if spec.element_type.kind not in ("int", "dynamic") or spec.element_type.bits not in (32, 64, 0):
            ctx.fail(f"{NAMES[position]} must be i32 or i64, got {spec.element_type}", position=position)
        rank = spec.shape.rank
        if position < 3 and rank is not None and not (rank == 0 or (rank == 1 and spec.shape.dims[0].contains(1))):
            ctx.fail(f"{NAMES[position]} must be a scalar or have one element, got {spec.shape.brief()}",
                     position=position)
        if position == 3 and rank is not None and rank != 1:
            ctx.fail(f"batch_shape must be 1-D, got {spec.shape.brief()}", position=position)
    matrix = (_size(ctx, 0), _size(ctx, 1))
    params = {"dtype": et.dtype}
    if len(ctx.inputs) == 3:
        return [TensorSpec(et, PartialShape(matrix))], params
    batch = ctx.partial_value(3)
    if batch is not None:
        return [TensorSpec(et, PartialShape(tuple(batch) + matrix))], params
    length = ctx.inputs[3].shape.dims[0] if ctx.inputs[3].shape.rank == 1 else DYNAMIC_DIM
    if not length.is_static:
        return [TensorSpec(et, DYNAMIC_SHAPE)], params
    return [TensorSpec(et, PartialShape(unknown_dims(ctx, length.lo, 3) + matrix))], params


def eye(rows: np.ndarray, columns: np.ndarray, diagonal: np.ndarray, batch: np.ndarray | None = None, *,
        dtype: np.dtype) -> np.ndarray:
    """Eye-9: ``np.eye(rows, columns, k=diagonal)`` broadcast to ``batch_shape`` (a new array)."""
    n, m, k = (int(np.asarray(v).reshape(-1)[0]) for v in (rows, columns, diagonal))
    matrix = np.eye(n, m, k=k, dtype=dtype)
    if batch is None:
        return matrix
    shape = tuple(int(d) for d in np.asarray(batch).reshape(-1))
    return np.ascontiguousarray(np.broadcast_to(matrix, shape + matrix.shape))


OPS = (
    OpDef("Eye", 9, 9, LATEST_OPSET, NAMES, infer_eye, eye, roles=("sizes", "sizes", "k", "shape"), min_inputs=3,
          attrs=(Attr("output_type", None, OUTPUT_TYPES),)),
)
