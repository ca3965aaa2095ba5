"""ROIPooling-2 (Fast R-CNN) and PSROIPooling-1 (R-FCN): for each box of ``rois`` [R, 5] (``batch_id, x1, y1,
x2, y2``) a grid of bins over the image ``batch_id`` of ``data`` [N, C, H, W].

ROIPooling-2: ``pooled_h x pooled_w`` bins of every channel -> [R, C, ph, pw].

Computed as OpenVINO's reference (``ov::reference::roi_pooling``), the box and bin arithmetic in the data type
T (f16 and bf16: each operation in f32, rounded to T, as ``ov::float16``/``ov::bfloat16`` do):

- ``max``: box corners ``round(coordinate * spatial_scale)`` (halves away from zero, in f32, f64 for f64
  data), the box at least 1 x 1 (``end - start + 1``); bin ``i`` of an axis covers
  ``[floor(i * size / pooled), ceil((i + 1) * size / pooled))`` from the box start (``size / pooled`` in T),
  clipped to the image; the bin's maximum, 0 for an empty bin. NaN as the CPU plugin takes it: a NaN first
  value (row-major) of the bin wins, later NaNs never do (the reference's ``std::max(value, running)`` keeps a
  NaN only until the next value: a NaN last in the bin would win there);
- ``bilinear``: coordinates are normalised to [0, 1]; sample ``i`` of an axis is at
  ``i * (end - start) * (S - 1) / (pooled - 1) + start * (S - 1)`` (the last one at ``end * (S - 1)``; one
  sample per axis at the middle, ``0.5 * (start + end) * (S - 1)``, computed in f64), interpolated from its
  four neighbours ``top = tl + (tr - tl) * fx``, ``bottom = bl + (br - bl) * fx``, ``top + (bottom - top) * fy``;
  a sample outside ``[0, S - 1]`` gives 0.

PSROIPooling-1 (position-sensitive): ``group_size x group_size`` bins, bin ``(i, j)`` of output channel ``o``
read from its own input channel -> [R, output_dim, group_size, group_size]; see :func:`psroi_pooling`.

The batch id is truncated toward zero; one outside ``[0, N)`` is an InputError (the reference refuses it).
No ``Node.evaluate`` in the wheel: the tests compare with the CPU plugin and loops written from the reference.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, ModelFormatError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.numeric import Arith
from ..toolkit.rounding import round_half_away

NAMES = ("data", "rois")
METHODS = {"max": "max", "bilinear": "bilinear"}


def _pooled(ctx: OpContext) -> tuple[int, int]:
    """``pooled_h``, ``pooled_w`` (OpenVINO reads them after ``output_size``, so they win when both are there)."""
    size = ctx.attr_ints("output_size", []) or ctx.attr_ints("output_roi", [])
    if ctx.attr("pooled_h") is not None or ctx.attr("pooled_w") is not None or len(size) != 2:
        size = [ctx.attr_int("pooled_h", size[0] if len(size) == 2 else 0),
                ctx.attr_int("pooled_w", size[1] if len(size) == 2 else 0)]
    if min(size) < 1 or max(size) > 2**31 - 1:
        raise ModelFormatError(f"pooled_h={size[0]} and pooled_w={size[1]} must be positive int32 values",
                               layer=ctx.ref, hint="write pooled_h and pooled_w (the output's last two dims)")
    return size[0], size[1]


def _float_inputs(ctx: OpContext, what: str):
    """The element type data and rois share, which must be a float type."""
    data, rois = ctx.inputs
    et = data.element_type if data.element_type.kind != "dynamic" else rois.element_type
    if rois.element_type.kind != "dynamic" and rois.element_type != et:
        ctx.fail(f"data and {what} must have the same element type, got {data.element_type} and"
                 f" {rois.element_type}", position=1)
    if et.kind not in ("float", "dynamic") or et.bits < 16:
        ctx.fail(f"data and {what} must be f16, bf16, f32 or f64, got {et}", position=0)
    return et


def _spatial_scale(ctx: OpContext) -> float:
    """The attribute ``spatial_scale``, refused unless a positive normal f32 number."""
    scale = ctx.attr_float("spatial_scale")
    if not np.isfinite(scale) or scale <= 0 or abs(scale) < np.finfo(np.float32).tiny:
        raise ModelFormatError(f"attribute {ctx.attr_shown('spatial_scale')} must be a positive normal number",
                               layer=ctx.ref)
    return scale


def _boxes_dims(ctx: OpContext, width: int) -> tuple[Dim, Dim]:
    """(number of boxes, channels): checks data is 4-D and rois [R, width]."""
    data, rois = ctx.inputs[0].shape, ctx.inputs[1].shape
    if data.rank is not None and data.rank != 4:
        ctx.fail(f"data must be 4-D [N, C, H, W], got {data.brief()}", position=0)
    count = DYNAMIC_DIM
    if rois.rank is not None:
        if rois.rank != 2 or not rois.dims[1].contains(width):
            ctx.fail(f"rois must be 2-D [R, {width}] (batch id and box corners), got {rois.brief()}", position=1)
        count = rois.dims[0]
    return count, data.dims[1] if data.rank is not None else DYNAMIC_DIM


def infer_roi_pooling(ctx: OpContext):
    pooled_h, pooled_w = _pooled(ctx)
    scale = _spatial_scale(ctx)
    method = ctx.attr_choice("method", METHODS, "max")
    et = _float_inputs(ctx, "rois")
    count, channels = _boxes_dims(ctx, 5)
    shape = PartialShape((count, channels, Dim(pooled_h, pooled_h), Dim(pooled_w, pooled_w)))
    return [TensorSpec(et, shape)], {"pooled": (pooled_h, pooled_w), "spatial_scale": float(np.float32(scale)),
                                     "method": method}


def batch_ids(rois: np.ndarray, n: int) -> np.ndarray:
    """Column 0 of ``rois`` truncated toward zero, as ``static_cast<int>``; an InputError outside ``[0, n)``."""
    ids = rois[:, 0].astype(np.float64)
    bad = np.flatnonzero(~((ids > -1) & (ids < n)))  # (NaN included)
    if bad.size:
        raise InputError(f"rois[{bad[0]}, 0] = {rois[bad[0], 0]} is not a batch index in [0, {n}) (the number of"
                         " images in data): OpenVINO's reference refuses it", port="input 1 (rois)")
    return np.trunc(ids).astype(np.int64)


def _round_away(x: np.ndarray) -> np.ndarray:
    """``std::round`` to an int, clipped to int32 (NaN: 0)."""
    return np.clip(np.nan_to_num(round_half_away(x.astype(np.float64))), -(2**31), 2**31 - 1).astype(np.int64)


def roi_pooling(data: np.ndarray, rois: np.ndarray, *, pooled: tuple[int, int], spatial_scale: float,
                method: str) -> np.ndarray:
    """ROIPooling-2 as OpenVINO's reference computes it (see the module docstring)."""
    n, c, h, w = data.shape
    ph, pw = pooled
    out = np.zeros((rois.shape[0], c, ph, pw), data.dtype)
    if not out.size:
        return out
    ids = batch_ids(rois, n)
    ar = Arith(data.dtype)
    if method == "max":
        _max_pool(data, rois, ids, ar, spatial_scale, out)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            _bilinear(data, rois, ids, ar, out)
    return out


def _max_pool(data, rois, ids, ar: Arith, scale: float, out: np.ndarray) -> None:
    _, _, h, w = data.shape
    _, _, ph, pw = out.shape
    corners = _round_away(rois[:, 1:].astype(ar.w) * ar.w.type(scale))  # (x1, y1, x2, y2)
    spans = []
    for start, end, size, pooled in ((corners[:, 1], corners[:, 3], h, ph), (corners[:, 0], corners[:, 2], w, pw)):
        length = np.maximum(end - start + 1, 1)
        step = ar.div(ar.of(length), ar.of(pooled))[:, None]
        first = np.floor(ar.mul(ar.of(np.arange(pooled))[None, :], step).astype(np.float64)).astype(np.int64)
        last = np.ceil(ar.mul(ar.of(np.arange(1, pooled + 1))[None, :], step).astype(np.float64)).astype(np.int64)
        spans.append((np.clip(first + start[:, None], 0, size), np.clip(last + start[:, None], 0, size)))
    (y0, y1), (x0, x1) = spans
    for r in range(out.shape[0]):
        image = data[ids[r]]
        for i in range(ph):
            rows = image[:, y0[r, i]:y1[r, i]]
            for j in range(pw):
                region = rows[:, :, x0[r, j]:x1[r, j]]
                if region.size:  # (NaN: only a NaN first value of the bin wins, as in the CPU plugin)
                    best = np.fmax.reduce(region.reshape(region.shape[0], -1), axis=1)
                    out[r, :, i, j] = np.where(np.isnan(region[:, 0, 0]), region[:, 0, 0], best)


def _samples(ar: Arith, start, end, size: int, pooled: int):
    """Sample positions along one axis (boxes x pooled), as the reference places them."""
    extent = ar.of(size - 1)
    if pooled == 1:  # (0.5 is a double: the middle is computed in f64, then converted to T)
        return ar.of(0.5 * ar.add(start, end).astype(np.float64) * (size - 1))[:, None]
    scale = ar.div(ar.mul(ar.sub(end, start), extent), ar.of(pooled - 1))
    pos = ar.add(ar.mul(ar.of(np.arange(pooled))[None, :], scale[:, None]), ar.mul(start, extent)[:, None])
    pos[:, -1] = ar.mul(extent, end)
    return pos


def _bilinear(data, rois, ids, ar: Arith, out: np.ndarray) -> None:
    _, _, h, w = data.shape
    _, c, ph, pw = out.shape
    if h == 0 or w == 0:  # (every sample is outside the image)
        return
    box = rois.astype(data.dtype)
    ys = _samples(ar, box[:, 2], box[:, 4], h, ph)  # (R, ph)
    xs = _samples(ar, box[:, 1], box[:, 3], w, pw)  # (R, pw)
    wide_y, wide_x = ys.astype(ar.w), xs.astype(ar.w)
    with np.errstate(invalid="ignore"):
        inside = ((wide_y >= 0) & (wide_y <= h - 1))[:, :, None] & ((wide_x >= 0) & (wide_x <= w - 1))[:, None, :]
    top = np.where(inside.any(axis=2), np.floor(np.nan_to_num(wide_y)), 0).astype(np.int64)
    left = np.where(inside.any(axis=1), np.floor(np.nan_to_num(wide_x)), 0).astype(np.int64)
    bottom = np.minimum(np.where(inside.any(axis=2), np.ceil(np.nan_to_num(wide_y)), 0).astype(np.int64), h - 1)
    right = np.minimum(np.where(inside.any(axis=1), np.ceil(np.nan_to_num(wide_x)), 0).astype(np.int64), w - 1)
    top, left = np.clip(top, 0, h - 1), np.clip(left, 0, w - 1)
    fy, fx = ar.sub(ys, ar.of(top)), ar.sub(xs, ar.of(left))
    value = _interpolate(ar, data, ids, np.arange(c), (top, bottom, fy), (left, right, fx))
    np.copyto(out, value, where=inside[:, None])


def _interpolate(ar: Arith, data: np.ndarray, images: np.ndarray, channels: np.ndarray, ys, xs) -> np.ndarray:
    """Bilinear samples of ``data`` [N, C, H, W] for each box ``r`` in image ``images[r]`` and the ``channels``
    (K,) at the grid of ``ys`` (top, bottom, fraction: (R, P) each) by ``xs`` (left, right, fraction: (R, Q))
    -> (R, K, P, Q), in the reference's order: ``top = tl + (tr - tl) * fx``, ``bottom = bl + (br - bl) * fx``,
    ``top + (bottom - top) * fy``. Reads only the samples' pixels (no copy of the images)."""
    (top, bottom, fy), (left, right, fx) = ys, xs
    r = images[:, None, None, None]
    k = channels[None, :, None, None]
    rows = [yy[:, None, :, None] for yy in (top, bottom)]
    cols = [xx[:, None, None, :] for xx in (left, right)]
    fx, fy = fx[:, None, None, :], fy[:, None, :, None]
    upper, lower = (ar.add(data[r, k, yy, cols[0]],
                           ar.mul(ar.sub(data[r, k, yy, cols[1]], data[r, k, yy, cols[0]]), fx)) for yy in rows)
    return ar.add(upper, ar.mul(ar.sub(lower, upper), fy))


# -- PSROIPooling-1 ----------------------------------------------------------------------------------------------

PS_MODES = {"average": "average", "bilinear": "bilinear"}


def infer_psroi_pooling(ctx: OpContext):
    mode = ctx.attr_choice("mode", PS_MODES, None)
    if mode is None:
        raise ModelFormatError("the attribute mode (average or bilinear) is required", layer=ctx.ref)
    values = {name: ctx.attr_int(name, 1 if name.startswith("spatial") else 0)
              for name in ("output_dim", "group_size", "spatial_bins_x", "spatial_bins_y")}
    wanted = ("output_dim", "group_size") + (("spatial_bins_x", "spatial_bins_y") if mode == "bilinear" else ())
    for name in wanted:
        low = 0 if name == "output_dim" else 1
        if not low <= values[name] <= 2**31 - 1:
            raise ModelFormatError(f"attribute {ctx.attr_shown(name)} must be an int32 of at least {low}",
                                   layer=ctx.ref)
    scale = _spatial_scale(ctx)
    et = _float_inputs(ctx, "rois")
    count, channels = _boxes_dims(ctx, 5)
    dim, group = values["output_dim"], values["group_size"]
    area = group * group if mode == "average" else values["spatial_bins_x"] * values["spatial_bins_y"]
    if not channels.contains(area * dim):
        what = "group_size * group_size" if mode == "average" else "spatial_bins_x * spatial_bins_y"
        ctx.fail(f"data has {channels} channels, output_dim * {what} is {area * dim}", position=0)
    shape = PartialShape((count, Dim(dim, dim), Dim(group, group), Dim(group, group)))
    return [TensorSpec(et, shape)], {"mode": mode, "output_dim": dim, "group_size": group,
                                     "spatial_scale": float(np.float32(scale)),
                                     "bins": (values["spatial_bins_y"], values["spatial_bins_x"])}


def psroi_pooling(data: np.ndarray, rois: np.ndarray, *, mode: str, output_dim: int, group_size: int,
                  spatial_scale: float, bins: tuple[int, int]) -> np.ndarray:
    """PSROIPooling-1 as OpenVINO's CPU plugin computes it, in f32 (f64 for f64 data), rounded once to the data
    type (``G`` = group_size):

    - ``average``: box ``round(x1) * scale`` .. ``round(x2 + 1) * scale`` (halves away from zero), its size at
      least 0.1; bin ``(i, j)`` the rows ``[floor(i * bin_h + y1), ceil((i + 1) * bin_h + y1))`` clipped to
      ``[0, H]``, likewise the columns; output channel ``o`` averages input channel ``(o * G + i) * G + j`` over
      the bin (a running sum, row by row, divided by the bin's area); an empty bin gives 0;
    - ``bilinear``: box ``x1 * scale`` .. ``x2 * scale`` split into ``spatial_bins_y x spatial_bins_x``
      sub-boxes ``[ymin, ymax]``; output ``(o, i, j)`` is the sum over the sub-boxes ``(by, bx)`` (in that
      order) of the bilinear sample at ``i * ((ymax - ymin)(H - 1) / (G - 1)) + ymin (H - 1)`` (G = 1:
      ``0.5 (ymin + ymax)(H - 1)``), likewise along W, read from input channel ``(by * BX + bx) * output_dim + o``
      (a sample outside ``[0, S - 1]`` adds 0), divided by the number of sub-boxes.

    OpenVINO's reference differs outside valid boxes (it converts negative coordinates to unsigned indices and
    reads outside the data, takes a bilinear sample in ``(S - 1, S)``, and computes G = 1 samples as
    ``(2 ymin + bin)(H - 1) / 2``): docs/semantics.md."""
    n, c, h, w = data.shape
    out = np.zeros((rois.shape[0], output_dim, group_size, group_size), data.dtype)
    if not out.size:
        return out
    ids = batch_ids(rois, n)
    wide = np.dtype(np.float64) if data.dtype == np.float64 else np.dtype(np.float32)
    box = rois[:, 1:].astype(wide)
    scale = wide.type(spatial_scale)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if mode == "average":
            value = _ps_average(data, ids, box, scale, group_size, output_dim, wide)
        else:
            value = _ps_bilinear(data, ids, box, scale, bins, group_size, output_dim, wide)
    return value.astype(data.dtype)


def _ps_span(start, size: np.ndarray, cells: int, extent: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, end) of the average mode's bins along one axis (boxes x cells), clipped to ``[0, extent]``."""
    t = size.dtype.type
    step = size / t(cells)
    index = np.arange(cells + 1).astype(size.dtype)[None, :] * step[:, None] + start[:, None]
    with np.errstate(invalid="ignore"):
        first = np.clip(np.nan_to_num(np.floor(index[:, :-1]), nan=0.0), 0, extent).astype(np.int64)
        end = np.clip(np.nan_to_num(np.ceil(index[:, 1:]), nan=0.0), 0, extent).astype(np.int64)
    return first, end


def _ps_average(data, ids, box, scale, group: int, dim: int, wide: np.dtype) -> np.ndarray:
    _, _, h, w = data.shape
    t = wide.type
    x1, y1 = round_half_away(box[:, 0]) * scale, round_half_away(box[:, 1]) * scale
    x2, y2 = round_half_away(box[:, 2] + t(1)) * scale, round_half_away(box[:, 3] + t(1)) * scale
    rows = _ps_span(y1, np.maximum(y2 - y1, t(0.1)), group, h)
    cols = _ps_span(x1, np.maximum(x2 - x1, t(0.1)), group, w)
    out = np.zeros((len(ids), dim, group, group), wide)
    for r in range(len(ids)):
        image = data[ids[r]]
        for i in range(group):
            top, bottom = rows[0][r, i], rows[1][r, i]
            for j in range(group):
                left, right = cols[0][r, j], cols[1][r, j]
                if bottom <= top or right <= left:
                    continue
                window = image[i * group + j::group * group, top:bottom, left:right].astype(wide)
                total = np.zeros(dim, wide)
                for y in range(window.shape[1]):  # (a running sum, as the plugin's loop)
                    for x in range(window.shape[2]):
                        total += window[:, y, x]
                out[r, :, i, j] = total / t((bottom - top) * (right - left))
    return out


def _ps_axis(start, end, part: int, parts: int, group: int, size: int):
    """(low, high, fraction, inside) of the bilinear samples of sub-box ``part`` of ``parts`` along one axis
    (boxes x group), as the CPU plugin places them."""
    t = start.dtype.type
    low_edge = start + t(part) * ((end - start) / t(parts))
    high_edge = start + t(part + 1) * ((end - start) / t(parts))
    if group > 1:
        step = (high_edge - low_edge) * t(size - 1) / t(group - 1)
        p = np.arange(group).astype(start.dtype)[None, :] * step[:, None] + (low_edge * t(size - 1))[:, None]
    else:
        p = (t(0.5) * (low_edge + high_edge) * t(size - 1))[:, None]
    with np.errstate(invalid="ignore"):
        inside = (p >= 0) & (p <= size - 1)
    q = np.where(inside, p, 0)
    low = np.floor(q).astype(np.int64)
    return low, np.minimum(np.ceil(q).astype(np.int64), size - 1), q - low.astype(p.dtype), inside


def _ps_bilinear(data, ids, box, scale, bins, group: int, dim: int, wide: np.dtype) -> np.ndarray:
    _, _, h, w = data.shape
    by_count, bx_count = bins
    x1, y1, x2, y2 = (box[:, k] * scale for k in range(4))
    ar = Arith(wide)
    out = np.zeros((len(ids), dim, group, group), wide)
    if h == 0 or w == 0:
        return out
    for by in range(by_count):
        ys = _ps_axis(y1, y2, by, by_count, group, h)
        for bx in range(bx_count):
            xs = _ps_axis(x1, x2, bx, bx_count, group, w)
            channel = (by * bx_count + bx) * dim + np.arange(dim)
            value = _interpolate(ar, data, ids, channel, ys[:3], xs[:3])
            inside = ys[3][:, None, :, None] & xs[3][:, None, None, :]
            out += np.where(inside, value, wide.type(0))
    return out / wide.type(by_count * bx_count)


def _batch(params, inputs, outputs, axes):
    if axes[0] is None and axes[1] == 0:
        return [0]
    if axes[0] is None and axes[1] is None:
        return [None]
    return ("each box reads the image its batch id names (a value): only rois may be batched (axis 0), with data"
            " whole")


OPS = (
    OpDef("ROIPooling", 2, 2, LATEST_OPSET, NAMES, infer_roi_pooling, roi_pooling, batch=_batch,
          attrs=(Attr("pooled_h"), Attr("pooled_w"), Attr("spatial_scale"), Attr("method", "max", tuple(METHODS))),
          precision_anchor=True),
    OpDef("PSROIPooling", 1, 1, LATEST_OPSET, NAMES, infer_psroi_pooling, psroi_pooling, batch=_batch,
          attrs=(Attr("output_dim"), Attr("group_size", "1"), Attr("spatial_scale"),
                 Attr("mode", None, tuple(PS_MODES)), Attr("spatial_bins_x", "1"), Attr("spatial_bins_y", "1"))),
)
