"""Older versions of operations ir-run declares in their newer versions, served by the newer declaration's code:

- Xor-1: opset1's logical exclusive or (``ov::op::v0::Xor``), the operation opset2 onwards call LogicalXor-1:
  boolean inputs, numpy broadcasting (or none, or pdpd), a boolean output; bit-exact against OpenVINO's
  reference (``Node.evaluate``).
- DeformableConvolution-1 (opset1..opset7): DeformableConvolution-8 without the mask input and without
  ``bilinear_interpolation_pad`` (a sample point must lie inside the input), as OpenVINO's v1 node computes it;
  within DeformableConvolution-8's bound of the CPU plugin.
"""

from __future__ import annotations

from .api import Attr, OpDef
from .binary import TABLE, _declare
from .conv import _COMMON, deformable, infer_deformable
from .window import batch_axis_zero


def _xor() -> OpDef:
    (logical_xor,) = (entry for entry in TABLE if entry.type == "LogicalXor")
    op = _declare(logical_xor)
    op.type, op.last_opset = "Xor", 1
    return op


OPS = (
    _xor(),
    OpDef("DeformableConvolution", 1, 1, 7, ("data", "offsets", "filters"), infer_deformable, deformable,
          attrs=_COMMON + (Attr("group", "1"), Attr("deformable_group", "1")), batch=batch_axis_zero, exact=False),
)
