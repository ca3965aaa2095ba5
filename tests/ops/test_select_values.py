"""Select-1 values: the spec example, OpenVINO's op_reference cases, every element type and broadcast mode.

Each case builds a one-layer IR with ``tests/helpers/irbuild.py`` and runs it with ``ir_runner.load(...).run``.
Expected outputs are literal values or come from ``expected_select`` below, an element-by-element
loop written from the semantics (not ``np.where``). Outputs are compared as bits: dtype, shape and bytes.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import ir_runner
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS
from ir_runner.types import ELEMENT_TYPES, element_type_of
from tests.helpers.bits import assert_same_bits
from tests.helpers.irbuild import IRBuilder

NP = {name: et.dtype.type for name, et in ELEMENT_TYPES.items()  # IR name -> numpy type (strings: test_strings.py)
      if et.dtype is not None and et.kind != "string"}
ALL_TYPES = tuple(NP)


def bits(dtype, *patterns: int) -> np.ndarray:
    """Values of a float dtype given by their bit patterns (NaN payloads, -0.0, subnormals)."""
    dtype = np.dtype(dtype)
    return np.array(patterns, dtype=f"u{dtype.itemsize}").view(dtype)


def palette(et: str) -> np.ndarray:
    """Eight values of ``et`` that must survive Select bit for bit: extremes, -0.0, inf, NaN payloads."""
    dt = np.dtype(NP[et])
    if et == "boolean":
        return np.array([True, False, True, True, False, False, True, False])
    limit = ELEMENT_TYPES[et].code_limit  # u1, u2, u3, u6 values and nf4 codes, one per byte
    if limit is not None:
        return np.array([0, limit, 1, 0, limit, 0, 1, limit // 2], np.uint8)
    if et in ("i4", "u4"):
        info = ml_dtypes.iinfo(dt)
        return np.array([info.min, info.max, 0, 1, info.max - 1, 3, info.min + 1, 5], dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.array([info.min, info.max, 0, 1, info.max - 1, 2, info.min + 1, info.max // 3], dt)
    patterns = {
        "f16": (0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E01, 0xFE3F, 0x0001, 0x7BFF),  # quiet NaNs (see below)
        "bf16": (0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FA1, 0xFFC3, 0x0001, 0x7F7F),
        "f32": (0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FA00001, 0xFFC12345, 0x00000001, 0x7F7FFFFF),
        "f64": (0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, (0x7FF4 << 48) | 7, (0xFFF8 << 48) | 0xABC, 1, 0x7FEF << 48),
        "f8e4m3": (0x00, 0x80, 0x7F, 0xFF, 0x01, 0x7E, 0xFE, 0x38),
        "f8e5m2": (0x00, 0x80, 0x7C, 0xFC, 0x7D, 0xFF, 0x01, 0x7B),
        "f8e8m0": (0x00, 0x7F, 0xFF, 0xFE, 0x01, 0x80, 0x7E, 0x40),  # 2**-127, 1, NaN, 2**127
        "f4e2m1": (0x0, 0x8, 0x7, 0xF, 0x1, 0x9, 0x6, 0x2),  # +-0, +-6, +-0.5 (one value per byte)
    }
    return bits(dt, *patterns[et])


def expected_select(cond, then, else_, mode: str = "numpy", axis: int = 0) -> np.ndarray:
    """Select by an explicit loop over the output: the semantics written out, independent of np.where.

    numpy: every input is aligned right in the broadcast shape. pdpd: the output is ``then``'s shape;
    ``cond`` and ``else`` start at ``axis`` (-1: each aligned right on its own).
    """
    cond, then, else_ = (np.asarray(a) for a in (cond, then, else_))
    if mode == "pdpd":
        out_shape = then.shape
        starts = [len(out_shape) - a.ndim if axis == -1 else axis for a in (cond, then, else_)]
        starts[1] = 0
    else:
        out_shape = np.broadcast_shapes(cond.shape, then.shape, else_.shape)
        starts = [len(out_shape) - a.ndim for a in (cond, then, else_)]
    out = np.empty(out_shape, then.dtype)

    def pick(array, start, index):
        return array[tuple(0 if n == 1 else index[start + k] for k, n in enumerate(array.shape))]

    raw_cond = cond.view(np.uint8)
    for index in np.ndindex(*out_shape):
        chosen = then if pick(raw_cond, starts[0], index) != 0 else else_
        out[index] = pick(chosen, starts[1] if chosen is then else starts[2], index)
    return out


def build(cond_shape, then_shape, else_shape, et: str, attrs, out_shape, *, const_cond=None):
    """IR bytes of one Select over Parameters (cond may be a Const holding ``const_cond``)."""
    b = IRBuilder("select")
    if const_cond is None:
        cond = b.parameter("cond", "boolean", ",".join(map(str, cond_shape)))
    else:
        cond = b.const("cond", const_cond)
    then = b.parameter("then", et, ",".join(map(str, then_shape)))
    else_ = b.parameter("else", et, ",".join(map(str, else_shape)))
    sel = b.layer("Select", "opset1", [cond, then, else_], attrs=attrs, out_specs=[(et, list(out_shape))], name="sel")
    b.result(sel, "out")
    return b.build()


def run_select(cond, then, else_, attrs=None, *, et: str | None = None, out_shape=None) -> np.ndarray:
    """Run Select on Parameters holding the three arrays; ``attrs=None`` writes no ``<data>``."""
    cond, then, else_ = (np.asarray(a) for a in (cond, then, else_))
    et = et or element_type_of(then.dtype).name
    if out_shape is None:
        mode = (attrs or {}).get("auto_broadcast", "numpy").lower()
        out_shape = then.shape if mode == "pdpd" else np.broadcast_shapes(cond.shape, then.shape, else_.shape)
    xml, weights = build(cond.shape, then.shape, else_.shape, et, attrs, out_shape)
    model = ir_runner.load(xml, weights or None)
    (out,) = model.run({"cond": cond, "then": then, "else": else_}).values()
    return out


# ----------------------------------------------------------------------------- spec and OpenVINO's tests


def test_spec_example():
    cond = np.array([[False, False], [True, False], [True, True]])
    then = np.array([[-1, 0], [1, 2], [3, 4]], np.float32)
    else_ = np.array([[11, 10], [9, 8], [7, 6]], np.float32)
    assert_same_bits(run_select(cond, then, else_), np.array([[11, 10], [1, 8], [3, 4]], np.float32))


# op_reference/select.cpp: (broadcast, cond shape, cond, then shape, then, else shape, else, expected)
OP_REFERENCE = {
    "none": ({"auto_broadcast": "none"}, (2, 2, 2), [0, 1, 1, 0, 0, 1, 0, 1], (2, 2, 2), range(1, 9),
             (2, 2, 2), range(11, 19), [11, 2, 3, 14, 15, 6, 17, 8]),
    "numpy": ({"auto_broadcast": "numpy"}, (4,), [0, 1, 1, 0], (4,), [1, 2, 3, 4],
              (2, 4), range(11, 19), [11, 2, 3, 14, 15, 2, 3, 18]),
    "pdpd": ({"auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": -1}, (2, 4), [0, 0, 0, 0, 0, 1, 1, 1],
             (2, 4), range(1, 9), (4,), [11, 12, 13, 14], [11, 12, 13, 14, 11, 6, 7, 8]),
}
NUMERIC_WIDE = ("f32", "i32", "f16", "bf16", "f64", "i8", "i16", "i64", "u8", "u16", "u32", "u64", "f8e5m2")


@pytest.mark.parametrize("et", NUMERIC_WIDE)
@pytest.mark.parametrize("case", sorted(OP_REFERENCE))
def test_op_reference(case, et):
    attrs, cshape, cond, tshape, then, eshape, else_, want = OP_REFERENCE[case]
    dt = NP[et]
    cond = np.array(cond, bool).reshape(cshape)
    then = np.array(list(then)).astype(dt).reshape(tshape)
    else_ = np.array(list(else_)).astype(dt).reshape(eshape)
    out = run_select(cond, then, else_, attrs, et=et)
    assert_same_bits(out, np.array(want).astype(dt).reshape(out.shape))


# ----------------------------------------------------------------------------- element types


@pytest.mark.parametrize("et", ALL_TYPES)
def test_every_element_type_bit_exact(et):
    """Extremes, -0.0, infinities, NaNs with payloads and subnormals pass through unchanged."""
    then = palette(et).reshape(2, 4)
    else_ = palette(et)[::-1].copy().reshape(2, 4)
    cond = np.array([[1, 0, 1, 0], [0, 1, 1, 0]], bool)
    want = np.empty_like(then)
    for i, j in np.ndindex(2, 4):
        want[i, j] = then[i, j] if cond[i, j] else else_[i, j]
    assert_same_bits(run_select(cond, then, else_, et=et), want)


@pytest.mark.parametrize("et", ALL_TYPES)
def test_every_element_type_broadcast(et):
    then = palette(et)[:4].copy()
    else_ = palette(et)[4:5].copy().reshape(1, 1)
    cond = np.array([[True], [False], [True]])
    out = run_select(cond, then, else_, et=et)
    assert_same_bits(out, expected_select(cond, then, else_))


def test_f16_signalling_nan_is_quietened():
    """OpenVINO's reference Select (and its CPU plugin) returns f16 signalling NaNs quietened (bit 9 set):
    0x7C01 -> 0x7E01, 0xFC93 -> 0xFE93. Quiet NaNs, infinities and bf16/f32/f64 NaNs pass unchanged."""
    then = bits(np.float16, 0x7C01, 0xFC93, 0x7D00, 0x7E01, 0x7C00, 0x3C00)
    else_ = bits(np.float16, 0x7DFF, 0x0001, 0xFD00, 0x8000, 0xFC00, 0x7CF0)
    cond = np.array([True, True, False, False, True, False])
    want = bits(np.float16, 0x7E01, 0xFE93, 0xFF00, 0x8000, 0x7C00, 0x7EF0)
    assert_same_bits(run_select(cond, then, else_), want)


def test_cond_bytes_other_than_one_are_true():
    """A boolean byte 2 or 255 counts as true, in a Parameter and in a Const."""
    raw = np.array([0, 1, 2, 255, 0, 128], np.uint8)
    then = np.arange(1, 7, dtype=np.int32)
    else_ = -np.arange(1, 7, dtype=np.int32)
    want = np.array([-1, 2, 3, 4, -5, 6], np.int32)
    assert_same_bits(run_select(raw.view(np.bool_), then, else_), want)
    xml, weights = build((6,), (6,), (6,), "i32", None, (6,), const_cond=np.array([False] * 6))
    patched = weights[:0] + bytes(raw) + weights[6:]
    model = ir_runner.load(xml, patched)
    assert_same_bits(model.run({"then": then, "else": else_})["out"], want)


# ----------------------------------------------------------------------------- numpy broadcasting


NUMPY_SHAPES = [
    ((), (), ()),
    ((), (2, 3), (2, 3)),
    ((2, 3), (), ()),
    ((2, 3), (3,), ()),
    ((2, 3, 4, 5), (4, 5), (4, 5)),  # cond is the largest: it broadcasts both ways
    ((3, 1, 5), (2, 3, 4, 5), (1,)),
    ((1,), (2, 1), (1, 3)),
    ((4, 1), (1, 3), (4, 3)),
    ((2, 1, 1), (1, 4, 1), (1, 1, 3)),
    ((0, 1), (1, 3), (1, 3)),  # zero-sized: [0, 3]
    ((0,), (), (1,)),
    ((2, 0, 3), (1, 1, 3), (2, 1, 1)),
    ((1, 1, 1, 1, 1, 2), (2,), (3, 1, 1, 1, 1, 1)),
]


@pytest.mark.parametrize("shapes", NUMPY_SHAPES, ids=str)
@pytest.mark.parametrize("attrs", [None, {}, {"auto_broadcast": "numpy"}, {"auto_broadcast": "NUMPY"}],
                         ids=["no-data", "no-attr", "numpy", "NUMPY"])
def test_numpy_broadcast(shapes, attrs):
    rng = np.random.default_rng(len(str(shapes)))
    cond = rng.integers(0, 2, shapes[0]).astype(bool)
    then = rng.standard_normal(shapes[1]).astype(np.float32)
    else_ = rng.standard_normal(shapes[2]).astype(np.float32)
    assert_same_bits(run_select(cond, then, else_, attrs), expected_select(cond, then, else_))


@pytest.mark.parametrize("mode", ["none", "explicit", "NONE"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4), (2, 3, 4)], ids=str)
def test_no_broadcast(mode, shape):
    rng = np.random.default_rng(7)
    cond = rng.integers(0, 2, shape).astype(bool)
    then = rng.integers(-100, 100, shape).astype(np.int64)
    else_ = rng.integers(-100, 100, shape).astype(np.int64)
    assert_same_bits(run_select(cond, then, else_, {"auto_broadcast": mode}), expected_select(cond, then, else_))


# ----------------------------------------------------------------------------- pdpd broadcasting


def pdpd(axis):
    return {"auto_broadcast": "pdpd"} if axis is None else {"auto_broadcast": "pdpd",
                                                            "auto_broadcast.auto_broadcast_axis": axis}


PDPD_CASES = [
    # (axis, cond, then, else); axis None = attribute absent = 0
    (None, (2, 3, 4, 5), (2, 3, 4, 5), (2, 3)),
    (0, (2, 1), (2, 3, 4), (2, 3)),
    (0, (), (2, 3), ()),
    (0, (1,), (2, 3), (2,)),
    (1, (3, 1), (2, 3, 4, 2), (3, 4)),
    (1, (3,), (2, 3, 4), (3, 4)),
    (1, (1, 4), (2, 3, 4), (3,)),
    (-1, (2, 4), (2, 4), (4,)),
    (-1, (3, 1), (2, 3, 4), (3, 4)),
    (-1, (4,), (2, 3, 4), (3, 4)),  # lower-rank cond: aligned right on its own
    (-1, (1,), (2, 3, 4), (3, 1)),
    (-1, (), (2, 3), (2, 3)),
    (2, (4,), (2, 3, 4), (1,)),
    (0, (0, 1), (0, 3), (0,)),
    (1, (0,), (2, 0, 3), (0, 3)),
    (-1, (3,), (0, 3), (0, 3)),
]


@pytest.mark.parametrize("axis, cond_shape, then_shape, else_shape", PDPD_CASES, ids=str)
def test_pdpd_broadcast(axis, cond_shape, then_shape, else_shape):
    rng = np.random.default_rng(sum(then_shape) + 3)
    cond = rng.integers(0, 2, cond_shape).astype(bool)
    then = rng.integers(0, 1000, then_shape).astype(np.int32)
    else_ = -rng.integers(1, 1000, else_shape).astype(np.int32)
    out = run_select(cond, then, else_, pdpd(axis))
    assert_same_bits(out, expected_select(cond, then, else_, "pdpd", 0 if axis is None else axis))


def test_pdpd_uppercase_mode_and_bf16():
    cond = np.array([True, False, True])
    then = np.arange(6).reshape(2, 3).astype(ml_dtypes.bfloat16)
    else_ = np.array([-1, -2, -3]).astype(ml_dtypes.bfloat16)
    out = run_select(cond, then, else_, {"auto_broadcast": "PDPD", "auto_broadcast.auto_broadcast_axis": "1"})
    assert_same_bits(out, np.array([[0, -2, 2], [3, -2, 5]]).astype(ml_dtypes.bfloat16))


@pytest.mark.parametrize("axis, cond_shape, then_shape, else_shape, which", [
    (0, (2,), (1, 3), (2, 3), "Else"),  # then is never broadcast
    (0, (2,), (2, 3), (3,), "Else"),  # else at offset 0 does not fit
    (1, (3,), (2, 3), (2, 3), "Else"),
    (-1, (2,), (2, 3), (3,), "Cond"),
    (0, (2, 3, 1), (2, 3), (3,), "Else"),
    (0, (0, 1), (0, 3), (1,), "Else"),  # a 1 does not stretch to a 0 in pdpd
    (-1, (1,), (2, 0), (0,), "Cond"),
])
def test_pdpd_rejects(axis, cond_shape, then_shape, else_shape, which):
    xml, weights = build(cond_shape, then_shape, else_shape, "f32", pdpd(axis), then_shape)
    with pytest.raises(ir_runner.InferenceError, match=f"'{which}' tensor shape is not broadcastable"):
        ir_runner.load(xml, weights or None)


# ----------------------------------------------------------------------------- dynamic shapes


def test_dynamic_shapes_run_and_reject_at_run_time():
    b = IRBuilder("select")
    cond = b.parameter("cond", "boolean", "?")
    then = b.parameter("then", "u64", "?,?")
    else_ = b.parameter("else", "u64", "1..4")
    sel = b.layer("Select", "opset1", [cond, then, else_], attrs={"auto_broadcast": "numpy"},
                  out_specs=[("u64", [-1, -1])], name="sel")
    b.result(sel, "out")
    model = ir_runner.load(*b.build())
    big = np.uint64(2**64 - 1)
    for n_rows, width in [(1, 1), (3, 4), (2, 1), (0, 4)]:
        cond_v = np.arange(width) % 2 == 0
        then_v = np.full((n_rows, width), big, np.uint64)
        else_v = np.arange(width, dtype=np.uint64)
        out = model.run({"cond": cond_v, "then": then_v, "else": else_v})["out"]
        assert_same_bits(out, expected_select(cond_v, then_v, else_v))
    with pytest.raises(ir_runner.IRError, match="sel") as info:
        model.run({"cond": np.ones(3, bool), "then": np.zeros((2, 2), np.uint64), "else": np.zeros(4, np.uint64)})
    assert not isinstance(info.value, ir_runner.IndexOutOfRangeError)


def test_chain_of_selects_with_const_branches():
    """Select feeding Select, with Const then/else: outputs are exact and never the Const's memory."""
    b = IRBuilder("chain")
    cond = b.parameter("cond", "boolean", "2,3")
    ones = b.const("ones", np.ones((2, 3), np.float16))
    zeros = b.const("zeros", np.zeros((3,), np.float16))
    first = b.layer("Select", "opset1", [cond, ones, zeros], attrs={"auto_broadcast": "numpy"},
                    out_specs=[("f16", [2, 3])], name="first")
    second = b.layer("Select", "opset1", [cond, zeros, first], attrs={"auto_broadcast": "numpy"},
                     out_specs=[("f16", [2, 3])], name="second")
    b.result(first, "first")
    b.result(second, "second")
    model = ir_runner.load(*b.build())
    cond_v = np.array([[True, False, True], [False, False, True]])
    out = model.run({"cond": cond_v})
    assert_same_bits(out["first"], cond_v.astype(np.float16))
    assert_same_bits(out["second"], np.zeros((2, 3), np.float16))


@pytest.mark.parametrize("shapes", list(itertools.product([(), (1,), (3,), (2, 1)], repeat=3)), ids=str)
def test_small_shape_grid(shapes):
    """Every combination of four small shapes, which all broadcast together (numpy mode)."""
    cond = (np.arange(int(np.prod(shapes[0]))) % 2 == 1).reshape(shapes[0])
    then = np.arange(int(np.prod(shapes[1])), dtype=np.int16).reshape(shapes[1]) + 10
    else_ = -np.arange(int(np.prod(shapes[2])), dtype=np.int16).reshape(shapes[2]) - 1
    assert_same_bits(run_select(cond, then, else_), expected_select(cond, then, else_))


@pytest.mark.parametrize("et", ["boolean", "u8", "f16", "bf16", "f32", "i64", "f64", "i4"])
def test_large_inputs_take_the_threaded_path(et):
    """Over PARALLEL_MIN_ELEMENTS of one shape the kernel splits the work over threads; the bits must not change."""
    n = PARALLEL_MIN_ELEMENTS + 5
    rng = np.random.default_rng(5)
    cond = rng.integers(0, 3, n).astype(np.uint8).view(np.bool_)  # bytes 0, 1 and 2
    then = np.resize(palette(et), n)
    else_ = np.resize(palette(et)[::-1], n)
    want = then.copy()
    want[cond.view(np.uint8) == 0] = else_[cond.view(np.uint8) == 0]
    assert_same_bits(run_select(cond, then, else_, et=et), want)
