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

OpenVINO's core nodes have no ``evaluate``: values equal its CPU plugin's, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..types import DYNAMIC_DIM, Dim, ElementType, PartialShape, TensorSpec, merge_dims
from .api import LATEST_OPSET, Attr, OpContext, OpDef
from .partial import dim_mul
from .roi_align import Arith

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


OPS = (
    OpDef("ExperimentalDetectronTopKROIs", 6, 6, LATEST_OPSET, ("rois", "rois_probs"), infer_topk_rois, topk_rois,
          attrs=(Attr("max_rois", "0"),),
          batch=lambda *a: "rois of every image are ranked together (their rows are not a batch)"),
    OpDef("ExperimentalDetectronPriorGridGenerator", 6, 6, LATEST_OPSET, ("priors", "feature_map", "im_data"),
          infer_prior_grid, prior_grid,
          attrs=(Attr("flatten", "true", ("true", "false")), Attr("h", "0"), Attr("w", "0"), Attr("stride_x", "0"),
                 Attr("stride_y", "0")),
          batch=lambda *a: "the grid does not depend on the batch (its output has no batch axis)"),
)
