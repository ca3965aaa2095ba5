"""Convert-1: element type conversion with OpenVINO's reference rounding, wrapping and saturation.

The value rules (and the two documented deviations) live in ``convert_rules``; see its docstring
and ``docs/convert-semantics.md``.
"""

from __future__ import annotations

import functools

import numpy as np

from ...errors import UnsupportedError
from ...types import TensorSpec
from ..api import NEWEST_OPSET, Attr, InputFit, KernelFn, OpContext, OpDef, keep_batch
from ..toolkit.convert_rules import convert, direct_kind


def infer_convert(ctx: OpContext):
    dst = ctx.attr_element_type("destination_type")
    src = ctx.inputs[0].element_type
    if dst.kind in ("string", "dynamic") or src.kind == "string" or dst.name in _UNWRITTEN:
        raise UnsupportedError(f"Convert from {src} to {dst} is not supported", layer=ctx.ref,
                               hint="ir-run reads weights compressed to nf4, f4e2m1 and f8e8m0, but does not"
                                    " compress to them" if dst.name in _UNWRITTEN else None)
    return [TensorSpec(dst, ctx.inputs[0].shape)], {"dst": dst, "src": src}


_UNWRITTEN = frozenset({"nf4", "f4e2m1", "f8e8m0"})
"""Compressed float types Convert reads but does not write (OpenVINO's rounding to them is not reproduced)."""


def prepare_convert(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts) -> KernelFn:
    """For static shapes: a conversion that is one numpy cast (see :func:`convert`) chosen once, run under the
    run's errstate (see runtime.execute); the others are :func:`convert`."""
    dst = params["dst"]
    src_name = inputs[0].element_type.name
    how = direct_kind(src_name, dst.name)
    if how is None:
        return functools.partial(convert, dst=dst, src=params.get("src"))
    dtype = dst.dtype
    as_bytes = src_name == "boolean"  # the reference reads a boolean byte as a signed char
    if how == "truth":
        def truth(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
            return np.not_equal(x.view(np.int8) if as_bytes else x, 0, out=out)

        truth.accepts_out = True
        return truth

    def cast(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if as_bytes:
            x = x.view(np.int8)
        if out is None:
            return x.astype(dtype, order="C")
        np.copyto(out, x, casting="unsafe")
        return out

    cast.accepts_out = True
    return cast


def _value(ctx: OpContext) -> list:
    """The input's partial value carried through (OpenVINO's Convert bound evaluation): to an integer type
    when every known bound fits it (an unbounded upper stays unbounded); to a float type when every element
    is exact (the folder then converts the values)."""
    value = ctx.partial_value(0)
    dst = ctx.attr_element_type("destination_type")
    if value is None or dst.kind not in ("int", "uint", "float") or dst.bits < 8:
        return [None]
    if dst.kind == "float":
        return [value if all(d.lo == d.hi for d in value) else None]
    info = np.iinfo(dst.dtype)
    if all(info.min <= d.lo and (d.hi is None or d.hi <= info.max) for d in value):
        return [value]
    return [None]


def _fit_convert(params, inputs, position: int) -> InputFit:
    """Data converted to boolean counts only as zero or not (an attention mask): 0/1; else whatever fits what
    the output feeds."""
    if params["dst"].kind == "bool":
        return InputFit("cond", 0, 1, "converted to boolean, only zero or not counts")
    return InputFit("through")


OPS = (
    OpDef("Convert", 1, 1, NEWEST_OPSET, ("data",), infer_convert, convert, prepare_convert,
          attrs=(Attr("destination_type"),), fit=_fit_convert, value=_value, batch=keep_batch),
)
