"""DetectionOutput-1/8 (``docs/semantics.md``, "Detection heads"): the last layer of an SSD head. From box logits
[N, P * L * 4] (``L`` = 1 with ``share_location``, else the class count C), class scores [N, P * C], priors
[1 or N, 1 or 2, P * 4 (or 5: ``normalized`` false)] and, optionally (RefineDet), an objectness [N, P * 2] and
ARM box logits [N, P * L * 4], it gives [1, 1, R, 7] rows ``image, label, score, xmin, ymin, xmax, ymax``.

Computed as OpenVINO's reference (``ov::reference::referenceDetectionOutput``), in f32 (f16/bf16 inputs widened,
the output rounded once, as the CPU plugin does; the reference would compute in the narrow type):

- boxes decoded from the priors (divided by ``input_width``/``input_height`` unless ``normalized``): ``CORNER``
  adds ``variance * logit`` to each corner; ``CENTER_SIZE`` takes the centre ``variance * logit * size + centre``
  and the size ``exp(variance * logit) * size`` (without variances when ``variance_encoded_in_target``); RefineDet
  decodes the priors with the ARM logits first, and a prior whose objectness is below ``objectness_score`` scores
  1 for the background class and 0 for the others; ``clip_before_nms`` clamps to [0, 1];
- Caffe NMS (``decrease_label_id`` false), class by class but the background: candidates scoring above
  ``confidence_threshold`` by score (ties: lower prior first), the ``top_k`` best, each kept unless its IoU with
  a kept box exceeds ``nms_threshold``; MXNet NMS (``decrease_label_id`` true): each prior's best class from 1
  (score at least the threshold) in one list, the same greedy rule within each class, labels written minus 1;
- when more than ``keep_top_k`` boxes remain in an image, the best by score (ties: lower prior first) are kept;
  rows are written image by image, label by label (ascending), boxes in NMS order, ``clip_after_nms`` clamps
  them; the row after the last is marked with image -1, the rest are zeros.

Neither version has a ``Node.evaluate`` in the wheel: compared with the CPU plugin, bit for bit in every case
the tests run (both code types, RefineDet, MXNet). Bound: CENTER_SIZE's ``exp`` is f64 rounded to f32, which may
differ from another ``expf`` by 1 ULP in rare cases, giving box sizes within 1 ULP of that (and, at an IoU equal
to the threshold to the last bit, another selection). The plugin leaves the rows after the -1 marker unset in some
modes (ir-run writes zeros, as the reference), refuses MXNet NMS with a background label other than 0 and, with
per-class locations, ``keep_top_k`` 0. A tie of equal scores for the same prior in two classes at the
``keep_top_k`` cut is resolved by class (the reference's unstable sort leaves it unspecified). With one set of
priors for several images, RefineDet uses it for every image (the reference reads a prior set per image); its
second decoding divides the decoded priors by ``input_width``/``input_height`` again when not ``normalized``, as
the reference does.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.dims import compatible, dim_mul

NAMES = ("box_logits", "class_preds", "proposals", "aux_class_preds", "aux_box_preds")
CODES = {"caffe.priorboxparameter.corner": "corner", "caffe.priorboxparameter.center_size": "center_size"}
F32 = np.float32



def _attrs(ctx: OpContext, version: int) -> dict:
    a = {"keep_top_k": ctx.attr_ints("keep_top_k"), "top_k": ctx.attr_int("top_k", -1),
         "nms_threshold": float(F32(ctx.attr_float("nms_threshold"))),
         "confidence_threshold": float(F32(ctx.attr_float("confidence_threshold", 0.0))),
         "background_label_id": ctx.attr_int("background_label_id", 0),
         "code_type": ctx.attr_choice("code_type", CODES, "corner"),
         "share_location": ctx.attr_bool("share_location", True),
         "variance_encoded_in_target": ctx.attr_bool("variance_encoded_in_target", False),
         "normalized": ctx.attr_bool("normalized", False), "input_height": ctx.attr_int("input_height", 1),
         "input_width": ctx.attr_int("input_width", 1),
         "objectness_score": float(F32(ctx.attr_float("objectness_score", 0.0))),
         "clip_after_nms": ctx.attr_bool("clip_after_nms", False),
         "clip_before_nms": ctx.attr_bool("clip_before_nms", False),
         "decrease_label_id": ctx.attr_bool("decrease_label_id", False)}
    if not a["keep_top_k"]:
        ctx.fail("attribute keep_top_k must have a value")
    a["keep_top_k"] = a["keep_top_k"][0]
    if version == 1:
        a["num_classes"] = ctx.attr_int("num_classes", 0)
        if a["num_classes"] <= 0:
            ctx.fail(f"attribute num_classes={a['num_classes']} must be positive")
    for name in ("top_k", "keep_top_k", "background_label_id"):
        if not -(2**31) <= a[name] < 2**31:
            ctx.fail(f"attribute {name}={a[name]} must be an int32")
    return a


def _deduce(ctx: OpContext, a: dict, shapes) -> tuple[int, int]:
    """DetectionOutput-8's class and prior counts from the input shapes (as OpenVINO's ``compute_num_classes``)."""
    box, cls, prop = shapes[:3]
    size = 4 if a["normalized"] else 5
    priors = classes = 0
    if prop.rank is not None and prop.dims[2].is_static:
        if prop.dims[2].lo % size:
            ctx.fail(f"the third dim of proposals must be a multiple of {size} (prior_box_size), got {prop.brief()}",
                     position=2)
        priors = prop.dims[2].lo // size
        if priors <= 0:
            ctx.fail(f"the number of prior boxes must be positive, got {prop.brief()}", position=2)
    if not priors and len(shapes) == 5 and shapes[3].rank is not None and shapes[3].dims[1].is_static:
        if shapes[3].dims[1].lo % 2:
            ctx.fail(f"the second dim of aux_class_preds must be even, got {shapes[3].brief()}", position=3)
        priors = shapes[3].dims[1].lo // 2
        if priors <= 0:
            ctx.fail(f"the number of prior boxes must be positive, got {shapes[3].brief()}", position=3)
    if priors and cls.rank is not None and cls.dims[1].is_static:
        if cls.dims[1].lo % priors:
            ctx.fail(f"the second dim of class_preds must be a multiple of the {priors} priors, got {cls.brief()}",
                     position=1)
        classes = cls.dims[1].lo // priors
    for position in (0, 4):
        shape = shapes[position] if position < len(shapes) else None
        if (not classes and priors and shape is not None and shape.rank is not None and shape.dims[1].is_static
                and not a["share_location"]):
            if shape.dims[1].lo % (priors * 4):
                ctx.fail(f"the second dim of {NAMES[position]} must be a multiple of {priors * 4} (priors * 4), got"
                         f" {shape.brief()}", position=position)
            classes = shape.dims[1].lo // (priors * 4)
    return classes, priors


def _infer(ctx: OpContext, version: int):
    a = _attrs(ctx, version)
    count = len(ctx.inputs)
    if count not in (3, 5):
        ctx.fail(f"DetectionOutput takes 3 or 5 inputs, got {count}")
    et = ctx.common_element_type(*range(count))
    if et.kind not in ("float", "dynamic"):
        ctx.fail(f"the inputs must have a floating-point element type, got {et}", position=0)
    shapes = [spec.shape for spec in ctx.inputs]
    for position, rank in zip(range(count), (2, 2, 3, 2, 2)):
        if shapes[position].rank is not None and shapes[position].rank != rank:
            ctx.fail(f"{NAMES[position]} must be {rank}-D, got {shapes[position].brief()}", position=position)
    classes, priors = _deduce(ctx, a, shapes) if version == 8 else (a["num_classes"], 0)
    loc_classes = 1 if a["share_location"] else classes
    size = 4 if a["normalized"] else 5
    box, cls, prop = shapes[:3]
    images, updated = DYNAMIC_DIM, False
    if box.rank is not None:
        images, updated = box.dims[0], True
        if not priors and box.dims[1].is_static:
            if loc_classes == 0 or box.dims[1].lo % (loc_classes * 4):
                ctx.fail(f"the second dim of box_logits must be a multiple of {loc_classes * 4}"
                         f" (num_loc_classes * 4), got {box.brief()}", position=0)
            priors = box.dims[1].lo // (loc_classes * 4)
        if priors and loc_classes and not compatible(box.dims[1], priors * loc_classes * 4):
            ctx.fail(f"the second dim of box_logits must be {priors * loc_classes * 4}, got {box.brief()}", position=0)
    if cls.rank is not None:
        if (not updated or not images.is_static) and cls.dims[0].is_static:
            images = cls.dims[0]
        elif not compatible(cls.dims[0], images):
            ctx.fail(f"the first dim of class_preds must be the batch {images}, got {cls.brief()}", position=1)
        if cls.dims[1].is_static and classes:
            if not priors:
                if cls.dims[1].lo % classes:
                    ctx.fail(f"the second dim of class_preds must be a multiple of {classes} classes, got"
                             f" {cls.brief()}", position=1)
                priors = cls.dims[1].lo // classes
            elif cls.dims[1].lo != priors * classes:
                ctx.fail(f"the second dim of class_preds must be {priors * classes} (priors * classes), got"
                         f" {cls.brief()}", position=1)
    if prop.rank is not None:
        if not (compatible(prop.dims[0], 1) or compatible(prop.dims[0], images)):
            ctx.fail(f"the first dim of proposals must be 1 or the batch {images}, got {prop.brief()}", position=2)
        rows = 1 if a["variance_encoded_in_target"] else 2
        if not compatible(prop.dims[1], rows):
            ctx.fail(f"the second dim of proposals must be {rows}, got {prop.brief()}", position=2)
        if prop.dims[2].is_static:
            if not priors:
                if prop.dims[2].lo % size:
                    ctx.fail(f"the third dim of proposals must be a multiple of {size}, got {prop.brief()}",
                             position=2)
                priors = prop.dims[2].lo // size
            elif prop.dims[2].lo != priors * size:
                ctx.fail(f"the third dim of proposals must be {priors * size} (priors * {size}), got {prop.brief()}",
                         position=2)
    if count == 5:
        aux_cls, aux_box = shapes[3], shapes[4]
        if aux_cls.rank is not None:
            if not compatible(aux_cls.dims[0], images):
                ctx.fail(f"the first dim of aux_class_preds must be the batch {images}, got {aux_cls.brief()}",
                         position=3)
            if priors and not compatible(aux_cls.dims[1], priors * 2):
                ctx.fail(f"the second dim of aux_class_preds must be {priors * 2}, got {aux_cls.brief()}", position=3)
            if aux_cls.dims[1].is_static:
                priors = aux_cls.dims[1].lo // 2
        if aux_box.rank is not None and box.rank is not None and (
                any(merge_dims(x, y) is None for x, y in zip(aux_box.dims, box.dims))):
            ctx.fail(f"aux_box_preds must have the shape of box_logits {box.brief()}, got {aux_box.brief()}",
                     position=4)
    prior_dim = Dim(priors, priors) if priors else DYNAMIC_DIM
    class_dim = Dim(classes, classes) if classes else DYNAMIC_DIM
    if a["keep_top_k"] > 0:
        rows = dim_mul(images, Dim(a["keep_top_k"], a["keep_top_k"]))
    elif a["keep_top_k"] == -1 and a["top_k"] > 0:
        rows = dim_mul(dim_mul(images, Dim(a["top_k"], a["top_k"])), class_dim)
    else:
        rows = dim_mul(dim_mul(images, prior_dim), class_dim)
    params = {k: v for k, v in a.items() if k != "num_classes"}
    params["num_classes"] = a.get("num_classes")
    return [TensorSpec(et, PartialShape((Dim(1, 1), Dim(1, 1), rows, Dim(7, 7))))], params


def _decode(prior: np.ndarray, variance: np.ndarray | None, logit: np.ndarray, a: dict) -> np.ndarray:
    """Boxes (..., 4) from priors (P, 4), variances (P, 4) or None and logits (..., P, 4), in f32."""
    p = prior.astype(F32)
    if not a["normalized"]:
        p = p / np.array([a["input_width"], a["input_height"]] * 2, F32)
    v = variance.astype(F32) if variance is not None else None
    t = logit.astype(F32)
    scaled = t * v if v is not None else t
    if a["code_type"] == "corner":
        out = p + scaled
    else:
        width, height = p[..., 2] - p[..., 0], p[..., 3] - p[..., 1]
        cx, cy = (p[..., 0] + p[..., 2]) / F32(2), (p[..., 1] + p[..., 3]) / F32(2)
        dcx, dcy = scaled[..., 0] * width + cx, scaled[..., 1] * height + cy
        with np.errstate(over="ignore"):
            dw = np.exp(scaled[..., 2].astype(np.float64)).astype(F32) * width
            dh = np.exp(scaled[..., 3].astype(np.float64)).astype(F32) * height
        half_w, half_h = dw / F32(2), dh / F32(2)
        out = np.stack([dcx - half_w, dcy - half_h, dcx + half_w, dcy + half_h], axis=-1).astype(F32)
    if a["clip_before_nms"]:
        out = _clamp(out)
    return out.astype(F32)


def _clamp(x: np.ndarray) -> np.ndarray:
    """``max(0, min(1, x))`` as the reference writes it (NaN gives 1)."""
    low = np.where(x < 1, x, F32(1))
    return np.where(low > 0, low, F32(0)).astype(F32)


def _iou(box: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The reference's JaccardOverlap of one box against each kept box, in f32."""
    disjoint = (kept[:, 0] > box[2]) | (kept[:, 2] < box[0]) | (kept[:, 1] > box[3]) | (kept[:, 3] < box[1])
    iw = np.minimum(box[2], kept[:, 2]) - np.maximum(box[0], kept[:, 0])
    ih = np.minimum(box[3], kept[:, 3]) - np.maximum(box[1], kept[:, 1])
    inter = iw * ih

    def area(b):
        empty = (b[..., 2] < b[..., 0]) | (b[..., 3] < b[..., 1])
        return np.where(empty, F32(0), (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])).astype(F32)

    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = inter / ((area(box) + area(kept)) - inter)
    return np.where(~disjoint & (iw > 0) & (ih > 0), ratio, F32(0)).astype(F32)


def _greedy(order: list[int], boxes: np.ndarray, threshold: float) -> list[int]:
    kept: list[int] = []
    for idx in order:
        if not kept or not (_iou(boxes[idx], boxes[kept]) > F32(threshold)).any():
            kept.append(idx)
    return kept


def _ranked(scores: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Indices by score descending, ties by the lower index (a stable sort of the reference's comparator)."""
    return indices[np.lexsort((indices, -scores[indices].astype(np.float64)))]


def detection_output(box_logits: np.ndarray, class_preds: np.ndarray, proposals: np.ndarray,
                     aux_class_preds: np.ndarray | None = None, aux_box_preds: np.ndarray | None = None, *,
                     num_classes: int | None, **a) -> np.ndarray:
    """DetectionOutput-1/8 (see the module docstring); the output keeps the inputs' dtype."""
    n = box_logits.shape[0]
    size = 4 if a["normalized"] else 5
    priors = proposals.shape[2] // size
    classes = num_classes if num_classes is not None else (class_preds.shape[1] // priors if priors else 0)
    loc_classes = 1 if a["share_location"] else classes
    keep = a["keep_top_k"]
    if keep > 0:
        rows = n * keep
    elif keep == -1 and a["top_k"] > 0:
        rows = n * a["top_k"] * classes
    else:
        rows = n * priors * classes
    if box_logits.shape[1] != priors * loc_classes * 4 or class_preds.shape[1] != priors * classes or (
            proposals.shape[0] not in (1, n)):
        raise InputError(f"the inputs do not fit {priors} priors of {classes} classes: box_logits"
                         f" {list(box_logits.shape)}, class_preds {list(class_preds.shape)}, proposals"
                         f" {list(proposals.shape)}", port="input 0 (box_logits)")
    out = np.zeros((1, 1, rows, 7), box_logits.dtype)
    refine = aux_class_preds is not None and aux_box_preds is not None
    locs = box_logits.astype(F32).reshape(n, priors, loc_classes, 4)
    arm = aux_box_preds.astype(F32).reshape(n, priors, loc_classes, 4) if refine else None
    conf = class_preds.astype(F32).reshape(n, priors, classes)
    if refine:
        low = aux_class_preds.astype(F32).reshape(n, priors, 2)[:, :, 1] < F32(a["objectness_score"])
        fill = (np.arange(classes) == a["background_label_id"]).astype(F32)
        conf = np.where(low[:, :, None], fill, conf)
    stride_rows = 1 if a["variance_encoded_in_target"] else 2
    table = proposals.astype(F32).reshape(proposals.shape[0], -1)
    written = []
    for i in range(n):
        pset = table[i if table.shape[0] > 1 else 0]
        prior = pset[:priors * size].reshape(priors, size)[:, size - 4:]
        variance = None if stride_rows == 1 else pset[priors * size:priors * size + priors * 4].reshape(priors, 4)
        decoded = {}
        for c in range(loc_classes):
            label = -1 if a["share_location"] else c
            if a["background_label_id"] > -1 and label == a["background_label_id"]:
                continue
            if refine:
                first = _decode(prior, variance, arm[i, :, c], a)
                decoded[label] = _decode(first, variance, locs[i, :, c], a)  # (divided again: as the reference)
            else:
                decoded[label] = _decode(prior, variance, locs[i, :, c], a)
        scores = conf[i].T  # (classes, priors)
        selected = _select(decoded, scores, a, classes, priors)
        total = sum(len(v) for v in selected.values())
        if keep > -1 and total > keep:
            pairs = [(scores[label, idx], idx, label) for label in sorted(selected) for idx in selected[label]]
            pairs.sort(key=lambda t: (-float(t[0]), t[1]))
            chosen: dict[int, list[int]] = {}
            for _, idx, label in pairs[:keep]:
                chosen.setdefault(label, []).append(idx)
            selected = chosen
        for label in sorted(selected):
            boxes = decoded.get(-1 if a["share_location"] else label)
            if boxes is None:
                continue
            for idx in selected[label]:
                written.append((i, label - 1 if a["decrease_label_id"] else label, scores[label, idx], *boxes[idx]))
    if written:
        block = np.array(written, np.float64).astype(F32)  # (scores and boxes are f32: exact both ways)
        if a["clip_after_nms"]:
            block[:, 3:] = _clamp(block[:, 3:])
        out[0, 0, :len(written)] = block.astype(out.dtype)
    if len(written) < rows:
        out[0, 0, len(written), 0] = -1
    return out


def _select(decoded: dict, scores: np.ndarray, a: dict, classes: int, priors: int) -> dict[int, list[int]]:
    """The kept prior indices per class (Caffe's per-class NMS, or MXNet's one list of best classes)."""
    threshold = F32(a["confidence_threshold"])
    top_k = a["top_k"]
    selected: dict[int, list[int]] = {}
    if not a["decrease_label_id"]:
        for c in range(classes):
            if c == a["background_label_id"]:
                continue
            boxes = decoded.get(-1 if a["share_location"] else c)
            if boxes is None:
                continue
            order = _ranked(scores[c], np.flatnonzero(scores[c] > threshold))
            if top_k > -1:
                order = order[:top_k]
            selected[c] = _greedy(order.tolist(), boxes, a["nms_threshold"])
        return selected
    candidates = [c for c in range(1, classes) if not (a["background_label_id"] > -1 and c == a["background_label_id"])]
    if not candidates:
        return selected
    block = scores[candidates]  # (candidates, priors)
    best = np.full(priors, F32(-1))
    ids = np.zeros(priors, np.int64)
    for row, c in zip(block, candidates):
        better = row > best
        best = np.where(better, row, best)
        ids = np.where(better, c, ids)
    chosen = np.flatnonzero((ids > 0) & (best >= threshold))
    order = _ranked(best, chosen)
    if top_k != -1:
        order = order[:top_k]
    for idx in order.tolist():
        c = int(ids[idx])
        kept = selected.setdefault(c, [])
        boxes = decoded[-1 if a["share_location"] else c]
        if not kept or not (_iou(boxes[idx], boxes[kept]) > F32(a["nms_threshold"])).any():
            kept.append(idx)
    return selected


def _batch(params, inputs, outputs, axes):
    if all(axis is None for axis in axes):
        return [None]
    return ("the detections of all images are written into one [1, 1, R, 7] list (the image index is a value,"
            " and a marker row ends it)")


def _v1(ctx):
    return _infer(ctx, 1)


def _v8(ctx):
    return _infer(ctx, 8)


ATTRS = (Attr("keep_top_k"), Attr("top_k", "-1"), Attr("nms_threshold"), Attr("confidence_threshold", "0"),
         Attr("background_label_id", "0"), Attr("code_type", "caffe.PriorBoxParameter.CORNER", tuple(CODES)),
         Attr("share_location", "true"), Attr("variance_encoded_in_target", "false"), Attr("normalized", "false"),
         Attr("input_height", "1"), Attr("input_width", "1"), Attr("objectness_score", "0"),
         Attr("clip_after_nms", "false"), Attr("clip_before_nms", "false"), Attr("decrease_label_id", "false"))
OPS = (
    OpDef("DetectionOutput", 1, 1, 7, NAMES, _v1, detection_output, attrs=(Attr("num_classes"),) + ATTRS,
          min_inputs=3, batch=_batch, exact=False),
    OpDef("DetectionOutput", 8, 8, LATEST_OPSET, NAMES, _v8, detection_output, attrs=ATTRS, min_inputs=3,
          batch=_batch, exact=False),
)
