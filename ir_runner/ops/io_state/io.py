"""Parameter-1, Const-1 and Result-1: the model's inputs, constants and outputs.

They have no kernel: the plan binds Parameters to feeds, Consts to read-only views of the weights,
and Results to the model's outputs (a Parameter or Const that is also an output is copied, into the
caller's ``out=`` array when one is given).
"""

from __future__ import annotations

import functools

from ...errors import ModelFormatError, UnsupportedError, clip_text
from ...types import NUMPY_MAX_RANK, PartialShape, TensorSpec, parse_partial_shape
from ..api import LATEST_OPSET, NEWEST_OPSET, Attr, OpContext, OpDef, keep_batch, no_batch

_parse_shape = functools.lru_cache(maxsize=4096)(parse_partial_shape)  # large IRs repeat a few shapes


def _shape_attr(ctx: OpContext, required: bool) -> PartialShape | None:
    text = ctx.attr("shape")
    if text is None:
        if required:
            raise ModelFormatError("the required attribute 'shape' is missing", layer=ctx.ref)
        return None
    try:
        return _parse_shape(text)
    except ValueError as exc:
        raise ModelFormatError(
            f"attribute {ctx.attr_shown('shape')} is not a shape: {clip_text(str(exc), 120)}",
            layer=ctx.ref,
            hint="write dims as in '1,?,3', '1..10,3' or '...' for a dynamic rank",
        ) from None


def infer_parameter(ctx: OpContext):
    et = ctx.attr_element_type("element_type")
    shape = _shape_attr(ctx, required=False)
    if shape is None:
        port = ctx.layer.outputs[0] if ctx.layer.outputs else None
        shape = PartialShape.from_port_dims(port.dims) if port else PartialShape(())
    return [TensorSpec(et, shape)], {}


def infer_const(ctx: OpContext):
    et = ctx.attr_element_type("element_type")
    shape = _shape_attr(ctx, required=True)
    if not shape.is_static:
        raise ModelFormatError(f"a Const needs a static shape, got {ctx.attr_shown('shape')}", layer=ctx.ref)
    offset, size = ctx.attr_int("offset", -1), ctx.attr_int("size", -1)
    if offset < 0 or size < 0:
        raise ModelFormatError(
            f"{ctx.attr_shown('offset')} and {ctx.attr_shown('size')} must both be integers >= 0",
            layer=ctx.ref,
        )
    if len(shape.dims) > NUMPY_MAX_RANK:  # checked first: the element count of a million dims is a huge product
        raise UnsupportedError(
            f"a Const of element type {et.name} and {ctx.attr_shown('shape')} cannot be held in a numpy array:"
            f" rank {len(shape.dims)} is above numpy's limit of {NUMPY_MAX_RANK} dims",
            layer=ctx.ref,
        )
    value = ctx.weights.const(ctx.ref, et, shape, offset, size)
    return [TensorSpec(et, shape)], {"value": value}


def infer_result(ctx: OpContext):
    spec = ctx.inputs[0]
    return [spec], {}


OPS = (
    OpDef("Parameter", 1, 1, NEWEST_OPSET, (), infer_parameter, attrs=(Attr("element_type"), Attr("shape")),
          batch=no_batch),
    OpDef("Const", 1, 1, LATEST_OPSET, (), infer_const,
          attrs=(Attr("element_type"), Attr("shape"), Attr("offset"), Attr("size")), batch=no_batch),
    OpDef("Result", 1, 1, LATEST_OPSET, ("input",), infer_result, batch=keep_batch),
)
