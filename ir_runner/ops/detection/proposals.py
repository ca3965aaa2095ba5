"""Region proposals: Proposal-1/4 (Faster R-CNN's RPN) and GenerateProposals-9 (``docs/semantics.md``,
"Detection").

Proposal takes ``class_probs`` [N, 2A, H, W] (background then foreground scores of A = len(ratio) * len(scale)
anchors per cell), ``bbox_deltas`` [N, 4A, H, W] and ``image_shape`` [3 or 4] (height, width, scale_h[,
scale_w]), and gives ``rois`` [N * post_nms_topn, 5] (image index, x0, y0, x1, y1) and, for version 4, their
``probs`` [N * post_nms_topn]. OpenVINO's reference has no ``Node.evaluate`` for it: ir-run follows the CPU
plugin (``proposal_imp.cpp``), in f32:

- anchors per (ratio, scale) around ``center = (base_size - offset) / 2``: ``w = round(sqrt(base_size^2 /
  ratio))``, ``h = round(w * ratio)`` (``framework=""``, Caffe: offset 1, rounded); ``framework="tensorflow"``:
  offset 0, not rounded, anchors shifted by ``-base_size / 2``, x and y taken from (h, w) swapped, and the
  shifted anchors clipped to the image first;
- each cell (h, w) and anchor: the anchor moved by ``feat_stride``, decoded with the deltas (``dx /
  box_coordinate_scale``, ``exp(dw / box_size_scale)``...), clipped to ``[0, size - offset]`` with
  ``clip_before_nms``; a box narrower or lower than ``min_size * scale`` gets score 0;
- the ``pre_nms_topn`` best by score (libstdc++'s ``std::partial_sort``, emulated step by step when scores
  tie: its order of tied boxes is the plugin's), then greedy NMS (a box goes when its IoU with one taken
  before is above ``nms_thresh``; boxes apart have IoU 0) up to ``post_nms_topn``; ``clip_after_nms`` clips
  to ``[0, size]``, ``normalize`` divides by the image size;
- rows after the last box are 0, the first of them with image index -1 (the end marker); ``probs`` there are
  0 (the plugin leaves them unwritten).

Bound: the plugin's x86 builds (SSE4.1, AVX2, AVX-512) may contract the decoding's multiply-adds into FMAs,
and ``exp`` is glibc's ``expf`` (ir-run: the toolkit's ``expf``, glibc's own): coordinates within 1e-5
relative plus 1e-3 absolute of the plugin's (measured: 1.2e-4 at most, coordinates up to ~300), scores and
image indices exact. Refused (InputError): an image height or width that is not a positive normal number, a
negative or non-finite scale.

GenerateProposals-9 (``generate_proposals``) decodes given anchors [H, W, A, 4] the same way, per image, with
its own rules (its docstring); same bound.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, ModelFormatError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, element_type, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.handover import computed_once, count_from_constants
from ..toolkit.libm import expf
from ..toolkit.rounding import round_half_away
from ._common import max0, nms_cpu, top_scores

FRAMEWORKS = {"": "caffe", "tensorflow": "tensorflow"}
NAMES = ("class_probs", "bbox_deltas", "image_shape")


def _uint(ctx: OpContext, name: str, default: int | None = None) -> int:
    if default is None and ctx.attr(name) is None:
        raise ModelFormatError(f"the required attribute '{name}' is missing", layer=ctx.ref)
    value = ctx.attr_int(name, 0 if default is None else default)
    if not 0 <= value <= 2**32 - 1:
        ctx.fail(f"attribute {name}={value} must be an unsigned 32-bit int")
    return value


def _infer(ctx: OpContext, version: int):
    for position in range(3):
        et = ctx.inputs[position].element_type
        if et.kind not in ("float", "dynamic") or 0 < et.bits < 16:
            ctx.fail(f"{NAMES[position]} must have a floating-point type, got {et}", position=position)
    probs, deltas, image = (spec.shape for spec in ctx.inputs)
    for position, shape in ((0, probs), (1, deltas)):
        if shape.rank not in (None, 4):
            ctx.fail(f"{NAMES[position]} must be 4-D, got {shape.brief()}", position=position)
    if image.rank is not None and not (image.rank == 1 and (image.dims[0].contains(3) or image.dims[0].contains(4))):
        ctx.fail(f"image_shape must be 1-D with 3 or 4 elements, got {image.brief()}", position=2)
    params = {"base_size": _uint(ctx, "base_size"), "pre_nms_topn": _uint(ctx, "pre_nms_topn"),
              "post_nms_topn": _uint(ctx, "post_nms_topn"), "feat_stride": _uint(ctx, "feat_stride"),
              "min_size": _uint(ctx, "min_size"),
              "nms_thresh": float(np.float32(ctx.attr_float("nms_thresh"))),
              "ratios": tuple(float(np.float32(r)) for r in ctx.attr_floats("ratio")),
              "scales": tuple(float(np.float32(s)) for s in ctx.attr_floats("scale")),
              "clip_before_nms": ctx.attr_bool("clip_before_nms", True),
              "clip_after_nms": ctx.attr_bool("clip_after_nms", False), "normalize": ctx.attr_bool("normalize", False),
              "box_size_scale": float(np.float32(ctx.attr_float("box_size_scale", 1.0))),
              "box_coordinate_scale": float(np.float32(ctx.attr_float("box_coordinate_scale", 1.0))),
              "framework": ctx.attr_choice("framework", FRAMEWORKS, "caffe"), "probs": version == 4}
    batch = DYNAMIC_DIM
    if probs.rank is not None:
        batch = probs.dims[0]
        anchors = probs.dims[1]
        if deltas.rank is not None:
            twice = Dim(anchors.lo * 2, None if anchors.hi is None else anchors.hi * 2)
            if merge_dims(deltas.dims[1], twice) is None:
                ctx.fail(f"bbox_deltas must have twice the channels of class_probs (4 per anchor), got"
                         f" {deltas.brief()} and {probs.brief()}", position=1)
    if deltas.rank is not None:
        merged = merge_dims(batch, deltas.dims[0])
        if merged is None:
            ctx.fail(f"class_probs and bbox_deltas must have the same batch, got {probs.brief()} and"
                     f" {deltas.brief()}", position=1)
        batch = merged
    post = params["post_nms_topn"]
    rows = Dim(batch.lo * post, None if batch.hi is None else batch.hi * post)
    et = ctx.inputs[0].element_type
    specs = [TensorSpec(et, PartialShape((rows, Dim(5, 5))))]
    if version == 4:
        specs.append(TensorSpec(et, PartialShape((rows,))))
    return specs, params


def _anchors(p: dict) -> np.ndarray:
    """(4, A): x0, y0, x1, y1 offsets of each (ratio, scale) anchor, as the plugin's ``generate_anchors``."""
    f = np.float32
    tensorflow = p["framework"] == "tensorflow"
    offset = f(0 if tensorflow else 1)
    base = p["base_size"]
    area, half, center = f(base * base), f(base) * f(0.5), f(0.5) * (f(base) - offset)
    out = []
    for ratio in p["ratios"]:
        ratio = f(ratio)
        w = np.sqrt(area / ratio, dtype=np.float32)
        if not tensorflow:
            w = np.float32(round_half_away(w))
        h = f(w * ratio)
        if not tensorflow:
            h = np.float32(round_half_away(h))
        for scale in p["scales"]:
            sw = f(0.5) * f(f(w * f(scale)) - offset)
            sh = f(0.5) * f(f(h * f(scale)) - offset)
            box = [center - sw, center - sh, center + sw, center + sh]
            out.append([f(v - half) if tensorflow else f(v) for v in box])
    return np.array(out, np.float32).T.reshape(4, -1)


def _clip(x: np.ndarray, high: np.float32) -> np.ndarray:
    """``std::max(0.0f, std::min(x, high))``: ``std::min`` keeps a NaN ``x``, ``std::max`` then gives its first
    operand, 0 (as for -0.0: +0.0)."""
    return max0(np.where(high < x, high, x))


def _enumerate(scores: np.ndarray, deltas: np.ndarray, anchors: np.ndarray, p: dict, img_h, img_w, min_h,
               min_w) -> np.ndarray:
    """(H * W * A, 5): x0, y0, x1, y1, score of every anchor of every cell, in the plugin's order."""
    f = np.float32
    a, h, w = scores.shape
    tensorflow = p["framework"] == "tensorflow"
    offset = f(0 if tensorflow else 1)
    hh, ww = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    x = ((hh if tensorflow else ww) * p["feat_stride"]).astype(np.float32)[..., None]
    y = ((ww if tensorflow else hh) * p["feat_stride"]).astype(np.float32)[..., None]
    d = deltas.reshape(a, 4, h, w).transpose(2, 3, 0, 1).astype(np.float32)  # (H, W, A, 4)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        dx, dy = d[..., 0] / f(p["box_coordinate_scale"]), d[..., 1] / f(p["box_coordinate_scale"])
        dw, dh = d[..., 2] / f(p["box_size_scale"]), d[..., 3] / f(p["box_size_scale"])
        x0, y0, x1, y1 = x + anchors[0], y + anchors[1], x + anchors[2], y + anchors[3]
        if tensorflow:
            x0, y0, x1, y1 = _clip(x0, img_w), _clip(y0, img_h), _clip(x1, img_w), _clip(y1, img_h)
        bw, bh = x1 - x0 + offset, y1 - y0 + offset
        cx, cy = x0 + f(0.5) * bw, y0 + f(0.5) * bh
        px, py = dx * bw + cx, dy * bh + cy
        pw = expf(dw) * bw
        ph = expf(dh) * bh
        x0, y0 = px - f(0.5) * pw, py - f(0.5) * ph
        x1, y1 = px + f(0.5) * pw, py + f(0.5) * ph
        if p["clip_before_nms"]:
            x0, x1 = _clip(x0, f(img_w - offset)), _clip(x1, f(img_w - offset))
            y0, y1 = _clip(y0, f(img_h - offset)), _clip(y1, f(img_h - offset))
        keep = (min_w <= x1 - x0 + offset) & (min_h <= y1 - y0 + offset)
        score = np.where(keep, scores.transpose(1, 2, 0).astype(np.float32), f(0) * scores.transpose(1, 2, 0))
    return np.stack([x0, y0, x1, y1, score.astype(np.float32)], -1).reshape(-1, 5).astype(np.float32)


def proposal(class_probs: np.ndarray, bbox_deltas: np.ndarray, image_shape: np.ndarray, *, base_size: int,
             pre_nms_topn: int, post_nms_topn: int, feat_stride: int, min_size: int, nms_thresh: float,
             ratios: tuple, scales: tuple, clip_before_nms: bool, clip_after_nms: bool, normalize: bool,
             box_size_scale: float, box_coordinate_scale: float, framework: str, probs: bool):
    """Proposal-1/4 as the CPU plugin computes it (see the module docstring)."""
    p = {"base_size": base_size, "ratios": ratios, "scales": scales, "framework": framework,
         "feat_stride": feat_stride, "box_size_scale": box_size_scale, "box_coordinate_scale": box_coordinate_scale,
         "clip_before_nms": clip_before_nms}
    n, channels, h, w = class_probs.shape
    anchors = _anchors(p)
    count = anchors.shape[1]
    if channels != 2 * count or bbox_deltas.shape != (n, 4 * count, h, w):
        raise InputError(f"class_probs {list(class_probs.shape)} and bbox_deltas {list(bbox_deltas.shape)} do not"
                         f" hold 2 and 4 channels per anchor ({count} anchors: ratio x scale) of the same feature"
                         " map", port="input 1 (bbox_deltas)")
    info = image_shape.astype(np.float32)
    img_h, img_w = info[0], info[1]
    scale_h = info[2]
    scale_w = info[3] if info.size == 4 else scale_h
    if not (np.isfinite(img_h) and np.isfinite(img_w) and img_h >= np.finfo(np.float32).tiny
            and img_w >= np.finfo(np.float32).tiny):
        raise InputError(f"image_shape gives height {img_h} and width {img_w}: both must be positive normal"
                         " numbers", port="input 2 (image_shape)")
    if not (np.isfinite(scale_h) and np.isfinite(scale_w) and scale_h >= 0 and scale_w >= 0):
        raise InputError(f"image_shape gives scales {scale_h}, {scale_w}: they must be finite and not negative",
                         port="input 2 (image_shape)")
    if framework == "tensorflow":
        img_h, img_w = img_w, img_h
    offset = np.float32(0 if framework == "tensorflow" else 1)
    min_h, min_w = np.float32(np.float32(min_size) * scale_h), np.float32(np.float32(min_size) * scale_w)
    rois = np.zeros((n * post_nms_topn, 5), np.float32)
    out_probs = np.zeros(n * post_nms_topn, np.float32)
    for image in range(n):
        boxes = _enumerate(class_probs[image, count:], bbox_deltas[image], anchors, p, img_h, img_w, min_h, min_w)
        top = boxes[top_scores(boxes[:, 4], min(len(boxes), pre_nms_topn))]
        taken = nms_cpu(top, np.float32(nms_thresh), post_nms_topn, offset) if post_nms_topn else []
        picked = top[taken]
        coords = picked[:, :4]
        if clip_after_nms:
            coords = np.stack([_clip(coords[:, 0], img_w), _clip(coords[:, 1], img_h), _clip(coords[:, 2], img_w),
                               _clip(coords[:, 3], img_h)], -1)
        if normalize:
            with np.errstate(over="ignore", invalid="ignore"):
                coords = (coords / np.array([img_w, img_h, img_w, img_h], np.float32)).astype(np.float32)
        first = image * post_nms_topn
        rois[first:first + len(taken), 0] = image
        rois[first:first + len(taken), 1:] = coords
        out_probs[first:first + len(taken)] = picked[:, 4]
        if len(taken) < post_nms_topn:
            rois[first + len(taken), 0] = -1
    dtype = class_probs.dtype
    return (rois.astype(dtype), out_probs.astype(dtype)) if probs else rois.astype(dtype)


# -- GenerateProposals-9 -----------------------------------------------------------------------------------------

GP_NAMES = ("im_info", "anchors", "deltas", "scores")
ROI_NUM_TYPES = {"i64": "i64", "i32": "i32"}
MAX_DELTA_LOG_WH = np.float32(np.log(1000.0 / 16.0))


def _infer_generate(ctx: OpContext):
    for position in range(4):
        et = ctx.inputs[position].element_type
        if et.kind not in ("float", "dynamic") or 0 < et.bits < 16:
            ctx.fail(f"{GP_NAMES[position]} must have a floating-point type, got {et}", position=position)
    info, anchors, deltas, scores = (spec.shape for spec in ctx.inputs)
    for position, shape, rank in ((0, info, 2), (1, anchors, 4), (2, deltas, 4), (3, scores, 4)):
        if shape.rank not in (None, rank):
            ctx.fail(f"{GP_NAMES[position]} must be {rank}-D, got {shape.brief()}", position=position)
    if info.rank is not None and not (info.dims[1].contains(3) or info.dims[1].contains(4)):
        ctx.fail(f"im_info must be [N, 3] or [N, 4], got {info.brief()}", position=0)
    if anchors.rank is not None and not anchors.dims[3].contains(4):
        ctx.fail(f"anchors must be [H, W, A, 4], got {anchors.brief()}", position=1)
    batch = DYNAMIC_DIM
    for position, shape in ((0, info), (2, deltas), (3, scores)):
        if shape.rank is not None:
            merged = merge_dims(batch, shape.dims[0])
            if merged is None:
                ctx.fail(f"im_info, deltas and scores must have the same batch, got {ctx.describe_inputs()}",
                         position=position)
            batch = merged
    if deltas.rank is not None and scores.rank is not None:
        a = scores.dims[1]
        if merge_dims(deltas.dims[1], Dim(a.lo * 4, None if a.hi is None else a.hi * 4)) is None:
            ctx.fail(f"deltas must have 4 channels per anchor of scores, got {deltas.brief()} and {scores.brief()}",
                     position=2)
        for axis, what in ((2, "height"), (3, "width")):
            if merge_dims(deltas.dims[axis], scores.dims[axis]) is None:
                ctx.fail(f"deltas and scores must have the same {what}, got {deltas.brief()} and {scores.brief()}",
                         position=3)
    if anchors.rank is not None and scores.rank is not None:
        for axis, score_axis, what in ((0, 2, "height"), (1, 3, "width"), (2, 1, "number of anchors")):
            if merge_dims(anchors.dims[axis], scores.dims[score_axis]) is None:
                ctx.fail(f"anchors and scores must have the same {what}, got {anchors.brief()} and"
                         f" {scores.brief()}", position=1)
    params = {"min_size": float(np.float32(ctx.attr_float("min_size"))),
              "nms_threshold": float(np.float32(ctx.attr_float("nms_threshold"))),
              "pre_nms_count": ctx.attr_int("pre_nms_count", 0), "post_nms_count": ctx.attr_int("post_nms_count", 0),
              "normalized": ctx.attr_bool("normalized", True),
              "roi_num_type": ctx.attr_choice("roi_num_type", ROI_NUM_TYPES, "i64")}
    for name in ("pre_nms_count", "post_nms_count"):
        if ctx.attr(name) is None:
            raise ModelFormatError(f"the required attribute '{name}' is missing", layer=ctx.ref)
        if not 0 < params[name] <= 2**63 - 1:
            ctx.fail(f"attribute {name}={params[name]} must be larger than 0")
    if ctx.attr_float("nms_eta", 1.0) != 1.0:
        ctx.fail(f"attribute {ctx.attr_shown('nms_eta')} must be 1.0 (OpenVINO implements no other)")
    count = DYNAMIC_DIM if batch.hi is None else Dim(0, batch.hi * params["post_nms_count"])
    exact = count_from_constants(ctx, GENERATE, params, 1)  # (the plan per value: the exact count)
    if exact is not None:
        count = exact
    et = ctx.inputs[0].element_type
    return [TensorSpec(et, PartialShape((count, Dim(4, 4)))), TensorSpec(et, PartialShape((count,))),
            TensorSpec(element_type(params["roi_num_type"]), PartialShape((batch,)))], params


def _refine(anchors: np.ndarray, deltas: np.ndarray, scores: np.ndarray, img_h, img_w, min_h, min_w,
            offset: np.float32) -> tuple[np.ndarray, np.ndarray]:
    """(H * W * A, 5) boxes and scores, and whether each box is big enough, as the plugin's ``refine_anchors``."""
    f = np.float32
    a, h, w = scores.shape
    box = anchors.astype(np.float32).reshape(h, w, a, 4)
    d = deltas.reshape(a, 4, h, w).transpose(2, 3, 0, 1).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        bw, bh = box[..., 2] - box[..., 0] + offset, box[..., 3] - box[..., 1] + offset
        cx, cy = box[..., 0] + f(0.5) * bw, box[..., 1] + f(0.5) * bh
        px, py = d[..., 0] * bw + cx, d[..., 1] * bh + cy
        dw = np.where(MAX_DELTA_LOG_WH < d[..., 2], MAX_DELTA_LOG_WH, d[..., 2])  # std::min(d, max): NaN stays
        dh = np.where(MAX_DELTA_LOG_WH < d[..., 3], MAX_DELTA_LOG_WH, d[..., 3])
        pw = expf(dw) * bw
        ph = expf(dh) * bh
        x0, y0 = _clip(px - f(0.5) * pw, f(img_w - offset)), _clip(py - f(0.5) * ph, f(img_h - offset))
        x1 = _clip(px + f(0.5) * pw - offset, f(img_w - offset))
        y1 = _clip(py + f(0.5) * ph - offset, f(img_h - offset))
        keep = (min_w <= x1 - x0 + offset) & (min_h <= y1 - y0 + offset)
    score = scores.transpose(1, 2, 0).astype(np.float32)
    return np.stack([x0, y0, x1, y1, score], -1).reshape(-1, 5), keep.reshape(-1)


def generate_proposals(im_info: np.ndarray, anchors: np.ndarray, deltas: np.ndarray, scores: np.ndarray, *,
                       min_size: float, nms_threshold: float, pre_nms_count: int, post_nms_count: int,
                       normalized: bool, roi_num_type: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GenerateProposals-9 as the CPU plugin computes it (docs/semantics.md): per image, the anchors decoded
    (log-size deltas capped at ``log(1000 / 16)``) and clipped to ``[0, size - offset]`` (offset 0 when
    ``normalized``, else 1), the ``pre_nms_count`` best by score (libstdc++'s partial_sort), boxes smaller than
    ``min_size * scale`` dead from the start, greedy NMS (IoU above ``nms_threshold`` goes) up to
    ``post_nms_count``; rois [R, 4], their scores [R] and the count per image."""
    n, a, h, w = scores.shape
    if im_info.shape[0] != n or deltas.shape != (n, 4 * a, h, w) or anchors.shape != (h, w, a, 4):
        raise InputError(f"im_info {list(im_info.shape)}, anchors {list(anchors.shape)}, deltas"
                         f" {list(deltas.shape)} and scores {list(scores.shape)} do not fit together (batch,"
                         " anchors, height, width)", port="input 3 (scores)")
    offset = np.float32(0 if normalized else 1)
    info = im_info.astype(np.float32)
    rois, out_scores, counts = [], [], []
    for image in range(n):
        img_h, img_w = info[image, 0], info[image, 1]
        scale_h = info[image, 2]
        scale_w = info[image, 3] if info.shape[1] == 4 else scale_h
        min_h = np.float32(np.float32(min_size) * scale_h)
        min_w = np.float32(np.float32(min_size) * scale_w)
        boxes, keep = _refine(anchors, deltas[image], scores[image], img_h, img_w, min_h, min_w, offset)
        order = top_scores(boxes[:, 4], min(len(boxes), pre_nms_count))
        taken = nms_cpu(boxes[order], np.float32(nms_threshold), post_nms_count, offset, ~keep[order])
        picked = boxes[order[taken]]
        rois.append(picked[:, :4])
        out_scores.append(picked[:, 4])
        counts.append(len(taken))
    dtype = im_info.dtype
    itype = np.int32 if roi_num_type == "i32" else np.int64
    return (np.concatenate(rois).reshape(-1, 4).astype(dtype), np.concatenate(out_scores).astype(dtype),
            np.array(counts, itype))


def _batch_generate(params, inputs, outputs, axes):
    return "the rois of all images are gathered into one list of data-dependent length"


def _batch(params, inputs, outputs, axes):
    if axes[0] == 0 and axes[1] == 0 and axes[2] is None:
        return ("the rois' first column is the image index within the batch (a value): a chunk of images would"
                " number its images from 0")
    if all(a is None for a in axes):
        return [None] * len(outputs)
    return "class_probs and bbox_deltas share the batch axis 0; image_shape is one for all images"


def _v1(ctx):
    return _infer(ctx, 1)


def _v4(ctx):
    return _infer(ctx, 4)


GENERATE = computed_once(generate_proposals)
ATTRS = (Attr("base_size"), Attr("pre_nms_topn"), Attr("post_nms_topn"), Attr("nms_thresh"), Attr("feat_stride"),
         Attr("min_size"), Attr("ratio"), Attr("scale"), Attr("clip_before_nms", "true", ("true", "false")),
         Attr("clip_after_nms", "false", ("true", "false")), Attr("normalize", "false", ("true", "false")),
         Attr("box_size_scale", "1"), Attr("box_coordinate_scale", "1"), Attr("framework", "", ("", "tensorflow")))
OPS = (
    OpDef("Proposal", 1, 1, 3, NAMES, _v1, proposal, attrs=ATTRS, batch=_batch, exact=False),
    OpDef("Proposal", 4, 4, LATEST_OPSET, NAMES, _v4, proposal, attrs=ATTRS, batch=_batch, exact=False),
    OpDef("GenerateProposals", 9, 9, LATEST_OPSET, GP_NAMES, _infer_generate, GENERATE,
          roles=("counted",) * 4, batch=_batch_generate, exact=False,
          attrs=(Attr("min_size"), Attr("nms_threshold"), Attr("pre_nms_count"), Attr("post_nms_count"),
                 Attr("normalized", "true", ("true", "false")), Attr("nms_eta", "1"),
                 Attr("roi_num_type", "i64", tuple(ROI_NUM_TYPES)))),
)
