"""Bit-for-bit comparison of arrays, the project's notion of "the same result"."""

from __future__ import annotations

import numpy as np
import pytest


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Same dtype, shape and bytes (NaN payloads and -0.0 included)."""
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """Fail unless ``got`` and ``want`` are the same bits (dtype, shape and bytes), showing the first elements
    that differ; ``what`` names the compared output in the message."""
    label = f"{what}: " if what else ""
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if got.tobytes() != want.tobytes():
        flat_got, flat_want = got.reshape(-1), want.reshape(-1)
        bad = [i for i in range(got.size) if flat_got[i:i + 1].tobytes() != flat_want[i:i + 1].tobytes()]
        got_bytes, want_bytes = (a[bad[:5]].tobytes().hex(" ", a.dtype.itemsize) for a in (flat_got, flat_want))
        pytest.fail(f"{label}{len(bad)} element(s) differ, e.g. at {bad[:5]}: got {flat_got[bad[:5]]!r}"
                    f" (bytes {got_bytes}), want {flat_want[bad[:5]]!r} (bytes {want_bytes})")
