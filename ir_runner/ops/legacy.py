"""Older versions of operations ir-run declares in their newer versions, served by the newer declaration's code:

- Xor-1: opset1's logical exclusive or (``ov::op::v0::Xor``), the operation opset2 onwards call LogicalXor-1:
  boolean inputs, numpy broadcasting (or none, or pdpd), a boolean output; bit-exact against OpenVINO's
  reference (``Node.evaluate``).
- DeformableConvolution-1 (opset1..opset7): DeformableConvolution-8 without the mask input and without
  ``bilinear_interpolation_pad`` (a sample point must lie inside the input), as OpenVINO's v1 node computes it;
  within DeformableConvolution-8's bound of the CPU plugin.
- Interpolate-1 (opset1..opset3): resized as OpenVINO's plugins run it, converted to Interpolate-4
  (``ConvertInterpolate1ToInterpolate4``): ``nearest`` with ``nearest_mode="simple"``; ``linear`` as
  ``linear_onnx`` below rank 5 (``linear`` at rank 5); ``cubic`` with ``cube_coeff=-0.75``; sizes from
  ``target_spatial_shape``; coordinates ``align_corners`` when ``align_corners`` (the default), else
  ``half_pixel`` for linear without pads unless the axes are {2, 3} of a 4-D input, else ``asymmetric``.
  ``area`` (which no plugin runs) and pads on axes that are not resized (which the shapes of Interpolate-1 and
  Interpolate-4 disagree on) are refused as unsupported. Within Interpolate-4's bound of the CPU plugin.
- NonMaxSuppression-1 (opset1..opset2), -3 (opset3) and -4 (opset4): NonMaxSuppression-5's selection (OpenVINO's
  plugins convert them to it), ``selected_indices`` only (i64; -3 and -4: ``output_type``), one row per selected
  box, as the CPU plugin returns it. OpenVINO declares a static row count: ``min(boxes, max_output_boxes_per_class
  * classes)`` for -1 and -3, ``min(boxes, max_output_boxes_per_class) * batches * classes`` for -4 (with no -1
  padding of the unused rows at run time, in the CPU plugin): ir-run infers those counts at load and the exact
  count once the inputs' values are known, as for version 5. Bit-exact against the CPU plugin.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from .api import Attr, OpContext, OpDef
from .binary import TABLE, _declare
from .conv import _COMMON, deformable, infer_deformable
from .interpolate import Resize, _batch_rule
from .nms import ATTRS as NMS_ATTRS
from .nms import NAMES as NMS_NAMES
from .nms import ROLES as NMS_ROLES
from .nms import _batch as _nms_batch
from .nms import _infer as _infer_nms
from .nms import non_max_suppression
from .window import batch_axis_zero


def _xor() -> OpDef:
    (logical_xor,) = (entry for entry in TABLE if entry.type == "LogicalXor")
    op = _declare(logical_xor)
    op.type, op.last_opset = "Xor", 1
    return op


INTERPOLATE1_MODES = ("nearest", "linear", "cubic", "area")


def infer_interpolate1(ctx: OpContext):
    data, target = ctx.inputs
    if data.element_type.kind in ("bool", "string"):
        ctx.fail(f"data must be numeric, got {data.element_type}", position=0)
    mode = ctx.attr_choice("mode", {m: m for m in INTERPOLATE1_MODES}, None)
    if mode is None:
        ctx.fail("the attribute mode is required")
    if mode == "area":
        raise UnsupportedError("Interpolate-1 mode 'area': no OpenVINO plugin runs it (the conversion to"
                               " Interpolate-4 has no mode for it)", layer=ctx.ref)
    axes = ctx.attr_ints("axes")
    if target.shape.rank not in (None, 1):
        ctx.fail(f"target_spatial_shape must be 1-D, got {target.shape.brief()}", position=1)
    rank = data.shape.rank
    if rank is None:
        return [TensorSpec(data.element_type, DYNAMIC_SHAPE)], {}
    if any(not 0 <= a < rank for a in axes):
        ctx.fail(f"axes {axes} must be within [0, {rank - 1}]")
    if mode == "linear" and rank > 5:
        raise UnsupportedError(f"Interpolate-1 linear of rank {rank}: OpenVINO's plugins resize ranks up to 5",
                               layer=ctx.ref)
    begin, end = (tuple((ctx.attr_ints(name, []) + [0] * rank)[:rank]) for name in ("pads_begin", "pads_end"))
    if any((b or e) and i not in axes for i, (b, e) in enumerate(zip(begin, end))):
        raise UnsupportedError(f"pads_begin={list(begin)} and pads_end={list(end)} pad axes that are not resized:"
                               " Interpolate-1's shape keeps them, Interpolate-4 (which plugins run) widens them",
                               layer=ctx.ref)
    aligned = ctx.attr_bool("align_corners", True)
    half_pixel = mode == "linear" and not any(begin + end) and not (rank == 4 and set(axes) == {2, 3})
    params = {"mode": {"nearest": "nearest", "cubic": "cubic"}.get(mode, "linear_onnx" if rank < 5 else "linear"),
              "calc": "sizes", "nearest_mode": "simple", "antialias": ctx.attr_bool("antialias", False),
              "cube_coeff": -0.75, "axes": tuple(axes), "pads_begin": begin, "pads_end": end,
              "transform": "align_corners" if aligned else "half_pixel" if half_pixel else "asymmetric"}
    sizes = ctx.partial_value(1)
    if sizes is not None and len(sizes) < len(axes):
        ctx.fail(f"target_spatial_shape has {len(sizes)} elements for {len(axes)} axes", position=1)
    dims = list(data.shape.dims)
    for i, axis in enumerate(axes):
        dims[axis] = sizes[i] if sizes is not None and sizes[i].lo >= 0 else DYNAMIC_DIM
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], params


def interpolate1(data, target_spatial_shape, **params):
    """Interpolate-1 (see the module docstring)."""
    return Resize(data.shape, data.dtype, target_spatial_shape, None, **params)(data)


def _infer_nms_old(version: int):
    def infer(ctx: OpContext):
        outputs, params = _infer_nms(ctx, 5)
        if all(ctx.const_value(i) is not None for i in range(len(ctx.inputs))):
            return outputs[:1], params  # (the exact count)
        boxes, scores = ctx.inputs[0].shape.dims, ctx.inputs[1].shape.dims
        most = ctx.const_value(2) if len(ctx.inputs) > 2 else None
        rows = DYNAMIC_DIM
        if boxes is not None and most is not None and boxes[1].is_static:
            most = int(most.reshape(-1)[0])
            if version < 4 and (scores is None or scores[1].is_static):
                per_class = scores[1].lo if scores is not None else None
                if per_class is not None:
                    rows = Dim(min(boxes[1].lo, most * per_class), min(boxes[1].lo, most * per_class))
            elif version == 4 and scores is not None and None not in (scores[0].hi, scores[1].hi):
                count = min(boxes[1].lo, most) * scores[0].hi * scores[1].hi
                rows = Dim(count, count)
        return [TensorSpec(outputs[0].element_type, PartialShape((rows, Dim(3, 3))))], params
    return infer


def selected_indices(*inputs, **params):
    """NonMaxSuppression-1/3/4: NonMaxSuppression-5's ``selected_indices`` (see the module docstring)."""
    return non_max_suppression(*inputs, **params)[0]


OPS = (
    _xor(),
    OpDef("DeformableConvolution", 1, 1, 7, ("data", "offsets", "filters"), infer_deformable, deformable,
          attrs=_COMMON + (Attr("group", "1"), Attr("deformable_group", "1")), batch=batch_axis_zero, exact=False),
    OpDef("Interpolate", 1, 1, 3, ("data", "target_spatial_shape"), infer_interpolate1, interpolate1,
          roles=("data", "sizes"), batch=_batch_rule, exact=False,
          attrs=(Attr("axes"), Attr("mode", None, INTERPOLATE1_MODES), Attr("align_corners", "true", ("true", "false")),
                 Attr("antialias", "false", ("true", "false")), Attr("pads_begin", "0"), Attr("pads_end", "0"))),
) + tuple(
    OpDef("NonMaxSuppression", version, first, last, NMS_NAMES[:5], _infer_nms_old(version), selected_indices,
          roles=NMS_ROLES[:5], attrs=NMS_ATTRS if version > 1 else NMS_ATTRS[:2], min_inputs=2, batch=_nms_batch)
    for version, first, last in ((1, 1, 2), (3, 3, 3), (4, 4, 4))
)
