"""Convert-1: element type conversion with OpenVINO's reference rounding, wrapping and saturation.

The value rules (and the two documented deviations) live in ``convert_rules``; see its docstring
and ``docs/convert-semantics.md``.
"""

from __future__ import annotations

import functools

import numpy as np

from ...errors import UnsupportedError
from ...types import ElementType, TensorSpec, element_type_of
from ..api import NEWEST_OPSET, Attr, InputFit, KernelFn, OpContext, OpDef, keep_batch
from ..toolkit.convert_rules import convert_values


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


def convert(x: np.ndarray, *, dst: ElementType, src: ElementType | None = None,
            out: np.ndarray | None = None) -> np.ndarray:
    """``x`` converted to ``dst``: a new array, or ``out`` (the output's dtype and shape) filled in place.
    ``src`` is ``x``'s element type, needed when its dtype does not say it (nf4 codes are uint8); by default the
    type of ``x.dtype``.

    Conversions that are one numpy cast with the reference's result (same type: a copy; between
    full-width integers; integers to f32/f64; f32 <-> f64; integers and f32/f64 to boolean) write
    straight into the output; the others are computed by ``convert_values`` (then copied into ``out``).
    """
    if src is None or src == "dynamic":
        src = element_type_of(x.dtype)
    src_name = src.name if src is not None else str(x.dtype)
    how = _direct_kind(src_name, dst.name)
    if how is None:
        result = convert_values(x, src_name, dst.name, dst.dtype)
        if out is None:
            return result
        np.copyto(out, result)
        return out
    if out is None:
        out = np.empty(x.shape, dtype=dst.dtype)
    if src_name == "boolean":
        x = x.view(np.int8)  # the reference reads a boolean byte as a signed char
    with np.errstate(over="ignore", invalid="ignore"):
        if how == "truth":
            np.not_equal(x, 0, out=out)
        else:
            np.copyto(out, x, casting="unsafe")
    return out


convert.accepts_out = True


def prepare_convert(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts) -> KernelFn:
    """For static shapes: a conversion that is one numpy cast (see :func:`convert`) chosen once, run under the
    run's errstate (see runtime.execute); the others are :func:`convert`."""
    dst = params["dst"]
    src_name = inputs[0].element_type.name
    how = _direct_kind(src_name, dst.name)
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

_WHOLE_INTS = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})
_CAST_SOURCES = _WHOLE_INTS | {"boolean", "f32", "f64"}


def _direct_kind(src: str, dst: str) -> str | None:
    """'truth' (``x != 0``) or 'cast' (a numpy cast) when that is exactly the reference's conversion, else None.

    Integer casts wrap (two's complement) and extend by the source's signedness; integer -> float casts
    round to nearest even; f64 -> f32 rounds to nearest even and f32 -> f64 is exact (NaNs quietened by
    the hardware, as the reference's). Narrow floats, sub-byte integers and float -> integer need
    ``convert_rules``.
    """
    if src == dst and dst != "boolean":
        return "cast"  # a plain copy, every bit kept
    if src not in _CAST_SOURCES:
        return None
    if dst == "boolean":
        return "truth"
    if (src in _WHOLE_INTS or src == "boolean") and (dst in _WHOLE_INTS or dst in ("f32", "f64")):
        return "cast"
    if src in ("f32", "f64") and dst in ("f32", "f64"):
        return "cast"
    return None


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
