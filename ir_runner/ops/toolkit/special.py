"""Special functions numpy lacks, in double precision, vectorised: ``erf`` (for Erf and Gelu).

erf(t): a Taylor series below |t| = 0.5 (13 terms, error below 1e-17); above, ``1 - erfc(|t|)`` with
``erfc(x) = exp(-x*x) * erfcx(x)`` and erfcx from an 18-degree Chebyshev series in ``(x - 3) / (x + 3)``
(relative error 1e-12; ``scripts/fit_erfcx.py`` fitted it to the C library's erfc). ``one_plus_erf`` (Gelu)
takes ``1 - erfc`` everywhere but below |x| = 1e-5, where erf is ``2x / sqrt(pi)`` to double precision.

``gelu_erf_f32``: Gelu (erf) of f32 values in a dozen passes of mixed precision instead of the series above
(the polynomial ``GELU_R`` in double; see its docstring for the bound and the far negative tail).
"""

from __future__ import annotations

import math

import numpy as np

ERFCX_K = 3.0
ERFCX_CHEBYSHEV = (
    0.32986277475303666, -0.45366152053780207, 0.16039834082156312, -0.04490812115112293, 0.009641428650695463,
    -0.0014425080777446305, 0.00010099436735362166, 1.2085024534352116e-05, -3.6254206025885486e-06,
    7.186810727046357e-08, 8.914235849359808e-08, -7.4215668294885995e-09, -2.3893368188311523e-09,
    3.062233891263176e-10, 7.788918167951011e-11, -1.0973990314232108e-11, -3.0920272132854247e-12,
    3.524125845039325e-13, 1.4690342089832037e-13,
)
_TAYLOR = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) * 2 / math.sqrt(math.pi) for n in range(13))


def erfc_abs(x: np.ndarray) -> np.ndarray:
    """erfc(|x|) in double (relative error about 1e-12), in a few in-place passes over ``x``'s size."""
    a = np.abs(x)
    z = np.minimum(a, 1e10)  # (erfc is 0 long before; keeps z finite for infinities)
    denominator = z + ERFCX_K
    z -= ERFCX_K
    z /= denominator
    two_z, scratch = denominator, np.empty_like(z)
    np.multiply(z, 2, out=two_z)
    b1 = np.full_like(z, ERFCX_CHEBYSHEV[-1])
    b2 = np.zeros_like(z)
    for c in ERFCX_CHEBYSHEV[-2:0:-1]:  # Clenshaw: b1, b2 = 2z b1 - b2 + c, b1
        np.multiply(two_z, b1, out=scratch)
        scratch -= b2
        scratch += c
        b1, b2, scratch = scratch, b1, b2
    np.multiply(z, b1, out=scratch)
    scratch -= b2
    scratch += ERFCX_CHEBYSHEV[0]
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    a *= scratch
    return a


def one_plus_erf(x: np.ndarray) -> np.ndarray:
    """``1 + erf(x)`` of a double array as the reference computes it: erf rounded to double, then 1 added
    (for x < 0 the result is erfc(-x) on the grid of 2**-53 that this rounding leaves)."""
    erf_abs = erfc_abs(x)
    np.subtract(1.0, erf_abs, out=erf_abs)
    np.copysign(erf_abs, x, out=erf_abs)
    tiny = np.abs(x) < _TINY  # there 1 - erfc's absolute error (5e-15) would decide ties: erf = 2x/sqrt(pi)
    if tiny.any():
        np.multiply(x, _TAYLOR[0], out=erf_abs, where=tiny)
    erf_abs += 1.0
    return erf_abs


_TINY = 1e-5


def erf(x: np.ndarray) -> np.ndarray:
    """erf of a double array (absolute error about 1e-16 near 0, relative 1e-12 of erfc in the tails)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    small = np.abs(x) < 0.5
    if small.any():
        s = x[small]
        s2 = s * s
        acc = np.full_like(s, _TAYLOR[-1])
        for c in _TAYLOR[-2::-1]:
            acc = acc * s2 + c
        out[small] = s * acc
    large = ~small
    if large.any():
        v = x[large]
        with np.errstate(invalid="ignore"):
            out[large] = np.copysign(1.0 - erfc_abs(v), v)
        nan = np.isnan(x)  # (of any shape: not a flat index)
        if nan.any():
            out[nan] = np.nan
    return out


GELU_K, GELU_ALPHA, GELU_BETA = 3.5, 11.454545454545455, -2.272727272727273
GELU_R = (0.2022253259521053, 0.19407389259559946, 0.08046299988750129, 0.020950682497348175, 0.00256937207735789,
          -0.0002003328133630398, -8.947382913980728e-05, 4.412272580630117e-06, 3.1241035677872517e-06)
"""``exp(a*a/2) * erfc(a/sqrt(2)) / 2`` on ``a`` in [0, 5.5] as a polynomial of ``v = GELU_ALPHA / (a + GELU_K) +
GELU_BETA`` (lowest power first; relative error 5.5e-9, ``scripts/fit_erfcx.py``); bounded beyond 5.5."""

GELU_TAIL = -5.0  # below it the reference's 1 + erf (erf rounded to double) is coarse: the series decides


def gelu_erf_double(x: np.ndarray, out: np.ndarray) -> None:
    """Gelu (erf) computed in double from ``x`` and rounded to ``out``'s type once: bit-exact at f32 (measured)."""
    wide = x.astype(np.float64)
    factor = one_plus_erf(wide * math.sqrt(0.5))
    wide *= 0.5
    factor *= wide
    np.copyto(out, factor, casting="unsafe")


def gelu_erf_f32(x: np.ndarray, out: np.ndarray) -> None:
    """Gelu (erf) of f32 ``x`` into f32 ``out``: ``x * (1 + s (1 - 2 h)) / 2`` with ``s`` the sign of x and ``h =
    erfc(|x|/sqrt(2))/2 = exp(-x*x/2) * GELU_R(v)``, in double (the square exact, numpy's f64 exp), rounded to f32
    once before the product with x. Within 2 ULP of the reference (measured over every exponent and dense sweeps).
    Below ``GELU_TAIL`` the reference rounds ``erf`` to double before adding 1, which leaves ``1 + erf`` on a grid
    of 2**-53 coarser than f32 there: those elements (rare) take :func:`gelu_erf_double` (bit-exact). NaN results
    are left to the caller. (Constants are 0-d arrays and outputs positional: small arrays cost numpy's call
    overhead, ~25 calls; the sign is a copysign, which differs from ``* sign(x)`` only at x = +-0, where the product
    with x makes it +-0 either way.)"""
    wide = x.astype(np.float64)  # (once: numpy's mixed f32/f64 loops cost three times a double one)
    v = np.abs(wide)
    np.add(v, _GELU_K, v)
    np.divide(_GELU_ALPHA, v, v)
    np.add(v, _GELU_BETA, v)
    r = np.multiply(v, _GELU_R[-1])
    for c in _GELU_R[-2:0:-1]:
        np.add(r, c, r)
        np.multiply(r, v, r)
    np.add(r, _GELU_R[0], r)
    e = np.square(wide, v)
    np.multiply(e, _MINUS_HALF, e)
    np.exp(e, e)
    np.multiply(e, r, e)  # h
    np.subtract(_HALF, e, e)  # erf/2 as the reference rounds it: (1 - erfc) in double, halved exactly
    np.copysign(e, wide, e)
    np.add(e, _HALF, e)
    np.multiply(x, e.astype(np.float32), out)  # (1 + erf)/2, rounded to f32 once
    if not x.min() >= GELU_TAIL:  # (a NaN min also looks)
        gelu_erf_f32_tail(x, out)


def gelu_erf_f32_tail(x: np.ndarray, out: np.ndarray) -> None:
    """The elements of ``x`` below ``GELU_TAIL`` (if any) recomputed into ``out`` as :func:`gelu_erf_double` does,
    bit for bit: below ``GELU_ZERO`` it gives -0.0 (``1 - erfc`` rounds to 1 in double; at -inf, 0 * -inf: NaN),
    and a few elements between take :func:`_gelu_erf_double_few`, which skips numpy's ~60 calls."""
    tail = x < GELU_TAIL
    if not tail.any():
        return
    zero = x < GELU_ZERO
    np.multiply(x, 0.0, out=out, where=zero)
    middle = np.logical_xor(tail, zero, out=tail)
    count = int(np.count_nonzero(middle))
    if count > _FEW:
        part = np.empty(count, np.float32)
        gelu_erf_double(x[middle], part)
        out[middle] = part
    elif count:
        out[middle] = _gelu_erf_double_few(x[middle].tolist())


GELU_ZERO = -8.375  # below it (measured on every f32) gelu_erf_double gives -0.0: erfc(|x|/sqrt(2)) < 2**-54
_FEW = 24  # (about where numpy's fixed ~30 us overtakes ~1.2 us an element)
_SQRT_HALF = math.sqrt(0.5)


def _gelu_erf_double_few(values: list[float]) -> np.ndarray:
    """:func:`gelu_erf_double` of a few negative finite values (below ``GELU_TAIL``) into f32: the same double
    operations in the same order (:func:`erfc_abs`, :func:`one_plus_erf`) on Python floats, which round as
    numpy's do (IEEE double, one operation at a time); exp is numpy's, on all of them at once."""
    squares, sums = [], []
    for wide in values:
        a = abs(wide * _SQRT_HALF)
        z = min(a, 1e10)
        denominator = z + ERFCX_K
        z = (z - ERFCX_K) / denominator
        two_z, b1, b2 = z * 2.0, ERFCX_CHEBYSHEV[-1], 0.0
        for c in ERFCX_CHEBYSHEV[-2:0:-1]:
            b1, b2 = two_z * b1 - b2 + c, b1
        sums.append(z * b1 - b2 + ERFCX_CHEBYSHEV[0])
        squares.append(-(a * a))
    erfc = np.exp(np.array(squares))
    factors = [math.copysign(1.0 - e * s, wide) + 1.0 for e, s, wide in zip(erfc.tolist(), sums, values)]
    return np.array([f * (wide * 0.5) for f, wide in zip(factors, values)]).astype(np.float32)


_GELU_K, _GELU_ALPHA, _GELU_BETA, _HALF, _MINUS_HALF = (np.array(c) for c in (GELU_K, GELU_ALPHA, GELU_BETA, 0.5, -0.5))
_GELU_R = tuple(np.array(c) for c in GELU_R)
