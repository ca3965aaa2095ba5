"""RaggedToSparse, RaggedToRagged and EqualStr (openvino-tokenizers, ``extension`` opset): the operations of
tokenizers converted from TensorFlow Text models. Written from ``ragged_to_sparse.cpp``,
``ragged_to_ragged.cpp`` and ``equal_str.cpp`` (2026.4):

- RaggedToSparse gives the ``[row, column]`` index of every element of a ragged tensor (i32 ``[n, 2]``), rows
  back to back as the other operations write them; openvino-tokenizers sizes its output by the last end
  minus the first begin, so rows that are not back to back (or no row at all) are refused here.
- RaggedToRagged turns row ids (one per element, ascending) into row begins and ends for ``first_dim_size``
  rows; row ids from ``first_dim_size`` on end the reading.
- EqualStr compares two string tensors element by element (i32 0 or 1), as many as the longer has; past
  the end of the shorter its first string is compared, and an empty side gives an empty result.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec
from ..api import OpContext, OpDef, equal_merge
from ._ragged import I32, expect, expect_string, items


def infer_ragged_to_sparse(ctx: OpContext):
    if len(ctx.inputs) != 2:
        ctx.fail(f"takes 2 inputs (row begins and ends), got {len(ctx.inputs)}")
    expect(ctx, 0, I32, "the row begins")
    expect(ctx, 1, I32, "the row ends")
    if equal_merge(ctx.inputs[0].shape, ctx.inputs[1].shape) is None:
        ctx.fail(f"row begins {ctx.inputs[0].shape.brief()} and ends {ctx.inputs[1].shape.brief()} differ")
    return [TensorSpec(I32, PartialShape((DYNAMIC_DIM, Dim(2, 2))))], {}


def ragged_to_sparse(begins: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """RaggedToSparse: the [row, column] of every element (see the module's docstring)."""
    b, e = begins.ravel().astype(np.int64), ends.ravel().astype(np.int64)
    if not b.size:
        raise InputError("RaggedToSparse needs at least one row")
    if np.any(e < b) or np.any(b[1:] != e[:-1]):
        raise InputError("the rows are not back to back (each begins where the one before ends)")
    lengths = e - b
    rows = np.repeat(np.arange(b.size, dtype=np.int32), lengths)
    columns = np.arange(int(lengths.sum()), dtype=np.int32) - np.repeat((b - b[0]).astype(np.int32), lengths)
    return np.stack([rows, columns], axis=1)


def infer_ragged_to_ragged(ctx: OpContext):
    if len(ctx.inputs) != 2:
        ctx.fail(f"takes 2 inputs (row ids, first dim size), got {len(ctx.inputs)}")
    expect(ctx, 0, I32, "the row ids")
    expect(ctx, 1, I32, "the first dim size")
    value = ctx.const_value(1)
    shape = PartialShape((DYNAMIC_DIM,)) if value is None or not value.size else \
        PartialShape.of((int(value.ravel()[0]),))
    return [TensorSpec(I32, shape), TensorSpec(I32, shape)], {}


def ragged_to_ragged(row_ids: np.ndarray, first_dim_size: np.ndarray):
    """RaggedToRagged: the begins and ends of rows given by ascending row ids (see the module's docstring)."""
    if not first_dim_size.size:
        raise InputError("the first dim size is empty")
    rows = int(first_dim_size.ravel()[0])
    if rows < 0:
        raise InputError(f"the first dim size is {rows}")
    ids = row_ids.ravel().astype(np.int64)
    if np.any(ids < 0):
        raise InputError(f"row id {int(ids[np.argmax(ids < 0)])} is negative")
    stop = np.flatnonzero(ids >= rows)
    ids = ids[:stop[0]] if stop.size else ids
    if np.any(np.diff(ids) < 0):
        raise InputError("the row ids must ascend")
    begins = np.searchsorted(ids, np.arange(rows), side="left").astype(np.int32)
    ends = np.searchsorted(ids, np.arange(rows), side="right").astype(np.int32)
    return begins, ends


def infer_equal_str(ctx: OpContext):
    if len(ctx.inputs) != 6:
        ctx.fail(f"takes 6 inputs (two string tensors), got {len(ctx.inputs)}")
    expect_string(ctx, 0, "the first strings")
    expect_string(ctx, 3, "the second strings")
    return [TensorSpec(I32, PartialShape((DYNAMIC_DIM,)))], {}


def equal_str(*inputs: np.ndarray) -> np.ndarray:
    """EqualStr: 1 where the strings are equal, else 0 (see the module's docstring)."""
    first, second = items(*inputs[:3]), items(*inputs[3:])
    count = 0 if not first or not second else max(len(first), len(second))
    return np.array([first[i if i < len(first) else 0] == second[i if i < len(second) else 0]
                     for i in range(count)], np.int32)


OPS = (
    OpDef("RaggedToSparse", 1, 0, 0, ("begins", "ends"), infer_ragged_to_sparse, ragged_to_sparse,
          domain="extension"),
    OpDef("RaggedToRagged", 1, 0, 0, ("row_ids", "first_dim_size"), infer_ragged_to_ragged, ragged_to_ragged,
          domain="extension"),
    OpDef("EqualStr", 1, 0, 0, ("begins", "ends", "symbols", "other_begins", "other_ends", "other_symbols"),
          infer_equal_str, equal_str, domain="extension"),
)
