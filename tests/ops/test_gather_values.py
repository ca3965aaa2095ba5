"""Gather-1/7/8 values: spec examples, OpenVINO's op_reference cases, index corners, every element type.

Each case builds a one-layer IR with ``tests/helpers/irbuild.py`` (data and indices Parameters, axis a Const)
and runs it with ``ir_runner.load(...).run``. Expected outputs are literal values or come from
``expected_gather`` below, a loop over index positions written from the reference semantics: a negative
index gets ``dim`` added, an index still outside ``[0, dim-1]`` gives zeros. Comparisons are bit for bit.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import ir_runner
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS
from ir_runner.types import ELEMENT_TYPES, element_type_of
from tests.helpers.bits import assert_same_bits
from tests.helpers.gather_reference import gather_with_zeros
from tests.helpers.irbuild import IRBuilder

NP = {name: et.dtype.type for name, et in ELEMENT_TYPES.items()  # IR name -> numpy type (strings: test_strings.py)
      if et.dtype is not None and et.kind != "string"}
INT_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOAT_TYPES = ("bf16", "f16", "f32", "f64")


def normalise(data_rank: int, indices_rank: int, axis: int, batch_dims: int) -> tuple[int, int]:
    return (axis + data_rank if axis < 0 else axis), (batch_dims + indices_rank if batch_dims < 0 else batch_dims)


def out_shape(data_shape, indices_shape, axis: int, batch_dims: int) -> tuple[int, ...]:
    axis, batch_dims = normalise(len(data_shape), len(indices_shape), axis, batch_dims)
    return tuple(data_shape[:axis]) + tuple(indices_shape[batch_dims:]) + tuple(data_shape[axis + 1:])


def expected_gather(data: np.ndarray, indices: np.ndarray, axis: int, batch_dims: int = 0) -> np.ndarray:
    """The reference semantics as a loop over (batch, outer, index) positions, copying one slice each."""
    axis, batch_dims = normalise(data.ndim, indices.ndim, axis, batch_dims)
    dim = data.shape[axis]
    out = np.zeros(out_shape(data.shape, indices.shape, axis, batch_dims), data.dtype)
    wide = [int(v) for v in np.asarray(indices).reshape(-1).tolist()]
    flat_idx = np.array(wide, dtype=object).reshape(indices.shape)
    for position in np.ndindex(*data.shape[:axis]):
        batch = position[:batch_dims]
        for tail in np.ndindex(*indices.shape[batch_dims:]):
            value = flat_idx[batch + tail]
            if value < 0:
                value += dim
            if 0 <= value < dim:
                out[position + tail] = data[position + (value,)]
    return out


def build(data_shape, indices_shape, axis, version: str, batch_dims, et: str, idx_et: str, *,
          axis_et: str = "i64", axis_shape=(), axis_convert: str | None = None, indices_value=None, data_value=None):
    """IR bytes of one Gather named ``my_gather``; data/indices are Parameters unless values are given."""
    b = IRBuilder("gather")
    data = (b.parameter("data", et, ",".join(map(str, data_shape))) if data_value is None
            else b.const("data", data_value, et))
    indices = (b.parameter("indices", idx_et, ",".join(map(str, indices_shape))) if indices_value is None
               else b.const("indices", indices_value, idx_et))
    axis_node = b.const("axis", np.full(axis_shape, axis), axis_et)
    if axis_convert:
        axis_node = b.convert(axis_node, axis_convert)
    attrs = None if version == "opset1" else ({} if batch_dims is None else {"batch_dims": batch_dims})
    shape = out_shape(data_shape, indices_shape, axis, batch_dims or 0)
    node = b.layer("Gather", version, [data, indices, axis_node], attrs=attrs, out_specs=[(et, list(shape))],
                   name="my_gather")
    b.result(node, "out")
    return b.build()


def type_name(array: np.ndarray) -> str:
    return element_type_of(array.dtype).name


def run_gather(data, indices, axis: int, version: str = "opset8", batch_dims: int | None = None, *,
               et: str | None = None, idx_et: str | None = None, strict: bool = False, **options) -> np.ndarray:
    data, indices = np.asarray(data), np.asarray(indices)
    et, idx_et = et or type_name(data), idx_et or type_name(indices)
    xml, weights = build(data.shape, indices.shape, axis, version, batch_dims, et, idx_et, **options)
    model = ir_runner.load(xml, weights or None, strict=strict)
    (out,) = model.run({"data": data, "indices": indices}).values()
    return out


# ----------------------------------------------------------------------------- spec examples

ROWS = [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]
BATCHED = [[0, 0, 4], [4, 0, 0]]
SPEC_EXAMPLES = {
    1: ([1, 2, 3, 4, 5], [0, 0, 4], 0, 0, [1, 1, 5]),
    2: (ROWS, BATCHED, 1, 1, [[1, 1, 5], [10, 6, 6]]),
    3: ([ROWS, [[11, 12, 13, 14, 15], [16, 17, 18, 19, 20]]], [BATCHED, [[1, 2, 4], [4, 3, 2]]], 2, 2,
        [[[1, 1, 5], [10, 6, 6]], [[12, 13, 15], [20, 19, 18]]]),
    4: (np.arange(1, 41).reshape(2, 1, 5, 4).tolist(), [[1, 2, 4], [4, 3, 2]], 2, 1,
        [[[[5, 6, 7, 8], [9, 10, 11, 12], [17, 18, 19, 20]]],
         [[[37, 38, 39, 40], [33, 34, 35, 36], [29, 30, 31, 32]]]]),
    5: (ROWS, BATCHED, 1, -1, [[1, 1, 5], [10, 6, 6]]),
}


@pytest.mark.parametrize("version", ["opset7", "opset8"])
@pytest.mark.parametrize("number", sorted(SPEC_EXAMPLES))
def test_spec_example(number, version):
    data, indices, axis, batch_dims, want = SPEC_EXAMPLES[number]
    out = run_gather(np.array(data, np.int32), np.array(indices, np.int32), axis, version, batch_dims)
    assert_same_bits(out, np.array(want, np.int32))


def test_spec_example_1_gather_1():
    out = run_gather(np.array([1, 2, 3, 4, 5], np.float32), np.array([0, 0, 4], np.int64), 0, "opset1")
    assert_same_bits(out, np.array([1, 1, 5], np.float32))


def test_spec_ir_example_shapes():
    """The spec's XML example: data [2,64,128], indices [2,32,21], axis 1, batch_dims 1 -> [2,32,21,128]."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 64, 128)).astype(np.float32)
    indices = rng.integers(0, 64, (2, 32, 21)).astype(np.int32)
    out = run_gather(data, indices, 1, "opset7", 1)
    assert out.shape == (2, 32, 21, 128)
    assert_same_bits(out, expected_gather(data, indices, 1, 1))


# ----------------------------------------------------------------------------- op_reference/gather.cpp
# (name, data shape, data, indices shape, indices, axis, batch_dims, expected shape, expected)

REPEAT_IDX = [0, 1, 1, 2] * 12
F6 = [1.0, 1.1, 2.0, 2.1, 3.0, 3.1]
F8_OUT = [1.0, 1.1, 2.0, 2.1, 2.0, 2.1, 3.0, 3.1]
F9 = [1.0, 1.1, 1.2, 2.0, 2.1, 2.2, 3.0, 3.1, 3.2]
F36 = [round(b + r + f, 1) for b in (1, 11, 101, 111) for r in (0, 1, 2) for f in (0.0, 0.1, 0.2)]
F36_OUT = [round(b + r + f, 1) for b in (1, 11, 101, 111) for r in (0, 2) for f in (0.0, 0.1, 0.2)]

V1_INT = [
    ("4d_indices_axis_0", (3, 2), [10, 11, 20, 21, 30, 31], (2, 2, 3, 4), REPEAT_IDX, 0, 0, (2, 2, 3, 4, 2),
     [10, 11, 20, 21, 20, 21, 30, 31] * 12),
    ("axis_0", (3, 2), [10, 11, 20, 21, 30, 31], (2, 2), [0, 1, 1, 2], 0, 0, (2, 2, 2),
     [10, 11, 20, 21, 20, 21, 30, 31]),
]
FLOAT_COMMON = [
    ("4d_indices_axis_0_2d_input", (3, 2), F6, (2, 2, 3, 4), REPEAT_IDX, 0, 0, (2, 2, 3, 4, 2), F8_OUT * 12),
    ("3d_indices_axis_0_2d_input", (3, 2), F6, (2, 3, 4), REPEAT_IDX[:24], 0, 0, (2, 3, 4, 2), F8_OUT * 6),
    ("2d_indices_axis_0_2d_input", (3, 2), F6, (2, 2), [0, 1, 1, 2], 0, 0, (2, 2, 2), F8_OUT),
    ("2d_negative_and_positive_indices_axis_0_2d_input", (3, 2), F6, (2, 2), [0, -2, 1, 2], 0, 0, (2, 2, 2), F8_OUT),
    ("1d_indices_axis_0_1d_input", (3,), [1.0, 2.0, 3.0], (2,), [1, 0], 0, 0, (2,), [2.0, 1.0]),
    ("scalar_indices_axis_0_2d_input", (3, 2), F6, (), [1], 0, 0, (2,), [2.0, 2.1]),
    ("2d_indices_axis_1_2d_input", (3, 3), F9, (1, 2), [0, 2], 1, 0, (3, 1, 2), [1.0, 1.2, 2.0, 2.2, 3.0, 3.2]),
    ("1d_indices_axis_2_4d_input", (2, 2, 3, 3), F36, (2,), [0, 2], 2, 0, (2, 2, 2, 3), F36_OUT),
    ("scalar_indices_axis_1_2d_input", (3, 3), F9, (), [0], 1, 0, (3,), [1.0, 2.0, 3.0]),
]
V7_INT = [
    ("v7_1d", (3,), [1, 2, 3], (2,), [2, 0], 0, 0, (2,), [3, 1]),
    ("v7_axis_0", (3, 2), [10, 11, 20, 21, 30, 31], (2, 2), [0, 1, 1, 2], 0, 0, (2, 2, 2),
     [10, 11, 20, 21, 20, 21, 30, 31]),
    ("v7_3d_indices_axis_1_batch_dims_1", (2, 3), [1, 2, 3, 4, 5, 6], (2, 2, 2), [0, 1, 1, 2, 2, 0, 1, 2], 1, 1,
     (2, 2, 2), [1, 2, 2, 3, 6, 4, 5, 6]),
    ("v7_2d_indices_axis_1_batch_dims_1", (2, 5), list(range(1, 11)), (2, 3), [0, 0, 4, 4, 0, 0], 1, 1, (2, 3),
     [1, 1, 5, 10, 6, 6]),
    ("v7_2d_indices_axis_1_negative_batch_dims", (2, 5), list(range(1, 11)), (2, 3), [0, 0, 4, 4, 0, 0], 1, -1,
     (2, 3), [1, 1, 5, 10, 6, 6]),
    ("v7_4d_data_axis_2_batch_dims_1", (2, 1, 5, 4), list(range(1, 41)), (2, 3), [1, 2, 4, 4, 3, 2], 2, 1,
     (2, 1, 3, 4), [5, 6, 7, 8, 9, 10, 11, 12, 17, 18, 19, 20, 37, 38, 39, 40, 33, 34, 35, 36, 29, 30, 31, 32]),
]
V7_BOOL = [("v7_axis_0_bool", (3, 2), [1, 1, 1, 0, 0, 1], (2, 2), [0, 1, 1, 2], 0, 0, (2, 2, 2),
            [1, 1, 1, 0, 1, 0, 0, 1])]
V7_FLOAT = FLOAT_COMMON + [
    ("v7_3d_indices_axis_1_batch_dims_1", (2, 5, 2), [float(v) for v in range(1, 21)], (2, 2, 3),
     [0, 0, 4, 4, 0, 0, 1, 2, 4, 4, 3, 2], 1, 1, (2, 2, 3, 2),
     [1, 2, 1, 2, 9, 10, 9, 10, 1, 2, 1, 2, 13, 14, 15, 16, 19, 20, 19, 20, 17, 18, 15, 16]),
]
V8_ONLY = [
    ("v8_1d_negative_indices", (5,), [1, 2, 3, 4, 5], (3,), [0, -2, -1], 0, 0, (3,), [1, 4, 5]),
    ("v8_out_of_bound_indices_1", (5,), [1, 2, 3, 4, 5], (3,), [0, 20, 4], 0, 0, (3,), [1, 0, 5]),
    ("v8_4d_data_axis_2_batch_dims_1_out_of_bound_indices_2", (2, 1, 5, 4), list(range(1, 41)), (2, 3),
     [1, 2, 200, 4, 200, 2], 2, 1, (2, 1, 3, 4),
     [5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0, 37, 38, 39, 40, 0, 0, 0, 0, 29, 30, 31, 32]),
    ("v8_out_of_bound_negative_index", (5,), [1, 2, 3, 4, 5], (3,), [0, -200, 4], 0, 0, (3,), [1, 0, 5]),
]


def op_reference_cases():
    for et in INT_TYPES:
        yield from (("opset1", et, case) for case in V1_INT)
    for et in FLOAT_TYPES:
        yield from (("opset1", et, case) for case in FLOAT_COMMON)
    for version in ("opset7", "opset8"):
        yield from ((version, "boolean", case) for case in V7_BOOL)
        for et in INT_TYPES:
            yield from ((version, et, case) for case in V7_INT)
        for et in FLOAT_TYPES:
            yield from ((version, et, case) for case in V7_FLOAT)
    for et in ("boolean",) + INT_TYPES + FLOAT_TYPES:
        yield from (("opset8", et, case) for case in V8_ONLY)


OP_REFERENCE = list(op_reference_cases())


@pytest.mark.parametrize("version, et, case", OP_REFERENCE, ids=[f"{v}-{e}-{c[0]}" for v, e, c in OP_REFERENCE])
def test_op_reference(version, et, case):
    _, dshape, data, ishape, indices, axis, batch_dims, oshape, want = case
    dt = NP[et]
    data_v = np.array(data, np.float64).astype(dt).reshape(dshape)
    indices_v = np.array(indices, np.int32).reshape(ishape)
    out = run_gather(data_v, indices_v, axis, version, None if version == "opset1" else batch_dims, et=et)
    assert_same_bits(out, np.array(want, np.float64).astype(dt).reshape(oshape))


# ----------------------------------------------------------------------------- index values


@pytest.mark.parametrize("version", ["opset1", "opset7", "opset8"])
@pytest.mark.parametrize("idx_et", ["i8", "i16", "i32", "i64"])
def test_negative_and_out_of_range_indices(version, idx_et):
    """All versions: -1 is the last element, -dim the first; dim and -dim-1 and beyond give zeros."""
    data = np.arange(1, 16, dtype=np.float32).reshape(3, 5)
    indices = np.array([[-1, -5, 0, 4], [5, -6, 100, -100]], NP[idx_et])
    out = run_gather(data, indices, 1, version)
    want = np.zeros((3, 2, 4), np.float32)
    want[:, 0, 0], want[:, 0, 1], want[:, 0, 2], want[:, 0, 3] = data[:, 4], data[:, 0], data[:, 0], data[:, 4]
    assert_same_bits(out, want)
    assert_same_bits(out, expected_gather(data, indices, 1))


@pytest.mark.parametrize("idx_et", ["u8", "u16", "u32", "u64"])
def test_unsigned_indices(idx_et):
    dt = NP[idx_et]
    indices = np.array([0, 4, 5, np.iinfo(dt).max // 2, 3], dt)
    out = run_gather(np.arange(10, 15, dtype=np.int16), indices, 0)
    assert_same_bits(out, np.array([10, 14, 0, 0, 13], np.int16))


@pytest.mark.parametrize("version", ["opset1", "opset7", "opset8"])
def test_f16_signalling_nan_is_quietened(version):
    """OpenVINO's reference Gather (and its CPU plugin) returns f16 signalling NaNs quietened (bit 9 set)."""
    data = np.array([0x7C01, 0xFC93, 0x7D00, 0x7E01, 0x3C00], np.uint16).view(np.float16)
    out = run_gather(data, np.array([0, 1, 2, 3, 4, 7], np.int32), 0, version)
    assert_same_bits(out, np.array([0x7E01, 0xFE93, 0x7F00, 0x7E01, 0x3C00, 0], np.uint16).view(np.float16))


def test_i64_indices_beyond_32_bits_are_out_of_range():
    """2**32 + 1 is not 1 (the CPU plugin truncates i64 indices; the reference does not)."""
    data = np.array([10, 20, 30], np.int64)
    indices = np.array([2**32 + 1, -(2**32) + 1, 2**62, -(2**63), 2**63 - 1, 1], np.int64)
    assert_same_bits(run_gather(data, indices, 0), np.array([0, 0, 0, 0, 0, 20], np.int64))


@pytest.mark.parametrize("version", ["opset7", "opset8"])
def test_i64_data_beyond_32_bits_is_exact(version):
    data = np.array([[2**40 + 1, -(2**33), 2**62], [2**31, -(2**63), 2**63 - 1]], np.int64)
    indices = np.array([[2, 0], [1, 2]], np.int64)
    out = run_gather(data, indices, 1, version, 1)
    assert_same_bits(out, np.array([[2**62, 2**40 + 1], [-(2**63), 2**63 - 1]], np.int64))


def test_u64_data_extremes():
    data = np.array([2**64 - 1, 2**63, 0, 1], np.uint64)
    got = run_gather(data, np.array([0, 1, -1, 9], np.int32), 0)
    assert_same_bits(got, np.array([2**64 - 1, 2**63, 1, 0], np.uint64))


@pytest.mark.parametrize("idx_et", ["i4", "u4"])
def test_four_bit_indices(idx_et):
    dt = NP[idx_et]
    values = [-8, -1, 0, 3, 7] if idx_et == "i4" else [0, 3, 7, 8, 15]
    indices = np.array(values, dt)
    data = np.arange(100, 108, dtype=np.int32)
    assert_same_bits(run_gather(data, indices, 0, idx_et=idx_et), expected_gather(data, indices, 0))


def test_gather_1_float_indices_truncate():
    """Gather-1 accepts float indices; each is truncated toward zero (as the reference reads them)."""
    data = np.array([1, 2, 3, 4, 5], np.int32)
    indices = np.array([1.7, -1.2, -0.5, 4.9, 5.0, 0.0], np.float32)
    assert_same_bits(run_gather(data, indices, 0, "opset1"), np.array([2, 5, 1, 5, 0, 1], np.int32))


# ----------------------------------------------------------------------------- element types


def palette(et: str) -> np.ndarray:
    """Six values of ``et`` that must be moved bit for bit (extremes, -0.0, inf, NaN payloads)."""
    dt = np.dtype(NP[et])
    if et == "boolean":
        return np.array([True, False, True, True, False, True])
    limit = ELEMENT_TYPES[et].code_limit  # u1, u2, u3, u6 values and nf4 codes, one per byte
    if limit is not None:
        return np.array([limit, 0, 1, limit, 0, limit // 2], np.uint8)
    if et in ("i4", "u4"):
        info = ml_dtypes.iinfo(dt)
        return np.array([info.min, info.max, 1, 2, info.max - 1, 3], dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.array([info.min, info.max, 1, info.max - 1, info.min + 1, 2], dt)
    patterns = {
        "f16": (0x8000, 0x7C00, 0xFC00, 0x7E01, 0xFE3F, 0x0001),  # quiet NaNs: see test_f16_signalling_nan
        "bf16": (0x8000, 0x7F80, 0xFF80, 0x7FA1, 0xFFC3, 0x0001),
        "f32": (0x80000000, 0x7F800000, 0xFF800000, 0x7FA00001, 0xFFC12345, 0x00000001),
        "f64": (1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, (0x7FF4 << 48) | 7, (0xFFF8 << 48) | 0xABC, 1),
        "f8e4m3": (0x80, 0x7F, 0xFF, 0x01, 0x7E, 0xFE),
        "f8e5m2": (0x80, 0x7C, 0xFC, 0x7D, 0xFF, 0x01),
        "f8e8m0": (0x00, 0x7F, 0xFF, 0xFE, 0x01, 0x80),  # 2**-127, 1, NaN, 2**127
        "f4e2m1": (0x8, 0x7, 0xF, 0x1, 0x9, 0x6),  # -0, +-6, +-0.5 (one value per byte)
    }[et]
    return np.array(patterns, dtype=f"u{dt.itemsize}").view(dt)


@pytest.mark.parametrize("version", ["opset1", "opset7", "opset8"])
@pytest.mark.parametrize("et", sorted(NP))
def test_every_element_type(et, version):
    """Values move bit for bit; an out-of-range index gives the type's zero (+0.0, False, 0)."""
    data = palette(et).reshape(2, 3)
    indices = np.array([[2, -1, 3], [0, -4, 1]], np.int32)
    out = run_gather(data, indices, -1, version, et=et)
    assert_same_bits(out, expected_gather(data, indices, -1))
    assert out[0, 0, 2].tobytes() == bytes(out.dtype.itemsize)


# ----------------------------------------------------------------------------- shapes and axis


SHAPE_CASES = [
    # (data shape, indices shape, axis, batch_dims)
    ((5,), (), 0, 0),  # 0-d output
    ((3, 4), (), 1, 0),
    ((3, 4), (0,), 1, 0),  # empty indices
    ((3, 0, 4), (2,), 2, 0),  # zero-sized dim outside the axis
    ((3, 0, 4), (2, 2), 0, 0),
    ((2, 3), (2,), 1, 1),  # batch_dims == rank(indices)
    ((2, 3, 4), (2, 3), 2, 2),
    ((2, 3, 4), (2, 3, 2), 2, -1),
    ((2, 3, 4, 5), (2, 2, 1), 3, 1),
    ((2, 1, 3), (2, 0), 2, 1),
    ((0, 3), (0, 2), 1, 1),  # zero-sized batch
    ((1, 1, 1, 1, 6), (1, 1, 2, 2), -1, 2),
]


@pytest.mark.parametrize("version", ["opset7", "opset8"])
@pytest.mark.parametrize("data_shape, indices_shape, axis, batch_dims", SHAPE_CASES, ids=str)
def test_shapes(data_shape, indices_shape, axis, batch_dims, version):
    rng = np.random.default_rng(sum(data_shape) + len(indices_shape))
    data = rng.integers(-1000, 1000, data_shape).astype(np.int32)
    dim = data_shape[axis]
    indices = rng.integers(-dim - 2, dim + 2, indices_shape).astype(np.int64)
    out = run_gather(data, indices, axis, version, batch_dims)
    assert_same_bits(out, expected_gather(data, indices, axis, batch_dims))


@pytest.mark.parametrize("version", ["opset1", "opset7", "opset8"])
def test_zero_sized_axis(version):
    """data [2,0,3]: every index is out of range, so non-empty indices give zeros (the CPU plugin crashes)."""
    data = np.zeros((2, 0, 3), np.float32)
    assert_same_bits(run_gather(data, np.array([0, -1, 5], np.int32), 1, version), np.zeros((2, 3, 3), np.float32))
    assert_same_bits(run_gather(data, np.zeros((0,), np.int32), 1, version), np.zeros((2, 0, 3), np.float32))


@pytest.mark.parametrize("axis_et, axis_shape, axis_convert", [
    ("i32", (), None), ("i64", (1,), None), ("i8", (), None), ("u8", (1,), None), ("i32", (1,), "i64"),
    ("i64", (), "i32"),
])
def test_axis_constant_forms(axis_et, axis_shape, axis_convert):
    data = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    indices = np.array([3, 0], np.int32)
    out = run_gather(data, indices, 2, axis_et=axis_et, axis_shape=axis_shape, axis_convert=axis_convert)
    assert_same_bits(out, data[:, :, [3, 0]])


@pytest.mark.parametrize("axis", [-3, -2, -1, 0, 1, 2])
def test_every_axis(axis):
    data = np.arange(60, dtype=np.uint16).reshape(3, 4, 5)
    indices = np.array([[1, -1], [0, 2]], np.int64)
    assert_same_bits(run_gather(data, indices, axis, "opset1"), expected_gather(data, indices, axis))


def test_constant_data_and_indices():
    """Const data and Const indices (the whole layer is constant) still compute the reference values."""
    data = np.array([[1.5, -2.5], [3.5, -4.5]], np.float32)
    indices = np.array([1, -1, 7], np.int64)
    xml, weights = build((2, 2), (3,), 1, "opset8", 0, "f32", "i64", data_value=data, indices_value=indices)
    (out,) = ir_runner.load(xml, weights).run({}).values()
    assert_same_bits(out, np.array([[-2.5, -2.5, 0], [-4.5, -4.5, 0]], np.float32))


def test_dynamic_data_shape_reruns():
    b = IRBuilder("gather")
    data = b.parameter("data", "bf16", "?,?")
    indices = b.parameter("indices", "i32", "?")
    axis = b.const("axis", np.array(0, np.int64))
    node = b.layer("Gather", "opset8", [data, indices, axis], attrs={"batch_dims": 0},
                   out_specs=[("bf16", [-1, -1])], name="my_gather")
    b.result(node, "out")
    model = ir_runner.load(*b.build())
    for rows, cols, idx in [(3, 2, [2, -3, 3]), (1, 5, [0]), (4, 0, [1, 1]), (2, 2, [])]:
        data_v = np.arange(rows * cols).reshape(rows, cols).astype(ml_dtypes.bfloat16)
        idx_v = np.array(idx, np.int32)
        assert_same_bits(model.run({"data": data_v, "indices": idx_v})["out"], expected_gather(data_v, idx_v, 0))


# ----------------------------------------------------------------------------- strict mode


@pytest.mark.parametrize("version, index, ok", [
    ("opset1", 4, True), ("opset1", -1, False), ("opset1", 5, False),
    ("opset7", 0, True), ("opset7", -1, False), ("opset7", 5, False),
    ("opset8", -5, True), ("opset8", -1, True), ("opset8", -6, False), ("opset8", 5, False),
])
def test_strict_mode_range(version, index, ok):
    data = np.arange(5, dtype=np.float32)
    indices = np.array([[0, 1], [2, index]], np.int64)
    if ok:
        out = run_gather(data, indices, 0, version, strict=True)
        assert_same_bits(out, expected_gather(data, indices, 0))
        return
    with pytest.raises(ir_runner.IndexOutOfRangeError) as info:
        run_gather(data, indices, 0, version, strict=True)
    message = str(info.value)
    assert "my_gather" in message and f"Gather-{version[-1]}" in message
    assert re.search(rf"(?<![\d-]){index}(?!\d)", message) and "[1, 1]" in message
    assert info.value.exit_code == 4


def test_strict_mode_u64_index_is_its_real_value():
    """u64 index 2**64-1 is far outside [-dim, dim-1]: strict mode must reject it, naming that value."""
    data = np.arange(5, dtype=np.float32)
    indices = np.array([0, 2**64 - 1], np.uint64)
    with pytest.raises(ir_runner.IndexOutOfRangeError, match="18446744073709551615"):
        run_gather(data, indices, 0, "opset8", strict=True)


def test_non_strict_default_never_raises_for_indices():
    data = np.arange(5, dtype=np.float32)
    indices = np.array([-100, 100, 2**31 - 1, -(2**31)], np.int32)
    assert_same_bits(run_gather(data, indices, 0, "opset7"), np.zeros(4, np.float32))


@pytest.mark.parametrize("data_shape, indices_shape, axis, batch_dims", [
    ((4, 300_000), (300_000,), 1, 0),  # split over the outer dim
    ((PARALLEL_MIN_ELEMENTS + 10,), (PARALLEL_MIN_ELEMENTS + 1,), 0, 0),  # split over the indices
    ((2, 600_000), (2, 600_000), 1, 1),  # batched: split over flattened rows
    ((3, 2, 200_000), (3, 200_000), 2, 1),
], ids=["outer", "indices", "batched", "batched-outer"])
def test_large_gathers_take_the_threaded_path(data_shape, indices_shape, axis, batch_dims):
    rng = np.random.default_rng(11)
    data = rng.integers(-(2**62), 2**62, data_shape)
    dim = data_shape[axis]
    indices = rng.integers(-dim - 50, dim + 50, indices_shape)
    out = run_gather(data, indices, axis, "opset8", batch_dims)
    if batch_dims == 0:
        want = gather_with_zeros(data, indices, axis)
    else:
        want = np.stack([gather_with_zeros(d, i, axis - 1) for d, i in zip(data, indices)])
    assert_same_bits(out, want)
