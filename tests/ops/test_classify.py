"""IsNaN-10, IsInf-10, IsFinite-10 on NaN, both infinities, signed zeros, subnormals and the extremes: bit for
bit against OpenVINO CPU in f16 and f32 (OpenVINO has no reference evaluate for them), except f32 subnormals,
which the CPU plugin calls not finite (it flushes them; the spec and ir-run: finite); bf16 and f64 as numpy
classifies their values; shapes
(dynamic and interval dims kept) and the boolean type inferred as declared; non-float inputs refused."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset10 as o10  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

TYPES = {"f16": (ov.Type.f16, np.float16), "f32": (ov.Type.f32, np.float32)}


def _specials(dtype) -> np.ndarray:
    info = ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)
    values = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, float(info.max), float(info.min),
              float(info.tiny) / 4, -float(info.tiny), float(info.eps)]
    return np.array(values * 2, dtype=np.float64).astype(dtype).reshape(2, 13)


def _nodes(data):
    return [o10.is_nan(data), o10.is_finite(data), *_inf_nodes(data)]


def _inf_nodes(data):
    return [o10.is_inf(data), o10.is_inf(data, {"detect_negative": False}),
            o10.is_inf(data, {"detect_positive": False}),
            o10.is_inf(data, {"detect_negative": False, "detect_positive": False})]


@pytest.mark.parametrize("type_name", ["f16", "f32"])
def test_values_match_openvino_cpu(type_name, tmp_path):
    et, dtype = TYPES[type_name]
    data = o10.parameter([2, 13], et, name="x")
    path = write_ir(_nodes(data), [data], tmp_path)
    check_inference(path)
    x = _specials(dtype)
    if type_name == "f32":
        subnormal = (x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)
        x = np.where(subnormal, np.float32(0.5), x)
    got = check_run(path, {"x": x}, oracle="cpu")
    assert all(v.dtype == np.bool_ for v in got.values())
    nan, finite, inf, positive, negative, none = got.values()
    assert nan.sum() == 4 and inf.sum() == 4 and positive.sum() == 2 and negative.sum() == 2 and not none.any()
    assert (nan | finite | inf).all()


@pytest.mark.parametrize("type_name", ["bf16", "f64", "f32"])
def test_classified_as_numpy_classifies_the_values(type_name, tmp_path):
    """bf16 and f64 (not compared with the CPU plugin) and f32 subnormals (finite, not as the CPU plugin)."""
    et, dtype = {"bf16": (ov.Type.bf16, ml_dtypes.bfloat16), "f64": (ov.Type.f64, np.float64),
                 "f32": (ov.Type.f32, np.float32)}[type_name]
    data = o10.parameter([2, 13], et, name="x")
    path = write_ir(_nodes(data), [data], tmp_path)
    check_inference(path)
    x = _specials(dtype)
    wide = x.astype(np.float64)
    want = [np.isnan(wide), np.isfinite(wide), np.isinf(wide), wide == np.inf, wide == -np.inf,
            np.zeros(wide.shape, bool)]
    got = ir_runner.load(str(path)).run({"x": x})
    for (name, g), w in zip(got.items(), want, strict=True):
        np.testing.assert_array_equal(g, w, err_msg=name)


def test_dynamic_and_interval_dims_are_kept(tmp_path):
    data = o10.parameter(ov.PartialShape([-1, ov.Dimension(2, 5), 3]), ov.Type.f32, name="x")
    node = o10.is_nan(data)
    path = write_ir([node], [data], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)
    x = np.array([np.nan, 1, -np.inf] * 6, np.float32).reshape(2, 3, 3)
    check_run(path, {"x": x}, oracle="cpu")


def test_an_integer_input_is_refused_naming_the_layer(tmp_path):
    data = o10.parameter([3], ov.Type.f32, name="x")
    path = write_ir([o10.is_finite(data)], [data], tmp_path)
    text = path.read_text().replace('precision="FP32"', 'precision="I32"').replace('element_type="f32"',
                                                                                    'element_type="i32"')
    path.write_text(text)
    with pytest.raises(IRError, match=r"IsFinite.*floating-point tensor, got i32"):
        ir_runner.load(str(path))
