"""Convert-1: element type conversion, with OpenVINO's reference rounding and wrapping rules.

- float -> integer truncates toward zero, then wraps modulo 2**bits (f32 -2.7 -> u8 254).
  NaN and values outside the int64 range (±inf included) are not defined by OpenVINO (platform values);
  ir-run makes them deterministic: NaN -> 0, +inf/too large -> the target's maximum, -inf/too small ->
  its minimum.
- integer -> integer wraps modulo 2**bits (numpy's astype).
- anything -> boolean: non-zero is true (NaN is true).
- integer -> f16 clamps to ±65504 (the reference does; float sources overflow to ±inf).
- float -> bf16 / f8 rounds to nearest even (ml_dtypes); the reference's truncation in some bf16 cases
  is a documented OpenVINO bug that ir-run does not copy.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..infer import OpContext
from ..types import ElementType, TensorSpec
from .registry import LATEST_OPSET, OpDef, register

_F16_MAX = 65504.0
_TWO_63 = 2.0**63


def infer_convert(ctx: OpContext):
    dst = ctx.attr_element_type("destination_type")
    if dst.kind in ("string", "dynamic") or ctx.inputs[0].element_type.kind == "string":
        raise UnsupportedError(
            f"Convert from {ctx.inputs[0].element_type} to {dst} is not supported", layer=ctx.ref
        )
    return [TensorSpec(dst, ctx.inputs[0].shape)], {"dst": dst}


def convert(x: np.ndarray, *, dst: ElementType) -> np.ndarray:
    """Convert ``x`` to ``dst`` with the rules in the module docstring; always a new array."""
    src_kind = x.dtype.kind
    is_float = src_kind == "f" or (src_kind == "V" or x.dtype.type.__module__ == "ml_dtypes") and _is_ml_float(x)
    if dst.kind == "bool":
        return x != 0
    if dst.kind in ("int", "uint") and is_float:
        return _float_to_integer(x, dst)
    if dst.name == "f16" and src_kind in "iu":
        return np.clip(x, -_F16_MAX, _F16_MAX).astype(np.float16) if x.size else x.astype(np.float16)
    return x.astype(dst.dtype, copy=True)


def _is_ml_float(x: np.ndarray) -> bool:
    return np.dtype(x.dtype).name in ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def _float_to_integer(x: np.ndarray, dst: ElementType) -> np.ndarray:
    wide = np.trunc(x.astype(np.float64))
    info = np.iinfo(np.int8 if dst.bits < 8 else dst.dtype) if dst.name not in ("i4", "u4", "u1") else None
    nan = np.isnan(wide)
    too_big = wide >= _TWO_63
    too_small = wide < -_TWO_63
    safe = np.where(nan | too_big | too_small, 0.0, wide)
    if dst.name == "u64":
        result = np.where(safe < 0, safe.astype(np.int64).view(np.uint64), 0)
        high = safe >= 0
        result = np.where(high, safe.astype(np.uint64), result)
        big_fit = too_big & (wide < 2.0**64)
        result = np.where(big_fit, np.where(big_fit, wide, 0).astype(np.uint64), result)
        result = np.where(wide >= 2.0**64, np.uint64(2**64 - 1), result)
        return result.astype(np.uint64)
    result = safe.astype(np.int64)
    if info is not None:
        result = np.where(too_big, info.max, np.where(too_small, info.min, result))
    return result.astype(dst.dtype)


CONVERT = register(OpDef("Convert", 1, 1, LATEST_OPSET, ("data",), infer_convert, convert))
