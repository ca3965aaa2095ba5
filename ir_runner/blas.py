"""BLAS threads: OpenBLAS runs single-threaded during a run, and large products are split over ir-run's pool.

numpy's OpenBLAS threads every product above ~2.6e5 multiply-adds, and its idle workers spin: on a machine
whose cores are busy with other processes, a [24,96] x [96,12544] product (a 1x1 convolution of
EfficientNet) took 32 ms on 2 threads against 0.9 ms on one (16 ms of CPU time spent spinning), and whole
CNNs ran 5-10x slower. :func:`single_threaded` sets OpenBLAS to one thread for the length of a run (restored
afterwards, counted across concurrent runs); :func:`pooled_matmul` splits a large product along the columns of its
result over the pool of :mod:`.parallel`, whose workers block instead of spinning. Without an OpenBLAS found
in the process (another BLAS, another OS), nothing is switched.

A column block of a product is the same dot products over the same K as the whole (BLAS sums each element
along K the same way whatever the N split), so the values are within the product's stated bound either way.
"""

from __future__ import annotations

import ctypes
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from .parallel import run_chunked

# a product of at least this many multiply-adds is split over the pool (a hand-off costs ~30 us; 1-thread
# OpenBLAS does ~4e10 multiply-adds a second here, so a piece of 8e6 takes ~0.2 ms)
SPLIT_MIN_MACS = 1 << 23

_PREFIXES = ("scipy_openblas_", "openblas_")
_SUFFIXES = ("64_", "")


def _openblas() -> tuple | None:
    """OpenBLAS's (get_num_threads, set_num_threads) from a library already mapped into this process."""
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


_CONTROLS = _openblas()
_lock = threading.Lock()
_active = 0  # runs in progress (any thread)
_saved = 1  # OpenBLAS's thread count before the first of them


@contextmanager
def single_threaded() -> Iterator[None]:
    """OpenBLAS on one thread while the block runs (nested and concurrent blocks share one switch)."""
    global _active, _saved
    if _CONTROLS is None:
        yield
        return
    get, put = _CONTROLS
    with _lock:
        if not _active:
            _saved = get()
            if _saved != 1:
                put(1)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if not _active and _saved != 1:
                put(_saved)


def pooled_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(a, b, out=out)``, its result's columns split over the pool when large (both operands of rank
    >= 2)."""
    if a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype:
        return np.matmul(a, b, out=out)
    rows, inner, cols = a.shape[-2], a.shape[-1], b.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (rows, cols)
    per_column = rows * inner * math.prod(shape[:-2])
    if per_column * cols < SPLIT_MIN_MACS or cols < 2:
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty(shape, a.dtype)
    run_chunked(cols, per_column, lambda lo, hi: np.matmul(a, b[..., lo:hi], out=out[..., lo:hi]),
                min_elements=SPLIT_MIN_MACS)
    return out
