"""Special functions numpy lacks, in double precision, vectorised: ``erf`` (for Erf and Gelu).

erf(t): a Taylor series below |t| = 0.5 (13 terms, error below 1e-17); above, ``1 - erfc(|t|)`` with
``erfc(x) = exp(-x*x) * erfcx(x)`` and erfcx from an 18-degree Chebyshev series in ``(x - 3) / (x + 3)``
(relative error 1e-12; ``scripts/fit_erfcx.py`` fitted it to the C library's erfc). ``one_plus_erf`` (Gelu)
takes ``1 - erfc`` everywhere but below |x| = 1e-5, where erf is ``2x / sqrt(pi)`` to double precision.

``gelu_erf_f32``: Gelu (erf) of f32 values in about 28 numpy calls in double instead of the series above (the
polynomial ``GELU_R`` and one exp; see its docstring for the bound and the far negative tail).
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


GELU_K, GELU_NUMERATOR = 4.15, 5.71015037593985
GELU_R = (0.0028502648603128122, 0.11282660549761203, 0.21162682300792193, -0.18457401492461914,
          0.40362449706158365, -0.2874482347848438, 0.16983778080955142, -0.027792809729902626)
"""``erfcx(a / sqrt(2)) = exp(a*a/2) * erfc(a / sqrt(2))`` on ``a`` in [0, 5] as a polynomial of ``t =
GELU_NUMERATOR / (a + GELU_K)`` (which maps that range onto [1 - r, 1 + r], where the power basis is well
conditioned; lowest power first; relative error 1.02e-8, exactly 1 at a = 0; ``scripts/fit_erfcx.py``),
evaluated by :func:`gelu_erfcx`; bounded beyond."""

GELU_TAIL = -5.0  # below it the reference's 1 + erf (erf rounded to double) is coarse: the series decides


def gelu_erf_double(x: np.ndarray, out: np.ndarray) -> None:
    """Gelu (erf) computed in double from ``x`` and rounded to ``out``'s type once: bit-exact at f32 (measured)."""
    wide = x.astype(np.float64)
    factor = one_plus_erf(wide * math.sqrt(0.5))
    wide *= 0.5
    factor *= wide
    np.copyto(out, factor, casting="unsafe")


def gelu_erfcx(t: np.ndarray, power=GELU_R) -> np.ndarray:
    """The polynomial ``power`` (lowest first) of double ``t`` by Horner's rule, into a new array (the
    fit, ``scripts/fit_erfcx.py``, evaluates it the same way)."""
    coefficients = _GELU_R if power is GELU_R else tuple(np.array(c) for c in power)
    r = np.multiply(t, coefficients[-1])
    for c in coefficients[-2:0:-1]:
        np.add(r, c, r)
        np.multiply(r, t, r)
    return np.add(r, coefficients[0], r)


def gelu_erf_f32(x: np.ndarray, out: np.ndarray) -> None:
    """Gelu (erf) of f32 ``x`` into f32 ``out`` in double, rounded to f32 once: with ``a = |x|`` and ``erfc(a /
    sqrt(2)) = erfcx / exp(a*a/2)`` (the polynomial ``GELU_R``), Gelu is ``(x - a (erfc - 1)) / 2``, which is
    ``x Phi(x)`` for either sign without a sign pass. The polynomial is exactly 1 at a = 0, so that below |x| =
    1e-16 the result is x / 2 in double as the reference's (its ties at subnormals round to even alike) and -0.0
    stays -0.0. Within 1 ULP of the reference over all f32 inputs (``scripts/check_gelu.py``, exhaustive): the
    fit's 1.02e-8 allows at most 1 + 2**24 * 1.02e-8 < 2. Below ``GELU_TAIL`` the reference rounds ``erf`` to
    double before adding 1, which leaves ``1 + erf`` on a grid of 2**-53 coarser than f32 there: those elements
    (rare) take :func:`gelu_erf_double` (bit-exact). NaN results are left to the caller; an empty ``x`` gives
    nothing. (Constants are 0-d arrays and outputs positional: small arrays cost numpy's call overhead, 28 calls
    on four double arrays.)"""
    wide = x.astype(np.float64)
    a = np.abs(wide)
    t = np.add(a, _GELU_K)
    np.divide(_GELU_NUMERATOR, t, t)
    r = gelu_erfcx(t)
    np.square(a, t)
    np.multiply(t, _HALF, t)
    np.exp(t, t)
    np.divide(r, t, r)  # erfc(a / sqrt(2))
    np.subtract(r, _ONE, r)
    np.multiply(r, a, r)
    np.subtract(wide, r, wide)
    np.multiply(wide, _HALF, wide)
    np.copyto(out, wide, casting="same_kind")  # (rounded to f32 once)
    if x.size and not x.min() >= GELU_TAIL:  # (a NaN min also looks; an empty x has no min)
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


_GELU_K, _GELU_NUMERATOR, _ONE, _HALF = (np.array(c) for c in (GELU_K, GELU_NUMERATOR, 1.0, 0.5))
_GELU_R = tuple(np.array(c) for c in GELU_R)
