"""ErfInv-17: shapes and types as OpenVINO infers them, values against a scalar loop written from OpenVINO's
reference (``ov::reference::erfinv``: the wheel has no evaluate for it) at every float type, and against the
CPU plugin within the bounds of docs/semantics.md; the reference's own error (the tail polynomial's sign)
pinned; errors naming the layer; batch rule."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset17  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.elementwise.erfinv import CENTRAL, OPS, TAIL  # noqa: E402
from tests.helpers.cpu_oracle import cpu_outputs  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, ulp_distance, write_ir  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
TYPES = {"f32": np.float32, "f16": np.float16, "bf16": BF16, "f64": np.float64}


def _reference(value: float) -> float:
    """One element as the C++ reference computes it, in Python floats (IEEE doubles, the C library's log)."""
    if value == 0:
        return 0.0
    if abs(value) >= 1:
        return math.copysign(math.inf, value) if abs(value) == 1 else math.nan
    if math.isnan(value):
        return math.nan
    w = -math.log((1.0 - value) * (1.0 + value))
    coefficients, s = (CENTRAL, w - 2.5) if w < 5.0 else (TAIL, math.sqrt(w) - 3.0)
    r = coefficients[0]
    for c in coefficients[1:]:
        r = c + r * s
    return r * value


def _model(tmp_path, et, shape):
    p = opset1.parameter(shape, getattr(ov.Type, et), name="x")
    p.output(0).get_tensor().set_names({"x"})
    node = opset17.erfinv(p)
    return write_ir(node, [p], tmp_path), node


def _inputs(dtype, count=4000, seed=0):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.uniform(-1, 1, count), rng.uniform(-1e-3, 1e-3, count // 10),
                        1 - rng.random(count // 10) * 1e-5, [0.0, -0.0, 1, -1, 1.5, -2, np.nan, np.inf, -np.inf]])
    return x.astype(dtype)


@pytest.mark.parametrize("shape", [[2, 3], [-1, 4], [ov.Dimension(1, 5)], [], ov.PartialShape.dynamic()])
@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "f64"])
def test_shapes_and_types_as_openvino_infers_them(shape, et, tmp_path):
    path, node = _model(tmp_path, et, ov.PartialShape(shape) if isinstance(shape, list) else shape)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "f64"])
def test_values_equal_the_references_formula(et, tmp_path):
    """f32/f16/bf16: the double result rounded to f32 (then to the type), equal to the loop on these samples (the
    stated bound is 1 ULP); f64: the double, within 1e-15 relative (numpy's log against the C library's)."""
    x = _inputs(TYPES[et])
    path, _ = _model(tmp_path, et, [x.size])
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    want = np.array([_reference(float(v)) for v in x.astype(np.float64)])
    assert got.dtype == x.dtype
    if et == "f64":
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    else:
        want = want.astype(np.float32).astype(x.dtype)
        assert ulp_distance(got.astype(np.float32), want.astype(np.float32)).max() == 0


def test_special_values():
    from ir_runner.ops.elementwise.erfinv import erfinv

    x = np.array([0.0, -0.0, 1, -1, 1 + 2**-23, -3, np.nan, np.inf, -np.inf], np.float32)
    got = erfinv(x)
    assert got[:4].tolist() == [0.0, 0.0, math.inf, -math.inf] and np.isnan(got[4:]).all()
    assert math.copysign(1, got[1]) == 1  # (the reference returns +0 for -0)


def test_the_references_tail_is_off_by_its_sign_error():
    """For ``w >= 5`` (|x| above about 0.9966) the reference's tail polynomial has -0.00943887047 where Giles'
    has +0.00943887047: results there are up to 0.5 % small. ir-run follows OpenVINO (and so does its CPU plugin)."""
    from ir_runner.ops.elementwise.erfinv import erfinv

    true = 2.125
    x = math.erf(true)  # 0.99735
    assert 0.003 < (true - erfinv(np.array([x]))[0]) / true < 0.006
    assert abs(erfinv(np.array([math.erf(1.0)]))[0] - 1.0) < 1e-6  # (the central branch is right)


@pytest.mark.parametrize(("et", "rtol", "atol"), [("f32", 2e-4, 0), ("f16", 3e-3, 2**-23), ("bf16", 2e-2, 0)])
def test_values_near_the_cpu_plugins(et, rtol, atol, tmp_path):
    """The CPU plugin computes its own f32 version of the formula: within 1.1e-4 relative of the reference's at f32
    (measured over 3e5 values), a few ULPs at f16/bf16 (two subnormal steps at f16); infinities and NaNs where
    the reference has them."""
    x = _inputs(TYPES[et], seed=1)
    path, _ = _model(tmp_path, et, [x.size])
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    (cpu,) = cpu_outputs(path, {"x": x})
    cpu = cpu.view(got.dtype).astype(np.float64)
    wide = got.astype(np.float64)
    finite = np.isfinite(wide)
    assert np.array_equal(np.isnan(wide), np.isnan(cpu)) and np.array_equal(wide[np.isinf(wide)], cpu[np.isinf(wide)])
    np.testing.assert_allclose(cpu[finite], wide[finite], rtol=rtol, atol=atol)


def test_integer_data_is_refused_naming_the_layer():
    b = IRBuilder("erfinv")
    x = b.parameter("x", "i32", "3")
    b.result(b.layer("ErfInv", "opset17", [x], out_specs=[("I32", [3])], name="inv"))
    with pytest.raises(ir_runner.InferenceError, match=r"'inv' \(ErfInv-17.*floating-point element type, got i32"):
        ir_runner.load(*b.build())


def test_only_opset17_serves_it_and_the_batch_axis_passes():
    (op,) = OPS
    assert (op.first_opset, op.last_opset, op.exact) == (17, 17, False)
    assert op.batch({}, [None], [None], [1]) == [1] and op.batch({}, [None], [None], [None]) == [None]
