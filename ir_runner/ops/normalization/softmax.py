"""Softmax-1, Softmax-8 and LogSoftmax-5.

Softmax-1 (``axis`` in ``[0, rank)``), Softmax-8 (``axis`` in ``[-rank, rank)``), LogSoftmax-5 (same as
Softmax-8): ``exp(x - max) / sum(exp(x - max))`` and ``(x - max) - log(sum(exp(x - max)))`` along
``axis``, for float types, computed in f32 for f16/bf16 (f64 for f64) and rounded once; the sums are
:func:`~ir_runner.ops.toolkit.numeric.row_sums`' (a row's bits do not depend on its block of rows), except along
an axis followed by at least ``_STRIDED_INNER`` elements of f32/f64 (YOLO's DFL head: ``[1, 16, 4, 8400]`` along
16), computed in place along that axis, its sums added one position of the axis after another (the same order
for any block; 3x faster than copying rows of 16 out and back). A NaN, or an
infinity that makes ``x - max`` NaN, turns its whole row into NaN, as in the reference. Bounds (K the
length of ``axis``): Softmax ``|got - ref| <= (K + 4) eps(acc) |ref| + eps(out) |ref|`` (the division is a
product with the rounded reciprocal of the sum: one more rounding, inside the K + 4), plus, for outputs below
the smallest normal, 2 units of the smallest subnormal (neither side flushes subnormals to zero, but numpy's
vectorised exp is not correctly rounded there, where the reference's C library exp is, and both round twice at
the subnormal spacing: measured at most 2 units at f32, 1 at bf16, 0 at f16); LogSoftmax
``|got - exact| <= 2 eps(acc) (|x - max| + |log sum|) + K eps(acc) + eps(out) |exact|``. OpenVINO has no
reference evaluate for LogSoftmax: tests compare it with float64 arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...errors import UnsupportedError
from ...parallel import run_chunked
from ...types import TensorSpec
from ..api import LATEST_OPSET, Attr, KernelFn, OpContext, OpDef
from ..toolkit.axes import normalise_axis
from ..toolkit.numeric import compute_dtype, row_sums

_FLOATS = frozenset({"f16", "bf16", "f32", "f64"})


def _infer_softmax(ctx: OpContext, version: int):
    data = ctx.inputs[0]
    et = data.element_type
    if et.kind not in ("float", "dynamic") or (et.kind == "float" and et.name not in _FLOATS):
        raise UnsupportedError(f"{ctx.op.type if ctx.op else 'Softmax'} of element type {et} is not supported",
                               layer=ctx.ref)
    axis = ctx.attr_int("axis", 1)
    axis = normalise_axis(ctx, axis, data.shape.rank, negative=version != 1)
    return [TensorSpec(et, data.shape)], {"axis": axis}


_BLOCK = 1 << 18  # elements per block of rows (measured: 64K and 128K blocks were 5-15% slower, 1e5 to 1e7)
_PART = 1 << 16  # elements per part copied to the compute type (another axis, or f16/bf16): its temporary
_PARALLEL = 1 << 18  # from here over threads (handing a block to the other thread costs 20-50 us here)
_STRIDED_INNER = 64  # along an axis followed by this many elements: in place (measured 1.4-3.7x faster from 64
# on, as fast at 50, 4x slower at 2)
_COLUMNS = 16  # rows this short, and many: their maximum column by column (numpy reduces a row in ~50 ns)


def _row_max(x: np.ndarray) -> np.ndarray:
    """The maximum of each row of 2-D ``x`` as ``[rows, 1]`` (a NaN propagates): short rows column by column,
    contiguous ones by ``reduceat`` over the flat array (up to 2x faster than a reduce along the last axis)."""
    length = x.shape[1]
    if length <= _COLUMNS and x.shape[0] >= 32 * length:  # (a numpy call a column: for many rows only)
        peak = x[:, :1].copy()
        for column in range(1, length):
            np.maximum(peak, x[:, column:column + 1], out=peak)
        return peak
    if x.flags.c_contiguous and x.shape[0] >= 16:  # (a few rows: reduce's fixed cost is lower)
        return np.maximum.reduceat(x.reshape(-1), np.arange(0, x.size, length))[:, None]
    return np.maximum.reduce(x, axis=-1, keepdims=True)


def _softmax_rows(x: np.ndarray, out: np.ndarray, log: bool) -> None:
    """(Log)softmax along the last axis of 2-D ``x`` into ``out`` (the compute type; C-contiguous: a block of
    the output array, or of a part's copy); the sums by :func:`~ir_runner.ops.toolkit.numeric.row_sums`."""
    peak = _row_max(x)
    np.subtract(x, peak, out=out)
    if log:
        total = row_sums(np.exp(out))[:, None]
        np.subtract(out, np.log(total, out=total), out=out)
    else:
        np.exp(out, out=out)
        row_sums(out, peak.reshape(-1))  # (peak is contiguous: a view)
        np.multiply(out, np.divide(1, peak, out=peak), out=out)  # (a product: cheaper than a division per element)


def softmax(data: np.ndarray, *, axis: int, log: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """Softmax (``log``: LogSoftmax) along ``axis``, in blocks of rows over threads; see the module
    docstring for the bounds. Writes into ``out`` when given."""
    wide = compute_dtype(data.dtype)
    if out is None:
        out = np.empty(data.shape, data.dtype)
    if not data.size:
        return out
    length = data.shape[axis]
    if axis == data.ndim - 1 and wide == data.dtype:
        block = max(1, _BLOCK // length)
        rows, result = data.reshape(-1, length), out.reshape(-1, length)

        def work(start: int, stop: int) -> None:
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                for lo in range(start, stop, block):  # (blocks end at ``stop``: the next thread's rows are its own)
                    hi = min(lo + block, stop)
                    _softmax_rows(rows[lo:hi], result[lo:hi], log)

        run_chunked(rows.shape[0], length, work, min_elements=_PARALLEL)
        return out
    if wide == data.dtype and data.shape[-1] and math.prod(data.shape[axis + 1:]) >= _STRIDED_INNER:
        _softmax_along(data, out, axis, log)
        return out
    moved, target = np.moveaxis(data, axis, -1), np.moveaxis(out, axis, -1)
    if data.ndim == 1:
        moved, target = moved[None], target[None]
    _softmax_parts(moved, target, wide, max(1, _PART // length), log)
    return out


def _softmax_along(data: np.ndarray, out: np.ndarray, axis: int, log: bool) -> None:
    """(Log)softmax of f32/f64 ``data`` along a middle ``axis`` into ``out``, without moving the axis: viewed as
    ``[outer, K, mid, last]`` (a view of a Transpose's view too, whose inner dims do not merge), in blocks of
    about ``_BLOCK`` elements (columns of the last dim, several mid rows when it is short, or several outer
    slices when the inner dims are) over threads; the maximum, sum and reciprocal of each column go along ``K``
    in order, so a column's bits do not depend on its block."""
    source = _four_dims(data, axis)
    outer, length, mid, last = source.shape
    target = out.reshape(source.shape)
    columns = max(1, _BLOCK // length)
    if last >= columns:  # blocks of columns of one (outer, mid) row
        parts = [(slice(o, o + 1), slice(None), slice(m, m + 1), slice(c, min(c + columns, last)))
                 for o in range(outer) for m in range(mid) for c in range(0, last, columns)]
        size = columns * length
    elif mid * last > columns:  # several mid rows of short columns
        per = columns // last
        parts = [(slice(o, o + 1), slice(None), slice(m, min(m + per, mid)))
                 for o in range(outer) for m in range(0, mid, per)]
        size = per * last * length
    else:  # several outer slices
        per = max(1, columns // (mid * last))
        parts = [(slice(o, min(o + per, outer)),) for o in range(0, outer, per)]
        size = per * mid * last * length

    def work(start: int, stop: int) -> None:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            for part in parts[start:stop]:
                x, y = source[part], target[part]
                peak = np.maximum.reduce(x, axis=1, keepdims=True)
                np.subtract(x, peak, out=y)
                if log:
                    total = np.add.reduce(np.exp(y), axis=1, keepdims=True)
                    np.subtract(y, np.log(total, out=total), out=y)
                else:
                    np.exp(y, out=y)
                    total = np.add.reduce(y, axis=1, keepdims=True)
                    np.multiply(y, np.divide(1, total, out=total), out=y)

    run_chunked(len(parts), size, work, min_elements=_PARALLEL)


def _four_dims(data: np.ndarray, axis: int) -> np.ndarray:
    """``data`` as a view ``[outer, K, 1, inner]``, else ``[outer, K, mid, last]`` (the dims after the axis but
    the last merged: a Transpose's view), else a contiguous copy as the first."""
    shape, strides = data.shape, data.strides
    before, after = _merged(shape[:axis], strides[:axis]), _merged(shape[axis + 1:], strides[axis + 1:])
    if before is not None and after is not None:
        return as_strided(data, (before[0], shape[axis], 1, after[0]), (before[1], strides[axis], 0, after[1]),
                          writeable=False)
    middle = _merged(shape[axis + 1:-1], strides[axis + 1:-1])
    if before is not None and middle is not None:
        return as_strided(data, (before[0], shape[axis], middle[0], shape[-1]),
                          (before[1], strides[axis], middle[1], strides[-1]), writeable=False)
    return _four_dims(np.ascontiguousarray(data), axis)


def _merged(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int] | None:
    """(size, stride) of consecutive dims as one dim, or None when their strides do not nest."""
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if any(s0 != s1 * n1 for (_, s0), (n1, s1) in zip(dims, dims[1:])):
        return None
    return math.prod(shape), dims[-1][1] if dims else 0


def _softmax_parts(moved: np.ndarray, target: np.ndarray, wide: np.dtype, block: int, log: bool) -> None:
    """Softmax along the last axis of the view ``moved`` (another axis moved last, or a narrow type) into the
    view ``target``: parts of about ``block`` rows (slices along one leading axis, the axes before it
    iterated), each copied into a contiguous array of the compute type, computed, and written back; no
    temporary of the whole size."""
    lead, length = moved.shape[:-1], moved.shape[-1]
    axis, row = 0, math.prod(lead[1:])
    while row > block:  # slices along ``axis`` (``row`` rows each) fit a block; the axes before are iterated
        axis += 1
        row //= lead[axis]
    count, per = lead[axis], max(1, block // max(row, 1))
    parts = [(*where, slice(lo, min(lo + per, count))) for where in np.ndindex(lead[:axis])
             for lo in range(0, count, per)]

    def work(start: int, stop: int) -> None:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            for part in parts[start:stop]:
                src = np.array(moved[part], dtype=wide, order="C")
                rows = src.reshape(-1, length)
                _softmax_rows(rows, rows, log)
                np.copyto(target[part], src, casting="unsafe")

    run_chunked(len(parts), per * row * length, work, min_elements=_PARALLEL)


softmax.accepts_out = True


def _log_softmax(data: np.ndarray, *, axis: int, out: np.ndarray | None = None) -> np.ndarray:
    return softmax(data, axis=axis, log=True, out=out)


_log_softmax.accepts_out = True


def _batch_softmax(params, inputs, outputs, axes) -> list | str:
    if axes[0] is not None and axes[0] == params["axis"]:
        return "normalises along the batch axis"
    return [axes[0]]


def _softmax_op(type_name: str, version: int, last: int, kernel: KernelFn) -> OpDef:
    return OpDef(type_name, version, version, last, ("data",), lambda ctx: _infer_softmax(ctx, version), kernel,
                 attrs=(Attr("axis", "1"),), batch=_batch_softmax, exact=False)

OPS = (
    _softmax_op("Softmax", 1, 7, softmax),
    _softmax_op("Softmax", 8, LATEST_OPSET, softmax),
    _softmax_op("LogSoftmax", 5, LATEST_OPSET, _log_softmax),
)
