"""Range-1/4: ``start, start + step, ...`` up to ``stop``.

The element count is OpenVINO's ``shape_infer`` in double precision (``ceil(|stop - start| / |step|)``, 0 when
the span has the wrong sign; integer outputs truncate the three values first); its values are the reference's:
``start + T(i) * step`` for floats, with start and step read as f32 (not rounded to T first), f32 arithmetic and
one rounding to T at the end for f16/bf16; ``start + i * step`` wrapping for integers. The reference has no
Range-1 for f16 (Range-4 has). A zero step is refused (OpenVINO's Range-4 shape inference divides by it).
"""

from __future__ import annotations

import math

import numpy as np

from ...types import DYNAMIC_DIM, ElementType, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef


def _scalar(ctx: OpContext, position: int) -> float | None:
    value = ctx.const_value(position)
    if value is None:
        return None
    if value.size != 1:
        ctx.fail(f"{ctx.op.input_names[position]} must have one element, it has {value.size}", position=position)
    number = float(value.reshape(-1)[0].astype(np.float64))
    if not math.isfinite(number):
        ctx.fail(f"{ctx.op.input_names[position]} cannot be NaN or infinite", position=position)
    return number


def _infer_range(ctx: OpContext, version: int):
    for i, name in enumerate(("start", "stop", "step")):
        spec = ctx.inputs[i]
        if spec.shape.rank not in (None, 0) and not (spec.shape.is_static and spec.shape.to_shape() == (1,)):
            ctx.fail(f"{name} must be a scalar, got shape {spec.shape.brief()}", position=i)
        if spec.element_type.kind in ("bool", "string"):
            ctx.fail(f"{name} must be a number, got {spec.element_type}", position=i)
    if version == 4:
        et = ctx.attr_element_type("output_type")
        if et.kind not in ("int", "uint", "float") or et.bits < 8:
            ctx.fail(f"output_type must be a numeric type, got {et}")
    else:
        types = {spec.element_type for spec in ctx.inputs if spec.element_type.kind != "dynamic"}
        if len(types) > 1:
            ctx.fail(f"start, stop and step must have one element type, got {', '.join(sorted(map(str, types)))}")
        et = types.pop() if types else ctx.inputs[0].element_type
    start, stop, step = (_scalar(ctx, i) for i in range(3))
    if step is not None and step == 0:
        ctx.fail("step cannot be zero", position=2)
    if start is None or stop is None or step is None:
        return [TensorSpec(et, PartialShape((DYNAMIC_DIM,)))], {"count": None, "start": None, "step": None}
    params = _counted(et, start, stop, step)
    if params is None:
        ctx.fail("step is zero once truncated to the integer output type", position=2)
    return [TensorSpec(et, PartialShape.of((params["count"],)))], params


def _counted(et: ElementType, start: float, stop: float, step: float) -> dict | None:
    """The kernel's count, start and step for an output of ``et`` (see the module); None when an integer
    output truncates the step to 0."""
    if et.kind in ("int", "uint"):
        start, stop, step = math.trunc(start), math.trunc(stop), math.trunc(step)
        if step == 0:
            return None
    span = 0.0 if (step > 0 and start >= stop) or (step < 0 and start <= stop) else float(stop) - float(start)
    return {"count": int(math.ceil(abs(span) / abs(float(step)))), "start": start, "step": step}


def _range_at_run(ctx: OpContext, arrays: tuple[np.ndarray, ...]) -> dict | None:
    """Range-4's parameters for known arrays (``OpDef.at_run``) in the plain cases: three finite numeric
    scalars (or 1-element 1-D arrays), a non-zero step, a numeric ``output_type``."""
    if any(array.size != 1 or array.ndim > 1 or array.dtype.kind not in "iuf" for array in arrays):
        return None
    et = ctx.attr_element_type("output_type")
    start, stop, step = (float(array.reshape(-1)[0].astype(np.float64)) for array in arrays)
    if et.kind not in ("int", "uint", "float") or et.bits < 8 or step == 0 or not all(
            map(math.isfinite, (start, stop, step))):
        return None
    params = _counted(et, start, stop, step)
    if params is not None:
        params["dtype"] = et.dtype
    return params


def range_kernel(start_input: np.ndarray, stop_input: np.ndarray, step_input: np.ndarray, *, count: int,
                 start: float, step: float, dtype: np.dtype) -> np.ndarray:
    """``count`` values ``start + i * step`` computed as the reference does for the output type."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        index = np.arange(count, dtype=np.uint64)
        with np.errstate(over="ignore"):
            wrapped = np.uint64(int(start) % (1 << 64)) + index * np.uint64(int(step) % (1 << 64))
        return wrapped.astype(np.dtype(f"u{dtype.itemsize}")).view(dtype) if bits < 64 else wrapped.view(dtype)
    if dtype.itemsize == 8:
        start_t, step_t = np.float64(start), np.float64(step)
        index = np.arange(count, dtype=np.float64)
    else:  # f32, f16, bf16: start and step as f32 (not rounded to T), f32 arithmetic, one rounding to T
        start_t, step_t = np.float32(start), np.float32(step)
        index = np.arange(count, dtype=np.float64).astype(dtype).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        return (index * step_t + start_t).astype(dtype)


def _prepare_params(version: int):
    def infer(ctx: OpContext):
        outs, params = _infer_range(ctx, version)
        params["dtype"] = outs[0].element_type.dtype
        return outs, params
    return infer


def _value_range(ctx: OpContext):
    return [None]

OPS = (
    OpDef("Range", 1, 1, 3, ("start", "stop", "step"), _prepare_params(1), range_kernel, value=_value_range),
    OpDef("Range", 4, 4, LATEST_OPSET, ("start", "stop", "step"), _prepare_params(4), range_kernel,
          value=_value_range, attrs=(Attr("output_type"),), at_run=_range_at_run),
)
