"""ShapeOf-1/3, Reshape-1, Squeeze-1/15, Unsqueeze-1, Concat-1, Split-1, VariadicSplit-1, Transpose-1.

Shape inference follows OpenVINO's ``shape_infer`` of each operation, including its bound (partial value)
propagation: a Reshape whose target comes from ShapeOf -> Gather -> Concat gets the dims OpenVINO declares.
Dynamic dims carry no symbols in ir-run (OpenVINO's read_model adds none either), so products that cancel
equal *symbolic* dims (Reshape's ``-1``) are not simplified. Kernels are pure data movement and bit-exact;
Reshape, Squeeze, Unsqueeze, Transpose and Split return views of their input (``views=True``).
Concat copies values as they are: OpenVINO's reference keeps f16 signalling NaNs unchanged when it moves
them (memcpy), unlike Gather and Select.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import InputError
from ...parallel import PARALLEL_MIN_ELEMENTS, run_chunked
from ...strided_copy import c_ordered_copy
from ...types import DYNAMIC_DIM, ELEMENT_TYPES, Dim, ElementType, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, NEWEST_OPSET, Attr, InputFit, OpContext, OpDef, reshaped_batch
from ..toolkit.axes import normalise_axis
from ..toolkit.dims import dim_add, dim_div, dim_mul, floor_div
from ..toolkit.index_rules import require_integer
from ..toolkit.partial import (
    INT64_MAX,
    as_bounds,
    check_rank_at_most_1,
    dynamic_like,
    input_ints,
    moved_value,
    shape_of_value,
    unknown_dims,
)

I32, I64 = ELEMENT_TYPES["i32"], ELEMENT_TYPES["i64"]
ONE = Dim(1, 1)


def _static_or_none(shape: PartialShape) -> tuple[int, ...] | None:
    return shape.to_shape() if shape.is_static else None


# -- ShapeOf ------------------------------------------------------------------------------------------------

def _infer_shape_of(ctx: OpContext, version: int):
    et = I64 if version == 1 else ctx.attr_choice("output_type", {"i32": I32, "i64": I64}, I64)
    rank = ctx.inputs[0].shape.rank
    dims = (DYNAMIC_DIM,) if rank is None else (Dim(rank, rank),)
    return [TensorSpec(et, PartialShape(dims))], {"dtype": et}


def shape_of(data: np.ndarray, *, dtype: ElementType) -> np.ndarray:
    """The input's shape as a 1-D integer array (i32 wraps dims above its range, as the reference casts)."""
    return np.array(data.shape, dtype=np.int64).astype(dtype.dtype)


def _value_shape_of(ctx: OpContext):
    value = shape_of_value(ctx.inputs[0].shape)
    if value is not None and ctx.attr("output_type") == "i32" and any(d.hi is None or d.hi > 2**31 - 1 for d in value):
        value = tuple(d if d.hi is not None and d.hi <= 2**31 - 1 else Dim(min(d.lo, 2**31 - 1), None) for d in value)
    return [value]


# -- Reshape ------------------------------------------------------------------------------------------------

def _pattern_dims(ctx: OpContext, bounds: list[tuple[int, int]]) -> tuple[list[Dim], int | None]:
    """Reshape's target as dims (bounds as OpenVINO reads them) and the position of its -1."""
    dims, minus_one = [], None
    for i, (lo, hi) in enumerate(bounds):
        if (lo, hi) == (-1, -1):
            if minus_one is not None:
                ctx.fail("more than one dimension of the target shape is -1", position=1)
            minus_one = i
        if lo > -1 or (lo == -1 and hi >= -1):
            dims.append(Dim(max(lo, 0), None if hi < 0 or (hi == INT64_MAX and lo < hi) else hi))  # (exact: a dim)
        elif (lo < 0) != (hi < 0):
            dims.append(DYNAMIC_DIM)
        else:
            ctx.fail(f"target shape element {i} is {lo if lo == hi else f'{lo}..{hi}'}: only -1 may be negative",
                     position=1)
    return dims, minus_one


def _infer_reshape(ctx: OpContext):
    data, pattern = ctx.inputs
    require_integer(ctx, 1, "shape")
    prank = pattern.shape.rank
    if prank is not None and prank > 1:
        ctx.fail(f"the target shape must be 1-D or a scalar, got shape {pattern.shape.brief()}", position=1)
    special_zero = ctx.attr_bool("special_zero", False)
    value = ctx.partial_value(1)
    if value is None:
        if prank == 0:
            out = PartialShape(())
        elif prank == 1 and pattern.shape.dims[0].is_static:
            out = PartialShape(unknown_dims(ctx, pattern.shape.dims[0].lo, 1))
        else:
            out = PartialShape(None)
        return [TensorSpec(data.element_type, out)], {"shape": None}
    pattern_dims, minus_one = _pattern_dims(ctx, as_bounds(value))
    if prank == 0:
        if pattern_dims[0] != ONE:
            ctx.fail(f"a scalar target shape must be 1, got {pattern_dims[0]}", position=1)
        pattern_dims = []
    out = _reshape_dims(ctx, data.shape, pattern_dims, minus_one, special_zero)
    return [TensorSpec(data.element_type, out)], {"shape": _static_or_none(out)}


def _reshape_dims(ctx: OpContext, shape: PartialShape, pattern: list[Dim], minus_one: int | None,
                  special_zero: bool) -> PartialShape:
    zero = Dim(0, 0)
    ins, outs, dims = [], [], []
    infinite = False
    if shape.dims is None:
        for d in pattern:
            if special_zero and d == zero:
                dims.append(DYNAMIC_DIM)
                infinite = True
            else:
                dims.append(d)
                outs.append(d)
    else:
        for i, d in enumerate(pattern):
            ignored = special_zero and d == zero
            if i == minus_one:
                dims.append(DYNAMIC_DIM)
            elif ignored:
                if i >= len(shape.dims):
                    ctx.fail(f"target shape element {i} is 0 with special_zero, beyond the input's rank"
                             f" {len(shape.dims)}", position=1)
                dims.append(shape.dims[i])
            else:
                dims.append(d)
                outs.append(d)
            if i < len(shape.dims) and not ignored:
                ins.append(shape.dims[i])
        ins.extend(shape.dims[len(pattern):])
    in_static, in_dynamic, out_static, out_dynamic = _products(ins, outs)
    if infinite:
        in_dynamic = out_dynamic = DYNAMIC_DIM
    if minus_one is not None:
        dims[minus_one] = _minus_one(ctx, in_static, in_dynamic, out_static, out_dynamic)
    out = PartialShape(tuple(dims))
    if shape.is_static and out.is_static and minus_one is None and not (special_zero and zero in pattern):
        if in_static != out_static:
            count = math.prod(d.lo for d in shape.dims)  # (in_static: after cancelling equal dims)
            ctx.fail(f"the target shape {out.brief()} does not have the {count} elements of the input"
                     f" {shape.brief()}", position=1)
    return out


def _products(ins: list[Dim], outs: list[Dim]) -> tuple[Dim, Dim, Dim, Dim]:
    """Static and dynamic products of the input and output dims, equal static dims cancelled pairwise."""
    outs = list(outs)
    in_static = in_dynamic = out_static = out_dynamic = ONE
    for d in ins:
        if d.is_static and d.lo != 0 and d in outs:
            outs.remove(d)
        elif d.is_static:
            in_static = dim_mul(in_static, d)
        else:
            in_dynamic = dim_mul(in_dynamic, d)
    for d in outs:
        if d.is_static:
            out_static = dim_mul(out_static, d)
        else:
            out_dynamic = dim_mul(out_dynamic, d)
    if in_static != out_static:
        in_dynamic = dim_mul(in_dynamic, in_static)
        out_dynamic = dim_mul(out_dynamic, out_static)
    return in_static, in_dynamic, out_static, out_dynamic


def _minus_one(ctx: OpContext, in_static: Dim, in_dynamic: Dim, out_static: Dim, out_dynamic: Dim) -> Dim:
    if in_dynamic.is_static and out_dynamic.is_static:
        resolved = DYNAMIC_DIM if out_dynamic.lo == 0 else dim_div(in_dynamic, out_dynamic.lo)
    else:
        if in_dynamic.hi is not None and out_dynamic.lo != 0 and out_dynamic != DYNAMIC_DIM:
            hi = in_dynamic.hi // out_dynamic.lo
        else:
            hi = None
        lo = in_dynamic.lo
        if out_dynamic.hi != 0:
            lo = -(-in_dynamic.lo // (INT64_MAX if out_dynamic.hi is None else out_dynamic.hi))
        resolved = None if hi is not None and lo > hi else Dim(lo, hi)
    if out_static.lo == 0 and out_static.is_static:
        if in_static != Dim(0, 0):
            ctx.fail("cannot infer the -1 dimension: the other target dims have no element and the input has",
                     position=1)
        return resolved if resolved is not None else DYNAMIC_DIM
    if resolved is None:
        ctx.fail("the target dims other than -1 do not evenly divide the input's dims", position=1)
    return resolved


def _reshape_at_run(ctx: OpContext, arrays: tuple[np.ndarray, ...]) -> dict | None:
    """Reshape's parameters for known arrays (``OpDef.at_run``) in the plain cases: data with elements, a 1-D
    integer target of positive dims, at most one -1, and 0s kept from the data under ``special_zero``."""
    data, pattern = arrays
    if pattern.ndim != 1 or pattern.dtype.kind not in "iu" or data.size == 0:
        return None
    special_zero = ctx.attr_bool("special_zero", False)
    dims, minus_one = pattern.tolist(), None
    for i, d in enumerate(dims):
        if d == 0 and special_zero and i < data.ndim:
            dims[i] = data.shape[i]
        elif d == -1 and minus_one is None:
            minus_one = i
            dims[i] = 1
        elif d <= 0:
            return None
    others = math.prod(dims)
    if minus_one is not None and data.size % others == 0:
        dims[minus_one] = data.size // others
    elif minus_one is not None or others != data.size:
        return None
    return {"shape": tuple(dims)}


def reshape(data: np.ndarray, pattern: np.ndarray, *, shape: tuple[int, ...]) -> np.ndarray:
    """``data`` viewed with the inferred shape, or copied when a view cannot have it (a Transpose's view:
    :func:`~ir_runner.strided_copy.c_ordered_copy`). A zero-element input whose kept dims
    (``special_zero``) give a non-empty shape is an InputError (OpenVINO infers that shape and its reference
    returns garbage)."""
    if data.size != math.prod(shape):
        raise InputError(f"cannot reshape {data.size} elements (shape {list(data.shape)}) into {list(shape)}",
                         port="input 0 (data)")
    if data.flags.c_contiguous:
        return data.reshape(shape)
    try:
        return np.reshape(data, shape, copy=False)
    except ValueError:  # a copy is needed
        return c_ordered_copy(data).reshape(shape)
    except TypeError:  # (numpy 2.0: no copy keyword; numpy's own copy)
        return data.reshape(shape)


def _value_reshape(ctx: OpContext):
    out = ctx.op.infer(ctx)[0][0].shape
    if not out.is_static or len(out.dims) > 1:
        return [None]
    return [moved_value(ctx, 0, lambda a: a.reshape(out.to_shape()))]


# -- Squeeze / Unsqueeze ------------------------------------------------------------------------------------

def _infer_squeeze(ctx: OpContext):
    data = ctx.inputs[0]
    shape = data.shape
    axes: set[int] | None = set()
    if len(ctx.inputs) == 2:
        require_integer(ctx, 1, "axes")
        check_rank_at_most_1(ctx, 1, "axes")
        axes = None
        axes_shape = ctx.inputs[1].shape
        if shape.dims is not None and axes_shape.is_static:
            values = input_ints(ctx, 1)
            if values is not None:
                axes = {normalise_axis(ctx, a, len(shape.dims), position=1) for a in values}
            elif shape.dims and int(np.prod(axes_shape.to_shape())) == 1:
                if any(d.contains(1) for d in shape.dims):
                    out = PartialShape((DYNAMIC_DIM,) * (len(shape.dims) - 1))
                else:
                    out = shape
                return [TensorSpec(data.element_type, out)], {"shape": None}
    if shape.dims is None or axes is None:
        return [TensorSpec(data.element_type, PartialShape(None))], {"shape": None}
    if not axes:
        if any(not d.is_static and d.contains(1) for d in shape.dims):
            return [TensorSpec(data.element_type, PartialShape(None))], {"shape": None}
        dims = tuple(d for d in shape.dims if not d.contains(1))
    else:
        dims = tuple(d for i, d in enumerate(shape.dims) if i not in axes or not d.contains(1))
    out = PartialShape(dims)
    return [TensorSpec(data.element_type, out)], {"shape": _static_or_none(out)}


def _infer_squeeze15(ctx: OpContext):
    """Squeeze-15: Squeeze-1's rules, but axes known only at run time give a dynamic rank (unless no dim of the
    data can be 1 and at least one axis is given: then the data's shape), and so does, with
    ``allow_axis_skip``, an axis whose dim is dynamic (and may be 1), as OpenVINO infers (a static dim other
    than 1 is kept, as in Squeeze-1)."""
    outs, params = _infer_squeeze(ctx)
    if len(ctx.inputs) == 2:
        dims, values = ctx.inputs[0].shape.dims, input_ints(ctx, 1)
        skip = ctx.attr_bool("allow_axis_skip", False)
        axes = ctx.inputs[1].shape
        given = axes.is_static and all(d.lo > 0 for d in axes.dims)  # (at least one axis: none squeezes all 1s)
        if values is None and dims and given and not any(d.contains(1) for d in dims):
            data = ctx.inputs[0]  # no dim can be 1: nothing to squeeze, whatever the axes (as OpenVINO)
            return [data], {"shape": _static_or_none(data.shape)}
        if values is None or skip and dims is not None and any(
                not dims[a % len(dims)].is_static and dims[a % len(dims)].contains(1) for a in values):
            return [TensorSpec(outs[0].element_type, PartialShape(None))], {"shape": None}
    return outs, params


def _infer_unsqueeze(ctx: OpContext):
    data = ctx.inputs[0]
    require_integer(ctx, 1, "axes")
    check_rank_at_most_1(ctx, 1, "axes")
    values = input_ints(ctx, 1)
    shape = data.shape
    if values is None or shape.dims is None:
        out = PartialShape(None)  # (OpenVINO 2026 infers a dynamic rank even for one axis)
        return [TensorSpec(data.element_type, out)], {"shape": None}
    if not values:
        ctx.fail("axes must not be empty", position=1)
    unique = set(values)
    rank = len(shape.dims) + len(unique)
    dims = list(shape.dims)
    for axis in sorted({normalise_axis(ctx, a, rank, position=1) for a in unique}):
        if axis <= len(dims):
            dims.insert(axis, ONE)
        else:
            dims.append(ONE)
    out = PartialShape(tuple(dims))
    return [TensorSpec(data.element_type, out)], {"shape": _static_or_none(out)}


def _unsqueeze_at_run(_ctx: OpContext, arrays: tuple[np.ndarray, ...]) -> dict | None:
    """Unsqueeze's parameters for known arrays (``OpDef.at_run``) in the plain cases: integer axes of rank 0
    or 1, in range, none the same axis as another once normalised."""
    data, axes = arrays
    if axes.ndim > 1 or axes.dtype.kind not in "iu" or axes.size == 0:
        return None
    unique = set(axes.reshape(-1).tolist())
    rank = data.ndim + len(unique)
    normal = {axis + rank if axis < 0 else axis for axis in unique}
    if len(normal) != len(unique) or not all(0 <= axis < rank for axis in normal):
        return None
    dims = list(data.shape)
    for axis in sorted(normal):
        dims.insert(axis, 1)
    return {"shape": tuple(dims)}


def squeeze(data: np.ndarray, axes: np.ndarray | None = None, *, shape: tuple[int, ...]) -> np.ndarray:
    """``data`` viewed with the inferred shape (dims of 1 removed)."""
    return data.reshape(shape)


def unsqueeze(data: np.ndarray, axes: np.ndarray, *, shape: tuple[int, ...]) -> np.ndarray:
    """``data`` viewed with the inferred shape (dims of 1 inserted)."""
    return data.reshape(shape)


# -- Concat -------------------------------------------------------------------------------------------------

def _infer_concat(ctx: OpContext):
    axis_attr = ctx.attr_int("axis", 0)
    if ctx.attr("axis") is None:
        ctx.fail("the required attribute 'axis' is missing")
    et = _merged_type(ctx, range(len(ctx.inputs)))
    out_dims: list[Dim] | None = None
    total = Dim(0, 0)
    axis = None
    for i, spec in enumerate(ctx.inputs):
        if spec.shape.dims is None:
            total = dim_add(total, DYNAMIC_DIM)
            continue
        rank = len(spec.shape.dims)
        if rank == 0:
            ctx.fail("Concat inputs must not be scalars", position=i)
        axis = normalise_axis(ctx, axis_attr, rank)
        total = dim_add(total, spec.shape.dims[axis])
        dims = list(spec.shape.dims)
        dims[axis] = DYNAMIC_DIM
        if out_dims is None:
            out_dims = dims
            continue
        if len(dims) != len(out_dims):
            ctx.fail(f"input {i} has rank {rank}, an earlier input {len(out_dims)}: inputs must have one rank",
                     position=i)
        merged = [merge_dims(a, b) for a, b in zip(out_dims, dims)]
        if None in merged:
            ctx.fail("input shapes must be equal except along the concatenation axis", position=i)
        out_dims = merged
    if out_dims is None:
        return [TensorSpec(et, PartialShape(None))], {"axis": None}
    out_dims[axis] = total
    return [TensorSpec(et, PartialShape(tuple(out_dims)))], {"axis": axis}


def _merged_type(ctx: OpContext, positions) -> object:
    et = None
    for i in positions:
        t = ctx.inputs[i].element_type
        if t.kind == "dynamic":
            continue
        if et is None:
            et = t
        elif t != et:
            ctx.fail(f"inputs must have one element type, got {et} and {t}", position=i)
    return et if et is not None else ctx.inputs[0].element_type


def concat(*inputs: np.ndarray, axis: int, out: np.ndarray | None = None) -> np.ndarray:
    """The inputs joined along ``axis`` (a new array, or ``out``); large outputs are copied in slabs over threads,
    cut along the first other axis of 2 or more."""
    shape = list(inputs[0].shape)
    shape[axis] = sum(part.shape[axis] for part in inputs)
    if out is None:
        out = np.empty(shape, inputs[0].dtype)
    cut = next((d for d in range(len(shape)) if d != axis and shape[d] >= 2), None)
    if cut is None or out.size < PARALLEL_MIN_ELEMENTS:
        return np.concatenate(inputs, axis=axis, out=out)

    def work(start: int, stop: int) -> None:
        where = (slice(None),) * cut + (slice(start, stop),)
        np.concatenate([part[where] for part in inputs], axis=axis, out=out[where])

    run_chunked(shape[cut], out.size // shape[cut], work)
    return out


concat.accepts_out = True


def _value_concat(ctx: OpContext):
    if any(spec.shape.rank != 1 for spec in ctx.inputs):
        return [None]
    return [moved_value(ctx, 0, lambda *parts: np.concatenate(parts), tuple(range(1, len(ctx.inputs))))]


# -- Split / VariadicSplit ----------------------------------------------------------------------------------

def _split_axis(ctx: OpContext, shape: PartialShape) -> int | None:
    require_integer(ctx, 1, "axis")
    axis_shape = ctx.inputs[1].shape
    if axis_shape.rank is not None and axis_shape.rank != 0:
        ctx.fail(f"axis must be a scalar, got shape {axis_shape.brief()}", position=1)
    values = input_ints(ctx, 1)
    if values is None or shape.dims is None:
        return None
    return normalise_axis(ctx, values[0], len(shape.dims), position=1)


def _infer_split(ctx: OpContext):
    data = ctx.inputs[0]
    n = ctx.attr_int("num_splits", 0)
    if ctx.attr("num_splits") is None or n <= 0:
        ctx.fail(f"num_splits must be a positive integer, got {ctx.attr_shown('num_splits')}")
    if n != len(ctx.layer.outputs):  # (checked before num_splits specs are made: 2**31 of them fill the memory)
        ctx.fail(f"num_splits={n} gives {n} output(s), the layer declares {len(ctx.layer.outputs)}")
    axis = _split_axis(ctx, data.shape)
    if axis is None:
        out = dynamic_like(data.shape)
        return [TensorSpec(data.element_type, out)] * n, {"axis": None, "sections": n}
    dim = data.shape.dims[axis]
    if dim.is_static and dim.lo % n:
        ctx.fail(f"dim {axis} of the data ({dim.lo}) is not divisible by num_splits={n}")
    if not dim.is_static and dim.hi is not None and dim.hi < n:
        ctx.fail(f"dim {axis} of the data ({dim}) is at most {dim.hi}, fewer than num_splits={n}")
    # OpenVINO's split_shape_infer divides both ends of an interval rounding down (not Dimension's division)
    part = floor_div(dim, n)
    dims = list(data.shape.dims)
    dims[axis] = part
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))] * n, {"axis": axis, "sections": n}


def split(data: np.ndarray, axis_input: np.ndarray, *, axis: int, sections) -> tuple[np.ndarray, ...]:
    """``data`` split along ``axis`` in equal parts or at the given offsets (views)."""
    parts = np.split(data, sections, axis=axis)
    return parts[0] if len(parts) == 1 else tuple(parts)


def _infer_variadic_split(ctx: OpContext):
    data = ctx.inputs[0]
    require_integer(ctx, 2, "split_lengths")
    lengths_shape = ctx.inputs[2].shape
    if lengths_shape.rank is not None and lengths_shape.rank != 1:
        ctx.fail(f"split_lengths must be 1-D, got shape {lengths_shape.brief()}", position=2)
    count = len(ctx.layer.outputs) if lengths_shape.dims is None or not lengths_shape.dims[0].is_static \
        else lengths_shape.dims[0].lo
    axis = _split_axis(ctx, data.shape)
    lengths = input_ints(ctx, 2)
    if axis is None:
        return [TensorSpec(data.element_type, dynamic_like(data.shape))] * count, {"axis": None, "sections": None}
    if lengths is None:
        dims = list(data.shape.dims)
        dims[axis] = DYNAMIC_DIM
        return [TensorSpec(data.element_type, PartialShape(tuple(dims)))] * count, {"axis": axis, "sections": None}
    if lengths.count(-1) > 1:
        ctx.fail("split_lengths may hold at most one -1", position=2)
    if any(v < -1 for v in lengths):
        ctx.fail(f"split_lengths must be >= -1, got {lengths}", position=2)
    dim = data.shape.dims[axis]
    known = sum(v for v in lengths if v != -1)
    if dim.is_static and (known > dim.lo or (-1 not in lengths and known != dim.lo)):
        ctx.fail(f"split_lengths {lengths} add up to {known}, dim {axis} of the data is {dim.lo}", position=2)
    outs = []
    for v in lengths:
        dims = list(data.shape.dims)
        if v == -1:
            dims[axis] = Dim(dim.lo - known, dim.lo - known) if dim.is_static else DYNAMIC_DIM
        else:
            dims[axis] = Dim(v, v)
        outs.append(TensorSpec(data.element_type, PartialShape(tuple(dims))))
    sections = None
    if dim.is_static:
        sizes = [dim.lo - known if v == -1 else v for v in lengths]
        sections = tuple(int(x) for x in np.cumsum(sizes)[:-1])
    return outs, {"axis": axis, "sections": sections}


def variadic_split(data: np.ndarray, axis_input: np.ndarray, lengths: np.ndarray, *, axis: int,
                   sections) -> tuple[np.ndarray, ...]:
    """``data`` split along ``axis`` at the offsets of ``split_lengths`` (views)."""
    parts = np.split(data, list(sections), axis=axis)
    return parts[0] if len(parts) == 1 else tuple(parts)


def _value_split(ctx: OpContext):
    outs, params = ctx.op.infer(ctx)
    if params["axis"] is None or params["sections"] is None or ctx.inputs[0].shape.rank != 1:
        return [None] * len(outs)
    sections = params["sections"]
    return [moved_value(ctx, 0, lambda a, k=k: np.split(a, sections if isinstance(sections, tuple) else sections)[k])
            for k in range(len(outs))]


# -- Transpose ----------------------------------------------------------------------------------------------

def _infer_transpose(ctx: OpContext):
    data, order_spec = ctx.inputs
    require_integer(ctx, 1, "order")
    if order_spec.shape.rank is not None and order_spec.shape.rank > 1:
        ctx.fail(f"order must be 1-D, got shape {order_spec.shape.brief()}", position=1)
    order = input_ints(ctx, 1)
    shape = data.shape
    if order is None:
        # (data of dynamic rank: OpenVINO 2026 keeps it dynamic, whatever the order's length)
        out = dynamic_like(shape) if shape.dims is not None else PartialShape(None)
        return [TensorSpec(data.element_type, out)], {"order": None}
    if shape.dims is None:  # (an empty order: OpenVINO infers rank 0 here)
        return [TensorSpec(data.element_type, PartialShape((DYNAMIC_DIM,) * len(order)))], {
            "order": tuple(order) or None}
    rank = len(shape.dims)
    if not order:
        order = list(range(rank))[::-1]
    if sorted(order) != list(range(rank)):
        ctx.fail(f"order {order} is not a permutation of the {rank} axes of the data", position=1)
    out = PartialShape(tuple(shape.dims[i] for i in order))
    return [TensorSpec(data.element_type, out)], {"order": tuple(order)}


def transpose(data: np.ndarray, order_input: np.ndarray, *, order: tuple[int, ...]) -> np.ndarray:
    """``data`` with its axes permuted (a view)."""
    return data.transpose(order)


def _value_transpose(ctx: OpContext):
    params = ctx.op.infer(ctx)[1]
    if params["order"] is None:
        return [None]
    return [moved_value(ctx, 0, lambda a: a.transpose(params["order"]))]


def _value_squeeze(ctx: OpContext):
    return _value_reshape(ctx)


# -- batch rules --------------------------------------------------------------------------------------------

def _batch_concat(params, inputs, outputs, axes):
    if params["axis"] in axes:
        return "concatenates along the batch axis"
    if len(set(axes)) != 1:
        return "inputs have different batch axes"
    return [axes[0]]


def _batch_transpose(params, inputs, outputs, axes):
    if axes[0] is None:
        return [None]
    return [params["order"].index(axes[0])]


def _batch_split(params, inputs, outputs, axes):
    if axes[0] is None:
        return [None] * len(outputs)
    if params["axis"] is None:
        return "the split axis is only known at run time"
    if params["axis"] == axes[0]:
        return "it splits along the batch axis"
    return [axes[0]] * len(outputs)


def _fit_data(params, inputs: list[TensorSpec], position: int) -> InputFit | None:
    """Generated data: the values pass on unchanged, so what fits them is what fits the output (token ids
    reshaped before an embedding Gather stay inside the vocabulary)."""
    return InputFit("through") if position == 0 else None


_CONCAT_INPUTS = tuple(f"input{i}" for i in range(1024))  # any count from 1 (the contract needs a bound)

OPS = (
    OpDef("ShapeOf", 1, 1, 2, ("data",), lambda ctx: _infer_shape_of(ctx, 1), shape_of, value=_value_shape_of,
          shape_only=True),
    OpDef("ShapeOf", 3, 3, NEWEST_OPSET, ("data",), lambda ctx: _infer_shape_of(ctx, 3), shape_of,
          value=_value_shape_of, shape_only=True, attrs=(Attr("output_type", "i64", ("i32", "i64")),)),
    OpDef("Reshape", 1, 1, LATEST_OPSET, ("data", "shape"), _infer_reshape, reshape, value=_value_reshape,
          views=True, fit=_fit_data, attrs=(Attr("special_zero", "false", ("true", "false")),), batch=reshaped_batch,
          at_run=_reshape_at_run),
    OpDef("Squeeze", 1, 1, 14, ("data", "axes"), _infer_squeeze, squeeze, value=_value_squeeze, views=True,
          fit=_fit_data, min_inputs=1, batch=reshaped_batch),
    OpDef("Squeeze", 15, 15, LATEST_OPSET, ("data", "axes"), _infer_squeeze15, squeeze, value=_value_squeeze,
          views=True, fit=_fit_data, min_inputs=1, attrs=(Attr("allow_axis_skip", "false", ("true", "false")),),
          batch=reshaped_batch),
    OpDef("Unsqueeze", 1, 1, LATEST_OPSET, ("data", "axes"), _infer_unsqueeze, unsqueeze, value=_value_squeeze,
          views=True, fit=_fit_data, batch=reshaped_batch, at_run=_unsqueeze_at_run),
    OpDef("Concat", 1, 1, LATEST_OPSET, _CONCAT_INPUTS, _infer_concat, concat,
          roles=("data",) * len(_CONCAT_INPUTS), value=_value_concat, batch=_batch_concat, attrs=(Attr("axis"),),
          min_inputs=1),
    OpDef("Split", 1, 1, LATEST_OPSET, ("data", "axis"), _infer_split, split, attrs=(Attr("num_splits"),),
          value=_value_split, views=True, batch=_batch_split),
    OpDef("VariadicSplit", 1, 1, LATEST_OPSET, ("data", "axis", "split_lengths"), _infer_variadic_split,
          variadic_split, value=_value_split, views=True, batch=_batch_split),
    OpDef("Transpose", 1, 1, LATEST_OPSET, ("data", "order"), _infer_transpose, transpose,
          value=_value_transpose, views=True, batch=_batch_transpose),
)
