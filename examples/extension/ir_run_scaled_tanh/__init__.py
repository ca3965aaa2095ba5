"""ScaledTanh (opset ``my_ops``): ``alpha * tanh(beta * x)``, element-wise, for float tensors.

An example of an ir-run extension: one declaration (:class:`ir_runner.extension.OpDef`) with its inference,
attribute schema and kernel, registered through the ``ir_runner.ops`` entry point (see pyproject.toml).
"""

from __future__ import annotations

import numpy as np

from ir_runner.extension import Attr, OpContext, OpDef, TensorSpec, register_op


def infer(ctx: OpContext):
    (x,) = ctx.inputs
    if x.element_type.kind not in ("float", "dynamic"):
        ctx.fail(f"x must have a floating-point element type, got {x.element_type}", position=0)
    alpha, beta = ctx.attr_float("alpha", 1.0), ctx.attr_float("beta", 1.0)
    return [TensorSpec(x.element_type, x.shape)], {"alpha": alpha, "beta": beta}


def scaled_tanh(x: np.ndarray, *, alpha: float, beta: float) -> np.ndarray:
    """Computed in the input's own type (f16 and bf16 through f32); within 2 ULP of the exact result."""
    wide = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    return (alpha * np.tanh(beta * wide)).astype(x.dtype, copy=False)


def keeps_batch(params, inputs, outputs, axes):
    return [axes[0]]


SCALED_TANH = OpDef("ScaledTanh", 1, 0, 0, ("x",), infer, scaled_tanh, domain="my_ops",
                    attrs=(Attr("alpha", "1.0"), Attr("beta", "1.0")), batch=keeps_batch, exact=False)


def register() -> None:
    """The ``ir_runner.ops`` entry point: run once, on the first use of ir-run's registry."""
    register_op(SCALED_TANH)
