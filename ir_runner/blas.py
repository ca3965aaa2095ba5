"""BLAS threads: OpenBLAS on one thread once ir-run runs, and large products split over ir-run's own pool.

numpy's OpenBLAS threads every product above ~2.6e5 multiply-adds, and its idle workers spin: on a machine
whose cores are busy with other processes, a [24,96] x [96,12544] product (a 1x1 convolution of
EfficientNet) took 32 ms on 2 threads against 0.9 ms on one (16 ms of CPU time spent spinning), and whole
CNNs ran 10-45x slower. :func:`keep_single_threaded` (called by every run) sets OpenBLAS to one thread once
per process: this is process-wide, numpy products outside ir-run then run on one thread too (threadpoolctl
or ``openblas_set_num_threads`` set it back). :func:`pooled_matmul` splits a large product along the
columns (or rows) of its result over the pool of :mod:`.parallel`, whose workers block instead of spinning. Without
an OpenBLAS found in the process (another BLAS, another OS), nothing is switched.

An element of a block is the same dot product over K as in the whole product; BLAS may order that
sum differently for another width (seen on [7,33] x [33,1001] cut in two), which the product's stated bound
covers (as for OpenBLAS's own threads). The blocks are cut by the product's size alone, never by the thread
count, so a product gives the same bits on 1, 2 or 8 threads.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from .parallel import SPLIT_MIN_NS, run_pieces, split_range

# 1-thread OpenBLAS does 4-4.5e10 f32 multiply-adds a second here on 1x1 convolutions; a product of
# parallel.SPLIT_MIN_NS or more of them (9e7) is split over the pool
MAC_NS = 0.022
SPLIT_MIN_MACS = int(SPLIT_MIN_NS / MAC_NS)
# every piece of a split product packs all of the other operand again: few pieces (one thread, AMD EPYC:
# [256,8640] x [8640,256], a DeepLabV3 ASPP convolution, 12.4 ms whole, 13.1 in 2 column pieces, 14.2 in 4,
# 18.5 in the 12 pieces of 1 ms the elementwise rule would cut)
PRODUCT_PIECES_FROM_NS = 4 * SPLIT_MIN_NS  # 2 pieces below this much work, 4 from it
GRAIN = 16  # a block's columns (rows) are a multiple of this, but the last's (whole SIMD kernels of OpenBLAS)

_PREFIXES = ("scipy_openblas_", "openblas_")
_SUFFIXES = ("64_", "")


@functools.cache
def openblas_controls() -> tuple | None:
    """OpenBLAS's (get_num_threads, set_num_threads) from a library already mapped into this process (looked
    up once, at the first run: 1.4 ms)."""
    import ctypes

    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps if "openblas" in line.lower()}
    except (OSError, IndexError):
        return None
    for path in sorted(p for p in paths if p.startswith("/")):
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                get = getattr(lib, f"{prefix}get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    get.restype, put.argtypes = ctypes.c_int, (ctypes.c_int,)
                    return get, put
    return None


_switched = False


def keep_single_threaded() -> None:
    """OpenBLAS on one thread from now on: done once per process, at its first run (a switch per run, set
    and restored, cost 3-11 us: half the run of a two-layer model). A count set later (threadpoolctl,
    OpenBLAS's own calls) is left as it is."""
    global _switched
    if not _switched:
        _switched = True
        controls = openblas_controls()
        if controls is not None:
            controls[1](1)


def pooled_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(a, b, out=out)``, its result's columns (or rows, when it has fewer columns than rows) split
    over the pool when large (both operands of rank >= 2)."""
    if a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype:
        return np.matmul(a, b, out=out)
    rows, inner, cols = a.shape[-2], a.shape[-1], b.shape[-1]
    if a.ndim == 2 or b.ndim == 2:
        batch = b.shape[:-2] if a.ndim == 2 else a.shape[:-2]
    else:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    macs = rows * inner * cols * math.prod(batch)
    if macs < SPLIT_MIN_MACS or max(rows, cols) < 2:
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty(batch + (rows, cols), a.dtype)
    if cols >= rows:  # each piece packs all of a's rows and its own columns of b
        run_pieces(_blocks(cols, macs), lambda lo, hi: np.matmul(a, b[..., lo:hi], out=out[..., lo:hi]))
    else:  # fewer columns (a convolution's last layers: [512, 4608] x [4608, 49]): split the rows instead
        run_pieces(_blocks(rows, macs), lambda lo, hi: np.matmul(a[..., lo:hi, :], b, out=out[..., lo:hi, :]))
    return out


def _blocks(length: int, macs: int) -> list[tuple[int, int]]:
    """``[0, length)`` cut for a product of ``macs`` multiply-adds: 2 blocks, or 4 from PRODUCT_PIECES_FROM_NS
    of work (a function of the product alone, never of the thread count), of whole GRAINs (the last one takes the
    rest; single columns when there are fewer than two GRAINs)."""
    grain = GRAIN if length >= 2 * GRAIN else 1
    grains = -(-length // grain)
    cuts = split_range(grains, min(4 if macs * MAC_NS >= PRODUCT_PIECES_FROM_NS else 2, grains))
    return [(lo * grain, min(hi * grain, length)) for lo, hi in cuts]


def matmul_for(macs: int) -> Callable[..., np.ndarray]:
    """The product to use for shapes known ahead of ``macs`` multiply-adds: ``np.matmul`` itself below the
    split threshold (no per-call check), else :func:`pooled_matmul`."""
    return pooled_matmul if macs >= SPLIT_MIN_MACS else np.matmul
