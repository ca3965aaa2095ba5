"""Timing helpers for the benchmarks: interleaved medians, bit-exact comparison, unit formatting, the CPU's name, the
environment for timing whole processes."""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def medians(fns: dict[str, Callable[[], object]], *, budget: float, min_reps: int = 5, max_reps: int = 20000,
            warmup: int = 2) -> dict[str, float]:
    """Median nanoseconds per call of each function.

    Only the call is timed: its result is freed after the clock is read. The functions run in rounds
    (a batch of calls of each, every call timed with ``perf_counter_ns``), so that any drift of the
    machine hits all of them alike; rounds go on until ``budget`` seconds have passed and every function
    has ``min_reps`` samples, or one has ``max_reps``.
    """
    estimate = {}
    for name, fn in fns.items():
        for _ in range(warmup):
            fn()
        start = time.perf_counter_ns()
        fn()
        estimate[name] = max(1, time.perf_counter_ns() - start)
    batches = {name: max(1, min(200, int(2e6 // ns))) for name, ns in estimate.items()}
    samples: dict[str, list[int]] = {name: [] for name in fns}
    gc.collect()
    deadline = time.perf_counter() + budget
    clock = time.perf_counter_ns
    while True:
        for name, fn in fns.items():
            bucket = samples[name]
            for _ in range(batches[name]):
                start = clock()
                kept = fn()
                bucket.append(clock() - start)
                del kept  # freeing the result (a parsed tree, a model, a large array) is not timed
        counts = [len(s) for s in samples.values()]
        if max(counts) >= max_reps or (min(counts) >= min_reps and time.perf_counter() > deadline):
            break
    return {name: float(statistics.median(s)) for name, s in samples.items()}


def once_ns(fn: Callable[[], object]) -> tuple[float, object]:
    """Time one call; return (nanoseconds, its result)."""
    start = time.perf_counter_ns()
    result = fn()
    return float(time.perf_counter_ns() - start), result


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """True when both arrays have the same dtype, shape and bytes."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8)))


def fmt_time(ns: float | None) -> str:
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.0f} ns"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    return f"{n / 2**20:.1f} MiB"


def cpu_name() -> str:
    """The CPU's model name (Linux), else the platform's processor or machine string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def bytecode_env(workdir: Path) -> dict[str, str]:
    """The environment for timing whole processes: bytecode caches on, kept under ``workdir``.

    Some environments set PYTHONDONTWRITEBYTECODE; an editable install then recompiles every ir-run
    module in every process (about 50 ms), which an installed package never does. A first (warm-up) process
    writes the caches of every module it imports into ``workdir/pycache``.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    return env
