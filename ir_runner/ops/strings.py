"""StringTensorUnpack-15 and StringTensorPack-15: string tensors to and from OpenVINO's unpacked layout.

The unpacked layout is three tensors: ``begins`` and ``ends`` (i32 or i64, the string tensor's shape) and
``symbols`` (u8, 1-D, the UTF-8 bytes of every string in C order); element ``i`` is
``symbols[begins[i]:ends[i]]``. Unpack writes the strings back to back (``begins[i + 1] == ends[i]``);
Pack reads any ranges, overlapping or not. Shape inference follows OpenVINO's (measured with its Python
API): Unpack's ``symbols`` is ``[?]`` unless the strings are constant. OpenVINO's reference has no
evaluate for either; values equal its CPU plugin's. Pack refuses a range outside ``0 <= begin <= end <=
len(symbols)`` (the CPU plugin fails or reads outside the symbols).
"""

from __future__ import annotations

import numpy as np

from .. import strings
from ..errors import IndexOutOfRangeError
from ..types import DYNAMIC_DIM, ELEMENT_TYPES, PartialShape, TensorSpec
from .api import LATEST_OPSET, OpContext, OpDef, equal_merge

_I32, _U8, _STRING = ELEMENT_TYPES["i32"], ELEMENT_TYPES["u8"], ELEMENT_TYPES["string"]


def infer_unpack(ctx: OpContext):
    data = ctx.inputs[0]
    if data.element_type != _STRING:
        ctx.fail(f"data must be a string tensor, got {data.element_type}", position=0)
    value = ctx.const_value(0)
    symbols = PartialShape((DYNAMIC_DIM,)) if value is None else \
        PartialShape.of((sum(len(strings.encode(x)) for x in value.ravel().tolist()),))
    return [TensorSpec(_I32, data.shape), TensorSpec(_I32, data.shape), TensorSpec(_U8, symbols)], {}


def unpack(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """StringTensorUnpack-15: (begins i32, ends i32, symbols u8) of a string tensor, strings back to back."""
    encoded = [strings.encode(x) for x in data.ravel().tolist()]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
    if ends.size and ends[-1] > np.iinfo(np.int32).max:
        raise IndexOutOfRangeError(f"the strings hold {int(ends[-1])} bytes in all; i32 begins and ends reach"
                                   f" {np.iinfo(np.int32).max}")
    ends = ends.astype(np.int32)
    begins = np.concatenate([np.zeros(min(1, ends.size), np.int32), ends[:-1]])
    symbols = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
    return begins.reshape(data.shape), ends.reshape(data.shape), symbols


def infer_pack(ctx: OpContext):
    begins, ends, symbols = ctx.inputs
    if begins.element_type.name not in ("i32", "i64") or ends.element_type != begins.element_type:
        ctx.fail("begins and ends must have the same element type, i32 or i64,"
                 f" got {begins.element_type} and {ends.element_type}")
    if symbols.element_type != _U8:
        ctx.fail(f"symbols must be u8, got {symbols.element_type}", position=2)
    if symbols.shape.rank not in (None, 1):
        ctx.fail(f"symbols must be 1-D, got {symbols.shape.brief()}", position=2)
    shape = equal_merge(begins.shape, ends.shape)
    if shape is None:
        ctx.fail(f"begins {begins.shape.brief()} and ends {ends.shape.brief()} must have compatible shapes")
    return [TensorSpec(_STRING, shape)], {}


def pack(begins: np.ndarray, ends: np.ndarray, symbols: np.ndarray) -> np.ndarray:
    """StringTensorPack-15: the string tensor of ``symbols[begins[i]:ends[i]]`` (a new object array)."""
    if begins.shape != ends.shape:
        raise IndexOutOfRangeError(f"begins {list(begins.shape)} and ends {list(ends.shape)} differ in shape")
    b, e = begins.astype(np.int64).ravel(), ends.astype(np.int64).ravel()
    bad = (b < 0) | (b > e) | (e > symbols.size)
    if bad.any():
        i = int(np.argmax(bad))
        raise IndexOutOfRangeError(
            f"string {i} has begin {int(b[i])} and end {int(e[i])}: each must satisfy 0 <= begin <= end <="
            f" {symbols.size} (the symbols' length); {int(bad.sum())} such string(s) in all")
    raw = symbols.tobytes()
    return strings.from_items([strings.decode(raw[x:y]) for x, y in zip(b.tolist(), e.tolist())], begins.shape)


OPS = (
    OpDef("StringTensorUnpack", 15, 15, LATEST_OPSET, ("data",), infer_unpack, unpack),
    OpDef("StringTensorPack", 15, 15, LATEST_OPSET, ("begins", "ends", "symbols"), infer_pack, pack),
)
