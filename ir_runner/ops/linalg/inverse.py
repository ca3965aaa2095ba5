"""Inverse-14: the inverse of each square matrix in the last two axes; ``adjoint=true``: the inverse of its
adjoint (conjugate transpose), that is the inverse transposed, as the specification says and the CPU plugin
computes (OpenVINO's core reference code multiplies the inverse by ``det(A)`` instead, the adjugate; the wheel
never runs it: it has no evaluate).

Inference as OpenVINO's: a floating-point data of rank >= 2 whose last two dims, when both static, are equal; the
output has the data's shape (OpenVINO does not merge the two dims when one is dynamic) and type.

Values (``exact=False``): the reference's algorithm (LU with partial pivoting, the first largest ``|pivot|``,
then forward and backward substitution per unit column) run in float64 over the whole batch at once and rounded
once to the type, where the reference works in the type itself. Bound: within ``n · cond(A) · eps(type)``
relative to the largest element of the result (tests/ops/test_inverse.py measures 1e-5 relative at f32 on
well-conditioned matrices against the CPU plugin, which computes f64 in f32; the wheel has no reference
evaluate). A singular matrix
divides by a zero pivot as the reference does: infinities and NaNs, no error.
"""

from __future__ import annotations

import numpy as np

from ...types import TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.convert_rules import bf16_as_openvino_rounds


def infer_inverse(ctx: OpContext):
    data = ctx.inputs[0]
    adjoint = ctx.attr_bool("adjoint", False)
    if data.element_type.kind not in ("float", "dynamic") or data.element_type.dtype is None:
        ctx.fail(f"data must have a floating-point type, got {data.element_type}", position=0)
    if data.shape.rank is not None:
        if data.shape.rank < 2:
            ctx.fail(f"data must have rank 2 or more (matrices), got {data.shape.brief()}", position=0)
        rows, cols = data.shape.dims[-2:]
        if rows.is_static and cols.is_static and rows.lo != cols.lo:
            ctx.fail(f"the matrices must be square, got {rows.lo}x{cols.lo}", position=0)
    return [TensorSpec(data.element_type, data.shape)], {"adjoint": adjoint}


def _lu_inverse(a: np.ndarray) -> np.ndarray:
    """``inverse(A)`` of a batch ``[B, n, n]`` of float64 matrices, by the reference's steps."""
    batch, n = a.shape[0], a.shape[-1]
    u = a.copy()
    lower = np.zeros_like(u)
    perm = np.broadcast_to(np.arange(n), (batch, n)).copy()
    rows = np.arange(batch)
    for k in range(n):
        column = np.abs(u[:, k:, k])
        column = np.where(np.isnan(column), -1.0, column)  # (NaN never wins a comparison)
        pivot = k + np.argmax(column, axis=1)  # (the first largest)
        swap = pivot != k
        if swap.any():
            for matrix in (u, lower):
                kept = matrix[rows, k].copy()
                matrix[rows, k] = matrix[rows, pivot]
                matrix[rows, pivot] = kept
            kept = perm[rows, k].copy()
            perm[rows, k] = perm[rows, pivot]
            perm[rows, pivot] = kept
        if k + 1 < n:
            factors = u[:, k + 1:, k] / u[:, k:k + 1, k]
            lower[:, k + 1:, k] = factors
            u[:, k + 1:, k:] -= factors[:, :, None] * u[:, None, k, k:]
    # Forward substitution L·Y = P·I (L's diagonal taken as 1, as the reference's identity start), then U·X = Y.
    y = np.zeros((batch, n, n))
    y[rows[:, None], np.arange(n)[None, :], perm] = 1.0
    for i in range(n):
        if i:
            y[:, i] -= np.einsum("bj,bjc->bc", lower[:, i, :i], y[:, :i])
    x = np.zeros_like(y)
    for i in range(n - 1, -1, -1):
        x[:, i] = y[:, i]
        if i + 1 < n:
            x[:, i] -= np.einsum("bj,bjc->bc", u[:, i, i + 1:], x[:, i + 1:])
        x[:, i] /= u[:, i, i:i + 1]
    return x


def inverse(data: np.ndarray, *, adjoint: bool) -> np.ndarray:
    """Inverse-14 (bounded, see the module docstring): float64 LU with partial pivoting, rounded once;
    ``adjoint``: transposed."""
    shape, n = data.shape, data.shape[-1] if data.ndim else 0
    if data.size == 0:
        return np.empty(shape, data.dtype)
    matrices = data.reshape(-1, n, n).astype(np.float64)
    with np.errstate(all="ignore"):
        result = _lu_inverse(matrices)
    if adjoint:
        result = result.transpose(0, 2, 1)
    result = result.reshape(shape)
    if data.dtype.kind == "V":
        return bf16_as_openvino_rounds(result.astype(np.float32), data.dtype)
    return result.astype(data.dtype)


def _batch_rule(params, inputs, outputs, axes):
    axis, rank = axes[0], inputs[0].shape.rank
    if axis is None:
        return [None]
    if rank is None:
        return "a dynamic rank hides whether the batch axis is a matrix axis"
    return [axis] if axis < rank - 2 else "the batch axis is a matrix axis"


OPS = (
    OpDef("Inverse", 14, 14, LATEST_OPSET, ("data",), infer_inverse, inverse,
          attrs=(Attr("adjoint", "false", ("true", "false")),), batch=_batch_rule, exact=False),
)
