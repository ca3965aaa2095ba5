"""Print the Chebyshev coefficients of erfcx(x) = exp(x*x) * erfc(x) on [0, inf) in the variable
z = (x - K) / (x + K), which ``ir_runner/ops/toolkit/special.py`` holds (fitted to the C library's erfc, through
Python's ``math.erfc``; relative error of the fit about 2e-11 on [0, 27]), and the polynomial of Gelu's
f32 path (``GELU_R``): ``exp(a*a/2) * erfc(a/sqrt(2))`` for ``a`` in [0, 5] in the variable
``t = GELU_NUMERATOR / (a + GELU_K)`` (which maps [0, 5] onto [1 - r, 1 + r]), as power-basis coefficients
of t, a weighted least-squares (Lawson) fit of the relative error (about 1e-8), exactly 1 at a = 0.

    python scripts/fit_erfcx.py        # prints the tuples to paste into special.py
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial import Polynomial, chebyshev

K = 3.0
DEGREE = 18
GELU_K, GELU_DEGREE, GELU_MAX = 4.15, 7, 5.0


def erfcx(x: float) -> float:
    if x < 25:
        return math.erfc(x) * math.exp(x * x)
    s = 1 / (2 * x * x)  # the asymptotic series, exact to double precision from x = 25 on
    return (1 - s + 3 * s * s - 15 * s**3 + 105 * s**4) / (x * math.sqrt(math.pi))


def fit_gelu(k: float = GELU_K) -> tuple[float, np.ndarray, float]:
    """(numerator, power-basis coefficients in ``t`` lowest first, largest relative error on a fine grid) of
    erfcx(a / sqrt(2)) for ``a`` in [0, GELU_MAX] as a polynomial of ``t = numerator / (a + k)``. The numerator
    is the one that maps [0, GELU_MAX] onto [1 - r, 1 + r] (centred on 1: the power basis stays well conditioned).
    The fit
    is 1 at a = 0 by construction, and its constant coefficient is then moved by ULPs until the polynomial,
    evaluated as ``special`` does, is exactly 1 there (so that Gelu is x / 2 in double for tiny x, as the
    reference's, and -0.0 at -0.0)."""
    from ir_runner.ops.toolkit.special import gelu_erfcx  # (the evaluation order the kernel uses)

    m = k * GELU_MAX / (GELU_MAX + 2 * k)
    r, numerator = m / k, m + k
    n = 800
    nodes = np.cos(np.pi * (np.arange(n) + 0.5) / n)  # z = (t - 1) / r; a = 0 is z = 1
    target = np.array([erfcx(a / math.sqrt(2)) for a in numerator / (1 + r * nodes) - k])
    # 1 + (1 - z) q(z), q of one degree less: exactly 1 at a = 0, relative error |(1 + (1 - z) q) / target - 1|
    basis = (1 - nodes)[:, None] * chebyshev.chebvander(nodes, GELU_DEGREE - 1) / target[:, None]
    rhs = 1 - 1 / target
    weights = np.full(n, 1 / n)
    coef = np.linalg.lstsq(basis, rhs, rcond=None)[0]
    for _ in range(100):  # Lawson: weights grow where the relative error is large, towards the minimax fit
        weights *= np.abs(basis @ coef - rhs) + 1e-30
        weights /= weights.sum()
        root = np.sqrt(weights)
        coef = np.linalg.lstsq(basis * root[:, None], rhs * root, rcond=None)[0]
    in_z = 1 + Polynomial([1, -1]) * Polynomial(chebyshev.cheb2poly(coef))
    power = in_z(Polynomial([-1 / r, 1 / r])).coef
    at_zero = np.array([numerator / k])
    while (value := gelu_erfcx(at_zero, power)[0]) != 1:  # (rounding: each step moves it by a fraction of an ULP)
        power[0] = np.nextafter(power[0], 2.0 if value < 1 else -2.0)
    test = np.linspace(0, GELU_MAX, 40001)
    exact = np.array([erfcx(a / math.sqrt(2)) for a in test])
    worst = float(np.abs(gelu_erfcx(numerator / (test + k), power) / exact - 1).max())
    return numerator, power, worst


def main() -> None:
    nodes = np.cos(np.pi * (np.arange(DEGREE + 1) + 0.5) / (DEGREE + 1))
    xs = K * (1 + nodes) / (1 - nodes)
    coef = chebyshev.chebfit(nodes, [erfcx(v) for v in xs], DEGREE)
    test = np.linspace(0, 27, 50001)
    approx = chebyshev.chebval((test - K) / (test + K), coef)
    worst = max(abs(a / erfcx(t) - 1) for a, t in zip(approx, test))
    print(f"# K = {K}, degree {DEGREE}: largest relative error {worst:.2e} on [0, 27]")
    print("ERFCX_CHEBYSHEV = (" + ", ".join(repr(float(c)) for c in coef) + ")")
    numerator, power, worst = fit_gelu()
    print(f"# Gelu: K = {GELU_K}, degree {GELU_DEGREE}: largest relative error {worst:.2e} on [0, {GELU_MAX:.4f}]")
    print(f"GELU_K, GELU_NUMERATOR = {GELU_K!r}, {numerator!r}")
    print("GELU_R = (" + ", ".join(repr(float(c)) for c in power) + ")")


if __name__ == "__main__":
    main()
