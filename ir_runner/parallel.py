"""A small shared thread pool for large element-wise work (numpy releases the GIL in its loops).

Work is split only above a size threshold: below ~1e6 elements the hand-off costs more than it saves.
A worker runs its piece with FTZ/DAZ cleared when its thread flushes subnormals (a thread inherits its
creator's mode, so a pool made after OpenVINO set them flushes): see :mod:`.fpenv`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from . import fpenv
from .types import decimal_int

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

PARALLEL_MIN_ELEMENTS = 1 << 20

_pool: ThreadPoolExecutor | None = None  # created (and concurrent.futures imported) on first large job
_pool_lock = threading.Lock()


def worker_count() -> int:
    """Cores this process may use (``IR_RUN_THREADS``, 1..999999, overrides; 1 disables threading); read at import."""
    configured = decimal_int(os.environ.get("IR_RUN_THREADS", ""), 6)
    if configured:
        return configured
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_WORKERS = worker_count()


def _get_pool(workers: int) -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ir-run")
        return _pool


def split_range(total: int, parts: int) -> list[tuple[int, int]]:
    """``[0, total)`` cut into ``parts`` contiguous, nearly equal pieces."""
    step, extra = divmod(total, parts)
    bounds, start = [], 0
    for i in range(parts):
        stop = start + step + (1 if i < extra else 0)
        if stop > start:
            bounds.append((start, stop))
        start = stop
    return bounds


def run_chunked(total: int, elements_per_unit: int, work: Callable[[int, int], None], *,
                min_elements: int | None = None) -> None:
    """Call ``work(start, stop)`` over ``[0, total)``: in one call for jobs below ``min_elements`` (default
    PARALLEL_MIN_ELEMENTS) elements, else split over threads."""
    threshold = PARALLEL_MIN_ELEMENTS if min_elements is None else min_elements
    if total * elements_per_unit < threshold or total < 2 or _WORKERS < 2:
        work(0, total)
        return
    workers = _WORKERS
    pieces = split_range(total, workers)
    futures = [_get_pool(workers).submit(_exact_piece, work, start, stop) for start, stop in pieces[1:]]
    work(*pieces[0])
    for future in futures:
        future.result()


def _exact_piece(work: Callable[[int, int], None], start: int, stop: int) -> None:
    """``work(start, stop)`` on a worker thread, with FTZ/DAZ cleared while it runs."""
    flushing = fpenv.enter()
    try:
        work(start, stop)
    finally:
        fpenv.leave(flushing)


def copy_into(target: np.ndarray, value: np.ndarray) -> None:
    """``np.copyto(target, value)``, split along the first axis over threads when large: a strided copy (a
    Transpose's view written into a caller's buffer) then runs at about twice the speed on 2 cores."""
    if target.size < PARALLEL_MIN_ELEMENTS or value.shape != target.shape:
        np.copyto(target, value)
        return
    run_chunked(target.shape[0], target[:1].size, lambda lo, hi: np.copyto(target[lo:hi], value[lo:hi]))


def c_ordered_copy(value: np.ndarray) -> np.ndarray:
    """A new C-contiguous copy of ``value`` (copied as :func:`copy_into` does when large)."""
    if value.size < PARALLEL_MIN_ELEMENTS:
        return np.array(value, order="C")
    target = np.empty(value.shape, value.dtype)
    copy_into(target, value)
    return target
