"""Helpers shared by the normalisation and attention operations: float checks, channel checks and the batch rule
of an operation that normalises over some axes (:func:`batch_unless_reduced`). Their computation type is
``numeric.compute_dtype``: narrow floats (f16, bf16) in f32, rounded once to the output type; OpenVINO's
reference rounds f16 after each step, so f16 results differ from it by a few f16 ULPs (the tests use a relative
bound of 1e-2 for f16 and bf16).
"""

from __future__ import annotations

from ...types import PartialShape, TensorSpec
from ..api import OpContext


def require_float(ctx: OpContext, position: int = 0, what: str = "data") -> None:
    """Fail unless input ``position`` has a floating-point (or dynamic) element type."""
    kind = ctx.inputs[position].element_type.kind
    if kind not in ("float", "dynamic"):
        ctx.fail(f"{what} must have a floating-point element type, got {ctx.inputs[position].element_type}",
                 position=position)


def same_spec(ctx: OpContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.inputs[0].element_type, ctx.inputs[0].shape)]


def merge_channel(ctx: OpContext, data: PartialShape, position: int, name: str, axis: int = 1) -> None:
    """Fail unless the 1-D input ``position`` matches ``data``'s dim ``axis`` (channels)."""
    spec = ctx.inputs[position].shape
    if spec.rank is not None and spec.rank != 1:
        ctx.fail(f"{name} must be 1-D, got shape {spec.brief()}", position=position)
    if spec.dims is None or data.dims is None or len(data.dims) <= axis:
        return
    d, c = spec.dims[0], data.dims[axis]
    if d.is_static and c.is_static and d.lo != c.lo:
        ctx.fail(f"{name} has {d.lo} elements, data has {c.lo} channels", position=position)


def batch_unless_reduced(reduced_of, what: str = "normalizes over the batch axis"):
    """A batch rule for shape-preserving ops whose data is input 0: the batch axis passes unless it is one
    of the axes ``reduced_of(params, inputs)`` returns (None: not known) or a parameter input has one too."""
    def rule(params, inputs, outputs, axes):
        b = axes[0]
        if any(a is not None for a in axes[1:]):
            return "a parameter input has a batch axis"
        if b is None:
            return [None] * len(outputs)
        reduced = reduced_of(params, inputs)
        if reduced is None or b in reduced:
            return what
        return [b] * len(outputs)
    return rule
