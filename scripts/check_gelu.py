"""Check f32 Gelu (erf) against the reference over all 2^32 f32 bit patterns: ``special.gelu_erf_f32`` (the
kernel's method, NaN inputs aside: the caller quietens them) against ``special.gelu_erf_double`` (Gelu in
double rounded once, bit-exact to OpenVINO's reference, which tests/ops/test_unary.py checks on samples).
Prints the histogram of ULP distances, the largest, and every input beyond ``--bound`` ULP or whose result
differs only in the sign of a zero; exits 1 on any. Some minutes of CPU per 2^30 inputs.

    python -m scripts.check_gelu [--start 0] [--parts 256]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ir_runner.ops.toolkit import special

SLICE = 1 << 24  # inputs a part (256 parts)
CHUNK = 1 << 21  # inputs computed at once (its double temporaries: about 100 MB)


def ordered(values: np.ndarray) -> np.ndarray:
    """f32 values as integers in their order (-0.0 and +0.0 both 0; adjacent floats differ by 1)."""
    bits = values.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def check(x: np.ndarray, bound: int, histogram: np.ndarray) -> list[str]:
    """Compare the two methods on the finite and infinite ``x``; add to ``histogram``; the failures."""
    x = x[~np.isnan(x)]
    if not x.size:  # (a chunk of NaNs only)
        return []
    got, want = np.empty_like(x), np.empty_like(x)
    with np.errstate(all="ignore"):
        special.gelu_erf_f32(x, got)
        special.gelu_erf_double(x, want)
    both_nan = np.isnan(got) & np.isnan(want)
    distance = np.abs(ordered(got) - ordered(want))
    distance[both_nan] = 0
    distance[np.isnan(got) != np.isnan(want)] = 1 << 40
    histogram += np.bincount(np.minimum(distance, histogram.size - 1), minlength=histogram.size)
    sign = (got == 0) & (want == 0) & (np.signbit(got) != np.signbit(want))
    bad = np.flatnonzero((distance > bound) | sign)
    return [f"x={x[i]!r} ({x[i:i + 1].view(np.uint32)[0]:#010x}): got {got[i]!r}, want {want[i]!r}"
            for i in bad[:20]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=0, help="the first of the 256 parts of 2^24 inputs")
    parser.add_argument("--parts", type=int, default=256, help="how many parts to check")
    parser.add_argument("--bound", type=int, default=2, help="the largest ULP distance allowed")
    args = parser.parse_args()
    histogram = np.zeros(8, np.int64)
    failures: list[str] = []
    started = time.time()
    for part in range(args.start, min(args.start + args.parts, 256)):
        for lo in range(part * SLICE, (part + 1) * SLICE, CHUNK):
            x = np.arange(lo, lo + CHUNK, dtype=np.uint32).view(np.float32)
            failures += check(x, args.bound, histogram)
        print(f"part {part}: {time.time() - started:.0f} s, ULP distances so far {histogram.tolist()}", flush=True)
    print(f"checked {int(histogram.sum())} inputs (NaNs aside); ULP distances 0..{histogram.size - 1}+: "
          f"{histogram.tolist()}")
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
