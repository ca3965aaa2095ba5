"""Element and slice indexing: GatherElements-6, GatherND-5/8, ScatterUpdate-3, ScatterElementsUpdate-3/12,
ScatterNDUpdate-3/15.

Index values, as OpenVINO's reference kernels read them (``docs/semantics.md``, "Indexing"):

- GatherElements: the reference kernel (no ``Node.evaluate``; the template plugin's) throws for any
  negative index; the spec and the CPU plugin add ``dim`` to a negative index. ir-run follows the spec
  there; an index outside ``[-dim, dim-1]`` (where both throw or read garbage) is an IndexOutOfRangeError.
- GatherND: negative coordinates get their dim added (reference); outside ``[-dim, dim-1]`` the reference
  reads outside its buffer (the CPU plugin gives 0): IndexOutOfRangeError.
- ScatterUpdate: the reference refuses negative and out-of-range indices: IndexOutOfRangeError.
- ScatterElementsUpdate, ScatterNDUpdate: negative indices get ``dim`` added; outside ``[-dim, dim-1]`` the
  reference throws: IndexOutOfRangeError.
- Repeated targets are applied in index order (row-major over the indices): the last write wins, and
  ScatterElementsUpdate-12's reductions accumulate in that order, in the data's element type, exactly as the
  reference, so sum/prod/mean of floats are bit-exact too. f16/bf16 are reduced in f32 and rounded once at
  the end, as the reference's ``evaluate`` does (bf16 with OpenVINO's own f32 -> bf16 rounding); that also
  quietens signalling f16 NaNs anywhere in the output, which ir-run copies for ScatterElementsUpdate and
  ScatterNDUpdate (the other three keep NaN bits). Integer ``mean`` rounds down (the reference divides in
  double under FE_DOWNWARD; 64-bit sums beyond 2**53 round down at each step as there). Booleans: ``sum`` is
  OR, ``prod`` AND.
- ScatterNDUpdate-15's reductions (``sum``, ``sub``, ``prod``, ``min``, ``max``; torch.onnx writes them
  for ``index_put`` with accumulate, ONNX ScatterND) apply each update slice in index order in the data's
  own type (f16/bf16 in f32, rounded once at the end), as the reference's elementwise kernels: ``max`` is
  ``a < b ? b : a``, ``min`` ``b < a ? b : a`` (a NaN already in the data stays, a NaN update does not replace
  it), booleans ``min``/``prod`` AND, ``sum``/``max`` OR, ``sub`` XOR.
All of them only move or reduce values: ``exact=True``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef, quiet_f16_nans
from ..toolkit.axes import normalise_axis, scalar_axis
from ..toolkit.convert_rules import bf16_as_openvino_rounds
from ..toolkit.dims import dim_product
from ..toolkit.index_rules import (
    checked_indices,
    fit_within,
    last_writes,
    occurrence_rounds,
    prod,
    require_integer,
    require_same_type,
)
from ..toolkit.numeric import is_narrow_float

# -- GatherElements-6 ----------------------------------------------------------------------------------


def infer_gather_elements(ctx: OpContext):
    data, indices = ctx.inputs
    require_integer(ctx, 1, "indices", bits=(32, 64))
    for position, spec in ((0, data), (1, indices)):
        if spec.shape.rank == 0:
            ctx.fail(f"{ctx.op.input_names[position]} rank must be at least 1", position=position)
    rank = data.shape.rank if data.shape.rank is not None else indices.shape.rank
    axis = normalise_axis(ctx, ctx.attr_int("axis", 0), rank)
    if data.shape.dims is None:
        return [TensorSpec(data.element_type, indices.shape)], {"axis": axis}
    if indices.shape.dims is None:
        dims = list(data.shape.dims)
        dims[axis] = DYNAMIC_DIM
        return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], {"axis": axis}
    if data.shape.rank != indices.shape.rank:
        ctx.fail(f"data {data.shape.brief()} and indices {indices.shape.brief()} must have the same rank")
    dims = []
    for i, (d, n) in enumerate(zip(data.shape.dims, indices.shape.dims)):
        merged = n if i == axis else merge_dims(d, n)
        if merged is None:
            ctx.fail(f"data {data.shape.brief()} and indices {indices.shape.brief()} must have equal dims except at"
                     f" axis {axis} (dim {i} differs)")
        dims.append(merged)
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], {"axis": axis}


def gather_elements(data: np.ndarray, indices: np.ndarray, *, axis: int) -> np.ndarray:
    """``out[i][j][k] = data[i][indices[i][j][k]][k]`` (axis 1); negative indices wrap once."""
    idx = checked_indices(indices, data.shape[axis], negative=True)
    if not idx.size:
        return np.empty(indices.shape, dtype=data.dtype)
    return np.take_along_axis(data, idx, axis=axis)


# -- GatherND-5/8 --------------------------------------------------------------------------------------


def infer_gather_nd(ctx: OpContext, version: int):
    data, indices = ctx.inputs
    require_integer(ctx, 1, "indices", bits=(32, 64))
    batch_dims = ctx.attr_int("batch_dims", 0)
    if batch_dims < 0:
        ctx.fail(f"batch_dims={batch_dims} must not be negative")
    for position, spec in ((0, data), (1, indices)):
        name = ctx.op.input_names[position]
        if spec.shape.rank == 0:
            ctx.fail(f"{name} rank must be at least 1", position=position)
        if spec.shape.rank is not None and spec.shape.rank <= batch_dims:
            ctx.fail(f"batch_dims={batch_dims} must be below the rank of {name} {spec.shape.brief()}",
                     position=position)
    params = {"batch_dims": batch_dims, "fuse_batch": version == 5}
    if data.shape.dims is None or indices.shape.dims is None or not indices.shape.dims[-1].is_static:
        return [TensorSpec(data.element_type, DYNAMIC_SHAPE)], params
    tuple_length = indices.shape.dims[-1].lo
    if tuple_length + batch_dims > data.shape.rank:
        ctx.fail(f"the index tuples of length {tuple_length} (last dim of indices) exceed the rank of data"
                 f" {data.shape.brief()} after batch_dims={batch_dims}")
    batch = []
    for i in range(batch_dims):
        merged = merge_dims(data.shape.dims[i], indices.shape.dims[i])
        if merged is None:
            ctx.fail(f"batch dim {i} of data {data.shape.brief()} and indices {indices.shape.brief()} differ")
        batch.append(merged)
    if version == 5 and batch_dims > 1:
        batch = [dim_product(batch)]
    dims = tuple(batch) + indices.shape.dims[batch_dims:-1] + data.shape.dims[batch_dims + tuple_length:]
    return [TensorSpec(data.element_type, PartialShape(dims))], params


def gather_nd(data: np.ndarray, indices: np.ndarray, *, batch_dims: int, fuse_batch: bool) -> np.ndarray:
    """Slices of ``data`` at the index tuples in the last axis of ``indices``, per batch."""
    tuple_length = indices.shape[-1]
    lead = data.shape[batch_dims:batch_dims + tuple_length]
    tail = data.shape[batch_dims + tuple_length:]
    batch_shape = data.shape[:batch_dims]
    middle = indices.shape[batch_dims:-1]
    out_batch = (prod(batch_shape),) if fuse_batch and batch_dims > 1 else batch_shape
    out_shape = tuple(out_batch) + tuple(middle) + tuple(tail)
    n_batch, n_tuples = prod(batch_shape), prod(middle)
    coords = indices.reshape(n_batch, n_tuples, tuple_length)
    flat = np.zeros((n_batch, n_tuples), dtype=np.int64)
    for c, dim in enumerate(lead):
        flat *= dim
        flat += checked_indices(coords[:, :, c], dim, negative=True)
    flat += np.arange(n_batch, dtype=np.int64)[:, None] * prod(lead)
    rows = np.ascontiguousarray(data).reshape(n_batch * prod(lead), prod(tail))
    return rows.take(flat.reshape(-1), axis=0).reshape(out_shape)


# -- ScatterUpdate-3 -----------------------------------------------------------------------------------


def _updates_shape_check(ctx: OpContext, expected: list, what: str) -> None:
    updates = ctx.inputs[2].shape
    if updates.dims is None or any(e is None for e in expected):
        return
    if len(updates.dims) != len(expected) or any(merge_dims(u, e) is None for u, e in zip(updates.dims, expected)):
        shown = "[" + ",".join(str(e) for e in expected) + "]"
        ctx.fail(f"updates {updates.brief()} do not fit {what} {shown}", position=2)


def infer_scatter_update(ctx: OpContext):
    data, indices, updates, _ = ctx.inputs
    require_integer(ctx, 1, "indices")
    require_integer(ctx, 3, "axis")
    require_same_type(ctx, 0, 2, "data and updates")
    axis = scalar_axis(ctx, 3, data.shape.rank)
    ranks = (data.shape.rank, indices.shape.rank, updates.shape.rank)
    if None not in ranks and ranks[2] != ranks[0] + ranks[1] - 1:
        ctx.fail(f"updates {updates.shape.brief()} must have rank(data) + rank(indices) - 1 ="
                 f" {ranks[0] + ranks[1] - 1} dims", position=2)
    if axis is not None and data.shape.dims is not None and indices.shape.dims is not None:
        expected = list(data.shape.dims[:axis]) + list(indices.shape.dims) + list(data.shape.dims[axis + 1:])
        _updates_shape_check(ctx, expected, "data[:axis] + indices + data[axis+1:]")
    return [TensorSpec(data.element_type, data.shape)], {"axis": axis}


def scatter_update(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis_input: np.ndarray, *,
                   axis: int) -> np.ndarray:
    """Slices of ``data`` along ``axis`` replaced by ``updates``, the last write winning (``axis_input`` was
    resolved into ``axis`` by inference: the plan is made per value of an axis computed at run time)."""
    dim = data.shape[axis]
    idx = checked_indices(indices, dim, negative=False).reshape(-1)
    out = np.array(data, copy=True, order="C")  # a C-ordered copy: the writes go through reshaped views
    outer, inner = prod(data.shape[:axis]), prod(data.shape[axis + 1:])
    keep = last_writes(idx)
    view = out.reshape(outer, dim, inner)
    view[:, idx[keep], :] = updates.reshape(outer, idx.size, inner)[:, keep, :]
    return out


# -- ScatterElementsUpdate-3/12 ------------------------------------------------------------------------

REDUCTIONS = {"none": "none", "sum": "sum", "prod": "prod", "min": "min", "max": "max", "mean": "mean"}


def infer_scatter_elements(ctx: OpContext, version: int):
    data, indices, updates, _ = ctx.inputs
    require_integer(ctx, 1, "indices")
    require_integer(ctx, 3, "axis")
    require_same_type(ctx, 0, 2, "data and updates")
    reduction = ctx.attr_choice("reduction", REDUCTIONS, "none") if version >= 12 else "none"
    use_init_val = ctx.attr_bool("use_init_val", True) if version >= 12 else True
    if reduction == "mean" and data.element_type.kind == "bool":
        ctx.fail("reduction='mean' is not defined for boolean data (OpenVINO's reference has none)")
    merged = indices.shape
    if indices.shape.dims is not None and updates.shape.dims is not None:
        if indices.shape.rank != updates.shape.rank or any(
                merge_dims(a, b) is None for a, b in zip(indices.shape.dims, updates.shape.dims)):
            ctx.fail(f"indices {indices.shape.brief()} and updates {updates.shape.brief()} must have the same shape",
                     position=2)
    elif indices.shape.dims is None:
        merged = updates.shape
    if data.shape.rank is not None and merged.rank is not None and data.shape.rank != merged.rank:
        ctx.fail(f"indices {merged.brief()} must have the rank of data {data.shape.brief()}", position=1)
    axis = scalar_axis(ctx, 3, data.shape.rank)
    if axis is not None and data.shape.dims is not None and merged.dims is not None:
        for i, (d, n) in enumerate(zip(data.shape.dims, merged.dims)):
            if i != axis and d.hi is not None and n.is_static and n.lo > d.hi:
                ctx.fail(f"indices {merged.brief()} are larger than data {data.shape.brief()} in dim {i}"
                         " (OpenVINO's reference writes outside the tensor there)", position=1)
    return [TensorSpec(data.element_type, data.shape)], {"axis": axis, "reduction": reduction,
                                                          "use_init_val": use_init_val}


def scatter_elements_update(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis_input: np.ndarray, *,
                            axis: int, reduction: str, use_init_val: bool) -> np.ndarray:
    """``out[i][indices[i][j][k]][k] (op)= updates[i][j][k]`` (axis 1), in index order."""
    out = np.array(data, copy=True, order="C")
    if not indices.size:
        return quiet_f16_nans(out)
    if any(n > d for i, (n, d) in enumerate(zip(indices.shape, data.shape)) if i != axis):
        raise InputError(f"indices {list(indices.shape)} are larger than data {list(data.shape)} outside the axis"
                         " (OpenVINO's reference writes outside the tensor there)", port="input 1 (indices)")
    idx = checked_indices(indices, data.shape[axis], negative=True)
    strides = np.array([prod(data.shape[i + 1:]) for i in range(data.ndim)], dtype=np.int64)
    grids = np.ogrid[tuple(slice(0, n) for n in indices.shape)]
    targets = idx * strides[axis]
    for i, grid in enumerate(grids):
        if i != axis:
            targets = targets + grid.astype(np.int64) * strides[i]
    targets = np.broadcast_to(targets, indices.shape).reshape(-1)
    values = np.ascontiguousarray(updates).reshape(-1)
    flat = out.reshape(-1)
    if reduction == "none":
        keep = last_writes(targets)
        flat[targets[keep]] = values[keep]
        return quiet_f16_nans(out)
    if is_narrow_float(data.dtype):
        return _reduced_in_f32(flat, lambda wide: _reduce_into(wide, targets, values.astype(np.float32), reduction,
                                                               use_init_val)).reshape(data.shape)
    _reduce_into(flat, targets, values, reduction, use_init_val)
    return out



def _reduced_in_f32(flat: np.ndarray, reduce) -> np.ndarray:
    """``reduce`` applied to an f32 copy of the f16/bf16 ``flat``, rounded once at the end as the reference
    rounds (bf16: OpenVINO's own conversion)."""
    wide = flat.astype(np.float32)
    reduce(wide)
    if flat.dtype.name == "bfloat16":
        return bf16_as_openvino_rounds(wide, flat.dtype)
    return wide.astype(flat.dtype)


_NEUTRAL = {"sum": 0, "mean": 0, "prod": 1}


def _reduce_into(flat: np.ndarray, targets: np.ndarray, values: np.ndarray, reduction: str, use_init: bool) -> None:
    dtype = flat.dtype
    boolean = dtype == np.bool_
    if not use_init:
        if reduction in _NEUTRAL:
            flat[targets] = _NEUTRAL[reduction]
        elif boolean:
            flat[targets] = reduction == "min"
        elif dtype.kind in "iu":
            flat[targets] = np.iinfo(dtype).max if reduction == "min" else np.iinfo(dtype).min
        else:
            info = np.finfo(dtype)
            flat[targets] = info.max if reduction == "min" else -info.max  # numeric_limits max / lowest
    with np.errstate(over="ignore", invalid="ignore"):
        if reduction in ("sum", "mean", "prod"):
            if boolean:
                (np.logical_or if reduction == "sum" else np.logical_and).at(flat, targets, values)
            else:
                (np.multiply if reduction == "prod" else np.add).at(flat, targets, values)
        elif boolean or dtype.kind in "iu":
            (np.minimum if reduction == "min" else np.maximum).at(flat, targets, values)
        else:  # reference: max(a, b) = a > b ? a : b, min = a < b ? a : b (NaN and signed zeros as it does)
            better = np.greater if reduction == "max" else np.less
            for round_positions in occurrence_rounds(targets):
                where = targets[round_positions]
                current, update = flat[where], values[round_positions]
                flat[where] = np.where(better(current, update), current, update)
    if reduction == "mean":
        touched = np.unique(targets)
        counts = np.bincount(targets, minlength=flat.size)[touched] + int(use_init)
        if dtype.kind in "iu":
            flat[touched] = _integer_means(flat[touched], counts)
        else:
            flat[touched] = flat[touched] / counts.astype(dtype)


def _integer_means(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``nearbyint(double(sum) / count)`` under FE_DOWNWARD, as the reference: the floor of the quotient while
    sums fit a double exactly; beyond 2**53 (64-bit sums) each step rounds down as the reference's does."""
    wide = sums.astype(np.int64 if sums.dtype.kind == "i" else np.uint64)
    means = wide // counts.astype(wide.dtype)
    big = np.flatnonzero((wide >= 2**53) | (wide <= -(2**53)) if wide.dtype.kind == "i" else wide >= 2**53)
    for i in big.tolist():
        means[i] = _downward_mean(int(wide[i]), int(counts[i]))
    return means.astype(sums.dtype)


def _downward_mean(total: int, count: int) -> int:
    value = float(total)
    if Fraction(value) > total:
        value = math.nextafter(value, -math.inf)
    quotient = value / count
    if Fraction(quotient) > Fraction(value) / count:
        quotient = math.nextafter(quotient, -math.inf)
    return math.floor(quotient)


# -- ScatterNDUpdate-3 ---------------------------------------------------------------------------------


ND_REDUCTIONS = {"none": "none", "sum": "sum", "sub": "sub", "prod": "prod", "min": "min", "max": "max"}


def infer_scatter_nd(ctx: OpContext, version: int = 3):
    data, indices, updates = ctx.inputs
    require_integer(ctx, 1, "indices", bits=(32, 64))
    require_same_type(ctx, 0, 2, "data and updates")
    if indices.shape.rank == 0:
        ctx.fail("indices rank must be at least 1", position=1)
    if data.shape.rank == 0:
        ctx.fail("data rank must be at least 1", position=0)
    if indices.shape.dims is not None and indices.shape.dims[-1].is_static:
        k = indices.shape.dims[-1].lo
        if data.shape.rank is not None and k > data.shape.rank:
            ctx.fail(f"the index tuples of length {k} exceed the rank of data {data.shape.brief()}", position=1)
        if data.shape.dims is not None:
            _updates_shape_check(ctx, list(indices.shape.dims[:-1]) + list(data.shape.dims[k:]),
                                 "indices.shape[:-1] + data.shape[K:]")
    reduction = ctx.attr_choice("reduction", ND_REDUCTIONS, "none") if version >= 15 else "none"
    return [TensorSpec(data.element_type, data.shape)], {"reduction": reduction}


def scatter_nd_update(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, *,
                      reduction: str = "none") -> np.ndarray:
    """Slices of ``data`` at the index tuples in the last axis of ``indices`` replaced, the last write winning,
    or (v15) reduced into in index order (module docstring)."""
    k = indices.shape[-1]
    out = np.array(data, copy=True, order="C")
    n_tuples = prod(indices.shape[:-1])
    if not n_tuples:
        return quiet_f16_nans(out)
    coords = indices.reshape(n_tuples, k)
    flat = np.zeros(n_tuples, dtype=np.int64)
    for c in range(k):
        flat *= data.shape[c]
        flat += checked_indices(coords[:, c], data.shape[c], negative=True)
    rows = out.reshape(prod(data.shape[:k]), prod(data.shape[k:]))
    values = np.ascontiguousarray(updates).reshape(n_tuples, -1)
    if reduction != "none" and is_narrow_float(out.dtype):  # the reference reduces f16/bf16 in f32, rounds once
        return _reduced_in_f32(rows, lambda wide: _reduce_rows(wide, flat, values.astype(np.float32), reduction)
                               ).reshape(data.shape)
    if reduction != "none":
        _reduce_rows(rows, flat, values, reduction)
        return out
    keep = last_writes(flat)
    rows[flat[keep]] = values[keep]
    return quiet_f16_nans(out)


_BOOLEAN_ND = {"sum": np.logical_or, "max": np.logical_or, "prod": np.logical_and, "min": np.logical_and,
               "sub": np.logical_xor}
_ARITHMETIC_ND = {"sum": np.add, "sub": np.subtract, "prod": np.multiply}


def _reduce_rows(rows: np.ndarray, targets: np.ndarray, values: np.ndarray, reduction: str) -> None:
    """``rows[targets[i]] = op(rows[targets[i]], values[i])`` for i in order (ScatterNDUpdate-15)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if rows.dtype == np.bool_:
            _BOOLEAN_ND[reduction].at(rows, targets, values)
        elif reduction in _ARITHMETIC_ND:
            _ARITHMETIC_ND[reduction].at(rows, targets, values)
        elif rows.dtype.kind in "iu":
            (np.maximum if reduction == "max" else np.minimum).at(rows, targets, values)
        else:
            for positions in occurrence_rounds(targets):
                where = targets[positions]
                current, update = rows[where], values[positions]
                take = np.less(current, update) if reduction == "max" else np.less(update, current)
                rows[where] = np.where(take, update, current)


def _value_scatter_1d(ctx: OpContext):
    """Partial values through a scatter into a 1-D shape vector (``ScatterUpdate(ShapeOf(x), [1], [-1], 0)``,
    as exported models build target shapes), with constant indices, as OpenVINO's bounds propagation."""
    data, updates, indices = ctx.partial_value(0), ctx.partial_value(2), ctx.const_value(1)
    if data is None or updates is None or indices is None or ctx.inputs[0].shape.rank != 1:
        return [None]
    flat = indices.reshape(-1).astype(np.int64)
    if flat.size != len(updates):
        return [None]
    out = list(data)
    negative = ctx.op.type != "ScatterUpdate"
    for index, value in zip(flat.tolist(), updates):
        if negative and index < 0:
            index += len(out)
        if not 0 <= index < len(out):
            return [None]
        out[index] = value
    return [tuple(out)]


def _value_scatter_nd15(ctx: OpContext):
    """Partial values as v3's when nothing is reduced."""
    if ctx.attr_choice("reduction", ND_REDUCTIONS, "none") != "none":
        return [None]
    return _value_scatter_1d(ctx)


def _fit_axis(params, inputs: list[TensorSpec], position: int):
    """Generated indices (input 1) in ``[0, dim-1]`` of the indexed axis."""
    axis, dims = params.get("axis"), inputs[0].shape.dims
    if position != 1 or axis is None or dims is None:
        return None
    return fit_within(dims[axis:axis + 1], f"axis {axis} has {dims[axis]}")


def _fit_tuples(params, inputs: list[TensorSpec], position: int):
    """Generated index tuples (input 1) valid in every indexed dim."""
    data, indices = inputs[0].shape, inputs[1].shape
    if position != 1 or data.dims is None or indices.dims is None or not indices.dims[-1].is_static:
        return None
    start = params.get("batch_dims", 0)
    lead = data.dims[start:start + indices.dims[-1].lo]
    return fit_within(lead, f"indexed dims {','.join(map(str, lead))}")


def _batch_first_kept(params, inputs, outputs, axes):
    """Batch axis 0 passes through when every input carries it there and the op works inside each batch."""
    if all(a == 0 for a in axes[:2]) and params.get("axis") not in (None, 0):
        return [0]
    return "indexes along the batch axis"


_SCATTER_ROLES = ("data", "indices", "updates", "axis")
OPS = (
    OpDef("GatherElements", 6, 6, LATEST_OPSET, ("data", "indices"), infer_gather_elements, gather_elements,
          attrs=(Attr("axis"),), batch=_batch_first_kept, fit=_fit_axis),
    OpDef("GatherND", 5, 5, 7, ("data", "indices"), lambda ctx: infer_gather_nd(ctx, 5), gather_nd,
          attrs=(Attr("batch_dims", "0"),), fit=_fit_tuples),
    OpDef("GatherND", 8, 8, LATEST_OPSET, ("data", "indices"), lambda ctx: infer_gather_nd(ctx, 8), gather_nd,
          attrs=(Attr("batch_dims", "0"),), fit=_fit_tuples),
    OpDef("ScatterUpdate", 3, 3, LATEST_OPSET, _SCATTER_ROLES, infer_scatter_update, scatter_update,
          fit=_fit_axis, value=_value_scatter_1d),
    OpDef("ScatterElementsUpdate", 3, 3, 11, _SCATTER_ROLES, lambda ctx: infer_scatter_elements(ctx, 3),
          scatter_elements_update, fit=_fit_axis),
    OpDef("ScatterElementsUpdate", 12, 12, LATEST_OPSET, _SCATTER_ROLES, lambda ctx: infer_scatter_elements(ctx, 12),
          scatter_elements_update,
          attrs=(Attr("reduction", "none", tuple(REDUCTIONS)), Attr("use_init_val", "true", ("true", "false"))),
          fit=_fit_axis),
    OpDef("ScatterNDUpdate", 3, 4, 14, ("data", "indices", "updates"), infer_scatter_nd,
          scatter_nd_update, fit=_fit_tuples,
          value=_value_scatter_1d),
    OpDef("ScatterNDUpdate", 15, 15, LATEST_OPSET, ("data", "indices", "updates"),
          lambda ctx: infer_scatter_nd(ctx, 15), scatter_nd_update, fit=_fit_tuples, value=_value_scatter_nd15,
          attrs=(Attr("reduction", "none", tuple(ND_REDUCTIONS)),)),
)
