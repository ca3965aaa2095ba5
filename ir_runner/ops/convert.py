"""Convert-1: element type conversion with OpenVINO's reference rounding, wrapping and saturation.

The value rules (and the two documented deviations) live in ``convert_rules``; see its docstring
and ``docs/convert-semantics.md``.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..infer import OpContext
from ..types import ElementType, TensorSpec, element_type_of
from .convert_rules import convert_values
from .registry import LATEST_OPSET, OpDef, register


def infer_convert(ctx: OpContext):
    dst = ctx.attr_element_type("destination_type")
    src = ctx.inputs[0].element_type
    if dst.kind in ("string", "dynamic") or src.kind == "string":
        raise UnsupportedError(f"Convert from {src} to {dst} is not supported", layer=ctx.ref)
    return [TensorSpec(dst, ctx.inputs[0].shape)], {"dst": dst}


def convert(x: np.ndarray, *, dst: ElementType) -> np.ndarray:
    """``x`` converted to ``dst``; always a new array."""
    src = element_type_of(x.dtype)
    if src is not None and src.name == dst.name and dst.kind != "bool":
        return x.copy()
    return convert_values(x, src.name if src is not None else str(x.dtype), dst.name, dst.dtype)


register(OpDef("Convert", 1, 1, LATEST_OPSET, ("data",), infer_convert, convert))
