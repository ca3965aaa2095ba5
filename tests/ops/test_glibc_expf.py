"""glibc's expf replicated with numpy (toolkit/glibc_expf.py) and the blocks of toolkit/libm.py that use it: the
exact fused multiply-add, both builds against the C library on the inputs where they matter, the corners, and
the activations' fix-ups (batched over blocks, in place, through ctypes when the build is unknown)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from ir_runner.ops.elementwise import unary
from ir_runner.ops.toolkit import glibc_expf, libm

C_EXPF = libm.c_function("expf")
BUILD = libm._glibc_build()
needs_glibc = pytest.mark.skipif(BUILD is None, reason="the C library's expf is not one of glibc's builds")


def c_library(x: np.ndarray) -> np.ndarray:
    """The C library's expf, element by element (ctypes)."""
    return np.array([C_EXPF(v) for v in np.asarray(x, np.float32).reshape(-1).tolist()], np.float32).reshape(
        np.shape(x))


def bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


def as_f32(*patterns: int) -> np.ndarray:
    return np.array(patterns, np.uint32).view(np.float32)


def candidates(x: np.ndarray) -> np.ndarray:
    """The inputs of ``x`` that libm recomputes: a double near an f32 rounding tie (or a subnormal result)."""
    with np.errstate(over="ignore", invalid="ignore"):
        wide = np.exp(x.astype(np.float64))
        near, _ = libm._near_ties(wide, wide.astype(np.float32), np.empty(x.size, np.int64),
                                  np.empty(x.size, bool))
    return x[near]


# -- the exact fused multiply-add ----------------------------------------------------------------------------------


def _rounded_once(a: float, b: float, c: float) -> float:
    return float(Fraction(a) * Fraction(b) + Fraction(c))  # (a Fraction converts to the nearest double, ties even)


def test_fma_rounds_once_where_two_roundings_differ():
    """2^-26·(1 + 2^-27) · 2^-27·(1 - 2^-27) + (1 + 2^-52): the product rounds to 2^-53, which makes the sum a
    tie (rounded to even, 1 + 2^-51); the exact value is just below it (1 + 2^-52). And the mirror cases."""
    a, b, c = 2.0 ** -26 * (1 + 2.0 ** -27), 2.0 ** -27 * (1 - 2.0 ** -27), 1 + 2.0 ** -52
    assert a * b + c == 1 + 2.0 ** -51 and _rounded_once(a, b, c) == 1 + 2.0 ** -52
    # the product's error alone decides: 2^-53 - 2^-157 rounds to 2^-53 and c + 2^-53 is a tie; adding the
    # error (-2^-157) to the sum's own error (-2^-53) rounds it away, hence the rounding to odd
    d, e = 2.0 ** -26 * (1 + 2.0 ** -52), 2.0 ** -27 * (1 - 2.0 ** -52)
    assert d * e + c == 1 + 2.0 ** -51 and _rounded_once(d, e, c) == 1 + 2.0 ** -52
    for x, y, z in ((a, b, c), (-a, b, -c), (a, -b, 1.0), (2.0 ** -27, 2.0 ** -26, 1.0), (a, a, 1.0), (d, e, c),
                    (-d, e, -c), (d, -e, c)):
        assert glibc_expf.fma(x, np.array([y]), z)[0] == _rounded_once(x, y, z), (x, y, z)


def test_fma_equals_the_exact_sum_rounded_once_on_random_and_tie_values():
    """Random operands as the expf polynomial has them (``|a·b| <= |c|``), and values built a few ULPs from the
    ties of the final rounding: equal to the exact ``a·b + c`` (fractions) rounded once."""
    rng = np.random.default_rng(0)
    b = rng.uniform(-0.5, 0.5, 3000)
    b[:1000] = np.ldexp(np.round(b[:1000] * 2 ** 30), -31)  # short significands: exact products, exact ties
    for a, c in ((glibc_expf._C0, glibc_expf._C1), (glibc_expf._C2, 1.0), (2.0 ** -7, 1.0 + 2.0 ** -52),
                 (-3.0 * 2.0 ** -9, 0.75)):
        got = glibc_expf.fma(a, b, c)
        want = np.array([_rounded_once(a, v, c) for v in b.tolist()])
        assert np.array_equal(got, want), (a, c)


# -- the replica against the C library ------------------------------------------------------------------------


def _corners() -> np.ndarray:
    return np.concatenate([
        as_f32(0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000, 0x7F800000, 0xFF800000, 0, 0x80000000, 1,
               0x80000001, 0x42B17217, 0x42B17218, 0x42B17219, 0xC2CFF1B4, 0xC2CFF1B5, 0xC2CFF1B6, 0xC2CE8ED0,
               0xC2CE8ECF, 0xC2CE8ED1, 0x42B00000, 0xC2B00000, 0x7F7FFFFF, 0xFF7FFFFF),
        np.float32([-103.28, -103.3, -104.0, -87.33654, -87.3365, 88.7, 88.73, 1e-8, -1e-8, 0.5, -0.5]),
        np.linspace(-104, -87, 3001, dtype=np.float32),  # subnormal results
    ])


@needs_glibc
def test_glibc_expf_is_the_c_librarys_on_the_candidates_and_corners():
    """The detected build equals the C library on the near-tie candidates of random bit patterns and of
    normal values, on the discriminating inputs and on the corners: NaNs (quietened, payload and sign kept),
    infinities, zeros, overflow to inf from 0x1.62e42ep6, the smallest subnormal below -0x1.9d1d9ep6, 0 below
    -0x1.9fe368p6, subnormal results."""
    rng = np.random.default_rng(1)
    patterns = rng.integers(0, 2 ** 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    normal = (rng.standard_normal(1 << 19) * 20).astype(np.float32)
    x = np.concatenate([candidates(patterns), candidates(normal), as_f32(*libm.DISCRIMINATING), _corners()])
    assert x.size > 2000
    assert np.array_equal(bits(glibc_expf.glibc_expf(x, BUILD)), bits(c_library(x)))


def test_the_builds_differ_on_the_discriminating_inputs():
    """Without a difference there, the build could not be told from the C library's values; with glibc, the
    detected build's values are the C library's there."""
    x = as_f32(*libm.DISCRIMINATING)
    fused, plain = glibc_expf.glibc_expf(x, True), glibc_expf.glibc_expf(x, False)
    assert np.all(bits(fused) != bits(plain))
    if BUILD is not None:
        assert np.array_equal(bits(fused if BUILD else plain), bits(c_library(x)))


# -- libm's blocks ---------------------------------------------------------------------------------------------


def test_a_nan_in_the_block_does_not_hide_subnormal_ties():
    """exp of these rounds the other way in double than in the C library (subnormal results); a NaN in the
    same block used to make the block's minimum NaN and skip their check."""
    ties = as_f32(0xC2B63CEE, 0xC2B4E737, 0xC2B1374A, 0xC2B0F430)
    assert np.any(bits(np.exp(ties.astype(np.float64)).astype(np.float32)) != bits(c_library(ties)))
    x = np.concatenate([np.float32([np.nan]), ties, np.float32([-np.nan, 1.0])])
    with np.errstate(invalid="ignore"):
        assert np.array_equal(bits(libm.expf(x)), bits(c_library(x)))


def _many_ties(n: int = 300_000) -> np.ndarray:
    """Values over several blocks with some thousand near-tie candidates (past REPLICA_MIN) and the corners."""
    x = (np.random.default_rng(3).standard_normal(n) * 30).astype(np.float32)
    x[::1000] = np.resize(_corners(), x[::1000].size)
    return x


@pytest.mark.parametrize("build", ["detected", "unknown"])
def test_blocks_equal_the_c_library_with_the_replica_or_ctypes(monkeypatch, build):
    """Several blocks, their fix-ups made at once: by glibc_expf, or element by element through ctypes when the
    build is unknown (another C library)."""
    if build == "unknown":
        monkeypatch.setattr(libm, "_BUILD", [None])
    x = _many_ties()
    assert candidates(x).size > libm.REPLICA_MIN
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.array_equal(bits(libm.expf(x)), bits(c_library(x)))


def test_activations_in_place_and_into_strided_outputs_keep_their_values():
    """Swish, Elu and SoftPlus written over their own input (the fix-ups read the inputs saved per block;
    SoftPlus keeps x from 88.72 on) and into a strided view: the values of a fresh output."""
    x = _many_ties().reshape(-1, 100)
    softplus = unary._unary_kernel(next(entry for entry in unary.TABLE if entry.type == "SoftPlus"))
    with np.errstate(all="ignore"):
        want_swish, want_elu, want_softplus = unary.swish(x), unary.elu(x, alpha=0.5), softplus(x)
        for kernel, want in ((unary.swish, want_swish), (softplus, want_softplus)):
            inplace = x.copy()
            kernel(inplace, out=inplace)
            assert bits(inplace).tobytes() == bits(want).tobytes()
        strided = np.empty((x.shape[0], 200), np.float32)[:, ::2]
        unary.elu(x, alpha=0.5, out=strided)
        assert bits(strided).tobytes() == bits(want_elu).tobytes()
        reference_elu = np.where(x < 0, (0.5 * (c_library(x).astype(np.float64) - 1.0)).astype(np.float32), x)
        reference_swish = x / (np.float32(1) + c_library(-x))
    assert bits(want_elu).tobytes() == bits(reference_elu).tobytes()
    assert bits(want_swish).tobytes() == bits(reference_swish).tobytes()
