"""The elementwise binary operations (ir_runner/ops/elementwise/binary.py), after the template of
tests/helpers/optest.py:
shape and type cases (ported from OpenVINO's type_prop ``arithmetic_ops.hpp``/``logical_ops.hpp`` suites,
written anew) with graphs written by OpenVINO, value cases and integer corners against its reference
(``Node.evaluate``), and a seeded differential generator. Operations the reference cannot evaluate for a
type (the bitwise ones, SquaredDifference outside f32...) are compared with numpy's exact results. Xor-1
(opset1's LogicalXor) is served in opset1 only, inferred as OpenVINO infers it, values bit for bit against its
reference with broadcasting, non-boolean inputs refused naming the layer."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset13  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError  # noqa: E402
from ir_runner.ops.elementwise.binary import _power  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from ir_runner.ops.toolkit.broadcasting import interval  # noqa: E402
from ir_runner.ops.toolkit.convert_rules import bf16_as_openvino_rounds  # noqa: E402
from ir_runner.types import Dim, PartialShape, TensorSpec, element_type  # noqa: E402
from tests.helpers.bits import assert_same_bits  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, reference_outputs, write_ir  # noqa: E402

ARITH = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "squared_difference", "mod",
         "floor_mod"]
COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]
NUMPY_TYPE = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16, "i8": np.int8,
              "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
              "u64": np.uint64, "boolean": np.bool_}
# element types the reference evaluates, per operation (measured on openvino 2026.4.1)
REFERENCE_TYPES = {
    "add": "f16 f32 i8 i16 i32 i64 u8 u16 u32 u64", "subtract": "f16 f32 i8 i32 i64 u8 u32 u64",
    "multiply": "f16 f32 f64 i32 i64 u32 u64", "divide": "f16 f32 i32 i64 u32 u64",
    "power": "f16 f32 i32 i64 u32 u64", "maximum": "f16 f32 i32 i64 u32 u64",
    "minimum": "f16 f32 i32 i64 u8 u16 u32 u64", "squared_difference": "f32", "mod": "i8 i16 i32 i64 u8 u16 u32 u64",
    "floor_mod": "f16 f32 i8 i32 i64 u8 u32 u64", "equal": "boolean f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64",
    "not_equal": "boolean f16 f32 i32 i64 u32 u64", "less": "boolean f16 f32 i32 i64 u32 u64",
    "less_equal": "boolean f16 f32 i32 i64 u32 u64", "greater": "boolean f16 f32 i32 i64 u32 u64",
    "greater_equal": "boolean f16 f32 i32 i64 u32 u64", "logical_and": "boolean", "logical_or": "boolean",
    "logical_xor": "boolean",
}


def _graph(tmp_path, op: str, types, shapes, name: str = "model", **attrs):
    params = [opset13.parameter(shape, getattr(ov.Type, t), name=f"p{i}") for i, (t, shape) in
              enumerate(zip(types, shapes))]
    return write_ir(getattr(opset13, op)(*params, **attrs), params, tmp_path, name), params


def _values(rng: np.random.Generator, et: str, shape, op: str) -> np.ndarray:
    dtype = NUMPY_TYPE[et]
    if et == "boolean":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        if op == "power":
            return rng.integers(max(info.min, -6), 7, size=shape).astype(dtype)
        values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        small = rng.integers(max(info.min, -20), min(info.max, 20), size=shape, endpoint=True).astype(dtype)
        return np.where(rng.random(shape) < 0.5, values, small)
    values = (rng.standard_normal(shape) * 10).astype(np.float32)
    values[rng.random(shape) < 0.1] = 0
    return values.astype(dtype)


# -- shape and type inference ------------------------------------------------------------------------------------

SHAPES = [
    ([2, 3, 4], [2, 3, 4]), ([2, 3, 4], [4]), ([4], [2, 3, 4]), ([2, 1, 4], [3, 1]), ([], [2, 3]), ([1], []),
    ([2, -1, 4], [3, 1]), ([-1, -1], [-1]), ([-1, 3], [-1, 1]), ([5, 3], [-1, 3]), ([0, 3], [1, 3]), ([-1, 1], [1, -1]),
    ([2, 3], [4, 3]), ([-1], [2, 3, -1]),
]


@pytest.mark.parametrize("op", ["add", "power", "equal", "floor_mod"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_numpy_broadcast_shapes_equal_what_openvino_declares(tmp_path, op, shapes):
    def dims(shape):
        return ov.PartialShape([d if isinstance(d, ov.Dimension) else ov.Dimension(d) for d in shape])

    try:
        params = [opset13.parameter(dims(s), ov.Type.f32, name=f"p{i}") for i, s in enumerate(shapes)]
        node = getattr(opset13, op)(*params)
    except RuntimeError:  # OpenVINO refuses the shapes: so must ir-run (built by hand below)
        b = IRBuilder()
        a = b.parameter("a", "f32", ",".join(map(str, shapes[0])))
        c = b.parameter("b", "f32", ",".join(map(str, shapes[1])))
        b.result(b.layer("Add", "opset1", [a, c], out_specs=[("FP32", "1")]))
        with pytest.raises(InferenceError, match="do not broadcast"):
            ir_runner.load(b.build()[0])
        return
    check_inference(write_ir(node, params, tmp_path))


@pytest.mark.parametrize(("a", "b", "ok"), [("2,3", "2,3", True), ("2,?", "?,3", True), ("2,3", "3", False),
                                           ("2,3", "2,1", False), ("", "", True)])
def test_broadcast_none_needs_equal_shapes(tmp_path, a, b, ok):
    if ok:
        pa = opset13.parameter(ov.PartialShape(a if a else "[]") if a else [], ov.Type.i32, name="a")
        pb = opset13.parameter(ov.PartialShape(b if b else "[]") if b else [], ov.Type.i32, name="b")
        check_inference(write_ir(opset13.subtract(pa, pb, auto_broadcast="none"), [pa, pb], tmp_path))
        return
    builder = IRBuilder()
    pa, pb = builder.parameter("a", "i32", a), builder.parameter("b", "i32", b)
    builder.result(builder.layer("Subtract", "opset1", [pa, pb], attrs={"auto_broadcast": "none"}))
    with pytest.raises(InferenceError, match="auto_broadcast=none"):
        ir_runner.load(builder.build()[0])


@pytest.mark.parametrize(("a", "b", "axis", "out"), [
    ("2,3,4,5", "3,4", 1, [2, 3, 4, 5]), ("2,3,4,5", "4,5", -1, [2, 3, 4, 5]), ("2,3,4,5", "3,1", 1, [2, 3, 4, 5]),
    ("2,3,4,5", "", 0, [2, 3, 4, 5]), ("2,3,4,5", "2,3", None, [2, 3, 4, 5]), ("2,3,4,5", "4,3", 1, None),
    ("2,3", "2,3,4", 0, None), ("2,1", "2,3", 0, None), ("?,3,4", "3,4", 1, [-1, 3, 4]),
])
def test_pdpd_broadcast_fits_the_second_input_into_the_first(a, b, axis, out):
    builder = IRBuilder()
    pa, pb = builder.parameter("a", "f32", a), builder.parameter("b", "f32", b)
    attrs = {"auto_broadcast": "pdpd"}
    if axis is not None:
        attrs["auto_broadcast.auto_broadcast_axis"] = axis
    layer = builder.layer("Multiply", "opset1", [pa, pb], attrs=attrs, out_specs=[("FP32", out or [1])])
    builder.result(layer)
    xml = builder.build()[0]
    if out is None:
        with pytest.raises(InferenceError, match="pdpd"):
            ir_runner.load(xml)
        return
    report = ir_runner.validate(xml)
    assert report.ok, str(report)
    model = ir_runner.load(xml)
    rng = np.random.default_rng(0)
    shape_a = tuple(2 if d == "?" else int(d) for d in a.split(","))
    shape_b = tuple(int(d) for d in b.split(",")) if b else ()
    x, y = rng.standard_normal(shape_a).astype(np.float32), rng.standard_normal(shape_b).astype(np.float32)
    start = (len(shape_a) - len(shape_b)) if axis == -1 else (axis or 0)
    aligned = y.reshape((1,) * start + shape_b + (1,) * (len(shape_a) - start - len(shape_b)))
    got = model.run({"a": x, "b": y})
    assert np.array_equal(next(iter(got.values())), x * aligned)


@pytest.mark.parametrize(("op", "et", "message"), [
    ("Add", "boolean", "does not take element type boolean"), ("Power", "boolean", "does not take"),
    ("LogicalAnd", "f32", "needs boolean"), ("LogicalXor", "i32", "needs boolean"),
    ("BitwiseAnd", "f32", "integer or boolean"), ("BitwiseXor", "f16", "integer or boolean"),
])
def test_element_types_refused_as_openvino_refuses_them(op, et, message):
    b = IRBuilder()
    x, y = b.parameter("x", et, "2"), b.parameter("y", et, "2")
    b.result(b.layer(op, "opset13", [x, y]))
    with pytest.raises(InferenceError, match=message) as caught:
        ir_runner.load(b.build()[0])
    assert f"{op}-" in str(caught.value)


def test_inputs_of_two_element_types_are_refused_with_a_hint():
    b = IRBuilder()
    x, y = b.parameter("x", "f32", "2"), b.parameter("y", "i32", "2")
    b.result(b.layer("Add", "opset1", [x, y]))
    with pytest.raises(InferenceError, match="one element type, got f32 and i32") as caught:
        ir_runner.load(b.build()[0])
    assert "Convert" in (caught.value.hint or "")


@pytest.mark.parametrize("op", COMPARE + LOGICAL + BITWISE + ["squared_difference", "mod"])
def test_output_types_equal_what_openvino_declares(tmp_path, op):
    et = "boolean" if op in LOGICAL else "i32" if op in BITWISE + ["mod"] else "f32"
    check_inference(_graph(tmp_path, op, [et, et], [[2, -1, 3], [3]])[0])


def test_bitwise_ops_are_opset13_and_up():
    assert lookup("BitwiseAnd", "opset12") is None and lookup("BitwiseAnd", "opset13").version == 13
    assert lookup("Add", "opset1").version == 1 and lookup("Add", "opset16").version == 1


# -- values against the reference ----------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ARITH + COMPARE + LOGICAL)
def test_every_reference_type_bit_exact(tmp_path, op):
    rng = np.random.default_rng(len(op))
    for et in REFERENCE_TYPES[op].split():
        path, _ = _graph(tmp_path, op, [et, et], [[3, 1, 5], [4, 1]], name=f"m_{et}")
        a, b = _values(rng, et, (3, 1, 5), op), _values(rng, et, (4, 1), op)
        if op in ("divide", "mod") and et != "f16" and et != "f32":
            b[b == 0] = 1
        if op == "floor_mod" and et[0] == "u":
            b[b == 0] = 1
        check_run(path, {"p0": a, "p1": b}, ulp=1 if op == "power" and et == "f32" else None)


FLOAT_CORNERS = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -2.5, 3.0, -7.0, 0.5, 1e30, -1e-30,
                          6.5e4, 1e-7], dtype=np.float32)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum", "floor_mod",
                                "squared_difference", "power"] + COMPARE)
@pytest.mark.parametrize("et", ["f32", "f16"])
def test_float_corners_nan_infinities_and_signed_zeros(tmp_path, op, et):
    if et not in REFERENCE_TYPES[op].split():
        pytest.skip(f"the reference has no {et} {op}")
    with np.errstate(over="ignore"):  # 1e30 is inf in f16
        a = np.repeat(FLOAT_CORNERS, FLOAT_CORNERS.size).astype(NUMPY_TYPE[et])
        b = np.tile(FLOAT_CORNERS, FLOAT_CORNERS.size).astype(NUMPY_TYPE[et])
    path, _ = _graph(tmp_path, op, [et, et], [[a.size], [b.size]])
    check_run(path, {"p0": a, "p1": b}, ulp=1 if op == "power" and et == "f32" else None)


def test_float_power_is_within_one_ulp_of_powf_over_the_whole_range(tmp_path):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    b = (rng.standard_normal(20000) * 4).astype(np.float32)
    path, _ = _graph(tmp_path, "power", ["f32", "f32"], [[a.size], [b.size]])
    check_run(path, {"p0": np.abs(a), "p1": b}, ulp=1)


@pytest.mark.parametrize("exponent_shape", [[], [1], [1, 1]])
def test_f32_power_by_a_constant_two_is_the_square_pow_in_double_gives(tmp_path, exponent_shape):
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    a = np.concatenate([bits.view(np.float32), FLOAT_CORNERS.astype(np.float32),
                        np.array([1e-23, -3e-39, 1.9e19, -2e19, np.nan, -np.nan], np.float32)]).reshape(2, -1)
    base = opset13.parameter(list(a.shape), ov.Type.f32, name="p0")
    two = opset13.constant(np.full(exponent_shape, 2, np.float32))
    path = write_ir(opset13.power(base, two), [base], tmp_path, "square")
    got = check_run(path, {"p0": a}, ulp=1)
    want = np.empty(np.broadcast_shapes(a.shape, exponent_shape), np.float32)
    with np.errstate(all="ignore"):  # the general computation: pow in double, rounded
        _power(a, np.full(exponent_shape, 2, np.float32), want)
    assert_same_bits(next(iter(got.values())), want, "square")


@pytest.mark.parametrize("et", ["i8", "i32", "i64"])
def test_integer_signs_of_divide_mod_and_floor_mod(tmp_path, et):
    a = np.array([7, -7, 7, -7, 2, -2, 1, -1, 3, 0, 5, -5], NUMPY_TYPE[et])
    b = np.array([2, 2, -2, -2, -1, -1, -3, -3, -7, 5, 5, 5], NUMPY_TYPE[et])
    for op in ("mod", "floor_mod") + (("divide",) if et != "i8" else ()):
        path, _ = _graph(tmp_path, op, [et, et], [[12], [12]], name=op)
        got = check_run(path, {"p0": a, "p1": b})
        if op == "divide":
            assert list(next(iter(got.values()))) == [3, -4, -4, 3, -2, 2, -1, 0, -1, 0, 1, -1]


def test_truncating_integer_division_without_pythondiv(tmp_path):
    a = np.array([7, -7, 7, -7, -1, 9], np.int32)
    b = np.array([2, 2, -2, -2, 3, 3], np.int32)
    x, y = opset13.parameter([6], ov.Type.i32, name="p0"), opset13.parameter([6], ov.Type.i32, name="p1")
    node = opset13.divide(x, y)
    node.set_attribute("m_pythondiv", False)
    path = write_ir(node, [x, y], tmp_path)
    check_inference(path)
    got = check_run(path, {"p0": a, "p1": b})
    assert next(iter(got.values())).tolist() == [3, -3, -3, 3, 0, 3]


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "power"])
@pytest.mark.parametrize("et", ["i32", "i64", "u32", "u64"])
def test_integer_overflow_wraps_and_power_casts_like_the_reference(tmp_path, op, et):
    info = np.iinfo(NUMPY_TYPE[et])
    if op == "power":
        a = np.array([0, 3, 2, 3, 5, 0, 2, 7, 1, 10], NUMPY_TYPE[et])
        b = np.array([1, 40, 31, 21, 3, 0, 63, 2, 5, 18], NUMPY_TYPE[et])
        if et[0] == "i":
            a[[0, 3]] = [-3, -3]
            b[0] = 21
    else:
        a = np.array([info.max, info.min, info.max, info.min, 12345], NUMPY_TYPE[et])
        b = np.array([1, info.max, info.max, 2, 3], NUMPY_TYPE[et])
    path, _ = _graph(tmp_path, op, [et, et], [[a.size], [b.size]])
    check_run(path, {"p0": a, "p1": b})


@pytest.mark.parametrize("et", ["u32", "u64", "i64"])
def test_integer_powers_between_2_53_and_2_64_as_the_c_library_pow(tmp_path, et):
    """Found by the fuzzer: numpy's vectorised pow is an ulp off the reference's (the C library's) there, ties
    and near-ties included, and the cast keeps that ulp (724300015**2, 819634616**2 at u32...)."""
    a = np.array([724300015, 819634616, 1882930352, 3, 7, 94906267, 2, 4294967295, 3037000499], NUMPY_TYPE[et])
    b = np.array([2, 2, 2, 39, 21, 2, 62, 2, 2], NUMPY_TYPE[et])
    if et == "i64":
        a[4] = -7
    path, _ = _graph(tmp_path, "power", [et, et], [[a.size], [b.size]])
    check_run(path, {"p0": a, "p1": b})


@pytest.mark.parametrize("et", ["i32", "i64"])
def test_integer_power_with_negative_exponents_matches_the_reference(tmp_path, et):
    a = np.array([0, 0, 2, -2, 1, -1, 1, -1, 3, 7], NUMPY_TYPE[et])
    b = np.array([-1, -2, -1, -1, -3, -3, -4, -4, -7, -1], NUMPY_TYPE[et])
    path, _ = _graph(tmp_path, "power", [et, et], [[10], [10]])
    got = check_run(path, {"p0": a, "p1": b})
    assert next(iter(got.values())).tolist()[2:] == [0, 0, 1, -1, 1, 1, 0, 0]


@pytest.mark.parametrize("et", ["i8", "i32", "i64"])
def test_signed_floor_mod_by_zero_gives_the_references_value(tmp_path, et):
    path, _ = _graph(tmp_path, "floor_mod", [et, et], [[3], [3]])
    got = check_run(path, {"p0": np.array([5, 0, -5], NUMPY_TYPE[et]), "p1": np.zeros(3, NUMPY_TYPE[et])})
    assert set(next(iter(got.values())).tolist()) == {0 if et == "i8" else np.iinfo(NUMPY_TYPE[et]).min}


@pytest.mark.parametrize(("op", "et"), [("divide", "i32"), ("divide", "u64"), ("mod", "i32"), ("mod", "u8"),
                                        ("floor_mod", "u32"), ("divide", "i64")])
def test_integer_division_by_zero_is_an_input_error_naming_the_layer(tmp_path, op, et):
    path, _ = _graph(tmp_path, op, [et, et], [[4], [1]])
    model = ir_runner.load(str(path))
    with pytest.raises(InputError, match="integer division by zero") as caught:
        model.run({"p0": np.arange(4, dtype=NUMPY_TYPE[et]), "p1": np.zeros(1, NUMPY_TYPE[et])})
    assert caught.value.layer is not None and "input 1" in str(caught.value)
    empty = model.run({"p0": np.arange(4, dtype=NUMPY_TYPE[et]), "p1": np.ones(1, NUMPY_TYPE[et])})
    assert next(iter(empty.values())).shape == (4,)


def test_float_division_by_zero_gives_infinities_and_nan(tmp_path):
    path, _ = _graph(tmp_path, "divide", ["f32", "f32"], [[3], [3]])
    check_run(path, {"p0": np.float32([1, -1, 0]), "p1": np.float32([0, 0, 0])})


def test_integer_divisors_are_generated_without_zero():
    op = lookup("Divide", "opset1")
    spec = TensorSpec(element_type("i32"), PartialShape.of((3,)))
    fit = op.fit({}, [spec, spec], 1)
    assert fit.kind == "index" and fit.low >= 1
    assert op.fit({}, [spec, spec], 0) is None


@pytest.mark.parametrize("op", BITWISE)
@pytest.mark.parametrize("et", ["boolean", "i8", "u8", "i32", "u16", "i64", "u64"])
def test_bitwise_ops_are_bitwise_on_every_integer_type(tmp_path, op, et):
    rng = np.random.default_rng(3)
    path, _ = _graph(tmp_path, op, [et, et], [[2, 5], [5]])
    a, b = _values(rng, et, (2, 5), op), _values(rng, et, (5,), op)
    got = next(iter(ir_runner.load(str(path)).run({"p0": a, "p1": b}).values()))
    want = getattr(np, op)(a, b)
    assert got.dtype == a.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power", "floor_mod", "maximum", "minimum",
                                "squared_difference", "less", "equal"])
def test_bf16_is_computed_in_f32_and_converted_as_the_reference(tmp_path, op):
    """bf16 as the reference computes it: in f32, each result converted by OpenVINO's ``bfloat16`` class
    (rounding half up when the kept last bit is 1, truncating when it is 0; found by scripts/fuzz_ops.py:
    round-to-nearest-even differed on about 1 value in 10)."""
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(256) * 100).astype(ml_dtypes.bfloat16)
    b = (rng.standard_normal(256) * 100).astype(ml_dtypes.bfloat16)
    if op == "power":
        a = np.abs(a) / 10
    path, _ = _graph(tmp_path, op, ["bf16", "bf16"], [[256], [256]])
    got = next(iter(ir_runner.load(str(path)).run({"p0": a, "p1": b}).values()))
    x, y = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        want = {"squared_difference": lambda: np.square(x - y), "floor_mod": lambda: x - y * np.floor(x / y),
                "maximum": lambda: np.where(x < y, y, x), "minimum": lambda: np.where(y < x, y, x)}.get(
            op, lambda: getattr(np, op)(x, y))()
    want = want if want.dtype == np.bool_ else bf16_as_openvino_rounds(want, a.dtype)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    if op != "squared_difference":  # (no bf16 evaluate in the reference)
        assert got.tobytes() == reference_outputs(path, {"p0": a, "p1": b})[0].tobytes()


def test_squared_difference_rounds_twice_in_f16_and_wraps_in_integers(tmp_path):
    a16, b16 = np.float16([1000.5, -3.25, 60000]), np.float16([-999.5, 1.5, -60000])
    path, _ = _graph(tmp_path, "squared_difference", ["f16", "f16"], [[3], [3]])
    got = next(iter(ir_runner.load(str(path)).run({"p0": a16, "p1": b16}).values()))
    with np.errstate(over="ignore"):
        assert got.tobytes() == ((a16 - b16) * (a16 - b16)).tobytes()
    path, _ = _graph(tmp_path, "squared_difference", ["i32", "i32"], [[2], [2]], name="ints")
    got = next(iter(ir_runner.load(str(path)).run({"p0": np.int32([70000, -5]), "p1": np.int32([0, 5])}).values()))
    assert got.tolist() == [(70000 * 70000 + 2**31) % 2**32 - 2**31, 100]


def test_empty_and_scalar_operands(tmp_path):
    """(0-D feeds are compared by hand: the reference helper feeds them as 1-element tensors.)"""
    path, _ = _graph(tmp_path, "add", ["f32", "f32"], [[0, 3], [1]])
    check_run(path, {"p0": np.zeros((0, 3), np.float32), "p1": np.float32([2])})
    path, _ = _graph(tmp_path, "add", ["f32", "f32"], [[0, 3], []], name="scalar")
    check_inference(path)
    got = next(iter(ir_runner.load(str(path)).run({"p0": np.zeros((0, 3), np.float32), "p1": np.float32(2)}).values()))
    assert got.shape == (0, 3) and got.dtype == np.float32
    for op, et, a, b, want in [("less", "i64", 3, 4, True), ("floor_mod", "i32", -7, 3, 2), ("power", "i32", 3, 3, 27),
                               ("maximum", "f32", np.nan, 1.0, np.nan), ("divide", "i64", -7, 2, -4)]:
        path, _ = _graph(tmp_path, op, [et, et], [[], []], name=f"{op}_scalars")
        check_inference(path)
        feeds = {"p0": np.array(a, NUMPY_TYPE[et]), "p1": np.array(b, NUMPY_TYPE[et])}
        got = next(iter(ir_runner.load(str(path)).run(feeds).values()))
        assert got.shape == () and (got == want or np.isnan(want) and np.isnan(got)), (op, got)


def test_large_broadcast_runs_in_threads_bit_exact(tmp_path):
    rng = np.random.default_rng(5)
    path, _ = _graph(tmp_path, "multiply", ["f32", "f32"], [[1, 600, 2048], [2048]])
    a = rng.standard_normal((1, 600, 2048)).astype(np.float32)
    b = rng.standard_normal(2048).astype(np.float32)
    model = ir_runner.load(str(path))
    got = next(iter(model.run({"p0": a, "p1": b}).values()))
    assert got.tobytes() == (a * b).tobytes()
    out = np.empty_like(a)
    model.run({"p0": a, "p1": b}, out=[out])
    assert out.tobytes() == (a * b).tobytes()
    path, _ = _graph(tmp_path, "maximum", ["f32", "f32"], [[1200, 1024], [1200, 1]], name="max")
    x, y = rng.standard_normal((1200, 1024)).astype(np.float32), rng.standard_normal((1200, 1)).astype(np.float32)
    got = next(iter(ir_runner.load(str(path)).run({"p0": x, "p1": y}).values()))
    assert got.tobytes() == np.where(x < y, y, x).tobytes()


# -- the differential generator ---------------------------------------------------------------------------------


def random_case(rng: np.random.Generator, tmp_path):
    """A random binary op with random reference-evaluable types, broadcastable shapes and values."""
    op = str(rng.choice(ARITH + COMPARE + LOGICAL))
    et = str(rng.choice(REFERENCE_TYPES[op].split()))
    rank = int(rng.integers(1, 4))  # (0-D feeds reach the reference helper as 1-element tensors)
    out_shape = [int(n) for n in rng.integers(1, 5, size=rank)]
    a_shape = [n if rng.random() < 0.7 else 1 for n in out_shape]
    b_shape = [n if rng.random() < 0.7 else 1 for n in out_shape][int(rng.integers(0, rank)):]
    if rng.random() < 0.5:
        a_shape, b_shape = b_shape, a_shape
    path, _ = _graph(tmp_path, op, [et, et], [a_shape, b_shape])
    a, b = _values(rng, et, tuple(a_shape), op), _values(rng, et, tuple(b_shape), op)
    if op in ("divide", "mod", "floor_mod") and np.dtype(NUMPY_TYPE[et]).kind in "iu":
        b = np.where(b == 0, 1, b).astype(b.dtype)
    return path, {"p0": a, "p1": b}, op == "power" and et == "f32"


@pytest.mark.parametrize("seed", range(40))
def test_differential_random_binary_ops(tmp_path, seed):
    path, feeds, bounded = random_case(np.random.default_rng(seed), tmp_path)
    check_inference(path)
    check_run(path, feeds, ulp=1 if bounded else None)


# -- value inference and batch axes --------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "x", "y", "want"), [
    ("add", Dim(2, 2), Dim(3, 3), Dim(5, 5)), ("add", Dim(1, 4), Dim(2, None), Dim(3, None)),
    ("subtract", Dim(5, 5), Dim(7, 7), Dim(-2, -2)), ("subtract", Dim(5, 9), Dim(1, 2), Dim(3, 8)),
    ("subtract", Dim(0, None), Dim(1, 1), None), ("multiply", Dim(2, 3), Dim(4, 5), Dim(8, 15)),
    ("multiply", Dim(0, None), Dim(0, 0), Dim(0, 0)), ("divide", Dim(8, 9), Dim(2, 4), Dim(2, 4)),
    ("divide", Dim(-7, -7), Dim(2, 2), Dim(-4, -4)), ("divide", Dim(1, 9), Dim(0, 3), None),
    ("maximum", Dim(1, 4), Dim(3, None), Dim(3, None)), ("minimum", Dim(1, 4), Dim(3, None), Dim(1, 4)),
])
def test_interval_arithmetic_of_value_inference(name, x, y, want):
    assert interval(name, x, y) == want


def test_constant_shape_arithmetic_folds_into_a_gather(tmp_path):
    data = opset13.parameter([2, 6], ov.Type.f32, name="data")
    index = opset13.add(opset13.constant(np.int64([1, 2])), opset13.constant(np.int64(2)))
    index = opset13.floor_mod(opset13.multiply(index, opset13.constant(np.int64(3))), opset13.constant(np.int64(6)))
    gathered = opset13.gather(data, index, opset13.constant(np.int64(1)))
    path = write_ir(gathered, [data], tmp_path)
    check_inference(path)
    check_run(path, {"data": np.arange(12, dtype=np.float32).reshape(2, 6)})


def _spec(shape: str, et: str = "f32") -> TensorSpec:
    return TensorSpec(element_type(et), PartialShape.of(tuple(int(d) for d in shape.split(",") if d)))


@pytest.mark.parametrize(("a", "b", "axes", "out", "want"), [
    ("8,3", "8,3", (0, 0), "8,3", [0]), ("8,3", "3", (0, None), "8,3", [0]), ("8,3", "1,3", (0, None), "8,3", [0]),
    ("8,3", "8,1", (0, None), "8,3", "spans"), ("8,3", "8,3", (0, 1), "8,3", "different output axes"),
    ("3", "8,3", (None, 0), "8,3", [0]), ("1,3", "8,3", (0, 0), "8,3", "broadcasts its batch axis"),
    ("2,8,3", "8,3", (1, 0), "2,8,3", [1]),
])
def test_batch_axis_follows_numpy_alignment(a, b, axes, out, want):
    op = lookup("Add", "opset1")
    got = op.batch({"mode": "numpy", "axis": 0}, [_spec(a), _spec(b)], [_spec(out)], list(axes))
    assert got == want if isinstance(want, list) else want in got


def test_batch_axis_under_pdpd_uses_the_pdpd_offset():
    op = lookup("Add", "opset1")
    got = op.batch({"mode": "pdpd", "axis": 1}, [_spec("2,8,3,4"), _spec("8,3")], [_spec("2,8,3,4")], [1, 0])
    assert got == [1]


def _value_context(op_type: str, partials, data=None):
    from ir_runner.errors import LayerRef
    from ir_runner.ir.records import LayerRecord
    from ir_runner.ops.api import OpContext

    layer = LayerRecord("7", "v", op_type, "opset1", data or {}, (), (), None, {})
    specs = [TensorSpec(element_type("i64"), PartialShape.of((len(p),))) for p in partials]
    return OpContext(layer, LayerRef("v", f"{op_type}-1", "7", None), lookup(op_type, "opset1"), specs,
                     lambda layer_id, position: None, False, None, lambda layer_id, position: partials[position])


@pytest.mark.parametrize(("op", "a", "b", "want"), [
    ("Add", (Dim(0, None), Dim(3, 3)), (Dim(1, 1),), (Dim(1, None), Dim(4, 4))),
    ("Multiply", (Dim(2, 4), Dim(3, 3)), (Dim(2, 2), Dim(0, None)), (Dim(4, 8), Dim(0, None))),
    ("Subtract", (Dim(8, 8),), (Dim(3, 3), Dim(9, 9)), (Dim(5, 5), Dim(-1, -1))),
    ("Divide", (Dim(12, 12), Dim(1, 10)), (Dim(5, 5),), (Dim(2, 2), Dim(0, 2))),
    ("Maximum", (Dim(2, 5),), (Dim(3, 3),), (Dim(3, 5),)), ("Minimum", (Dim(2, 5),), (Dim(3, 3),), (Dim(2, 3),)),
    ("Equal", (Dim(2, 2), Dim(0, None)), (Dim(2, 2),), (Dim(1, 1), Dim(0, 1))),
    ("Less", (Dim(2, 2),), (Dim(3, 3),), (Dim(1, 1),)),
])
def test_partial_values_of_shape_arithmetic(op, a, b, want):
    value = lookup(op, "opset1").value
    assert value(_value_context(op, [a, b])) == [want]


def test_partial_values_need_broadcastable_lengths_and_integers():
    assert lookup("Add", "opset1").value(_value_context("Add", [(Dim(1, 1),) * 2, (Dim(1, 1),) * 3])) == [None]
    context = _value_context("Divide", [(Dim(-7, -7),), (Dim(2, 2),)], {"m_pythondiv": "false"})
    assert lookup("Divide", "opset1").value(context) == [None]


def test_long_rows_are_cut_into_blocks_with_the_same_bits(tmp_path):
    rng = np.random.default_rng(12)
    path, _ = _graph(tmp_path, "maximum", ["f32", "f32"], [[2, 1, 700000], [2, 1, 1]])
    a, b = rng.standard_normal((2, 1, 700000)).astype(np.float32), rng.standard_normal((2, 1, 1)).astype(np.float32)
    got = next(iter(ir_runner.load(str(path)).run({"p0": a, "p1": b}).values()))
    assert got.tobytes() == np.where(a < b, b, a).tobytes()


NAN_BITS = {"f16": np.uint16([0x7C01, 0xFC01, 0x7E05, 0x7D00, 0xFE00]),
            "f32": np.uint32([0x7F800001, 0xFF800001, 0x7FC00005, 0x7FA00000, 0xFFC00000])}


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_mod",
                                "squared_difference"])
@pytest.mark.parametrize("et", ["f16", "f32"])
@pytest.mark.parametrize("other", [0.0, 1.0, 2.5])
def test_nan_payloads_signalling_and_quiet_as_the_reference(tmp_path, op, et, other):
    if et not in REFERENCE_TYPES[op].split():
        pytest.skip("not evaluated by the reference")
    x = NAN_BITS[et].view(NUMPY_TYPE[et])
    y = np.full(x.size, other, NUMPY_TYPE[et])
    path, _ = _graph(tmp_path, op, [et, et], [[x.size], [x.size]])
    check_run(path, {"p0": x, "p1": y})
    check_run(path, {"p0": y, "p1": x})


@pytest.mark.parametrize(("a", "b"), [([2, 3, 4, 5], [2, 3]), ([2, 3, 4, 5], [2, 1, 4]), ([2, -1, 4, 5], [2]),
                                      ([2, 3, 4, 5], [])])
@pytest.mark.parametrize("op", ["multiply", "subtract", "maximum", "equal"])
def test_pdpd_graphs_written_by_openvino_against_the_reference(tmp_path, a, b, op):
    pa, pb = opset13.parameter(a, ov.Type.f32, name="p0"), opset13.parameter(b, ov.Type.f32, name="p1")
    path = write_ir(getattr(opset13, op)(pa, pb, auto_broadcast="pdpd"), [pa, pb], tmp_path)
    check_inference(path)
    rng = np.random.default_rng(13)
    check_run(path, {"p0": rng.standard_normal([n if n > 0 else 3 for n in a]).astype(np.float32),
                     "p1": rng.standard_normal(b).astype(np.float32)})


@pytest.mark.parametrize(("op", "version", "et"), [("Add", "opset1", "i4"), ("Equal", "opset1", "u4"),
                                                   ("Multiply", "opset1", "f8e4m3"), ("Exp", "opset1", "f8e5m2"),
                                                   ("Abs", "opset1", "i4"), ("BitwiseAnd", "opset13", "u1")])
def test_sub_byte_and_8_bit_float_types_are_unsupported(op, version, et):
    from ir_runner.errors import UnsupportedError

    b = IRBuilder()
    inputs = [b.parameter(f"x{i}", et, "2") for i in range(1 if op in ("Exp", "Abs") else 2)]
    b.result(b.layer(op, version, inputs))
    with pytest.raises(UnsupportedError, match=f"{op} on {et} is not implemented"):
        ir_runner.load(b.build()[0])

def _xor(tmp_path, a_shape, b_shape, broadcast="numpy"):
    params = []
    for name, shape in (("a", a_shape), ("b", b_shape)):
        p = opset1.parameter(shape, ov.Type.boolean, name=name)
        p.output(0).get_tensor().set_names({name})
        params.append(p)
    node = NodeFactory("opset1").create("Xor", [p.output(0) for p in params], {"auto_broadcast": broadcast})
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize(("a_shape", "b_shape"), [([2, 3], [2, 3]), ([2, 1], [1, 4]), ([3], []), ([-1, 3], [2, -1])])
def test_xor_values_and_shapes_as_the_reference(a_shape, b_shape, tmp_path):
    path, node = _xor(tmp_path, a_shape, b_shape)
    check_inference(path)
    check_output_shapes(path, node)
    rng = np.random.default_rng(0)
    shape_a = [d if d >= 0 else 2 for d in a_shape]
    shape_b = [d if d >= 0 else 3 for d in b_shape]
    check_run(path, {"a": rng.random(shape_a) < 0.5, "b": rng.random(shape_b) < 0.5})


def test_xor_served_in_opset1_only():
    assert lookup("Xor", "opset1").label == "Xor-1" and lookup("Xor", "opset2") is None


def test_xor_non_boolean_inputs_are_refused_naming_the_layer():
    b = IRBuilder("xor")
    x = b.parameter("x", "f32", "2")
    b.result(b.layer("Xor", "opset1", [x, x], out_specs=[("BOOL", [2])], name="either"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'either' \(Xor-1"):
        ir_runner.load(*b.build())
