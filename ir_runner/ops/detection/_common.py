"""Helpers the detection operations share (a private module of the family: it declares no operation)."""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, merge_dims
from ..api import OpContext
from ..toolkit.stl_order import partial_sort

INDEX_TYPES = {"i64": "i64", "i32": "i32"}
MAX_SAMPLES = 1 << 16  # samples per bin (an adaptive ratio of a huge box would take memory without end)


def max0(x: np.ndarray) -> np.ndarray:
    """C++'s ``std::max(0.0f, x)``, which the plugins' box clipping writes: ``x`` when above 0, else 0 (a NaN and
    -0.0 give +0, where numpy's ``maximum`` keeps the NaN)."""
    return np.where(np.float32(0) < x, x, np.float32(0)).astype(np.float32)


def disjoint(a: Dim, b: Dim) -> bool:
    return (a.hi is not None and b.lo > a.hi) or (b.hi is not None and a.lo > b.hi)


def nms_batch(params, inputs, outputs, axes):
    return ("the boxes of all batch rows are gathered into one list of data-dependent length, with the batch index"
            " written as a value (and sorted across rows with sort_result_descending)")


def nms_bound(boxes: PartialShape, scores: PartialShape, most: np.ndarray | None) -> Dim:
    """OpenVINO's ``nms::shape_infer`` count of selected boxes, ``0..min(boxes, max_out) * batches * classes`` when
    all are bounded (``most``: the count input's value, None when not constant)."""
    if boxes.dims is None or scores.dims is None or most is None or most.size != 1:
        return DYNAMIC_DIM
    per_class = min(-1 if boxes.dims[1].hi is None else boxes.dims[1].hi, int(most.reshape(-1)[0]))
    if per_class == 0:
        return Dim(0, 0)
    if per_class < 0 or scores.dims[0].hi is None or scores.dims[1].hi is None:
        return DYNAMIC_DIM
    return Dim(0, per_class * scores.dims[0].hi * scores.dims[1].hi)


def infer_boxes(ctx: OpContext, coordinates: int, meaning: str, params: dict) -> tuple[list[TensorSpec], dict]:
    """The output spec of an ROIAlign-like layer (data [N, C, H, W], rois [R, ``coordinates``], batch_indices [R]
    -> [R, C, pooled_h, pooled_w]), OpenVINO's ``roi_align::shape_infer``; adds the pooling attributes to
    ``params``."""
    data, rois, indices = ctx.inputs
    et = data.element_type
    if et.kind == "dynamic":
        et = rois.element_type
    elif rois.element_type.kind != "dynamic" and rois.element_type != et:
        ctx.fail(f"data and rois must have the same floating-point type, got {et} and {rois.element_type}",
                 position=1)
    if et.kind not in ("float", "dynamic") or et.bits < 16:
        ctx.fail(f"data and rois must be f16, bf16, f32 or f64, got {et}", position=0)
    if indices.element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"batch_indices must have an integer element type, got {indices.element_type}", position=2)
    for position, rank in ((0, 4), (1, 2), (2, 1)):
        shape = ctx.inputs[position].shape
        if shape.rank is not None and shape.rank != rank:
            ctx.fail(f"{ctx.op.input_names[position]} must be {rank}-D, got {shape.brief()}", position=position)
    params.update(pooled_h=ctx.attr_int("pooled_h", 1), pooled_w=ctx.attr_int("pooled_w", 1),
                  sampling_ratio=ctx.attr_int("sampling_ratio", 0),
                  spatial_scale=float(np.float32(ctx.attr_float("spatial_scale", 1.0))))
    for name in ("pooled_h", "pooled_w", "sampling_ratio"):
        if params[name] < 0 or params[name] > 2**31 - 1:
            ctx.fail(f"attribute {name}={params[name]} must be a non-negative int32",
                     hint="OpenVINO's reference cannot run a negative size or sampling ratio")
    count = DYNAMIC_DIM
    if rois.shape.rank is not None:
        if not rois.shape.dims[1].contains(coordinates):
            ctx.fail(f"the second dim of rois must be {coordinates} ({meaning}), got {rois.shape.brief()}",
                     position=1)
        count = rois.shape.dims[0]
    if indices.shape.rank is not None:
        merged = merge_dims(count, indices.shape.dims[0])
        if merged is None:
            ctx.fail(f"rois and batch_indices must have the same first dim (the number of boxes), got"
                     f" {rois.shape.brief()} and {indices.shape.brief()}", position=2)
        count = merged
    channels = data.shape.dims[1] if data.shape.rank is not None else DYNAMIC_DIM
    shape = PartialShape((count, channels, Dim(params["pooled_h"], params["pooled_h"]),
                          Dim(params["pooled_w"], params["pooled_w"])))
    return [TensorSpec(et, shape)], params


def checked_batch_indices(data: np.ndarray, batch_indices: np.ndarray) -> np.ndarray:
    """The batch indices as int64; an InputError for one outside ``[0, N)`` or an empty image (the reference would
    read outside the data)."""
    n, _, h, w = data.shape
    wide = batch_indices.astype(np.int64)
    bad = np.flatnonzero((wide < 0) | (wide >= n))
    if bad.size:
        raise InputError(f"batch_indices[{bad[0]}] = {batch_indices[bad[0]]} is outside [0, {n}) (the number of"
                         " images in data): OpenVINO's reference would read outside the data",
                         port="input 2 (batch_indices)")
    if h == 0 or w == 0:
        raise InputError(f"data {list(data.shape)} has an empty image: OpenVINO's reference would read outside it",
                         port="input 0 (data)")
    return wide


def roi_batch(params, inputs, outputs, axes):
    if axes[0] is None and axes[1] == 0 and axes[2] == 0:
        return [0]
    if axes[0] is None and axes[1] is None and axes[2] is None:
        return [None]
    return ("each box reads the image its batch index names (a value): the images of data cannot be cut into"
            " chunks apart from the boxes; only rois and batch_indices may be batched (axis 0), with data whole")


def top_scores(scores: np.ndarray, k: int) -> np.ndarray:
    """The indices libstdc++'s ``std::partial_sort(first, first + k, last, score >)`` leaves in front, in order.
    Without ties among the scores that matter, that is the order by score; with ties, its heap steps decide."""
    order = np.argsort(-scores.astype(np.float64), kind="stable")
    if k == 0:
        return order[:0]
    head = scores[order[:min(k + 1, len(order))]]
    if not np.isnan(scores).any() and (len(np.unique(head)) == len(head)):
        return order[:k]
    values = scores.tolist()
    return np.array(partial_sort(range(len(values)), k, lambda i, j: values[i] > values[j]), dtype=np.int64)


def nms_cpu(boxes: np.ndarray, threshold: np.float32, most: int, offset: np.float32,
            dead: np.ndarray | None = None) -> list[int]:
    """The CPU plugin's ``nms_cpu`` (Proposal, GenerateProposals, ExperimentalDetectron's proposals) on boxes
    sorted by score: greedy, a later box dead when its IoU (sides ``x1 - x0 + offset``; 0 for boxes apart) with
    a taken one is above ``threshold``, at most ``most`` taken (``dead``: the boxes dead from the start)."""
    x0, y0, x1, y1 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    dead = np.zeros(len(boxes), bool) if dead is None else dead.copy()
    taken = []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for box in range(len(boxes)):
            if dead[box]:
                continue
            taken.append(box)
            if len(taken) == most:
                break
            j = slice(box + 1, None)
            near = (x0[box] <= x1[j]) & (y0[box] <= y1[j]) & (x0[j] <= x1[box]) & (y0[j] <= y1[box])
            w = np.maximum(np.float32(0), np.minimum(x1[box], x1[j]) - np.maximum(x0[box], x0[j]) + offset)
            h = np.maximum(np.float32(0), np.minimum(y1[box], y1[j]) - np.maximum(y0[box], y0[j]) + offset)
            area = w * h
            a_area = (x1[box] - x0[box] + offset) * (y1[box] - y0[box] + offset)
            b_area = (x1[j] - x0[j] + offset) * (y1[j] - y0[j] + offset)
            iou = np.where(near, area / (a_area + b_area - area), np.float32(0))
            dead[j] |= threshold < iou
    return taken
