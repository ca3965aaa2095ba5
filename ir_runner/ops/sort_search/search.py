"""Bucketize-3 and SearchSorted-15: binary searches of values in sorted sequences (torch.bucketize and
torch.searchsorted convert to them).

- Bucketize-3 (``data``, ``buckets``): for each element of ``data`` (any shape) the index of its bucket in the 1-D
  ``buckets``. ``with_right_bound`` (default true): the index of the first bucket bound ``>= x`` (std::lower_bound);
  false: of the first bound ``> x`` (std::upper_bound). Data and buckets may have different numeric types: they are
  compared as C++ compares them (a float type on either side: both as f32, or f64 when one is f64; integers after
  the usual promotions). Empty buckets give zeros.
- SearchSorted-15 (``sorted_sequence``, ``values``, both of one type): the index in the innermost dimension of the
  sorted sequence where each value would be inserted; ``right_mode`` false: the first ``i`` with ``!(s[i] < v)``,
  true: the first with ``!(s[i] <= v)``. A 1-D sequence serves values of any shape; otherwise both have one rank and
  equal dims but the last, and each row of values searches its own row of the sequence.
- ``output_type`` (i32 or i64, default i64) is the output's element type.

NaN, as the reference's binary searches give it: a NaN value goes to 0, except in Bucketize without
``with_right_bound`` where it goes to ``len(buckets)``; a sequence holding NaN (or unsorted, outside the spec) gives
what the reference's libstdc++ binary search gives, probe for probe.

Neither operation has a ``Node.evaluate`` in OpenVINO 2026.4: the tests compare against the CPU plugin, which agrees
bit for bit except where it converts types first (i64, u32 and u64 values outside the i32 range wrap to i32, f64 is
rounded to f32); ir-run compares in the types themselves, as the template plugin's reference does
(``docs/semantics.md``).

Kernels: ``np.searchsorted`` on a 1-D sorted, NaN-free sequence; for N-D sequences of 32-bit comparison types one
``np.searchsorted`` over (row, value) keys; otherwise the reference's binary search vectorised over all values
(one numpy pass per halving).
"""

from __future__ import annotations

import math

import numpy as np

from ...types import (
    DYNAMIC,
    DYNAMIC_DIM,
    ElementType,
    PartialShape,
    TensorSpec,
    element_type,
    element_type_of,
    merge_dims,
)
from ..api import LATEST_OPSET, Attr, OpContext, OpDef

OUTPUT_TYPES = ("i32", "i64")
NUMERIC = ("int", "uint", "float")
SIDES = {"left": "left", "right": "right", "upper": "right"}  # np.searchsorted's side for each search
NAN_AT_END = {"left": False, "right": False, "upper": True}  # where a NaN value lands


def _output_type(ctx: OpContext) -> ElementType:
    text = ctx.attr("output_type")
    et = element_type(text) if text is not None else element_type("i64")
    if et is None or et.name not in OUTPUT_TYPES:
        ctx.fail(f"output_type must be i32 or i64, got {ctx.attr_shown('output_type')}",
                 hint="write output_type=\"i64\" (or \"i32\")")
    return et


def _numeric(ctx: OpContext, position: int) -> ElementType:
    et = ctx.inputs[position].element_type
    if et != DYNAMIC and (et.kind not in NUMERIC or et.dtype is None or et.name == "u1"):
        ctx.fail(f"{ctx.op.input_names[position]} must have a numeric element type, got {et}", position=position)
    return et


def comparison_dtype(a: ElementType, b: ElementType) -> np.dtype | None:
    """The type two element types are compared in, as C++ compares them (f16, bf16 and f8 as float; integers
    narrower than int promoted to int; then the usual arithmetic conversions). None when one is dynamic."""
    if DYNAMIC in (a, b):
        return None
    if "float" in (a.kind, b.kind):
        return np.dtype(np.float64 if 64 in (a.bits if a.kind == "float" else 0, b.bits if b.kind == "float" else 0)
                        else np.float32)
    (sa, ba), (sb, bb) = ((et.kind == "int" or et.bits < 32, max(et.bits, 32)) for et in (a, b))
    if sa == sb:
        signed, bits = sa, max(ba, bb)
    else:
        (us_bits, s_bits) = (bb, ba) if sa else (ba, bb)
        signed, bits = (False, us_bits) if us_bits >= s_bits else (True, s_bits)
    return np.dtype(f"{'i' if signed else 'u'}{bits // 8}")


def _comparison_of(*arrays: np.ndarray) -> np.dtype:
    """comparison_dtype for arrays whose element types inference did not know."""
    types = [element_type_of(a.dtype) for a in arrays]
    return comparison_dtype(types[0], types[-1])


# -- inference ---------------------------------------------------------------------------------------------------

def infer_bucketize(ctx: OpContext):
    data, buckets = ctx.inputs
    out = _output_type(ctx)
    right = ctx.attr_bool("with_right_bound", True)
    data_et, buckets_et = _numeric(ctx, 0), _numeric(ctx, 1)
    if buckets.shape.rank is not None and buckets.shape.rank != 1:
        ctx.fail(f"buckets must be 1-D, got {buckets.shape.brief()}", position=1)
    params = {"mode": "left" if right else "upper", "compare": comparison_dtype(data_et, buckets_et),
              "dtype": out.dtype}
    return [TensorSpec(out, data.shape)], params


def infer_search_sorted(ctx: OpContext):
    sorted_, values = ctx.inputs
    out = _output_type(ctx)
    right = ctx.attr_bool("right_mode", False)
    et = ctx.common_element_type(0, 1)
    _numeric(ctx, 0)
    _numeric(ctx, 1)
    shape = search_sorted_shape(ctx, sorted_.shape, values.shape)
    return [TensorSpec(out, shape)], {"mode": "right" if right else "left", "compare": comparison_dtype(et, et),
                                      "dtype": out.dtype}


def search_sorted_shape(ctx: OpContext, sorted_: PartialShape, values: PartialShape) -> PartialShape:
    """The output shape, as OpenVINO's shape inference: the values' shape, with the leading dims merged with the
    sequence's when the sequence is N-D (values of unknown rank: the sequence's dims, the last one dynamic)."""
    if sorted_.rank == 0:
        ctx.fail("sorted_sequence cannot be a scalar", position=0)
    if values.rank == 0 and sorted_.rank is not None and sorted_.rank != 1:
        ctx.fail(f"values is a scalar, so sorted_sequence must be 1-D, got {sorted_.brief()}", position=1)
    if sorted_.rank is None or sorted_.rank == 1:
        return values
    if values.rank is None:
        return PartialShape(sorted_.dims[:-1] + (DYNAMIC_DIM,))
    if values.rank != sorted_.rank:
        ctx.fail(f"values must have the rank of sorted_sequence ({sorted_.rank}) when the sequence is not 1-D, got"
                 f" {values.brief()}", position=1)
    dims = []
    for axis, (s, v) in enumerate(zip(sorted_.dims[:-1], values.dims[:-1])):
        merged = merge_dims(s, v)
        if merged is None:
            ctx.fail(f"dims but the last must be equal: values dim {axis} is {v}, sorted_sequence's {s}", position=1)
        dims.append(merged)
    return PartialShape(tuple(dims) + values.dims[-1:])


# -- batch rules ---------------------------------------------------------------------------------------------------

def batch_bucketize(params, inputs, outputs, axes) -> list[int | None] | str:
    if axes[1] is not None:
        return "the buckets would be split: every element searches all of them"
    return [axes[0]]


def batch_search_sorted(params, inputs, outputs, axes) -> list[int | None] | str:
    sorted_axis, values_axis = axes
    rank = inputs[0].shape.rank
    if rank is None:
        return "a dynamic rank of sorted_sequence hides whether each value searches one row or all of it"
    if sorted_axis == rank - 1:
        return "the sorted sequences would be split: every value searches its whole innermost dimension"
    if rank == 1 or (sorted_axis is None and values_axis == rank - 1):
        return [values_axis]
    if sorted_axis != values_axis:
        return (f"sorted_sequence carries the batch axis on dim {sorted_axis}, values on {values_axis}: each row of"
                " values must meet its own row of the sequence")
    return [values_axis]


# -- kernels -------------------------------------------------------------------------------------------------------

def bucketize(data: np.ndarray, buckets: np.ndarray, *, mode: str, compare: np.dtype | None,
              dtype: np.dtype) -> np.ndarray:
    """Bucketize-3: each data element's bucket index (a new array of ``dtype``, data's shape)."""
    compare = compare or _comparison_of(data, buckets)
    values = data.astype(compare, copy=False).reshape(1, -1)
    found = search_rows(buckets.astype(compare, copy=False).reshape(1, -1), values, mode)
    return found.reshape(data.shape).astype(dtype, copy=False)


def search_sorted(sorted_: np.ndarray, values: np.ndarray, *, mode: str, compare: np.dtype | None,
                  dtype: np.dtype) -> np.ndarray:
    """SearchSorted-15: insertion indices of ``values`` in the innermost dimension of ``sorted_`` (a new array
    of ``dtype``, the values' shape)."""
    compare = compare or _comparison_of(sorted_, values)
    length = sorted_.shape[-1]
    rows = 1 if sorted_.ndim == 1 else math.prod(sorted_.shape[:-1])
    sequence = sorted_.astype(compare, copy=False).reshape(rows, length)
    flat = values.astype(compare, copy=False).reshape(rows, -1) if rows else values.reshape(0, 0)
    return search_rows(sequence, flat, mode).reshape(values.shape).astype(dtype, copy=False)


def search_rows(rows: np.ndarray, values: np.ndarray, mode: str) -> np.ndarray:
    """Row ``r`` of ``values`` (R, m) searched in row ``r`` of ``rows`` (R, n) by the reference's rule ``mode``
    (``left``: first ``i`` with ``!(s[i] < v)``; ``right``: with ``!(s[i] <= v)``; ``upper``: with ``v < s[i]``);
    int64 indices (R, m). Fast paths where np.searchsorted gives the same indices (rows sorted, NaN-free)."""
    count, length = values.shape[0], rows.shape[1]
    if not values.size or not length:
        return np.zeros(values.shape, np.int64)
    floating = rows.dtype.kind == "f"
    ordered = bool(np.all(rows[:, :-1] <= rows[:, 1:])) and not (floating and np.isnan(rows).any())
    if not ordered:
        return binary_search(rows, values, mode)
    side = SIDES[mode]
    if count == 1:
        found = np.searchsorted(rows[0], values[0], side=side).reshape(1, -1).astype(np.int64, copy=False)
    elif rows.dtype.itemsize <= 4:
        high = np.arange(count, dtype=np.uint64)[:, None] << np.uint64(32)
        keys = (_order_keys(rows) | high).reshape(-1)
        found = np.searchsorted(keys, (_order_keys(values) | high).reshape(-1), side=side).reshape(values.shape)
        found = found.astype(np.int64, copy=False) - np.arange(0, count * length, length, dtype=np.int64)[:, None]
    else:
        return binary_search(rows, values, mode)
    if floating:
        nan = np.isnan(values)
        if nan.any():
            found[nan] = length if NAN_AT_END[mode] else 0
    return found


def _order_keys(a: np.ndarray) -> np.ndarray:
    """uint64 keys below 2**32 ordered as the 32-bit comparison values (f32 without NaN, i32, u32); -0.0 == 0.0."""
    if a.dtype == np.float32:
        bits = np.add(a, np.float32(0)).view(np.uint32)  # (-0.0 + 0.0 is +0.0)
        return np.where(bits >> np.uint32(31) != 0, ~bits, bits | np.uint32(0x80000000)).astype(np.uint64)
    if a.dtype == np.int32:
        return (a.view(np.uint32) ^ np.uint32(0x80000000)).astype(np.uint64)
    return a.astype(np.uint64)


def binary_search(rows: np.ndarray, values: np.ndarray, mode: str) -> np.ndarray:
    """libstdc++'s std::lower_bound / std::upper_bound (halve ``count``, probe ``first + count / 2``) run for every
    value at once: the same probes, so the same index for any sequence (unsorted, holding NaN). One pass per
    halving, about log2(n) + 1."""
    length = rows.shape[1]
    flat = rows.reshape(-1)
    base = np.arange(0, rows.shape[0] * length, length, dtype=np.int64)[:, None] if rows.shape[0] > 1 else 0
    first = np.zeros(values.shape, np.int64)
    count = np.full(values.shape, length, np.int64)
    while True:
        active = count > 0
        if not active.any():
            return first
        step = count >> 1
        probe = first + step
        element = flat[np.minimum(probe, length - 1) + base]
        if mode == "left":
            forward = element < values
        elif mode == "right":
            forward = element <= values
        else:
            forward = ~(values < element)
        forward &= active
        first = np.where(forward, probe + 1, first)
        count = np.where(forward, count - step - 1, step)


OPS = (
    OpDef("Bucketize", 3, 3, LATEST_OPSET, ("data", "buckets"), infer_bucketize, bucketize, batch=batch_bucketize,
          attrs=(Attr("output_type", "i64", OUTPUT_TYPES), Attr("with_right_bound", "true", ("true", "false")))),
    OpDef("SearchSorted", 15, 15, LATEST_OPSET, ("sorted_sequence", "values"), infer_search_sorted, search_sorted,
          batch=batch_search_sorted,
          attrs=(Attr("right_mode", "false", ("true", "false")), Attr("output_type", "i64", OUTPUT_TYPES))),
)
