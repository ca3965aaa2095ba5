"""ROIAlignRotated-15 (``docs/semantics.md``, "Detection"): for each rotated box of ``rois`` [R, 5] (``cx, cy,
w, h, angle`` in radians) on the image ``batch_indices[r]`` of ``data`` [N, C, H, W], a ``pooled_h x pooled_w``
grid of bins, each the average of ``sampling_ratio x sampling_ratio`` bilinear samples -> [R, C, ph, pw].

OpenVINO's reference has no ``Node.evaluate`` for it; its CPU plugin runs the reference kernel
(``ov::reference::roi_align`` with the rotated policy), which ir-run follows, in the data type T (f16 and bf16:
each operation in f32 rounded to T, as ROIAlign's kernel):

- centre ``cx * spatial_scale - 0.5`` (likewise y), size ``w * spatial_scale`` (no minimum), angle negated when
  ``clockwise_mode``; the box spans ``[-w / 2, w / 2]`` around the centre before rotation;
- ``bin = size / pooled``, ``sampling_ratio`` 0 takes ``ceil(bin)`` samples per axis and box; a sample at
  ``(px, py)`` in box space maps to ``x = (py sin + px cos) + cx``, ``y = (py cos - px sin) + cy``;
- then as ROIAlign (``asymmetric``): a sample below -1 or beyond W/H reads nothing (weight 0); else clamped at
  0, truncated, the last row/column taken with fraction 0; ``((w0 v00 + w1 v01) + w2 v10) + w3 v11``; the bin
  sums ``value / samples`` sample by sample.

Bound: ``sin``/``cos`` are glibc's ``sinf``/``cosf`` in the plugin, f64 rounded to T here (they agree but for
rare 1-ULP cases): results within 1e-5 relative plus 1e-6 times the largest magnitude of the data of the
CPU plugin's (measured: bit for bit over the tests' f32 cases). The plugin passes non-f32 ROIs to the kernel
as if they were f32 (it reads the converted buffer as T): only f32 compares with it.

Refused (InputError): a batch index outside ``[0, N)``, an adaptive sampling ratio that is negative or not
finite (the reference's assertion), an empty image with boxes, and more than ``MAX_SAMPLES`` samples per bin.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import TensorSpec
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef
from ..toolkit.numeric import Arith
from ._common import MAX_SAMPLES, checked_batch_indices, infer_boxes, roi_batch


def _infer(ctx: OpContext):
    return infer_boxes(ctx, 5, "cx, cy, w, h, angle", {"clockwise": ctx.attr_bool("clockwise_mode", False)})


def _fit(params, inputs: list[TensorSpec], position: int) -> InputFit | None:
    dims = inputs[0].shape.dims
    if position == 2 and dims is not None and dims[0].is_static and dims[0].lo:
        return InputFit("index", 0, dims[0].lo - 1, f"an image of data: N (dim 0 of data) is {dims[0].lo}")
    return None


def _ratio(size: np.ndarray, fixed: int, r: int) -> int:
    if fixed:
        return fixed
    with np.errstate(invalid="ignore"):
        up = float(np.ceil(float(size)))
    if not np.isfinite(up) or up < 0 or up > 2**31 - 1:
        raise InputError(f"box {r} has a bin of size {size}: its adaptive sampling ratio (ceil of the bin size) is"
                         " not a non-negative int, and OpenVINO's reference fails", port="input 1 (rois)")
    return int(up)


def roi_align_rotated(data: np.ndarray, rois: np.ndarray, batch_indices: np.ndarray, *, pooled_h: int,
                      pooled_w: int, sampling_ratio: int, spatial_scale: float, clockwise: bool) -> np.ndarray:
    """ROIAlignRotated-15 as OpenVINO's reference kernel computes it (see the module docstring)."""
    c = data.shape[1]
    out = np.zeros((rois.shape[0], c, pooled_h, pooled_w), data.dtype)
    if out.size == 0:
        return out
    wide = checked_batch_indices(data, batch_indices)
    ar = Arith(data.dtype)
    box = rois.astype(data.dtype)
    scale = ar.of(spatial_scale)
    half = ar.of(0.5)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        cx, cy = ar.sub(ar.mul(box[:, 0], scale), half), ar.sub(ar.mul(box[:, 1], scale), half)
        width, height = ar.mul(box[:, 2], scale), ar.mul(box[:, 3], scale)
        angle = -box[:, 4] if clockwise else box[:, 4]
        cos, sin = ar.of(np.cos(angle.astype(np.float64))), ar.of(np.sin(angle.astype(np.float64)))
        x1, y1 = ar.div(-width, ar.of(2.0)), ar.div(-height, ar.of(2.0))
        bin_w, bin_h = ar.div(width, ar.of(pooled_w)), ar.div(height, ar.of(pooled_h))
        for r in range(rois.shape[0]):
            rx, ry = _ratio(bin_w[r], sampling_ratio, r), _ratio(bin_h[r], sampling_ratio, r)
            if rx * ry > MAX_SAMPLES:
                raise InputError(f"box {r} would take {rx} x {ry} samples per bin (more than {MAX_SAMPLES})",
                                 port="input 1 (rois)", hint="set sampling_ratio, or scale the boxes to the map")
            if rx and ry:
                space = (cx[r], cy[r], cos[r], sin[r], x1[r], y1[r], bin_w[r], bin_h[r])
                out[r] = _one_box(ar, data[wide[r]], space, pooled_h, pooled_w, rx, ry)
    return out


def _one_box(ar: Arith, image: np.ndarray, space: tuple, ph: int, pw: int, rx: int, ry: int) -> np.ndarray:
    """The bins of one box (C, ph, pw): samples taken in the reference's order."""
    cx, cy, cos, sin, x1, y1, bin_w, bin_h = space
    c, h, w = image.shape
    step_x, step_y = ar.div(bin_w, ar.of(rx)), ar.div(bin_h, ar.of(ry))
    bins_y, bins_x = ar.of(np.arange(ph))[:, None], ar.of(np.arange(pw))[None, :]
    flat = image.reshape(c, h * w)
    pooled = np.zeros((c, ph, pw), ar.t)
    divisor = np.asarray(rx * ry).astype(ar.w)  # (the sample count, an integer converted to float)
    for iy in range(ry):
        pre_y = ar.add(ar.add(y1, ar.mul(bins_y, bin_h)), ar.mul(step_y, ar.add(ar.of(iy), ar.of(0.5))))
        for ix in range(rx):
            pre_x = ar.add(ar.add(x1, ar.mul(bins_x, bin_w)), ar.mul(step_x, ar.add(ar.of(ix), ar.of(0.5))))
            y = ar.add(ar.sub(ar.mul(pre_y, cos), ar.mul(pre_x, sin)), cy)
            x = ar.add(ar.add(ar.mul(pre_y, sin), ar.mul(pre_x, cos)), cx)
            wy, wx = y.astype(ar.w), x.astype(ar.w)
            outside = (wx < -1.0) | (wx > ar.of(w).astype(ar.w)) | (wy < -1.0) | (wy > ar.of(h).astype(ar.w))
            ys, y_low, y_high = _axis(ar, np.where(outside, ar.of(0), y), h)
            xs, x_low, x_high = _axis(ar, np.where(outside, ar.of(0), x), w)
            ly, lx = ar.sub(ys, ar.of(y_low)), ar.sub(xs, ar.of(x_low))
            hy, hx = ar.sub(ar.of(1.0), ly), ar.sub(ar.of(1.0), lx)
            weights = [ar.mul(hy, hx), ar.mul(hy, lx), ar.mul(ly, hx), ar.mul(ly, lx)]
            points = [(y_low, x_low), (y_low, x_high), (y_high, x_low), (y_high, x_high)]
            value = None
            for weight, (yy, xx) in zip(weights, points):
                index = np.where(outside, 0, yy * w + xx)
                term = ar.mul(np.where(outside, ar.of(0), weight)[None], flat[:, index])
                value = term if value is None else ar.add(value, term)
            pooled = ar.add(pooled, ar.div(value, divisor))
    return pooled


def _axis(ar: Arith, s: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position, low, high) of samples along one axis: clamped at 0, truncated, the last index with fraction 0."""
    with np.errstate(invalid="ignore"):
        s = np.where(s.astype(ar.w) < 0, ar.of(0), s)
        low = np.where(np.isnan(s), 0, s).astype(np.int64)  # NaN: 0, as x86's conversion to unsigned int
    last = low >= size - 1
    low = np.where(last, size - 1, low)
    return np.where(last, ar.of(low), s), low, np.where(last, low, low + 1)


OPS = (
    OpDef("ROIAlignRotated", 15, 15, LATEST_OPSET, ("data", "rois", "batch_indices"), _infer, roi_align_rotated,
          batch=roi_batch, exact=False, fit=_fit,
          attrs=(Attr("pooled_h"), Attr("pooled_w"), Attr("sampling_ratio"), Attr("spatial_scale"),
                 Attr("clockwise_mode", "false", ("true", "false")))),
)
