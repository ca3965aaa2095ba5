"""OneHot-1 (``docs/semantics.md``, "Movement"): ``depth`` values along the new axis ``axis``; an index outside
``[0, depth-1]``, negative ones included, gives an all-``off_value`` row (reference). OneHot-16 adds
``negative_indices_mode``: ``ignore_negative`` (the default, as OneHot-1) or ``normalize`` (an index in
``[-depth, -1]`` counts from the end, ``index + depth``, as PyTorch and ONNX do). Bit-exact against OpenVINO's
reference (``Node.evaluate``). ``depth``, ``on_value`` and ``off_value`` are scalars (a static shape of rank 1 is
refused, [1] too, as OpenVINO refuses it).
"""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef
from ..toolkit.axes import normalise_axis
from ..toolkit.index_rules import require_integer, require_same_type
from ..toolkit.partial import const_count


def infer_one_hot(ctx: OpContext):
    indices, depth_spec, on, off = ctx.inputs
    require_integer(ctx, 0, "indices")
    require_integer(ctx, 1, "depth")
    require_same_type(ctx, 2, 3, "on_value and off_value")
    for position in (1, 2, 3):
        shape = ctx.inputs[position].shape
        if shape.rank and all(d.is_static for d in shape.dims):  # (OpenVINO: a static shape must be a scalar)
            ctx.fail(f"{ctx.op.input_names[position]} must be a scalar, got {shape.brief()}", position=position)
    et = on.element_type if on.element_type.kind != "dynamic" else off.element_type
    depth = const_count(ctx, 1)
    if indices.shape.dims is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], {"axis": None, "depth": depth}
    axis = normalise_axis(ctx, ctx.attr_int("axis", -1), indices.shape.rank + 1)
    dims = list(indices.shape.dims)
    dims.insert(axis, DYNAMIC_DIM if depth is None else Dim(depth, depth))
    return [TensorSpec(et, PartialShape(tuple(dims)))], {"axis": axis, "depth": depth}


def one_hot(indices: np.ndarray, depth_input: np.ndarray, on: np.ndarray, off: np.ndarray, *, axis: int,
            depth: int) -> np.ndarray:
    """``on`` where the index equals the position along ``axis``, else ``off``."""
    positions = np.arange(depth, dtype=np.int64).reshape((depth,) + (1,) * (indices.ndim - axis))
    hot = indices.astype(np.int64).reshape(indices.shape[:axis] + (1,) + indices.shape[axis:]) == positions
    return np.where(hot, on.reshape(()), off.reshape(()))


def _batch_one_hot(params, inputs, outputs, axes):
    """The indices' batch axis, shifted by one when the new axis is inserted before it."""
    axis = axes[0]
    if axis is None or params["axis"] is None:
        return [None] if axis is None else "the one-hot axis is not known"
    return [axis + 1 if params["axis"] <= axis else axis]


def _fit_one_hot(params, inputs, position: int) -> InputFit | None:
    """Generated indices in ``[0, depth-1]`` (others give off rows, which are valid too)."""
    depth = params.get("depth")
    if position != 0 or not depth:
        return None
    return InputFit("index", 0, depth - 1, f"depth is {depth}")

MODES = {"ignore_negative": False, "normalize": True}


def infer_one_hot16(ctx: OpContext):
    outputs, params = infer_one_hot(ctx)
    return outputs, {**params, "normalize": ctx.attr_choice("negative_indices_mode", MODES, False)}


def one_hot16(indices: np.ndarray, depth_input: np.ndarray, on: np.ndarray, off: np.ndarray, *, axis: int,
              depth: int, normalize: bool) -> np.ndarray:
    """OneHot-16 (see the module docstring)."""
    if normalize and indices.dtype.kind == "i":
        wide = indices.astype(np.int64)
        indices = np.where((wide < 0) & (wide >= -depth), wide + depth, wide)
    return one_hot(indices, depth_input, on, off, axis=axis, depth=depth)


OPS = (
    OpDef("OneHot", 1, 1, 15, ("indices", "depth", "on_value", "off_value"), infer_one_hot, one_hot,
          attrs=(Attr("axis"),), fit=_fit_one_hot, batch=_batch_one_hot),
    OpDef("OneHot", 16, 16, LATEST_OPSET, ("indices", "depth", "on_value", "off_value"), infer_one_hot16, one_hot16,
          attrs=(Attr("axis"), Attr("negative_indices_mode", "ignore_negative", tuple(MODES))), fit=_fit_one_hot,
          batch=_batch_one_hot),
)
