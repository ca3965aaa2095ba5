"""Data movement that keeps values: Pad-1/12, Reverse-1, Roll-7 (``docs/semantics.md``, "Movement").

- Pad: ``pads_begin``/``pads_end`` (one per data axis) add (positive) or remove (negative; Pad-1 too, as
  OpenVINO's reference accepts them) elements. The reference pads the whole input first and then crops, so
  reflect/symmetric/edge values come from the original data even where the other side is cropped.
  ``reflect`` needs each pad <= dim-1, ``symmetric`` <= dim, ``edge`` a non-empty axis: the reference throws
  beyond them, ir-run refuses them (an InferenceError when the pads are constant, else an InputError).
  ``pad_value`` (constant mode, 0 when absent) must have data's element type.
- Reverse: ``mode='index'`` reverses the listed axes (negative ones normalised, repeats ignored);
  ``mode='mask'`` the axes whose boolean is true.
- Roll: shifts (one, or one per axis) move elements cyclically; an axis listed twice gets both shifts.
All are bit-exact.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.axes import normalise_axis
from ..toolkit.index_rules import require_integer, require_same_type

# -- Pad-1/12 ------------------------------------------------------------------------------------------

PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}


def _pads(ctx: OpContext, position: int, rank: int | None) -> tuple[int, ...] | None:
    spec = ctx.inputs[position]
    name = ctx.op.input_names[position]
    require_integer(ctx, position, name)
    if spec.shape.rank is not None and spec.shape.rank != 1:
        ctx.fail(f"{name} must be 1-D, got {spec.shape.brief()}", position=position)
    if rank is not None and spec.shape.dims is not None and spec.shape.dims[0].is_static and (
            spec.shape.dims[0].lo != rank):
        ctx.fail(f"{name} must have one value per data axis ({rank}), got {spec.shape.brief()}", position=position)
    value = ctx.partial_value(position)
    if value is None or any(not d.is_static for d in value):
        return None
    return tuple(d.lo for d in value)


def infer_pad(ctx: OpContext):
    data = ctx.inputs[0]
    mode = ctx.attr_choice("pad_mode", PAD_MODES, "constant")
    rank = data.shape.rank
    begin, end = _pads(ctx, 1, rank), _pads(ctx, 2, rank)
    if len(ctx.inputs) > 3:
        if ctx.inputs[3].shape.rank not in (None, 0):
            ctx.fail(f"pad_value must be a scalar, got {ctx.inputs[3].shape.brief()}", position=3)
        if mode == "constant":
            require_same_type(ctx, 0, 3, "data and pad_value")
    if rank is None:  # OpenVINO keeps the rank dynamic, even when the pads' length gives it
        return [TensorSpec(data.element_type, DYNAMIC_SHAPE)], {"begin": begin, "end": end, "mode": mode}
    dims_in = data.shape.dims
    for pads, name in ((begin, "pads_begin"), (end, "pads_end")):
        if pads is not None and len(pads) != rank:
            ctx.fail(f"{name} has {len(pads)} values for data of rank {rank}")
    dims = []
    for i, d in enumerate(dims_in):
        if begin is None or end is None:
            dims.append(DYNAMIC_DIM)
            continue
        b, e = begin[i], end[i]
        if d.is_static:
            _check_mode(ctx.fail, mode, d.lo, b, e, i)
        total = b + e
        lo = d.lo + total
        hi = None if d.hi is None else d.hi + total
        # cropped past empty: OpenVINO declares the dim dynamic (the run refuses it, as the reference's throws)
        dims.append(Dim(max(lo, 0), hi) if (hi is not None and hi >= 0) or (hi is None and lo > 0) else DYNAMIC_DIM)
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], {"begin": begin, "end": end, "mode": mode}


def _check_mode(fail, mode: str, dim: int, begin: int, end: int, axis: int) -> None:
    """The reference's limits on the pads of one axis (it throws beyond them)."""
    limit = {"reflect": dim - 1, "symmetric": dim}.get(mode)
    if limit is not None and max(begin, end) > limit:
        fail(f"pad_mode={mode} pads axis {axis} of {dim} elements by {begin} and {end}: at most {limit} allowed")
    if mode == "edge" and dim == 0 and max(begin, end) > 0:
        fail(f"pad_mode=edge cannot pad axis {axis}, which has no element")


def _input_error(detail: str) -> None:
    raise InputError(detail, port="input 1 (pads_begin)")


class PadKernel:
    """Pad of inputs of one shape by resolved pads: the output is allocated once per call, the data copied into
    its interior, then, axis by axis (as the reference and np.pad pad them), each margin filled by one slice
    copy of the already filled part (reflect, symmetric: a reversed slice; edge: the border broadcast), and
    the negative pads cropped. ``kernel(data, begin, end[, pad_value])``."""

    def __init__(self, shape, begin: tuple[int, ...], end: tuple[int, ...], mode: str) -> None:
        widths = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
        self.mode = mode
        self.padded = tuple(n + b + e for n, (b, e) in zip(shape, widths))
        self.interior = tuple(slice(b, b + n) for n, (b, _) in zip(shape, widths))
        self.empty = math.prod(shape) == 0 and mode != "constant"  # such an axis cannot be padded: empty output
        self.out_shape = tuple(n + b + e for n, b, e in zip(shape, begin, end))
        self.crop = tuple(slice(max(-b, 0), p - max(-e, 0)) for p, b, e in zip(self.padded, begin, end))
        self.cropped = any(b < 0 or e < 0 for b, e in zip(begin, end))
        self.margins = []  # (destination, source) index tuples, in order
        if mode == "constant":
            return
        for axis, (n, (b, e)) in enumerate(zip(shape, widths)):
            lead = (slice(None),) * axis
            if mode == "reflect":
                before, after = slice(2 * b, b, -1), slice(b + n - 2, b + n - 2 - e, -1)
            elif mode == "symmetric":
                before, after = slice(2 * b - 1, b - 1, -1), slice(b + n - 1, b + n - 1 - e, -1)
            else:  # edge
                before, after = slice(b, b + 1), slice(b + n - 1, b + n)
            if b:
                self.margins.append((lead + (slice(0, b),), lead + (_nonnegative(before),)))
            if e:
                self.margins.append((lead + (slice(b + n, b + n + e),), lead + (_nonnegative(after),)))

    def __call__(self, data: np.ndarray, begin_input=None, end_input=None, pad_value=None) -> np.ndarray:
        if self.empty:
            return np.empty(self.out_shape, dtype=data.dtype)
        if self.mode == "constant":
            value = 0 if pad_value is None else pad_value.reshape(()).astype(data.dtype, copy=False)
            out = np.full(self.padded, value, dtype=data.dtype)
        else:
            out = np.empty(self.padded, dtype=data.dtype)
        out[self.interior] = data
        for dst, src in self.margins:
            out[dst] = out[src]
        return np.array(out[self.crop], copy=True) if self.cropped else out


def _nonnegative(part: slice) -> slice:
    """A reversed slice whose stop went below 0 (up to index 0 included) as numpy spells it."""
    return slice(part.start, None, part.step) if part.stop < 0 else part


def pad(data: np.ndarray, begin_input: np.ndarray, end_input: np.ndarray, pad_value: np.ndarray | None = None, *,
        begin: tuple[int, ...], end: tuple[int, ...], mode: str) -> np.ndarray:
    """Pad by the positive pads, then crop by the negative ones (as the reference). The pads were resolved
    by inference (``begin_input``/``end_input``: the plan is made per value of pads computed at run time)."""
    for i, n in enumerate(data.shape):
        _check_mode(_input_error, mode, n, begin[i], end[i], i)
        if n + begin[i] + end[i] < 0:
            _input_error(f"axis {i} of {n} elements padded by {begin[i]} and {end[i]} would have"
                         f" {n + begin[i] + end[i]} elements")
    return PadKernel(data.shape, begin, end, mode)(data, begin_input, end_input, pad_value)


def prepare_pad(params, inputs, outputs, consts):
    """For static shapes (inference checked the pads against them): the slices resolved once per plan."""
    if params.get("begin") is None or params.get("end") is None:
        return functools.partial(pad, **params)
    return PadKernel(inputs[0].shape.to_shape(), params["begin"], params["end"], params["mode"])


# -- Reverse-1 -----------------------------------------------------------------------------------------


def infer_reverse(ctx: OpContext):
    data, axes_spec = ctx.inputs
    mode = ctx.attr_choice("mode", {"index": "index", "mask": "mask"}, None)
    if mode is None:
        ctx.fail("the required attribute 'mode' (index or mask) is missing")
    if axes_spec.shape.rank is not None and axes_spec.shape.rank != 1:
        ctx.fail(f"axis must be 1-D, got {axes_spec.shape.brief()}", position=1)
    rank = data.shape.rank
    if mode == "mask":
        if axes_spec.element_type.kind not in ("bool", "dynamic"):
            ctx.fail(f"in mask mode axis must be boolean, got {axes_spec.element_type}", position=1)
        if rank is not None and axes_spec.shape.dims is not None and axes_spec.shape.dims[0].is_static and (
                axes_spec.shape.dims[0].lo != rank):
            ctx.fail(f"in mask mode axis needs one value per data axis ({rank}), got {axes_spec.shape.brief()}",
                     position=1)
    else:
        require_integer(ctx, 1, "axis")
    value = ctx.const_value(1)
    axes = None
    if value is not None and rank is not None:
        if mode == "mask":
            axes = tuple(int(i) for i in np.flatnonzero(value.reshape(-1)))
        else:
            axes = tuple(sorted({normalise_axis(ctx, int(a), rank, position=1) for a in value.reshape(-1)}))
    return [TensorSpec(data.element_type, data.shape)], {"axes": axes}


def reverse(data: np.ndarray, axes_input: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
    """``data`` with the order of elements along ``axes`` reversed."""
    return np.array(np.flip(data, axes), copy=True) if axes else np.array(data, copy=True)


# -- Roll-7 --------------------------------------------------------------------------------------------


def infer_roll(ctx: OpContext):
    data, shift, axes_spec = ctx.inputs
    require_integer(ctx, 1, "shift", bits=(32, 64))
    require_integer(ctx, 2, "axes", bits=(32, 64))
    if shift.shape.rank is not None and shift.shape.rank > 1:
        ctx.fail(f"shift must be a scalar or 1-D, got {shift.shape.brief()}", position=1)
    if axes_spec.shape.rank is not None and axes_spec.shape.rank > 1:
        ctx.fail(f"axes must be a scalar or 1-D, got {axes_spec.shape.brief()}", position=2)
    if shift.shape.rank == 1 and axes_spec.shape.rank is not None and not (
            axes_spec.shape.rank == 1 and _compatible(shift.shape.dims[0], axes_spec.shape.dims[0])):
        ctx.fail("when shift is 1-D, axes must be 1-D of the same length", position=2)
    value = ctx.const_value(2)
    axes = None
    if value is not None and data.shape.rank is not None:
        axes = tuple(normalise_axis(ctx, int(a), data.shape.rank, position=2) for a in value.reshape(-1))
    return [TensorSpec(data.element_type, data.shape)], {"axes": axes}


def _compatible(a: Dim, b: Dim) -> bool:
    return not (a.is_static and b.is_static and a.lo != b.lo)


def roll(data: np.ndarray, shift: np.ndarray, axes_input: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
    """Elements moved cyclically by ``shift`` along ``axes`` (a repeated axis gets the sum of its shifts)."""
    shifts = shift.astype(np.int64).reshape(-1)
    if shift.ndim == 0:
        shifts = np.repeat(shifts, len(axes))
    elif shifts.size != len(axes):
        raise InputError(f"shift has {shifts.size} values for {len(axes)} axes", port="input 1 (shift)")
    if not axes or data.size == 0:
        return np.array(data, copy=True)
    total: dict[int, int] = {}
    for axis, s in zip(axes, shifts.tolist()):
        total[axis] = (total.get(axis, 0) + s) % data.shape[axis]
    return np.roll(data, tuple(total.values()), tuple(total))


def _batch_pad(params, inputs, outputs, axes):
    """The batch axis passes through when it is not padded (pads are per axis, the rows stay apart)."""
    axis = axes[0]
    if axis is None:
        return [None]
    if params["begin"] is None or params["begin"][axis] or params["end"][axis]:
        return "pads the batch axis"
    return [axis]


def _batch_untouched(params, inputs, outputs, axes):
    """Reverse, Roll: the batch axis passes through unless the op moves elements along it."""
    axis = axes[0]
    if axis is None:
        return [None]
    if params["axes"] is None or axis in params["axes"]:
        return "moves elements along the batch axis"
    return [axis]


OPS = (
    OpDef("Pad", 1, 1, 11, ("data", "pads_begin", "pads_end", "pad_value"), infer_pad, pad,
          prepare_pad, roles=("data", "pads", "pads", "pad_value"), min_inputs=3, batch=_batch_pad,
          attrs=(Attr("pad_mode", "constant", tuple(PAD_MODES)),)),
    OpDef("Pad", 12, 12, LATEST_OPSET, ("data", "pads_begin", "pads_end", "pad_value"), infer_pad, pad,
          prepare_pad, roles=("data", "pads", "pads", "pad_value"), min_inputs=3, batch=_batch_pad,
          attrs=(Attr("pad_mode", "constant", tuple(PAD_MODES)),)),
    OpDef("Reverse", 1, 1, 1, ("data", "axis"), infer_reverse, reverse, roles=("data", "axes"),
          batch=_batch_untouched,
          attrs=(Attr("mode", None, ("index", "mask")),)),
    OpDef("Roll", 7, 7, LATEST_OPSET, ("data", "shift", "axes"), infer_roll, roll, batch=_batch_untouched),
)
