"""Older versions served by newer declarations: Xor-1 (opset1's LogicalXor; served in opset1 only, inferred as
OpenVINO infers it, values bit for bit against its reference with broadcasting, non-boolean inputs refused naming
the layer), DeformableConvolution-1 (opset1..opset7; against the CPU plugin within v8's bound) and Interpolate-1
(opset1..opset3; against the CPU plugin, which runs it as Interpolate-4), NonMaxSuppression-1/3/4 (bit for bit
against the CPU plugin)."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset4  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.cpu_oracle import cpu_outputs  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def _xor(tmp_path, a_shape, b_shape, broadcast="numpy"):
    params = []
    for name, shape in (("a", a_shape), ("b", b_shape)):
        p = opset1.parameter(shape, ov.Type.boolean, name=name)
        p.output(0).get_tensor().set_names({name})
        params.append(p)
    node = NodeFactory("opset1").create("Xor", [p.output(0) for p in params], {"auto_broadcast": broadcast})
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize(("a_shape", "b_shape"), [([2, 3], [2, 3]), ([2, 1], [1, 4]), ([3], []), ([-1, 3], [2, -1])])
def test_values_and_shapes_as_the_reference(a_shape, b_shape, tmp_path):
    path, node = _xor(tmp_path, a_shape, b_shape)
    check_inference(path)
    check_output_shapes(path, node)
    rng = np.random.default_rng(0)
    shape_a = [d if d >= 0 else 2 for d in a_shape]
    shape_b = [d if d >= 0 else 3 for d in b_shape]
    check_run(path, {"a": rng.random(shape_a) < 0.5, "b": rng.random(shape_b) < 0.5})


def test_served_in_opset1_only():
    assert lookup("Xor", "opset1").label == "Xor-1" and lookup("Xor", "opset2") is None


def test_non_boolean_inputs_are_refused_naming_the_layer():
    b = IRBuilder("xor")
    x = b.parameter("x", "f32", "2")
    b.result(b.layer("Xor", "opset1", [x, x], out_specs=[("BOOL", [2])], name="either"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'either' \(Xor-1"):
        ir_runner.load(*b.build())


@pytest.mark.parametrize(("group", "dgroup", "strides", "pads", "dilations"), [
    (1, 1, [1, 1], [0, 0], [1, 1]), (2, 2, [2, 1], [1, 0], [1, 1]), (1, 2, [1, 1], [1, 1], [2, 1]),
])
def test_deformable_convolution_1_near_the_cpu_plugins(group, dgroup, strides, pads, dilations, tmp_path):
    """DeformableConvolution-1 is v8 without mask and without bilinear_interpolation_pad: within v8's bound
    ((2·K + 8)·eps·max|x|·max|w|·K, tests/ops/test_conv.py) of the CPU plugin; offsets push samples outside."""
    rng = np.random.default_rng(group + dgroup)
    x = rng.standard_normal((2, 4, 6, 7)).astype(np.float32)
    w = rng.standard_normal((4, 4 // group, 3, 2)).astype(np.float32)
    data = opset1.parameter([-1, 4, 6, 7], ov.Type.f32, name="x")
    probe = opset1.convolution(opset1.parameter([2, 4, 6, 7], ov.Type.f32), opset1.constant(
        np.zeros((4, 4, 3, 2), np.float32)), strides, pads, pads, dilations).get_output_partial_shape(0)
    offsets = opset1.parameter([2, 2 * dgroup * 6, probe[2].get_length(), probe[3].get_length()], ov.Type.f32,
                               name="offsets")
    for p in (data, offsets):
        p.output(0).get_tensor().set_names({p.get_friendly_name()})
    node = opset1.deformable_convolution(data, offsets, opset1.constant(w), strides, pads, pads, dilations,
                                         group=group, deformable_group=dgroup)
    path = write_ir(node, [data, offsets], tmp_path)
    check_inference(path)
    feeds = {"x": x, "offsets": (rng.standard_normal(offsets.get_output_shape(0)) * 2).astype(np.float32)}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    (want,) = cpu_outputs(path, feeds)
    k = 4 // group * 6
    bound = (2 * k + 8) * float(np.finfo(np.float32).eps) * k * np.abs(x).max() * np.abs(w).max()
    assert np.abs(got - want).max() <= bound
    assert lookup("DeformableConvolution", "opset7").label == "DeformableConvolution-1"
    assert lookup("DeformableConvolution", "opset8").label == "DeformableConvolution-8"


def _interpolate1(tmp_path, shape, target, attrs):
    x = opset1.parameter(shape, ov.Type.f32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    node = opset1.interpolate(x, opset1.constant(np.array(target, np.int64)), attrs)
    return write_ir(node, [x], tmp_path), node


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize(("shape", "axes", "target", "pads"), [
    ([1, 2, 4, 5], [2, 3], [7, 3], None), ([2, 3, 6], [2], [10], None),
    ([1, 2, 4, 5], [3], [9], ([0, 0, 0, 1], [0, 0, 0, 2])),
    ([1, 1, 3, 4, 5], [2, 4], [5, 8], None), ([3, 5], [0, 1], [2, 8], None),
])
def test_interpolate_1_near_the_cpu_plugins(mode, align_corners, shape, axes, target, pads, tmp_path):
    """As the CPU plugin runs it (converted to Interpolate-4): every mode, align_corners or not, with and without
    pads on resized axes, ranks 2 to 5; within 1e-5 (a few f32 ULP of the weights' sums)."""
    attrs = {"axes": axes, "mode": mode, "align_corners": align_corners}
    if pads:
        attrs.update(pads_begin=pads[0], pads_end=pads[1])
    path, node = _interpolate1(tmp_path, shape, target, attrs)
    check_inference(path)
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    (want,) = cpu_outputs(path, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [[1, 2, -1, 4], [1, 2, ov.Dimension(2, 5), 4], ov.PartialShape.dynamic()])
def test_interpolate_1_shapes_as_openvino_infers_them(shape, tmp_path):
    path, node = _interpolate1(tmp_path, ov.PartialShape(shape) if isinstance(shape, list) else shape, [8],
                               {"axes": [3], "mode": "linear"})
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize(("attrs", "message"), [
    ({"mode": "area"}, "mode 'area': no OpenVINO plugin runs it"),
    ({"mode": "nearest", "pads_begin": [1, 0, 0, 0]}, "pad axes that are not resized"),
])
def test_interpolate_1_unsupported_cases_name_the_layer(attrs, message, tmp_path):
    path, _ = _interpolate1(tmp_path, [1, 2, 4, 4], [8], {"axes": [3], **attrs})
    with pytest.raises(ir_runner.UnsupportedError, match=r"Interpolate-1.*" + message):
        ir_runner.load(str(path))


def _nms(tmp_path, version, shapes, consts, attrs):
    make = {1: opset1.non_max_suppression, 3: opset3.non_max_suppression, 4: opset4.non_max_suppression}[version]
    b = opset1.parameter(shapes[0], ov.Type.f32, name="boxes")
    s = opset1.parameter(shapes[1], ov.Type.f32, name="scores")
    for p in (b, s):
        p.output(0).get_tensor().set_names({p.get_friendly_name()})
    values = [opset1.constant(np.int64(consts[0])), opset1.constant(np.float32(consts[1])),
              opset1.constant(np.float32(consts[2]))]
    node = make(b, s, *values, *attrs)
    return write_ir(node, [b, s], tmp_path), node


@pytest.mark.parametrize("version", [1, 3, 4])
@pytest.mark.parametrize("encoding", ["corner", "center"])
@pytest.mark.parametrize("descending", [True, False])
def test_non_max_suppression_old_versions_equal_the_cpu_plugins(version, encoding, descending, tmp_path):
    """Versions 1, 3 and 4 select as version 5 (the plugins convert them): the CPU plugin's rows, bit for bit,
    over random boxes, thresholds and counts; the declared row count is OpenVINO's static one."""
    rng = np.random.default_rng(version)
    attrs = (encoding, descending) if version == 1 else (encoding, descending, "i32" if version == 3 else "i64")
    for trial in range(4):
        boxes = rng.random((2, 7, 4)).astype(np.float32)
        boxes[..., 2:] += boxes[..., :2] * (1 if encoding == "corner" else 0)
        scores = rng.random((2, 3, 7)).astype(np.float32)
        consts = (int(rng.integers(0, 6)), float(rng.uniform(0, 0.7)), float(rng.uniform(0, 0.9)))
        path, node = _nms(tmp_path, version, ([2, 7, 4], [2, 3, 7]), consts, attrs)
        check_inference(path)
        (got,) = ir_runner.load(str(path)).run({"boxes": boxes, "scores": scores}).values()
        (want,) = cpu_outputs(path, {"boxes": boxes, "scores": scores})
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), trial


@pytest.mark.parametrize("version", [1, 3, 4])
@pytest.mark.parametrize("shapes", [([2, -1, 4], [2, 3, -1]), ([-1, 7, 4], [-1, -1, 7]), ([2, 7, 4], [2, 3, 7])])
def test_non_max_suppression_old_versions_shapes_as_openvino_infers_them(version, shapes, tmp_path):
    attrs = ("corner", True) if version == 1 else ("corner", True, "i64")
    path, node = _nms(tmp_path, version, shapes, (3, 0.5, 0.1), attrs)
    check_inference(path)
    check_output_shapes(path, node)
