"""String tensors in OpenVINO's unpacked layout: the kernels of StringTensorUnpack and StringTensorPack, shared
by the core operations (``strings/``) and openvino-tokenizers' ``extension`` versions (``tokenizer/``).

The layout is three tensors: ``begins`` and ``ends`` (i32 or i64, the string tensor's shape) and ``symbols``
(u8, 1-D, UTF-8 bytes); element ``i`` is ``symbols[begins[i]:ends[i]]``. Pack checks the ranges as OpenVINO's
shape inference does when it knows their values (begins and ends each non-negative, ascending in C order, at
most ``len(symbols)``) and also ``begin <= end`` (the CPU plugin fails on that).
"""

from __future__ import annotations

import numpy as np

from ...errors import IndexOutOfRangeError
from ...strings import decode, encode, from_items
from ...types import ELEMENT_TYPES, TensorSpec
from ..api import OpContext, equal_merge

_U8, _STRING = ELEMENT_TYPES["u8"], ELEMENT_TYPES["string"]


def unpack(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(begins i32, ends i32, symbols u8) of a string tensor, the strings written back to back."""
    encoded = [encode(x) for x in data.ravel().tolist()]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
    if ends.size and ends[-1] > np.iinfo(np.int32).max:
        raise IndexOutOfRangeError(f"the strings hold {int(ends[-1])} bytes in all; i32 begins and ends reach"
                                   f" {np.iinfo(np.int32).max}")
    ends = ends.astype(np.int32)
    begins = np.concatenate([np.zeros(min(1, ends.size), np.int32), ends[:-1]])
    symbols = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
    return begins.reshape(data.shape), ends.reshape(data.shape), symbols


def infer_pack(ctx: OpContext):
    """The output spec of a Pack of (begins, ends, symbols): a string tensor of begins' and ends' merged shape;
    constant ranges checked."""
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
    values = ctx.const_value(0), ctx.const_value(1)
    if values[0] is not None and values[1] is not None:
        length = symbols.shape.dims[0].lo if symbols.shape.rank == 1 and symbols.shape.dims[0].is_static else None
        problem = _range_problem(*values, length)
        if problem is not None:
            ctx.fail(problem)
    return [TensorSpec(_STRING, shape)], {}


def _range_problem(begins: np.ndarray, ends: np.ndarray, length: int | None) -> str | None:
    """What is wrong with these ranges, or None: OpenVINO's checks (each of begins and ends non-negative,
    ascending in C order, at most the symbols' length) and begin <= end (the CPU plugin fails otherwise)."""
    for name, values in (("begins", begins), ("ends", ends)):
        flat = values.astype(np.int64).ravel()
        if not flat.size:
            continue
        if flat[0] < 0:
            return f"{name} must not be negative, got {int(flat[0])} first"
        if length is not None and flat[-1] > length:
            return f"{name} reach {int(flat[-1])}, beyond the {length} bytes of symbols"
        falls = np.flatnonzero(np.diff(flat) < 0)
        if falls.size:
            i = int(falls[0])
            return f"{name} must be in ascending order, got {int(flat[i])} then {int(flat[i + 1])} at {i}, {i + 1}"
    if begins.shape == ends.shape:
        above = np.flatnonzero(begins.astype(np.int64).ravel() > ends.astype(np.int64).ravel())
        if above.size:
            i = int(above[0])
            return f"string {i} begins at {int(begins.ravel()[i])} after its end {int(ends.ravel()[i])}"
    return None


def pack(begins: np.ndarray, ends: np.ndarray, symbols: np.ndarray) -> np.ndarray:
    """The string tensor of ``symbols[begins[i]:ends[i]]`` (a new object array); ranges checked."""
    if begins.shape != ends.shape:
        raise IndexOutOfRangeError(f"begins {list(begins.shape)} and ends {list(ends.shape)} differ in shape")
    problem = _range_problem(begins, ends, symbols.size)
    if problem is not None:
        raise IndexOutOfRangeError(problem)
    raw = symbols.tobytes()
    items = [decode(raw[x:y]) for x, y in zip(begins.ravel().tolist(), ends.ravel().tolist())]
    return from_items(items, begins.shape)
