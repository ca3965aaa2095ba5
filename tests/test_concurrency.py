"""One Model run from several threads at once gives exactly the results of serial runs."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

import numpy as np
import pytest

import ir_runner
from tests.conftest import MODELS
from tests.irbuild import IRBuilder

THREADS = 8


def _in_threads(work: Callable[[int], object], count: int = THREADS) -> list:
    """Call ``work(i)`` in ``count`` threads released together; re-raise the first failure."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as exc:  # noqa: BLE001  (reported in the main thread)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return list(a) == list(b) and all(
        a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes() for k in a
    )


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

    assert all(_in_threads(work))


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
    assert _in_threads(lambda i: all(_same(model.run(feeds[i % 4]), serial[i % 4]) for _ in range(3)), 4)


def test_dynamic_model_in_threads_matches_serial():
    """Different shapes per thread: plans are built, cached and evicted (over 64 shapes) concurrently."""
    model = ir_runner.load(MODELS / "dynamic.xml")
    rng = np.random.default_rng(3)
    jobs = [{"cond": (n, 4), "then": (n if full else 1, 4), "else": (4,), "indices": (rows, cols)}
            for n, full, rows, cols in itertools.product(range(1, 11), (False, True), (1, 2), range(4))]
    infos = {info.name: info for info in model.inputs}
    assert set(infos) == {"cond", "then", "else", "indices"}, "the dynamic sample changed: update this test"
    feeds = [_random_feeds(model, rng, shapes) for shapes in jobs]
    serial = []
    for f in feeds:
        try:
            serial.append(model.run(f))
        except ir_runner.IRError as error:
            serial.append(type(error))

    def work(i: int) -> bool:
        ok = True
        for j in range(i, len(feeds), THREADS // 2):
            try:
                got = model.run(feeds[j])
            except ir_runner.IRError as error:
                ok &= serial[j] is type(error)
            else:
                ok &= isinstance(serial[j], dict) and _same(got, serial[j])
        return ok

    assert all(_in_threads(work))
    assert all(isinstance(s, dict) for s in serial), "every shape fits the model; the test lost its point"
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

    assert all(_in_threads(work))
