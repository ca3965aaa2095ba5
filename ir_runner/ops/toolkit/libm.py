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
_X_TINY = F32(-87.33)  # above ln(2^-126) = -87.3365: exp of any f32 value from it on is not subnormal
_DROPPED = np.int64((1 << 29) - 1)  # the bits of a double's significand that rounding to f32 drops
_TIE_WINDOW = round((1 - 2 * _EXPF_NEAR_TIE) / 2 * (1 << 29))  # 0.0025 ULP of f32, in ULPs of f64
_WINDOW_START = np.int64((1 << 28) - _TIE_WINDOW)  # the dropped bits at a rounding tie are 1 << 28
_WINDOW_SIZE = np.uint64(2 * _TIE_WINDOW)
_TOP_18 = np.int64((1 << 18) - 1)  # the significand's top 18 bits, below the implicit 1
EXPF_BLOCK = 1 << 15  # elements per block: its double, bits and mask (0.5 MB) stay in a core's L2


def expf(x: np.ndarray) -> np.ndarray:
    """The C library's ``expf`` on f32 values, as the reference calls it: ``exp`` in double rounded to f32,
    except where that lies near a rounding tie, which take the C library's own ``expf`` element by element.
    Near: within 1.75·2^-34 of the value (glibc's expf computes a double within 1.69·2^-34 relative error
    before rounding, so only there can it round the other way; at most 0.0017 ULP of f32); subnormal results:
    within 0.0025 ULP of f32 (its spacing). The distance to a tie is read from the 29 bits of the double that
    rounding drops, first against the widest window (0.0025 ULP) and then, for those inside, against the
    relative bound; infinities and NaNs (from f32 data) have none of them set, so they are never near a tie.

    Computed in blocks of EXPF_BLOCK elements through reused buffers (the double, its bits, the mask), so that
    no full-size double temporary is allocated (whose page faults cost more than the ``exp``) and every pass
    reads from cache."""
    x = np.asarray(x, dtype=F32)
    narrow = np.empty(x.shape, dtype=F32)
    flat_x, flat = x.reshape(-1), narrow.reshape(-1)
    c_expf = _c_expf()
    size = min(flat.size, EXPF_BLOCK)
    wide, bits, mask = np.empty(size, F64), np.empty(size, np.int64), np.empty(size, bool)
    for start in range(0, flat.size, EXPF_BLOCK):
        stop = min(start + EXPF_BLOCK, flat.size)
        count = stop - start
        w, b, n, out = wide[:count], bits[:count], mask[:count], flat[start:stop]
        np.copyto(w, flat_x[start:stop])
        np.exp(w, out=w)
        np.copyto(out, w, casting="same_kind")
        if c_expf is None:
            continue
        np.bitwise_and(w.view(np.int64), _DROPPED, out=b)
        np.subtract(b, _WINDOW_START, out=b)
        np.less(b.view(np.uint64), _WINDOW_SIZE, out=n)  # |dropped - tie| < window, as one unsigned comparison
        near = np.flatnonzero(n)
        if near.size:  # within glibc's relative error of the tie: 1.75·2^-34 of the value, in f64 ULPs
            distance = np.abs(b[near] - _TIE_WINDOW)
            significand = ((w.view(np.int64)[near] >> 34) & _TOP_18) + (1 << 18)  # 2^18 · [1, 2)
            near = near[distance < (significand * 7) >> 2]
        values = flat_x[start:stop]
        if values.min() < _X_TINY and w.min() < _F32_TINY:  # (a NaN minimum: no value is tiny)
            tiny = w < _F32_TINY
            n[:] = False
            n[near] = True
            small, rounded = w[tiny], out[tiny]
            n[tiny] = np.abs(small - rounded) > _EXPF_NEAR_TIE * np.spacing(np.abs(rounded)).astype(F64)
            near = np.flatnonzero(n)
        if near.size:
            out[near] = [c_expf(v) for v in values[near].tolist()]
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
