"""Check ir-run's expf against the C library's over all 2^32 f32 bit patterns, where its method relies on
something other than the C library itself:

- the band: inputs whose double ``exp`` lies within 0.0025 ULP of an f32 rounding tie but not within 1.75·2^-34
  relative of it (there ir-run rounds the double, relying on glibc's error bound);
- the candidates: every input ir-run may recompute (within the 0.0025-ULP window, or a subnormal result near a
  tie), which it computes with ``glibc_expf`` in the build the C library was found to be (from 256 of them at
  a time; fewer take the C library's own). Both builds are computed; the inputs where they differ are printed
  (``libm.DISCRIMINATING`` must hold some of them, or the build cannot be told).

Prints the counts and every disagreement; exits 1 on any. About five minutes of CPU in all (618 s wall
on a loaded 2-core machine: 1,419,921 band inputs and 2,897,268 candidates, none differs).

    python -m scripts.check_expf [--parts 256] [--first 0]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ir_runner.ops.toolkit import libm
from ir_runner.ops.toolkit.glibc_expf import glibc_expf


def band(x: np.ndarray, wide: np.ndarray) -> np.ndarray:
    """Which inputs of ``x`` have a double (``wide``) between the relative bound and the 0.0025-ULP window of a
    tie."""
    bits = wide.view(np.int64)
    distance = np.abs((bits & libm._DROPPED) - (1 << 28))
    relative = (((bits >> 34) & libm._TOP_18) + (1 << 18)) * 7 >> 2
    return (distance >= relative) & (distance < libm._TIE_WINDOW) & (wide >= 2.0 ** -126)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=int, default=256, help="how many slices of 2^24 bit patterns to check")
    parser.add_argument("--first", type=int, default=0, help="the first slice (0..255)")
    args = parser.parse_args()
    c_expf = libm.c_function("expf")
    if c_expf is None:
        print("no C library expf to compare with")
        return 1
    build = libm._glibc_build()
    print(f"the C library's expf is glibc's {'FMA' if build else 'plain' if build is False else 'unknown'} build")

    def c_library(x: np.ndarray) -> np.ndarray:
        return np.array([c_expf(v) for v in x.tolist()], np.float32).view(np.uint32)

    in_band = band_wrong = candidates = wrong = 0
    discriminating: list[int] = []
    started = time.time()
    step = 1 << 24
    parts = range(args.first, min(args.first + args.parts, 256))
    for part in parts:
        x = np.arange(part * step, (part + 1) * step, dtype=np.uint64).astype(np.uint32).view(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            wide = np.exp(x.astype(np.float64))
            rounded = wide.astype(np.float32)
            near, _ = libm._near_ties(wide, rounded, np.empty(x.size, np.int64), np.empty(x.size, bool))
            between = x[band(x, wide)]
            got = libm.expf(between)
        in_band += got.size
        want = c_library(between)
        bad = np.flatnonzero(got.view(np.uint32) != want)
        band_wrong += bad.size
        for i in bad[:10]:
            print(f"band: x={between[i]!r}: ir-run {got[i]!r}, C library {want[i:i + 1].view(np.float32)[0]!r}")
        x = x[near]
        want = c_library(x)
        fused, plain = (glibc_expf(x, variant).view(np.uint32) for variant in (True, False))
        replica = fused if build or build is None else plain
        bad = np.flatnonzero(replica != want)
        candidates, wrong = candidates + x.size, wrong + bad.size
        for i in bad[:10]:
            print(f"candidate: x={x[i]!r} ({x[i:i + 1].view(np.uint32)[0]:#010x}): glibc_expf"
                  f" {replica[i:i + 1].view(np.float32)[0]!r}, C library {want[i:i + 1].view(np.float32)[0]!r}")
        discriminating += x[fused != plain].view(np.uint32).tolist()
    print(f"{in_band} inputs in the band and {candidates} candidates checked over {len(parts)} of 256 slices:"
          f" {band_wrong} and {wrong} differ ({time.time() - started:.0f} s)")
    print(f"builds differ on {len(discriminating)}: {', '.join(f'{v:#010x}' for v in discriminating[:20])}")
    return 1 if band_wrong or wrong or build is None else 0


if __name__ == "__main__":
    sys.exit(main())
