"""Select-1: ``cond ? then : else`` element-wise, with numpy, none or pdpd broadcasting.

- numpy (default, also when ``<data>`` is absent): the three inputs broadcast together, both ways
  (as ``np.where``; the spec text says cond broadcasts one way, the implementation does not).
- none (IR may say ``explicit``): all shapes equal.
- pdpd: the output has ``then``'s shape; ``else`` and ``cond`` are each fitted into it one way,
  starting at ``auto_broadcast.auto_broadcast_axis`` (0 when absent; -1 aligns right, per input).
Any non-zero cond byte is true. Attribute values are case-insensitive.

Kernels (``choose_kernel``; picked once per plan): ``np.where`` for small outputs, an integer bit-select
for large ones, whole-row copies when cond is constant along the trailing axes. All move bits, never
values; f16 outputs then get their signalling NaNs quietened, as the reference does. The large-output
kernels write into a caller's buffer (``out=``) when the plan gives them one.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...parallel import run_chunked
from ...types import DYNAMIC, TensorSpec
from ..api import (
    LATEST_OPSET,
    Attr,
    InputFit,
    KernelFn,
    OpContext,
    OpDef,
    broadcast_merge,
    broadcast_read,
    pdpd_merge,
    pdpd_shape,
    quiet_f16_nans,
)
from ..toolkit.broadcasting import aligned_batch


def infer_select(ctx: OpContext):
    cond, then, else_ = ctx.inputs
    mode, axis = broadcast_read(ctx)
    if cond.element_type.kind not in ("bool", "dynamic"):
        ctx.fail(
            f"cond must have element type boolean, got {cond.element_type}",
            position=0,
            hint="insert a Convert to boolean before the Select",
        )
    et = then.element_type
    if DYNAMIC not in (then.element_type, else_.element_type) and then.element_type != else_.element_type:
        ctx.fail(
            f"then and else must have the same element type, got {then.element_type} and {else_.element_type}",
            position=2,
        )
    if et == DYNAMIC:
        et = else_.element_type
    if mode == "pdpd":
        shape = pdpd_merge(then.shape, else_.shape, axis)
        if shape is None:
            ctx.fail("'Else' tensor shape is not broadcastable to 'then' (pdpd)", position=2)
        shape = pdpd_merge(shape, cond.shape, axis)
        if shape is None:
            ctx.fail("'Cond' tensor shape is not broadcastable to 'then' (pdpd)", position=0)
    else:
        shape = broadcast_merge(mode, else_.shape, then.shape)
        shape = broadcast_merge(mode, shape, cond.shape) if shape is not None else None
        if shape is None:
            ctx.fail(f"argument shapes are inconsistent for auto_broadcast={mode}")
    return [TensorSpec(et, shape)], {"mode": mode, "axis": axis}


def select(cond: np.ndarray, then: np.ndarray, else_: np.ndarray, *, mode: str, axis: int) -> np.ndarray:
    """Select with resolved parameters; inputs are already known to fit (inference checked them)."""
    shapes = _operand_shapes(cond.shape, then.shape, else_.shape, mode, axis)
    kernel = choose_kernel(*shapes, then.dtype)
    return _aligned(kernel, shapes[0], shapes[2])(cond, then, else_)


def prepare_select(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts) -> KernelFn:
    """A Select kernel for static shapes, picked once (see :func:`choose_kernel`); pdpd operands are
    reshaped to numpy-broadcastable ones, and f16 outputs get their signalling NaNs quietened."""
    mode, axis = params["mode"], params["axis"]
    shapes = _operand_shapes(*(spec.shape.to_shape() for spec in inputs), mode, axis)
    kernel = choose_kernel(*shapes, inputs[1].element_type.dtype)
    if mode == "pdpd" or inputs[1].element_type == "f16":
        return _aligned(kernel, shapes[0], shapes[2])
    return kernel


def choose_kernel(cond_shape, then_shape, else_shape, dtype: np.dtype) -> KernelFn:
    """The fastest bit-exact kernel for these (numpy-broadcastable) shapes, called ``fn(cond, then, else)``:
    ``np.where`` below BITSELECT_MIN_ELEMENTS outputs; whole-row copies when cond is constant along the
    trailing axes (e.g. [R,1] against [R,C]) and the rows are long enough; else the bit-select (same
    shapes) or its broadcast form. All but ``np.where`` take ``out=``."""
    out_shape = np.broadcast_shapes(cond_shape, then_shape, else_shape)
    if math.prod(out_shape) < BITSELECT_MIN_ELEMENTS or np.dtype(dtype).hasobject:  # (strings have no bits)
        return np.where
    if cond_shape == then_shape == else_shape:
        return bit_select
    lead = _row_lead(cond_shape, then_shape, else_shape, out_shape, np.dtype(dtype).itemsize)
    if lead is not None:
        return functools.partial(row_select, out_shape=out_shape, lead=lead)
    return functools.partial(bit_select_broadcast, out_shape=out_shape)


def _operand_shapes(cond_shape, then_shape, else_shape, mode: str, axis: int):
    """The operands' shapes for a numpy broadcast: pdpd fits ``cond`` and ``else`` into ``then``'s rank."""
    if mode != "pdpd":
        return tuple(cond_shape), tuple(then_shape), tuple(else_shape)
    rank = len(then_shape)
    return pdpd_shape(tuple(cond_shape), rank, axis), tuple(then_shape), pdpd_shape(tuple(else_shape), rank, axis)


def _aligned(kernel: KernelFn, cond_shape, else_shape) -> KernelFn:
    """``kernel`` behind the pdpd reshapes (views) and f16 NaN quietening, with ``out=`` support."""
    def run(cond: np.ndarray, then: np.ndarray, else_: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        cond, else_ = cond.reshape(cond_shape), else_.reshape(else_shape)
        if kernel is np.where:
            result = np.where(cond, then, else_)
            if out is not None:
                np.copyto(out, result)
                result = out
        else:
            result = kernel(cond, then, else_, out=out)
        return quiet_f16_nans(result)

    run.accepts_out = True
    return run


BITSELECT_MIN_ELEMENTS = 1 << 15
_CHUNK = 1 << 16
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # every IR element type's itemsize
ROW_MIN_BYTES = 32  # shorter rows: the blocked bit-select is faster than one copy per row
_ROW_MAX_BYTES = 2**31 - 1  # numpy's largest void item


def _new_or(out: np.ndarray | None, shape, dtype) -> np.ndarray:
    return np.empty(shape, dtype=dtype) if out is None else out


def bit_select(cond: np.ndarray, then: np.ndarray, else_: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """``else ^ ((then ^ else) & -mask)`` on same-width unsigned views, in cache-sized chunks, threaded.

    Bit-identical to ``np.where`` (it moves bits, it never converts values) without a branch per element.
    Inputs must have one shape; any non-zero cond byte is true. Writes into ``out`` when given.
    """
    unsigned = _UNSIGNED[then.dtype.itemsize]
    out = _new_or(out, then.shape, then.dtype)
    flat_out = out.reshape(-1).view(unsigned)
    flat_cond = np.ascontiguousarray(cond).reshape(-1).view(np.uint8)
    flat_then = np.ascontiguousarray(then).reshape(-1).view(unsigned)
    flat_else = np.ascontiguousarray(else_).reshape(-1).view(unsigned)

    def work(start: int, stop: int) -> None:
        truth = np.empty(_CHUNK, dtype=np.bool_)
        mask = np.empty(_CHUNK, dtype=unsigned)
        diff = np.empty(_CHUNK, dtype=unsigned)
        for lo in range(start * _CHUNK, min(stop * _CHUNK, flat_out.size), _CHUNK):
            hi = min(lo + _CHUNK, flat_out.size)
            n = hi - lo
            np.not_equal(flat_cond[lo:hi], 0, out=truth[:n])
            np.negative(truth[:n].view(np.uint8), dtype=unsigned, out=mask[:n])
            np.bitwise_xor(flat_then[lo:hi], flat_else[lo:hi], out=diff[:n])
            np.bitwise_and(diff[:n], mask[:n], out=diff[:n])
            np.bitwise_xor(flat_else[lo:hi], diff[:n], out=flat_out[lo:hi])

    run_chunked(-(-flat_out.size // _CHUNK), _CHUNK, work)
    return out


bit_select.accepts_out = True


def bit_select_broadcast(cond: np.ndarray, then: np.ndarray, else_: np.ndarray, out_shape, *,
                         out: np.ndarray | None = None) -> np.ndarray:
    """The bit-select of :func:`bit_select` for inputs broadcast to ``out_shape``: blocks of consecutive slices
    along the first axis whose slices hold at most 4 * _CHUNK elements (the axes before it, such as a batch of 1,
    are iterated), about _CHUNK elements each, computed on broadcast views (no input is ever expanded in memory)."""
    unsigned = _UNSIGNED[then.dtype.itemsize]
    out = _new_or(out, out_shape, then.dtype)
    cond8 = np.broadcast_to(cond, out_shape).view(np.uint8)
    then_bits = np.broadcast_to(then, out_shape).view(unsigned)
    else_bits = np.broadcast_to(else_, out_shape).view(unsigned)
    out_bits = out.view(unsigned)
    axis, row_size = 0, math.prod(out_shape[1:])
    while row_size > 4 * _CHUNK:  # one slice along ``axis`` would not fit a block (never goes past the last axis)
        axis += 1
        row_size //= out_shape[axis]
    outer, rows = out_shape[:axis], out_shape[axis]
    block = max(1, _CHUNK // max(row_size, 1))  # (an empty output never gets here: choose_kernel takes np.where)
    parts = [(*where, slice(lo, min(lo + block, rows))) for where in np.ndindex(outer) for lo in range(0, rows, block)]

    def work(start: int, stop: int) -> None:
        for part in parts[start:stop]:
            mask = np.negative(np.not_equal(cond8[part], 0).view(np.uint8), dtype=unsigned)
            diff = np.bitwise_xor(then_bits[part], else_bits[part])
            np.bitwise_and(diff, mask, out=diff)
            np.bitwise_xor(else_bits[part], diff, out=out_bits[part])

    run_chunked(len(parts), block * row_size, work)
    return out


bit_select_broadcast.accepts_out = True


def _row_lead(cond_shape, then_shape, else_shape, out_shape, itemsize: int) -> int | None:
    """The number of leading axes when cond is constant along all the others (size 1 there) and ``then``
    and ``else`` are not broadcast there: each output row (the trailing axes) then comes whole from one
    operand. None when no such split gives rows of ROW_MIN_BYTES.._ROW_MAX_BYTES."""
    rank = len(out_shape)
    cond, then, else_ = ((1,) * (rank - len(s)) + tuple(s) for s in (cond_shape, then_shape, else_shape))
    lead, row_bytes = rank, itemsize
    while lead > 0 and cond[lead - 1] == 1 and then[lead - 1] == else_[lead - 1] == out_shape[lead - 1]:
        if row_bytes * out_shape[lead - 1] > _ROW_MAX_BYTES:
            break
        lead -= 1
        row_bytes *= out_shape[lead]
    return lead if lead < rank and row_bytes >= ROW_MIN_BYTES else None


def row_select(cond: np.ndarray, then: np.ndarray, else_: np.ndarray, out_shape, lead: int, *,
               out: np.ndarray | None = None) -> np.ndarray:
    """Select when cond is constant along the axes from ``lead`` on (see ``_row_lead``): each output row
    is copied whole from ``then`` or ``else``, as one opaque item of a void dtype (a byte copy, so every
    bit is kept), by two masked copies over the rows, threaded along the first axis."""
    out = _new_or(out, out_shape, then.dtype)
    rank = len(out_shape)
    row = np.dtype((np.void, math.prod(out_shape[lead:]) * then.dtype.itemsize))

    def rows(x: np.ndarray) -> np.ndarray:
        aligned = (1,) * (rank - x.ndim) + x.shape
        return np.ascontiguousarray(x).reshape(-1).view(row).reshape(aligned[:lead])

    cond_rows = np.asarray(cond).reshape((1,) * (rank - cond.ndim) + cond.shape)
    pick = np.not_equal(cond_rows.reshape(cond_rows.shape[:lead]).view(np.uint8), 0)
    operands = (pick, ~pick, rows(then), rows(else_))
    out_rows = out.reshape(-1).view(row).reshape(out_shape[:lead])
    if lead == 0:
        np.copyto(out_rows, operands[2] if pick else operands[3])
        return out

    def work(start: int, stop: int) -> None:
        part = [x[start:stop] if x.shape[0] == out_shape[0] else x for x in operands]
        np.copyto(out_rows[start:stop], part[2], where=part[0])
        np.copyto(out_rows[start:stop], part[3], where=part[1])

    run_chunked(out_shape[0], math.prod(out_shape[1:]), work)
    return out


row_select.accepts_out = True


def _batch_select(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]):
    """numpy and none: the inputs line up with the output from the right; pdpd: ``then`` from the left,
    ``cond`` and ``else`` from the broadcast axis (right-aligned for -1). Where they put the batch axis
    must agree, and an input without it may only broadcast (a 1) there (see ``aligned_batch``)."""
    out_rank = outputs[0].shape.rank
    ranks = [spec.shape.rank for spec in inputs]
    if out_rank is None or None in ranks:
        return "a dynamic rank hides where the batch axis goes"
    if params["mode"] == "pdpd":
        axis = params["axis"]
        offsets = [out_rank - rank if axis == -1 else axis for rank in ranks]
        offsets[1] = 0
    else:
        offsets = [out_rank - rank for rank in ranks]
    return aligned_batch(inputs, outputs, axes, offsets, broadcast=params["mode"] != "none")


def _fit_select(params, inputs, position: int) -> InputFit | None:
    return InputFit("cond", 0, 1) if position == 0 else None


def _value_select(ctx: OpContext):
    """Partial values (shape subgraphs) as OpenVINO bounds a Select: only when every element of ``cond`` is
    known, each output element is the chosen input's (flat values; one input may have a single element)."""
    cond, then, else_ = (ctx.partial_value(i) for i in range(3))
    if cond is None or then is None or else_ is None or not all(c.is_static for c in cond):
        return [None]
    size = max(len(cond), len(then), len(else_))
    if any(len(v) not in (1, size) for v in (cond, then, else_)):
        return [None]
    pick = [(then if cond[i % len(cond)].lo else else_) for i in range(size)]
    return [tuple(values[i % len(values)] for i, values in enumerate(pick))]


OPS = (
    OpDef("Select", 1, 1, LATEST_OPSET, ("cond", "then", "else"), infer_select, select, prepare_select,
          roles=("condition", "data", "data"), attrs=(Attr("auto_broadcast", "numpy", ("numpy", "none", "pdpd")),),
          value=_value_select, fit=_fit_select, batch=_batch_select),
)
