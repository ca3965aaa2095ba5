"""Rounding to an integer value as the reference's C++ does: ``std::round`` (halves away from zero), the one
rounding the detection, image and colour kernels share."""

from __future__ import annotations

import numpy as np


def round_half_away(x: np.ndarray) -> np.ndarray:
    """``std::round``/``std::roundf``: the nearest integer value, halves away from zero, in the type of ``x`` (a
    numpy scalar gives a 0-d array); NaN and infinities stay. Exact for every value: the fraction
    ``x - trunc(x)`` is exact, where ``floor(|x| + 0.5)`` is not (in f32 it rounds 0.49999997 up to 1 and
    ``2**23 + 1`` up to ``2**23 + 2``: the sum rounds before the floor)."""
    x = np.asarray(x)
    whole = np.trunc(x)
    with np.errstate(invalid="ignore"):  # (inf - inf: NaN, not a half)
        return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole).astype(x.dtype, copy=False)
