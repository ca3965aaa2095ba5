"""IsNaN-10, IsInf-10 and IsFinite-10: which elements of a floating-point tensor are NaN, infinite or
finite, as a boolean tensor of the input's shape (exact).

torch.onnx writes IsNaN into every exported scaled-dot-product attention (a fully masked row's NaN
replaced by 0), and the ONNX frontend keeps it. IsInf's ``detect_negative`` / ``detect_positive`` (both
true by default) choose which infinities count. Only real types are accepted, as in OpenVINO; the f8
types have no infinity (IsInf is false everywhere). OpenVINO has no reference evaluate for them; its CPU
plugin calls f32 subnormals not finite on an AVX-512 CPU (finite without), ir-run and the spec call them
finite, and it converts f64 data to f32 with saturation (an f64 infinity is not infinite for it;
scripts/fuzz_ops.py checks both)."""

from __future__ import annotations

import numpy as np

from ...types import BOOLEAN, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef, keep_batch


def _infer(ctx: OpContext, params: dict | None = None):
    spec = ctx.inputs[0]
    if spec.element_type.kind not in ("float", "dynamic"):
        ctx.fail(f"{ctx.op.type} takes a floating-point tensor, got {spec.element_type}", position=0)
    return [TensorSpec(BOOLEAN, spec.shape)], params or {}


def _infer_is_inf(ctx: OpContext):
    return _infer(ctx, {"negative": ctx.attr_bool("detect_negative", True),
                        "positive": ctx.attr_bool("detect_positive", True)})


def is_nan(x: np.ndarray) -> np.ndarray:
    """IsNaN-10: ``x != x``."""
    return np.isnan(x)


def is_finite(x: np.ndarray) -> np.ndarray:
    """IsFinite-10: neither NaN nor infinite."""
    return np.isfinite(x)


def is_inf(x: np.ndarray, *, negative: bool, positive: bool) -> np.ndarray:
    """IsInf-10: ``x == -inf`` (with ``detect_negative``) or ``x == +inf`` (with ``detect_positive``)."""
    if negative and positive:
        return np.isinf(x)
    if not (negative or positive):
        return np.zeros(x.shape, dtype=bool)
    return np.isinf(x) & (np.signbit(x) == negative)


OPS = (
    OpDef("IsNaN", 10, 10, LATEST_OPSET, ("data",), _infer, is_nan, batch=keep_batch),
    OpDef("IsFinite", 10, 10, LATEST_OPSET, ("data",), _infer, is_finite, batch=keep_batch),
    OpDef("IsInf", 10, 10, LATEST_OPSET, ("data",), _infer_is_inf, is_inf, batch=keep_batch,
          attrs=(Attr("detect_negative", "true", ("true", "false")),
                 Attr("detect_positive", "true", ("true", "false")))),
)
