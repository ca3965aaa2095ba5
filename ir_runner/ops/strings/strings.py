"""StringTensorUnpack-15 and StringTensorPack-15: string tensors to and from OpenVINO's unpacked layout.

The unpacked layout is three tensors: ``begins`` and ``ends`` (i32 or i64, the string tensor's shape) and
``symbols`` (u8, 1-D, the UTF-8 bytes of every string in C order); element ``i`` is
``symbols[begins[i]:ends[i]]``. Unpack writes the strings back to back (``begins[i + 1] == ends[i]``);
Pack reads overlapping ranges too. Shape inference follows OpenVINO's (measured with its Python API):
Unpack's ``symbols`` is ``[?]`` unless the strings are constant. OpenVINO's reference has no evaluate for
either; values equal its CPU plugin's. Pack checks the ranges as OpenVINO's shape inference does when it
knows their values (begins and ends each non-negative, ascending in C order, at most ``len(symbols)``) and
also ``begin <= end`` (the CPU plugin fails on that); constant ranges are checked at load. The kernels and
Pack's inference live in ``toolkit/string_tensors.py``, shared with openvino-tokenizers' versions.
"""

from __future__ import annotations

from ...strings import encode
from ...types import DYNAMIC_DIM, ELEMENT_TYPES, PartialShape, TensorSpec
from ..api import LATEST_OPSET, OpContext, OpDef
from ..toolkit.string_tensors import infer_pack, pack, unpack

_I32, _U8, _STRING = ELEMENT_TYPES["i32"], ELEMENT_TYPES["u8"], ELEMENT_TYPES["string"]


def infer_unpack(ctx: OpContext):
    data = ctx.inputs[0]
    if data.element_type != _STRING:
        ctx.fail(f"data must be a string tensor, got {data.element_type}", position=0)
    value = ctx.const_value(0)
    symbols = PartialShape((DYNAMIC_DIM,)) if value is None else \
        PartialShape.of((sum(len(encode(x)) for x in value.ravel().tolist()),))
    return [TensorSpec(_I32, data.shape), TensorSpec(_I32, data.shape), TensorSpec(_U8, symbols)], {}


OPS = (
    OpDef("StringTensorUnpack", 15, 15, LATEST_OPSET, ("data",), infer_unpack, unpack),
    OpDef("StringTensorPack", 15, 15, LATEST_OPSET, ("begins", "ends", "symbols"), infer_pack, pack),
)
