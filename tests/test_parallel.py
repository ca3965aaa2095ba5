"""ir_runner.parallel's split by cost: the pieces a job is cut into (a function of its cost, never of the thread
count), every piece run exactly once whoever claims it, errors, a worker that never starts, and the same bits on
1, 2, 3 or 8 threads and with or without a split for the kernels that use it (elementwise, depthwise and im2col
convolutions, pooled products)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from ir_runner import blas, parallel
from ir_runner.ops.conv_pool._conv_forward import ForwardKernel
from ir_runner.ops.toolkit import broadcasting

WORKERS = (1, 2, 3, 8)


@pytest.fixture
def pool(monkeypatch):
    """A pool of 8 threads for the test (more than the cores: time slicing interleaves them)."""
    with ThreadPoolExecutor(8, thread_name_prefix="ir-run-test") as executor:
        monkeypatch.setattr(parallel, "_get_pool", lambda workers: executor)
        monkeypatch.setattr(parallel, "STARVED_S", float("inf"))  # (never turned off by a loaded machine)
        monkeypatch.setattr(parallel, "_serial_until", 0.0)  # (nor by a job of an earlier test)
        yield executor


@pytest.mark.parametrize("cost, units, count", [
    (parallel.SPLIT_MIN_NS - 1, 100, None),                      # below the threshold: one call
    (10 * parallel.SPLIT_MIN_NS, 1, None),                       # one unit cannot be split
    (parallel.SPLIT_MIN_NS, 100, 2),                             # at least 2
    (5 * parallel.PIECE_NS + 1, 100, 5),                         # one per PIECE_NS
    (1000 * parallel.PIECE_NS, 100, parallel.MAX_PIECES),        # at most MAX_PIECES
    (1000 * parallel.PIECE_NS, 3, 3),                            # at most one per unit
])
def test_pieces_depend_on_the_cost_only(cost, units, count, monkeypatch):
    results = []
    for workers in WORKERS:
        monkeypatch.setattr(parallel, "_WORKERS", workers)
        results.append(parallel.pieces_for(cost, units))
    assert all(r == results[0] for r in results)
    pieces = results[0]
    if count is None:
        assert pieces is None
    else:
        assert len(pieces) == count
        assert pieces[0][0] == 0 and pieces[-1][1] == units
        assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))  # contiguous, in order
        sizes = [hi - lo for lo, hi in pieces]
        assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("workers", WORKERS)
def test_every_piece_runs_once(workers, pool, monkeypatch):
    monkeypatch.setattr(parallel, "_WORKERS", workers)
    pieces = parallel.split_range(1000, 13)
    seen, lock = [], threading.Lock()

    def work(lo: int, hi: int) -> None:
        with lock:
            seen.append((lo, hi, threading.current_thread().name))

    for _ in range(20):
        seen.clear()
        parallel.run_pieces(pieces, work)
        assert sorted((lo, hi) for lo, hi, _ in seen) == pieces
    if workers == 1:
        assert {name for *_, name in seen} == {threading.current_thread().name}


@pytest.mark.parametrize("workers", [2, 3, 8])
def test_the_caller_works_from_the_front_and_the_workers_from_the_back(workers, pool, monkeypatch):
    """Each thread works through one contiguous part: the caller's pieces are the first ones, in order."""
    monkeypatch.setattr(parallel, "_WORKERS", workers)
    caller = threading.current_thread()
    data = np.ones(1 << 14)
    mine = []

    woke = threading.Event()

    def work(lo: int, hi: int) -> None:
        if threading.current_thread() is caller:
            mine.append(lo)
            if lo == 0:
                woke.wait(5)  # (a worker claims some pieces even when the machine is loaded)
        else:
            woke.set()
        np.sin(data)

    shares = []
    for _ in range(20):
        mine.clear()
        woke.clear()
        parallel.run_pieces(parallel.split_range(24, 24), work)
        assert mine == list(range(len(mine)))
        shares.append(len(mine))
    assert min(shares) < 24, "no worker ever claimed a piece: nothing was checked"


def test_the_caller_never_waits_for_a_worker_that_has_not_started(monkeypatch):
    """A pool whose only thread is busy elsewhere (another process's core, in effect): the calling thread runs
    every piece itself and returns; the hand-off is cancelled, and the busy thread later finds nothing to do."""
    monkeypatch.setattr(parallel, "_WORKERS", 2)
    release = threading.Event()
    with ThreadPoolExecutor(1) as busy:
        busy.submit(release.wait, 30)
        monkeypatch.setattr(parallel, "_get_pool", lambda workers: busy)
        ran = []
        parallel.run_pieces(parallel.split_range(10, 4), lambda lo, hi: ran.append((lo, hi)))
        release.set()
    assert sorted(ran) == parallel.split_range(10, 4)


def test_a_starved_caller_turns_splitting_off_for_a_while(pool, monkeypatch):
    """Pieces whose calling thread is mostly off its core (here: asleep) make the next jobs run on the caller
    alone, for BACKOFF_MIN_S, then twice as long after another starved job, up to BACKOFF_MAX_S; a good job
    brings the minimum back."""
    monkeypatch.setattr(parallel, "_WORKERS", 2)
    monkeypatch.setattr(parallel, "STARVED_S", 0.0003)
    monkeypatch.setattr(parallel, "_serial_until", 0.0)
    monkeypatch.setattr(parallel, "_backoff", parallel.BACKOFF_MIN_S)
    monkeypatch.setattr(parallel, "BACKOFF_MAX_S", 4 * parallel.BACKOFF_MIN_S)
    caller = threading.current_thread()
    pieces = parallel.split_range(8, 8)
    names = []

    def sleepy(lo: int, hi: int) -> None:
        names.append(threading.current_thread())
        time.sleep(0.002)

    backoffs = []
    for _ in range(4):
        monkeypatch.setattr(parallel, "_serial_until", 0.0)
        parallel.run_pieces(pieces, sleepy)
        assert parallel._serial_until > time.perf_counter()
        backoffs.append(parallel._backoff)
        names.clear()
        parallel.run_pieces(pieces, sleepy)  # within the back-off: all on the caller
        assert names == [caller] * len(pieces)
    minimum = parallel.BACKOFF_MIN_S
    assert backoffs == [2 * minimum, 4 * minimum, 4 * minimum, 4 * minimum]
    monkeypatch.setattr(parallel, "_serial_until", 0.0)
    monkeypatch.setattr(parallel, "STARVED_S", float("inf"))  # (a good job, whatever the machine's load)
    parallel.run_pieces(pieces, lambda lo, hi: None)
    assert parallel._backoff == minimum


@pytest.mark.parametrize("failing", [0, 17, 39])
def test_an_error_in_a_piece_is_raised_after_every_started_piece(failing, pool, monkeypatch):
    monkeypatch.setattr(parallel, "_WORKERS", 3)
    started, finished = [], []

    def work(lo: int, hi: int) -> None:
        started.append(lo)
        if lo == failing:
            raise ValueError(f"piece {lo}")
        finished.append(lo)

    for _ in range(5):
        started.clear()
        finished.clear()
        with pytest.raises(ValueError, match=f"piece {failing}"):
            parallel.run_pieces(parallel.split_range(40, 40), work)
        assert sorted(finished + [failing]) == sorted(started)  # every other started piece had finished
    pool.submit(lambda: None).result()  # the pool still works


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, ValueError])
def test_an_exception_on_the_caller_stops_the_job(error, pool, monkeypatch):
    """Piece 0 (the caller's first) raising, Ctrl-C in effect: the pieces in progress on the workers finish,
    none is started after it (a worker may claim one in the instant before the job stops), and run_pieces
    raises it at once rather than after the other 199 pieces."""
    monkeypatch.setattr(parallel, "_WORKERS", 3)
    started, raised_at = [], []

    def work(lo: int, hi: int) -> None:
        started.append(lo)
        if lo == 0:
            raised_at.append(len(started))
            raise error("piece 0")
        time.sleep(0.001)

    with pytest.raises(error, match="piece 0"):
        parallel.run_pieces(parallel.split_range(200, 200), work)
    assert len(started) - raised_at[0] <= 2  # (at most one more piece by each of the 2 workers)
    pool.submit(lambda: None).result()  # the pool still works


def test_an_error_on_a_worker_stops_the_job(pool, monkeypatch):
    """A worker's first piece (the last one) raising: the caller claims no piece after it."""
    monkeypatch.setattr(parallel, "_WORKERS", 2)
    raised, after = threading.Event(), []

    def work(lo: int, hi: int) -> None:
        if lo == 199:
            raised.set()
            raise ValueError("piece 199")
        if raised.is_set():
            after.append(lo)
        time.sleep(0.001)

    with pytest.raises(ValueError, match="piece 199"):
        parallel.run_pieces(parallel.split_range(200, 200), work)
    assert len(after) <= 1  # (the caller's piece in progress, or claimed in the instant before the job stopped)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_ctrl_c_while_the_caller_waits_stops_the_job_at_once(pool, monkeypatch):
    """SIGINT to the calling thread (the main one) while it waits for a worker's piece: KeyboardInterrupt at
    once, not after that piece, and the workers claim nothing more."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    monkeypatch.setattr(parallel, "_WORKERS", 2)
    worker_started, caller_done, release, after = threading.Event(), threading.Event(), threading.Event(), []

    def work(lo: int, hi: int) -> None:
        if lo == 0:  # (the caller's first piece: the worker has then claimed the last)
            worker_started.wait(5)
        elif lo == 8:  # (the caller's last piece: it then waits for the worker)
            caller_done.set()
        elif lo == 9:  # (the worker's first)
            worker_started.set()
            caller_done.wait(5)
            time.sleep(0.05)  # (the caller in its wait by now, or still finishing: it is interrupted either way)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            release.wait(5)
        elif caller_done.is_set():
            after.append(lo)

    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        parallel.run_pieces(parallel.split_range(10, 10), work)
    assert not release.is_set() and time.perf_counter() - started < 4  # (raised before the worker's piece ended)
    release.set()
    assert after == []


@pytest.mark.parametrize("errors", ["ignore", "raise"])
def test_pieces_on_workers_take_the_callers_errstate(errors, pool, monkeypatch):
    """A piece overflowing on a worker does what it would on the caller (numpy's errstate is per context, and
    pool threads have numpy's default, 'warn'): quiet under the run's 'ignore' even with warnings as errors."""
    monkeypatch.setattr(parallel, "_WORKERS", 2)
    big = np.full(8, 1e30, np.float32)
    started = threading.Event()
    on_worker, raised = [], []

    def work(lo: int, hi: int) -> None:
        if lo == 0:
            started.wait(5)  # (until the other piece has started on a worker)
        else:
            on_worker.append(threading.current_thread() is not threading.main_thread())
            started.set()
        try:
            big * big
        except FloatingPointError:
            raised.append(lo)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over=errors):
            parallel.run_pieces([(0, 1), (1, 2)], work)
    assert on_worker == [True]
    assert sorted(raised) == ([0, 1] if errors == "raise" else [])

_FORKED = """
import os, threading
from ir_runner import parallel
parallel._WORKERS = 2

def helped():
    started = threading.Event()
    on_worker = []
    def work(lo, hi):  # the caller's piece waits (5 s at most) for the other to start on a worker
        if lo == 0:
            started.wait(5)
        else:
            on_worker.append(threading.current_thread() is not threading.main_thread())
            started.set()
    parallel.run_pieces([(0, 1), (1, 2)], work)
    return on_worker == [True]

assert helped()  # the pool exists (and its worker has gone idle)
pid = os.fork()
if pid == 0:
    os._exit(0 if helped() else 3)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_splits_on_a_pool_of_its_own():
    """A child forked after the pool was made (dask's or multiprocessing's processes) has none of its threads:
    its split jobs get workers of a new pool, not a queue nobody reads."""
    child = subprocess.run([sys.executable, "-W", "ignore", "-c", _FORKED], capture_output=True, text=True,
                           timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "0"

@pytest.mark.parametrize("size", [188160, 200704, 401408, 3 * (1 << 16) + 5, 451584, 1204224])
def test_blocked_work_in_a_few_pieces_has_even_blocks(size, monkeypatch):
    """A blocked computation split in at most 4 pieces: every piece the same number of blocks, none over BLOCK;
    with more pieces (claimed as threads free up) no more blocks than BLOCK needs."""
    monkeypatch.setattr(parallel, "SPLIT_MIN_NS", 200_000)
    monkeypatch.setattr(parallel, "PIECE_NS", 100_000)
    cost = size * broadcasting.PASSES_NS
    step = broadcasting._block_step(size, cost)
    units = -(-size // step)
    pieces = parallel.pieces_for(cost, units)
    assert step <= broadcasting.BLOCK and step % 16 == 0 and pieces is not None
    if len(pieces) <= broadcasting._EVEN_PIECES:
        assert len({hi - lo for lo, hi in pieces}) == 1
    else:
        assert units == -(-size // broadcasting.BLOCK)


def _swish_like(x: np.ndarray, out: np.ndarray) -> None:
    """Several passes with temporaries, as the blocked activations make."""
    e = np.exp(-x)
    np.add(e, np.float32(1), out=e)
    np.divide(x, e, out=out)


@pytest.mark.parametrize("shapes, blocked", [
    ([(3, 7, 1001)], True),                      # flat, in blocks
    ([(3, 7, 1001)], False),                     # flat, one call per piece
    ([(1, 96, 41, 43), (1, 96, 1, 1)], False),   # a bias added per channel (broadcast rows)
    ([(2, 5, 37, 61), (5, 1, 61)], True),        # broadcast, in blocks
])
@pytest.mark.parametrize("workers", WORKERS)
def test_elementwise_bits_are_the_same_for_any_split_and_thread_count(shapes, blocked, workers, pool, monkeypatch):
    rng = np.random.default_rng(len(shapes) * 10 + blocked)
    operands = [(rng.standard_normal(s) * 30).astype(np.float32) for s in shapes]
    fn = _swish_like if len(shapes) == 1 else (lambda a, b, out: _swish_like(a * b, out)) if blocked else \
        (lambda a, b, out: np.add(a, b, out=out))
    out_shape = np.broadcast_shapes(*shapes)
    whole = np.empty(out_shape, np.float32)
    with np.errstate(all="ignore"):
        fn(*operands, out=whole)
    monkeypatch.setattr(broadcasting, "BLOCK", 1000)
    monkeypatch.setattr(parallel, "SPLIT_MIN_NS", 1000)
    monkeypatch.setattr(parallel, "PIECE_NS", 300)
    monkeypatch.setattr(parallel, "_WORKERS", workers)
    calls = []
    real = broadcasting.run_by_cost
    monkeypatch.setattr(broadcasting, "run_by_cost",
                        lambda cost, units, work: calls.append(parallel.pieces_for(cost, units)) or
                        real(cost, units, work))
    got = broadcasting.run_elementwise(fn, operands, np.full(out_shape, np.nan, np.float32), blocked=blocked)
    assert calls and calls[0] is not None and len(calls[0]) > 2, "the job was not split"
    assert got.tobytes() == whole.tobytes()


# (x shape, filters, grouped, strides, dilations, pads): depthwise (with a multiplier, strides, dilations) and im2col
CONVOLUTIONS = [
    ((2, 37, 19, 23), (37, 1, 1, 3, 3), True, (1, 1), (1, 1), (1, 1)),
    ((1, 30, 21, 17), (30, 2, 1, 5, 5), True, (2, 2), (1, 1), (2, 2)),
    ((1, 19, 15, 16), (19, 1, 1, 3, 3), True, (1, 2), (2, 1), (0, 3)),
    ((2, 11, 20, 21), (13, 11, 3, 3), False, (2, 2), (1, 1), (1, 1)),
    ((1, 6, 33, 35), (5, 6, 3, 2), False, (1, 1), (2, 1), (1, 0)),
]


@pytest.mark.parametrize("x_shape, filters, grouped, strides, dilations, pads", CONVOLUTIONS)
def test_convolution_bits_are_the_same_for_any_split_and_thread_count(x_shape, filters, grouped, strides, dilations,
                                                                      pads, pool, monkeypatch):
    rng = np.random.default_rng(sum(x_shape))
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(filters).astype(np.float32)

    def kernel() -> ForwardKernel:
        return ForwardKernel(x_shape, np.float32, w, grouped, strides, dilations, pads, pads[::-1], "explicit")

    whole = kernel()
    assert whole.pieces is None
    want = whole(x)
    monkeypatch.setattr(parallel, "SPLIT_MIN_NS", 100)
    monkeypatch.setattr(parallel, "PIECE_NS", 100)
    split = kernel()
    assert split.pieces is not None and len(split.pieces) > 2
    for workers in WORKERS:
        monkeypatch.setattr(parallel, "_WORKERS", workers)
        for _ in range(3):
            assert split(x).tobytes() == want.tobytes()


@pytest.mark.parametrize("a_shape, b_shape", [((40, 300), (300, 1001)), ((7, 33), (33, 1001)), ((900, 300), (300, 49)),
                                              ((3, 64, 100), (100, 701))])
def test_pooled_products_give_the_same_bits_on_any_thread_count(a_shape, b_shape, pool, monkeypatch):
    """The blocks are cut by the product's size alone ([7,33] x [33,1001] in two column blocks differs from the
    whole product in OpenBLAS: it is the same on every thread count)."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    monkeypatch.setattr(blas, "SPLIT_MIN_MACS", 8)
    results = set()
    for workers in WORKERS:
        monkeypatch.setattr(parallel, "_WORKERS", workers)
        results.update(blas.pooled_matmul(a, b).tobytes() for _ in range(3))
    assert len(results) == 1
    np.testing.assert_allclose(np.frombuffer(results.pop(), np.float32).reshape(np.matmul(a, b).shape),
                               np.matmul(a, b), rtol=1e-5, atol=1e-4)
