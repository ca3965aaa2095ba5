"""Threads: one Model run from several threads at once gives exactly the results of serial runs; the first use
of the operation registry from many threads at once, and concurrent loads, succeed and leave the garbage
collector on; IR_RUN_THREADS is read only when it is a plain positive count."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ir_runner
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS, worker_count
from tests.conftest import MODELS
from tests.helpers.bits import same_bits
from tests.helpers.irbuild import IRBuilder
from tests.helpers.limits import HUGE
from tests.helpers.threads import in_threads

THREADS = 8


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return list(a) == list(b) and all(same_bits(a[k], b[k]) for k in a)


def _random_feeds(model: ir_runner.Model, rng: np.random.Generator, shapes: dict[str, tuple[int, ...]]):
    feeds = {}
    for info in model.inputs:
        shape = shapes[info.name]
        if info.dtype == np.bool_:
            feeds[info.name] = rng.random(shape) < 0.5
        elif info.dtype.kind in "iu":
            feeds[info.name] = rng.integers(-3, 3, shape).astype(info.dtype)
        else:
            feeds[info.name] = rng.standard_normal(shape).astype(info.dtype)
    return feeds


def test_static_model_in_threads_matches_serial():
    """Each thread runs its own feeds many times through one shared Model."""
    model = ir_runner.load(MODELS / "select_gather.xml")
    rng = np.random.default_rng(1)
    shapes = {info.name: info.shape for info in model.inputs}
    feeds = [_random_feeds(model, rng, shapes) for _ in range(THREADS)]
    serial = [model.run(f) for f in feeds]

    def work(i: int) -> bool:
        return all(_same(model.run(feeds[i]), serial[i]) for _ in range(200))

    assert all(in_threads(work))


def test_large_select_in_threads_matches_serial():
    """Tensors above the threading threshold: the kernels' own worker pool is shared by concurrent runs."""
    b = IRBuilder("large")
    shape = "1024,1100"
    params = [b.parameter("cond", "boolean", shape), b.parameter("then", "f32", shape),
              b.parameter("else", "f32", shape)]
    sel = b.layer("Select", "opset1", params, attrs={"auto_broadcast": "numpy"}, out_specs=[("f32", shape)])
    indices = b.const("indices", np.arange(1099, -1, -3, dtype=np.int64))
    axis = b.const("axis", np.array(1, np.int64))
    b.result(b.layer("Gather", "opset8", [sel, indices, axis], attrs={"batch_dims": 0},
                     out_specs=[("f32", "1024,367")]), "out")
    model = ir_runner.load(*b.build())
    rng = np.random.default_rng(2)
    feeds = [_random_feeds(model, rng, {n: (1024, 1100) for n in ("cond", "then", "else")}) for _ in range(4)]
    serial = [model.run(f) for f in feeds]
    assert in_threads(lambda i: all(_same(model.run(feeds[i % 4]), serial[i % 4]) for _ in range(3)), 4)


def test_dynamic_model_in_threads_matches_serial():
    """Different shapes per thread: plans are built, cached and evicted (over 64 shapes) concurrently."""
    model = ir_runner.load(MODELS / "dynamic.xml")
    rng = np.random.default_rng(3)
    jobs = [{"cond": (n, 4), "then": (n if full else 1, 4), "else": (4,), "indices": (rows, cols)}
            for n, full, rows, cols in itertools.product(range(1, 11), (False, True), (1, 2), range(4))]
    infos = {info.name: info for info in model.inputs}
    assert set(infos) == {"cond", "then", "else", "indices"}, "the dynamic sample changed: update this test"
    feeds = [_random_feeds(model, rng, shapes) for shapes in jobs]
    serial = [model.run(f) for f in feeds]  # every shape fits the model

    def work(i: int) -> bool:
        return all(_same(model.run(feeds[j]), serial[j]) for j in range(i, len(feeds), THREADS // 2))

    assert all(in_threads(work))
    assert len({tuple(f[n].shape for n in sorted(f)) for f in feeds}) > 64, "too few shapes to evict plans"


@pytest.mark.parametrize("strict", [False, True])
def test_errors_in_threads_do_not_leak_between_runs(strict: bool):
    """Threads feeding bad inputs get their own InputError; the others still get correct results."""
    model = ir_runner.load(MODELS / "select_gather.xml", strict=strict)
    rng = np.random.default_rng(4)
    shapes = {info.name: info.shape for info in model.inputs}
    good = _random_feeds(model, rng, shapes)
    want = model.run(good)
    bad = {**good, "then": good["then"].astype(np.float64)}

    def work(i: int) -> bool:
        for _ in range(100):
            if i % 2:
                with pytest.raises(ir_runner.InputError):
                    model.run(bad)
            elif not _same(model.run(good), want):
                return False
        return True

    assert all(in_threads(work))


def test_computed_indices_on_the_kernels_thread_pool_do_not_mix_callers():
    """Select feeding a Gather with computed (random-sign) indices, above the threading thresholds: the
    chunked take runs on the kernels' shared pool while four callers run at once."""
    b = IRBuilder("large")
    n = PARALLEL_MIN_ELEMENTS + 3
    params = [b.parameter("cond", "boolean", str(n)), b.parameter("x", "i32", str(n)), b.parameter("y", "i32", str(n))]
    sel = b.layer("Select", "opset1", params, attrs={"auto_broadcast": "numpy"}, out_specs=[("i32", [n])])
    idx = b.parameter("idx", "i64", str(n))
    gather = b.layer("Gather", "opset8", [sel, idx, b.const("axis", np.array(0, np.int64))], attrs={"batch_dims": 0},
                     out_specs=[("i32", [n])])
    b.result(gather, "out")
    model = ir_runner.load(*b.build())

    def work(k: int) -> bool:
        rng = np.random.default_rng(k)
        feeds = {"cond": rng.integers(0, 2, n).astype(bool), "x": np.full(n, k, np.int32),
                 "y": -np.arange(n, dtype=np.int32), "idx": rng.integers(-n, n, n)}
        selected = np.where(feeds["cond"], feeds["x"], feeds["y"])
        return np.array_equal(model.run(feeds)["out"], selected[feeds["idx"]])

    assert all(in_threads(work, 4))


def test_first_use_from_many_threads_at_once():
    """The operation registry is filled once, under a lock: concurrent first loads all succeed."""
    script = textwrap.dedent(f"""
        import threading, ir_runner
        barrier, errors = threading.Barrier(8), []
        def work():
            barrier.wait()
            try:
                ir_runner.load({str(MODELS / "gather1.xml")!r})
            except Exception as exc:
                errors.append(exc)
        threads = [threading.Thread(target=work) for _ in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(len(errors))
    """)
    for _ in range(3):
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        assert result.stdout.strip() == "0", result.stdout + result.stderr


def test_concurrent_loads_leave_the_garbage_collector_on():
    import gc

    assert gc.isenabled()
    feeds = dict(np.load(MODELS / "dynamic.inputs.npz"))

    def work(_: int) -> None:
        for _ in range(20):
            ir_runner.load(MODELS / "dynamic.xml").run(feeds)

    in_threads(work)
    assert gc.isenabled()


@pytest.mark.parametrize(("configured", "expected"), [("3", 3), ("1", 1), (HUGE, None), ("0", None), ("-2", None),
                                                     (" 3", None), ("", None)])
def test_worker_count_ignores_values_it_cannot_read(monkeypatch, configured, expected):
    monkeypatch.setenv("IR_RUN_THREADS", configured)
    cores = len(os.sched_getaffinity(0))
    assert worker_count() == (cores if expected is None else expected)
