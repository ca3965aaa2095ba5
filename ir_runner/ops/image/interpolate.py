"""Interpolate-4 (data, sizes, scales[, axes]) and Interpolate-11 (data, scales_or_sizes[, axes]).

The data is zero-padded by ``pads_begin``/``pads_end`` (all dims), then resized along ``axes`` (default: all).
``shape_calculation_mode=sizes`` takes the output dims from the sizes and uses the scales ``out / in``
(f32); ``scales`` takes the scales and makes the dims ``int(f32(in) · f32(scale + 1e-6))`` (as OpenVINO's
shape inference; a scale of exactly 1 keeps the dim).

Every mode is separable, as in OpenVINO's reference: each axis is resized on its own.

- ``nearest``: a source index per output index. It uses the coordinate transformation (half_pixel,
  pytorch_half_pixel, asymmetric, tf_half_pixel_for_nn, align_corners) and the nearest_mode
  (round_prefer_floor, round_prefer_ceil, floor, ceil, simple), both in f32 arithmetic as in the
  reference, clamped to the axis. It is an ``np.take`` per axis and bit-exact.
- ``linear``: a triangle filter over ``[round(x) - r, round(x) + r]``, normalised by the sum of its
  weights. With ``antialias`` and some scale below 1, it is widened to ``1 / scale``.
- ``linear_onnx``: two taps, the coordinate clamped into the axis.
- ``cubic``: four taps with ``cube_coeff``, the indices clamped.
- ``bilinear_pillow`` and ``bicubic_pillow`` (v11, exactly two axes): Pillow's resampling filters, with
  f64 weights. Pillow's horizontal pass (the second axis) runs first, and the result is rounded to the
  data type after each pass.

The weighted modes use a dense weight matrix per axis, applied with ``np.tensordot`` (BLAS). They compute
in f32 (f64 data in f64), as the reference does, but they sum in a different order. Bound: relative
error ``4·T·eps`` of the output's scale, where T is the number of taps per output element (2**k for
linear_onnx over k axes, 4**k for cubic). Integer data is rounded as the reference rounds it:
``linear`` rounds half away from zero, ``linear_onnx`` and ``cubic`` truncate, and Pillow rounds and
clips after each pass.

Deviations from the reference, all documented in docs/semantics.md (interpolation):

- ``linear_onnx`` over axes other than all of them or the spatial ones: the reference throws, ir-run
  interpolates each axis.

Interpolate-1 (opset1..opset3): resized as OpenVINO's plugins run it, converted to Interpolate-4
(``ConvertInterpolate1ToInterpolate4``): ``nearest`` with ``nearest_mode="simple"``; ``linear`` as
``linear_onnx`` below rank 5 (``linear`` at rank 5); ``cubic`` with ``cube_coeff=-0.75``; sizes from
``target_spatial_shape`` (an integer 1-D tensor), in the order of the axes sorted (``axes`` is an AxisSet: a
repeated axis counts once); coordinates ``align_corners`` when ``align_corners`` (the default), else
``half_pixel`` for linear without pads unless the axes are {2, 3} of a 4-D input, else ``asymmetric``.
``area`` (which no plugin runs) and pads on axes that are not resized (which the shapes of Interpolate-1 and
Interpolate-4 disagree on) are refused as unsupported. Float data: within Interpolate-4's bound of the CPU plugin.
Integer data: as the reference of the Interpolate-4 it becomes (no reference evaluates Interpolate-1):
``linear_onnx`` and ``cubic`` truncate the f32 result, where the CPU plugin rounds it to nearest even (up to 1
above; measured on u8 and i8, both alignments).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...errors import UnsupportedError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.index_rules import require_integer
from ..toolkit.rounding import round_half_away

_MODES4 = ("nearest", "linear", "linear_onnx", "cubic")
_MODES11 = _MODES4 + ("bilinear_pillow", "bicubic_pillow")
_TRANSFORMS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")
_F32 = np.float32
_EPS = _F32(1e-6)


def _attrs(ctx: OpContext, version: int) -> dict:
    modes = _MODES11 if version == 11 else _MODES4
    mode = ctx.attr_choice("mode", {m: m for m in modes}, None)
    calc = ctx.attr_choice("shape_calculation_mode", {"sizes": "sizes", "scales": "scales"}, None)
    if mode is None or calc is None:
        ctx.fail("the attributes mode and shape_calculation_mode are required")
    return {
        "mode": mode,
        "calc": calc,
        "transform": ctx.attr_choice("coordinate_transformation_mode", {m: m for m in _TRANSFORMS}, "half_pixel"),
        "nearest_mode": ctx.attr_choice("nearest_mode", {m: m for m in _NEAREST}, "round_prefer_floor"),
        "antialias": ctx.attr_bool("antialias", False),
        "cube_coeff": ctx.attr_float("cube_coeff", -0.75),
    }


def _pads(ctx: OpContext, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    begin, end = ctx.attr_ints("pads_begin", [0]), ctx.attr_ints("pads_end", [0])
    if any(p < 0 for p in begin + end):
        ctx.fail(f"pads must be non-negative, got pads_begin={begin}, pads_end={end}")
    fit = lambda p: tuple((p + [0] * rank)[:rank])  # noqa: E731 - resized to the rank, as OpenVINO does
    return fit(begin), fit(end)


def infer_interpolate(ctx: OpContext, version: int):
    data = ctx.inputs[0]
    params = _attrs(ctx, version)
    if data.element_type.kind in ("bool", "string"):
        ctx.fail(f"data must be numeric, got {data.element_type}", position=0)
    for i in range(1, len(ctx.inputs)):
        r = ctx.inputs[i].shape.rank
        if r is not None and r != 1:
            ctx.fail(f"input {i} must be 1-D, got {ctx.inputs[i].shape.brief()}", position=i)
    axes_at = 3 if version == 4 else 2
    source_at = (1 if params["calc"] == "sizes" else 2) if version == 4 else 1
    rank = data.shape.rank
    params.update(axes=None, pads_begin=None, pads_end=None)
    if rank is None:
        return [TensorSpec(data.element_type, PartialShape(None))], params
    begin, end = _pads(ctx, rank)
    params.update(pads_begin=begin, pads_end=end)
    if len(ctx.inputs) > axes_at:
        value = ctx.const_value(axes_at)
        if value is None:
            return [TensorSpec(data.element_type, PartialShape((DYNAMIC_DIM,) * rank))], params
        axes = tuple(int(a) for a in value.reshape(-1))  # in the order given: it pairs them with sizes
        if any(not 0 <= a < rank for a in axes):
            ctx.fail(f"axes {list(axes)} must be within [0, {rank - 1}] (OpenVINO refuses negative axes)",
                     position=axes_at)
    else:
        axes = tuple(range(rank))
    params["axes"] = axes
    if params["mode"].endswith("_pillow") and len(axes) != 2:
        ctx.fail(f"{params['mode']} resizes exactly two axes, got axes {list(axes)}")
    dims = [Dim(d.lo + b + e, None if d.hi is None else d.hi + b + e)  # (pads widen interval bounds too)
            for d, b, e in zip(data.shape.dims, begin, end)]
    if params["calc"] == "sizes":
        sizes = ctx.partial_value(source_at)
        if sizes is not None and len(sizes) < len(axes):
            ctx.fail(f"sizes has {len(sizes)} elements for {len(axes)} axes", position=source_at)
        for i, axis in enumerate(axes):
            if sizes is not None and dims[axis] == Dim(0, 0) and sizes[i].lo > 0:
                ctx.fail(f"axis {axis} has no element to resize to {sizes[i]} (OpenVINO's kernels read out of"
                         " bounds)", position=source_at)
            dims[axis] = sizes[i] if sizes is not None else DYNAMIC_DIM
    else:
        scales = ctx.const_value(source_at)
        if scales is not None and scales.size < len(axes):
            ctx.fail(f"scales has {scales.size} elements for {len(axes)} axes", position=source_at)
        for i, axis in enumerate(axes):
            dims[axis] = _scaled_dim(dims[axis], scales.reshape(-1)[i]) if scales is not None else DYNAMIC_DIM
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], params


def _scaled_dim(d: Dim, scale) -> Dim:
    s = _F32(scale)
    if s == _F32(1):
        return d
    lo = scaled_length(d.lo, s)
    if d.hi is None:
        return Dim(lo, None if _F32(s + _EPS) > 0 else 0)
    hi = scaled_length(d.hi, s)
    return Dim(lo, hi) if lo <= hi else DYNAMIC_DIM


def scaled_length(n: int, scale) -> int:
    """An axis of ``n`` scaled: ``int(f32(n) · f32(scale + 1e-6))`` as OpenVINO's shape inference computes it,
    ``n`` for a scale of exactly 1; a product that int64 cannot hold (inf, NaN, 1e30) converts to INT64_MIN as
    on x86, and a negative length is 0 (scales [-1,-1] or [-inf,-inf] give empty axes, as OpenVINO infers)."""
    s = _F32(scale)
    if s == _F32(1):
        return n
    with np.errstate(over="ignore", invalid="ignore"):
        product = _F32(n) * _F32(s + _EPS)
    if not -(2.0**63) <= product < 2.0**63:  # (False for NaN)
        return 0
    return max(int(product), 0)


def _infer4(ctx):
    return infer_interpolate(ctx, 4)


def _infer11(ctx):
    return infer_interpolate(ctx, 11)


# -- kernels -----------------------------------------------------------------------------------------------


def interpolate4(data: np.ndarray, sizes: np.ndarray, scales: np.ndarray, axes_input: np.ndarray | None = None,
                 **params) -> np.ndarray:
    """Interpolate-4: the output dims from ``sizes`` or ``scales`` by ``shape_calculation_mode``."""
    return _run(data, sizes if params["calc"] == "sizes" else scales, axes_input, **params)


def interpolate11(data: np.ndarray, scales_or_sizes: np.ndarray, axes_input: np.ndarray | None = None,
                  **params) -> np.ndarray:
    """Interpolate-11: one input holds the sizes or the scales."""
    return _run(data, scales_or_sizes, axes_input, **params)


def _run(data, source, axes_input, **params) -> np.ndarray:
    return Resize(data.shape, data.dtype, source, axes_input, **params)(data)


class Resize:
    """An interpolation of inputs of one shape and dtype, its tables (output dims, per axis the nearest
    indices or the weight matrix in the compute type and the shapes of its product) resolved at construction:
    per call for the plain kernel, once per plan when prepared. ``kernel(data, *other_inputs)``."""

    def __init__(self, shape, dtype, source, axes_input, *, mode, calc, transform, nearest_mode, antialias,
                 cube_coeff, axes, pads_begin, pads_end) -> None:
        rank = len(shape)
        if axes is None:
            axes = tuple(range(rank)) if axes_input is None else tuple(int(a) for a in axes_input.reshape(-1))
        if pads_begin is None:
            pads_begin = pads_end = (0,) * rank
        self.pads = list(zip(pads_begin, pads_end)) if any(pads_begin) or any(pads_end) else None
        shape = tuple(n + b + e for n, b, e in zip(shape, pads_begin, pads_end))
        source = np.asarray(source).reshape(-1)
        out_lens, scales = [], []
        for i, axis in enumerate(axes):
            n = shape[axis]
            if calc == "sizes":
                m = int(source[i])
                out_lens.append(m)
                scales.append(_F32(_F32(m) / _F32(n)) if n else _F32(1))
            else:
                s = _F32(source[i])
                scales.append(s)
                out_lens.append(scaled_length(n, s))
        self.mode, self.dtype, self.axes, self.out_lens, self.cube_coeff = mode, np.dtype(dtype), axes, out_lens, \
            cube_coeff
        self.steps = []
        if mode == "nearest":  # per axis: the source indices
            for axis, m, s in zip(axes, out_lens, scales):
                self.steps.append((axis, _nearest_index(shape[axis], m, s, transform, nearest_mode)))
            return
        if mode.endswith("_pillow"):
            return
        self.work = np.dtype(np.float64) if self.dtype == np.float64 else np.dtype(_F32)
        self.rounding = "round" if mode == "linear" else "trunc"
        downsample = any(s < _F32(1) for s in scales)
        for axis, m, s in zip(axes, out_lens, scales):  # per axis: the weights and the shapes of their product
            n = shape[axis]
            if m == n and mode == "linear_onnx":  # (weights 1 and 0: the reference keeps an infinity in its row,
                continue  # where a product would give every other row 0 x inf = NaN)
            if mode == "linear":
                w = _linear_weights(n, m, s, transform, _F32(s) if antialias and downsample else _F32(1))
            elif mode == "linear_onnx":
                w = _onnx_weights(n, m, s, transform)
            else:
                w = _cubic_weights(n, m, s, transform, _F32(cube_coeff))
            w = w.astype(self.work, copy=False)
            lead, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
            shape = shape[:axis] + (m,) + shape[axis + 1:]
            if inner == 1:  # one BLAS product for the last axis
                self.steps.append((w.T, (lead, n), True, shape))
            else:  # a batched w @ y[lead, in, inner] (no transposed copies)
                self.steps.append((w, (lead, n, inner), False, shape))

    def __call__(self, data: np.ndarray, *other_inputs) -> np.ndarray:
        x = np.pad(data, self.pads) if self.pads is not None else data
        if self.mode == "nearest":
            for axis, index in self.steps:
                x = np.take(x, index, axis=axis)
            return np.ascontiguousarray(x) if x is not data else x.copy()
        if self.mode.endswith("_pillow"):
            return _pillow(x, self.axes, self.out_lens, self.mode, self.cube_coeff, data.dtype)
        y = x.astype(self.work, copy=False)  # never written: every step makes a new array
        for w, shape, last, out_shape in self.steps:
            y = (np.matmul(y.reshape(shape), w) if last else np.matmul(w, y.reshape(shape))).reshape(out_shape)
        return _to_type(y, data.dtype, self.rounding)


def prepare_interpolate(version: int):
    """For Interpolate with static shapes and constant sizes/scales and axes: the tables built once per plan."""
    kernel = interpolate4 if version == 4 else interpolate11

    def prepare(params, inputs, outputs, consts):
        source_at = 1 if version == 11 or params.get("calc") == "sizes" else 2
        if consts[source_at] is None or params.get("axes") is None:
            return functools.partial(kernel, **params)
        return Resize(inputs[0].shape.to_shape(), inputs[0].element_type.dtype, consts[source_at], None, **params)
    return prepare


def _apply(y: np.ndarray, w: np.ndarray, axis: int) -> np.ndarray:
    """``y`` resized along ``axis`` by the weight matrix ``w`` ``[out, in]``: one BLAS product for the last
    axis, else a batched ``w @ y[lead, in, inner]`` (no transposed copies)."""
    shape = y.shape
    lead, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis + 1:]))
    if inner == 1:
        out = np.matmul(y.reshape(lead, shape[axis]), w.T)
    else:
        out = np.matmul(w, y.reshape(lead, shape[axis], inner))
    return out.reshape(shape[:axis] + (w.shape[0],) + shape[axis + 1:])


def _to_type(y: np.ndarray, dtype: np.dtype, rounding: str) -> np.ndarray:
    """``y`` in the data type: floats round once; integers round (``round``: ``std::round``, halves away from
    zero; ``half_up``: Pillow's :func:`_pillow_round`) or truncate, then Pillow's passes clip to the type's range
    and the others wrap, as the reference's casts do on x86 (float to int64, then to the narrow type)."""
    if dtype.kind in "iu":
        with np.errstate(invalid="ignore"):
            if rounding == "half_up":
                info = np.iinfo(dtype)
                return np.clip(np.nan_to_num(_pillow_round(y)), info.min, info.max).astype(dtype)
            r = np.nan_to_num(round_half_away(y) if rounding == "round" else np.trunc(y))
            return r.astype(np.int64).astype(dtype)
    return y.astype(dtype)


def _pillow_round(y: np.ndarray) -> np.ndarray:
    """The reference's Pillow ``round_up``: ``y + 0.5`` (``y - 0.5`` below 0) truncated, in f64 (as ``y``): not
    ``std::round``, it rounds the largest double below 0.5 up to 1."""
    return np.trunc(y + np.copysign(0.5, y))


def _source_coords(n: int, m: int, scale, transform: str) -> np.ndarray:
    """f32 source coordinates of the ``m`` output positions of an axis of ``n`` (OpenVINO's reference)."""
    x = np.arange(m, dtype=_F32)
    s = _F32(scale)
    if s == _F32(1) or m == n:
        return x
    half = _F32(0.5)
    if transform == "half_pixel":
        return (x + half) / s - half
    if transform == "pytorch_half_pixel":
        return (x + half) / s - half if m > 1 else np.zeros(m, _F32)
    if transform == "asymmetric":
        return x / s
    if transform == "tf_half_pixel_for_nn":
        return (x + half) / s
    if m == 1:  # align_corners
        return np.zeros(m, _F32)
    return x * _F32(n - 1) / _F32(m - 1)


def _nearest_index(n: int, m: int, scale, transform: str, nearest_mode: str) -> np.ndarray:
    c = _source_coords(n, m, scale, transform)
    if nearest_mode == "round_prefer_floor":
        tie = c == np.trunc(c) + _F32(0.5)
        idx = np.where(tie, np.floor(c), round_half_away(c))
    elif nearest_mode == "round_prefer_ceil":
        idx = round_half_away(c)
    elif nearest_mode == "floor":
        idx = np.floor(c)
    elif nearest_mode == "ceil":
        idx = np.ceil(c)
    else:  # simple
        idx = np.ceil(c) if _F32(scale) < _F32(1) else np.trunc(c)
    return np.clip(idx.astype(np.int64), 0, max(n - 1, 0))


def _frozen(w: np.ndarray) -> np.ndarray:
    """A cached weight matrix, read-only: every call of the kernel shares it."""
    w.setflags(write=False)
    return w


@functools.lru_cache(maxsize=64)
def _linear_weights(n: int, m: int, scale, transform: str, a) -> np.ndarray:
    c = _source_coords(n, m, scale, transform)
    r = 2 if _F32(scale) > _F32(1) else int(np.ceil(_F32(2) / a))
    centre = round_half_away(c).astype(np.int64)
    w = np.zeros((m, n), _F32)
    rows = np.arange(m)
    for j in range(-r, r + 1):  # the 2r+1 taps of every output position at once
        idx = centre + j
        ok = (idx >= 0) & (idx < n)
        dz = c - idx.astype(_F32)
        tap = np.maximum(_F32(0), _F32(1) - np.abs(a * dz))
        np.add.at(w, (rows[ok], idx[ok]), tap[ok])
    sums = w.sum(axis=1, keepdims=True)
    return _frozen(np.divide(w, sums, out=np.zeros_like(w), where=sums != 0))


@functools.lru_cache(maxsize=64)
def _onnx_weights(n: int, m: int, scale, transform: str) -> np.ndarray:
    c = np.clip(_source_coords(n, m, scale, transform), _F32(0), _F32(n - 1))
    i1 = np.minimum(c.astype(np.int64), n - 1)
    i2 = np.minimum(i1 + 1, n - 1)
    d1 = np.abs(c - i1.astype(_F32))
    d2 = np.abs(c - i2.astype(_F32))
    same = i1 == i2
    d1[same] = d2[same] = _F32(0.5)
    w = np.zeros((m, n), _F32)
    rows = np.arange(m)
    np.add.at(w, (rows, i1), d2)
    np.add.at(w, (rows, i2), d1)
    return _frozen(w)


@functools.lru_cache(maxsize=64)
def _cubic_weights(n: int, m: int, scale, transform: str, a) -> np.ndarray:
    c = _source_coords(n, m, scale, transform)
    base = np.floor(c)
    s = np.abs(c - base)
    one, two = _F32(1), _F32(2)
    coeffs = (
        ((a * (s + one) - _F32(5) * a) * (s + one) + _F32(8) * a) * (s + one) - _F32(4) * a,
        ((a + two) * s - (a + _F32(3))) * s * s + one,
        ((a + two) * (one - s) - (a + _F32(3))) * (one - s) * (one - s) + one,
        ((a * (two - s) - _F32(5) * a) * (two - s) + _F32(8) * a) * (two - s) - _F32(4) * a,
    )
    w = np.zeros((m, n), _F32)
    rows = np.arange(m)
    base = base.astype(np.int64)
    for j, coeff in enumerate(coeffs):
        np.add.at(w, (rows, np.clip(base + j - 1, 0, n - 1)), coeff)
    return _frozen(w)


@functools.lru_cache(maxsize=64)
def _pillow_weights(n: int, m: int, support: float, kernel, a: float) -> np.ndarray:
    """Pillow's normalised f64 filter weights ``[m, n]`` over the box ``[0, n]``."""
    scale = n / m
    filterscale = max(scale, 1.0)
    support *= filterscale
    centre = (np.arange(m) + 0.5) * scale
    lo = np.maximum((centre - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((centre + support + 0.5).astype(np.int64), n)
    cols = np.arange(n)
    inside = (cols[None, :] >= lo[:, None]) & (cols[None, :] < hi[:, None])
    w = np.where(inside, kernel((cols[None, :] - centre[:, None] + 0.5) / filterscale, a), 0.0)
    sums = w.sum(axis=1, keepdims=True)
    return _frozen(np.divide(w, sums, out=w.copy(), where=sums != 0))


def _bilinear(x, a):
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _bicubic(x, a):
    x = np.abs(x)
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1
    far = (((x - 5) * x + 8) * x - 4) * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _pillow(x: np.ndarray, axes, out_lens, mode: str, a: float, dtype: np.dtype) -> np.ndarray:
    kernel, support = (_bilinear, 1.0) if mode == "bilinear_pillow" else (_bicubic, 2.0)
    y = x
    for axis, m in ((axes[1], out_lens[1]), (axes[0], out_lens[0])):  # horizontal pass first, as Pillow
        n = y.shape[axis]
        if m == n:
            continue
        y = _to_type(_apply(y.astype(np.float64), _pillow_weights(n, m, support, kernel, a), axis), dtype,
                     "half_up")
    return y if y is not x else x.copy()


def _batch_rule(params, inputs, outputs, axes):
    """The batch axis passes when it is neither padded nor resized; an axis "resized" to its own length is
    left alone by nearest (its indices are the identity), linear_onnx and Pillow's modes (they skip it), while
    linear and cubic weigh each row with its neighbours there (the reference turns a neighbour's infinity
    into NaN)."""
    b = axes[0]
    if any(a is not None for a in axes[1:]):
        return "sizes, scales or axes have a batch axis"
    if b is None:
        return [None]
    if params["axes"] is None or (params["pads_begin"] or (0,) * (b + 1))[b] or (
            params["pads_end"] or (0,) * (b + 1))[b]:
        return "resizes or pads the batch axis"
    if b in params["axes"]:
        rows = inputs[0].shape.dims[b]
        if not (rows.is_static and rows == outputs[0].shape.dims[b]):
            return "resizes the batch axis"
        if params["mode"] in ("linear", "cubic"):
            return (f"it resizes every axis, the batch axis at scale 1 too, and {params['mode']} weighs each row"
                    " with its neighbours there (a zero weight times an infinity is NaN, in the reference too)")
    return [b]


_COMMON_ATTRS = (
    Attr("shape_calculation_mode", None, ("sizes", "scales")),
    Attr("coordinate_transformation_mode", "half_pixel", _TRANSFORMS),
    Attr("nearest_mode", "round_prefer_floor", _NEAREST), Attr("antialias", "false", ("true", "false")),
    Attr("pads_begin", "0"), Attr("pads_end", "0"), Attr("cube_coeff", "-0.75"),
)
INTERPOLATE1_MODES = ("nearest", "linear", "cubic", "area")


def infer_interpolate1(ctx: OpContext):
    data, target = ctx.inputs
    if data.element_type.kind in ("bool", "string"):
        ctx.fail(f"data must be numeric, got {data.element_type}", position=0)
    mode = ctx.attr_choice("mode", {m: m for m in INTERPOLATE1_MODES}, None)
    if mode is None:
        ctx.fail("the attribute mode is required")
    if mode == "area":
        raise UnsupportedError("Interpolate-1 mode 'area': no OpenVINO plugin runs it (the conversion to"
                               " Interpolate-4 has no mode for it)", layer=ctx.ref)
    axes = ctx.attr_ints("axes")
    require_integer(ctx, 1, "target_spatial_shape")
    if target.shape.rank not in (None, 1):  # (OpenVINO's core takes any rank; its conversion to v4, not)
        ctx.fail(f"target_spatial_shape must be 1-D, got {target.shape.brief()}", position=1)
    rank = data.shape.rank
    if rank is None:
        return [TensorSpec(data.element_type, DYNAMIC_SHAPE)], {}
    if any(not 0 <= a < rank for a in axes):
        ctx.fail(f"axes {axes} must be within [0, {rank - 1}]")
    axes = sorted(set(axes))  # (an AxisSet: target_spatial_shape's values go to the axes in increasing order)
    if mode == "linear" and rank > 5:
        raise UnsupportedError(f"Interpolate-1 linear of rank {rank}: OpenVINO's plugins resize ranks up to 5",
                               layer=ctx.ref)
    begin, end = (tuple((ctx.attr_ints(name, []) + [0] * rank)[:rank]) for name in ("pads_begin", "pads_end"))
    if min(begin + end, default=0) < 0:
        ctx.fail(f"pads_begin={list(begin)} and pads_end={list(end)} must not be negative (unsigned in"
                 " Interpolate-1)")
    if any((b or e) and i not in axes for i, (b, e) in enumerate(zip(begin, end))):
        raise UnsupportedError(f"pads_begin={list(begin)} and pads_end={list(end)} pad axes that are not resized:"
                               " Interpolate-1's shape keeps them, Interpolate-4 (which plugins run) widens them",
                               layer=ctx.ref)
    aligned = ctx.attr_bool("align_corners", True)
    half_pixel = mode == "linear" and not any(begin + end) and not (rank == 4 and set(axes) == {2, 3})
    params = {"mode": {"nearest": "nearest", "cubic": "cubic"}.get(mode, "linear_onnx" if rank < 5 else "linear"),
              "calc": "sizes", "nearest_mode": "simple", "antialias": ctx.attr_bool("antialias", False),
              "cube_coeff": -0.75, "axes": tuple(axes), "pads_begin": begin, "pads_end": end,
              "transform": "align_corners" if aligned else "half_pixel" if half_pixel else "asymmetric"}
    sizes = ctx.partial_value(1)
    if sizes is not None and len(sizes) < len(axes):
        ctx.fail(f"target_spatial_shape has {len(sizes)} elements for {len(axes)} axes", position=1)
    dims = list(data.shape.dims)
    for i, axis in enumerate(axes):
        dims[axis] = sizes[i] if sizes is not None and sizes[i].lo >= 0 else DYNAMIC_DIM
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], params


def interpolate1(data, target_spatial_shape, **params):
    """Interpolate-1 (see the module docstring)."""
    return Resize(data.shape, data.dtype, target_spatial_shape, None, **params)(data)


OPS = (
    OpDef("Interpolate", 4, 4, 10, ("data", "sizes", "scales", "axes"), _infer4, interpolate4,
          prepare_interpolate(4),
          attrs=(Attr("mode", None, _MODES4),) + _COMMON_ATTRS, batch=_batch_rule, exact=False, min_inputs=3,
          precision_anchor=True),
    OpDef("Interpolate", 11, 11, LATEST_OPSET, ("data", "scales_or_sizes", "axes"), _infer11, interpolate11,
          prepare_interpolate(11),
          roles=("data", "sizes", "axes"), attrs=(Attr("mode", None, _MODES11),) + _COMMON_ATTRS,
          batch=_batch_rule, exact=False, min_inputs=2, precision_anchor=True),
    OpDef("Interpolate", 1, 1, 3, ("data", "target_spatial_shape"), infer_interpolate1, interpolate1,
          roles=("data", "sizes"), batch=_batch_rule, exact=False,
          attrs=(Attr("axes"), Attr("mode", None, INTERPOLATE1_MODES), Attr("align_corners", "true", ("true", "false")),
                 Attr("antialias", "false", ("true", "false")), Attr("pads_begin", "0"), Attr("pads_end", "0"))),
)
