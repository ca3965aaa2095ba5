"""Print the Chebyshev coefficients of erfcx(x) = exp(x*x) * erfc(x) on [0, inf) in the variable
z = (x - K) / (x + K), which ``ir_runner/ops/special.py`` holds (fitted to the C library's erfc, through
Python's ``math.erfc``; relative error of the fit about 2e-11 on [0, 27]).

    python scripts/fit_erfcx.py        # prints the tuple to paste into special.py
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial import chebyshev

K = 3.0
DEGREE = 18


def erfcx(x: float) -> float:
    if x < 25:
        return math.erfc(x) * math.exp(x * x)
    s = 1 / (2 * x * x)  # the asymptotic series, exact to double precision from x = 25 on
    return (1 - s + 3 * s * s - 15 * s**3 + 105 * s**4) / (x * math.sqrt(math.pi))


def main() -> None:
    nodes = np.cos(np.pi * (np.arange(DEGREE + 1) + 0.5) / (DEGREE + 1))
    xs = K * (1 + nodes) / (1 - nodes)
    coef = chebyshev.chebfit(nodes, [erfcx(v) for v in xs], DEGREE)
    test = np.linspace(0, 27, 50001)
    approx = chebyshev.chebval((test - K) / (test + K), coef)
    worst = max(abs(a / erfcx(t) - 1) for a, t in zip(approx, test))
    print(f"# K = {K}, degree {DEGREE}: largest relative error {worst:.2e} on [0, 27]")
    print("ERFCX_CHEBYSHEV = (" + ", ".join(repr(float(c)) for c in coef) + ")")


if __name__ == "__main__":
    main()
