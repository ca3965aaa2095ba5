"""Elu and Selu, which OpenVINO's Python API cannot evaluate, against a literal transcription of the reference's C++
(src/core/reference/include/openvino/reference/elu.hpp, selu.hpp) with the C library's ``expf``/``exp`` through
ctypes, bit for bit: f32 on random bit patterns of the whole range and the corners (-0, NaN, infinities,
subnormal inputs and results, overflow, ``alpha`` not exact in f32), integers on their extremes."""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.toolkit.libm import EXPF_BLOCK  # noqa: E402
from tests.helpers.optest import write_ir  # noqa: E402

F32, F64 = np.float32, np.float64
_INTEGER = {"i8": "int8", "u8": "uint8", "i32": "int32", "i64": "int64", "u32": "uint32"}
_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_LIBM.expf.restype, _LIBM.expf.argtypes = ctypes.c_float, [ctypes.c_float]
_LIBM.exp.restype, _LIBM.exp.argtypes = ctypes.c_double, [ctypes.c_double]


def _expf(x: np.ndarray) -> np.ndarray:
    return np.array([_LIBM.expf(v) for v in x.tolist()], F32)


def _f32_cases(seed: int, n: int) -> np.ndarray:
    """Random bit patterns, values of the negative branch (normal, subnormal and zero ``expf`` results) and
    the corners."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(F32)
    negative = -rng.uniform(0, 110, n).astype(F32)
    small = (rng.standard_normal(n) * 2).astype(F32)
    corners = np.float32([0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, -1e-40, -2**-126, 88.8, 89,
                          -87.3, -103.9, -104, -150, -1e30, -np.finfo(F32).max, np.finfo(F32).max, -1, -0.5])
    return np.concatenate([bits, negative, small, corners])


def _run(tmp_path, node, x: np.ndarray) -> np.ndarray:
    param_node, make = node
    path = write_ir(make(param_node), [param_node], tmp_path, "model")
    return next(iter(ir_runner.load(str(path)).run({"x": x}).values()))


def _param(et: str):
    return opset13.parameter([-1], getattr(ov.Type, et), name="x")


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    differ = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert differ.size == 0, f"{differ.size} differ, first x index {differ[:5]}: got {got[differ[:5]]}, " \
                             f"want {want[differ[:5]]}"


@pytest.mark.parametrize("alpha", [1.0, 0.1, 1.6732632423543772, -0.5, 3e-39])
def test_f32_elu_is_the_references_double_formula(tmp_path, alpha):
    """``x < 0 ? T(alpha * (std::exp(x) - 1.0)) : x``: ``expf``, then double, rounded once; -0 and NaN are x."""
    x = _f32_cases(int(alpha * 1000) % 97, 3000)
    got = _run(tmp_path, (_param("f32"), lambda p: opset13.elu(p, alpha)), x)
    with np.errstate(all="ignore"):
        want = np.where(x < 0, (alpha * (_expf(x).astype(F64) - 1.0)).astype(F32), x)
    _same_bits(got, want)
    assert np.signbit(got[x.view(np.uint32) == 0x80000000]).all()  # -0 stays -0


def test_f32_elu_over_several_blocks_and_threads(tmp_path):
    """More than one ``map_expf`` block (the near-tie fix-ups run ``finish`` again on their elements)."""
    x = (np.random.default_rng(5).standard_normal(2 * EXPF_BLOCK + 11) * 8).astype(F32)
    got = _run(tmp_path, (_param("f32"), lambda p: opset13.elu(p, 0.3)), x)
    _same_bits(got, np.where(x < 0, (0.3 * (_expf(x).astype(F64) - 1.0)).astype(F32), x))


@pytest.mark.parametrize("et", ["i8", "i32", "i64"])
@pytest.mark.parametrize("alpha", [2.5, 0.1, -3.0])
def test_integer_elu_is_computed_in_double_and_truncated(tmp_path, et, alpha):
    info = np.iinfo(_INTEGER[et])
    x = np.array([info.min, info.min + 1, -100, -7, -2, -1, 0, 1, 5, info.max], dtype=info.dtype)
    got = _run(tmp_path, (_param(et), lambda p: opset13.elu(p, alpha)), x)
    want = [int(alpha * (_LIBM.exp(float(v)) - 1.0)) if v < 0 else int(v) for v in x.tolist()]
    assert got.dtype == x.dtype and got.tolist() == want


def test_unsigned_elu_is_a_copy(tmp_path):
    x = np.uint32([0, 1, 7, 2**32 - 1])
    assert _run(tmp_path, (_param("u32"), lambda p: opset13.elu(p, 2.0)), x).tolist() == x.tolist()


def test_f64_elu_keeps_minus_zero_and_nan(tmp_path):
    x = np.float64([-0.0, np.nan, -np.inf, np.inf, -1.0, 2.0])
    got = _run(tmp_path, (_param("f64"), lambda p: opset13.elu(p, 0.5)), x)
    assert np.signbit(got[0]) and got[0] == 0 and np.isnan(got[1])
    assert got[2] == -0.5 and got[3] == np.inf and got[5] == 2.0
    assert abs(got[4] - 0.5 * math.expm1(-1.0)) <= 1e-16


def _selu(alpha, lam):
    return lambda p: opset13.selu(p, opset13.constant(alpha), opset13.constant(lam))


@pytest.mark.parametrize("alpha, lam", [(1.6732632423543772, 1.0507009873554805), (0.1, 3.3), (2.0, -0.7)])
def test_f32_selu_is_the_references_f32_formula(tmp_path, alpha, lam):
    """``x > 0 ? T(lambda * x) : T(alpha * lambda * (std::exp(x) - 1))``, all in f32, ``alpha * lambda``
    rounded first."""
    a, b = F32([alpha]), F32([lam])
    x = _f32_cases(7, 3000)
    got = _run(tmp_path, (_param("f32"), _selu(a, b)), x)
    with np.errstate(all="ignore"):
        want = np.where(x > 0, b[0] * x, (a[0] * b[0]) * (_expf(x) - F32(1)))
    nan = np.isnan(want)
    assert np.isnan(got[nan]).all()
    _same_bits(got[~nan], want[~nan])


def test_f32_swish_is_the_f32_formula_within_one_ulp_of_the_references_double_one(tmp_path):
    """The one kept deviation (docs/semantics.md): ir-run adds and divides in f32, bit for bit; the
    reference's ``T(x / (1.0 + std::exp(-x)))`` does both in double: within 1 ULP of it."""
    from tests.helpers.node_eval import evaluate
    from tests.helpers.optest import ulp_distance

    x = _f32_cases(11, 3000)
    got = _run(tmp_path, (_param("f32"), opset13.swish), x)
    e = _expf(-x)
    with np.errstate(all="ignore"):
        in_f32 = x / (F32(1) + e)
        in_double = (x.astype(F64) / (1.0 + e.astype(F64))).astype(F32)
    nan = np.isnan(in_f32)
    assert np.isnan(got[nan]).all()
    _same_bits(got[~nan], in_f32[~nan])
    reference = evaluate(opset13.swish(opset13.parameter([x.size], ov.Type.f32)), [x])
    _same_bits(reference[~nan], in_double[~nan])
    assert ulp_distance(got, reference).max() <= 1
