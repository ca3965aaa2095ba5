"""Print the Chebyshev coefficients of erfcx(x) = exp(x*x) * erfc(x) on [0, inf) in the variable
z = (x - K) / (x + K), which ``ir_runner/ops/toolkit/special.py`` holds (fitted to the C library's erfc, through
Python's ``math.erfc``; relative error of the fit about 2e-11 on [0, 27]), and the polynomial of Gelu's
f32 path (``GELU_R``): ``exp(a*a/2) * erfc(a/sqrt(2)) / 2`` for ``a`` in [0, 5.5] in the variable
``v = GELU_ALPHA / (a + GELU_K) + GELU_BETA`` (which maps [0, 5.5] onto [-1, 1]), as power-basis coefficients
of v, a weighted least-squares (Lawson) fit of the relative error (about 5.5e-9).

    python scripts/fit_erfcx.py        # prints the tuples to paste into special.py
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial import chebyshev

K = 3.0
DEGREE = 18
GELU_K, GELU_DEGREE, GELU_MAX = 3.5, 8, 5.5


def erfcx(x: float) -> float:
    if x < 25:
        return math.erfc(x) * math.exp(x * x)
    s = 1 / (2 * x * x)  # the asymptotic series, exact to double precision from x = 25 on
    return (1 - s + 3 * s * s - 15 * s**3 + 105 * s**4) / (x * math.sqrt(math.pi))


def fit_gelu() -> tuple[float, float, np.ndarray, float]:
    """(alpha, beta, power-basis coefficients lowest first, largest relative error on a fine grid)."""
    lo, hi = 1 / (GELU_MAX + GELU_K), 1 / GELU_K
    n = 600
    nodes = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    target = np.array([erfcx(a / math.sqrt(2)) / 2 for a in 1 / ((lo + hi) / 2 + (hi - lo) / 2 * nodes) - GELU_K])
    basis = chebyshev.chebvander(nodes, GELU_DEGREE) / target[:, None]
    weights = np.full(n, 1 / n)
    coef = np.linalg.lstsq(basis, np.ones(n), rcond=None)[0]
    for _ in range(60):  # Lawson: weights grow where the relative error is large, towards the minimax fit
        weights *= np.abs(chebyshev.chebval(nodes, coef) / target - 1) + 1e-30
        weights /= weights.sum()
        root = np.sqrt(weights)
        coef = np.linalg.lstsq(basis * root[:, None], root, rcond=None)[0]
    alpha, beta = 2 / (hi - lo), -(lo + hi) / (hi - lo)
    power = chebyshev.cheb2poly(coef)
    test = np.linspace(0, GELU_MAX, 30001)
    exact = np.array([erfcx(a / math.sqrt(2)) / 2 for a in test])
    worst = float(np.abs(np.polyval(power[::-1], alpha / (test + GELU_K) + beta) / exact - 1).max())
    return alpha, beta, power, worst


def main() -> None:
    nodes = np.cos(np.pi * (np.arange(DEGREE + 1) + 0.5) / (DEGREE + 1))
    xs = K * (1 + nodes) / (1 - nodes)
    coef = chebyshev.chebfit(nodes, [erfcx(v) for v in xs], DEGREE)
    test = np.linspace(0, 27, 50001)
    approx = chebyshev.chebval((test - K) / (test + K), coef)
    worst = max(abs(a / erfcx(t) - 1) for a, t in zip(approx, test))
    print(f"# K = {K}, degree {DEGREE}: largest relative error {worst:.2e} on [0, 27]")
    print("ERFCX_CHEBYSHEV = (" + ", ".join(repr(float(c)) for c in coef) + ")")
    alpha, beta, power, worst = fit_gelu()
    print(f"# Gelu: K = {GELU_K}, degree {GELU_DEGREE}: largest relative error {worst:.2e} on [0, {GELU_MAX}]")
    print(f"GELU_K, GELU_ALPHA, GELU_BETA = {GELU_K!r}, {alpha!r}, {beta!r}")
    print("GELU_R = (" + ", ".join(repr(float(c)) for c in power) + ")")


if __name__ == "__main__":
    main()
