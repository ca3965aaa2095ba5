"""Slice-8, StridedSlice-1 (begin/end/new_axis/shrink_axis/ellipsis masks, negative strides) and SliceScatter-15.

Both return views (numpy basic indexing; ``views=True``); the reference's clamping of start/stop is
Python's slice clamping. Output dims follow OpenVINO's ``shape_infer``, start/stop read as bounds: a
slice whose stop is computed from ShapeOf gets the interval OpenVINO declares (``make_dim`` and
``get_sliced_value`` of ``slice_shape_inference_utils.hpp``, re-derived here on Python integers).
Steps (strides) and Slice's axes must be known exactly, as in OpenVINO. A begin/end known only at run time
gives the dims OpenVINO 2026 infers: masked elements need no value, the others slice at most every
``|stride|``-th element, and when every dim of the begin/end elements would come out static the last masked
slice gets that unknown-values dim too.

Deviation: a StridedSlice element that is both the ellipsis and a new/shrunk axis is read as the ellipsis, as
OpenVINO's shape inference and CPU plugin do; the reference's slice plan reads it as the new/shrunk axis and
returns a tensor of another shape than the inferred one (or reads outside the data).

SliceScatter-15 (``torch.slice_scatter``, in-place slice assignment of converted PyTorch models): the data with
the slice ``start:stop:step`` along ``axes`` (as Slice-8 takes it) replaced by ``updates``, whose shape must be
the slice's. Output: the data's shape (its rank merged with the updates'). Bit-exact for every element type
(data movement). OpenVINO's wheel has no reference evaluate: compared with the CPU plugin (which writes garbage
when start/stop come at run time; ir-run re-plans per value instead).
"""

from __future__ import annotations

import numpy as np

from ...errors import IndexOutOfRangeError, InputError, KernelError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.axes import normalise_axis
from ..toolkit.dims import compatible
from ..toolkit.index_rules import require_integer
from ..toolkit.partial import INT64_MAX, INT64_MIN, as_bounds, input_ints, moved_value

_INF = -1  # OpenVINO's inf_bound in sliced-value arithmetic


def _sliced_value(dim: int, start: int, stop: int, step: int) -> int:
    """How many elements ``start:stop:step`` takes of a dim of length ``dim`` (``_INF``: unbounded), bounds
    at the int64 limits standing for 'unknown' as in OpenVINO; ``_INF`` when unbounded."""
    reverse = step < 0
    length = INT64_MAX if dim == _INF else dim
    unbounded = length == INT64_MAX
    start_negative = start < 0
    start_max, stop_max = start == INT64_MAX, stop == INT64_MAX
    start_limit = start_max or start == INT64_MIN
    if unbounded and (start_negative != (stop < 0) or start_max or stop_max or start_limit):
        if reverse:
            upper = _INF if start_negative or start_max or stop_max else _INF - start
        elif start_negative and not start_limit:
            upper = -start if stop_max else stop
        else:
            upper = _INF
        lower = 0
    else:
        lower = min(max(start + length if start < 0 else start, 0), length - 1 if reverse else length)
        upper = min(max(stop + length if stop < 0 else stop, _INF if reverse else 0), length)
    if unbounded and lower == 0 and upper == _INF:
        return _INF
    taken = min(0, upper - lower) if reverse else max(0, upper - lower)
    if step == -1:
        return -taken
    if taken != 0 and step != 1:
        taken = taken + 1 if reverse else taken - 1
        quotient = abs(taken) // abs(step)  # C++ division truncates towards zero
        taken = -quotient if (taken < 0) != (step < 0) else quotient
        taken += 1
    return taken


def _sliced_dim(dim: Dim, start: tuple[int, int], stop: tuple[int, int], step: int) -> Dim:
    """The dim ``start:stop:step`` leaves of ``dim``, with start/stop given as (lower, upper) bounds."""
    dim_max = _INF if dim.hi is None else dim.hi

    def lower_end(b: tuple[int, int]) -> int:
        crosses = b[0] < 0 <= b[1]
        return 0 if crosses and (dim.hi is None or b[0] + dim.hi >= 0) else b[0]

    def upper_end(b: tuple[int, int]) -> int:
        crosses = b[0] < 0 <= b[1]
        return -1 if crosses and (dim.hi is None or b[1] < dim.hi) else b[1]

    if step > 0:
        lo = _sliced_value(dim.lo, upper_end(start), lower_end(stop), step)
        hi = _sliced_value(dim_max, lower_end(start), upper_end(stop), step)
    else:
        lo = _sliced_value(dim.lo, lower_end(start), upper_end(stop), step)
        hi = _sliced_value(dim_max, upper_end(start), lower_end(stop), step)
    lo = max(lo, 0)
    if hi != _INF and lo > hi:  # (OpenVINO's Dimension of an empty interval is fully dynamic)
        return DYNAMIC_DIM
    return Dim(lo, None if hi == _INF else hi)


def _unknown_slice(dim: Dim, step: int | None) -> Dim:
    """What OpenVINO infers for a slice of ``dim`` whose start or stop it does not know: at most every
    ``|step|``-th element."""
    if step is None or dim.hi is None:
        return Dim(0, dim.hi)
    return Dim(0, -(-dim.hi // abs(step)))


def _check_1d(ctx: OpContext, position: int, name: str) -> None:
    require_integer(ctx, position, name)
    rank = ctx.inputs[position].shape.rank
    if rank is not None and rank != 1:
        ctx.fail(f"{name} must be 1-D, got shape {ctx.inputs[position].shape.brief()}", position=position)


_I32_LIMITS = {-(2**31): INT64_MIN, 2**31 - 1: INT64_MAX}


def _bounds(ctx: OpContext, position: int) -> list[tuple[int, int]] | None:
    """The (lower, upper) bounds of a start/stop input; an i32 input's limits read as int64's, as OpenVINO
    reads them (an i32 stop of 2**31 - 1 slices to the end of an unbounded dim)."""
    value = ctx.partial_value(position)
    if value is None:
        return None
    bounds = as_bounds(value)
    if ctx.inputs[position].element_type.name == "i32":
        bounds = [(_I32_LIMITS.get(lo, lo), _I32_LIMITS.get(hi, hi)) for lo, hi in bounds]
    return bounds


# -- Slice --------------------------------------------------------------------------------------------------

def infer_slice(ctx: OpContext):
    data = ctx.inputs[0]
    names = ("start", "stop", "step", "axes")
    for i in range(1, len(ctx.inputs)):
        _check_1d(ctx, i, names[i - 1])
        n = ctx.inputs[i].shape.dims[0] if ctx.inputs[i].shape.dims else None
        if data.shape.dims is not None and n is not None and n.lo > len(data.shape.dims):
            ctx.fail(f"{names[i - 1]} has more elements than the data has dims", position=i)
    shape = data.shape
    if shape.dims is None:
        return [TensorSpec(data.element_type, PartialShape(None))], {"slices": None}
    rank = len(shape.dims)
    start, stop, steps = _bounds(ctx, 1), _bounds(ctx, 2), input_ints(ctx, 3)
    lengths = {name: len(values) for name, values in (("start", start), ("stop", stop), ("step", steps))
               if values is not None}
    axes: list[int] | None = None
    if len(ctx.inputs) == 5:
        given = input_ints(ctx, 4)
        if given is not None:
            lengths["axes"] = len(given)
            axes = [normalise_axis(ctx, a, rank, position=4) for a in given]
            if len(set(axes)) != len(axes):
                ctx.fail(f"axes {given} must be unique", position=4)
    elif start is not None:
        axes = list(range(len(start)))
    if len(set(lengths.values())) > 1:  # (those known: start known alone at load had no one to compare with)
        ctx.fail("start, stop, step and axes must have one length, got "
                 + ", ".join(f"{name} {length}" for name, length in lengths.items()))
    if steps is not None and 0 in steps:
        ctx.fail("step must not be zero", position=3)
    dims = []
    for d_index, dim in enumerate(shape.dims):
        if axes is None:
            dims.append(Dim(0, dim.hi))
        elif d_index in axes:
            i = axes.index(d_index)
            if start is not None and stop is not None and steps is not None:
                dims.append(_sliced_dim(dim, start[i], stop[i], steps[i]))
            else:
                dims.append(Dim(0, dim.hi))
        else:
            dims.append(dim)
    slices = None
    exact_start, exact_stop = input_ints(ctx, 1), input_ints(ctx, 2)
    if axes is not None and exact_start is not None and exact_stop is not None and steps is not None:
        chosen = [(None, None, None)] * rank
        for i, axis in enumerate(axes):
            chosen[axis] = (exact_start[i], exact_stop[i], steps[i])
        slices = tuple(chosen)
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], {"slices": slices}


def _slice_at_run(_ctx: OpContext, arrays: tuple[np.ndarray, ...]) -> dict | None:
    """Slice's parameters for known arrays (``OpDef.at_run``) in the plain cases: 1-D integer start, stop,
    step (none 0) and axes of one length, at most the data's rank, the axes in range and unique."""
    data, *given = arrays
    if any(array.ndim != 1 or array.dtype.kind not in "iu" for array in given):
        return None
    start, stop, steps, *axes = (array.tolist() for array in given)
    rank, count = data.ndim, len(start)
    axes = axes[0] if axes else list(range(count))
    if count > rank or not len(stop) == len(steps) == len(axes) == count or 0 in steps:
        return None
    axes = [axis + rank if axis < 0 else axis for axis in axes]
    if len(set(axes)) != count or not all(0 <= axis < rank for axis in axes):
        return None
    chosen = [(None, None, None)] * rank
    for axis, first, last, step in zip(axes, start, stop, steps):
        chosen[axis] = (first, last, step)
    return {"slices": tuple(chosen)}


def clamped(start: int | None, stop: int | None, step: int | None, length: int) -> slice:
    """``start:stop:step`` as a numpy slice taking what OpenVINO's reference takes: a negative step whose
    start lies before the dim's first element starts at that element (numpy would take nothing)."""
    if step is not None and step < 0 and start is not None and start < -length:
        start = 0
    return slice(start, stop, step)


def slice_kernel(data: np.ndarray, *inputs: np.ndarray, slices) -> np.ndarray:
    """``data[start:stop:step, ...]`` per axis (a view)."""
    return data[tuple(clamped(*s, n) for s, n in zip(slices, data.shape))]


def _batch_slice(params, inputs, outputs, axes):
    """Keeps the rows when it takes every one of them, in order, at every block size (its stop may be
    computed from the block's shape)."""
    axis = axes[0]
    if axis is None:
        return [None]
    if params["slices"] is None or not inputs[0].shape.is_static:
        return "what it takes along the batch axis is only known at run time"
    rows = inputs[0].shape.to_shape()[axis]
    if clamped(*params["slices"][axis], rows).indices(rows) != (0, rows, 1):
        return f"it slices the batch axis ({rows} rows), so each block would take its own part"
    return [axis]


def _value_slice(ctx: OpContext):
    params = ctx.op.infer(ctx)[1]
    if params["slices"] is None:
        return [None]
    return [moved_value(ctx, 0, lambda a: slice_kernel(a, slices=params["slices"]))]


# -- StridedSlice -------------------------------------------------------------------------------------------

def _mask(ctx: OpContext, name: str, required: bool) -> set[int]:
    values = ctx.attr_ints(name, None if required else [])
    return {i for i, v in enumerate(values) if v == 1}


def _infer_strided_slice(ctx: OpContext):
    data = ctx.inputs[0]
    for i, name in enumerate(("begin", "end", "stride")[: len(ctx.inputs) - 1], start=1):
        _check_1d(ctx, i, name)
    begin_mask, end_mask = _mask(ctx, "begin_mask", True), _mask(ctx, "end_mask", True)
    new_axis, shrink = _mask(ctx, "new_axis_mask", False), _mask(ctx, "shrink_axis_mask", False)
    ellipsis = _mask(ctx, "ellipsis_mask", False)
    if len(ellipsis) > 1:
        ctx.fail("at most one ellipsis is allowed (ellipsis_mask)")
    shape = data.shape
    if shape.dims is None:
        return [TensorSpec(data.element_type, PartialShape(None))], {"index": None}
    rank = len(shape.dims)
    begin, end = _bounds(ctx, 1), _bounds(ctx, 2)
    strides = input_ints(ctx, 3) if len(ctx.inputs) == 4 else ([1] * len(begin) if begin is not None else None)

    def count(position: int) -> int | None:
        s = ctx.inputs[position].shape
        return s.dims[0].lo if s.dims is not None and s.dims[0].is_static else None

    n = count(1)
    end_n = count(2)
    if n is not None and end_n is not None and n != end_n:
        ctx.fail(f"begin and end must have one length, got {n} and {end_n}")
    n = n if n is not None else end_n
    if strides is not None:
        if n is not None and n != len(strides):
            ctx.fail(f"stride must have the length of begin and end ({n}), it has {len(strides)}")
        n = len(strides)
    if n is None:
        return [TensorSpec(data.element_type, PartialShape(None))], {"index": None}
    if not ellipsis and rank + len(new_axis) < n:
        ctx.fail(f"begin/end have {n} elements, more than the data's rank {rank} plus new axes")
    if strides is not None and 0 in strides:
        ctx.fail("stride must not be zero", position=3)
    dims: list[Dim] = []
    at = 0
    last_slice = None
    for axis in range(n):
        if axis in ellipsis:
            before = sum(1 for i in range(axis) if i not in new_axis)
            new_after = sum(1 for i in range(axis + 1, len(begin)) if i in new_axis) if begin is not None else 0
            hidden = rank - (n - axis - new_after - 1) - before
            for _ in range(hidden):
                dims.append(shape.dims[at])
                at += 1
        elif axis in new_axis:
            dims.append(Dim(1, 1))
        elif axis in shrink:
            at += 1
        else:
            if at >= rank:
                ctx.fail(f"begin/end element {axis} goes past the data's rank {rank}")
            dim = shape.dims[at]
            stride = None if strides is None else strides[axis]
            length = INT64_MAX if dim.hi is None else dim.hi
            # a masked begin/end needs no value (OpenVINO reads begin and end per element)
            if axis in begin_mask:
                start = None if stride is None else (length, length) if stride < 0 else (0, 0)
            else:
                start = None if begin is None else begin[axis]
            if axis in end_mask:
                stop = None if stride is None else (_INF - length,) * 2 if stride < 0 else (length, length)
            else:
                stop = None if end is None else end[axis]
            if start is None or stop is None or stride is None:
                dims.append(_unknown_slice(dim, stride))
            else:
                dims.append(_sliced_dim(dim, start, stop, stride))
                last_slice = (len(dims) - 1, dim, stride)
            at += 1
    if (begin is None or end is None) and last_slice is not None and all(d.is_static for d in dims):
        # OpenVINO (2026) infers no all-static dims for the begin/end elements from values it does not know, even
        # where masks make them unneeded: the last slice taken from the masks then gets the dim of unknown values
        position, dim, stride = last_slice
        dims[position] = _unknown_slice(dim, stride)
    dims.extend(shape.dims[at:])
    index = _index(ctx, n, begin_mask, end_mask, new_axis, shrink, ellipsis, strides)
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], {"index": index}


def _index(ctx: OpContext, n: int, begin_mask, end_mask, new_axis, shrink, ellipsis, strides):
    """The numpy index of a slice known exactly: per element ('s', start, stop, step), ('n',) a new
    axis, ('i', position) a shrunk axis, ('e',) the ellipsis."""
    begin, end = input_ints(ctx, 1), input_ints(ctx, 2)
    if begin is None or end is None or strides is None:
        return None
    items = []
    for axis in range(n):
        if axis in ellipsis:
            items.append(("e",))
        elif axis in new_axis:
            items.append(("n",))
        elif axis in shrink:
            items.append(("i", begin[axis]))
        else:
            items.append(("s", None if axis in begin_mask else begin[axis], None if axis in end_mask else end[axis],
                          strides[axis]))
    return tuple(items)


def strided_slice(data: np.ndarray, *inputs: np.ndarray, index) -> np.ndarray:
    """``data`` indexed with the masks resolved (a view)."""
    key = []
    reads = [item[0] in "is" for item in index]  # items that consume a data axis
    ellipsis = next((i for i, item in enumerate(index) if item[0] == "e"), len(index))
    for i, item in enumerate(index):
        kind = item[0]
        if kind == "e":
            key.append(Ellipsis)
        elif kind == "n":
            key.append(None)
        else:
            axis = sum(reads[:i]) if i < ellipsis else data.ndim - sum(reads[i:])
            length = data.shape[axis] if 0 <= axis < data.ndim else 0
            if kind == "s":
                key.append(clamped(item[1], item[2], item[3], length))
                continue
            if not -length <= item[1] < length:  # (the reference asserts so: a shrunk axis is not clamped)
                raise IndexOutOfRangeError(
                    f"StridedSlice: begin element {i} ({item[1]}) shrinks data axis {axis} of length {length}, and"
                    f" lies outside [{-length}, {length - 1}] (data {list(data.shape)})", port="input 1 (begin)")
            key.append(item[1])
    if Ellipsis not in key:
        key.append(Ellipsis)
    try:
        return data[tuple(key)]
    except IndexError as exc:
        raise KernelError(f"StridedSlice of data {list(data.shape)}: {exc}") from None


def _value_strided_slice(ctx: OpContext):
    params = ctx.op.infer(ctx)[1]
    if params["index"] is None:
        return [None]
    return [moved_value(ctx, 0, lambda a: strided_slice(a, index=params["index"]))]


# -- SliceScatter-15 ---------------------------------------------------------------------------------------

class _SliceView:
    """SliceScatter's context seen as a Slice-8's (data, start, stop, step[, axes]): positions 2.. read as 1.."""

    def __init__(self, ctx: OpContext, shape: PartialShape) -> None:
        self._ctx = ctx
        self.inputs = [TensorSpec(ctx.inputs[0].element_type, shape)] + list(ctx.inputs[2:])

    def _real(self, position: int) -> int:
        return position if position == 0 else position + 1

    def const_value(self, position: int):
        return self._ctx.const_value(self._real(position))

    def partial_value(self, position: int):
        return self._ctx.partial_value(self._real(position))

    def fail(self, detail: str, *, position: int | None = None, hint: str | None = None):
        self._ctx.fail(detail, position=None if position is None else self._real(position), hint=hint)


def infer_slice_scatter(ctx: OpContext):
    data, updates = ctx.inputs[0], ctx.inputs[1]
    et = ctx.common_element_type(0, 1)
    shape = data.shape
    if shape.rank is None and updates.shape.rank is not None:
        shape = PartialShape((DYNAMIC_DIM,) * updates.shape.rank)
    elif shape.rank is not None and updates.shape.rank is not None and shape.rank != updates.shape.rank:
        ctx.fail(f"data {shape.brief()} and updates {updates.shape.brief()} must have one rank", position=1)
    if shape.rank == 0:
        ctx.fail("data and updates must not be scalars", position=0)
    (expected,), params = infer_slice(_SliceView(ctx, shape))
    if expected.shape.rank is not None and updates.shape.rank is not None:
        for axis, (want, got) in enumerate(zip(expected.shape.dims, updates.shape.dims)):
            if not compatible(want, got):
                ctx.fail(f"updates {updates.shape.brief()} do not fit the slice {expected.shape.brief()} (dim"
                         f" {axis})", position=1)
    return [TensorSpec(et, shape)], params


def slice_scatter(data: np.ndarray, updates: np.ndarray, *inputs: np.ndarray, slices) -> np.ndarray:
    """SliceScatter-15 (exact): a copy of ``data`` whose slice is ``updates``."""
    index = tuple(clamped(*s, n) for s, n in zip(slices, data.shape))
    out = data.copy()
    target = out[index]
    if target.shape != updates.shape:
        raise InputError(f"SliceScatter: updates {list(updates.shape)} do not fit the slice {list(target.shape)}",
                         port="input 1 (updates)")
    target[...] = updates
    return out


def _slice_scatter_batch(params, inputs, outputs, axes):
    if axes[0] is None or axes[0] != axes[1] or any(a is not None for a in axes[2:]):
        return "data and updates must both carry the batch axis at one place, and nothing else"
    slices = params.get("slices")
    if slices is None or slices[axes[0]] != (None, None, None):
        return "slices along the batch axis"
    return [axes[0]]



OPS = (
    OpDef("Slice", 8, 8, LATEST_OPSET, ("data", "start", "stop", "step", "axes"), infer_slice, slice_kernel,
          value=_value_slice, views=True, min_inputs=4, batch=_batch_slice, at_run=_slice_at_run),
    OpDef("StridedSlice", 1, 1, LATEST_OPSET, ("data", "begin", "end", "stride"), _infer_strided_slice,
          strided_slice, value=_value_strided_slice, views=True, min_inputs=3,
          attrs=(Attr("begin_mask"), Attr("end_mask"), Attr("new_axis_mask", ""), Attr("shrink_axis_mask", ""),
                 Attr("ellipsis_mask", ""))),
    OpDef("SliceScatter", 15, 15, LATEST_OPSET, ("data", "updates", "start", "stop", "step", "axes"),
          infer_slice_scatter, slice_scatter, roles=("data", "data", "start", "stop", "step", "axes"), min_inputs=5,
          batch=_slice_scatter_batch),
)
