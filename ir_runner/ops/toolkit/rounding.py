"""Rounding to an integer value as the reference's C++ does: ``std::round`` (halves away from zero), the one
rounding the detection, image, colour and element-wise kernels share."""

from __future__ import annotations

import numpy as np


def round_half_away(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``std::round``/``std::roundf``: the nearest integer value, halves away from zero, in the type of ``x`` (a
    numpy scalar gives a 0-d array), into ``out`` when given (which may be ``x`` itself); NaN and infinities
    stay, zeros keep their sign. Exact for every value: the fraction ``x - trunc(x)`` is exact, where
    ``floor(|x| + 0.5)`` is not (in f32 it rounds 0.49999997 up to 1 and ``2**23 + 1`` up to ``2**23 + 2``:
    the sum rounds before the floor)."""
    x = np.asarray(x)
    whole = np.trunc(x, out=np.empty_like(x))
    with np.errstate(invalid="ignore"):  # (inf - inf: NaN, not a half)
        away = np.abs(x - whole) >= 0.5
    step = np.copysign(away.astype(x.dtype), whole)  # (trunc keeps x's sign, a zero's too)
    if out is None:
        out = whole
    else:
        np.copyto(out, whole)
    np.add(out, step, out=out, where=away)
    return out
