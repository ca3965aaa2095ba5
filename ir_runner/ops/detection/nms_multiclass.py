"""PaddlePaddle-style NMS: MulticlassNms-8/9 and MatrixNms-8 (``docs/semantics.md``, "Detection").

Both take ``boxes`` [N, M, 4] (``x1, y1, x2, y2``) and ``scores`` [N, C, M] (MulticlassNms-9 also ``boxes``
[C, M, 4], ``scores`` [C, M] and ``roisnum`` [N]: image ``b`` owns the rows ``sum(roisnum[:b])`` onwards, one box
per class), select per image and class, and give ``selected_outputs`` [n, 6] (class, score, x1, y1, x2, y2; the
boxes' type), ``selected_indices`` [n, 1] and ``valid_outputs`` [N] (``output_type``). OpenVINO's reference has
no ``Node.evaluate`` for them: the kernels follow its reference loops where it agrees with the CPU plugin, and
the CPU plugin where they differ (named below), in f32:

- MulticlassNms: candidates are the boxes with ``score >= score_threshold``, by score (ties: the lower index);
  only the first ``nms_top_k`` are looked at. A candidate is dropped when its IoU with a box taken before is
  ``>= iou_threshold`` (IoU ``inter / (area_i + area_j - inter)``, each side ``+1`` unless ``normalized``, 0
  when an area is not positive); with ``nms_eta < 1`` the threshold is multiplied by ``nms_eta`` after each
  box taken while it is above 0.5. (A NaN IoU: the CPU plugin keeps the box when ``nms_eta`` is 1; the
  reference zeroes its score and drops it.)
- MatrixNms: candidates ``score > score_threshold``, the first ``nms_top_k`` by score (ties: the lower
  index; the reference's ``partial_sort`` leaves tied scores' order unspecified); each candidate's score is
  multiplied by the smallest decay over the candidates before it, ``(1 - iou) / (1 - max_iou_j + 1e-10)``
  (``linear``, in f64 rounded to f32) or ``exp((max_iou_j^2 - iou^2) * gaussian_sigma)`` (``gaussian``; the
  exponential in f64 rounded to f32), and kept when above ``post_threshold`` (the first candidate: its
  score). Bound: the decayed scores within 2e-6 relative of the CPU plugin's (measured: 2 ULP), whose f32
  IoU may be contracted into multiply-adds (ISA-dependent), which ``1 - iou`` amplifies for nearly
  coincident boxes. (The reference stops at the first image without a detection, leaving later
  images out; the CPU plugin and ir-run go on.)
- Per image the boxes of all classes (except ``background_class``) are ordered by score, then class, then
  box, and cut to ``keep_top_k``; ``sort_result_across_batch`` reorders all images' boxes by score
  (``score``) or class (``classid``); without it, ``classid`` orders each image's boxes by class
  (MulticlassNms only; MatrixNms keeps them by score). Scores closer than 1e-6 count as tied in the
  per-image order of both OpenVINO implementations (not an order); ir-run compares them exactly.
- ``selected_indices``: ``b * M + box`` ([N, M, 4] boxes); ``(first_row(b) + box) * C + class`` (roisnum).

Output lengths depend on the values: at load they are bounded as OpenVINO infers them; every input has a
deciding role, so the plan is made per value and the outputs are concrete at run.
"""

from __future__ import annotations

import heapq

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, element_type
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef
from ..toolkit.dims import dim_mul
from ..toolkit.handover import computed_once, count_from_constants
from ._common import disjoint

FLOATS = ("f32", "f16", "bf16")
INDEX_TYPES = {"i64": "i64", "i32": "i32"}
SORTS = {"none": "none", "score": "score", "classid": "classid"}
DECAYS = {"linear": "linear", "gaussian": "gaussian"}
BLOCK = 1 << 20  # IoUs computed at once (candidate rows x candidates)


def _max_len(d: Dim) -> int:
    """OpenVINO's ``get_max_length``: -1 when unbounded."""
    return -1 if d.hi is None else d.hi


def _of_len(n: int) -> Dim:
    """``Dimension(n)`` of a max length: -1 is dynamic."""
    return DYNAMIC_DIM if n < 0 else Dim(n, n)


def _attrs(ctx: OpContext, matrix: bool) -> dict:
    params = {"sort": ctx.attr_choice("sort_result_type", SORTS, "none"),
              "index_type": ctx.attr_choice("output_type", INDEX_TYPES, "i64"),
              "nms_top_k": ctx.attr_int("nms_top_k", -1), "keep_top_k": ctx.attr_int("keep_top_k", -1),
              "across": ctx.attr_bool("sort_result_across_batch", False),
              "score_threshold": float(np.float32(ctx.attr_float("score_threshold", 0.0))),
              "background": ctx.attr_int("background_class", -1), "normalized": ctx.attr_bool("normalized", True)}
    for name, key in (("nms_top_k", "nms_top_k"), ("keep_top_k", "keep_top_k"), ("background_class", "background")):
        if not -1 <= params[key] <= 2**31 - 1:
            ctx.fail(f"attribute {name}={params[key]} must be an int32 of at least -1")
    if matrix:
        params.update(decay=ctx.attr_choice("decay_function", DECAYS, "linear"),
                      sigma=float(np.float32(ctx.attr_float("gaussian_sigma", 2.0))),
                      post_threshold=float(np.float32(ctx.attr_float("post_threshold", 0.0))))
    else:
        params.update(iou_threshold=float(np.float32(ctx.attr_float("iou_threshold", 0.0))),
                      eta=float(np.float32(ctx.attr_float("nms_eta", 1.0))))
        if not 0.0 <= params["eta"] <= 1.0:
            ctx.fail(f"attribute nms_eta={params['eta']} must be in [0, 1]")
    return params


def _types(ctx: OpContext, version: int) -> None:
    names = ("boxes", "scores", "roisnum")
    for position in (0, 1):
        et = ctx.inputs[position].element_type
        if et.kind != "dynamic" and et.name not in FLOATS:
            ctx.fail(f"{names[position]} must be f32, f16 or bf16, got {et}", position=position)
    a, b = ctx.inputs[0].element_type, ctx.inputs[1].element_type
    if a.kind != "dynamic" and b.kind != "dynamic" and a != b:
        ctx.fail(f"boxes and scores must have the same element type, got {a} and {b}", position=1)
    if len(ctx.inputs) == 3:
        et = ctx.inputs[2].element_type
        if et.kind != "dynamic" and et.name not in ("i32", "i64"):
            ctx.fail(f"roisnum must be i32 or i64, got {et}", position=2)


def _ranks(ctx: OpContext) -> bool:
    """Checks the ranks of boxes, scores (and roisnum); True when scores is [C, M] with roisnum."""
    boxes, scores = ctx.inputs[0].shape, ctx.inputs[1].shape
    with_rois = len(ctx.inputs) == 3
    if boxes.rank not in (None, 3):
        ctx.fail(f"boxes must have rank 3, got {boxes.brief()}", position=0)
    want = 2 if with_rois else 3
    if scores.rank not in (None, want):
        ctx.fail(f"scores must have rank {want}{' (with roisnum)' if with_rois else ''}, got {scores.brief()}",
                 position=1)
    if with_rois and ctx.inputs[2].shape.rank not in (None, 1):
        ctx.fail(f"roisnum must have rank 1, got {ctx.inputs[2].shape.brief()}", position=2)
    if boxes.rank is None:
        return with_rois
    if scores.rank is not None:
        if disjoint(boxes.dims[0], scores.dims[0]):
            ctx.fail(f"the first dims of boxes and scores must match, got {boxes.brief()} and {scores.brief()}",
                     position=1)
        if disjoint(boxes.dims[1], scores.dims[1 if with_rois else 2]):
            ctx.fail(f"boxes and scores must have the same number of boxes, got {boxes.brief()} and"
                     f" {scores.brief()}", position=1)
    if not boxes.dims[2].contains(4):
        ctx.fail(f"the last dim of boxes must be 4, got {boxes.brief()}", position=0)
    return with_rois


def _outputs(ctx: OpContext, params: dict, count: Dim, images: Dim, kernel) -> tuple[list, dict]:
    exact = count_from_constants(ctx, kernel, params, 1)  # (the plan per value: the exact count)
    if exact is not None:
        count = exact
    it = element_type(params["index_type"])
    return [TensorSpec(ctx.inputs[0].element_type, PartialShape((count, Dim(6, 6)))),
            TensorSpec(it, PartialShape((count, Dim(1, 1)))), TensorSpec(it, PartialShape((images,)))], params


def _infer_multiclass(ctx: OpContext, version: int):
    if version == 8 and len(ctx.inputs) != 2:
        ctx.fail(f"MulticlassNms-8 takes 2 inputs (boxes, scores), got {len(ctx.inputs)}")
    params = _attrs(ctx, matrix=False)
    _types(ctx, version)
    with_rois = _ranks(ctx)
    boxes, scores = ctx.inputs[0].shape, ctx.inputs[1].shape
    rois = ctx.inputs[2].shape if with_rois else None
    count, images = DYNAMIC_DIM, DYNAMIC_DIM
    if boxes.rank is not None and scores.rank is not None and (rois is None or rois.rank is not None):
        classes = boxes.dims[0] if with_rois else scores.dims[1]
        images = rois.dims[0] if with_rois else scores.dims[0]
        top_k, keep = params["nms_top_k"], params["keep_top_k"]
        selected = _of_len(min(_max_len(boxes.dims[1]), top_k)) if top_k > -1 else boxes.dims[1]
        selected = dim_mul(selected, classes)
        if -1 < keep < _max_len(selected):
            selected = Dim(keep, keep)
        selected = dim_mul(selected, images)
        count = Dim(0, selected.hi)
        images = rois.dims[0] if with_rois else boxes.dims[0]
    return _outputs(ctx, params, count, images, MULTICLASS)


def _infer_matrix(ctx: OpContext):
    params = _attrs(ctx, matrix=True)
    _types(ctx, 8)
    _ranks(ctx)
    boxes, scores = ctx.inputs[0].shape, ctx.inputs[1].shape
    count, images = DYNAMIC_DIM, DYNAMIC_DIM
    if boxes.rank is not None:
        top_k, keep = params["nms_top_k"], params["keep_top_k"]
        selected = _of_len(min(_max_len(boxes.dims[1]), top_k)) if top_k > -1 else boxes.dims[1]
        if scores.rank is not None:
            selected = dim_mul(selected, scores.dims[1])
            if keep > -1:
                selected = _of_len(min(_max_len(selected), keep))
            count = Dim(0, dim_mul(selected, scores.dims[0]).hi)
        images = boxes.dims[0]
    return _outputs(ctx, params, count, images, MATRIX)


# -- kernels ------------------------------------------------------------------------------------------------

def _iou_many(box: np.ndarray, others: np.ndarray, norm: np.float32) -> np.ndarray:
    """MulticlassNms' IoU of each of the boxes ``box`` (B, 4) with each of ``others`` (K, 4) -> (B, K), in f32
    (``std::min``/``std::max`` as the plugin writes them)."""
    a, b = box[:, None, :], others[None, :, :]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        area = (a[..., 2] - a[..., 0] + norm) * (a[..., 3] - a[..., 1] + norm)
        areas = (b[..., 2] - b[..., 0] + norm) * (b[..., 3] - b[..., 1] + norm)
        h = np.where(b[..., 2] < a[..., 2], b[..., 2], a[..., 2]) - np.where(a[..., 0] < b[..., 0], b[..., 0],
                                                                           a[..., 0]) + norm
        w = np.where(b[..., 3] < a[..., 3], b[..., 3], a[..., 3]) - np.where(a[..., 1] < b[..., 1], b[..., 1],
                                                                           a[..., 1]) + norm
        inter = np.where(h < 0, np.float32(0), h) * np.where(w < 0, np.float32(0), w)
        iou = inter / (area + areas - inter)
    return np.where((area <= 0) | (areas <= 0), np.float32(0), iou).astype(np.float32)


def _by_score(scores: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Candidates by descending score, ties by ascending index."""
    return candidates[np.lexsort((candidates, -scores[candidates].astype(np.float64)))]


def _multiclass_one(boxes: np.ndarray, scores: np.ndarray, p: dict) -> list[int]:
    """The boxes one class of one image keeps, in the order taken."""
    limit = boxes.shape[0] if p["nms_top_k"] == -1 else min(p["nms_top_k"], boxes.shape[0])
    threshold = np.float32(p["score_threshold"])
    with np.errstate(invalid="ignore"):
        order = _by_score(scores, np.flatnonzero(scores >= threshold))
    limit = min(limit, len(order))
    if limit == 0:
        return []
    norm = np.float32(0 if p["normalized"] else 1)
    iou_threshold = np.float32(p["iou_threshold"])
    if not 0 <= p["eta"] < 1:  # the plugin's loop without eta: the first `limit` candidates, hard NMS
        picked = boxes[order[:limit]]
        alive = np.ones(limit, bool)
        rows = max(1, BLOCK // limit)
        for first in range(0, limit, rows):  # the IoUs of a block of rows at once; a taken row kills later ones
            live = first + np.flatnonzero(alive[first:first + rows])
            with np.errstate(invalid="ignore"):
                kills = _iou_many(picked[live], picked[first:], norm) >= iou_threshold
            for row, pos in enumerate(live.tolist()):
                if alive[pos]:
                    alive[pos + 1:] &= ~kills[row, pos + 1 - first:]
        return order[:limit][alive].tolist()
    return _with_eta(boxes, scores, order, limit, iou_threshold, threshold, np.float32(p["eta"]), norm)


def _with_eta(boxes, scores, order, limit, iou_threshold, threshold, eta, norm) -> list[int]:
    """The plugin's loop with ``nms_eta``: a queue by (score, lower index) of every candidate, ``limit`` pops."""
    queue = [(-float(scores[i]), int(i), scores[i], 0) for i in order]
    heapq.heapify(queue)
    taken: list[int] = []
    adaptive = iou_threshold
    with np.errstate(invalid="ignore", over="ignore"):
        while limit and queue:
            _, index, score, begin = heapq.heappop(queue)
            limit -= 1
            original = score
            ious = _iou_many(boxes[index][None], boxes[taken[begin:]], norm)[0] if len(taken) > begin else ()
            selected = True
            for iou in ious[::-1]:
                score = np.float32(score * (np.float32(1) if iou <= adaptive else np.float32(0)))
                if iou >= adaptive:
                    selected = False
                    break
                if score <= threshold:
                    break
            if not selected:
                continue
            if eta < 1 and adaptive > 0.5:
                adaptive = np.float32(adaptive * eta)
            if score == original:
                taken.append(index)
            elif score > threshold:
                heapq.heappush(queue, (-float(score), index, score, len(taken)))
    return taken


def _rows(roisnum: np.ndarray | None, images: int, boxes_rows: int) -> list[int]:
    """The first row of each image (roisnum), refusing counts the boxes do not hold."""
    if roisnum is None:
        return []
    counts = roisnum.astype(np.int64)
    if (counts < 0).any():
        bad = int(np.flatnonzero(counts < 0)[0])
        raise InputError(f"roisnum[{bad}] = {counts[bad]} is negative: OpenVINO's CPU plugin would read before"
                         " the boxes", port="input 2 (roisnum)")
    if counts.sum() > boxes_rows:
        raise InputError(f"roisnum sums to {int(counts.sum())}, more than the {boxes_rows} rows of boxes:"
                         " OpenVINO would read past them", port="input 2 (roisnum)")
    return [0] + np.cumsum(counts).tolist()[:-1]


def _finish(found: list, images: int, p: dict, class_sort_in_image: bool, index_type: str, dtype) -> tuple:
    """Orders the found boxes (batch, class, index, score, box, output index) and makes the three outputs."""
    per_image: list[list] = [[] for _ in range(images)]
    for f in found:
        per_image[f[0]].append(f)
    ordered = []
    for rows in per_image:
        rows.sort(key=lambda f: (-float(f[3]), f[1], f[2]))
        if p["keep_top_k"] > -1:
            del rows[p["keep_top_k"]:]
        if class_sort_in_image and not p["across"] and p["sort"] == "classid":
            rows.sort(key=lambda f: (f[1], -float(f[3]), f[2]))
        ordered.extend(rows)
    if p["across"] and p["sort"] == "score":
        ordered.sort(key=lambda f: (-float(f[3]), f[0], f[1], f[2]))
    elif p["across"] and p["sort"] == "classid":
        ordered.sort(key=lambda f: (f[1], f[0], -float(f[3]), f[2]))
    itype = np.int32 if index_type == "i32" else np.int64
    out = np.zeros((len(ordered), 6), np.float32)
    for row, f in enumerate(ordered):
        out[row, 0], out[row, 1], out[row, 2:] = f[1], f[3], f[4]
    indices = np.array([f[5] for f in ordered], dtype=itype).reshape(-1, 1)
    counts = np.array([len(r) for r in per_image], dtype=itype)
    return out.astype(dtype), indices, counts


def multiclass_nms(boxes: np.ndarray, scores: np.ndarray, *roisnum: np.ndarray, sort: str, index_type: str,
                   nms_top_k: int, keep_top_k: int, across: bool, score_threshold: float, background: int,
                   normalized: bool, iou_threshold: float, eta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MulticlassNms-8/9 as the module docstring says (selected outputs, indices, per-image counts)."""
    p = {"nms_top_k": nms_top_k, "keep_top_k": keep_top_k, "across": across, "sort": sort,
         "score_threshold": score_threshold, "normalized": normalized, "iou_threshold": iou_threshold, "eta": eta}
    b32, s32 = boxes.astype(np.float32), scores.astype(np.float32)
    shared = scores.ndim == 3
    found = []
    if shared:
        if boxes.shape[0] != scores.shape[0] or boxes.shape[1] != scores.shape[2]:
            raise InputError(f"boxes {list(boxes.shape)} and scores {list(scores.shape)} do not match (images,"
                             " boxes)", port="input 1 (scores)")
        images, classes, m = scores.shape
        for b in range(images):
            for c in range(classes):
                if c != background:
                    found += [(b, c, i, s32[b, c, i], b32[b, i], b * m + i)
                              for i in _multiclass_one(b32[b], s32[b, c], p)]
    else:
        if boxes.shape[:2] != scores.shape:
            raise InputError(f"boxes {list(boxes.shape)} and scores {list(scores.shape)} do not match (classes,"
                             " boxes)", port="input 1 (scores)")
        classes = scores.shape[0]
        images = roisnum[0].shape[0]
        firsts = _rows(roisnum[0], images, scores.shape[1])
        counts = roisnum[0].astype(np.int64)
        for b in range(images):
            lo, hi = firsts[b], firsts[b] + int(counts[b])
            for c in range(classes):
                if c != background and hi > lo:
                    found += [(b, c, i, s32[c, lo + i], b32[c, lo + i], (lo + i) * classes + c)
                              for i in _multiclass_one(b32[c, lo:hi], s32[c, lo:hi], p)]
    return _finish(found, images, p, True, index_type, boxes.dtype)


def _matrix_iou(a: np.ndarray, b: np.ndarray, norm: np.float32) -> np.ndarray:
    """MatrixNms' IoU of each box of ``a`` (A, 4) with each of ``b`` (B, 4) -> (A, B), in f32: 0 when apart,
    an inverted box's area 0."""
    def area(boxes):
        inverted = (boxes[..., 2] < boxes[..., 0]) | (boxes[..., 3] < boxes[..., 1])
        return np.where(inverted, np.float32(0),
                        (boxes[..., 2] - boxes[..., 0] + norm) * (boxes[..., 3] - boxes[..., 1] + norm))

    a, b = a[:, None, :], b[None, :, :]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        apart = (b[..., 0] > a[..., 2]) | (b[..., 2] < a[..., 0]) | (b[..., 1] > a[..., 3]) | (b[..., 3] < a[..., 1])
        w = np.where(a[..., 2] > b[..., 2], b[..., 2], a[..., 2]) - np.where(a[..., 0] < b[..., 0], b[..., 0],
                                                                           a[..., 0]) + norm
        h = np.where(a[..., 3] > b[..., 3], b[..., 3], a[..., 3]) - np.where(a[..., 1] < b[..., 1], b[..., 1],
                                                                           a[..., 1]) + norm
        inter = w * h
        iou = inter / (area(a) + area(b) - inter)
    return np.where(apart, np.float32(0), iou).astype(np.float32)


def _matrix_one(boxes: np.ndarray, scores: np.ndarray, p: dict) -> list[tuple[int, np.float32]]:
    with np.errstate(invalid="ignore"):
        order = _by_score(scores, np.flatnonzero(~(scores <= np.float32(p["score_threshold"]))))
    if p["nms_top_k"] > -1:
        order = order[:p["nms_top_k"]]
    count = len(order)
    if not count:
        return []
    norm = np.float32(0 if p["normalized"] else 1)
    picked = boxes[order]
    rows = max(1, BLOCK // count)
    blocks = [(first, min(first + rows, count)) for first in range(0, count, rows)]

    def lower(first: int, end: int) -> np.ndarray:  # iou[i, j] of the rows first..end for j < i, 0 elsewhere
        return np.tril(_matrix_iou(picked[first:end], picked[:end], norm), first - 1)

    iou_max = np.concatenate([np.fmax.reduce(lower(first, end), axis=1, initial=np.float32(0))
                              for first, end in blocks])  # (zeros above the diagonal change nothing)
    smallest = np.ones(count, np.float32)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for first, end in blocks:  # (the IoUs again, block by block: memory stays within BLOCK)
            block, top = lower(first, end), iou_max[None, :end]
            if p["decay"] == "linear":
                decay = ((1.0 - block.astype(np.float64)) / (1.0 - top.astype(np.float64)
                                                            + float(np.float32(1e-10)))).astype(np.float32)
            else:
                exponent = (top * top - block * block) * np.float32(p["sigma"])
                decay = np.exp(exponent.astype(np.float64)).astype(np.float32)
            below = np.arange(end)[None, :] < np.arange(first, end)[:, None]
            smallest[first:end] = np.fmin.reduce(np.where(below, decay, np.float32(1)), axis=1,
                                                 initial=np.float32(1))
        decayed = (smallest * scores[order]).astype(np.float32)
    post = np.float32(p["post_threshold"])
    keep = ~(decayed <= post)  # (a NaN decayed score is kept, as in both implementations)
    keep[0] = scores[order[0]] > post  # the first candidate: its own score, kept when above (not NaN)
    decayed[0] = scores[order[0]]
    return [(int(order[i]), decayed[i]) for i in np.flatnonzero(keep)]


def matrix_nms(boxes: np.ndarray, scores: np.ndarray, *, sort: str, index_type: str, nms_top_k: int,
               keep_top_k: int, across: bool, score_threshold: float, background: int, normalized: bool,
               decay: str, sigma: float, post_threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MatrixNms-8 as the module docstring says (selected outputs, indices, per-image counts)."""
    p = {"nms_top_k": nms_top_k, "keep_top_k": keep_top_k, "across": across, "sort": sort, "decay": decay,
         "score_threshold": score_threshold, "normalized": normalized, "sigma": sigma,
         "post_threshold": post_threshold}
    if boxes.shape[0] != scores.shape[0] or boxes.shape[1] != scores.shape[2]:
        raise InputError(f"boxes {list(boxes.shape)} and scores {list(scores.shape)} do not match (images, boxes)",
                         port="input 1 (scores)")
    b32, s32 = boxes.astype(np.float32), scores.astype(np.float32)
    images, classes, m = scores.shape
    found = []
    for b in range(images):
        for c in range(classes):
            if c != background:
                found += [(b, c, i, s, b32[b, i], b * m + i) for i, s in _matrix_one(b32[b], s32[b, c], p)]
    return _finish(found, images, p, False, index_type, boxes.dtype)


def _fit(params, inputs: list[TensorSpec], position: int) -> InputFit | None:
    """MulticlassNms-9's roisnum: counts of at most M / N rows each, so that they add up to at most M."""
    boxes, rois = inputs[0].shape.dims, inputs[2].shape.dims if len(inputs) > 2 else None
    if position != 2 or boxes is None or rois is None or not (boxes[1].is_static and rois[0].is_static):
        return None
    most = boxes[1].lo // max(rois[0].lo, 1)
    return InputFit("index", 0, most, f"rows per image: the {rois[0].lo} images share the {boxes[1].lo} rows of"
                    " boxes")


def _batch(params, inputs, outputs, axes):
    return ("the boxes of all images are gathered into one list of data-dependent length, with the image index"
            " written as a value (and sorted across images with sort_result_across_batch)")


def _v8(ctx):
    return _infer_multiclass(ctx, 8)


def _v9(ctx):
    return _infer_multiclass(ctx, 9)


MULTICLASS, MATRIX = computed_once(multiclass_nms), computed_once(matrix_nms)
BOOL = ("true", "false")
COMMON = (Attr("sort_result_type", "none", tuple(SORTS)), Attr("output_type", "i64", tuple(INDEX_TYPES)),
          Attr("nms_top_k", "-1"), Attr("keep_top_k", "-1"), Attr("sort_result_across_batch", "false", BOOL),
          Attr("score_threshold", "0"), Attr("background_class", "-1"), Attr("normalized", "true", BOOL))
MULTICLASS_ATTRS = COMMON + (Attr("iou_threshold", "0"), Attr("nms_eta", "1"))
OPS = (
    OpDef("MulticlassNms", 8, 8, 8, ("boxes", "scores"), _v8, MULTICLASS, roles=("counted", "counted"),
          attrs=MULTICLASS_ATTRS, batch=_batch),
    OpDef("MulticlassNms", 9, 9, LATEST_OPSET, ("boxes", "scores", "roisnum"), _v9, MULTICLASS,
          roles=("counted", "counted", "counted"), attrs=MULTICLASS_ATTRS, min_inputs=2, batch=_batch, fit=_fit),
    OpDef("MatrixNms", 8, 8, LATEST_OPSET, ("boxes", "scores"), _infer_matrix, MATRIX,
          roles=("counted", "counted"), batch=_batch, exact=False,
          attrs=COMMON + (Attr("decay_function", "linear", tuple(DECAYS)), Attr("gaussian_sigma", "2"),
                          Attr("post_threshold", "0"))),
)
