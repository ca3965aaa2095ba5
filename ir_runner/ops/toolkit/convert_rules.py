"""The value rules of Convert-1, as OpenVINO's core reference computes them (measured on x86-64).

See ``docs/convert-semantics.md`` for the measurements. Summary:

- float -> integer: ``cvtt`` semantics (truncate toward zero; NaN, ±inf and values outside the signed
  range give the "integer indefinite" ``-2**(bits-1)``) in 64 bits for i64/u64/u32 and 32 bits for
  i32 and narrower, then the low bits are kept (wrap). u64 above 2**63 goes through ``x - 2**63``.
  Deviation (documented): OpenVINO's f32 -> u32 gives position-dependent values outside
  ``[-2**31, 2**32)``; ir-run always takes the 64-bit rule.
- integer -> integer wraps; integer -> float rounds to nearest even (once, through f32 for the narrow
  floats); only i32 -> f16 clamps to ±65504, other integers overflow to ±inf.
- f32/bf16 -> f16: round to nearest even, NaN quietened. f64 -> f16 and anything -> f8 go through
  OpenVINO's software f16 conversion, whose subnormal rounding quirk is reproduced.
- -> bf16: round to nearest even from the f32 value, with ml_dtypes (NaNs become its quiet NaN).
  Deviation (documented in semantics.md, which prescribes ml_dtypes' rounding): the reference truncates
  when bit 16 is 0 and the dropped half exceeds 0x8000, and keeps (or, for some payloads, loses) NaN bits.
- -> boolean: ``x != 0`` (NaN is true). boolean -> numbers reads the byte as a signed char.
- f16 -> f32/f64 and f32 -> f64 quieten NaNs, keeping sign and payload.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...types import (
    ELEMENT_TYPES,  # (their .dtype imports ml_dtypes on first use, not at start-up)
    ElementType,
    element_type_of,
)

_NARROW_FLOATS = ("f16", "bf16", "f8e4m3", "f8e5m2", "f8e8m0", "f4e2m1", "nf4")


def convert_values(x: np.ndarray, src: str, dst: str, dst_dtype: np.dtype) -> np.ndarray:
    """``x`` (element type ``src``) converted to ``dst``; a new array of ``dst_dtype`` and ``x``'s shape."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = _convert(np.asarray(x).reshape(-1), src, dst)
    return np.asarray(result).astype(dst_dtype, copy=False).reshape(np.shape(x))


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
    how = direct_kind(src_name, dst.name)
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


_WHOLE_INTS = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})
_CAST_SOURCES = _WHOLE_INTS | {"boolean", "f32", "f64"}


def direct_kind(src: str, dst: str) -> str | None:
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


def _convert(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    original = x
    if src == "boolean":
        x, src_kind = x.view(np.int8), "int"
    elif src[0] in "iu":
        src_kind = "int"
    else:
        src_kind = "float"
        if src in _NARROW_FLOATS:
            x = to_f32_value(x, src)
    if dst == "boolean":
        return x != 0
    if dst[0] in "iu":
        if src_kind == "int":
            return _wrap(x.astype(np.uint64) if src == "u64" else x.astype(np.int64), dst)
        return float_to_int(x, dst)
    if src_kind == "int":
        return _int_to_float(x, src, dst)
    if src == "f64":
        if dst == "f64":
            return x.copy()
        f32 = x.astype(np.float32)
        return f32 if dst == "f32" else (f32_to_f16_sw(f32) if dst == "f16" else _from_f32(f32, dst))
    return _narrow_float_to_float(x, original, src, dst)


def _int_to_float(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    if dst == "f64":
        return x.astype(np.float64)
    f32 = x.astype(np.float32)
    if dst == "f32":
        return f32
    if dst == "f16":
        if src == "i32":
            f32 = np.clip(f32, -65504.0, 65504.0)
        return f32.astype(np.float16)
    return _from_f32(f32, dst)


def _narrow_float_to_float(x: np.ndarray, original: np.ndarray, src: str, dst: str) -> np.ndarray:
    """``x`` is f32 here (narrow sources already widened exactly)."""
    if dst == "f64":
        return x.astype(np.float64)
    if dst == "f32":
        return quiet_nan32(x) if src == "f16" else x.copy()
    if dst == "f16":
        if src in ("f32", "bf16"):
            return f32_to_f16_hw(x)
        if src == "f8e5m2":
            return (np.ascontiguousarray(original).view(np.uint8).astype(np.uint16) << 8).view(np.float16)
        return f32_to_f16_sw(x)
    return _from_f32(x, dst)


def _from_f32(f32: np.ndarray, dst: str) -> np.ndarray:
    if dst == "bf16":
        return f32.astype(ELEMENT_TYPES["bf16"].dtype)
    if dst == "f8e4m3":
        return f32_to_f16_sw(f32).astype(ELEMENT_TYPES["f8e4m3"].dtype)
    if dst == "f8e5m2":
        return f16_to_f8e5m2(f32_to_f16_sw(f32))
    if dst == "f16":
        return f32_to_f16_sw(f32)
    raise ValueError(f"no conversion from f32 to {dst}")


_NUMPY_INT = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32,
              "i32": np.int32, "u64": np.uint64, "i64": np.int64}


def _wrap(v: np.ndarray, dst: str) -> np.ndarray:
    """Two's-complement wrap of an int64/uint64 array to ``dst``'s width (sub-byte types unpacked)."""
    bits = ELEMENT_TYPES[dst].bits
    if bits < 8:
        low = (v.astype(np.uint64) & np.uint64((1 << bits) - 1)).astype(np.int16)
        return ((low ^ 8) - 8).astype(np.int8) if dst == "i4" else low.astype(np.uint8)
    return v.astype(_NUMPY_INT[dst])


def cvtt(x: np.ndarray, bits: int) -> np.ndarray:
    """x86 CVTTSS2SI/CVTTSD2SI: truncate toward zero; NaN, ±inf and results outside the signed
    ``bits``-wide range give ``-2**(bits-1)``. Returns int64."""
    t = np.trunc(x)  # exact in x's own float type, as are the limits (powers of two)
    limit = float(2 ** (bits - 1))
    outside = ~((t >= -limit) & (t < limit))  # NaN too
    result = x.astype(np.int64)  # truncates every value in range; the others are overwritten
    result[outside] = -(2 ** (bits - 1))
    return result


def float_to_int(x: np.ndarray, dst: str) -> np.ndarray:
    """``static_cast<integer>(float)`` as compiled in OpenVINO's x86-64 build (see module docstring)."""
    if dst == "i64":
        return cvtt(x, 64)
    if dst == "u64":
        wide = x.astype(np.float64)
        high = wide >= 2.0**63
        low_part = cvtt(np.where(high, 0.0, wide), 64).view(np.uint64)
        high_part = cvtt(np.where(high, wide - 2.0**63, 0.0), 64).view(np.uint64) ^ np.uint64(1 << 63)
        return np.where(high, high_part, low_part)
    if dst == "u32":
        return cvtt(x, 64).astype(np.uint32)
    return _wrap(cvtt(x, 32), dst)


def to_f32_value(x: np.ndarray, src: str) -> np.ndarray:
    """The f32 value of a narrow float, as OpenVINO widens it (f16 NaNs keep their payload unquietened)."""
    if src == "f16":
        widened = x.astype(np.float32)
        nan = np.isnan(x)
        if nan.any():
            bits = np.ascontiguousarray(x).view(np.uint16)[nan].astype(np.uint32)
            widened.view(np.uint32)[nan] = ((bits & 0x8000) << 16) | 0x7F800000 | ((bits & 0x3FF) << 13)
        return widened
    if src == "f8e5m2":
        return to_f32_value((np.ascontiguousarray(x).view(np.uint8).astype(np.uint16) << 8).view(np.float16), "f16")
    table = ELEMENT_TYPES[src].table
    if table is not None:  # nf4: codes stand for the table's values
        return table[x]
    return x.astype(np.float32)


def quiet_nan32(f: np.ndarray) -> np.ndarray:
    """Set the quiet bit of f32 NaNs (what the hardware widening instructions do)."""
    bits = f.view(np.uint32).copy()
    nan = np.isnan(f)
    if nan.any():
        bits[nan] |= 0x00400000
    return bits.view(np.float32)


def _f32_bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def f32_to_f16_hw(x32: np.ndarray) -> np.ndarray:
    """VCVTPS2PH: round to nearest even, overflow to inf, NaN quietened with its top payload kept."""
    half = np.ascontiguousarray(x32, dtype=np.float32).astype(np.float16).view(np.uint16).copy()
    bits = _f32_bits(x32)
    nan = np.isnan(x32)
    half[nan] = ((bits[nan] >> 16) & 0x8000) | 0x7E00 | ((bits[nan] >> 13) & 0x3FF)
    return half.view(np.float16)


def f32_to_f16_sw(x32: np.ndarray) -> np.ndarray:
    """OpenVINO's software ``float16(float)``, bit for bit.

    Round to nearest even, overflow to inf, f32 subnormals to ±0, NaN keeps its top 10 payload bits
    without quietening (payload 0 becomes 1). Quirk reproduced: when rounding carries into the exponent
    and the result is an f16 subnormal, the subnormal is computed from the unrounded mantissa with the
    bumped exponent (f32 just below 2**-15 gives 2**-14).
    """
    u = _f32_bits(x32).astype(np.int64)
    sign = u & 0x80000000
    exp32 = u & 0x7F800000
    frac = (u & 0x7FFFFF) << 3
    nan_payload = frac & 0x03FF0000
    nan_payload = np.where(nan_payload == 0, 0x10000, nan_payload)
    nan_or_inf = (sign | 0x7C000000 | np.where(frac != 0, nan_payload, 0)) >> 16
    biased = (exp32 >> 23) - 127 + 15
    round_up = ((frac & 0x1FFFF) == 0x18000) | ((frac & 0x7FFF) != 0)
    rounded = np.where(round_up, frac + 0x8000, frac)
    carry = (rounded & 0x7C000000) != 0
    rounded = np.where(carry, rounded & 0x7C000000, rounded) & 0x03FF0000
    biased = biased + carry
    normal = (sign | (np.clip(biased, 0, 31) << 26) | rounded) >> 16
    infinity = (sign | 0x7C000000) >> 16
    sub_frac = 0x04000000 | ((u & 0x7FFFFF) << 3)
    shift = 1 - biased
    mask = np.where(biased < -30, 0xFFFFFFFF, (np.int64(1) << np.clip(shift, 0, 62)) - 1)
    sticky = (sub_frac & mask) != 0
    sub_frac = np.where(shift > 31, 0, sub_frac >> np.clip(shift, 0, 62)) | sticky
    round_up = ((sub_frac & 0x1FFFF) == 0x18000) | ((sub_frac & 0x7FFF) != 0)
    subnormal = (sign | np.where(round_up, sub_frac + 0x8000, sub_frac)) >> 16
    out = np.where(biased > 30, infinity, np.where(biased > 0, normal, subnormal))
    out = np.where(exp32 == 0x7F800000, nan_or_inf, np.where(exp32 == 0, sign >> 16, out))
    return out.astype(np.uint16).view(np.float16)


def f16_to_f8e5m2(half: np.ndarray) -> np.ndarray:
    """OpenVINO's f16 -> f8e5m2: round to nearest even on the f16 bits (a carry may reach inf);
    inf/NaN keep only their top byte (NaN 0x7C01..0x7CFF becomes inf)."""
    v = np.ascontiguousarray(half, dtype=np.float16).view(np.uint16).astype(np.uint32)
    finite = (v & 0x7C00) != 0x7C00
    round_up = ((v & 0xFF) > 0x80) | ((v & 0x180) == 0x180)
    v = np.where(finite & round_up, v + 0x100, v) & 0xFF00
    return (v >> 8).astype(np.uint8).view(ELEMENT_TYPES["f8e5m2"].dtype)


def bf16_as_openvino_rounds(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """f32 -> bf16 as OpenVINO's ``bfloat16`` class converts (its reference computes bf16 arithmetic in f32 and
    converts each result so): ``(bits + ((bits & 0x10000) >> 1)) >> 16``, which
    rounds half up when the kept last bit is 1 and truncates when it is 0 (not round-to-nearest-even:
    1 + 0.75 ULP gives 1)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + ((bits & np.uint32(0x10000)) >> np.uint32(1))) >> np.uint32(16)
    return rounded.astype(np.uint16).view(dtype)
