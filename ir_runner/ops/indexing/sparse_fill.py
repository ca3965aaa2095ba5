"""SparseFillEmptyRows-16: a 2-D sparse tensor (``values``, ``dense_shape`` ``[rows, cols]``, ``indices``
``[N, 2]``) with every row that holds no value given one, ``default_value`` at column 0.

Outputs: the new indices ``[N + E, 2]`` and values ``[N + E]`` (E: the empty rows), sorted by (row, column),
and ``empty_row_indicator`` ``[rows]`` (boolean). Shape inference follows OpenVINO's
(``sparse_fill_empty_rows_shape_inference.hpp``): the row count is known when ``dense_shape`` is, the output
lengths when ``indices`` is constant too (whose indices are then checked against ``dense_shape``).

OpenVINO's core node has no ``evaluate``; values equal its CPU plugin's and its reference kernel's, bit for bit
(string values too). Entries of one (row, column) keep their input order (the reference's ``std::sort`` is not
stable: OpenVINO leaves their order unspecified). An index outside ``dense_shape`` is an IndexOutOfRangeError
when run (the reference kernel reads it unchecked).
"""

from __future__ import annotations

import numpy as np

from ...errors import IndexOutOfRangeError, LayerRef, UnsupportedError
from ...types import DYNAMIC, DYNAMIC_DIM, ELEMENT_TYPES, Dim, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, InputFit, OpContext, OpDef
from ..toolkit.dims import dim_add

NAMES = ("values", "dense_shape", "indices", "default_value")
_BOOL = ELEMENT_TYPES["boolean"]


def _dense_shape(ctx: OpContext) -> tuple[Dim, Dim] | None:
    value = ctx.partial_value(1)
    return (value[0], value[1]) if value is not None and len(value) == 2 else None


def infer_sparse_fill(ctx: OpContext):
    values, dense, indices, default = (spec.shape for spec in ctx.inputs)
    index_type = ctx.common_element_type(1, 2)
    if index_type != DYNAMIC and index_type.name not in ("i32", "i64"):
        ctx.fail(f"dense_shape and indices must be i32 or i64, got {index_type}", position=2)
    value_type, default_type = ctx.inputs[0].element_type, ctx.inputs[3].element_type
    if DYNAMIC not in (value_type, default_type) and value_type != default_type:
        raise UnsupportedError(f"default_value is {default_type}, values {value_type}: ir-run fills with a"
                               " default_value of the values' type (OpenVINO does not check; its kernels read the"
                               " default's bytes as the values' type)", layer=ctx.ref, port=ctx.input_label(3))
    if values.rank not in (None, 1):
        ctx.fail(f"values must be 1-D, got {values.brief()}", position=0)
    if dense.rank is not None and not (dense.rank == 1 and dense.dims[0].contains(2)):
        ctx.fail(f"dense_shape must be 1-D with 2 elements (only 2-D sparse tensors), got {dense.brief()}", position=1)
    count = values.dims[0] if values.rank == 1 else DYNAMIC_DIM
    if indices.rank is not None and not (indices.rank == 2 and indices.dims[1].contains(2)
                                         and (dense.rank is None or merge_dims(indices.dims[0], count))):
        ctx.fail(f"indices must be 2-D [N, 2] with N the length of values ({count}), got {indices.brief()}",
                 position=2)
    if default.rank not in (None, 0):
        ctx.fail(f"default_value must be a scalar, got {default.brief()}", position=3)
    rows, filled, length = DYNAMIC_DIM, DYNAMIC_DIM, DYNAMIC_DIM
    shape = _dense_shape(ctx)
    if shape is not None and shape[0].is_static:
        rows = shape[0] if shape[0].lo >= 0 else Dim(0, 0)  # (a negative row count: 0 rows, as OpenVINO's shape)
        pairs = ctx.const_value(2)
        if pairs is not None and shape[1].is_static:
            empty = Dim(rows.lo, rows.lo)
            if pairs.size:
                found = np.unique(_checked(pairs.reshape(-1, 2), shape[0].lo, shape[1].lo, ctx.ref)[:, 0])
                empty = Dim(rows.lo - found.size, rows.lo - found.size)
            filled, length = dim_add(Dim(pairs.shape[0], pairs.shape[0]), empty), dim_add(count, empty)
    return [TensorSpec(index_type, PartialShape((filled, Dim(2, 2)))),
            TensorSpec(value_type, PartialShape((length,))), TensorSpec(_BOOL, PartialShape((rows,)))], {}


def _checked(pairs: np.ndarray, rows: int, cols: int, layer: LayerRef | None = None) -> np.ndarray:
    """``pairs`` ``[N, 2]`` as int64, each (row, column) within ``[0, rows) x [0, cols)``; else an
    IndexOutOfRangeError naming the first outside (OpenVINO's shape inference refuses it too)."""
    pairs = pairs.astype(np.int64, copy=False)
    bad = np.flatnonzero((pairs < 0).any(axis=1) | (pairs[:, 0] >= rows) | (pairs[:, 1] >= cols))
    if bad.size:
        row, col = (int(v) for v in pairs[bad[0]])
        raise IndexOutOfRangeError(f"indices[{int(bad[0])}] = ({row}, {col}) is outside the dense shape"
                                   f" [{rows}, {cols}]", layer=layer, port="input 2 (indices)")
    return pairs


def sparse_fill_empty_rows(values: np.ndarray, dense_shape: np.ndarray, indices: np.ndarray,
                           default_value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SparseFillEmptyRows-16 (see the module docstring)."""
    rows, cols = (int(v) for v in dense_shape.reshape(-1))
    if rows < 0 or cols < 0:
        raise IndexOutOfRangeError(f"dense_shape [{rows}, {cols}] has a negative dim", port="input 1 (dense_shape)")
    pairs = _checked(indices.reshape(-1, 2), rows, cols)
    indicator = np.ones(rows, np.bool_)
    indicator[pairs[:, 0]] = False
    empty = np.flatnonzero(indicator)
    all_pairs = np.concatenate([pairs, np.stack([empty, np.zeros_like(empty)], axis=1)])
    order = np.lexsort((all_pairs[:, 1], all_pairs[:, 0]))  # (stable: equal pairs keep their input order)
    out_values = np.concatenate([values, np.full(empty.size, default_value.reshape(()), values.dtype)])[order]
    return all_pairs[order].astype(indices.dtype), out_values, indicator


def _batch(params, inputs, outputs, axes):
    return "a sparse tensor's entries are sorted and filled over every row of the dense shape together"


def _fit(params, inputs: list[TensorSpec], position: int):
    if position == 2:
        return InputFit("index", 0, 0, "(row, column) pairs inside dense_shape: 0 fits every non-empty one")
    return None


OPS = (
    OpDef("SparseFillEmptyRows", 16, 16, LATEST_OPSET, NAMES, infer_sparse_fill, sparse_fill_empty_rows,
          roles=("data", "shape", "counted", "data"), batch=_batch, fit=_fit),
)
