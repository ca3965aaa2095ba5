"""ir_runner.blas: OpenBLAS single-threaded during runs (restored after), large products split over the pool."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ir_runner
from ir_runner import blas
from tests.helpers.irbuild import IRBuilder


def _threads() -> int:
    if blas._CONTROLS is None:
        pytest.skip("no OpenBLAS in this process")
    return blas._CONTROLS[0]()


def test_single_threaded_sets_one_thread_and_restores_the_count():
    get, put = blas._CONTROLS if blas._CONTROLS else (None, None)
    before = _threads()
    put(2)
    try:
        with blas.single_threaded():
            assert get() == 1
            with blas.single_threaded():  # nested: one switch
                assert get() == 1
            assert get() == 1
        assert get() == 2
    finally:
        put(before)


def test_concurrent_runs_restore_only_when_the_last_ends():
    get, put = blas._CONTROLS if blas._CONTROLS else (None, None)
    before = _threads()
    put(2)
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with blas.single_threaded():
            inside.set()
            leave.wait(10)

    worker = threading.Thread(target=other)
    try:
        worker.start()
        inside.wait(10)
        with blas.single_threaded():
            assert get() == 1
        assert get() == 1  # the other run is still going
        leave.set()
        worker.join(10)
        assert get() == 2
    finally:
        leave.set()
        put(before)


def test_a_run_is_single_threaded_and_leaves_openblas_as_it_found_it():
    get, put = blas._CONTROLS if blas._CONTROLS else (None, None)
    before = _threads()
    b = IRBuilder()
    x = b.parameter("x", "f32", "64,300")
    w = b.const("w", np.ones((300, 500), np.float32))
    b.result(b.layer("MatMul", "opset1", [x, w], attrs={"transpose_a": "false", "transpose_b": "false"},
                     out_specs=[("f32", "64,500")]))
    model = ir_runner.load(*b.build())
    seen = []
    put(2)
    try:
        model.trace({"x": np.ones((64, 300), np.float32)}, callback=lambda record: seen.append(get()))
        assert seen and set(seen) == {1}
        assert get() == 2
    finally:
        put(before)


@pytest.mark.parametrize("a_shape, b_shape", [
    ((40, 300), (300, 1000)),         # split: 1.2e7 multiply-adds
    ((2, 3, 64, 100), (100, 700)),    # batch dims of a
    ((64, 100), (3, 100, 701)),       # batch dims of b, odd column count
    ((1, 24, 96), (2, 96, 4000)),     # broadcast batch
    ((5, 7), (7, 3)),                 # below the threshold: one call
    ((4, 0), (0, 9)),                 # empty inner dimension
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_pooled_matmul_is_numpys_product(a_shape, b_shape, dtype):
    rng = np.random.default_rng(1)
    a = rng.integers(-9, 9, a_shape).astype(dtype)
    b = rng.integers(-9, 9, b_shape).astype(dtype)
    want = np.matmul(a, b)
    got = blas.pooled_matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # small integers: every order of summation is exact
    out = np.full(want.shape, 7, dtype)
    assert blas.pooled_matmul(a, b, out=out) is out
    np.testing.assert_array_equal(out, want)


def test_pooled_matmul_into_a_strided_buffer_and_from_views():
    rng = np.random.default_rng(2)
    a = rng.integers(-5, 5, (64, 300)).astype(np.float32)
    b = rng.integers(-5, 5, (1200, 300)).astype(np.float32).T  # a transposed view
    big = np.zeros((64, 3000), np.float32)
    out = big[:, 100:1300]
    blas.pooled_matmul(a, b, out=out)
    np.testing.assert_array_equal(out, a @ b)
    assert not big[:, :100].any() and not big[:, 1300:].any()


def test_mixed_types_and_vectors_go_to_numpy():
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(blas.pooled_matmul(a, np.arange(3.0)), a @ np.arange(3.0))
    np.testing.assert_array_equal(blas.pooled_matmul(a.astype(np.float32), np.ones((3, 2))),
                                  a.astype(np.float32) @ np.ones((3, 2)))
