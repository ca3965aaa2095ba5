"""ROIAlign-3/9 (``docs/semantics.md``, "Detection"): for each box of ``rois`` [R, 4] (``x1, y1, x2, y2``) on the
image ``batch_indices[r]`` of ``data`` [N, C, H, W], a ``pooled_h x pooled_w`` grid of bins, each the average
(``avg``) or the maximum (``max``) of ``sampling_ratio x sampling_ratio`` bilinear samples -> [R, C, ph, pw].

Computed as OpenVINO's reference (``ov::reference::roi_align``), in its order and in the data type T (f16 and
bf16: each operation in f32, rounded to T, as ``ov::float16``/``ov::bfloat16`` do):

- box corners ``(x + offset_src) * spatial_scale + offset_dst`` (``asymmetric``: offsets 0 and 0, and a box's
  width and height at least 1; ``half_pixel_for_nn``: 0 and -0.5; ``half_pixel``: 0.5 and -0.5; the two
  aligned modes keep a box's size as it is, even negative); ROIAlign-3 is ``asymmetric``;
- ``bin = size / pooled``; ``sampling_ratio`` 0 takes ``ceil(bin)`` samples per bin and axis (per box);
- sample ``y1 + iy * bin_h + step_y * (j + 0.5)`` (``step = bin / ratio``); a sample below -1 or beyond the
  size (W or H, in T) reads the pixel (0, 0) four times with weight 0 (a non-finite pixel (0, 0) then gives
  NaN, as in the reference); else it is clamped at 0, truncated to the low index, and at the last row/column
  clamped there with fraction 0; the weights ``hy * hx, hy * lx, ly * hx, ly * lx`` and the value
  ``((w0 * v00 + w1 * v01) + w2 * v10) + w3 * v11``;
- ``avg`` sums ``value / samples`` sample by sample (row of samples by row) from 0; ``max`` takes the larger of
  the running value, which starts at 0 (a bin of negative samples gives 0, as in the reference; NaN samples are
  skipped).

Bit-exact against ``Node.evaluate`` of ROIAlign-3 (f32, f16, bf16). ROIAlign-9 has no ``Node.evaluate``: its
asymmetric mode is checked bit for bit against ROIAlign-3's, its aligned modes against the CPU plugin, which
computes the same grid in f32 with its own summation order (bound, measured by the tests: 4 eps(f32) times
the largest magnitude in the data; seen: below 1). f64 data follows the reference's arithmetic in f64 (no
oracle evaluates it).

Refused (``InputError``): a batch index outside ``[0, N)`` (the reference reads outside the data), an adaptive
sampling ratio that is not a finite non-negative int (the reference's assertion fails), a non-empty output from
an empty image (H or W = 0: the reference reads outside the data), and more than ``MAX_SAMPLES`` samples per
bin. NaN sample coordinates take the index 0 (the x86 conversion the reference relies on).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.numeric import Arith
from ._common import MAX_SAMPLES, checked_batch_indices, infer_boxes, roi_batch

NAMES = ("data", "rois", "batch_indices")
MODES = {"avg": "avg", "max": "max"}
ALIGNED = {"asymmetric": "asymmetric", "half_pixel_for_nn": "half_pixel_for_nn", "half_pixel": "half_pixel"}
OFFSETS = {"asymmetric": (0.0, 0.0), "half_pixel_for_nn": (0.0, -0.5), "half_pixel": (0.5, -0.5)}
CHUNK = 1 << 20  # elements of one sample's gathered values (boxes x bins x channels)


def _infer(ctx: OpContext, version: int):
    params = {"mode": ctx.attr_choice("mode", MODES, "avg"),
              "aligned_mode": ctx.attr_choice("aligned_mode", ALIGNED, "asymmetric") if version == 9 else "asymmetric"}
    return infer_boxes(ctx, 4, "x1, y1, x2, y2", params)


def _axis(ar: Arith, start, size, steps, pooled: int, ratio: int, extent: int):
    """One axis of a group of boxes' samples: (low, high, fraction low, fraction high, outside) per
    (box, bin, sample), as the reference computes them."""
    bins = ar.of(np.arange(pooled))[None, :, None]
    offsets = ar.add(ar.of(np.arange(ratio))[None, None, :], ar.of(0.5))
    s = ar.add(ar.add(start[:, None, None], ar.mul(bins, size[:, None, None])), ar.mul(steps[:, None, None], offsets))
    wide = s.astype(ar.w)
    with np.errstate(invalid="ignore"):
        outside = (wide < -1.0) | (wide > ar.of(extent).astype(ar.w))
        s = np.where(outside | (wide < 0), ar.of(0), s)  # (outside: read nowhere)
        low = np.where(np.isnan(s), 0, s).astype(np.int64)  # NaN: 0, as x86's conversion to unsigned int
    last = low >= extent - 1
    low = np.where(last, extent - 1, low)
    high = np.where(last, low, low + 1)
    s = np.where(last, ar.of(low), s)
    frac = ar.sub(s, ar.of(low))
    return low, high, frac, ar.sub(ar.of(1.0), frac), outside


def roi_align(data: np.ndarray, rois: np.ndarray, batch_indices: np.ndarray, *, pooled_h: int, pooled_w: int,
              sampling_ratio: int, spatial_scale: float, mode: str, aligned_mode: str) -> np.ndarray:
    """ROIAlign-3/9 as OpenVINO's reference computes it (see the module docstring)."""
    n, c, h, w = data.shape
    count = rois.shape[0]
    out = np.zeros((count, c, pooled_h, pooled_w), data.dtype)
    if out.size == 0:
        return out
    wide = checked_batch_indices(data, batch_indices)
    ar = Arith(data.dtype)
    src, dst = OFFSETS[aligned_mode]
    scale = np.float32(spatial_scale)
    corners = [ar.add(ar.mul(ar.add(rois[:, i].astype(data.dtype), ar.of(src)), scale), ar.of(dst)) for i in range(4)]
    x1, y1 = corners[0], corners[1]
    width, height = ar.sub(corners[2], x1), ar.sub(corners[3], y1)
    if aligned_mode == "asymmetric":
        one = ar.of(1.0)
        width = np.where(width.astype(ar.w) < 1, one, width)
        height = np.where(height.astype(ar.w) < 1, one, height)
    bin_w, bin_h = ar.div(width, pooled_w), ar.div(height, pooled_h)
    ratios = []
    for size in (bin_w, bin_h):
        if sampling_ratio:
            ratios.append(np.full(count, sampling_ratio, np.int64))
            continue
        with np.errstate(invalid="ignore"):
            up = np.ceil(size.astype(np.float64))
            wrong = ~np.isfinite(up) | (up < 0) | (up > 2**31 - 1)
        if wrong.any():
            r = int(np.flatnonzero(wrong)[0])
            raise InputError(f"box {r} has a bin of size {size[r]}: its adaptive sampling ratio (ceil of the bin"
                             " size) is not a non-negative int, and OpenVINO's reference fails", port="input 1 (rois)")
        ratios.append(up.astype(np.int64))
    rx, ry = ratios
    most = int((rx * ry).max())
    if most > MAX_SAMPLES:
        r = int(np.argmax(rx * ry))
        raise InputError(f"box {r} would take {rx[r]} x {ry[r]} samples per bin (more than {MAX_SAMPLES})",
                         port="input 1 (rois)", hint="set sampling_ratio, or scale the boxes to the feature map")
    step_x, step_y = ar.div(bin_w, ar.of(rx)), ar.div(bin_h, ar.of(ry))
    flat = np.ascontiguousarray(data.reshape(n, c, h * w).transpose(0, 2, 1))  # (N, H*W, C): one gather per sample
    keys = rx * (2**32) + ry
    for key in np.unique(keys):
        group = np.flatnonzero(keys == key)
        gx, gy = int(rx[group[0]]), int(ry[group[0]])
        step = max(1, CHUNK // max(1, pooled_h * pooled_w * c))
        for first in range(0, group.size, step):
            g = group[first:first + step]
            ys = _axis(ar, y1[g], bin_h[g], step_y[g], pooled_h, gy, h)
            xs = _axis(ar, x1[g], bin_w[g], step_x[g], pooled_w, gx, w)
            pooled = _pool(ar, flat, wide[g], ys, xs, gx * gy, mode, w)
            out[g] = pooled.transpose(0, 3, 1, 2)
    return out


def _pool(ar: Arith, flat: np.ndarray, images: np.ndarray, ys, xs, samples: int, mode: str, w: int) -> np.ndarray:
    """The bins of a group of boxes, (G, ph, pw, C): the samples taken in the reference's order."""
    y_low, y_high, ly, hy, y_out = ys
    x_low, x_high, lx, hx, x_out = xs
    g, ph, ry = y_low.shape
    pw, rx = x_low.shape[1], x_low.shape[2]
    pooled = np.zeros((g, ph, pw, flat.shape[2]), ar.t)
    divisor = np.asarray(samples).astype(ar.w)
    zero = ar.of(0)
    image = images[:, None, None]
    for j in range(ry):
        rows = (y_low[:, :, j, None], y_high[:, :, j, None], ly[:, :, j, None], hy[:, :, j, None], y_out[:, :, j, None])
        for i in range(rx):
            outside = rows[4] | x_out[:, None, :, i]
            weights = [ar.mul(rows[3], hx[:, None, :, i]), ar.mul(rows[3], lx[:, None, :, i]),
                       ar.mul(rows[2], hx[:, None, :, i]), ar.mul(rows[2], lx[:, None, :, i])]
            points = [(rows[0], x_low[:, None, :, i]), (rows[0], x_high[:, None, :, i]),
                      (rows[1], x_low[:, None, :, i]), (rows[1], x_high[:, None, :, i])]
            value = None
            for weight, (yy, xx) in zip(weights, points):
                index = np.where(outside, 0, yy * w + xx)
                weight = np.where(outside, zero, weight)
                term = ar.mul(weight[..., None], flat[image, index])
                value = term if value is None else ar.add(value, term)
            if mode == "avg":
                pooled = ar.add(pooled, ar.div(value, divisor))
            else:
                pooled = np.where(value.astype(ar.w) > pooled.astype(ar.w), value, pooled)
    return pooled


def _v3(ctx):
    return _infer(ctx, 3)


def _v9(ctx):
    return _infer(ctx, 9)


ATTRS = (Attr("pooled_h"), Attr("pooled_w"), Attr("sampling_ratio"), Attr("spatial_scale"),
         Attr("mode", None, tuple(MODES)))
OPS = (
    OpDef("ROIAlign", 3, 3, 8, NAMES, _v3, roi_align, attrs=ATTRS, batch=roi_batch),
    OpDef("ROIAlign", 9, 9, LATEST_OPSET, NAMES, _v9, roi_align, batch=roi_batch,
          attrs=ATTRS + (Attr("aligned_mode", "asymmetric", tuple(ALIGNED)),)),
)
