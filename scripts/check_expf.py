"""Check ir-run's expf against the C library's over all 2^32 f32 bit patterns where its method relies on glibc's
error bound: the inputs whose double ``exp`` lies within 0.0025 ULP of an f32 rounding tie but not within
1.75·2^-34 relative of it (there ir-run rounds the double instead of calling the C library's expf; elsewhere it
either calls it or is at least 0.0025 ULP from a tie). Prints the count checked and every disagreement; exits 1
on any. About a minute of CPU per 2^30 inputs.

    python -m scripts.check_expf [--parts 256]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ir_runner.ops.toolkit import libm


def band(x: np.ndarray) -> np.ndarray:
    """The inputs of ``x`` whose double lies between the relative bound and the 0.0025-ULP window of a tie."""
    with np.errstate(over="ignore", invalid="ignore"):
        wide = np.exp(x.astype(np.float64))
    bits = wide.view(np.int64)
    distance = np.abs((bits & libm._DROPPED) - (1 << 28))
    relative = (((bits >> 34) & libm._TOP_18) + (1 << 18)) * 7 >> 2
    return (distance >= relative) & (distance < libm._TIE_WINDOW) & (wide >= 2.0 ** -126)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=int, default=256, help="how many of the 256 slices of 2^24 to check")
    args = parser.parse_args()
    c_expf = libm._c_expf()
    if c_expf is None:
        print("no C library expf to compare with")
        return 1
    checked = wrong = 0
    started = time.time()
    step = 1 << 24
    for part in range(min(args.parts, 256)):
        x = np.arange(part * step, (part + 1) * step, dtype=np.uint64).astype(np.uint32).view(np.float32)
        x = x[band(x)]
        with np.errstate(over="ignore", invalid="ignore"):
            got = libm.expf(x)
        want = np.array([c_expf(v) for v in x.tolist()], np.float32)
        bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
        checked, wrong = checked + x.size, wrong + bad.size
        for i in bad[:10]:
            print(f"x={x[i]!r} ({x[i:i + 1].view(np.uint32)[0]:#010x}): ir-run {got[i]!r}, C library {want[i]!r}")
    print(f"{checked} inputs in the band checked over {min(args.parts, 256)} of 256 slices, {wrong} differ"
          f" ({time.time() - started:.0f} s)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
