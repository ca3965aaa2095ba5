"""DeformablePSROIPooling-1 (Deformable R-FCN) (``docs/semantics.md``, "Detection"): position-sensitive ROI
pooling whose bins move by learned offsets. ``data`` [N, C, H, W], ``rois`` [R, 5] (``batch_id, x1, y1, x2,
y2``), optional ``offsets`` [R, 2 * classes, part_size, part_size] -> [R, output_dim, group_size, group_size].

OpenVINO's reference has no ``Node.evaluate`` for it; ir-run follows the CPU plugin
(``PSROIPooling::executeBilinearDeformable``) in f32 (every data type is computed in f32 there, the result
rounded once to the data type):

- box ``round(x1) * scale - 0.5`` .. ``(round(x2) + 1) * scale - 0.5`` (halves away from zero), width and
  height at least 0.1; bins ``size / group_size``, sub-bins ``bin / spatial_bins``;
- output channel ``c`` of class ``c / (output_dim / classes)`` moves bin ``(h, w)`` by ``offsets[r, 2 * class
  (+1 for y), h * part_size / G, w * part_size / G] * trans_std`` times the box size (no offsets: 0);
- each sub-bin corner ``(w * bin_w + x_start + dx, ...) + i * sub_bin`` outside ``[-0.5, size - 0.5]`` is
  skipped, else clamped to ``[0, size - 1]`` and read bilinearly from input channel ``(c * G + gh) * G + gw``:
  ``(1-fx)(1-fy) v11 + (1-fx) fy v12 + fx (1-fy) v21 + fx fy v22``; the bin is the mean of the samples read
  (0 when none);
- the rows from the first box whose batch id is -1 on are 0 (the plugin's end of the list).

Exact against the plugin for f32 (its loop has no reduction of unspecified order; measured bit for bit).
Refused (InputError): a batch id outside ``[0, N)`` other than that -1, and offsets too small for the
indices the plugin would read.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, ModelFormatError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.rounding import round_half_away

NAMES = ("data", "rois", "offsets")
MODES = {"bilinear_deformable": "bilinear_deformable"}


def _infer(ctx: OpContext):
    for position, rank in ((0, 4), (1, 2), (2, 4)):
        if position < len(ctx.inputs):
            spec = ctx.inputs[position]
            if spec.shape.rank not in (None, rank):
                ctx.fail(f"{NAMES[position]} must be {rank}-D, got {spec.shape.brief()}", position=position)
            if spec.element_type.kind not in ("float", "dynamic") or 0 < spec.element_type.bits < 16:
                ctx.fail(f"{NAMES[position]} must have a floating-point type, got {spec.element_type}",
                         position=position)
    for name in ("output_dim", "spatial_scale"):
        if ctx.attr(name) is None:
            raise ModelFormatError(f"the required attribute '{name}' is missing", layer=ctx.ref)
    params = {"output_dim": ctx.attr_int("output_dim", 0), "group_size": ctx.attr_int("group_size", 1),
              "spatial_scale": float(np.float32(ctx.attr_float("spatial_scale"))),
              "bins": (ctx.attr_int("spatial_bins_y", 1), ctx.attr_int("spatial_bins_x", 1)),
              "trans_std": float(np.float32(ctx.attr_float("trans_std", 1.0))),
              "part_size": ctx.attr_int("part_size", 1)}
    ctx.attr_choice("mode", MODES, "bilinear_deformable")
    for name in ("output_dim", "group_size"):
        if not 0 < params[name] <= 2**31 - 1:
            ctx.fail(f"attribute {name}={params[name]} must be greater than 0")
    for name, value in (("spatial_bins_y", params["bins"][0]), ("spatial_bins_x", params["bins"][1]),
                        ("part_size", params["part_size"])):
        if not 0 < value <= 2**31 - 1:
            ctx.fail(f"attribute {name}={value} must be greater than 0", hint="the CPU plugin divides by it")
    count = ctx.inputs[1].shape.dims[0] if ctx.inputs[1].shape.rank is not None else DYNAMIC_DIM
    dim, group = params["output_dim"], params["group_size"]
    shape = PartialShape((count, Dim(dim, dim), Dim(group, group), Dim(group, group)))
    return [TensorSpec(ctx.inputs[0].element_type, shape)], params


def _batch_ids(rois: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Column 0 truncated as ``static_cast<int>``, and how many boxes come before the first -1."""
    ids = np.trunc(rois[:, 0].astype(np.float64))
    end = np.flatnonzero(ids == -1)
    real = int(end[0]) if end.size else len(ids)
    bad = np.flatnonzero(~((ids[:real] >= 0) & (ids[:real] < n)))
    if bad.size:
        raise InputError(f"rois[{bad[0]}, 0] = {rois[bad[0], 0]} is not a batch index in [0, {n}) (the number of"
                         " images in data) nor -1 (the end of the boxes): the CPU plugin would read outside the data",
                         port="input 1 (rois)")
    return ids[:real].astype(np.int64), real


def _bilinear(image: np.ndarray, channels: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The plugin's ``bilinearInterp`` at (x, y) of each channel (all arrays of one shape), in f32."""
    f = np.float32
    x1, x2 = np.floor(x).astype(np.int64), np.ceil(x).astype(np.int64)
    y1, y2 = np.floor(y).astype(np.int64), np.ceil(y).astype(np.int64)
    dx, dy = x - x1.astype(f), y - y1.astype(f)
    v11, v12 = image[channels, y1, x1], image[channels, y2, x1]
    v21, v22 = image[channels, y1, x2], image[channels, y2, x2]
    one = f(1)
    return ((one - dx) * (one - dy) * v11 + (one - dx) * dy * v12 + dx * (one - dy) * v21 + dx * dy * v22).astype(f)


def deformable_psroi_pooling(data: np.ndarray, rois: np.ndarray, *offsets: np.ndarray, output_dim: int,
                             group_size: int, spatial_scale: float, bins: tuple[int, int], trans_std: float,
                             part_size: int) -> np.ndarray:
    """DeformablePSROIPooling-1 as the CPU plugin computes it (see the module docstring)."""
    f = np.float32
    n, channels, height, width = data.shape
    g = group_size
    out = np.zeros((rois.shape[0], output_dim, g, g), np.float32)
    ids, real = _batch_ids(rois, n)
    c = np.arange(output_dim)[:, None, None]
    h = np.arange(g)[None, :, None]
    w = np.arange(g)[None, None, :]
    gh, gw = np.clip(h * g // g, 0, g - 1), np.clip(w * g // g, 0, g - 1)
    source = (c * g + gh) * g + gw
    if real and (source.max() >= channels or height == 0 or width == 0):
        raise InputError(f"data {list(data.shape)} has too few channels for output_dim {output_dim} x group_size"
                         f" {g}^2 (or an empty image): the CPU plugin would read outside it", port="input 0 (data)")
    if offsets:
        flat = offsets[0].astype(np.float32).reshape(-1)
        classes = offsets[0].shape[1] // 2
        per_class = output_dim // classes if classes else 0
        if per_class == 0:
            raise InputError(f"offsets {list(offsets[0].shape)} give {classes} classes for output_dim {output_dim}:"
                             " the CPU plugin would divide by zero", port="input 2 (offsets)")
        part_h, part_w = h * part_size // g, w * part_size // g
        class_id = c // per_class
    scale, bins_y, bins_x = f(spatial_scale), bins[0], bins[1]
    image_f32 = data.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        box = round_half_away(rois[:real, 1:].astype(np.float32))
        start_w, start_h = box[:, 0] * scale - f(0.5), box[:, 1] * scale - f(0.5)
        end_w, end_h = (box[:, 2] + f(1)) * scale - f(0.5), (box[:, 3] + f(1)) * scale - f(0.5)
        roi_w = np.where(end_w - start_w < f(0.1), f(0.1), end_w - start_w)
        roi_h = np.where(end_h - start_h < f(0.1), f(0.1), end_h - start_h)
        for r in range(real):
            bin_h, bin_w = roi_h[r] / f(g), roi_w[r] / f(g)
            sub_h, sub_w = bin_h / f(bins_y), bin_w / f(bins_x)
            dx = dy = f(0)
            if offsets:
                base = ((r * classes + class_id) * 2 * part_size + part_h) * part_size + part_w
                if (base + part_size * part_size).max() >= flat.size:
                    raise InputError(f"offsets {list(offsets[0].shape)} are too small for box {r}: the CPU plugin"
                                     " would read past them", port="input 2 (offsets)")
                dx = flat[base] * f(trans_std)
                dy = flat[base + part_size * part_size] * f(trans_std)
            w_start = (w.astype(f) * bin_w + start_w[r]) + dx * roi_w[r]
            h_start = (h.astype(f) * bin_h + start_h[r]) + dy * roi_h[r]
            total = np.zeros((output_dim, g, g), f)
            count = np.zeros((output_dim, g, g), np.int64)
            for iy in range(bins_y):
                for ix in range(bins_x):
                    x = np.broadcast_to(w_start + f(ix) * sub_w, total.shape)
                    y = np.broadcast_to(h_start + f(iy) * sub_h, total.shape)
                    inside = ~((x < -0.5) | (x > width - 0.5) | (y < -0.5) | (y > height - 0.5))
                    xs = np.clip(np.where(inside, x, 0).astype(np.float64), 0.0, width - 1.0).astype(f)
                    ys = np.clip(np.where(inside, y, 0).astype(np.float64), 0.0, height - 1.0).astype(f)
                    value = _bilinear(image_f32[ids[r]], np.broadcast_to(source, total.shape), xs, ys)
                    total = np.where(inside, total + value, total)
                    count += inside
            out[r] = np.where(count == 0, f(0), total / count.astype(f))
    return out.astype(data.dtype)


def _batch(params, inputs, outputs, axes):
    if all(a is None for a in axes):
        return [None]
    return ("each box reads the image its batch id names (a value), and a box of batch id -1 zeroes every box"
            " after it: neither the images nor the boxes can be cut into chunks")


OPS = (
    OpDef("DeformablePSROIPooling", 1, 1, LATEST_OPSET, NAMES, _infer, deformable_psroi_pooling, min_inputs=2,
          batch=_batch, attrs=(Attr("output_dim"), Attr("spatial_scale"), Attr("group_size", "1"),
                               Attr("mode", "bilinear_deformable", tuple(MODES)), Attr("spatial_bins_x", "1"),
                               Attr("spatial_bins_y", "1"), Attr("trans_std", "1"), Attr("part_size", "1"))),
)
