"""GroupedMatMul-17: several matrix products at once, as mixture-of-experts layers use them (OpenVINO 2026.4's
opset17). ``mat_b`` holds one ``[N, K]`` weight matrix per group (``[G, N, K]``), multiplied transposed:

- 3-D × 3-D: ``out[g] = mat_a[g] @ mat_b[g].T``, ``[G, M, K]`` × ``[G, N, K]`` -> ``[G, M, N]`` (an ``offsets``
  input is accepted and not used);
- 2-D × 3-D with ``offsets`` (1-D, i32/i64, cumulative row ends, one per group): the rows
  ``offsets[g-1]:offsets[g]`` of ``mat_a`` ``[T, K]`` times ``mat_b[g].T``, -> ``[T, N]``; rows past the last offset
  are 0.

Shapes as the installed OpenVINO infers them (2-D × 2-D, which newer sources describe, is refused by 2026.4.1).
No oracle exists in the wheel (no ``evaluate``, no CPU plugin kernel): tests compare with a direct computation.
Integers (two's complement wrapping, as C++'s ``T`` arithmetic) are exact; floats are computed in float64 and
rounded once, so each output is within ``K · u · Σ|a·b|`` of OpenVINO's reference, which accumulates in the
type (u: the type's unit roundoff, 2⁻²⁴ for f32, 2⁻¹¹ for f16, 2⁻⁸ for bf16). Offsets that decrease or pass
``T`` are an InputError.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, UnsupportedError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, PartialShape, TensorSpec, merge_dims
from ..api import NEWEST_OPSET, OpContext, OpDef
from ..toolkit.numeric import round_from_f64

NAMES = ("mat_a", "mat_b", "offsets")


def _merge(ctx: OpContext, a, b, what: str, position: int):
    merged = merge_dims(a, b)
    if merged is None:
        ctx.fail(f"{what} mismatch: mat_a has {a}, mat_b {b}", position=position)
    return merged


def infer_grouped_matmul(ctx: OpContext):
    et = ctx.common_element_type(0, 1)
    if et.kind in ("bool", "string") or et.is_packed:
        raise UnsupportedError(f"GroupedMatMul of {et}: ir-run computes float and integer types (OpenVINO's"
                               " reference evaluates f32, f16, bf16, i32 and i64)", layer=ctx.ref,
                               port=ctx.input_label(0))
    a, b = ctx.inputs[0].shape, ctx.inputs[1].shape
    if len(ctx.inputs) == 3:
        offsets = ctx.inputs[2]
        if offsets.element_type.name not in ("i32", "i64", "dynamic"):
            ctx.fail(f"offsets must be i32 or i64, got {offsets.element_type}", position=2)
        if offsets.shape.rank not in (None, 1):
            ctx.fail(f"offsets must be 1-D, got {offsets.shape.brief()}", position=2)
    if a.rank is None or b.rank is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], {}
    if (a.rank, b.rank) == (3, 3):
        groups = _merge(ctx, a.dims[0], b.dims[0], "the group dim (0)", 1)
        _merge(ctx, a.dims[2], b.dims[2], "the inner dim K (mat_a dim 2, mat_b dim 2)", 1)
        return [TensorSpec(et, PartialShape((groups, a.dims[1], b.dims[1])))], {}
    if (a.rank, b.rank) == (2, 3):
        if len(ctx.inputs) != 3:
            ctx.fail("the 2-D x 3-D case needs the offsets input (the rows of each group)")
        _merge(ctx, a.dims[1], b.dims[2], "the inner dim K (mat_a dim 1, mat_b dim 2)", 1)
        return [TensorSpec(et, PartialShape((a.dims[0], b.dims[1] if b.dims else DYNAMIC_DIM)))], {}
    ctx.fail(f"mat_a {a.brief()} and mat_b {b.brief()}: OpenVINO supports 2-D x 3-D and 3-D x 3-D", position=1)


def _product(a: np.ndarray, b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a @ b.T`` per leading group: integers in their own wrapping arithmetic, floats in float64 rounded once."""
    if dtype.kind in "iu":
        with np.errstate(over="ignore"):
            return np.matmul(a, np.swapaxes(b, -1, -2))
    wide = np.matmul(a.astype(np.float64), np.swapaxes(b.astype(np.float64), -1, -2))
    return wide if dtype == np.float64 else round_from_f64(wide, dtype)


def grouped_matmul(mat_a: np.ndarray, mat_b: np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
    """GroupedMatMul-17 (see the module docstring)."""
    if mat_a.ndim == 3:
        return _product(mat_a, mat_b, mat_a.dtype)
    rows = mat_a.shape[0]
    ends = np.asarray(offsets).astype(np.int64).reshape(-1)
    if ends.size > mat_b.shape[0]:
        raise InputError(f"offsets has {ends.size} groups, mat_b {mat_b.shape[0]}", port="input 2 (offsets)")
    starts = np.concatenate([[0], ends[:-1]])
    bad = np.flatnonzero((ends < starts) | (ends > rows))
    if bad.size:
        g = int(bad[0])
        raise InputError(f"offsets[{g}] = {int(ends[g])} must lie in [{int(starts[g])}, {rows}] (cumulative row ends"
                         " of mat_a)", port="input 2 (offsets)")
    out = np.zeros((rows, mat_b.shape[1]), mat_a.dtype)
    for g, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        if end > start:
            out[start:end] = _product(mat_a[start:end], mat_b[g], mat_a.dtype)
    return out


def _batch(params, inputs, outputs, axes):
    if inputs[0].shape.rank == 3 and axes[:2] == [0, 0] and (len(axes) < 3 or axes[2] is None):
        return [0]
    return "only the group axis 0 of 3-D x 3-D products keeps rows apart (offsets index mat_a's rows)"


OPS = (
    OpDef("GroupedMatMul", 17, 17, NEWEST_OPSET, NAMES, infer_grouped_matmul, grouped_matmul, min_inputs=2,
          roles=("data", "data", "data"), batch=_batch, exact=False),
)
