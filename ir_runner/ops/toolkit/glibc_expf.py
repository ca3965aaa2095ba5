"""glibc's ``expf`` (sysdeps/ieee754/flt-32/e_expf.c, glibc 2.27 on) computed with numpy, bit for bit, in its
two x86-64 builds: the plain one and the FMA one (``e_expf-fma.c``, compiled with ``-mfma``, which glibc selects
on CPUs with FMA: the compiler fuses its multiply-adds). Meant for a few thousand values at a time (about 100
numpy passes); :mod:`.libm` calls it on the values whose ``exp`` lies too near an f32 rounding tie to round a
double.

The method: ``x·32/ln 2 = k + r`` with ``k`` an integer (rounded through the 1.5·2^52 shift) and
``|r| <= 1/2``; ``exp(x) = 2^(k/32) · 2^(r/32)``, ``2^(k/32)`` from a 32-entry table of doubles with ``k/32``'s
integer part added to the exponent, ``2^(r/32)`` a degree-3 polynomial in ``r``; the double result rounded to
f32. The FMA build fuses ``x·32/ln 2 + shift``, ``x·32/ln 2 - k`` and the polynomial's three multiply-adds;
numpy has no fused multiply-add, so :func:`fma` computes them exactly (error-free transformations).
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

F32 = np.float32
F64 = np.float64

_N = 32  # table entries: 2^(i/32), i < 32
_SHIFT = float.fromhex("0x1.8p+52")  # z + shift rounds z to an integer (ties to even) in its low bits
_INV_LN2_N = float.fromhex("0x1.71547652b82fep+0") * _N
_C0 = float.fromhex("0x1.c6af84b912394p-5") / _N / _N / _N  # glibc's polynomial for 2^(r/32), r^3 first
_C1 = float.fromhex("0x1.ebfce50fac4f3p-3") / _N / _N
_C2 = float.fromhex("0x1.62e42ff0c52d6p-1") / _N
_OVERFLOW = F32(float.fromhex("0x1.62e42ep6"))  # above it: inf (ln of 2^128)
_UNDERFLOW = F32(float.fromhex("-0x1.9fe368p6"))  # below it: +0 (ln of 2^-150)
_MAY_UNDERFLOW = F32(float.fromhex("-0x1.9d1d9ep6"))  # below it: the smallest subnormal (ln of 2^-149)
_SMALLEST = F32(2.0 ** -149)
_SPLITTER = float(2 ** 27 + 1)  # Veltkamp's: a double into two halves of 26 bits


def _table() -> np.ndarray:
    """glibc's table: the bits of 2^(i/32) correctly rounded to double, minus ``i << 47`` (so that adding
    ``k << 47`` for ``k = i mod 32`` gives 2^(k/32))."""
    with localcontext() as context:
        context.prec = 60
        values = [float(Decimal(2) ** (Decimal(i) / _N)) for i in range(_N)]
    bits = np.array(values, F64).view(np.uint64)
    return bits - (np.arange(_N, dtype=np.uint64) << np.uint64(47))


_TABLE = _table()


def _split(a: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """``a`` as ``high + low``, each of at most 26 significant bits (Veltkamp)."""
    c = _SPLITTER * a
    high = c - (c - a)
    return high, a - high


def _product(a: tuple, b: tuple) -> tuple[np.ndarray, np.ndarray]:
    """``a·b`` rounded and its error (Dekker; ``a``, ``b``: a double and its :func:`_split`)."""
    (a, a_high, a_low), (b, b_high, b_low) = a, b
    p = a * b
    return p, ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low


def _add_product(p: np.ndarray, q: np.ndarray, c: np.ndarray | float) -> np.ndarray:
    """``p + q + c`` rounded once to double, for ``|p| <= |c|`` and ``|q| <= ulp(p) / 2``: Knuth's exact sum
    ``s + t`` of ``c + p`` (the fast form: ``|c| >= |p|``), then ``s + (t + q)`` with ``t + q`` rounded to odd
    (truncated, its last bit set when inexact), which makes the final addition round as the exact sum would:
    an inexact odd value cannot make a tie of that rounding, and lies on the same side of each as the exact
    one."""
    s = c + p
    t = p - (s - c)
    u = t + q
    v = u - t
    error = (t - (u - v)) + (q - v)
    inexact = error != 0
    bits = u.view(np.int64) - (inexact & (np.signbit(u) != np.signbit(error)))  # truncated towards 0
    np.bitwise_or(bits, inexact, out=bits)
    return s + bits.view(F64)


def fma(a: float, b: np.ndarray, c: np.ndarray | float) -> np.ndarray:
    """``a·b + c`` rounded once, as the fused instruction rounds it, for ``|a·b| <= |c|``, finite values and no
    subnormal intermediate."""
    b = np.asarray(b, F64)
    return _add_product(*_product((a, *_split(a)), (b, *_split(b))), c)


def glibc_expf(x: np.ndarray, fused: bool) -> np.ndarray:
    """glibc's ``expf`` of the f32 values ``x``, bit for bit: its FMA build (``fused``) or its plain one."""
    x = np.asarray(x, F32)
    with np.errstate(all="ignore"):  # (values outside the main path's range compute junk there, replaced below)
        result = _main_path(x.astype(F64), fused)
    result[x > _OVERFLOW] = np.inf
    result[x < _MAY_UNDERFLOW] = _SMALLEST
    result[x < _UNDERFLOW] = 0
    nan = np.isnan(x)
    result[nan] = (x[nan].view(np.uint32) | np.uint32(0x00400000)).view(F32)  # glibc's x + x: quietened
    return result


def _main_path(wide: np.ndarray, fused: bool) -> np.ndarray:
    z = _INV_LN2_N * wide
    shifted = z + _SHIFT
    k = shifted - _SHIFT
    if fused:  # z + shift and z - k with the exact product: x has 24 bits, so the split of x is x itself
        low = (_INV_LN2_HIGH * wide - z) + _INV_LN2_LOW * wide  # x·32/ln 2 == z + low exactly
        r = (z - k) + low  # (z - k exact: |z - k| <= 1/2, k an integer)
        half = np.abs(z - k) == 0.5  # a tie of z + shift, which the exact product may break
        if half.any():
            broken = half & (low != 0) & (np.signbit(z - k) == np.signbit(low))
            k[broken] += 2 * (z - k)[broken]
            shifted[broken] = k[broken] + _SHIFT
            r = (z - k) + low
    else:
        r = z - k
    ki = shifted.view(np.uint64)
    scale = (_TABLE[ki % np.uint64(_N)] + (ki << np.uint64(47))).view(F64)
    if fused:
        r_split = (r, *_split(r))
        r2 = r * r
        z = _add_product(*_product(_C0_SPLIT, r_split), _C1)
        y = _add_product(*_product(_C2_SPLIT, r_split), 1.0)
        y = _add_product(*_product((z, *_split(z)), (r2, *_split(r2))), y)
    else:
        y = (_C0 * r + _C1) * (r * r) + (_C2 * r + 1.0)
    return (y * scale).astype(F32)


_INV_LN2_HIGH, _INV_LN2_LOW = _split(_INV_LN2_N)
_C0_SPLIT = (_C0, *_split(_C0))
_C2_SPLIT = (_C2, *_split(_C2))
