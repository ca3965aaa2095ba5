"""quiet_f16_nans sets the quiet bit of exactly the signalling f16 NaNs, on every path (small, chunked,
threaded) and for every one of the 65,536 bit patterns."""

import numpy as np
import pytest

from ir_runner.ops.api import quiet_f16_nans
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS


def expected(bits: np.ndarray) -> np.ndarray:
    exponent_all_ones = (bits & 0x7C00) == 0x7C00
    signalling = exponent_all_ones & ((bits & 0x03FF) != 0) & ((bits & 0x0200) == 0)
    return np.where(signalling, bits | 0x0200, bits).astype(np.uint16)


@pytest.mark.parametrize("repeat", [1, PARALLEL_MIN_ELEMENTS // 65536 + 1], ids=["all_patterns", "threaded"])
def test_every_bit_pattern(repeat):
    bits = np.tile(np.arange(65536, dtype=np.uint16), repeat)
    got = quiet_f16_nans(bits.copy().view(np.float16)).view(np.uint16)
    assert np.array_equal(got, expected(bits))


def test_other_types_and_empty_arrays_are_untouched():
    signalling_f32 = np.array([0x7F800001], np.uint32).view(np.float32)
    assert quiet_f16_nans(signalling_f32.copy()).view(np.uint32)[0] == 0x7F800001
    assert quiet_f16_nans(np.zeros((0, 3), np.float16)).shape == (0, 3)


def test_works_on_a_scalar_array():
    scalar = np.array(0x7C01, np.uint16).view(np.float16)
    assert quiet_f16_nans(scalar.copy()).view(np.uint16) == 0x7E01


def test_non_contiguous_arrays_are_quietened_in_place():
    """An array of any strides (a copy of a broadcast keeps odd strides) has its signalling NaNs set in place."""
    then = np.zeros((2, 1), np.float16)
    out = np.array(np.broadcast_to(then, (2, 1, 2, 1)))
    out.view(np.uint16)[1] = 0x7C01
    strided = np.zeros((4, 6), np.float16)[:, ::2]
    strided.view(np.uint16)[:, 1] = 0x7C01
    assert not strided.flags.c_contiguous
    for array in (out, strided):
        result = quiet_f16_nans(array)
        assert result is array
        assert sorted(set(array.view(np.uint16).reshape(-1).tolist())) == [0, 0x7E01]
