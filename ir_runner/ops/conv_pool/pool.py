"""MaxPool-1/8/14, AvgPool-1/14/16, AdaptiveAvgPool-8 and AdaptiveMaxPool-8 (1-D, 2-D and 3-D).

Shape inference is OpenVINO's (pooling_shape_inference_util.hpp): ``floor``/``ceil`` rounding of
``(dim + pads - dilated kernel) / stride + 1``; ``ceil_torch`` (v14) drops a last window that would start
in the end padding; ``same_*`` computes pads from static dims (an interval dim gives a dynamic output dim);
``valid`` zeroes the pads. Run-time pads are recomputed from the actual shapes. AvgPool-16 is AvgPool-14
with ``dilations`` (as MaxPool's; its windows count the in-data dilated taps).

MaxPool follows the reference scan exactly (``exact=True``): each window starts from the type's lowest
value (``-FLT_MAX``, ``INT_MIN``; -inf for f16 and bf16) and a tap replaces it only when strictly greater, so NaN never
wins, the first of equal maxima wins, and a window with nothing greater (all NaN, ``-inf``, or padding)
gives the lowest value with index 0. Indices (v8/v14) are flat positions in the unpadded input counted
from the tensor's start, then taken modulo the size of the dims from ``axis`` on (``axis=2``: within the
channel), as ``index_element_type`` (i32 or i64).

AvgPool (``exact=False``): the reference divides the sum of the in-data taps by the number of in-data taps,
or, when ``exclude-pad`` is false and some pad is non-zero, by the whole kernel volume (also for taps past
the end padding in ceil mode). ir-run sums in f32 (f64 for f64) per tap: ``|got - want| <= 2·K·eps·Σ|x| / K``
with K the kernel volume. Integer AvgPool is not implemented (the reference's integer division is
unsigned). AdaptiveAvgPool (bins ``[floor(i·D/O), ceil((i+1)·D/O))``) has the same bound with K the bin
volume. AdaptiveMaxPool is exact; its indices are positions within the channel (as OpenVINO's).
"""

from __future__ import annotations

import functools

import numpy as np

from ...parallel import run_chunked
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec, element_type
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.axes import normalise_axis
from ..toolkit.dims import ceil_div, dim_add, dim_sub, floor_div
from ..toolkit.partial import value_dims
from ..toolkit.window import (
    AUTO_PADS,
    FLOAT_TYPES,
    INTEGER_TYPES,
    FlatTaps,
    as_dim,
    batch_axis_zero,
    pad_input,
    refuse_element_type,
    same_padding,
)

ROUNDING = {"floor": "floor", "ceil": "ceil", "ceil_torch": "ceil_torch"}
INDEX_TYPES = ("i32", "i64")


# -- shape inference ------------------------------------------------------------------------------------------

def _torch_align(n: int | None, stride: int, data: int | None, pad_begin: int) -> int | None:
    """``align_ceil_torch_dimension_size``: count one more window unless the last one starts in the padding
    (``data + pad_begin - 1`` is size_t in OpenVINO: it wraps when both are 0)."""
    if n is None or data is None:
        return n
    limit = data + pad_begin - 1
    if limit < 0:
        limit += 2**64
    return n if n * stride > limit else n + 1


def pool_spatial(ctx: OpContext, data: PartialShape, kernel, strides, dilations, pads_begin, pads_end, auto_pad,
                 rounding) -> list[Dim]:
    """The output spatial dims of a pooling layer (``pads_begin``/``pads_end`` lists updated in place)."""
    spatial = data.dims[2:]
    if auto_pad in ("same_upper", "same_lower"):
        for i, d in enumerate(spatial):
            small, large = same_padding(d, kernel[i], dilations[i], strides[i])
            pads_begin[i], pads_end[i] = (small, large) if auto_pad == "same_upper" else (large, small)
    elif auto_pad == "valid":
        pads_begin[:] = [0] * len(kernel)
        pads_end[:] = [0] * len(kernel)
    out = []
    for i, d in enumerate(spatial):
        if not d.is_static and auto_pad in ("same_upper", "same_lower"):
            out.append(DYNAMIC_DIM)
            continue
        dim = dim_add(d, as_dim(pads_begin[i] + pads_end[i]))
        window = (kernel[i] - 1) * dilations[i] + 1 if kernel[i] >= 1 else -1
        if d.is_static:
            if window <= 0:
                ctx.fail(f"the dilated kernel has dimension less than 1 at spatial axis {i}")
            if window > dim.lo:
                ctx.fail(f"the dilated kernel ({window}) is larger than the padded data ({dim.lo}) at spatial"
                         f" axis {i}")
            if ctx.op.type == "AvgPool" and ctx.attr_bool("exclude-pad", False) and \
                    not (window > pads_begin[i] and window > pads_end[i]):
                ctx.fail(f"the kernel ({window}) is sometimes entirely in the padding area at spatial axis {i}"
                         f" (pads_begin={pads_begin[i]}, pads_end={pads_end[i]}) with exclude-pad")
        dim = dim_sub(dim, as_dim(window))
        dim = (floor_div if rounding == "floor" else ceil_div)(dim, strides[i])
        if rounding == "ceil_torch":
            lo = _torch_align(dim.lo, strides[i], d.lo, pads_begin[i])
            hi = _torch_align(dim.hi, strides[i], d.hi, pads_begin[i]) if d.hi is not None else None
            out.append(Dim(lo, lo) if d.is_static else Dim(lo, hi))
        else:
            out.append(dim_add(dim, Dim(1, 1)))
    return out


def infer_pool(ctx: OpContext, kind: str, version: int):
    spec = ctx.inputs[0]
    if spec.element_type.kind in ("bool", "string"):
        ctx.fail(f"element type must be numeric, got {spec.element_type}", position=0)
    # (integer AvgPool: the reference divides a signed sum by an unsigned count)
    refuse_element_type(ctx, spec.element_type, FLOAT_TYPES + (INTEGER_TYPES if kind == "max" else ()),
                        ctx.op.label)
    kernel = ctx.attr_ints("kernel")
    n = len(kernel)
    strides = ctx.attr_ints("strides", [])
    dilated = version >= 8 if kind == "max" else version >= 16
    dilations = (ctx.attr_ints("dilations", []) or [1] * n) if dilated else [1] * n
    pads_begin = ctx.attr_ints("pads_begin", []) or [0] * n
    pads_end = ctx.attr_ints("pads_end", []) or [0] * n
    auto_pad = ctx.attr_choice("auto_pad", AUTO_PADS, "explicit")
    rounding = ctx.attr_choice("rounding_type", ROUNDING, "floor")
    if len(pads_begin) != n or len(pads_end) != n:
        ctx.fail(f"pads_begin={pads_begin} and pads_end={pads_end} must have one value per kernel dim ({n})")
    if any(p < 0 for p in pads_begin + pads_end):
        ctx.fail(f"pads_begin={pads_begin} and pads_end={pads_end} must not be negative")
    shape = spec.shape
    if shape.rank is not None and shape.rank not in (3, 4, 5):
        ctx.fail(f"expected a 3D, 4D or 5D tensor for the input, got {shape.brief()}", position=0)
    if len(strides) != n:
        ctx.fail(f"strides={strides} must have one value per kernel dim ({n})")
    if len(dilations) != n:
        ctx.fail(f"dilations={dilations} must have one value per kernel dim ({n})")
    if shape.rank is not None and n != shape.rank - 2:
        ctx.fail(f"kernel={kernel} must have one value per spatial dim of the input {shape.brief()}", position=0)
    if any(s == 0 for s in strides):
        ctx.fail(f"strides={strides} has zero dimension(s)")
    if any(d == 0 for d in dilations):
        ctx.fail(f"dilations={dilations} has zero dimension(s)")
    if rounding == "ceil_torch" and version < 14:
        ctx.fail("rounding_type ceil_torch needs MaxPool-14 or AvgPool-14")
    if shape.rank is None:
        out_shape = PartialShape((DYNAMIC_DIM,) * (n + 2))
    else:
        for axis, what in ((0, "batch size"), (1, "channel count")):
            if shape.dims[axis] == Dim(0, 0):
                ctx.fail(f"{what} is zero", position=0)
        spatial = pool_spatial(ctx, shape, kernel, strides, dilations, pads_begin, pads_end, auto_pad, rounding)
        out_shape = PartialShape(shape.dims[:2] + tuple(spatial))
    params = {"kernel": tuple(kernel), "strides": tuple(strides), "dilations": tuple(dilations),
              "pads_begin": tuple(pads_begin), "pads_end": tuple(pads_end), "auto_pad": auto_pad,
              "rounding": rounding}
    outputs = [TensorSpec(spec.element_type, out_shape)]
    if kind == "avg":
        params["exclude_pad"] = ctx.attr_bool("exclude-pad", False)
    elif version >= 8:
        index_type = ctx.attr("index_element_type") or "i64"
        et = element_type(index_type)
        if et is None or et.name not in INDEX_TYPES:
            ctx.fail(f"index_element_type={index_type!r} must be i32 or i64")
        axis = ctx.attr_int("axis", 0)
        axis = normalise_axis(ctx, axis, shape.rank)
        params.update(axis=axis, index_type=et.name)
        outputs.append(TensorSpec(et, out_shape))
    return outputs, params


def infer_adaptive(ctx: OpContext, kind: str):
    data, sizes = ctx.inputs
    if data.element_type.kind not in ("float", "dynamic"):
        ctx.fail(f"data must have a floating-point element type, got {data.element_type}", position=0)
    if sizes.element_type.kind not in ("int", "dynamic"):
        ctx.fail(f"output_shape must be i32 or i64, got {sizes.element_type}", position=1)
    if sizes.shape.rank is not None and sizes.shape.rank != 1:
        ctx.fail(f"output_shape must be 1-D, got {sizes.shape.brief()}", position=1)
    shape = data.shape
    if shape.rank is not None and shape.rank not in (3, 4, 5):
        ctx.fail(f"expected a 3D, 4D or 5D tensor for the input, got {shape.brief()}", position=0)
    params = {}
    if shape.rank is None:
        out_shape = DYNAMIC_SHAPE
    else:
        n = shape.rank - 2
        if sizes.shape.rank == 1 and not sizes.shape.dims[0].contains(n):
            ctx.fail(f"output_shape {sizes.shape.brief()} must have one value per spatial dim ({n})", position=1)
        value = ctx.partial_value(1)
        if value is not None:
            if len(value) != n:
                ctx.fail(f"output_shape has {len(value)} values for {n} spatial dims", position=1)
            spatial = value_dims(ctx, value, 1)
        else:
            spatial = (DYNAMIC_DIM,) * n
        out_shape = PartialShape(shape.dims[:2] + spatial)
    outputs = [TensorSpec(data.element_type, out_shape)]
    if kind == "max":
        index_type = ctx.attr("index_element_type") or "i64"
        et = element_type(index_type)
        if et is None or et.name not in INDEX_TYPES:
            ctx.fail(f"index_element_type={index_type!r} must be i32 or i64")
        outputs.append(TensorSpec(et, out_shape))
        params["index_type"] = et.name
    return outputs, params


# -- kernels --------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _geometry(shape, kernel, strides, dilations, pads_begin, pads_end, auto_pad, rounding):
    """Run-time pads, output spatial shape and the end padding that makes every window fit (tuples; cached:
    a plan repeats them)."""
    spatial = shape[2:]
    begin, end = list(pads_begin), list(pads_end)
    if auto_pad in ("same_upper", "same_lower"):
        for i, d in enumerate(spatial):
            small, large = same_padding(Dim(d, d), kernel[i], dilations[i], strides[i])
            begin[i], end[i] = (small, large) if auto_pad == "same_upper" else (large, small)
    elif auto_pad == "valid":
        begin, end = [0] * len(kernel), [0] * len(kernel)
    out, fit_end = [], []
    for i, d in enumerate(spatial):
        window = (kernel[i] - 1) * dilations[i] + 1
        span = max(d + begin[i] + end[i] - window, 0)
        count = span // strides[i] if rounding == "floor" else -(-span // strides[i])
        if rounding == "ceil_torch":
            count = _torch_align(count, strides[i], d, begin[i])
        else:
            count += 1
        out.append(count)
        fit_end.append(max(end[i], (count - 1) * strides[i] + window - d - begin[i]))
    return tuple(begin), tuple(end), tuple(out), tuple(fit_end)


def _lowest(dtype: np.dtype):
    """The reference's ``numeric_limits<T>::lowest()``: -inf for OpenVINO's f16 and bf16 classes."""
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    if dtype.itemsize == 2:
        return -np.inf
    return np.finfo(dtype).min


def _sign_bit_zero(x: np.ndarray) -> bool:
    """Whether a float ``x`` may hold -0.0 (``fmax`` may then pick another zero than the reference's first)."""
    if x.dtype.kind != "f":
        return False
    if not x.flags.c_contiguous:
        return True
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return bool(np.equal(bits, 1 << (8 * x.dtype.itemsize - 1)).any())


def _flat_rows(x: np.ndarray) -> np.ndarray:
    """``x`` [N, C, *S] as [N*C, *S] (a view when it can be)."""
    return x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:])


def _max_scan(x: np.ndarray, begin, end, kernel, strides, dilations, out_spatial, lowest, want_indices: bool,
              index_dtype) -> tuple[np.ndarray, np.ndarray | None]:
    """The running maximum of [rows, *S] padded with ``lowest`` over the kernel taps and, with
    ``want_indices``, the number of the tap that set it (0 when none was greater than ``lowest``)."""
    rows = x.shape[0]
    taps = FlatTaps(x, begin, end, lowest, kernel, strides, dilations, out_spatial)
    best = np.empty((rows, taps.span), dtype=x.dtype)
    chosen = np.zeros((rows, taps.span), dtype=index_dtype) if want_indices else None
    plain = x.dtype.kind in "iuf" and not _sign_bit_zero(x)  # fmax keeps the scan's bits

    def work(lo: int, hi: int) -> None:
        part = best[lo:hi]
        part.fill(lowest)
        better = np.empty(part.shape, dtype=bool) if want_indices or not plain else None
        number_where = np.empty(part.shape, dtype=index_dtype) if want_indices else None
        for number, view in enumerate(taps.views):
            values = view[lo:hi]
            if want_indices or not plain:
                np.greater(values, part, out=better)
            if plain:
                np.fmax(part, values, out=part)
            else:
                np.copyto(part, values, where=better)
            if want_indices:  # tap numbers grow: the last tap that was greater is the largest number
                np.multiply(better, index_dtype(number), out=number_where)
                np.maximum(chosen[lo:hi], number_where, out=chosen[lo:hi])

    run_chunked(rows, taps.span * len(taps.views), work)
    return taps.crop(best), taps.crop(chosen) if want_indices else None


def _separable(x: np.ndarray, begin, fit_end, pad_value, kernel, strides, dilations, out_spatial,
               ufunc: np.ufunc) -> np.ndarray:
    """``ufunc`` reduced over each window of [rows, *S] padded with ``pad_value`` (no copy when nothing is
    padded), one spatial axis after the other (the windows are boxes): one ``out=`` step per tap of the axis,
    reading strided views. Row blocks are split across threads."""
    n = len(kernel)
    padded = pad_input(x, begin, fit_end, pad_value)
    out = np.empty((x.shape[0],) + tuple(out_spatial), dtype=x.dtype)

    def work(lo: int, hi: int) -> None:
        current = padded[lo:hi]
        for axis in range(n):  # the outer axes first: the last (strided reads) then runs on the smallest array
            k, d, s, o = kernel[axis], dilations[axis], strides[axis], out_spatial[axis]
            lead = (slice(None),) * (1 + axis)
            taps = [current[lead + (slice(j * d, j * d + (o - 1) * s + 1, s),)] for j in range(k)]
            target = out[lo:hi] if axis == n - 1 else np.empty(taps[0].shape, dtype=x.dtype)
            if k == 1:
                np.copyto(target, taps[0])
            else:
                ufunc(taps[0], taps[1], out=target)
                for view in taps[2:]:
                    ufunc(target, view, out=target)
            current = target

    run_chunked(x.shape[0], int(np.prod(padded.shape[1:])) * 2, work)
    return out


def _separable_max(x: np.ndarray, begin, fit_end, kernel, strides, dilations, out_spatial, lowest) -> np.ndarray:
    """The values of the reference's scan for [rows, *S] without -0.0 (``fmax`` keeps its bits): a running
    ``fmax`` over the windows padded with ``lowest`` (:func:`_separable`), then ``fmax`` with ``lowest``, the
    scan's start value (a window of NaN and -inf only gives it)."""
    out = _separable(x, begin, fit_end, lowest, kernel, strides, dilations, out_spatial, np.fmax)
    return np.fmax(out, lowest, out=out)


def max_pool(x, *, kernel, strides, dilations, pads_begin, pads_end, auto_pad, rounding, axis=None,
             index_type=None):
    """MaxPool as the reference scans it (see the module docstring); one vectorised step per kernel tap
    over channel blocks split across threads. Without indices and without -0.0 in the data, a running
    ``fmax`` gives the scan's result (NaN never wins; equal values are equal bits); otherwise each tap
    replaces the running maximum where strictly greater and records its tap number."""
    n = len(kernel)
    begin, end, out_spatial, fit_end = _geometry(x.shape, kernel, strides, dilations, pads_begin, pads_end,
                                                 auto_pad, rounding)
    lowest = _lowest(x.dtype)
    rows = x.shape[0] * x.shape[1]
    want_indices = index_type is not None
    taps = list(np.ndindex(*kernel))
    index_dtype = np.uint8 if len(taps) < 256 else np.int32
    if rows == 0 or 0 in out_spatial:
        best = np.full((rows,) + tuple(out_spatial), lowest, dtype=x.dtype)
        chosen = np.zeros(best.shape, dtype=index_dtype)
    elif not want_indices and x.dtype.kind in "iuf" and not _sign_bit_zero(x):
        best = _separable_max(_flat_rows(x), begin, fit_end, kernel, strides, dilations, out_spatial, lowest)
    else:
        best, chosen = _max_scan(_flat_rows(x), begin, fit_end, kernel, strides, dilations, out_spatial, lowest,
                                 want_indices, index_dtype)
    best = best.reshape(x.shape[:2] + tuple(out_spatial))
    if not want_indices:
        return best
    spatial_strides = [int(np.prod(x.shape[2 + i + 1:])) for i in range(n)]
    tap_offsets = np.array([sum(t[i] * dilations[i] * spatial_strides[i] for i in range(n)) for t in taps],
                           dtype=np.int64)
    base = np.zeros((), dtype=np.int64)
    for i in range(n):
        base = base[..., None] + (np.arange(out_spatial[i]) * strides[i] - begin[i]) * spatial_strides[i]
    index = np.take(tap_offsets, chosen.reshape(best.shape))
    index += base
    start_kept = best == lowest  # no tap was greater than the start value: the scan's index stays 0
    if start_kept.any():
        index[start_kept] = 0
    channel_size = int(np.prod(x.shape[2:]))
    if axis != 2:  # positions counted from the tensor's start (then reduced modulo the dims from ``axis`` on)
        rows = np.arange(x.shape[0] * x.shape[1], dtype=np.int64) * channel_size
        index += rows.reshape(x.shape[:2] + (1,) * n)
        if axis:
            index %= max(int(np.prod(x.shape[axis:])), 1)
    with np.errstate(over="ignore"):
        return best, index.astype(np.int32 if index_type == "i32" else np.int64, copy=False)


def prepare_max_pool(params, inputs, outputs, consts):
    """MaxPool-8/14 whose indices no layer reads (the plan gives None as their spec): the values only, and
    None for the indices."""
    if len(outputs) < 2 or outputs[1] is not None:
        return functools.partial(max_pool, **params)
    values = functools.partial(max_pool, **{k: v for k, v in params.items() if k not in ("axis", "index_type")})

    def values_only(x):
        return values(x), None

    return values_only


def max_pool_v1(x, **params):
    """MaxPool-1: values only (the same scan)."""
    return max_pool(x, **params)


def avg_pool(x, *, kernel, strides, dilations, pads_begin, pads_end, auto_pad, rounding, exclude_pad):
    """AvgPool: sum of the in-data taps divided as the reference does (module docstring); bound 2·K·eps."""
    work = np.float64 if x.dtype == np.float64 else np.float32
    begin, fit_end, out_spatial, count, whole = _avg_geometry(x.shape, np.dtype(work), kernel, strides, dilations,
                                                              pads_begin, pads_end, auto_pad, rounding, exclude_pad)
    rows = x.shape[0] * x.shape[1]
    if rows and 0 not in out_spatial:
        flat = _flat_rows(x).astype(work, copy=False)
        if whole:
            total = np.add.reduce(flat.reshape(rows, -1), axis=1)  # global pooling: one sum per row
        else:
            total = _separable(flat, begin, fit_end, 0, kernel, strides, dilations, out_spatial, np.add)
    else:
        total = np.zeros((rows,) + out_spatial, dtype=work)
    total = total.reshape(x.shape[:2] + out_spatial)
    if count is not None:
        result = np.divide(total, count, out=total)
    else:
        counts = _avg_counts(x.shape, work, kernel, strides, dilations, begin, out_spatial)
        with np.errstate(invalid="ignore", divide="ignore"):
            result = np.where(counts > 0, total / np.where(counts > 0, counts, 1), 0)
    return result.astype(x.dtype, copy=False)


@functools.lru_cache(maxsize=256)
def _avg_geometry(shape, work, kernel, strides, dilations, pads_begin, pads_end, auto_pad, rounding, exclude_pad):
    """AvgPool's run-time pads, output shape and divisors for one input shape (cached: a plan repeats them):
    (begin, fit_end, out_spatial, count, whole) with ``count`` the read-only divisors (None when some window
    has no in-data tap) and ``whole`` when one window covers each channel (global pooling)."""
    begin, end, out_spatial, fit_end = _geometry(shape, kernel, strides, dilations, pads_begin, pads_end, auto_pad,
                                                 rounding)
    if not exclude_pad and any(begin) + any(end):
        count = np.full(out_spatial, float(np.prod(kernel)), dtype=work)
    else:
        count = _avg_counts(shape, work, kernel, strides, dilations, begin, out_spatial)
    count = count if (count > 0).all() else None
    if count is not None:
        count.flags.writeable = False
    whole = (all(o == 1 for o in out_spatial) and tuple(kernel) == tuple(shape[2:]) and not any(begin) + any(fit_end)
             and all(d == 1 for d in dilations))
    return begin, fit_end, out_spatial, count, whole


def _avg_counts(shape, work, kernel, strides, dilations, begin, out_spatial) -> np.ndarray:
    """The number of in-data taps of each window (dilated taps: AvgPool-16)."""
    count = np.ones((), dtype=work)
    for i in range(len(kernel)):
        starts = np.arange(out_spatial[i]) * strides[i] - begin[i]
        positions = starts[:, None] + np.arange(kernel[i]) * dilations[i]
        inside = (positions >= 0) & (positions < shape[2 + i])
        count = count[..., None] * inside.sum(axis=1).astype(work)
    return count


def _bins(size: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive pooling bins along one axis: ``[floor(i*size/count), ceil((i+1)*size/count))``."""
    i = np.arange(count)
    return (i * size) // count, -(-((i + 1) * size) // count)


def _bin_taps(x: np.ndarray, axis: int, count: int):
    """For each bin along ``axis``: the stacked taps ``[..., count, width]`` and the mask of real taps."""
    start, stop = _bins(x.shape[axis], count)
    width = int((stop - start).max()) if count else 0
    positions = start[:, None] + np.arange(width)
    valid = positions < stop[:, None]
    taken = np.take(x, np.minimum(positions, max(x.shape[axis] - 1, 0)).reshape(-1), axis=axis)
    taken = np.moveaxis(taken, axis, -1).reshape(taken.shape[:axis] + taken.shape[axis + 1:] + (count, width))
    return taken, valid, start


def adaptive_avg_pool(x, sizes, **_params):
    """AdaptiveAvgPool-8: bin sums axis by axis (f32, f64 for f64), divided by the bin volume; bound 2·K·eps."""
    work = np.float64 if x.dtype == np.float64 else np.float32
    result = x.astype(work, copy=False)
    counts = np.ones((), dtype=work)
    target = [int(v) for v in np.asarray(sizes).reshape(-1)]
    for i, count in enumerate(target):
        axis = 2 + i
        taken, valid, _ = _bin_taps(result, axis, count)
        summed = np.where(valid, taken, 0).sum(axis=-1)
        result = np.moveaxis(summed, -1, axis)
        counts = counts[..., None] * valid.sum(axis=1).astype(work)
    return (result / counts).astype(x.dtype)


def adaptive_max_pool(x, sizes, *, index_type):
    """AdaptiveMaxPool-8: the first maximum of each bin (NaN compares as the reference's ``>``) and its
    position within the channel."""
    target = [int(v) for v in np.asarray(sizes).reshape(-1)]
    n = len(target)
    spatial = x.shape[2:]
    starts, stops = zip(*(_bins(d, o) for d, o in zip(spatial, target)))
    widths = [int((b - a).max()) if len(a) else 0 for a, b in zip(starts, stops)]
    best = None
    index = None
    spatial_strides = [int(np.prod(spatial[i + 1:])) for i in range(n)]
    for tap in np.ndindex(*widths):
        pos = [np.minimum(starts[i] + tap[i], stops[i] - 1) for i in range(n)]
        grid = np.ix_(*pos)
        values = x[(slice(None), slice(None)) + grid]
        flat = sum(p.reshape((-1,) + (1,) * (n - 1 - i)) * spatial_strides[i] for i, p in enumerate(pos))
        if best is None:
            best = values.copy()
            index = np.broadcast_to(flat, best.shape).astype(np.int64)
            continue
        better = values > best
        np.copyto(best, values, where=better)
        np.copyto(index, np.broadcast_to(flat, best.shape), where=better)
    if best is None:
        best = np.zeros(x.shape[:2] + tuple(target), dtype=x.dtype)
        index = np.zeros(best.shape, dtype=np.int64)
    return best, index.astype(np.int32 if index_type == "i32" else np.int64)


_POOL = (Attr("kernel"), Attr("strides"), Attr("pads_begin"), Attr("pads_end"),
         Attr("auto_pad", "explicit", tuple(AUTO_PADS)))
_MAX8 = _POOL + (Attr("dilations"), Attr("rounding_type", "floor", tuple(ROUNDING)), Attr("axis", "0"),
                 Attr("index_element_type", "i64", INDEX_TYPES))
_AVG = _POOL + (Attr("exclude-pad", "false"), Attr("rounding_type", "floor", tuple(ROUNDING)))
OPS = (
    OpDef("MaxPool", 1, 1, 7, ("data",), lambda ctx: infer_pool(ctx, "max", 1), max_pool_v1,
          attrs=_POOL + (Attr("rounding_type", "floor", ("floor", "ceil")),), batch=batch_axis_zero),
    OpDef("MaxPool", 8, 8, 13, ("data",), lambda ctx: infer_pool(ctx, "max", 8), max_pool, prepare_max_pool,
          attrs=_MAX8, batch=batch_axis_zero),
    OpDef("MaxPool", 14, 14, LATEST_OPSET, ("data",), lambda ctx: infer_pool(ctx, "max", 14), max_pool,
          prepare_max_pool, attrs=_MAX8, batch=batch_axis_zero),
    OpDef("AvgPool", 1, 1, 13, ("data",), lambda ctx: infer_pool(ctx, "avg", 1), avg_pool, attrs=_AVG,
          batch=batch_axis_zero, exact=False),
    OpDef("AvgPool", 14, 14, 15, ("data",), lambda ctx: infer_pool(ctx, "avg", 14), avg_pool,
          attrs=_AVG, batch=batch_axis_zero, exact=False),
    OpDef("AvgPool", 16, 16, LATEST_OPSET, ("data",), lambda ctx: infer_pool(ctx, "avg", 16), avg_pool,
          attrs=_AVG + (Attr("dilations"),), batch=batch_axis_zero, exact=False),
    OpDef("AdaptiveAvgPool", 8, 8, LATEST_OPSET, ("data", "output_shape"),
          lambda ctx: infer_adaptive(ctx, "avg"), adaptive_avg_pool, roles=("data", "shape"),
          batch=batch_axis_zero, exact=False),
    OpDef("AdaptiveMaxPool", 8, 8, LATEST_OPSET, ("data", "output_shape"),
          lambda ctx: infer_adaptive(ctx, "max"), adaptive_max_pool, roles=("data", "shape"),
          attrs=(Attr("index_element_type", "i64", INDEX_TYPES),), batch=batch_axis_zero),
)
