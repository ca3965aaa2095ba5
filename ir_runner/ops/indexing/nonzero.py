"""NonZero-3 (``docs/semantics.md``, "Selection").

The coordinates of non-zero elements (NaN counts, -0.0 does not) as ``[rank, count]`` in row-major
order (``output_type`` i64 or i32); a scalar gives ``[[0]]`` (non-zero) or an empty ``[0, 0]``, as the
reference. Its output shape depends on the values:
at load it is ``[rank, 0..elements]``; its input has the deciding role ``counted``, so the plan is made per
value of the Parameters it comes from (and a computed input above the folding limit is refused).
"""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, element_type
from ..api import LATEST_OPSET, Attr, OpContext, OpDef


def infer_non_zero(ctx: OpContext):
    data = ctx.inputs[0]
    name = ctx.attr_choice("output_type", {"i64": "i64", "i32": "i32"}, "i64")
    et = element_type(name)
    params = {"index_type": name}
    value = ctx.const_value(0)
    if value is not None:
        count = int(np.count_nonzero(value))
        return [TensorSpec(et, PartialShape.of((value.ndim if value.ndim else count, count)))], params
    if data.shape.dims is None or data.shape.rank == 0:
        return [TensorSpec(et, PartialShape((DYNAMIC_DIM, DYNAMIC_DIM)))], params
    hi = 1
    for d in data.shape.dims:
        hi = None if hi is None or d.hi is None else hi * d.hi
    if any(d.hi == 0 for d in data.shape.dims):  # no elements, however unknown the other dims (as OpenVINO)
        hi = 0
    count = DYNAMIC_DIM if hi is None else Dim(0, hi)
    return [TensorSpec(et, PartialShape((Dim(data.shape.rank, data.shape.rank), count)))], params


def non_zero(data: np.ndarray, *, index_type: str) -> np.ndarray:
    """Coordinates of the non-zero elements, one row per axis (a scalar: ``[[0]]``, or ``[0, 0]`` when zero)."""
    dtype = np.int32 if index_type == "i32" else np.int64
    if data.ndim == 0:
        return np.zeros((1, 1) if data.reshape(1)[0] else (0, 0), dtype=dtype)
    return np.array(np.nonzero(data), dtype=dtype).reshape(data.ndim, -1)

OPS = (
    OpDef("NonZero", 3, 3, LATEST_OPSET, ("data",), infer_non_zero, non_zero, roles=("counted",),
          attrs=(Attr("output_type", "i64", ("i64", "i32")),)),
)
