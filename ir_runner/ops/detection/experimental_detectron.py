"""The ExperimentalDetectron operations of opset6 (Detectron's Mask R-CNN heads) that ir-run computes:

- ExperimentalDetectronTopKROIs-6: the ``max_rois`` rois (``[N, 4]``) of highest ``rois_probs`` (``[N]``), by
  descending probability (equal ones in input order: the reference's ``std::sort`` leaves them unspecified).
  Output ``[max_rois, 4]`` as OpenVINO infers it; when ``N < max_rois`` the rows past N are 0 (OpenVINO's kernels
  leave them unwritten: the CPU plugin returns whatever memory held).
- ExperimentalDetectronPriorGridGenerator-6: the ``priors`` (``[P, 4]``) shifted to every cell of the feature
  map's ``[H, W]`` grid, ``prior + step * (cell + 0.5)`` per coordinate in f32 (x: ``step_w = stride_x`` or
  ``image_W / W``; y likewise), rows ordered (h, w, prior); ``[H * W * P, 4]`` with ``flatten`` (the default),
  else ``[H, W, P, 4]``. Attributes ``h``/``w`` other than 0 or the feature map's own dims are refused:
  OpenVINO's shape uses the feature map while its kernels loop over ``h``/``w`` (writing past the output, or
  leaving rows unwritten).

- ExperimentalDetectronROIFeatureExtractor-6: each roi (``[N, 4]``, x0 y0 x1 y1) is pooled from one pyramid level
  (``feature_maps``: ``[1, C, H_l, W_l]``): ``floor(log2(sqrt(area) / 224 + 1e-6) + 2)`` clamped to the levels, by
  Caffe2's ROIAlign (spatial scale ``1 / pyramid_scales[l]``, ``output_size`` bins a side, ``sampling_ratio``
  samples a bin side or ``ceil(size / output_size)``, ``aligned``: half-pixel offset; rois at least 1x1; samples
  more than one pixel outside count 0), every step in f32 in the reference's order; a roi of area <= 0 has zero
  features. Outputs: the features ``[N, C, output_size, output_size]`` and the rois, copied.
- ExperimentalDetectronGenerateProposalsSingleImage-6 (as OpenVINO's CPU plugin computes it): each anchor
  (``[H * W * A, 4]``, rows (h, w, a)) refined by its deltas (``[A * 4, H, W]``: dx, dy, log dw, log dh, the
  log sizes capped at ``log(1000 / 16)``, box sizes ``x1 - x0 + 1``), clipped to the image (``im_info``: H, W),
  its score (``[A, H, W]``) zeroed when a side is below ``min_size``; the ``pre_nms_count`` best by score (equal
  scores in the order libstdc++'s ``std::partial_sort`` leaves them, as the CPU plugin), greedy NMS (IoU with sizes
  ``x1 - x0``, 0 for boxes apart, above ``nms_threshold`` suppressed) up to ``post_nms_count``. Outputs rois
  ``[post_nms_count, 4]`` and scores ``[post_nms_count]``, zero past the kept ones. All in f32. A negative
  ``pre_nms_count`` takes every box (the plugin reads it unsigned); a negative ``post_nms_count`` is refused.
- ExperimentalDetectronDetectionOutput-6 (as OpenVINO's CPU plugin computes it): per class but 0, each roi
  (``[N, 4]``; those with a side <= 0 skipped) refined by its deltas (``[N, 4 * num_classes]``, divided by
  ``deltas_weights``, log sizes capped at ``max_delta_log_wh``, sizes ``x1 - x0 + 1``, corners clamped at 0 only);
  the rois scoring above ``score_threshold`` (``[N, num_classes]``) by descending score (ties: lower index first),
  greedy NMS (IoU with ``+ 1`` sizes, above ``nms_threshold`` suppressed) keeping ``post_nms_count`` (-1: all;
  below -1 refused, the CPU plugin crashes); the classes'
  detections in class order, or when more than ``max_detections_per_image``, that many in the order libstdc++'s
  ``std::partial_sort`` leaves them (score, then roi index). Outputs boxes ``[M, 4]``, classes ``[M]`` (i32) and
  scores ``[M]`` (M = ``max_detections_per_image``), zero past the detections. ``class_agnostic_box_regression``
  is refused (the CPU plugin ignores it; OpenVINO's shapes still want a delta per class).

OpenVINO's core nodes have no ``evaluate``: values equal its CPU plugin's, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, UnsupportedError
from ...types import DYNAMIC_DIM, ELEMENT_TYPES, Dim, ElementType, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.dims import dim_mul
from ..toolkit.libm import expf
from ..toolkit.numeric import Arith
from ..toolkit.stl_order import partial_sort
from ._common import max0, nms_cpu, top_scores

FLOATS = ("f16", "bf16", "f32", "f64")


def _float_inputs(ctx: OpContext, positions) -> ElementType:
    et = ctx.common_element_type(*positions)
    if et.name not in FLOATS + ("dynamic",):
        ctx.fail(f"the inputs must have a floating-point element type, got {et}", position=positions[0])
    return et


def _rank(ctx: OpContext, position: int, rank: int, what: str):
    shape = ctx.inputs[position].shape
    if shape.rank not in (None, rank):
        ctx.fail(f"{ctx.op.input_names[position]} must be {rank}-D {what}, got {shape.brief()}", position=position)
    return shape.dims


# -- ExperimentalDetectronTopKROIs-6 ----------------------------------------------------------------------------

def infer_topk_rois(ctx: OpContext):
    et = _float_inputs(ctx, (0, 1))
    most = ctx.attr_int("max_rois", 0)
    if most < 0:
        ctx.fail(f"max_rois must not be negative, got {most}")
    rois, probs = _rank(ctx, 0, 2, "[N, 4]"), _rank(ctx, 1, 1, "[N]")
    if rois is not None and not rois[1].contains(4):
        ctx.fail(f"rois must have 4 coordinates (dim 1), got {rois[1]}", position=0)
    if rois is not None and probs is not None and merge_dims(rois[0], probs[0]) is None:
        ctx.fail(f"rois has {rois[0]} rows, rois_probs {probs[0]}", position=1)
    return [TensorSpec(et, PartialShape.of((most, 4)))], {"max_rois": most}


def topk_rois(rois: np.ndarray, probs: np.ndarray, *, max_rois: int) -> np.ndarray:
    """ExperimentalDetectronTopKROIs-6 (see the module docstring)."""
    order = np.argsort(-probs.astype(np.float64), kind="stable")[:max_rois]
    out = np.zeros((max_rois, 4), rois.dtype)
    out[:order.size] = rois[order]
    return out


# -- ExperimentalDetectronPriorGridGenerator-6 -----------------------------------------------------------------

def infer_prior_grid(ctx: OpContext):
    et = ctx.inputs[0].element_type
    if et.name not in FLOATS + ("dynamic",):
        ctx.fail(f"priors must have a floating-point element type, got {et}", position=0)
    priors, feature, image = (_rank(ctx, 0, 2, "[P, 4]"), _rank(ctx, 1, 4, "[N, C, H, W]"),
                              _rank(ctx, 2, 4, "[N, C, H, W]"))
    if priors is not None and not priors[1].contains(4):
        ctx.fail(f"priors must have 4 coordinates (dim 1), got {priors[1]}", position=0)
    if feature is not None and image is not None and merge_dims(feature[0], image[0]) is None:
        ctx.fail(f"feature_map's batch {feature[0]} differs from im_data's {image[0]}", position=2)
    grid = {"h": ctx.attr_int("h", 0), "w": ctx.attr_int("w", 0)}
    if feature is not None:
        for name, dim in (("h", feature[2]), ("w", feature[3])):
            if grid[name] and dim.is_static and grid[name] != dim.lo:
                raise UnsupportedError(f"attribute {name}={grid[name]} differs from the feature map's {dim}: OpenVINO's"
                                       " shape follows the feature map, its kernels the attribute", layer=ctx.ref)
    params = {"flatten": ctx.attr_bool("flatten", True), "stride_x": ctx.attr_float("stride_x", 0.0),
              "stride_y": ctx.attr_float("stride_y", 0.0), **grid}
    count = priors[0] if priors is not None else DYNAMIC_DIM
    height, width = (feature[2], feature[3]) if feature is not None else (DYNAMIC_DIM, DYNAMIC_DIM)
    if params["flatten"]:
        shape = PartialShape((dim_mul(dim_mul(height, width), count), Dim(4, 4)))
    else:
        shape = PartialShape((height, width, count, Dim(4, 4)))
    return [TensorSpec(et, shape)], params


def prior_grid(priors: np.ndarray, feature_map: np.ndarray, im_data: np.ndarray, *, flatten: bool, stride_x: float,
               stride_y: float, h: int, w: int) -> np.ndarray:
    """ExperimentalDetectronPriorGridGenerator-6 (see the module docstring)."""
    height, width = feature_map.shape[2:]
    if (h and h != height) or (w and w != width):
        raise UnsupportedError(f"attributes h={h}, w={w} differ from the feature map's {height}x{width}")
    f32 = np.float32
    with np.errstate(divide="ignore", invalid="ignore"):
        step_w = f32(stride_x) if stride_x else f32(im_data.shape[3]) / f32(width)
        step_h = f32(stride_y) if stride_y else f32(im_data.shape[2]) / f32(height)
    shift_x = step_w * (np.arange(width, dtype=f32) + f32(0.5))  # [W]
    shift_y = step_h * (np.arange(height, dtype=f32) + f32(0.5))  # [H]
    wide = priors.astype(np.float64 if priors.dtype == np.float64 else f32)  # (C++ promotes f16 to float)
    shift = np.zeros((height, width, 1, 4), f32)  # (the step products in f32, as the reference's)
    shift[..., 0::2] = shift_x[None, :, None, None]
    shift[..., 1::2] = shift_y[:, None, None, None]
    out = Arith(priors.dtype).of(wide[None, None] + shift) if priors.dtype.itemsize < 4 else \
        (wide[None, None] + shift).astype(priors.dtype)
    return out.reshape(-1, 4) if flatten else out


# -- ExperimentalDetectronROIFeatureExtractor-6 -------------------------------------------------------------------

def infer_roi_feature(ctx: OpContext):
    et = _float_inputs(ctx, tuple(range(len(ctx.inputs))))
    rois = _rank(ctx, 0, 2, "[N, 4]")
    if rois is not None and not rois[1].contains(4):
        ctx.fail(f"rois must have 4 coordinates (dim 1), got {rois[1]}", position=0)
    channels = DYNAMIC_DIM
    for position in range(1, len(ctx.inputs)):
        shape = ctx.inputs[position].shape
        if shape.rank not in (None, 4):
            ctx.fail(f"feature map {position - 1} must be 4-D [1, C, H, W], got {shape.brief()}", position=position)
        if shape.rank is None:
            continue
        if not shape.dims[0].contains(1):
            ctx.fail(f"feature map {position - 1} must have batch 1, got {shape.dims[0]}", position=position)
        merged = merge_dims(channels, shape.dims[1])
        if merged is None:
            ctx.fail(f"every pyramid level must have the same channels, got {channels} and {shape.dims[1]}",
                     position=position)
        channels = merged
    size = ctx.attr_int("output_size", 0)
    scales = ctx.attr_floats("pyramid_scales")
    if len(scales) < len(ctx.inputs) - 1:
        ctx.fail(f"pyramid_scales={scales} has fewer scales than the {len(ctx.inputs) - 1} feature maps")
    count = rois[0] if rois is not None else DYNAMIC_DIM
    params = {"output_size": size, "sampling_ratio": ctx.attr_int("sampling_ratio", 0), "scales": tuple(scales),
              "aligned": ctx.attr_bool("aligned", False)}
    return [TensorSpec(et, PartialShape((count, channels, Dim(size, size), Dim(size, size)))),
            TensorSpec(et, PartialShape((count, Dim(4, 4))))], params


def _levels(rois: np.ndarray, levels: int) -> np.ndarray:
    f32 = np.float32
    with np.errstate(invalid="ignore", divide="ignore"):
        area = (rois[:, 2] - rois[:, 0]) * (rois[:, 3] - rois[:, 1])
        scaled = np.log2(np.sqrt(area) / f32(224) + f32(1e-6))  # (f32: sqrtf, log2f in double rounded once)
        level = np.clip(np.floor(scaled + f32(2)), 0, levels - 1)
    return np.where(area > 0, level, levels).astype(np.int64)


def _samples(start: np.float32, step: np.float32, bins: np.ndarray, grid: int) -> np.ndarray:
    """``start + bin * step + (i + 0.5) * step / grid`` per (bin, i), in f32 and the reference's order."""
    f32 = np.float32
    return (start + bins[:, None] * step) + (np.arange(grid, dtype=f32)[None, :] + f32(0.5)) * step / f32(grid)


def _align(feature: np.ndarray, rois: np.ndarray, scale: np.float32, size: int, ratio: int, aligned: bool):
    """Caffe2's ROIAlign of ``rois`` [n, 4] on ``feature`` [C, H, W], in f32 as the reference -> [n, C, size, size]."""
    f32 = np.float32
    channels, height, width = feature.shape
    offset = f32(0.5) if aligned else f32(0)
    flat = feature.reshape(channels, -1)
    out = np.zeros((rois.shape[0], channels, size, size), f32)
    bins = np.arange(size, dtype=f32)
    for n, (x0, y0, x1, y1) in enumerate(rois):
        start_w, start_h, end_w, end_h = x0 * scale - offset, y0 * scale - offset, x1 * scale - offset, \
            y1 * scale - offset
        roi_w, roi_h = max(end_w - start_w, f32(1)), max(end_h - start_h, f32(1))
        bin_h, bin_w = roi_h / f32(size), roi_w / f32(size)
        grid_h = ratio if ratio > 0 else int(np.ceil(roi_h / f32(size)))
        grid_w = ratio if ratio > 0 else int(np.ceil(roi_w / f32(size)))
        y = _samples(start_h, bin_h, bins, grid_h).reshape(size, 1, grid_h, 1)
        x = _samples(start_w, bin_w, bins, grid_w).reshape(1, size, 1, grid_w)
        y, x = np.broadcast_arrays(y, x)  # [size, size, grid_h, grid_w]
        outside = (y < -1) | (y > height) | (x < -1) | (x > width)
        y, x = np.maximum(y, f32(0)), np.maximum(x, f32(0))
        y_low, x_low = y.astype(np.int64), x.astype(np.int64)
        y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
        y_low, x_low = np.where(y_edge, height - 1, y_low), np.where(x_edge, width - 1, x_low)
        y_high, x_high = np.where(y_edge, y_low, y_low + 1), np.where(x_edge, x_low, x_low + 1)
        y, x = np.where(y_edge, y_low.astype(f32), y), np.where(x_edge, x_low.astype(f32), x)
        ly, lx = y - y_low.astype(f32), x - x_low.astype(f32)
        hy, hx = f32(1) - ly, f32(1) - lx
        weights = [np.where(outside, f32(0), w) for w in (hy * hx, hy * lx, ly * hx, ly * lx)]
        places = [np.where(outside, 0, p) for p in (y_low * width + x_low, y_low * width + x_high,
                                                      y_high * width + x_low, y_high * width + x_high)]
        total = np.zeros((channels, size, size), f32)
        for iy in range(grid_h):
            for ix in range(grid_w):
                term = weights[0][:, :, iy, ix] * flat[:, places[0][:, :, iy, ix]]
                for k in (1, 2, 3):
                    term = term + weights[k][:, :, iy, ix] * flat[:, places[k][:, :, iy, ix]]
                total = total + term
        out[n] = total / f32(grid_h * grid_w)
    return out


def roi_feature_extractor(rois: np.ndarray, *feature_maps: np.ndarray, output_size: int, sampling_ratio: int,
                          scales: tuple[float, ...], aligned: bool) -> tuple[np.ndarray, np.ndarray]:
    """ExperimentalDetectronROIFeatureExtractor-6 (see the module docstring)."""
    f32 = np.float32
    boxes = rois.astype(f32)
    level = _levels(boxes, len(feature_maps))
    channels = feature_maps[0].shape[1]
    out = np.zeros((rois.shape[0], channels, output_size, output_size), f32)
    for index, feature in enumerate(feature_maps):
        chosen = np.flatnonzero(level == index)
        if chosen.size:
            out[chosen] = _align(feature[0].astype(f32), boxes[chosen], f32(1) / f32(scales[index]), output_size,
                                 sampling_ratio, aligned)
    cast = Arith(rois.dtype).of if rois.dtype.itemsize < 4 else (lambda a: a.astype(rois.dtype))
    return cast(out), rois.copy()


# -- ExperimentalDetectronGenerateProposalsSingleImage-6 -------------------------------------------------------

PROPOSAL_NAMES = ("im_info", "anchors", "deltas", "scores")


def infer_proposals(ctx: OpContext):
    et = _float_inputs(ctx, (0, 1, 2, 3))
    info, anchors = _rank(ctx, 0, 1, "[3]"), _rank(ctx, 1, 2, "[H * W * A, 4]")
    deltas, scores = _rank(ctx, 2, 3, "[A * 4, H, W]"), _rank(ctx, 3, 3, "[A, H, W]")
    if info is not None and not info[0].contains(3):
        ctx.fail(f"im_info must have 3 elements (height, width, scale), got {info[0]}", position=0)
    if anchors is not None and not anchors[1].contains(4):
        ctx.fail(f"anchors must have 4 coordinates (dim 1), got {anchors[1]}", position=1)
    if deltas is not None and scores is not None:
        for axis, name in ((1, "heights"), (2, "widths")):
            if merge_dims(deltas[axis], scores[axis]) is None:
                ctx.fail(f"the {name} of deltas ({deltas[axis]}) and scores ({scores[axis]}) differ", position=3)
    post = ctx.attr_int("post_nms_count", 0)
    params = {"min_size": ctx.attr_float("min_size", 0.0), "nms_threshold": ctx.attr_float("nms_threshold", 0.0),
              "pre_nms_count": ctx.attr_int("pre_nms_count", 0), "post_nms_count": post}
    if post < 0:
        ctx.fail(f"attribute post_nms_count={post} must not be negative",
                 hint="OpenVINO infers no length for it, and its CPU plugin fails to compile it")
    return [TensorSpec(et, PartialShape.of((post, 4))), TensorSpec(et, PartialShape.of((post,)))], params


def _refined(anchors, deltas, scores, image_h, image_w, min_size):
    """The refined boxes [P, 4] and scores [P] in the (h, w, a) order of the anchors, in f32."""
    f32 = np.float32
    count, height, width = scores.shape
    d = deltas.reshape(count, 4, height, width).transpose(2, 3, 0, 1).reshape(-1, 4)  # [(h, w, a), 4]
    x0, y0, x1, y1 = (anchors[:, i] for i in range(4))
    ww, hh = x1 - x0 + f32(1), y1 - y0 + f32(1)
    cx, cy = x0 + f32(0.5) * ww, y0 + f32(0.5) * hh
    px, py = d[:, 0] * ww + cx, d[:, 1] * hh + cy
    cap = f32(np.log(1000.0 / 16.0))
    pw, ph = expf(np.minimum(d[:, 2], cap)) * ww, expf(np.minimum(d[:, 3], cap)) * hh
    boxes = np.stack([px - f32(0.5) * pw, py - f32(0.5) * ph, px + f32(0.5) * pw - f32(1),
                      py + f32(0.5) * ph - f32(1)], axis=1)
    limits = np.array([image_w - f32(1), image_h - f32(1)] * 2, f32)
    boxes = max0(np.minimum(boxes, limits))  # (std::max(0.0f, std::min(v, limit)): NaN gives 0)
    kept = (f32(min_size) <= boxes[:, 2] - boxes[:, 0] + f32(1)) & (f32(min_size) <= boxes[:, 3] - boxes[:, 1] + f32(1))
    return boxes, kept.astype(f32) * scores.transpose(1, 2, 0).reshape(-1)


def proposals_single_image(im_info: np.ndarray, anchors: np.ndarray, deltas: np.ndarray, scores: np.ndarray, *,
                           min_size: float, nms_threshold: float, pre_nms_count: int, post_nms_count: int):
    """ExperimentalDetectronGenerateProposalsSingleImage-6 (see the module docstring)."""
    f32 = np.float32
    if anchors.shape[0] * 4 != deltas.size or deltas.size != 4 * scores.size:
        raise InputError(f"anchors {list(anchors.shape)}, deltas {list(deltas.shape)} and scores"
                         f" {list(scores.shape)} do not hold one box per anchor", port="input 1 (anchors)")
    info = im_info.astype(f32).reshape(-1)
    boxes, score = _refined(anchors.astype(f32), deltas.astype(f32), scores.astype(f32), info[0], info[1], min_size)
    order = top_scores(score, score.size if pre_nms_count < 0 else min(score.size, pre_nms_count))  # (-1: all)
    kept = order[nms_cpu(boxes[order], f32(nms_threshold), post_nms_count, f32(0))]
    rois = np.zeros((post_nms_count, 4), f32)
    best = np.zeros(post_nms_count, f32)
    rois[:kept.size], best[:kept.size] = boxes[kept], score[kept]
    cast = Arith(anchors.dtype).of if anchors.dtype.itemsize < 4 else (lambda a: a.astype(anchors.dtype))
    return cast(rois), cast(best)


# -- ExperimentalDetectronDetectionOutput-6 --------------------------------------------------------------------

DETECTION_NAMES = ("rois", "deltas", "scores", "im_info")


def infer_detection_output(ctx: OpContext):
    et = _float_inputs(ctx, (0, 1, 2, 3))
    classes = ctx.attr_int("num_classes", 0)
    most = ctx.attr_int("max_detections_per_image", 0)
    if ctx.attr_bool("class_agnostic_box_regression", False):
        raise UnsupportedError("class_agnostic_box_regression=true: OpenVINO's CPU plugin ignores it and its shapes"
                               " still take a delta per class; ir-run does not guess its meaning", layer=ctx.ref)
    rois, deltas = _rank(ctx, 0, 2, "[N, 4]"), _rank(ctx, 1, 2, "[N, 4 * num_classes]")
    scores, info = _rank(ctx, 2, 2, "[N, num_classes]"), _rank(ctx, 3, 2, "[1, 3]")
    for position, dims, last in ((0, rois, 4), (1, deltas, 4 * classes), (2, scores, classes), (3, info, 3)):
        if dims is not None and not dims[1].contains(last):
            ctx.fail(f"{DETECTION_NAMES[position]} must have {last} columns (num_classes={classes}), got {dims[1]}",
                     position=position)
    count = DYNAMIC_DIM
    for position, dims in ((0, rois), (1, deltas), (2, scores)):
        if dims is not None:
            merged = merge_dims(count, dims[0])
            if merged is None:
                ctx.fail(f"rois, deltas and scores must have one row count, got {count} and {dims[0]}",
                         position=position)
            count = merged
    weights = ctx.attr_floats("deltas_weights")
    if len(weights) != 4:
        ctx.fail(f"deltas_weights must have 4 values, got {weights}")
    params = {"score_threshold": ctx.attr_float("score_threshold", 0.0),
              "nms_threshold": ctx.attr_float("nms_threshold", 0.0),
              "max_delta_log_wh": ctx.attr_float("max_delta_log_wh", 0.0), "num_classes": classes,
              "post_nms_count": ctx.attr_int("post_nms_count", 0), "most": most, "weights": tuple(weights)}
    if params["post_nms_count"] < -1:
        ctx.fail(f"attribute post_nms_count={params['post_nms_count']} must be -1 (no limit) or more",
                 hint="OpenVINO's CPU plugin crashes on it")
    i32 = ELEMENT_TYPES["i32"]
    return [TensorSpec(et, PartialShape.of((most, 4))), TensorSpec(i32, PartialShape.of((most,))),
            TensorSpec(et, PartialShape.of((most,)))], params


def _refine_classes(rois, deltas, weights, cap):
    """Per (class, roi): refined boxes [C, N, 4] and their ``+ 1`` areas [C, N], in f32; rois of a side <= 0
    stay 0."""
    f32 = np.float32
    x0, y0, x1, y1 = (rois[:, i] for i in range(4))
    valid = ~((x1 - x0 <= 0) | (y1 - y0 <= 0))
    ww, hh = x1 - x0 + f32(1), y1 - y0 + f32(1)
    cx, cy = x0 + f32(0.5) * ww, y0 + f32(0.5) * hh
    d = deltas.reshape(rois.shape[0], -1, 4).transpose(1, 0, 2) / np.array(weights, f32)  # [C, N, 4]
    px, py = d[..., 0] * ww + cx, d[..., 1] * hh + cy
    with np.errstate(over="ignore"):
        pw, ph = expf(np.minimum(d[..., 2], cap)) * ww, expf(np.minimum(d[..., 3], cap)) * hh
    boxes = max0(np.stack([px - f32(0.5) * pw, py - f32(0.5) * ph, px + f32(0.5) * pw - f32(1),
                           py + f32(0.5) * ph - f32(1)], axis=-1))  # (std::max(0.0f, v): NaN gives 0)
    areas = (boxes[..., 2] - boxes[..., 0] + f32(1)) * (boxes[..., 3] - boxes[..., 1] + f32(1))
    return np.where(valid[None, :, None], boxes, f32(0)), np.where(valid[None], areas, f32(0)), valid


def _overlap(boxes: np.ndarray, areas: np.ndarray, i: int, j: int) -> np.float32:
    """The CPU plugin's JaccardOverlap (``+ 1`` sizes, 0 for boxes apart)."""
    f32 = np.float32
    a, b = boxes[i], boxes[j]
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return f32(0)
    width = min(a[2], b[2]) - max(a[0], b[0]) + f32(1)
    height = min(a[3], b[3]) - max(a[1], b[1]) + f32(1)
    if width <= 0 or height <= 0:
        return f32(0)
    inter = width * height
    with np.errstate(divide="ignore", invalid="ignore"):
        return inter / (areas[i] + areas[j] - inter)


def detectron_detections(rois: np.ndarray, deltas: np.ndarray, scores: np.ndarray, im_info: np.ndarray, *,
                         score_threshold: float, nms_threshold: float, max_delta_log_wh: float, num_classes: int,
                         post_nms_count: int, most: int, weights: tuple[float, ...]):
    """ExperimentalDetectronDetectionOutput-6 (see the module docstring)."""
    f32 = np.float32
    if scores.shape[1] != num_classes or deltas.shape[1] != 4 * num_classes:
        raise InputError(f"scores {list(scores.shape)} and deltas {list(deltas.shape)} do not have num_classes ="
                         f" {num_classes} columns (x4 for deltas)", port="input 2 (scores)")
    boxes, areas, valid = _refine_classes(rois.astype(f32), deltas.astype(f32), weights, f32(max_delta_log_wh))
    refined = np.where(valid[None], scores.astype(f32).T, f32(0))  # [C, N]
    found = []  # (score, class, roi)
    for c in range(1, num_classes):
        conf = refined[c]
        candidates = np.flatnonzero(conf > f32(score_threshold))
        order = candidates[np.lexsort((candidates, -conf[candidates].astype(np.float64)))]
        kept: list[int] = []
        for idx in order.tolist():
            if all(_overlap(boxes[c], areas[c], idx, k) <= f32(nms_threshold) for k in kept):
                kept.append(idx)
        found += [(float(conf[idx]), c, idx) for idx in (kept if post_nms_count == -1 else kept[:post_nms_count])]
    if len(found) > most:
        found = partial_sort(found, most, lambda p, q: p[0] > q[0] or (p[0] == q[0] and p[2] < q[2]))
    out_boxes, out_classes, out_scores = np.zeros((most, 4), f32), np.zeros(most, np.int32), np.zeros(most, f32)
    for i, (score, c, idx) in enumerate(found):
        out_boxes[i], out_classes[i], out_scores[i] = boxes[c, idx], c, score
    cast = Arith(rois.dtype).of if rois.dtype.itemsize < 4 else (lambda a: a.astype(rois.dtype))
    return cast(out_boxes), out_classes, cast(out_scores)


OPS = (
    OpDef("ExperimentalDetectronTopKROIs", 6, 6, LATEST_OPSET, ("rois", "rois_probs"), infer_topk_rois, topk_rois,
          attrs=(Attr("max_rois", "0"),),
          batch=lambda *a: "rois of every image are ranked together (their rows are not a batch)"),
    OpDef("ExperimentalDetectronPriorGridGenerator", 6, 6, LATEST_OPSET, ("priors", "feature_map", "im_data"),
          infer_prior_grid, prior_grid,
          attrs=(Attr("flatten", "true", ("true", "false")), Attr("h", "0"), Attr("w", "0"), Attr("stride_x", "0"),
                 Attr("stride_y", "0")),
          batch=lambda *a: "the grid does not depend on the batch (its output has no batch axis)"),
    OpDef("ExperimentalDetectronROIFeatureExtractor", 6, 6, LATEST_OPSET, ("rois", "feature_maps"), infer_roi_feature,
          roi_feature_extractor, variadic=True,
          attrs=(Attr("output_size"), Attr("sampling_ratio"), Attr("pyramid_scales"), Attr("aligned", "false",
                                                                                        ("true", "false"))),
          batch=lambda *a: "rois are assigned to pyramid levels of one image (their rows are not a batch)"),
    OpDef("ExperimentalDetectronGenerateProposalsSingleImage", 6, 6, LATEST_OPSET, PROPOSAL_NAMES, infer_proposals,
          proposals_single_image,
          attrs=(Attr("min_size"), Attr("nms_threshold"), Attr("pre_nms_count"), Attr("post_nms_count")),
          batch=lambda *a: "one image's proposals are ranked together (SingleImage)"),
    OpDef("ExperimentalDetectronDetectionOutput", 6, 6, LATEST_OPSET, DETECTION_NAMES, infer_detection_output,
          detectron_detections,
          attrs=(Attr("score_threshold"), Attr("nms_threshold"), Attr("max_delta_log_wh"), Attr("num_classes"),
                 Attr("post_nms_count"), Attr("max_detections_per_image"),
                 Attr("class_agnostic_box_regression", "false", ("true", "false")), Attr("deltas_weights")),
          batch=lambda *a: "one image's detections are ranked together"),
)
