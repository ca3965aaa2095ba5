"""ir_runner.blas: OpenBLAS set to one thread at the first run, large products split over ir-run's pool."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner import blas
from tests.helpers.irbuild import IRBuilder


def test_a_run_sets_openblas_to_one_thread_once(monkeypatch):
    if blas.openblas_controls() is None:
        pytest.skip("no OpenBLAS in this process")
    get, put = blas.openblas_controls()
    before = get()
    b = IRBuilder()
    x = b.parameter("x", "f32", "64,300")
    w = b.const("w", np.ones((300, 500), np.float32))
    b.result(b.layer("MatMul", "opset1", [x, w], attrs={"transpose_a": "false", "transpose_b": "false"},
                     out_specs=[("f32", "64,500")]))
    model = ir_runner.load(*b.build())
    feeds = {"x": np.ones((64, 300), np.float32)}
    monkeypatch.setattr(blas, "_switched", False)
    put(2)
    try:
        (value,) = model.run(feeds).values()
        assert (value == 300).all()
        assert get() == 1
        put(2)  # set by the user afterwards: left alone
        model.run(feeds)
        assert get() == 2
    finally:
        put(before)


@pytest.mark.parametrize("a_shape, b_shape", [
    ((40, 300), (300, 1000)),         # split: 1.2e7 multiply-adds
    ((2, 3, 64, 100), (100, 700)),    # batch dims of a
    ((64, 100), (3, 100, 701)),       # batch dims of b, odd column count
    ((1, 24, 96), (2, 96, 4000)),     # broadcast batch
    ((900, 300), (300, 49)),          # fewer columns than rows: rows split
    ((2, 700, 64), (64, 30)),         # rows split with a batch
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
