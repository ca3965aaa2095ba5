"""The elementwise unary operations (ir_runner/ops/elementwise/unary.py), after the template of tests/helpers/optest.py:
shape and type cases with graphs written by OpenVINO, value cases against its reference (``Node.evaluate``)
for every element type it evaluates, integer corners, ULP measurements over the whole f32 range (random bit
patterns, fixed seed) for the transcendental operations, and a seeded differential generator. Operations
the reference cannot evaluate (BitwiseNot, Gelu-2, Swish with beta) are compared with the reference's formula
computed here element by element with the C library (Elu and Selu: tests/ops/test_activation_formulas.py)."""

from __future__ import annotations

import ctypes
import ctypes.util
import decimal
import math

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset2, opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, UnsupportedError  # noqa: E402
from ir_runner.ops.elementwise import unary  # noqa: E402
from ir_runner.ops.elementwise.unary import ULP_BOUNDS  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from ir_runner.ops.toolkit.convert_rules import bf16_as_openvino_rounds  # noqa: E402
from ir_runner.types import ELEMENT_TYPES, PartialShape, TensorSpec, element_type  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_run, reference_outputs, ulp_distance, write_ir  # noqa: E402

NUMPY_TYPE = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16, "i8": np.int8,
              "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
              "u64": np.uint64, "boolean": np.bool_}
TRANSCENDENTAL = ["exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
                  "atanh", "erf", "sigmoid"]
EXACT = ["abs", "negative", "sign", "floor", "ceiling", "sqrt", "relu"]
# element types the reference evaluates (measured on openvino 2026.4.1)
REFERENCE_TYPES = dict.fromkeys(TRANSCENDENTAL + ["abs", "sign", "sqrt", "relu"], "f16 f32 i32 i64 u32 u64")
REFERENCE_TYPES.update({"negative": "f16 f32 i32 i64", "floor": "f16 f32 i8 i16 i32 i64 u8 u16 u32 u64",
                        "ceiling": "f16 f32 i8 i16 i32 i64 u8 u16 u32 u64", "sqrt": "f16 f32 f64 i32 i64 u32 u64",
                        "logical_not": "boolean f16 f32 i32 i64 u8 u32 u64", "hswish": "f16 f32", "mish": "f16 f32",
                        "softplus": "f16 f32", "hsigmoid": "f16 f32", "softsign": "f32 f64", "swish": "f32"})
LABEL = {"exp": "Exp", "log": "Log", "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos",
         "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "tanh": "Tanh", "asinh": "Asinh", "acosh": "Acosh",
         "atanh": "Atanh", "erf": "Erf", "sigmoid": "Sigmoid", "mish": "Mish", "softplus": "SoftPlus",
         "swish": "Swish"}


def _graph(tmp_path, make, et: str, shape, name: str = "model"):
    param = opset13.parameter(shape, getattr(ov.Type, et), name="x")
    return write_ir(make(param), [param], tmp_path, name)


def _op(name: str):
    return getattr(opset13, name)


def _values(rng: np.random.Generator, et: str, shape) -> np.ndarray:
    dtype = NUMPY_TYPE[et]
    if et == "boolean":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        wide = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        small = rng.integers(max(info.min, -30), min(info.max, 30), size=shape, endpoint=True).astype(dtype)
        return np.where(rng.random(shape) < 0.3, wide, small)
    values = (rng.standard_normal(shape) * 4).astype(np.float32)
    values[rng.random(shape) < 0.05] = 0.5
    return values.astype(dtype)


def _whole_f32_range(seed: int, n: int = 20000) -> np.ndarray:
    """Random f32 bit patterns (every exponent, NaNs and infinities included), normal values and corners."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    corners = np.float32([0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 0.5, -0.5, 3, -3, 6, -6, 88.7, -88.7, 1e-40])
    return np.concatenate([bits, (rng.standard_normal(n) * 4).astype(np.float32), corners])


# -- shape and type inference ------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", EXACT + TRANSCENDENTAL + ["logical_not", "hswish", "hsigmoid", "mish", "softplus",
                                                         "softsign", "swish"])
@pytest.mark.parametrize("shape", [[2, -1, 3], [], [0, 4], [-1]], ids=str)
def test_output_spec_equals_what_openvino_declares(tmp_path, op, shape):
    et = "f32"
    check_inference(_graph(tmp_path, _op(op), et, shape))


@pytest.mark.parametrize(("make", "et"), [
    (lambda x: opset13.clamp(x, -1.5, 2.5), "i32"), (lambda x: opset13.elu(x, 0.5), "f32"),
    (lambda x: opset13.round(x, "half_to_even"), "boolean"), (lambda x: opset13.gelu(x, "tanh"), "f16"),
    (lambda x: opset2.gelu(x), "f32"), (lambda x: opset13.bitwise_not(x), "u16"),
    (lambda x: opset13.prelu(x, opset13.constant(np.float32([0.1, 0.2, 0.3]))), "f32"),
    (lambda x: opset13.selu(x, opset13.constant(np.float32([1.6])), opset13.constant(np.float32([1.05]))), "f32"),
    (lambda x: opset13.swish(x, opset13.constant(np.float32(0.7))), "f32"), (lambda x: opset13.logical_not(x), "i32"),
])
def test_attribute_ops_declare_what_openvino_declares(tmp_path, make, et):
    check_inference(_graph(tmp_path, make, et, [2, 3, -1]))


@pytest.mark.parametrize(("op", "version", "et", "message"), [
    ("Abs", "opset1", "boolean", "does not take element type boolean"),
    ("Exp", "opset1", "boolean", "does not take"), ("Gelu", "opset7", "i32", "does not take element type i32"),
    ("SoftSign", "opset9", "i64", "does not take"), ("Mish", "opset4", "u8", "does not take"),
    ("BitwiseNot", "opset13", "f32", "does not take element type f32"),
    ("HSwish", "opset4", "boolean", "does not take"), ("HSigmoid", "opset5", "boolean", "does not take"),
])
def test_element_types_refused_as_openvino_refuses_them(op, version, et, message):
    b = IRBuilder()
    x = b.parameter("x", et, "2")
    b.result(b.layer(op, version, [x], attrs={"approximation_mode": "erf"} if op == "Gelu" else None))
    with pytest.raises(InferenceError, match=message):
        ir_runner.load(b.build()[0])


@pytest.mark.parametrize(("op", "version"), [("HSwish", "opset4"), ("HSigmoid", "opset5")])
@pytest.mark.parametrize("et", ["i32", "u8"])
def test_integer_hswish_and_hsigmoid_are_valid_but_not_computed(op, version, et):
    # OpenVINO's type check takes them (its CPU plugin computes them; its reference evaluates none): a model
    # ir-run cannot run (UnsupportedError, exit 5), not an invalid one (InferenceError, exit 3)
    b = IRBuilder()
    x = b.parameter("x", et, "2")
    b.result(b.layer(op, version, [x], name="the_layer"))
    with pytest.raises(UnsupportedError, match=f"{op} of element type {et} is not implemented") as caught:
        ir_runner.load(b.build()[0])
    assert "the_layer" in str(caught.value) and not isinstance(caught.value, InferenceError)


@pytest.mark.parametrize("et", ["i32", "u8", "i64"])
def test_integer_selu_is_refused_as_openvino_refuses_it(et):
    # OpenVINO's Selu::validate_and_infer_types: "Input element types must be floating-point"
    b = IRBuilder()
    x = b.parameter("x", et, "2")
    alpha, lam = (b.const(name, [1], et) for name in ("alpha", "lambda"))
    b.result(b.layer("Selu", "opset1", [x, alpha, lam], name="the_selu"))
    with pytest.raises(InferenceError, match=f"Selu does not take element type {et}") as caught:
        ir_runner.load(*b.build())
    assert "the_selu" in str(caught.value)


def test_versions_start_at_their_opsets():
    # Asinh-3 (class v3) is in OpenVINO's tables from opset4: OpenVINO refuses version="opset3"
    assert lookup("Asinh", "opset3") is None and lookup("Asinh", "opset4").version == 3
    assert lookup("Round", "opset4") is None and lookup("Round", "opset5").version == 5
    assert lookup("Gelu", "opset2").version == 2 and lookup("Gelu", "opset6").version == 2
    assert lookup("Gelu", "opset7").version == 7 and lookup("SoftSign", "opset8") is None
    assert lookup("HSigmoid", "opset5").version == 5 and lookup("BitwiseNot", "opset13").version == 13


def test_clamp_needs_min_not_above_max():
    b = IRBuilder()
    x = b.parameter("x", "f32", "2")
    b.result(b.layer("Clamp", "opset1", [x], attrs={"min": "2", "max": "1"}))
    with pytest.raises(InferenceError, match="must not be greater"):
        ir_runner.load(b.build()[0])


@pytest.mark.parametrize(("data", "slope", "ok"), [
    ([1, 3, 4, 4], [3], True), ([2, 3], [3], True), ([1, 3, 4, 5], [5], True), ([1, 3, 4, 5], [3, 1, 1], True),
    ([2, 3, 4], [4], True), ([2, 5], [1], True), ([2, 3, 4], [2, 3, 4], True), ([1, 3, 4, 5], [4, 5], True),
    ([1, 3, 4, 5], [4], False), ([2, 3], [2, 3, 4], False),
    ([2, 3, 3], [3], True), ([2, 5, 5, 5], [5], True), ([4, 2, 3, 2], [2], True),  # axis 1 wins (fuzzer)
    ([], [1], True), ([], [1, 1], True), ([], [], True), ([3], [1, 1], True), ([2, 3], [1, 1, 3], True),  # (trial)
    ([], [3], False), ([], [2, 1], False), ([3], [2, 3], False),
])
def test_prelu_slope_along_the_channel_axis_or_broadcast(tmp_path, data, slope, ok):
    rng = np.random.default_rng(2)
    x = opset13.parameter(data, ov.Type.f32, name="x")
    s = opset13.parameter(slope, ov.Type.f32, name="s")
    path = write_ir(opset13.prelu(x, s), [x, s], tmp_path)
    if not ok:  # OpenVINO accepts these and reads past the slope (or writes past the output)
        with pytest.raises(InferenceError, match="neither broadcasts"):
            ir_runner.load(str(path))
        return
    check_inference(path)
    check_run(path, {"x": rng.standard_normal(data).astype(np.float32), "s": rng.random(slope).astype(np.float32)})


def test_prelu_with_a_dynamic_channel_decides_at_run_time(tmp_path):
    x = opset13.parameter([-1, -1, 4], ov.Type.f32, name="x")
    s = opset13.parameter([3], ov.Type.f32, name="s")
    path = write_ir(opset13.prelu(x, s), [x, s], tmp_path)
    check_inference(path)
    rng = np.random.default_rng(3)
    check_run(path, {"x": rng.standard_normal((2, 3, 4)).astype(np.float32), "s": np.float32([0.1, 0.2, 0.3])})


# -- values against the reference ------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", EXACT + TRANSCENDENTAL + ["logical_not", "hswish", "hsigmoid", "softsign", "softplus",
                                                         "mish", "swish"])
def test_every_reference_type(tmp_path, op):
    rng = np.random.default_rng(len(op))
    for et in REFERENCE_TYPES[op].split():
        path = _graph(tmp_path, _op(op), et, [3, 40], name=f"m_{et}")
        x = _values(rng, et, (3, 40))
        bound = ULP_BOUNDS.get(LABEL.get(op, ""), 0)
        if et[0] in "iub" or bound == 0:
            check_run(path, {"x": x})
        else:
            check_run(path, {"x": x}, ulp=bound if et == "f32" else 1)


@pytest.mark.parametrize("op", TRANSCENDENTAL + ["softplus", "mish", "swish"])
def test_ulp_bound_over_the_whole_f32_range(tmp_path, op):
    """The stated bound (unary.ULP_BOUNDS), measured on 40,000 f32 values of every exponent."""
    path = _graph(tmp_path, _op(op), "f32", [-1])
    x = _whole_f32_range(len(op))
    check_run(path, {"x": x}, ulp=ULP_BOUNDS[LABEL[op]])


@pytest.mark.parametrize(("op", "et"), [(op, et) for op in TRANSCENDENTAL + ["softplus", "mish", "swish", "gelu"]
                                         for et in ("f32", "f16") if (op, et) != ("swish", "f16")])  # (beta is f32)
def test_scalar_input(tmp_path, op, et):
    """A 0-d input (Gelu erf at f32 failed: numpy gives 0-d results as scalars, which out= cannot take)."""
    x = np.array(-0.75, np.float32 if et == "f32" else np.float16)
    make = (lambda p: opset13.gelu(p, "erf")) if op == "gelu" else _op(op)
    check_run(_graph(tmp_path, make, et, []), {"x": x}, ulp=max(ULP_BOUNDS.get(LABEL.get(op, ""), 0), 1))


@pytest.mark.parametrize("op", TRANSCENDENTAL + ["softplus", "mish", "swish"])
def test_nan_and_infinities_in_a_3d_tensor(tmp_path, op):
    """NaN and infinities anywhere in a tensor of rank 3 (Erf once indexed a NaN's flat position into axis 0)."""
    x = np.linspace(-6, 6, 24, dtype=np.float32).reshape(2, 3, 4)
    x[1, 2, 1], x[0, 1, 3], x[1, 0, 0], x[0, 0, 2] = np.nan, np.inf, -np.inf, -np.nan
    check_run(_graph(tmp_path, _op(op), "f32", [2, 3, 4]), {"x": x}, ulp=max(ULP_BOUNDS.get(LABEL.get(op, ""), 0), 1))
    if op != "swish":  # (the test graph's beta is f32)
        check_run(_graph(tmp_path, _op(op), "f16", [2, 3, 4], "h"), {"x": x.astype(np.float16)}, ulp=1)


@pytest.mark.parametrize("mode", ["erf", "tanh"])
@pytest.mark.parametrize("et", ["f32", "f16"])
def test_gelu_over_the_whole_range(tmp_path, mode, et):
    path = _graph(tmp_path, lambda x: opset13.gelu(x, mode), et, [-1])
    with np.errstate(over="ignore"):
        x = _whole_f32_range(5).astype(NUMPY_TYPE[et])
    got = check_run(path, {"x": x}, ulp=ULP_BOUNDS["Gelu"])
    if mode == "erf" and et == "f16":  # computed in double, rounded once: measured bit-exact
        check_run(path, {"x": x})
    assert next(iter(got.values())).dtype == x.dtype


def test_gelu_2_equals_gelu_7_erf(tmp_path):
    x = _whole_f32_range(9, 2000)
    g2 = next(iter(ir_runner.load(str(_graph(tmp_path, opset2.gelu, "f32", [-1], "g2"))).run({"x": x}).values()))
    g7 = next(iter(ir_runner.load(str(_graph(tmp_path, lambda p: opset13.gelu(p, "erf"), "f32", [-1], "g7"))).run(
        {"x": x}).values()))
    assert g2.tobytes() == g7.tobytes()


FLOAT_CORNERS = np.float32([np.nan, -np.nan, 0.0, -0.0, 2.5, -2.5, 0.5, -0.5, 1.5, -1.5, np.inf, -np.inf, 3.7, -3.7,
                            0.49999997, -0.49999997, 8388609, 1e-45])


@pytest.mark.parametrize("make", [opset13.sign, opset13.relu, opset13.abs, opset13.negative, opset13.floor,
                                  opset13.ceiling, opset13.sqrt, opset13.logical_not, opset13.hswish, opset13.hsigmoid,
                                  opset13.softsign, lambda x: opset13.round(x, "half_to_even"),
                                  lambda x: opset13.round(x, "half_away_from_zero"),
                                  lambda x: opset13.clamp(x, -1.5, 2.0), lambda x: opset13.clamp(x, 0.0, math.inf)])
def test_float_corners_bit_exact(tmp_path, make):
    path = _graph(tmp_path, make, "f32", [FLOAT_CORNERS.size])
    check_run(path, {"x": FLOAT_CORNERS})


@pytest.mark.parametrize("et", ["f16", "bf16", "f32", "f64"])
def test_relu_keeps_minus_zero_and_nans_at_every_length(tmp_path, et):
    """Relu is one np.maximum whose operand order keeps -0.0 (numpy's SIMD loops pick a side on ties): checked
    at lengths covering the loops' vector bodies, tails and scalar paths, NaNs with sign and payload included."""
    dtype = ELEMENT_TYPES[et].dtype
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    nan = np.array([np.nan], dtype).view(bits)[0]
    sign = bits(1) << bits(8 * dtype.itemsize - 1)
    odd = np.array([nan | 3, sign | nan | 5, 1, sign | 1], bits).view(dtype)
    values = np.concatenate([np.array([-0.0, 0.0, -2.5, 2.5, np.inf, -np.inf], dtype), odd])
    path = _graph(tmp_path, opset13.relu, et, [-1])
    # f64: the wheel's reference has no f64 Relu; its formula (x < 0 ? 0 : x) is the oracle
    oracle = (lambda xml, feeds: [np.where(feeds["x"] < 0, 0, feeds["x"])]) if et == "f64" else "reference"
    for n in (1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 67, 129):
        check_run(path, {"x": np.resize(np.roll(values, n), n)}, oracle=oracle)


@pytest.mark.parametrize("et", ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"])
@pytest.mark.parametrize(("low", "high"), [(-1.5, 2.7), (-1e10, 1e10), (3.5, 300.0), (-300.5, -2.2)])
def test_clamp_on_integers_rounds_the_bounds_inwards_and_saturates(tmp_path, et, low, high):
    rng = np.random.default_rng(1)
    path = _graph(tmp_path, lambda x: opset13.clamp(x, low, high), et, [50])
    check_run(path, {"x": _values(rng, et, (50,))})


@pytest.mark.parametrize(("low", "high"), [(-3.7, -2.7), (100.0, 100.3), (-0.5, -0.2), (-3.7, -3.7)])
def test_clamp_bf16_bounds_convert_as_openvino(tmp_path, low, high):
    """bf16 bounds as OpenVINO's bfloat16 class converts them (-3.7 is -3.6875, not the nearest -3.703125);
    found by the fuzzer."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(64) * 60).astype(ml_dtypes.bfloat16)
    check_run(_graph(tmp_path, lambda p: opset13.clamp(p, low, high), "bf16", [64]), {"x": x})


@pytest.mark.parametrize("mode", ["half_to_even", "half_away_from_zero"])
@pytest.mark.parametrize("et", ["f16", "f32", "i8", "u64", "boolean"])
def test_round_every_type(tmp_path, mode, et):
    rng = np.random.default_rng(6)
    path = _graph(tmp_path, lambda x: opset13.round(x, mode), et, [60])
    x = _values(rng, et, (60,))
    if et[0] == "f":
        x[:8] = np.float32([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 1e4 + 0.5]).astype(x.dtype)
    check_run(path, {"x": x})


@pytest.mark.parametrize("mode", ["half_to_even", "half_away_from_zero"])
@pytest.mark.parametrize("et", ["f16", "f32", "f64"])
def test_round_corners_as_the_reference(tmp_path, mode, et):
    """The largest value below 0.5, halves of both signs, the odd integers just above the last fractional
    binade (where ``|x| + 0.5`` would round before a floor), large values, integers, signed zeros, NaN and
    infinities: equal to the reference's ``std::round``/``std::nearbyint`` bit for bit (f64, which it does not
    evaluate: to Python's exact decimal rounding)."""
    dtype = NUMPY_TYPE[et]
    info = np.finfo(dtype)
    below_half = np.nextafter(dtype(0.5), dtype(0))
    odd = [2.0 ** info.nmant + k for k in (1, 3)] + [2.0 ** (info.nmant - 1) + 0.5, 2.0 ** (info.nmant - 1) + 1.5]
    x = np.array([below_half, -below_half, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, *odd, *(-v for v in odd), info.max,
                  -info.max, 1e4 + 0.5, 7, -7, 0.0, -0.0, -0.3, np.nan, np.inf, -np.inf], dtype=dtype)
    oracle = "reference" if et != "f64" else lambda xml, feeds: [np.array([_decimal_round(v, mode) for v in x])]
    check_run(_graph(tmp_path, lambda p: opset13.round(p, mode), et, [x.size]), {"x": x}, oracle=oracle)


def _decimal_round(value: float, mode: str) -> float:
    """One value rounded to an integer exactly (``std::nearbyint`` or ``std::round``), NaN and infinities kept,
    a zero result with the value's sign."""
    if not math.isfinite(value):
        return value
    how = decimal.ROUND_HALF_EVEN if mode == "half_to_even" else decimal.ROUND_HALF_UP
    return math.copysign(float(decimal.Decimal(value).to_integral_value(rounding=how)), value)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                                "tanh", "asinh", "acosh", "atanh", "erf", "sigmoid", "abs", "negative", "sign",
                                "relu"])
@pytest.mark.parametrize("et", ["i32", "i64", "u32", "u64"])
def test_integer_inputs_match_the_reference_exactly(tmp_path, op, et):
    if et not in REFERENCE_TYPES[op].split():
        pytest.skip("not evaluated by the reference")
    info = np.iinfo(NUMPY_TYPE[et])
    x = np.concatenate([np.arange(-30, 31), [1000, 2**20 + 1, 2**31 - 1, -(2**31), 2**40 + 3, 10**18]])
    x = x[(x >= info.min) & (x <= info.max)].astype(NUMPY_TYPE[et])
    path = _graph(tmp_path, _op(op), et, [x.size])
    check_run(path, {"x": x})


def test_integer_path_rounds_its_double_as_std_round():
    """The integer computations round their double result as the reference's ``std::round`` does: the largest
    double below 0.5 gives 0 and the odd integers of the last fractional binade stay (``floor(|x| + 0.5)``
    would give 1 and the next even integer: its sum rounds first). A double function reaching those values
    (``x * below_half``, ``x`` itself) stands for the operation's."""
    below_half = np.nextafter(0.5, 0.0)
    x = np.array([1, -1, 3, 2**52 + 1, -(2**52) - 1, 2**52 + 3, 2**51 + 1, 7, 0], np.int64)
    for fn in (lambda w: w * below_half, np.positive):
        out = np.empty_like(x)
        unary._int_via_double(fn, "round")(x, out)
        wide = fn(x.astype(np.float64)).tolist()
        assert out.tolist() == [int(decimal.Decimal(v).to_integral_value(decimal.ROUND_HALF_UP)) for v in wide]


def test_negative_and_abs_wrap_at_the_lowest_integer(tmp_path):
    for op in ("negative", "abs"):
        path = _graph(tmp_path, _op(op), "i32", [2], name=op)
        got = check_run(path, {"x": np.int32([-(2**31), -5])})
        assert next(iter(got.values()))[0] == -(2**31)


# -- operations without a reference evaluate: the reference's formula, element by element with the C library -----

_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_LIBM.expf.restype, _LIBM.expf.argtypes = ctypes.c_float, [ctypes.c_float]


def _expf(x: np.ndarray) -> np.ndarray:
    return np.array([_LIBM.expf(v) for v in x.tolist()], np.float32)


def _run(path, feeds):
    return next(iter(ir_runner.load(str(path)).run(feeds).values()))


def test_expf_is_the_c_librarys_near_ties_powers_of_two_and_subnormals():
    """ir-run's vectorised expf (double exp, the C library's own expf only near a tie) equals the
    C library's bit for bit: around every k·ln 2 (results near powers of two, where the f32 spacing changes),
    over the subnormal results and over random values."""
    from ir_runner.ops.toolkit.libm import expf as vectorised
    centres = (np.arange(-149, 128) * np.log(2)).astype(np.float32).view(np.int32)
    near_powers = (centres[:, None] + np.arange(-300, 300)[None, :]).astype(np.int32).view(np.float32).ravel()
    subnormal = np.linspace(-104, -87, 40_000, dtype=np.float32)
    rng = np.random.default_rng(0)
    for x in (near_powers, subnormal, (rng.standard_normal(40_000) * 30).astype(np.float32)):
        with np.errstate(over="ignore", invalid="ignore"):  # as the kernels call it: exp(88.8) overflows f32
            got = vectorised(x)
        assert np.array_equal(got, _expf(x), equal_nan=True)


def test_expf_takes_double_rounding_outside_glibcs_relative_error_of_a_tie():
    """Between glibc's relative error bound (1.75·2^-34) and the 0.0025-ULP window, expf rounds the double: the
    C library's expf agrees there (random f32 values, a million of them, filtered to that band: a few thousand)."""
    from ir_runner.ops.toolkit import libm
    x = (np.random.default_rng(1).standard_normal(1 << 20) * 20).astype(np.float32)
    wide = np.exp(x.astype(np.float64))
    bits = wide.view(np.int64)
    distance = np.abs((bits & ((1 << 29) - 1)) - (1 << 28))
    relative = (((bits >> 34) & ((1 << 18) - 1)) + (1 << 18)) * 7 >> 2
    band = (distance >= relative) & (distance < libm._TIE_WINDOW) & (wide >= 2.0 ** -126)
    assert band.sum() > 1000
    assert np.array_equal(libm.expf(x[band]), _expf(x[band]))
    assert np.array_equal(libm.expf(x[band]), wide[band].astype(np.float32))


def test_expf_blocks_keep_shape_and_order():
    """Inputs over several blocks (and a last partial one), 0-d and empty inputs: the C library's values, in
    the input's shape."""
    from ir_runner.ops.toolkit import libm
    x = (np.random.default_rng(2).standard_normal((3, libm.EXPF_BLOCK // 2 + 7)) * 10).astype(np.float32)
    got = libm.expf(x)
    assert got.shape == x.shape and got.dtype == np.float32
    assert np.array_equal(got.ravel(), _expf(x.ravel()))
    assert libm.expf(np.float32(1.5)).shape == () and libm.expf(np.float32(1.5)) == _expf(np.float32([1.5]))[0]
    assert libm.expf(np.zeros((0, 4), np.float32)).shape == (0, 4)


@pytest.mark.parametrize("beta", [0.5, 1.0, 1.7])
def test_swish_with_beta_is_the_reference_formula_with_expf(tmp_path, beta):
    x = _whole_f32_range(5, 3000)
    got = _run(_graph(tmp_path, lambda p: opset13.swish(p, opset13.constant(np.float32(beta))), "f32", [-1]),
               {"x": x})
    with np.errstate(all="ignore"):
        want = x / (np.float32(1) + _expf(-(x * np.float32(beta))))
    assert ulp_distance(got, want).max() <= ULP_BOUNDS["Swish"]


@pytest.mark.parametrize("et", ["boolean", "i8", "u8", "i32", "u64"])
def test_bitwise_not_flips_every_bit(tmp_path, et):
    x = _values(np.random.default_rng(8), et, (40,))
    got = _run(_graph(tmp_path, opset13.bitwise_not, et, [40]), {"x": x})
    assert got.dtype == x.dtype and np.array_equal(got, np.invert(x))


@pytest.mark.parametrize("make", [opset13.exp, opset13.sigmoid, opset13.tanh, opset13.sqrt, opset13.abs,
                                  lambda x: opset13.gelu(x, "erf"), opset13.softplus])
def test_bf16_is_computed_in_f32_and_converted_as_the_reference(tmp_path, make):
    """In f32, then converted as OpenVINO's ``bfloat16`` class converts (not round-to-nearest-even), as the
    reference's bf16 evaluate does."""
    x = _values(np.random.default_rng(9), "bf16", (64,))
    path = _graph(tmp_path, make, "bf16", [64])
    got = _run(path, {"x": x})
    ref32 = _run(_graph(tmp_path, make, "f32", [64], "f32"), {"x": x.astype(np.float32)})
    assert got.dtype == x.dtype and got.tobytes() == bf16_as_openvino_rounds(ref32, x.dtype).tobytes()
    assert got.tobytes() == reference_outputs(path, {"x": x})[0].tobytes()


def test_large_inputs_run_in_threads_and_blocks_with_the_same_bits(tmp_path):
    x = _values(np.random.default_rng(10), "f32", (1200, 1024))
    for i, make in enumerate((opset13.exp, lambda p: opset13.gelu(p, "tanh"), opset13.sigmoid, opset13.mish)):
        model = ir_runner.load(str(_graph(tmp_path, make, "f32", [-1, 1024], name=f"big{i}")))
        big = next(iter(model.run({"x": x}).values()))
        rows = next(iter(model.run({"x": x[[0, 599, 1199]]}).values()))
        assert big[[0, 599, 1199]].tobytes() == rows.tobytes()


# -- the differential generator ----------------------------------------------------------------------------------


def random_case(rng: np.random.Generator, tmp_path):
    """A random unary op with a random reference-evaluable type, shape and values; returns its ULP bound."""
    op = str(rng.choice(EXACT + TRANSCENDENTAL + ["logical_not", "hswish", "hsigmoid", "softplus", "mish", "clamp",
                                                  "round", "gelu"]))
    if op == "clamp":
        low = float(rng.normal() * 3)
        make, types, bound = (lambda p: opset13.clamp(p, low, low + float(rng.random() * 5))), "f16 f32 i8 i32 u64", 0
    elif op == "round":
        mode = str(rng.choice(["half_to_even", "half_away_from_zero"]))
        make, types, bound = (lambda p: opset13.round(p, mode)), "f16 f32 i32 boolean", 0
    elif op == "gelu":
        mode = str(rng.choice(["erf", "tanh"]))
        make, types, bound = (lambda p: opset13.gelu(p, mode)), "f16 f32", 1
    else:
        make, types, bound = _op(op), REFERENCE_TYPES[op], ULP_BOUNDS.get(LABEL.get(op, ""), 0)
    et = str(rng.choice(types.split()))
    shape = [int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 4)))]
    path = _graph(tmp_path, make, et, shape)
    x = _values(rng, et, tuple(shape))
    return path, {"x": x}, (None if et[0] in "iub" or bound == 0 else bound if et == "f32" else 1)


@pytest.mark.parametrize("seed", range(40))
def test_differential_random_unary_ops(tmp_path, seed):
    path, feeds, ulp = random_case(np.random.default_rng(seed), tmp_path)
    check_inference(path)
    check_run(path, feeds, ulp=ulp)


def test_batch_axis_passes_through_and_parameters_must_not_have_one():
    spec = TensorSpec(element_type("f32"), PartialShape.of((8, 3)))
    one = TensorSpec(element_type("f32"), PartialShape.of((1,)))
    assert lookup("Exp", "opset1").batch({}, [spec], [spec], [0]) == [0]
    assert lookup("Selu", "opset1").batch({}, [spec, one, one], [spec], [0, None, None]) == [0]
    assert "batch axis" in lookup("Selu", "opset1").batch({}, [spec, one, one], [spec], [0, 0, None])
    slope = TensorSpec(element_type("f32"), PartialShape.of((3,)))
    assert lookup("PRelu", "opset1").batch({"channel": False}, [spec, slope], [spec], [0, None]) == [0]
    assert "along the batch axis" in lookup("PRelu", "opset1").batch({"channel": True}, [spec, slope], [spec],
                                                                       [1, None])


@pytest.mark.parametrize("make", [opset13.exp, opset13.sigmoid, opset13.softplus, opset13.mish, opset13.sign,
                                  lambda x: opset13.gelu(x, "erf"), lambda x: opset13.clamp(x, -1.0, 1.0),
                                  lambda x: opset13.round(x, "half_away_from_zero"), opset13.logical_not])
def test_empty_tensors(tmp_path, make):
    got = _run(_graph(tmp_path, make, "f32", [0, 3]), {"x": np.zeros((0, 3), np.float32)})
    assert got.shape == (0, 3) and got.dtype == np.float32


NAN_BITS = {"f16": np.uint16([0x7C01, 0xFC01, 0x7E05, 0x7D00, 0xFE00]),
            "f32": np.uint32([0x7F800001, 0xFF800001, 0x7FC00005, 0x7FA00000, 0xFFC00000])}


@pytest.mark.parametrize("op", EXACT + TRANSCENDENTAL + ["hswish", "hsigmoid", "softsign", "softplus", "mish",
                                                         "swish", "logical_not"])
@pytest.mark.parametrize("et", ["f16", "f32"])
def test_nan_payloads_signalling_and_quiet_as_the_reference(tmp_path, op, et):
    if et not in REFERENCE_TYPES[op].split():
        pytest.skip("not evaluated by the reference")
    x = NAN_BITS[et].view(NUMPY_TYPE[et])
    check_run(_graph(tmp_path, _op(op), et, [x.size]), {"x": x})


@pytest.mark.parametrize("make", [lambda x: opset13.clamp(x, -1, 1), lambda x: opset13.round(x, "half_to_even"),
                                  lambda x: opset13.round(x, "half_away_from_zero"),
                                  lambda x: opset13.gelu(x, "erf"), lambda x: opset13.gelu(x, "tanh")])
@pytest.mark.parametrize("et", ["f16", "f32"])
def test_nan_payloads_of_attribute_ops(tmp_path, make, et):
    x = NAN_BITS[et].view(NUMPY_TYPE[et])
    check_run(_graph(tmp_path, make, et, [x.size]), {"x": x})


@pytest.mark.parametrize("et", ["bf16", "f16", "f32"])
def test_erf_of_a_multi_dim_tensor_with_nans(tmp_path, et):
    """NaNs among |x| >= 0.5 in a tensor of rank > 1 (found by the fuzzer: the NaN positions were flat indices)."""
    x = np.linspace(-3, 3, 24).reshape(4, 3, 2)
    x[1, 2, 0] = x[3, 0, 1] = np.nan
    x = x.astype(NUMPY_TYPE[et])
    got = _run(_graph(tmp_path, opset13.erf, et, list(x.shape)), {"x": x})
    assert got.shape == x.shape and got.dtype == x.dtype
    assert np.array_equal(np.isnan(got.astype(np.float64)), np.isnan(x.astype(np.float64)))
    if et != "bf16":  # (optest's ULP distance has no bf16; the fuzzer covers bf16 Erf values)
        check_run(_graph(tmp_path, opset13.erf, et, list(x.shape), "again"), {"x": x}, ulp=ULP_BOUNDS["Erf"])


def test_swish_without_beta_takes_one_input(tmp_path):
    """Swish-4's beta is optional: OpenVINO writes the layer with the data input alone (PyTorch's silu)."""
    x = opset13.parameter([2, 5], ov.Type.f32, name="x")
    path = write_ir(opset13.swish(x), [x], tmp_path)
    check_inference(path)
    data = np.linspace(-6, 6, 10, dtype=np.float32).reshape(2, 5)
    check_run(path, {"x": data}, ulp=ULP_BOUNDS["Swish"])


def test_gelu_erf_f32_near_and_beyond_its_tail_switch(tmp_path):
    """f32 Gelu erf: mixed precision down to special.GELU_TAIL, the double series below it (where the reference's
    1 + erf is coarser than f32); a dense sweep across the switch, large enough to run in blocks over threads."""
    x = np.linspace(-9.0, 3.0, 300_000, dtype=np.float32)
    path = _graph(tmp_path, lambda p: opset13.gelu(p, "erf"), "f32", [-1])
    check_run(path, {"x": x}, ulp=ULP_BOUNDS["Gelu"])
    tail = x[x < -5.0]
    check_run(path, {"x": tail})  # bit-exact there


def test_gelu_erf_f32_corners_are_the_references_bits(tmp_path):
    """f32 Gelu erf where the mixed-precision formula could slip: the signs of zero (-0.0 gives -0.0: the
    polynomial is at least 1 at 0), subnormals and the smallest normals (Gelu is x/2 there), infinities (+inf
    stays, -inf gives NaN as 0 * -inf), the largest finite values, and where erfc(|x|/sqrt(2)) leaves the
    polynomial's fitted range (|x| = 5): bit for bit against the reference (within 1 ULP near |x| = 5)."""
    tiny = np.float32(2.0 ** -126)
    exact = np.float32([0.0, -0.0, 1e-45, -1e-45, 3e-39, -3e-39, tiny, -tiny, np.inf, -np.inf, 3.4e38, -3.4e38,
                        1e-20, -1e-20, 30.0, -30.0, 9.0])
    path = _graph(tmp_path, lambda p: opset13.gelu(p, "erf"), "f32", [-1])
    got = next(iter(check_run(path, {"x": exact}).values()))
    assert np.signbit(got[1]) and not np.signbit(got[0])
    near = np.float32(np.concatenate([np.linspace(4.9, 5.1, 2001), np.linspace(5.3, 7.0, 2001)]))
    check_run(path, {"x": np.concatenate([near, -near[near < 5.0]])}, ulp=1)


@pytest.mark.parametrize("shape", [(0,), (3, 0, 2)])
def test_gelu_erf_f32_of_an_empty_array_called_directly(shape):
    """special.gelu_erf_f32 called directly on an empty array (the op never passes one): nothing to write, no
    error (its tail check took the minimum of x)."""
    from ir_runner.ops.toolkit.special import gelu_erf_f32

    x = np.empty(shape, np.float32)
    out = np.empty(shape, np.float32)
    gelu_erf_f32(x, out)
    assert out.shape == shape and out.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_prepared_kernels_give_the_general_kernels_bits(dtype):
    """The prepared f32/f64 kernel of every unary operation (small inputs: no dispatch) computes what the
    general kernel computes, bit for bit: contiguous and strided inputs, into new arrays and into ``out=``,
    and above the size where the general kernel takes over again."""
    from ir_runner.ops.elementwise.unary import TABLE
    from ir_runner.types import element_type_of

    rng = np.random.default_rng(27)
    base = (rng.standard_normal((6, 40)) * 4).astype(dtype)
    base[0, :5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    with np.errstate(all="ignore"):
        for entry in TABLE:
            op = lookup(entry.type, f"opset{entry.first_opset}")
            data = np.abs(base) + 1 if entry.type in ("Acosh",) else base
            for x in (data, data[:, ::3], np.resize(data, (1 << 20) + 3)):
                spec = TensorSpec(element_type_of(np.dtype(dtype)), PartialShape.of(x.shape))
                prepared = op.prepare({}, [spec], [spec], [None])
                want = op.kernel(x)
                assert prepared(x).view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), entry.type
                into = np.empty(x.shape, dtype)
                assert prepared(x, out=into) is into
                assert into.view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), entry.type


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 8, 128), (1, 40000)])
def test_prepared_swish_gives_the_general_kernels_bits(dtype, shape):
    """Swish-4's prepared kernel (one block or less: no dispatch) against the general one, with and without
    beta (one element, 1-D or 0-D), into new arrays and into ``out=``."""
    from ir_runner.ops.elementwise.unary import prepare_swish, swish
    from ir_runner.types import element_type_of

    x = (np.random.default_rng(4).standard_normal(shape) * 30).astype(dtype)
    x.reshape(-1)[:3] = [np.nan, -np.inf, np.inf]
    spec = TensorSpec(element_type_of(np.dtype(dtype)), PartialShape.of(shape))
    kernel = prepare_swish({}, [spec], [spec], [None, None])
    with np.errstate(all="ignore"):
        for beta in (None, np.array([1.7], dtype), np.array(0.5, dtype)):
            want = swish(x, beta).tobytes()
            assert kernel(x, beta).tobytes() == want
            into = np.empty(shape, dtype)
            assert kernel(x, beta, out=into) is into and into.tobytes() == want


@pytest.mark.parametrize("shape", [(1, 16, 64), (3, 9000)])
@pytest.mark.parametrize(("mode", "dtype"), [("erf", np.float32), ("erf", np.float64), ("tanh", np.float32)])
def test_prepared_gelu_gives_the_general_kernels_bits(shape, mode, dtype):
    """Gelu's prepared kernel (f32 erf up to one block called directly; the rest the general kernel) against
    the general one: contiguous and strided, into new arrays and into ``out=``, NaNs (quietened) and
    infinities included."""
    from ir_runner.ops.elementwise.unary import gelu, prepare_gelu
    from ir_runner.types import element_type_of

    x = (np.random.default_rng(5).standard_normal(shape) * 4).astype(dtype)
    x.reshape(-1)[:4] = [np.nan, -np.inf, np.inf, -0.0]
    with np.errstate(all="ignore"):
        for data in (x, x[:, ::2]):
            spec = TensorSpec(element_type_of(np.dtype(dtype)), PartialShape.of(data.shape))
            kernel = prepare_gelu({"mode": mode}, [spec], [spec], [None])
            want = gelu(data, mode=mode).tobytes()
            assert kernel(data).tobytes() == want
            into = np.empty(data.shape, dtype)
            assert kernel(data, out=into) is into and into.tobytes() == want
