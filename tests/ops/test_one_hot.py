"""OneHot-16: shapes as OpenVINO infers them and values bit for bit against its reference (``Node.evaluate``)
in both ``negative_indices_mode``s, every axis, the index types it evaluates (i32, i64) and value types; errors
naming the layer."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset16  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402
from tests.helpers.ov_random import parameter  # noqa: E402

ON_OFF = (np.float32(5), np.float32(-1))


def _model(tmp_path, shape, depth, axis, mode, index_type=ov.Type.i64, values=ON_OFF):
    p = opset1.parameter(shape, index_type, name="indices")
    p.output(0).get_tensor().set_names({"indices"})
    node = opset16.one_hot(p, opset1.constant(np.int64(depth)), opset1.constant(values[0]),
                           opset1.constant(values[1]), axis, negative_indices_mode=mode)
    return write_ir(node, [p], tmp_path), node


@pytest.mark.parametrize("mode", ["ignore_negative", "normalize"])
@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
@pytest.mark.parametrize(("index_type", "dtype"), [(ov.Type.i64, np.int64), (ov.Type.i32, np.int32)])
def test_values_equal_the_reference(mode, axis, index_type, dtype, tmp_path):
    depth = 4
    indices = np.array([[-5, -4, -1, 0], [3, 4, 2, -2], [1, 1, -3, 7]]).astype(dtype)
    path, node = _model(tmp_path, [3, 4], depth, axis, mode, index_type)
    check_inference(path)
    got = check_run(path, {"indices": indices})
    (out,) = got.values()
    if mode == "normalize":
        assert np.moveaxis(out, axis, -1)[0, 1].tolist() == [5, -1, -1, -1]  # (-4 + 4 = 0)


@pytest.mark.parametrize("values", [(np.int32(7), np.int32(0)), (np.bool_(True), np.bool_(False)),
                                    (np.float16(1.5), np.float16(-0.0))])
def test_value_types(values, tmp_path):
    path, _ = _model(tmp_path, [5], 3, -1, "normalize", values=values)
    check_run(path, {"indices": np.array([-3, -1, 0, 2, 3], np.int64)})


@pytest.mark.parametrize("shape", [[2, -1], [ov.Dimension(1, 4)], [], ov.PartialShape.dynamic()])
def test_shapes_as_openvino_infers_them(shape, tmp_path):
    path, node = _model(tmp_path, ov.PartialShape(shape) if isinstance(shape, list) else shape, 3, 0, "normalize")
    check_inference(path)
    check_output_shapes(path, node)


def test_unknown_mode_is_refused_naming_the_layer():
    b = IRBuilder("one_hot16")
    x = b.parameter("x", "i64", "2")
    parts = [x, b.const("depth", np.int64(3)), b.const("on", np.float32(1)), b.const("off", np.float32(0))]
    b.result(b.layer("OneHot", "opset16", parts, attrs={"axis": "-1", "negative_indices_mode": "wrap"},
                     out_specs=[("FP32", [2, 3])], name="hot"))
    with pytest.raises(ir_runner.ModelFormatError, match=r"layer 'hot' \(OneHot-16.*negative_indices_mode='wrap'"):
        ir_runner.load(*b.build())


# -- empty and scalar tensors --------------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "depth"), [([0, 2], 3), ([2], 0), ([], 3)], ids=["empty", "depth-0", "scalar"])
def test_empty_and_scalar(shape, depth, tmp_path):
    i = parameter("i", "i32", shape)
    on, off = (opset1.constant(np.array(v, np.float32)) for v in (1, 0))
    node = opset1.one_hot(i, opset1.constant(np.array(depth, np.int64)), on, off, 1 if shape else 0)
    check_run(write_ir(node, [i], tmp_path), {"i": np.zeros(shape, np.int32)})


@pytest.mark.parametrize("opset", ["opset1", "opset16"])
@pytest.mark.parametrize("position", [1, 2, 3])
def test_one_element_depth_or_values_are_refused_as_openvino_does(opset, position):
    """OpenVINO takes depth, on_value and off_value of a static shape only as scalars ([1] too is refused)."""
    b = IRBuilder("one_hot")
    x = b.parameter("x", "i64", "2")
    values = [np.int64(3), np.float32(1), np.float32(0)]
    parts = [x] + [b.const(f"c{i}", np.array([v]) if i == position else v) for i, v in enumerate(values, start=1)]
    b.result(b.layer("OneHot", opset, parts, attrs={"axis": "-1"}, out_specs=[("FP32", [2, 3])], name="hot"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'hot' \(OneHot-1.*must be a scalar, got \[1\]"):
        ir_runner.load(*b.build())
