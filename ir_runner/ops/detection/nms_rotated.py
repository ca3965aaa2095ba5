"""NMSRotated-13 (``docs/semantics.md``, "Detection"): NonMaxSuppression-9's greedy selection over rotated boxes
``boxes`` [N, M, 5] (``x_ctr, y_ctr, w, h, angle`` in radians, ``clockwise`` or not), ``scores`` [N, C, M].

OpenVINO's reference has no ``Node.evaluate`` for it; ir-run follows the CPU plugin (``nmsRotated`` in
``non_max_suppression.cpp``), each step in f32:

- candidates ``score > score_threshold`` by score (ties: the lower index); the first is taken, each next one
  unless its IoU with a box taken before is above ``iou_threshold`` (a candidate of area ``w * h <= 0`` is
  taken unless the threshold is negative; a taken box of area ``<= 0`` has IoU 0), up to
  ``max_output_boxes_per_class``;
- IoU of rotated rectangles as the plugin computes it: the corners (``cos``/``sin`` of the angle halved), the
  crossing points of the 16 edge pairs (``|det| <= 1e-14`` parallel) and the corners inside the other box, their
  convex hull by Graham's scan (libstdc++'s ``std::sort`` with the plugin's comparison, emulated step by step:
  cross products within 1e-6 compare by distance), its area by a fan of triangles;
  ``inter / (area_0 + area_1 - inter)``;
- outputs as NonMaxSuppression-9's: ``selected_indices`` [n, 3] (``output_type``), ``selected_scores`` [n, 3]
  f32, ``valid_outputs`` [1]; ``sort_result_descending`` orders all rows by score (ties in batch/class/selection
  order).

Bound: ``cos``/``sin`` are glibc's ``cosf``/``sinf`` in the plugin (f64 rounded here) and its corner arithmetic
may be contracted into FMAs: an IoU within a few ULP of the plugin's, which changes a selection only for an
IoU within that distance of the threshold (the tests keep away from it); indices and scores otherwise exact.
Boxes whose circumscribed circles are apart are not intersected (their IoU is 0) unless the threshold is
negative.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import InputError
from ...types import Dim, PartialShape, TensorSpec, element_type
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.handover import computed_once, count_from_constants
from ..toolkit.stl_order import std_sort
from ._common import INDEX_TYPES, disjoint, nms_batch, nms_bound

NAMES = ("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold")


def _infer(ctx: OpContext):
    for position in (0, 1, 3, 4):  # (any floating-point type, f64 included, as OpenVINO's is_real)
        et = ctx.inputs[position].element_type
        if et.kind not in ("float", "dynamic") or 0 < et.bits < 16:
            ctx.fail(f"{NAMES[position]} must have a floating-point type, got {et}", position=position)
    if ctx.inputs[2].element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"max_output_boxes_per_class must have an integer element type, got {ctx.inputs[2].element_type}",
                 position=2)
    boxes, scores = ctx.inputs[0].shape, ctx.inputs[1].shape
    for position in (0, 1):
        shape = ctx.inputs[position].shape
        if shape.rank not in (None, 3):
            ctx.fail(f"{NAMES[position]} must have rank 3, got {shape.brief()}", position=position)
    for position in (2, 3, 4):
        shape = ctx.inputs[position].shape
        if shape.rank is not None and not (shape.rank == 0 or shape.rank == 1 and shape.dims[0].contains(1)):
            ctx.fail(f"{NAMES[position]} must be a scalar or have 1 element, got {shape.brief()}", position=position)
    if boxes.rank is not None:
        if scores.rank is not None:
            if disjoint(boxes.dims[0], scores.dims[0]):
                ctx.fail(f"boxes and scores must have the same batch dim (dim 0), got {boxes.brief()} and"
                         f" {scores.brief()}", position=1)
            if disjoint(boxes.dims[1], scores.dims[2]):
                ctx.fail(f"the boxes' dim 1 must equal the scores' dim 2 (the number of boxes), got {boxes.brief()}"
                         f" and {scores.brief()}", position=1)
        if not boxes.dims[2].contains(5):
            ctx.fail(f"the last dim of boxes must be 5 (x_ctr, y_ctr, w, h, angle), got {boxes.brief()}",
                     position=0)
    params = {"descending": ctx.attr_bool("sort_result_descending", True),
              "index_type": ctx.attr_choice("output_type", INDEX_TYPES, "i64"),
              "clockwise": ctx.attr_bool("clockwise", True)}
    count = count_from_constants(ctx, KERNEL, params, 0)  # (the plan per value: the exact count)
    if count is None:
        count = nms_bound(boxes, scores, ctx.const_value(2))
    it = element_type(params["index_type"])
    rows = PartialShape((count, Dim(3, 3)))
    return [TensorSpec(it, rows), TensorSpec(element_type("f32"), rows), TensorSpec(it, PartialShape.of((1,)))], params


def _f(x: float) -> float:
    return float(np.float32(x))


def _sub(a, b):
    return (_f(a[0] - b[0]), _f(a[1] - b[1]))


def _dot(a, b) -> float:
    return _f(_f(a[0] * b[0]) + _f(a[1] * b[1]))


def _cross(a, b) -> float:
    return _f(_f(a[0] * b[1]) - _f(b[0] * a[1]))


def _corners(box: np.ndarray, clockwise: bool) -> list[tuple[float, float]]:
    """The plugin's ``getRotatedVertices``: left-down, left-top, right-top, right-down."""
    x, y, w, h, angle = (float(v) for v in box)
    theta = angle if clockwise else -angle
    cos, sin = _f(_f(math.cos(theta)) * 0.5), _f(_f(math.sin(theta)) * 0.5)
    p0 = (_f(_f(x - _f(sin * h)) - _f(cos * w)), _f(_f(y + _f(cos * h)) - _f(sin * w)))
    p1 = (_f(_f(x + _f(sin * h)) - _f(cos * w)), _f(_f(y - _f(cos * h)) - _f(sin * w)))
    p2 = (_f(_f(2 * x) - p0[0]), _f(_f(2 * y) - p0[1]))
    p3 = (_f(_f(2 * x) - p1[0]), _f(_f(2 * y) - p1[1]))
    return [p0, p1, p2, p3]


def _inside(points, rect, edges, out: list) -> None:
    """Appends the points inside ``rect`` (its projections on two sides within them)."""
    ab, da = edges[0], edges[3]
    ab_ab, ad_ad = _dot(ab, ab), _dot(da, da)
    for p in points:
        ap = _sub(p, rect[0])
        ap_ab, ap_ad = _dot(ap, ab), -_dot(ap, da)
        if ap_ab >= 0 and ap_ad >= 0 and ap_ab <= ab_ab and ap_ad <= ad_ad:
            out.append(p)


def _intersection_points(pts1, pts2) -> list[tuple[float, float]]:
    vec1 = [_sub(pts1[(i + 1) % 4], pts1[i]) for i in range(4)]
    vec2 = [_sub(pts2[(i + 1) % 4], pts2[i]) for i in range(4)]
    found = []
    with np.errstate(all="ignore"):
        for i in range(4):
            for j in range(4):
                det = _cross(vec2[j], vec1[i])
                if abs(det) <= _f(1e-14):
                    continue
                v12 = _sub(pts2[j], pts1[i])
                t1, t2 = _f(_cross(vec2[j], v12) / det), _f(_cross(vec1[i], v12) / det)
                if 0 <= t1 <= 1 and 0 <= t2 <= 1:
                    found.append((_f(pts1[i][0] + _f(vec1[i][0] * t1)), _f(pts1[i][1] + _f(vec1[i][1] * t1))))
    _inside(pts1, pts2, vec2, found)
    _inside(pts2, pts1, vec1, found)
    return found


def _hull_area(points: list[tuple[float, float]]) -> float:
    """The plugin's ``convexHullGraham`` then ``polygonArea``, on the points shifted to the lowest one."""
    t = 0
    for i in range(1, len(points)):
        if points[i][1] < points[t][1] or (points[i][1] == points[t][1] and points[i][0] < points[t][0]):
            t = i
    start = points[t]
    q = [_sub(p, start) for p in points]
    q[0], q[t] = q[t], q[0]

    def less(a, b) -> bool:
        temp = _cross(a, b)
        if abs(temp) < _f(1e-6):
            return _dot(a, a) < _dot(b, b)
        return temp > 0

    rest = q[1:]
    std_sort(rest, less)
    q = [q[0]] + rest
    k = next((i for i in range(1, len(q)) if _dot(q[i], q[i]) > _f(1e-8)), len(q))
    if k == len(q):
        return 0.0
    stack = [q[0], q[k]]
    for i in range(k + 1, len(q)):
        while len(stack) > 1 and _cross(_sub(q[i], stack[-2]), _sub(stack[-1], stack[-2])) >= 0:
            stack.pop()
        stack.append(q[i])
    if len(stack) <= 2:
        return 0.0
    area = 0.0
    for i in range(1, len(stack) - 1):
        area = _f(area + abs(_cross(_sub(stack[i], stack[0]), _sub(stack[i + 1], stack[0]))))
    return _f(area / 2)


def _iou(corners0, area0: float, box1: np.ndarray, clockwise: bool) -> float:
    area1 = _f(float(box1[2]) * float(box1[3]))
    if area1 <= 0:
        return 0.0
    points = _intersection_points(corners0, _corners(box1, clockwise))
    inter = _hull_area(points) if len(points) > 2 else 0.0
    with np.errstate(all="ignore"):
        return float(np.float32(inter) / np.float32(_f(_f(area0 + area1) - inter)))


def _one_class(boxes: np.ndarray, scores: np.ndarray, most: int, iou_threshold: float, score_threshold: float,
               clockwise: bool) -> list[tuple[int, np.float32]]:
    with np.errstate(invalid="ignore"):
        candidates = np.flatnonzero(scores > np.float32(score_threshold))
    if not candidates.size or most == 0:
        return []
    order = candidates[np.lexsort((candidates, -scores[candidates].astype(np.float64)))]
    reach = np.hypot(boxes[:, 2].astype(np.float64), boxes[:, 3].astype(np.float64)) / 2
    centres = boxes[:, :2].astype(np.float64)
    taken = [int(order[0])]
    for index in order[1:]:
        if len(taken) >= most:
            break
        box = boxes[index]
        area0 = _f(float(box[2]) * float(box[3]))
        if not area0 > 0:
            if not 0.0 > iou_threshold:
                taken.append(int(index))
            continue
        others = np.array(taken)
        with np.errstate(invalid="ignore"):
            near = ~(np.hypot(*(centres[others] - centres[index]).T) > (reach[others] + reach[index]) * 1.001 + 1e-3)
        if iou_threshold < 0:
            near[:] = True  # (an IoU of 0 is above a negative threshold: every pair counts)
        corners0 = _corners(box, clockwise)
        if not any(_iou(corners0, area0, boxes[j], clockwise) > iou_threshold for j in others[near][::-1]):
            taken.append(int(index))
    return [(i, scores[i]) for i in taken]


def nms_rotated(boxes: np.ndarray, scores: np.ndarray, max_output_boxes_per_class: np.ndarray,
                iou_threshold: np.ndarray, score_threshold: np.ndarray, *, descending: bool, index_type: str,
                clockwise: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NMSRotated-13 as the CPU plugin computes it (see the module docstring)."""
    most = int(np.asarray(max_output_boxes_per_class).reshape(-1)[0])
    if most < 0:
        raise InputError(f"max_output_boxes_per_class is {most}: OpenVINO cannot evaluate a negative count (its"
                         " output shape would be negative)", port="input 2 (max_output_boxes_per_class)")
    iou = float(np.asarray(iou_threshold).reshape(-1)[0].astype(np.float32))
    low = float(np.asarray(score_threshold).reshape(-1)[0].astype(np.float32))
    if boxes.shape[0] != scores.shape[0] or boxes.shape[1] != scores.shape[2]:
        raise InputError(f"boxes {list(boxes.shape)} and scores {list(scores.shape)} do not match (batch, boxes)",
                         port="input 1 (scores)")
    b32, s32 = boxes.astype(np.float32), scores.astype(np.float32)
    found = [(b, c, i, s) for b in range(scores.shape[0]) for c in range(scores.shape[1])
             for i, s in _one_class(b32[b], s32[b, c], most, iou, low, clockwise)]
    if descending:
        found.sort(key=lambda f: -float(f[3]))
    itype = np.int32 if index_type == "i32" else np.int64
    indices = np.array([f[:3] for f in found], dtype=itype).reshape(-1, 3)
    selected = np.array([(f[0], f[1], f[3]) for f in found], dtype=np.float32).reshape(-1, 3)
    return indices, selected, np.array([len(found)], dtype=itype)


KERNEL = computed_once(nms_rotated)
OPS = (
    OpDef("NMSRotated", 13, 13, LATEST_OPSET, NAMES, _infer, KERNEL, batch=nms_batch, exact=False,
          roles=("counted", "counted", "k", "counted", "counted"),
          attrs=(Attr("sort_result_descending", "true", ("true", "false")), Attr("output_type", "i64",
                                                                                 tuple(INDEX_TYPES)),
                 Attr("clockwise", "true", ("true", "false")))),
)
