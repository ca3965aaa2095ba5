"""A small shared thread pool for large work (numpy and BLAS release the GIL in their loops).

Two ways to split a job. :func:`run_chunked` (the older one, by elements): above a size threshold (~1e6
elements by default) into one piece per worker. :func:`run_pieces` (by cost): a kernel states its work in
nanoseconds from its static shapes (:func:`pieces_for`, decided once, at prepare time where it can be), and is
cut into pieces of at least PIECE_NS each, at most MAX_PIECES, whatever the thread count: a kernel whose bits
could depend on where it is cut (a BLAS product's column blocks) then gives the same bits on 1, 2 or 8 threads.

Either way, the calling thread and the pool's workers claim pieces until none is left (the caller from the
first on, the workers from the last back: each works through one contiguous part of the data): the
caller starts at once and never waits for a worker that has not started (on a machine whose other core is busy,
a worker woken late finds the pieces done and its hand-off is cancelled), so a loaded machine costs a split job
about what the serial one costs. A job whose calling thread was mostly off its core (the GIL or a piece held
by a worker that another process pushed off its core) turns splitting off for a while, longer each time
(:func:`_judge`): the pieces are then run by the calling thread alone. Workers block on the pool's queue,
never spin; a forked child (dask's or multiprocessing's processes) makes a pool of its own, the parent's
threads not being forked. A worker runs its pieces with FTZ/DAZ cleared when its thread flushes subnormals (a
thread inherits its creator's mode, so a pool made after OpenVINO set them flushes): see :mod:`.fpenv`.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import fpenv
from .types import decimal_int

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

PARALLEL_MIN_ELEMENTS = 1 << 20

# a job is split when it costs at least SPLIT_MIN_NS on one thread, into pieces of at least PIECE_NS. Measured
# on this 2-core VM (AMD EPYC; the other developers' processes given less CPU, nice -15, so that both cores were
# mostly ours): two real cores (a 1024^3 sgemm per thread: 1.8-2.1x), a hand-off 25-60 us, yet with pieces of
# 100-500 us the CNNs' layers ran slower on two threads (EfficientNet-B0 54 -> 68-82 ms, MobileNet-V3-large
# 19 -> 25-33 ms, more CPU time than wall time lost): each thread's numpy calls hand the GIL back and forth
# (Swish's exp passes most of all: a [4,96,112,112] Swish 25 -> 30 ms split in 1 ms pieces), and the halves'
# data moves between the cores' caches. From 2 ms a job, in 1 ms pieces, the three networks run as fast as on
# one thread (their layers are below it) and larger ones gain: a depthwise 3x3 on [4,96,112,112] 1.25x, a
# 1x1 convolution to 24 channels 1.33x, HSwish 1.19x.
SPLIT_MIN_NS = 2_000_000
PIECE_NS = 1_000_000
MAX_PIECES = 16

# a split job whose calling thread spent more than half its time, and over STARVED_S, off its core (waiting for
# the GIL or a piece held by a worker that another process's thread pushed off its core) turns splitting off for
# a while: BACKOFF_MIN_S, doubled at each starved job up to BACKOFF_MAX_S, back to the minimum after a good one
STARVED_S = 0.0003
BACKOFF_MIN_S = 0.02
BACKOFF_MAX_S = 1.0
_serial_until = 0.0  # time.perf_counter() before which jobs run on the calling thread alone
_backoff = BACKOFF_MIN_S

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


def _forget_pool() -> None:
    """In a forked child: the parent's pool has no threads here (they are not forked), and its locks may have
    been held by them; the child makes its own pool at its first split job, and splits at once."""
    global _pool, _pool_lock, _serial_until, _backoff
    _pool, _pool_lock = None, threading.Lock()
    _serial_until, _backoff = 0.0, BACKOFF_MIN_S


if hasattr(os, "register_at_fork"):  # (POSIX)
    os.register_at_fork(after_in_child=_forget_pool)


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
    PARALLEL_MIN_ELEMENTS) elements, else in one piece per worker (see :func:`run_pieces`)."""
    threshold = PARALLEL_MIN_ELEMENTS if min_elements is None else min_elements
    if total * elements_per_unit < threshold or total < 2 or _WORKERS < 2:
        work(0, total)
        return
    run_pieces(split_range(total, _WORKERS), work)


def pieces_for(cost_ns: float, units: int) -> list[tuple[int, int]] | None:
    """How a job of ``cost_ns`` nanoseconds (on one thread), made of ``units`` equal units, is cut: None (one
    call, no split) below SPLIT_MIN_NS or for a single unit, else into pieces of at least PIECE_NS, at most
    MAX_PIECES: a function of the job only, never of the thread count."""
    if cost_ns < SPLIT_MIN_NS or units < 2:
        return None
    return split_range(units, piece_count(cost_ns, units))


def piece_count(cost_ns: float, units: int) -> int:
    """Pieces for a job that is split: about one per PIECE_NS of work, at least 2, at most MAX_PIECES and
    ``units``."""
    return max(2, min(int(cost_ns // PIECE_NS), MAX_PIECES, units))


def run_by_cost(cost_ns: float, units: int, work: Callable[[int, int], None]) -> None:
    """``work`` over ``[0, units)``: in the pieces :func:`pieces_for` cuts for ``cost_ns``, else in one call."""
    run_split(pieces_for(cost_ns, units), units, work)


def run_split(pieces: list[tuple[int, int]] | None, units: int, work: Callable[[int, int], None]) -> None:
    """``work`` over ``[0, units)``: over ``pieces`` (:func:`run_pieces`), or in one call when None."""
    if pieces is None:
        work(0, units)
    else:
        run_pieces(pieces, work)


def run_pieces(pieces: list[tuple[int, int]], work: Callable[[int, int], None]) -> None:
    """``work(start, stop)`` for every piece, each exactly once, the calling thread (from the first piece on)
    and up to ``_WORKERS - 1`` pool workers (from the last one back) claiming them; returns when every piece
    has finished (not every worker: one that starts late finds nothing left and is not waited for). A piece
    that raises (an error, KeyboardInterrupt, SystemExit) stops the job: no piece is claimed after it, and the
    first exception is raised once the pieces in progress have finished (so Ctrl-C takes effect after about
    one piece); one raised on the caller while it waits for them (Ctrl-C) stops the job and is raised at once.
    With one worker, or one piece, the caller runs them all in order. Workers
    run their pieces in a copy of the caller's context variables (numpy's errstate among them), so a piece
    warns, raises or stays quiet on floating-point errors wherever it runs."""
    helpers = min(_WORKERS, len(pieces)) - 1
    start_wall = time.perf_counter()
    if helpers < 1 or start_wall < _serial_until:
        for start, stop in pieces:
            work(start, stop)
        return
    start_cpu = time.thread_time()
    job = _Job(pieces, work)
    pool = _get_pool(_WORKERS)
    # (each worker in a copy of the caller's context: numpy's errstate, the run's settings, as on the caller)
    futures = [pool.submit(contextvars.copy_context().run, _drain_on_worker, job) for _ in range(helpers)]
    try:
        _drain(job)
        for future in futures:
            future.cancel()  # (not started yet: it never will; there is nothing left to claim)
        if not job.done.is_set():
            job.done.wait()  # (blocks on a lock: a worker finishing its last piece wakes it)
    except BaseException:  # (Ctrl-C while waiting, or between two pieces: the workers claim nothing more)
        job.stop()
        raise
    _judge(start_wall, start_cpu)
    if job.errors:
        raise job.errors[0]


def _judge(start_wall: float, start_cpu: float) -> None:
    """Splitting turned off for a while after a job whose calling thread was starved (see STARVED_S): on a
    loaded machine two threads sharing the GIL lose more to each other than the second core gives."""
    global _serial_until, _backoff
    wall = time.perf_counter() - start_wall
    off = wall - (time.thread_time() - start_cpu)
    if off > STARVED_S and off > wall / 2:
        _serial_until = start_wall + wall + _backoff
        _backoff = min(_backoff * 2, BACKOFF_MAX_S)
    else:
        _backoff = BACKOFF_MIN_S


class _Job:
    """Pieces of one :func:`run_pieces` call, not yet claimed: ``[front, back)``. The calling thread claims from
    the front, workers from the back, so that each works through one contiguous part of the data (the first
    pieces for the caller, the last for the workers, meeting where their speeds put them): the next layer's
    pieces then tend to find their inputs in the cache of the core that wrote them. Also the count of pieces
    claimed or claimable but not finished, the event set when it reaches 0, and the exceptions raised (the
    first stops the job: what is left unclaimed is dropped)."""

    __slots__ = ("pieces", "work", "front", "back", "lock", "unfinished", "done", "errors")

    def __init__(self, pieces: list[tuple[int, int]], work: Callable[[int, int], None]) -> None:
        self.pieces, self.work = pieces, work
        self.front, self.back = 0, len(pieces)
        self.lock = threading.Lock()
        self.unfinished = len(pieces)
        self.done = threading.Event()
        self.errors: list[BaseException] = []

    def claim(self, from_back: bool) -> int | None:
        """The index of a piece nobody has claimed (the last one when ``from_back``, else the first), or None."""
        with self.lock:
            if self.front >= self.back:
                return None
            if from_back:
                self.back -= 1
                return self.back
            self.front += 1
            return self.front - 1

    def finish(self, error: BaseException | None) -> None:
        """A claimed piece has finished, raising ``error`` (which stops the job) unless None."""
        with self.lock:
            if error is not None:
                self.errors.append(error)
                self._drop_unclaimed()
            self.unfinished -= 1
            if self.unfinished == 0:
                self.done.set()

    def stop(self) -> None:
        """No piece is claimed any more (those in progress finish)."""
        with self.lock:
            self._drop_unclaimed()

    def _drop_unclaimed(self) -> None:
        self.unfinished -= self.back - self.front
        self.front = self.back
        if self.unfinished == 0:
            self.done.set()


def _drain(job: _Job, from_back: bool = False) -> None:
    """Claim and run pieces of ``job`` until none is left."""
    while (index := job.claim(from_back)) is not None:
        error = None
        try:
            job.work(*job.pieces[index])
        except BaseException as raised:  # noqa: BLE001 (raised by run_pieces once the pieces in progress finish)
            error = raised
        job.finish(error)


def _drain_on_worker(job: _Job) -> None:
    """:func:`_drain` from the back, on a worker thread, with FTZ/DAZ cleared while it runs."""
    flushing = fpenv.enter()
    try:
        _drain(job, from_back=True)
    finally:
        fpenv.leave(flushing)

