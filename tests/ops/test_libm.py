"""The C library's functions of toolkit/libm.py loaded through its one loader (``c_function``): the double
``exp`` that Multinomial's f64 log-probabilities take, bit for bit the C library's (Python's ``math.exp`` calls
it) where numpy's differs, and numpy's where no C library loads."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ir_runner.ops.toolkit import libm

needs_c_library = pytest.mark.skipif(libm.c_function("exp") is None, reason="no C library to load")


@needs_c_library
def test_one_loader_for_expf_and_exp():
    assert libm.c_function("expf") is libm.c_function("expf")
    assert libm.c_function("expf")(1.0) == float(np.float32(math.e))
    assert libm.c_function("exp")(1.0) == math.exp(1.0)


@needs_c_library
def test_exp_double_is_the_c_librarys_bit_for_bit():
    x = (np.random.default_rng(0).standard_normal(2000) * 10).reshape(40, 50)
    x[0, :4] = [0.0, -0.0, np.inf, -np.inf]
    got = libm.exp_double(x)
    want = np.array([math.exp(v) for v in x.reshape(-1).tolist()]).reshape(x.shape)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))
    assert (np.exp(x) != want).any()  # (numpy's own would not do)


def test_exp_double_without_a_c_library_is_numpys(monkeypatch):
    monkeypatch.setattr(libm, "c_function", lambda name: None)
    x = np.array([[0.5, -3.0], [700.0, 1e-3]])
    assert np.array_equal(libm.exp_double(x), np.exp(x))


@pytest.mark.parametrize("size", [1000, 5 * libm.EXPF_BLOCK + 123])
def test_map_expf_written_over_its_argument_fixes_near_ties_from_the_arguments(size, monkeypatch):
    """``map_expf(x, x)`` (no finish): the near-tie fix-ups take ``expf`` of the arguments, not of the ``e``
    already written over them; one block in the caller, and several blocks split over 2 workers."""
    from ir_runner import parallel

    monkeypatch.setattr(parallel, "_WORKERS", 2)
    monkeypatch.setattr(parallel, "_serial_until", 0.0)
    monkeypatch.setattr(parallel, "SPLIT_MIN_NS", 1)
    monkeypatch.setattr(parallel, "PIECE_NS", 1)
    rng = np.random.default_rng(3)
    x = rng.uniform(-80, 80, size).astype(np.float32)
    x[::97] = np.array(libm.DISCRIMINATING, np.uint32).view(np.float32)[0]
    want = libm.expf(x)
    y = x.copy()
    libm.map_expf(y, y)
    assert np.array_equal(y.view(np.uint32), want.view(np.uint32))
