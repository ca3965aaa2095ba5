"""RGBtoNV12-17 and BGRtoNV12-17: shapes as OpenVINO infers them (both plane layouts, intervals, dynamic ranks,
its errors), values bit for bit against a scalar loop written from OpenVINO's reference
(``ov::reference::color_convert_to_nv12``; the wheel has no evaluate and the CPU plugin no kernel) for u8, f32,
f16, bf16, f64, halves and NaN; a round trip through NV12toRGB-8; errors naming the layer."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset8  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.fuzz_misc import nv12_reference  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, write_ir  # noqa: E402

D = ov.Dimension
TYPES = {"u8": np.uint8, "f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64}


def _model(tmp_path, shape, et="u8", order="RGB", single=True):
    p = opset1.parameter(ov.PartialShape.dynamic() if shape is None else shape, getattr(ov.Type, et), name="image")
    p.output(0).get_tensor().set_names({"image"})
    node = NodeFactory("opset17").create(f"{order}toNV12", [p.output(0)], {"single_plane": single})
    return write_ir(node, [p], tmp_path), node


def _image(rng, et, shape):
    if et == "u8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    x = rng.uniform(-20, 280, shape)
    x.reshape(-1)[:3] = (np.nan, 127.5, 255.0)
    return x.astype(TYPES[et])


@pytest.mark.parametrize("et", list(TYPES))
@pytest.mark.parametrize("order", ["RGB", "BGR"])
@pytest.mark.parametrize("single", [True, False])
def test_values_equal_the_references_loop(et, order, single, tmp_path):
    rng = np.random.default_rng(len(et) + single)
    image = _image(rng, et, (2, 4, 6, 3))
    path, _ = _model(tmp_path, [2, 4, 6, 3], et, order, single)
    check_inference(path)
    got = list(ir_runner.load(str(path)).run({"image": image}).values())
    want = nv12_reference(image, order == "BGR", single)
    assert [g.dtype for g in got] == [w.dtype for w in want]
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.tobytes() == w.tobytes()


def test_round_trip_through_nv12_to_rgb(tmp_path):
    rng = np.random.default_rng(9)
    image = np.repeat(np.repeat(rng.integers(40, 200, (1, 2, 3, 3)), 2, axis=1), 2, axis=2).astype(np.uint8)
    p = opset1.parameter([1, 4, 6, 3], ov.Type.u8, name="image")
    p.output(0).get_tensor().set_names({"image"})
    y, uv = NodeFactory("opset17").create("RGBtoNV12", [p.output(0)], {"single_plane": False}).outputs()
    path = write_ir(opset8.nv12_to_rgb(y, uv), [p], tmp_path)
    (back,) = ir_runner.load(str(path)).run({"image": image}).values()
    assert np.abs(back.astype(int) - image.astype(int)).max() <= 3


@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize("shape", [[2, -1, -1, 3], [1, D(2, 8), 6, 3], [1, D(3, 9), D(2, 4), -1], None])
def test_shapes_as_openvino_infers_them(single, shape, tmp_path):
    path, node = _model(tmp_path, shape, "f32", single=single)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize(("et", "shape", "message"), [
    ("u8", "1,3,6,3", r"the image height must be even, got 3"), ("u8", "1,4,5,3", "the image width must be even"),
    ("u8", "1,4,6,4", "the image must have 3 channels"), ("i32", "1,4,6,3", "must be u8 or a floating-point type"),
    ("u8", "4,6,3", "the image must have 4 dims"),
])
def test_invalid_models_are_refused_naming_the_layer(et, shape, message):
    b = IRBuilder("to_nv12")
    x = b.parameter("image", et, shape)
    b.result(b.layer("BGRtoNV12", "opset17", [x], attrs={"single_plane": "true"}, out_specs=[("U8", [1, 6, 6, 1])],
                     name="encode"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'encode' \(BGRtoNV12-17.*" + message):
        ir_runner.load(*b.build())
