"""The tensors openvino-tokenizers' operations pass each other, and their checks.

A *string tensor* is three tensors: ``begins``, ``ends`` (i32, the tensor's shape) and ``symbols`` (u8, 1-D):
element ``i`` is ``symbols[begins[i]:ends[i]]``. A *ragged tensor* adds a row level: ``row_begins``,
``row_ends`` (i32, one per row) index a flat list of elements, which are numbers (ids) or strings (words,
three tensors again), so a ragged string tensor is five tensors. Skips (boolean, one per word) mark the
words that a later operation passes through unchanged (special tokens). Shapes as openvino-tokenizers'
``set_string_output``, ``set_ragged_string_output`` and ``set_ragged_output`` give them.
"""

from __future__ import annotations

import numpy as np

from ...errors import IndexOutOfRangeError
from ...types import DYNAMIC_DIM, ELEMENT_TYPES, ElementType, PartialShape, TensorSpec
from ..api import OpContext

I32, U8, BOOL, F32 = (ELEMENT_TYPES[name] for name in ("i32", "u8", "boolean", "f32"))
FLAT = PartialShape((DYNAMIC_DIM,))


def string_specs(shape: PartialShape) -> list[TensorSpec]:
    """The specs of a string tensor of ``shape``: begins, ends, symbols."""
    return [TensorSpec(I32, shape), TensorSpec(I32, shape), TensorSpec(U8, FLAT)]


def ragged_string_specs(shape: PartialShape) -> list[TensorSpec]:
    """The specs of a ragged string tensor with rows of ``shape``: row begins and ends, begins, ends, symbols."""
    return [TensorSpec(I32, shape), TensorSpec(I32, shape), *string_specs(FLAT)]


def ragged_specs(shape: PartialShape, element_type: ElementType) -> list[TensorSpec]:
    """The specs of a ragged tensor with rows of ``shape`` and flat elements of ``element_type``."""
    return [TensorSpec(I32, shape), TensorSpec(I32, shape), TensorSpec(element_type, FLAT)]


def expect(ctx: OpContext, position: int, element_type: ElementType, what: str, rank: int | None = None) -> None:
    """Fail unless input ``position`` has ``element_type`` (and ``rank``, when given and known)."""
    spec = ctx.inputs[position]
    if spec.element_type != element_type and spec.element_type.kind != "dynamic":
        ctx.fail(f"{what} must be {element_type}, got {spec.element_type}", position=position)
    if rank is not None and spec.shape.rank not in (None, rank):
        ctx.fail(f"{what} must have rank {rank}, got {spec.shape.brief()}", position=position)


def expect_string(ctx: OpContext, position: int, what: str = "the strings") -> None:
    """Fail unless inputs ``position``.. are a string tensor (i32 begins and ends, u8 symbols)."""
    expect(ctx, position, I32, f"{what}' begins")
    expect(ctx, position + 1, I32, f"{what}' ends")
    expect(ctx, position + 2, U8, f"{what}' symbols")


def expect_ragged_string(ctx: OpContext, position: int) -> None:
    """Fail unless inputs ``position``.. are a ragged string tensor (four i32 tensors, u8 symbols)."""
    expect(ctx, position, I32, "the row begins")
    expect(ctx, position + 1, I32, "the row ends")
    expect_string(ctx, position + 2, "the words")


def expect_ragged(ctx: OpContext, position: int, what: str = "the ragged tensor") -> None:
    """Fail unless inputs ``position``.. are a ragged tensor (i32 row begins and ends, 1-D elements)."""
    expect(ctx, position, I32, f"{what}'s row begins")
    expect(ctx, position + 1, I32, f"{what}'s row ends")
    if ctx.inputs[position + 2].shape.rank not in (None, 1):
        ctx.fail(f"{what}'s elements must be 1-D, got {ctx.inputs[position + 2].shape.brief()}",
                 position=position + 2)


def text_input(ctx: OpContext, position: int, what: str) -> bytes | None:
    """The bytes of a u8 1-D input (a pattern, a mode), None when it is not constant."""
    expect(ctx, position, U8, what, rank=1)
    value = ctx.const_value(position)
    return None if value is None else value.tobytes()


def ranges(begins: np.ndarray, ends: np.ndarray, size: int, what: str) -> list[tuple[int, int]]:
    """The (begin, end) pairs of ``begins`` and ``ends``, each within 0..``size`` and begin <= end; an
    IndexOutOfRangeError naming the first that is not (``what``: strings, rows...)."""
    b, e = begins.ravel().astype(np.int64), ends.ravel().astype(np.int64)
    if b.shape != e.shape:
        raise IndexOutOfRangeError(f"{b.size} {what} begins but {e.size} ends")
    bad = (b < 0) | (b > e) | (e > size)
    if bad.any():
        i = int(np.argmax(bad))
        raise IndexOutOfRangeError(f"{what} {i} spans {int(b[i])}..{int(e[i])}, outside 0..{size}"
                                   if b[i] <= e[i] else f"{what} {i} begins at {int(b[i])} after its end {int(e[i])}")
    return list(zip(b.tolist(), e.tolist()))


def items(begins: np.ndarray, ends: np.ndarray, symbols: np.ndarray) -> list[bytes]:
    """The strings of a string tensor, in C order (their ranges checked)."""
    raw = symbols.tobytes()
    return [raw[b:e] for b, e in ranges(begins, ends, len(raw), "string")]


def packed(strings: list[bytes], shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The begins, ends (i32, ``shape``) and symbols of ``strings`` written back to back."""
    ends = np.cumsum([len(s) for s in strings], dtype=np.int64).astype(np.int32)
    begins = np.concatenate([np.zeros(min(1, ends.size), np.int32), ends[:-1]])
    symbols = np.frombuffer(b"".join(strings), np.uint8).copy()
    return begins.reshape(shape), ends.reshape(shape), symbols


def i32(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int32)
