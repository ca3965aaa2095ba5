"""Reductions: ReduceSum/Mean/Max/Min/Prod/LogicalAnd/LogicalOr-1, ReduceL1/L2-4, and CumSum-3.

Shapes follow OpenVINO's ``reduce_shape_infer``: ``axes`` (scalar or 1-D, integer) may be negative and
repeat; ``keep_dims`` keeps reduced axes as 1. An empty ``axes`` keeps the input's shape and reduces each
element alone (ReduceL1 gives ``|x|``, ReduceMax ``max(-FLT_MAX, x)``, as the reference). Axes computed at
run time: ``keep_dims`` gives the rank with dynamic dims, one axis gives rank-1, anything else a dynamic
rank.

Values follow OpenVINO's reference (``Node.evaluate``):

- Integers wrap around (ReduceL1 of INT_MIN stays INT_MIN); ReduceMean divides the wrapped sum by the
  count, truncating toward zero. ReduceMax/Min start at the type's lowest/highest value, so an empty
  reduction gives them. All integer and boolean results are bit-exact.
- ReduceMax/ReduceMin are exact for floats too: NaN is skipped (a row of NaNs gives the start value);
  ReduceMax starts at -FLT_MAX (f16/bf16: -inf after rounding, f64: -DBL_MAX), so ``max([-inf])`` is
  -FLT_MAX; ReduceMin starts at +inf. Of equal values the first (row-major over the reduced axes) is
  kept: ``max([-0.0, 0.0])`` is -0.0.
- Float sums (Sum, Mean, L1, L2) and products accumulate in f32 (f64 for f64) and round to the output
  type once; the reference uses Kahan summation, ir-run numpy's: :func:`row_sums` (einsum's vector lanes;
  strided data copied first) when f32/f64 data is summed over its last axes, else ``np.add.reduce``
  (pairwise along the last axis, in order elsewhere). Bound: ``|got - ref| <= 2 K eps(acc) sum|x_i| +
  eps(out) |ref|`` (products: ``<= (2 K eps(acc) + eps(out)) |ref|``), K the number of elements reduced
  into one output; bf16 outputs may differ by one more bf16 ulp (the reference's bf16 rounding is not
  round-to-nearest).
  An empty ReduceMean is 0, as in the reference (not NaN).
- The reference has no evaluate for f64, i8, u8, i16, u16 (Sum, Mean, Prod, L1, L2), u32/u64 (L1) and
  integers (L2): ir-run computes them in their own type (L2: sqrt in f64, truncated to the type).
- CumSum adds in order along ``axis`` (``exclusive`` shifts by one, ``reverse`` runs from the end), as the
  reference does: bit-exact for f32 (the only type the reference evaluates) and integers (wrapping);
  f16/bf16 accumulate in f32 and round each output once.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...errors import UnsupportedError
from ...parallel import PARALLEL_MIN_ELEMENTS, run_chunked
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.axes import normalise_axes, normalise_axis
from ..toolkit.numeric import compute_dtype, row_sums

_COMPUTED = frozenset({"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})


# -- inference ----------------------------------------------------------------------------------------------

def _axes_value(ctx: OpContext, position: int) -> list[int] | None:
    """The constant (or exactly known) values of an axes input, or None."""
    value = ctx.const_value(position)
    if value is not None:
        return [int(v) for v in value.reshape(-1)]
    partial = ctx.partial_value(position)
    if partial is not None and all(d.is_static for d in partial):
        return [d.lo for d in partial]
    return None


def reduced_shape(shape: PartialShape, axes: tuple[int, ...], keep_dims: bool) -> PartialShape:
    one = Dim(1, 1)
    if keep_dims:
        return PartialShape(tuple(one if i in axes else d for i, d in enumerate(shape.dims)))
    return PartialShape(tuple(d for i, d in enumerate(shape.dims) if i not in axes))


def _infer_reduce(ctx: OpContext, kind: str):
    data, axes_spec = ctx.inputs
    et = data.element_type
    if kind in ("and", "or"):
        if et.kind not in ("bool", "dynamic"):
            ctx.fail(f"data must have element type boolean, got {et}", position=0)
    elif et.kind not in ("float", "int", "uint", "dynamic"):
        ctx.fail(f"data must have a numeric element type, got {et}", position=0)
    elif et.kind != "dynamic" and et.name not in _COMPUTED:
        raise UnsupportedError(f"Reduce of element type {et} is not supported", layer=ctx.ref)
    if axes_spec.element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"axes must have an integer element type, got {axes_spec.element_type}", position=1)
    if axes_spec.shape.rank is not None and axes_spec.shape.rank > 1:
        ctx.fail(f"axes must be a scalar or 1-D, got shape {axes_spec.shape.brief()}", position=1)
    keep_dims = ctx.attr_bool("keep_dims", False)
    axes = _axes_value(ctx, 1)
    rank = data.shape.rank
    if rank is not None and axes is not None:
        axes_t = normalise_axes(ctx, axes, rank, position=1)
        return [TensorSpec(et, reduced_shape(data.shape, axes_t, keep_dims))], {
            "kind": kind, "axes": axes_t, "keep_dims": keep_dims}
    if keep_dims:
        shape = DYNAMIC_SHAPE if rank is None else PartialShape((DYNAMIC_DIM,) * rank)
    elif rank is not None and axes_spec.shape.is_static and int(np.prod(axes_spec.shape.to_shape())) == 1:
        shape = PartialShape((DYNAMIC_DIM,) * (rank - 1))
    else:
        shape = DYNAMIC_SHAPE
    return [TensorSpec(et, shape)], {"kind": kind, "axes": None, "keep_dims": keep_dims}


def _batch_reduce(params, inputs, outputs, axes) -> list | str:
    batch = axes[0]
    if batch is None:
        return [None]
    if params["axes"] is None:
        return "reduces over axes known only at run time"
    if batch in params["axes"]:
        return "reduces over the batch axis"
    return [batch if params["keep_dims"] else batch - sum(a < batch for a in params["axes"])]


# -- kernels ------------------------------------------------------------------------------------------------


def _trailing_rows(x: np.ndarray, axes: tuple[int, ...], dtype: np.dtype) -> np.ndarray | None:
    """``x`` as C-contiguous 2-D rows of the elements reduced together (a copy when ``x`` is strided), when
    :func:`row_sums` can add them: a non-empty f32/f64 ``x`` summed in its own type over its last axes; else
    None. (Chosen by shape and type alone, never by layout: a strided whole and a contiguous block of it
    must add their rows alike.)"""
    if (x.dtype != dtype or dtype.kind != "f" or not x.ndim or not x.size
            or axes != tuple(range(x.ndim - len(axes), x.ndim))):
        return None
    return np.ascontiguousarray(x.reshape(-1, math.prod(x.shape[a] for a in axes)))


def _add(x: np.ndarray, axes: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The sum over ``axes`` with ``keepdims`` in ``dtype``: :func:`row_sums` over threads where it applies,
    else :func:`fold`."""
    rows = _trailing_rows(x, axes, dtype)
    if rows is None:
        return fold(np.add, x, axes, dtype)
    out = np.empty(tuple(1 if i in axes else n for i, n in enumerate(x.shape)), dtype)
    sums = out.reshape(-1)
    run_chunked(rows.shape[0], rows.shape[1], lambda lo, hi: row_sums(rows[lo:hi], sums[lo:hi]))
    return out


def fold(ufunc: np.ufunc, x: np.ndarray, axes: tuple[int, ...], dtype: np.dtype, initial=None) -> np.ndarray:
    """``ufunc.reduce`` over ``axes`` with ``keepdims``, accumulating in ``dtype``. Large inputs are split
    over threads along their first axis (contiguous blocks): when it is kept each thread writes its part of
    the output; when it is reduced each thread reduces its block and the partial results are reduced again."""
    extra = {} if initial is None else {"initial": initial}
    if x.size < PARALLEL_MIN_ELEMENTS or x.shape[0] < 2:
        # (np.asarray: a 0-D input reduced over no axis gives a numpy scalar, which out= cannot take)
        return np.asarray(ufunc.reduce(x, axis=axes, dtype=dtype, keepdims=True, **extra))
    if 0 not in axes:
        out = np.empty(tuple(1 if i in axes else n for i, n in enumerate(x.shape)), dtype)

        def work(start: int, stop: int) -> None:
            ufunc.reduce(x[start:stop], axis=axes, dtype=dtype, keepdims=True, out=out[start:stop], **extra)

        run_chunked(x.shape[0], x.size // x.shape[0], work)
        return out
    half = x.shape[0] // 2
    partial: list[np.ndarray] = [x[:0], x[:0]]

    def part_work(start: int, stop: int) -> None:
        for k in range(start, stop):
            block = x[:half] if k == 0 else x[half:]
            partial[k] = ufunc.reduce(block, axis=axes, dtype=dtype, keepdims=True, **extra)

    run_chunked(2, x.size // 2, part_work)
    return ufunc.reduce(np.concatenate(partial, axis=0), axis=0, dtype=dtype, keepdims=True)


def _sum(x, axes):
    total = _add(x, axes, compute_dtype(x.dtype))
    if total.dtype.kind == "f":
        total += 0  # the reference's sums start at +0: a sum of -0.0s is +0.0
    return total


def _mean(x, axes):
    total = _sum(x, axes)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if count == 0:
        return total  # zeros, as the reference gives
    if total.dtype.kind == "f":
        return np.divide(total, total.dtype.type(count), out=total)
    with np.errstate(over="ignore"):
        quotient = total // total.dtype.type(count)
        if total.dtype.kind == "i":  # truncate toward zero, as C++ division
            quotient += ((quotient * total.dtype.type(count)) != total) & (total < 0)
    return quotient


def _prod(x, axes):
    return fold(np.multiply, x, axes, compute_dtype(x.dtype))


def _l1(x, axes):
    return _sum(np.abs(x), axes)


def _l2(x, axes):
    acc = compute_dtype(x.dtype)
    with np.errstate(over="ignore"):
        total = _add(np.square(x, dtype=acc), axes, acc)
    if total.dtype.kind == "f":
        return np.sqrt(total, out=total)
    return np.trunc(np.sqrt(total.astype(np.float64)))


def _extreme(x, axes, largest: bool):
    """Max/Min as the reference: NaN skipped, the start value for empty/all-NaN rows, the first of equal
    values kept (signed zeros)."""
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        return fold(np.maximum if largest else np.minimum, x, axes, x.dtype, info.min if largest else info.max)
    if largest:
        start = np.finfo(np.float64 if x.dtype == np.float64 else np.float32).min
    else:
        start = np.inf
    with np.errstate(over="ignore"):
        result = fold(np.fmax if largest else np.fmin, x, axes, x.dtype, x.dtype.type(start))
    zeros = result == 0
    if zeros.any():
        _first_zero_sign(x, axes, result, zeros)
    return result


def _first_zero_sign(x, axes, result, zeros) -> None:
    """Give each zero result the sign of the first zero along its reduced elements (row-major order)."""
    moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
    rows = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    first = np.argmax(rows == 0, axis=-1)[..., None]
    negative = np.signbit(np.take_along_axis(rows, first, axis=-1)[..., 0]).reshape(result.shape)
    result[zeros] = np.where(negative[zeros], -0.0, 0.0).astype(result.dtype)


def _logical(x, axes, both: bool):
    return fold(np.logical_and if both else np.logical_or, x, axes, np.dtype(np.bool_))


REDUCERS = {
    "sum": _sum,
    "mean": _mean,
    "prod": _prod,
    "l1": _l1,
    "l2": _l2,
    "max": lambda x, axes: _extreme(x, axes, True),
    "min": lambda x, axes: _extreme(x, axes, False),
    "and": lambda x, axes: _logical(x, axes, True),
    "or": lambda x, axes: _logical(x, axes, False),
}


def reduce(data: np.ndarray, axes_input: np.ndarray, *, kind: str, axes: tuple[int, ...] | None,
           keep_dims: bool) -> np.ndarray:
    """One reduction (``kind``) over normalised ``axes`` (inference resolved them from ``axes_input``);
    the result is rounded once to the data's type. Float bounds: see the module docstring."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        result = REDUCERS[kind](data, axes)
    if result.dtype != data.dtype:
        result = result.astype(data.dtype)
    if not keep_dims:
        result = result.reshape(tuple(n for i, n in enumerate(data.shape) if i not in axes))
    return result


def prepare_reduce(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts):
    """For static shapes: a float sum or mean (f32/f64, computed in their own type) of an input small enough
    for one thread is one :func:`row_sums` (over the last axes; else ``np.add.reduce``) and two in-place steps,
    under the run's errstate (see runtime.execute), with the values of :func:`reduce`; other reductions are
    the general kernel."""
    kind, axes, keep_dims = params["kind"], params["axes"], params["keep_dims"]
    dtype = inputs[0].element_type.dtype
    shape = inputs[0].shape.to_shape()
    small = 0 < len(shape) and math.prod(shape) < PARALLEL_MIN_ELEMENTS  # (rank 0: numpy reduces to scalars)
    if kind not in ("sum", "mean") or dtype not in _OWN_FLOATS or axes is None or not small:
        return functools.partial(reduce, **params)
    zero = np.zeros((), dtype)  # (0-d arrays: numpy converts scalars at every call)
    count = math.prod(shape[a] for a in axes)
    divisor = np.asarray(dtype.type(count)) if kind == "mean" and count else None
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    out_shape = kept if keep_dims else outputs[0].shape.to_shape()
    by_rows = math.prod(shape) > 0 and axes == tuple(range(len(shape) - len(axes), len(shape)))

    def kernel(data: np.ndarray, axes_input: np.ndarray) -> np.ndarray:
        if by_rows:  # (as _add: strided data copied, so that a block sums as the whole does)
            total = row_sums(np.ascontiguousarray(data.reshape(-1, count)))
        else:
            total = np.add.reduce(data, axis=axes, keepdims=True)
        total += zero  # the reference's sums start at +0: a sum of -0.0s is +0.0
        if divisor is not None:
            total /= divisor
        return total.reshape(out_shape)

    return kernel


_OWN_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# -- CumSum -------------------------------------------------------------------------------------------------

def _infer_cumsum(ctx: OpContext):
    data = ctx.inputs[0]
    et = data.element_type
    if et.kind not in ("float", "int", "uint", "dynamic"):
        ctx.fail(f"data must have a numeric element type, got {et}", position=0)
    if et.kind != "dynamic" and et.name not in _COMPUTED:
        raise UnsupportedError(f"CumSum of element type {et} is not supported", layer=ctx.ref)
    params = {"axis": 0, "exclusive": ctx.attr_bool("exclusive", False), "reverse": ctx.attr_bool("reverse", False)}
    if len(ctx.inputs) > 1:
        axis_spec = ctx.inputs[1]
        if axis_spec.element_type.kind not in ("int", "dynamic") or axis_spec.element_type.bits not in (0, 32, 64):
            ctx.fail(f"axis must have element type i32 or i64, got {axis_spec.element_type}", position=1)
        if axis_spec.shape.rank not in (None, 0):
            ctx.fail(f"axis must be a scalar, got shape {axis_spec.shape.brief()}", position=1)
        value = _axes_value(ctx, 1)
        params["axis"] = None if value is None else value[0]
    rank = data.shape.rank
    if rank is not None and params["axis"] is not None:
        if rank == 0:
            ctx.fail("data must have a rank of at least 1", position=0)
        params["axis"] = normalise_axis(ctx, params["axis"], rank, position=1)
    return [TensorSpec(et, data.shape)], params


def cumsum(data: np.ndarray, axis_input: np.ndarray | None = None, *, axis: int, exclusive: bool,
           reverse: bool) -> np.ndarray:
    """Running sums along ``axis`` in order (f16/bf16 in f32, rounded per output; integers wrap)."""
    acc = compute_dtype(data.dtype)
    x = np.flip(data, axis) if reverse else data
    out = np.empty(data.shape, acc)
    target = np.flip(out, axis) if reverse else out
    with np.errstate(over="ignore", invalid="ignore"):
        if exclusive:
            head = (slice(None),) * axis
            target[head + (slice(0, 1),)] = 0
            np.cumsum(x[head + (slice(0, -1),)], axis=axis, dtype=acc, out=target[head + (slice(1, None),)])
        else:
            np.cumsum(x, axis=axis, dtype=acc, out=target)
    return out if acc == data.dtype else out.astype(data.dtype)


def _batch_cumsum(params, inputs, outputs, axes) -> list | str:
    if axes[0] is not None and params["axis"] is None:
        return "sums along an axis known only at run time"
    if axes[0] is not None and params["axis"] == axes[0]:
        return "sums along the batch axis"
    return [axes[0]]


# -- declarations -------------------------------------------------------------------------------------------

_TABLE = (  # type, version, kind, exact
    ("ReduceSum", 1, "sum", False),
    ("ReduceMean", 1, "mean", False),
    ("ReduceProd", 1, "prod", False),
    ("ReduceMax", 1, "max", True),
    ("ReduceMin", 1, "min", True),
    ("ReduceLogicalAnd", 1, "and", True),
    ("ReduceLogicalOr", 1, "or", True),
    ("ReduceL1", 4, "l1", False),
    ("ReduceL2", 4, "l2", False),
)


def _reduce_op(type_name: str, version: int, kind: str, exact: bool) -> OpDef:
    return OpDef(type_name, version, version, LATEST_OPSET, ("data", "axes"),
                 lambda ctx: _infer_reduce(ctx, kind), reduce, prepare_reduce, roles=("data", "axes"),
                 attrs=(Attr("keep_dims", "false"),), batch=_batch_reduce, exact=exact)


OPS = tuple(_reduce_op(*row) for row in _TABLE) + (
    OpDef("CumSum", 3, 3, LATEST_OPSET, ("data", "axis"), _infer_cumsum, cumsum, roles=("data", "axis"),
          attrs=(Attr("exclusive", "false"), Attr("reverse", "false")), batch=_batch_cumsum),
)
