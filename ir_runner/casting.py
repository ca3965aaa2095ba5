"""One casting policy for data fed to a model, shared by ``Model.run(cast=...)`` and ``ir-run --cast``.

The levels, from strict to loose (each includes the ones before it):

- ``no``: no conversion; the array must have the input's dtype (``cast=None`` in the library).
- ``safe``: only conversions that keep every value of the source *type*: numpy's 'safe' for numpy's types;
  for the types numpy lacks (bf16, f8, i4, u4), every value of the source type is exact in the target
  (u8 -> bf16 is safe, u8 -> f8e4m3 is not).
- ``same_kind``: also conversions that keep every value of *this array*: booleans and integers into an
  integer or boolean type whose range holds them all (0 and 1 for boolean), integers and floats into a
  float type (rounded to nearest) when no finite value becomes infinite or NaN. Floats never become
  integers or booleans. The value checks are ir-run's: numpy's 'same_kind' would let int64 -> int32 wrap.
- ``unsafe``: whatever numpy's ``astype`` does (floats truncated toward zero, non-zero becomes True).
  A complex array is converted only under ``unsafe`` and only when every imaginary part is 0.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from .types import ElementType, element_type_of

LEVELS = ("no", "safe", "same_kind", "unsafe")


class CastRefused(Exception):
    """The level does not allow this conversion; ``str()`` says why (without naming the input)."""


def cast_array(array: np.ndarray, target: ElementType, level: str) -> np.ndarray:
    """``array`` as ``target.dtype`` when ``level`` allows it, else CastRefused. A TypeError from numpy
    (ml_dtypes has no int4 <-> uint4 conversion) is left to the caller."""
    dtype = target.dtype
    if array.dtype == dtype:
        return array
    if level not in LEVELS:
        raise ValueError(f"unknown cast level {level!r}")
    if array.dtype.kind == "c":
        if level != "unsafe":
            raise CastRefused("the IR has no complex element type")
        if np.any(array.imag):
            raise CastRefused("values with non-zero imaginary parts (the IR has no complex element type)")
        array = array.real
    if level == "no":
        raise CastRefused("no conversion is allowed")
    if level == "unsafe" or is_safe(array.dtype, dtype):
        return _astype(array, dtype)
    if level == "safe":
        raise CastRefused("some values of the type would change")
    return _same_kind(array, target)


def weakest_level(array: np.ndarray, target: ElementType) -> str | None:
    """The first level that converts ``array`` to ``target``, or None when none does."""
    for level in LEVELS:
        try:
            cast_array(array, target, level)
        except (CastRefused, TypeError):
            continue
        return level
    return None


def _same_kind(array: np.ndarray, target: ElementType) -> np.ndarray:
    source = element_type_of(array.dtype)
    src = source.kind if source is not None else {"b": "bool", "u": "uint", "i": "int", "f": "float"}.get(
        array.dtype.kind, "other")
    dst = target.kind
    if src not in ("bool", "int", "uint", "float"):
        raise CastRefused(f"{array.dtype} is not a number type")
    integral = ("bool", "int", "uint")
    if src == "float" and dst != "float":
        raise CastRefused(f"converting float to {_kind_word(dst)} may lose information")
    if src in integral and dst in integral:
        if array.size:
            lo, hi = integer_bounds(target)
            low, high = int(array.min()), int(array.max())
            if low < lo or high > hi:
                raise CastRefused(f"values in [{low}, {high}] are outside [{lo}, {hi}]")
        return _astype(array, target.dtype)
    converted = _astype(array, target.dtype)  # into a float type
    if src != "bool" and array.size:
        overflow = ~np.isfinite(converted.astype(np.float64) if converted.dtype.kind != "f" else converted)
        if src == "float":
            overflow &= np.isfinite(array)
        if overflow.any():
            value = array[overflow].reshape(-1)[0]
            raise CastRefused(f"values such as {value} do not fit (they would become inf or NaN)")
    return converted


def _kind_word(kind: str) -> str:
    return {"bool": "boolean", "uint": "int"}.get(kind, kind)


def integer_bounds(et: ElementType) -> tuple[int, int]:
    """The smallest and largest value of an integer or boolean element type."""
    if et.kind == "bool":
        return 0, 1
    if et.kind == "uint":
        return 0, 2**et.bits - 1
    return -(2 ** (et.bits - 1)), 2 ** (et.bits - 1) - 1


def _astype(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return array.astype(dtype)


def is_safe(source: np.dtype, target: np.dtype) -> bool:
    """numpy's ``can_cast(source, target, 'safe')``, except when either side is a type numpy lacks (bf16, f8,
    i4, u4): ml_dtypes declares u8 -> f8e4m3 (255 becomes 256) 'safe'; here 'safe' means every value of
    ``source`` is exact in ``target``."""
    if is_numpy_type(source) and is_numpy_type(target):
        return bool(np.can_cast(source, target, casting="safe"))
    return _holds_every_value(target, source)


def is_numpy_type(dtype: np.dtype) -> bool:
    """Whether numpy itself defines ``dtype`` (ml_dtypes' types are not numpy's)."""
    return dtype.type.__module__ == "numpy"  # ml_dtypes' kinds vary: bf16 'V', f8e5m2 'f'


def _kind(dtype: np.dtype) -> str:
    """numpy's kind letter (b, u, i or f), for ml_dtypes' types from their IR element type."""
    if is_numpy_type(dtype):
        return dtype.kind
    return {"bool": "b", "uint": "u", "int": "i", "float": "f"}[element_type_of(dtype).kind]


def _holds_every_value(target: np.dtype, source: np.dtype) -> bool:
    """Whether every value of ``source`` is exactly a value of ``target`` (NaN and infinities included)."""
    import ml_dtypes

    source_kind, target_kind = _kind(source), _kind(target)
    if source_kind == "b":
        return True
    if target_kind == "b" or (source_kind == "f" and target_kind != "f"):
        return False
    if source_kind != "f":
        low, high = int(ml_dtypes.iinfo(source).min), int(ml_dtypes.iinfo(source).max)
        if target_kind != "f":
            info = ml_dtypes.iinfo(target)
            return int(info.min) <= low and high <= int(info.max)
        info = ml_dtypes.finfo(target)  # integers up to 2**(nmant + 1) are exact
        return max(-low, high) <= min(2 ** (info.nmant + 1), float(info.max))
    have, want = ml_dtypes.finfo(target), ml_dtypes.finfo(source)
    return (have.nmant >= want.nmant and float(have.max) >= float(want.max)
            and float(have.smallest_subnormal) <= float(want.smallest_subnormal)
            and (_has_infinity(target) or not _has_infinity(source)))


def _has_infinity(dtype: np.dtype) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.isinf(np.array(np.inf).astype(dtype).astype(np.float64)))


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning raised by the function calling this one point at the first
    frame outside ir-run: the user's line."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level
