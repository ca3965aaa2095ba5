"""The toolkit's ``std::round`` (halves away from zero) at its corners: the largest float below 0.5, the odd
integers above 2**23 (where adding 0.5 rounds before the floor), halves of both signs, signed zeros, NaN and
infinities, in f16, f32 and f64, against Python's exact decimal rounding."""

from __future__ import annotations

import decimal

import numpy as np
import pytest

from ir_runner.ops.toolkit.rounding import round_half_away


def _exact(value: float) -> float:
    """``std::round`` of one finite value, with Python's exact decimals (ROUND_HALF_UP: halves away from 0)."""
    rounded = float(decimal.Decimal(value).to_integral_value(rounding=decimal.ROUND_HALF_UP))
    return np.copysign(rounded, value) if rounded == 0 else rounded


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_corners_as_std_round(dtype):
    info = np.finfo(dtype)
    below_half = np.nextafter(dtype(0.5), dtype(0))
    odd = dtype(2.0 ** info.nmant + 1) if info.nmant < 60 else dtype(3)  # (2**mant + 1 is exact, its + 0.5 is not)
    values = np.array([below_half, -below_half, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, np.nextafter(dtype(2.5), dtype(3)),
                       odd, -odd, dtype(2.0 ** (info.nmant + 1)), 0.0, -0.0, info.max, -info.max, info.tiny],
                      dtype=dtype)
    got = round_half_away(values)
    assert got.dtype == dtype
    want = np.array([_exact(float(v)) for v in values], dtype=dtype)
    assert np.array_equal(got.view(f"u{values.itemsize}"), want.view(f"u{values.itemsize}"))
    assert round_half_away(below_half) == 0 and round_half_away(odd) == odd


def test_non_finite_values_stay():
    got = round_half_away(np.array([np.nan, np.inf, -np.inf], np.float32))
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf


def test_random_values_as_exact_rounding():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-3, 9, 2000),
                             np.floor(rng.standard_normal(500) * 1000) + 0.5]).astype(np.float32)
    want = np.array([_exact(float(v)) for v in values], np.float32)
    assert np.array_equal(round_half_away(values), want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_into_out_and_in_place(dtype):
    """Into a given array (a slice of another), or over ``x`` itself: the same values, zeros' signs kept."""
    values = np.array([-0.5, -0.3, -0.0, 0.49, 0.5, 1.5, -2.5, 7, np.nan, -np.inf], dtype=dtype)
    want = round_half_away(values)
    assert np.array_equal(want[:3].view(f"u{values.itemsize}"),
                          np.array([-1, -0.0, -0.0], dtype).view(f"u{values.itemsize}"))
    wide = np.zeros(2 * values.size, dtype)
    round_half_away(values, out=wide[::2])
    assert not wide[1::2].any()
    in_place = values.copy()
    assert round_half_away(in_place, out=in_place) is in_place
    for got in (wide[::2], in_place):
        assert np.array_equal(got.view(f"u{values.itemsize}"), want.view(f"u{values.itemsize}"))
