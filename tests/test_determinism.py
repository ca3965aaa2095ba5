"""Determinism: ir-run's threaded kernels (just above their thread thresholds, rows not dividing evenly) and two
committed real networks give the same bits on every call: split over 8, 3 or 2 threads as computed serially,
called again, and called from 3 Python threads at once. The short version of scripts/stress_determinism.py
(same cases, tests/helpers/determinism.py); no timing is measured. A kernel whose result depends on how its
rows are split fails the serial comparison whatever the timing; a shared buffer written by two threads fails
the repeated and concurrent comparisons when the writes overlap (the stress script repeats them longer)."""

from __future__ import annotations

import numpy as np
import pytest

from ir_runner import parallel
from tests.helpers.determinism import differences, kernel_cases, real_networks, snapshot
from tests.helpers.threads import in_threads

NETWORKS = ("gpt2", "resnet_block")


@pytest.fixture(scope="module", autouse=True)
def small_pieces():
    """Splits by cost from 200 us in pieces of 100 us, products from 8e6 multiply-adds (below the defaults, so
    that the cases, just above the element thresholds, are split by cost too; set before any plan is made)."""
    from ir_runner import blas

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parallel, "SPLIT_MIN_NS", 200_000)
        patch.setattr(parallel, "PIECE_NS", 100_000)
        patch.setattr(blas, "SPLIT_MIN_MACS", 1 << 23)
        yield


@pytest.fixture(scope="module")
def kernels():
    return kernel_cases(np.random.default_rng(0))


@pytest.fixture(scope="module")
def serial(kernels):
    """Each kernel case computed with threading off (one worker)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parallel, "_WORKERS", 1)
        return {name: snapshot(case) for name, case in kernels.items()}


class _CountingPool:
    """ir-run's worker pool, counting the pieces of work handed to it."""

    def __init__(self, pool) -> None:
        self.pool, self.submitted = pool, 0

    def submit(self, *args, **kwargs):
        self.submitted += 1
        return self.pool.submit(*args, **kwargs)


def test_every_threaded_case_is_split(kernels, monkeypatch):
    """Guards the other tests: each case (but MatMul, threaded by BLAS) hands rows to ir-run's pool, so a
    threshold moved above the cases' sizes fails here rather than leaving them serial."""
    get_pool = parallel._get_pool
    counting = _CountingPool(get_pool(3))
    monkeypatch.setattr(parallel, "_get_pool", lambda workers: counting)
    monkeypatch.setattr(parallel, "_WORKERS", 3)
    monkeypatch.setattr(parallel, "STARVED_S", float("inf"))  # (never turned off by a loaded machine)
    serial_only = []
    for name, case in kernels.items():
        counting.submitted = 0
        snapshot(case)
        if not counting.submitted and not name.startswith("MatMul"):
            serial_only.append(name)
    assert not serial_only, f"not split over threads: {serial_only}"


def _calls(name: str) -> int:
    """How many times a case is called: the Softmax cases (a few ms each, the lowest thread threshold) 30 times,
    each call another chance for overlapping writes to show (with the machine loaded, an injected shared
    buffer in the Softmax row split showed in about one call in 10 to 50); the others twice."""
    return 30 if "Softmax" in name else 2


@pytest.fixture
def pool(monkeypatch):
    """ir-run's kernels split work over a pool of 8 threads (more than the cores: time slicing interleaves
    them), created for the test and shut down after it."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8, thread_name_prefix="ir-run-test") as executor:
        monkeypatch.setattr(parallel, "_get_pool", lambda workers: executor)
        monkeypatch.setattr(parallel, "STARVED_S", float("inf"))  # (never turned off by a loaded machine)
        yield executor


@pytest.mark.parametrize("workers", [8, 3, 2])
def test_threaded_equals_serial_on_every_call(kernels, serial, workers, pool, monkeypatch):
    monkeypatch.setattr(parallel, "_WORKERS", workers)
    differed = {}
    for name, case in kernels.items():
        for call in range(_calls(name)):
            if found := differences(snapshot(case), serial[name]):
                differed[f"{name} (call {call + 1})"] = found
                break
    assert not differed, differed


def test_concurrent_calls_equal_serial(kernels, serial, pool, monkeypatch):
    """3 Python threads run every case (each in its own order) while the kernels split rows over the pool."""
    monkeypatch.setattr(parallel, "_WORKERS", 8)
    names = list(kernels)

    def work(i: int) -> dict:
        order = np.random.default_rng(i).permutation(len(names))
        return {names[k]: [line for _ in range(_calls(names[k]) // 2)
                           for line in differences(snapshot(kernels[names[k]]), serial[names[k]])] for k in order}

    differed = {f"{name} (thread {i})": found for i, result in enumerate(in_threads(work, 3))
                for name, found in result.items() if found}
    assert not differed, differed


def test_real_networks_repeat_and_run_concurrently():
    networks = real_networks(NETWORKS)
    assert len(networks) == len(NETWORKS), f"missing from models/real: {set(NETWORKS) - set(networks)}"
    first = {name: snapshot(case) for name, case in networks.items()}
    assert all(first[name] for name in first)

    def work(i: int) -> dict:
        found: dict = {}
        for _ in range(3):
            for name, case in networks.items():
                found[name] = found.get(name, []) + differences(snapshot(case), first[name])
        return found

    differed = {f"{name} (thread {i})": found for i, result in enumerate(in_threads(work, 3))
                for name, found in result.items() if found}
    differed |= {name: found for name, case in networks.items() if (found := differences(snapshot(case), first[name]))}
    assert not differed, differed
