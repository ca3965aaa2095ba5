"""NonMaxSuppression-5/9 (``docs/semantics.md``, "Detection").

Per batch row and class, boxes whose score is above ``score_threshold`` are taken greedily by score (ties: the
lower box index first); a box whose IoU with a box taken before is above ``iou_threshold`` is dropped (hard
NMS), or, with ``soft_nms_sigma > 0``, its score decays by ``exp(-0.5 * iou**2 / sigma)`` and it goes back
into the queue (soft NMS); at most ``max_output_boxes_per_class`` per class. Outputs: ``selected_indices``
``[n, 3]`` (batch, class, box; ``output_type`` i64 or i32), ``selected_scores`` ``[n, 3]`` f32 (batch, class,
score) and ``valid_outputs`` ``[1]`` (n). The order and every float operation follow OpenVINO's reference
(``non_max_suppression5`` for version 5, ``non_max_suppression`` for 9), in f32:

- boxes are normalised first: ``corner`` boxes by ``std::min``/``std::max`` of their coordinates, ``center``
  boxes ``[xc, yc, w, h]`` to ``yc -+ h / 2``... (version 5 in f32, version 9 in f64 rounded to f32);
- IoU is ``inter / (area_i + area_j - inter)`` in f32, 0 when an area is not positive;
- version 5 drops a box at ``iou >= iou_threshold`` and decays soft scores only while ``iou <= iou_threshold``;
  version 9 drops at ``iou > iou_threshold``, and never with soft NMS;
- ``sort_result_descending``: version 5 sorts all rows by score (scores closer than 1e-6 count as equal, then
  batch, class, box: libstdc++'s ``std::sort`` is emulated exactly when such near-ties exist); version 9 sorts
  by score, ties kept in batch/class/selection order, as the CPU plugin and the specification do. (Deviation:
  the reference's version 9 *reverses* the batch/class/selection order, ``std::reverse``, which lists one
  class's boxes by ascending score, against its own specification.)

The number of selected boxes depends on the values: at load it is ``0..min(boxes, max_out) * batches *
classes`` as OpenVINO infers it; every input has a deciding role, so the plan is made per value and the
output is concrete at run. Bit-exact for hard NMS; soft NMS weights use ``exp`` in f64 rounded once to f32
(glibc's ``expf`` can differ by 1 ULP in rare cases). Compared with OpenVINO's CPU plugin (the reference has
no ``Node.evaluate`` for NMS): selected indices agree exactly; soft-NMS scores differ from the plugin's by a
few f32 ULP (it computes the decay its own way), hard-NMS scores are the input scores, equal.

NonMaxSuppression-1 (opset1..opset2), -3 (opset3) and -4 (opset4): NonMaxSuppression-5's selection (OpenVINO's
plugins convert them to it), ``selected_indices`` only (i64; -3 and -4: ``output_type``), one row per selected
box, as the CPU plugin returns it. OpenVINO declares a static row count: ``min(boxes, max_output_boxes_per_class
* classes)`` for -1 and -3, ``min(boxes, max_output_boxes_per_class) * batches * classes`` for -4 (with no -1
padding of the unused rows at run time, in the CPU plugin): ir-run infers those counts at load (a count of -1:
unknown rows, below -1: 0 rows, as OpenVINO's ``Dimension``; without the count input, OpenVINO's default 0) and
the exact count once the inputs' values are known, as for version 5 (a negative count is refused at run: no
plugin runs it). The count and thresholds must be scalars. Bit-exact against the CPU plugin.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, element_type
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.handover import computed_once, count_from_constants
from ..toolkit.stl_order import std_sort
from ._common import INDEX_TYPES, disjoint, nms_batch, nms_bound

NAMES = ("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold", "soft_nms_sigma")
ROLES = ("counted", "counted", "k", "counted", "counted", "counted")
FLOATS = ("f32", "f16", "bf16")
ENCODINGS = {"corner": "corner", "center": "center"}
def _infer(ctx: OpContext, version: int):
    boxes, scores = ctx.inputs[0], ctx.inputs[1]
    for position in (0, 1, 3, 4, 5):
        if position < len(ctx.inputs):
            et = ctx.inputs[position].element_type
            if et.kind != "dynamic" and et.name not in FLOATS:
                ctx.fail(f"{NAMES[position]} must be f32, f16 or bf16, got {et}", position=position)
    if len(ctx.inputs) > 2:
        et = ctx.inputs[2].element_type
        if et.kind not in ("int", "uint", "dynamic"):
            ctx.fail(f"max_output_boxes_per_class must have an integer element type, got {et}", position=2)
    for position, spec in enumerate(ctx.inputs):
        if position == 0 or position == 1:
            if spec.shape.rank not in (None, 3):
                ctx.fail(f"{NAMES[position]} must have rank 3, got {spec.shape.brief()}", position=position)
        elif spec.shape.rank is not None and not (spec.shape.rank == 0 or spec.shape.rank == 1
                                                  and spec.shape.dims[0].contains(1)):
            ctx.fail(f"{NAMES[position]} must be a scalar or have 1 element, got {spec.shape.brief()}",
                     position=position)
    if boxes.shape.dims is not None:
        if not boxes.shape.dims[2].contains(4):
            ctx.fail(f"the last dim of boxes must be 4, got {boxes.shape.brief()}", position=0)
        if scores.shape.dims is not None:
            if disjoint(boxes.shape.dims[0], scores.shape.dims[0]):
                ctx.fail(f"boxes and scores must have the same batch dim (dim 0), got {boxes.shape.brief()} and"
                         f" {scores.shape.brief()}", position=1)
            if disjoint(boxes.shape.dims[1], scores.shape.dims[2]):
                ctx.fail(f"the boxes' dim 1 must equal the scores' dim 2 (the number of boxes), got"
                         f" {boxes.shape.brief()} and {scores.shape.brief()}", position=1)
    index_type = ctx.attr_choice("output_type", INDEX_TYPES, "i64")
    params = {"version": version, "center": ctx.attr_choice("box_encoding", ENCODINGS, "corner") == "center",
              "descending": ctx.attr_bool("sort_result_descending", True), "index_type": index_type}
    count = _count(ctx, params)
    it = element_type(index_type)
    rows = PartialShape((count, Dim(3, 3)))
    return [TensorSpec(it, rows), TensorSpec(element_type("f32"), rows),
            TensorSpec(it, PartialShape.of((1,)))], params


def _count(ctx: OpContext, params: dict) -> Dim:
    """The number of selected boxes: exact when every input is constant (the selection handed over to the
    kernel), else OpenVINO's bound."""
    exact = count_from_constants(ctx, KERNEL, params, 0)
    if exact is not None:
        return exact
    most = ctx.const_value(2) if len(ctx.inputs) > 2 else np.zeros((), np.int64)  # (OpenVINO's default: 0)
    return nms_bound(ctx.inputs[0].shape, ctx.inputs[1].shape, most)


def _scalar(values: tuple, position: int, default, kind=np.float32):
    if len(values) <= position:
        return default
    return kind(np.asarray(values[position]).reshape(-1)[0].astype(np.float32 if kind is np.float32 else np.int64))


def non_max_suppression(boxes: np.ndarray, scores: np.ndarray, *optional: np.ndarray, version: int, center: bool,
                        descending: bool, index_type: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The selected boxes (indices, scores, count) as OpenVINO's reference selects them (see the module)."""
    most = int(_scalar(optional, 0, 0, np.int64))
    iou_threshold = _scalar(optional, 1, np.float32(0))
    score_threshold = _scalar(optional, 2, np.float32(0))
    sigma = _scalar(optional, 3, np.float32(0))
    if most < 0:
        raise InputError(f"max_output_boxes_per_class is {most}: OpenVINO's reference cannot evaluate a negative"
                         " count (its output shape would be negative)", port="input 2 (max_output_boxes_per_class)")
    if boxes.shape[0] != scores.shape[0] or boxes.shape[1] != scores.shape[2]:
        raise InputError(f"boxes {list(boxes.shape)} and scores {list(scores.shape)} do not match (batch, boxes)",
                         port="input 1 (scores)")
    norm = _normalised(boxes.astype(np.float32), center, version)
    scores = scores.astype(np.float32)
    soft = bool(sigma > 0)
    scale = np.float32(-0.5) / sigma if soft else np.float32(0)
    found = []  # (batch, class, box, score)
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            for index, score in _one_class(norm[b], scores[b, c], most, iou_threshold, score_threshold, scale, soft,
                                           version):
                found.append((b, c, index, score))
    if descending:
        found = sorted(found, key=lambda f: -float(f[3])) if version == 9 else _sorted(found)
    itype = np.int32 if index_type == "i32" else np.int64
    indices = np.array([f[:3] for f in found], dtype=itype).reshape(-1, 3)
    selected = np.array([f[:2] for f in found], dtype=np.float32).reshape(-1, 2)
    scored = np.concatenate([selected, np.array([f[3] for f in found], dtype=np.float32).reshape(-1, 1)], axis=1)
    return indices, scored, np.array([len(found)], dtype=itype)


def _normalised(boxes: np.ndarray, center: bool, version: int) -> np.ndarray:
    """Boxes as ``[y1, x1, y2, x2]`` with y1 <= y2, x1 <= x2 (``std::min``/``std::max``: NaN stays where it is)."""
    a, b, c, d = (boxes[..., i] for i in range(4))
    if center:  # [xc, yc, w, h]
        if version == 9:  # the reference halves in double
            a, b, c, d = (x.astype(np.float64) for x in (a, b, c, d))
        half_h, half_w = d / 2, c / 2
        out = np.stack([b - half_h, a - half_w, b + half_h, a + half_w], axis=-1)
        return out.astype(np.float32)
    return np.stack([np.where(c < a, c, a), np.where(d < b, d, b), np.where(a < c, c, a), np.where(b < d, d, b)],
                    axis=-1)


def _one_class(boxes: np.ndarray, scores: np.ndarray, most: int, iou_threshold, score_threshold, scale, soft: bool,
               version: int) -> list[tuple[int, np.float32]]:
    candidates = np.nonzero(scores > score_threshold)[0]
    if not candidates.size or most == 0:
        return []
    order = candidates[np.lexsort((candidates, -scores[candidates].astype(np.float64)))]
    picked = boxes[order]
    with np.errstate(over="ignore", invalid="ignore"):
        areas = (picked[:, 2] - picked[:, 0]) * (picked[:, 3] - picked[:, 1])
    if not soft and not np.isnan(iou_threshold) and np.isfinite(picked).all() and np.isfinite(areas).all():
        return _hard(order, picked, areas, scores, most, iou_threshold, version)
    return _greedy(order, boxes, scores, most, iou_threshold, score_threshold, scale, soft, version)


def _iou_many(box: np.ndarray, area: np.float32, others: np.ndarray, areas: np.ndarray) -> np.ndarray:
    """IoU of one box with many (all finite), each in f32 as the reference computes it."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        height = np.maximum(np.minimum(others[:, 2], box[2]) - np.maximum(others[:, 0], box[0]), np.float32(0))
        width = np.maximum(np.minimum(others[:, 3], box[3]) - np.maximum(others[:, 1], box[1]), np.float32(0))
        inter = height * width
        iou = inter / (areas + area - inter)
    return np.where((areas <= 0) | (area <= 0), np.float32(0), iou)


def _hard(order, picked, areas, scores, most, iou_threshold, version) -> list:
    """Hard NMS on finite boxes: a candidate is dropped when any box taken before overlaps it too much.

    When an IoU of 0 does not drop a box (threshold >= 0 for version 9's ``>``, > 0 for version 5's ``>=``), a
    taken box is compared only with the candidates whose ``x1`` lies within the widest box's width of it (found
    by binary search in ``x1`` order): any other candidate does not overlap it in x, so its IoU is 0 (or NaN when
    the height overflows) and keeps it. torchvision's batched NMS offsets each class's boxes apart, so this
    compares a box with its own class's only, instead of every candidate of every class."""
    alive = np.ones(len(order), dtype=bool)
    zero_drops = iou_threshold <= 0 if version == 5 else iou_threshold < 0
    if not zero_drops:
        by_x1 = np.argsort(picked[:, 1], kind="stable")
        starts = picked[by_x1, 1].astype(np.float64)
        widest = float(np.max(picked[:, 3].astype(np.float64) - picked[:, 1], initial=0.0))
    taken = []
    for pos in range(len(order)):
        if not alive[pos]:
            continue
        taken.append(pos)
        if len(taken) == most:
            break
        if zero_drops:
            near = np.arange(pos + 1, len(order))
        else:
            box = picked[pos]
            reach = float(box[1]) - widest  # less a margin for f64 rounding: a wider window changes nothing
            lo = np.searchsorted(starts, reach - 1e-9 * abs(reach), side="left")
            hi = np.searchsorted(starts, float(box[3]), side="left")
            near = by_x1[lo:hi]
            near = near[(near > pos) & alive[near]]
        iou = _iou_many(picked[pos], areas[pos], picked[near], areas[near])
        alive[near] &= ~((iou >= iou_threshold) if version == 5 else (iou > iou_threshold))
    return [(int(order[p]), scores[order[p]]) for p in taken]


def _iou(a: np.ndarray, b: np.ndarray) -> np.float32:
    """The reference's ``intersectionOverUnion`` for one pair (``std::max(x, y)``: ``x < y ? y : x``)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        area_a = (a[2] - a[0]) * (a[3] - a[1])
        area_b = (b[2] - b[0]) * (b[3] - b[1])
        if area_a <= 0 or area_b <= 0:
            return np.float32(0)
        ymin = b[0] if a[0] < b[0] else a[0]
        xmin = b[1] if a[1] < b[1] else a[1]
        ymax = b[2] if b[2] < a[2] else a[2]
        xmax = b[3] if b[3] < a[3] else a[3]
        dy, dx = ymax - ymin, xmax - xmin
        inter = (np.float32(0) if dy < 0 else dy) * (np.float32(0) if dx < 0 else dx)
        return inter / (area_a + area_b - inter)


def _greedy(order, boxes, scores, most, iou_threshold, score_threshold, scale, soft, version) -> list:
    """The reference's loop, box by box: a priority queue by (score, lower index), scores decayed against the
    boxes taken since a candidate was last looked at, from the last taken backwards."""
    queue = [(-float(scores[i]), int(i), scores[i], 0) for i in order]
    heapq.heapify(queue)
    taken: list[tuple[int, np.float32]] = []
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        while queue and len(taken) < most:
            _, index, score, begin = heapq.heappop(queue)
            original = score
            drop = False
            for j in range(len(taken) - 1, begin - 1, -1):
                iou = _iou(boxes[index], boxes[taken[j][0]])
                keep = (iou <= iou_threshold) if version == 5 else (soft or iou <= iou_threshold)
                weight = np.float32(math.exp(float(scale * iou * iou))) if keep else np.float32(0)
                score = np.float32(score * weight)
                if (iou >= iou_threshold) if version == 5 else (iou > iou_threshold and not soft):
                    drop = True
                    break
                if score <= score_threshold:
                    break
            if drop:
                continue
            if score == original:
                taken.append((index, score))
            elif score > score_threshold:
                heapq.heappush(queue, (-float(score), index, score, len(taken)))
    return taken


def _sorted(found: list) -> list:
    """NMS-5's ``sort_result_descending``: by score (closer than 1e-6: equal), then batch, class, box, as
    libstdc++'s ``std::sort`` orders them with that comparison (not an order when scores are near)."""
    if not found:
        return found
    exact = sorted(found, key=lambda f: (-float(f[3]), f[0], f[1], f[2]))
    values = np.array([f[3] for f in exact], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        gaps = np.abs(values[:-1] - values[1:]).astype(np.float64)
    if not ((gaps > 0) & (gaps < 1e-6)).any() and not (np.isinf(values[:-1]) & (values[:-1] == values[1:])).any():
        return exact

    def less(left, right) -> bool:
        with np.errstate(invalid="ignore"):
            near = float(abs(left[3] - right[3])) < 1e-6
        return bool(left[3] > right[3]) or (near and left[:3] < right[:3])

    items = list(found)
    try:
        std_sort(items, less)
    except IndexError:  # the unguarded partition ran off the end: the reference reads out of bounds
        raise InputError("selected scores closer than 1e-6 make NMS-5's sort comparison inconsistent: OpenVINO's"
                         " reference std::sort reads past its buffer for these scores", port="input 1 (scores)",
                         hint="use sort_result_descending=false, or NonMaxSuppression-9") from None
    return items


KERNEL = computed_once(non_max_suppression)


def _v5(ctx):
    return _infer(ctx, 5)


def _v9(ctx):
    return _infer(ctx, 9)


ATTRS = (Attr("box_encoding", "corner", tuple(ENCODINGS)), Attr("sort_result_descending", "true", ("true", "false")),
         Attr("output_type", "i64", tuple(INDEX_TYPES)))
def _old_count(most: int) -> Dim | None:
    """OpenVINO's ``Dimension(most)`` of a count: -1 is dynamic (None), a count below -1 is 0."""
    return None if most == -1 else Dim(max(most, 0), max(most, 0))


def _infer_nms_old(version: int):
    def infer(ctx: OpContext):
        outputs, params = _infer(ctx, 5)
        for position in range(2, len(ctx.inputs)):
            if ctx.inputs[position].shape.rank not in (None, 0):
                ctx.fail(f"{NAMES[position]} must be a scalar, got {ctx.inputs[position].shape.brief()}",
                         position=position)
        if all(ctx.const_value(i) is not None for i in range(len(ctx.inputs))):
            return outputs[:1], params  # (the exact count)
        boxes, scores = ctx.inputs[0].shape.dims, ctx.inputs[1].shape.dims
        most = ctx.const_value(2) if len(ctx.inputs) > 2 else np.zeros((), np.int64)  # (OpenVINO's default)
        rows = DYNAMIC_DIM
        if boxes is not None and most is not None and boxes[1].is_static:
            most = int(most.reshape(-1)[0])
            if version < 4:
                per = _old_count(most)
                if per is not None and scores is not None:
                    per = Dim(per.lo * scores[1].lo, per.lo * scores[1].lo) if scores[1].is_static else None
                if per is not None:
                    rows = Dim(min(boxes[1].lo, per.lo), min(boxes[1].lo, per.lo))
            elif scores is not None and None not in (scores[0].hi, scores[1].hi):
                per = _old_count(min(boxes[1].lo, most))
                if per is not None:
                    rows = Dim(per.lo * scores[0].hi * scores[1].hi, per.lo * scores[0].hi * scores[1].hi)
        return [TensorSpec(outputs[0].element_type, PartialShape((rows, Dim(3, 3))))], params
    return infer


def selected_indices(*inputs, **params):
    """NonMaxSuppression-1/3/4: NonMaxSuppression-5's ``selected_indices`` (see the module docstring)."""
    return KERNEL(*inputs, **params)[0]


OPS = (
    OpDef("NonMaxSuppression", 5, 5, 8, NAMES, _v5, KERNEL, roles=ROLES, attrs=ATTRS, min_inputs=2,
          batch=nms_batch),
    OpDef("NonMaxSuppression", 9, 9, LATEST_OPSET, NAMES, _v9, KERNEL, roles=ROLES, attrs=ATTRS,
          min_inputs=2, batch=nms_batch),
) + tuple(
    OpDef("NonMaxSuppression", version, first, last, NAMES[:5], _infer_nms_old(version), selected_indices,
          roles=ROLES[:5], attrs=ATTRS if version > 1 else ATTRS[:2], min_inputs=2, batch=nms_batch)
    for version, first, last in ((1, 1, 2), (3, 3, 3), (4, 4, 4))
)
