"""The C library's functions as OpenVINO's reference calls them on f32 values, bit for bit: ``expf`` (glibc's,
read through ctypes near rounding ties) and ``libm`` (a call computed in double and rounded to f32)."""

from __future__ import annotations

import numpy as np

F32 = np.float32
F64 = np.float64


def libm(fn: np.ufunc, x: np.ndarray) -> np.ndarray:
    """A C library call of the reference on f32 values (``logf``, ``tanhf``): computed in double, rounded to
    f32 (within 1 ULP of the C library's)."""
    return fn(x.astype(F64)).astype(F32)


_EXPF_NEAR_TIE = 0.4975
_F32_TINY = 2.0 ** -126  # below it expf's result is subnormal: its rounding drops more than 29 bits of a double
_DROPPED = np.int64((1 << 29) - 1)  # the bits of a double's significand that rounding to f32 drops
_TIE_WINDOW = round((1 - 2 * _EXPF_NEAR_TIE) / 2 * (1 << 29))  # 0.0025 ULP of f32, in ULPs of f64
_WINDOW_START = np.int64((1 << 28) - _TIE_WINDOW)  # the dropped bits at a rounding tie are 1 << 28
_WINDOW_SIZE = np.uint64(2 * _TIE_WINDOW)


def expf(x: np.ndarray) -> np.ndarray:
    """The C library's ``expf`` on f32 values, as the reference calls it: ``exp`` in double rounded to f32,
    except where that lies within 0.0025 ULP of a rounding tie (glibc's expf is off by up to 0.502 ULP, so only
    there can it round the other way), which take the C library's own ``expf`` element by element. The distance
    to a tie is read from the 29 bits of the double that rounding drops (subnormal results: from the f32
    spacing); infinities and NaNs (from f32 data) have none of them set, so they are never near a tie."""
    wide = np.exp(x.astype(F64))
    narrow = wide.astype(F32)
    c_expf = _c_expf()
    if c_expf is None or not narrow.size:
        return narrow
    dropped = wide.view(np.int64) & _DROPPED
    dropped -= _WINDOW_START
    near = dropped.view(np.uint64) < _WINDOW_SIZE  # |dropped - tie| < window, as one unsigned comparison
    tiny = wide < _F32_TINY
    if tiny.any():
        small, rounded = wide[tiny], narrow[tiny]
        near[tiny] = np.abs(small - rounded) > _EXPF_NEAR_TIE * np.spacing(np.abs(rounded)).astype(F64)
    if near.any():
        narrow[near] = [c_expf(v) for v in x[near].tolist()]
    return narrow


_C_EXPF: list = []


def _c_expf():
    """``expf`` of the C library (ctypes), or None where there is none to load."""
    if not _C_EXPF:
        import ctypes
        import ctypes.util

        try:
            libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
            function = libm.expf
            function.restype, function.argtypes = ctypes.c_float, [ctypes.c_float]
        except (OSError, AttributeError):
            function = None
        _C_EXPF.append(function)
    return _C_EXPF[0]
