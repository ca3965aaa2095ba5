"""BinaryConvolution-1: shapes as OpenVINO infers them, values bit for bit against a loop written from OpenVINO's
reference (``ov::reference::binary_convolution``; the core node has no evaluate and the CPU plugin's f32 path
does not follow its own filter packing) for strides, dilations, pads, auto_pad, pad values, f32/f16/bf16 data;
errors naming the layer; the batch rule."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.fuzz_misc import binary_conv_reference, u1_constant  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_output_shapes, write_ir  # noqa: E402

D = ov.Dimension
TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _model(tmp_path, shape, bits, strides=(1, 1), pads=((0, 0), (0, 0)), dilations=(1, 1), pad_value=0.0,
           auto_pad="explicit", et="f32"):
    x = opset1.parameter(shape, getattr(ov.Type, et), name="x")
    x.output(0).get_tensor().set_names({"x"})
    node = opset1.binary_convolution(x, u1_constant(bits), list(strides), list(pads[0]), list(pads[1]), list(dilations),
                                     "xnor-popcount", pad_value, auto_pad)
    return write_ir(node, [x], tmp_path), node


@pytest.mark.parametrize(("strides", "pads", "dilations", "pad_value"), [
    ((1, 1), ((0, 0), (0, 0)), (1, 1), 0.0), ((2, 1), ((1, 0), (0, 2)), (1, 1), 1.0),
    ((1, 2), ((2, 1), (1, 1)), (2, 1), 0.0), ((1, 1), ((1, 1), (1, 1)), (1, 2), -1.0),
    ((3, 3), ((0, 0), (0, 0)), (2, 2), 1.0),
])
def test_values_equal_the_references_loop(strides, pads, dilations, pad_value, tmp_path):
    rng = np.random.default_rng(sum(strides) + sum(dilations))
    bits = rng.random((3, 2, 2, 3)) < 0.5
    path, node = _model(tmp_path, [2, 2, 6, 7], bits, strides, pads, dilations, pad_value)
    x = (rng.random((2, 2, 6, 7)) < 0.5).astype(np.float32)
    x[0, 0, 0, :3] = (0.5, -1, 2)  # (values other than 0 and 1 match neither bit)
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    assert got.tolist() == binary_conv_reference(x, bits, strides, pads, dilations, pad_value).tolist()
    check_output_shapes(path, node)


@pytest.mark.parametrize("auto_pad", ["same_upper", "same_lower", "valid"])
def test_auto_pad(auto_pad, tmp_path):
    rng = np.random.default_rng(5)
    bits = rng.random((2, 3, 3, 2)) < 0.5
    path, node = _model(tmp_path, [1, 3, 5, 5], bits, strides=(2, 1), auto_pad=auto_pad, pad_value=1.0)
    x = (rng.random((1, 3, 5, 5)) < 0.5).astype(np.float32)
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    pads = {"valid": ((0, 0), (0, 0)), "same_upper": ((1, 0), (1, 1)), "same_lower": ((1, 1), (1, 0))}[auto_pad]
    assert got.tolist() == binary_conv_reference(x, bits, (2, 1), pads, (1, 1), 1.0).tolist()
    check_output_shapes(path, node)


@pytest.mark.parametrize("et", ["f16", "bf16"])
def test_narrow_types_count_in_their_type(et, tmp_path):
    """bf16 counts stop at 256 (256 + 1 rounds to 256), f16 at 2048: a 1x1 kernel over 300 matching channels."""
    bits = np.ones((1, 300, 1, 1), bool)
    path, _ = _model(tmp_path, [1, 300, 1, 1], bits, et=et)
    (got,) = ir_runner.load(str(path)).run({"x": np.ones((1, 300, 1, 1), TYPES[et])}).values()
    assert got.dtype == TYPES[et] and float(got.reshape(-1)[0]) == (256 if et == "bf16" else 300)


@pytest.mark.parametrize("shape", [[-1, 2, -1, 7], [D(1, 3), 2, 6, D(5, 9)], ov.PartialShape.dynamic()])
def test_shapes_as_openvino_infers_them(shape, tmp_path):
    bits = np.ones((3, 2, 2, 3), bool)
    path, node = _model(tmp_path, ov.PartialShape(shape) if isinstance(shape, list) else shape, bits, (2, 1),
                        ((1, 0), (0, 1)))
    assert ir_runner.validate(str(path)).ok
    check_output_shapes(path, node)


@pytest.mark.parametrize(("data", "filters", "attrs", "message"), [
    (("i32", "1,2,4,4"), ("u1", (3, 2, 2, 2)), {}, "data must have a floating-point element type"),
    (("f32", "1,2,4,4"), ("u8", (3, 2, 2, 2)), {}, r"filters must be u1 \(packed bits\), got u8"),
    (("f32", "1,3,4,4"), ("u1", (3, 2, 2, 2)), {}, r"data channels \(3\) do not match filter input channels \(2\)"),
    (("f32", "1,2,4,4"), ("u1", (3, 2, 2, 2)), {"mode": "xor"}, "mode='xor' is not one of xnor-popcount"),
    (("f32", "1,2,4,4,4"), ("u1", (3, 2, 2, 2, 2)), {}, "expected a 4D tensor for the data"),
])
def test_invalid_models_are_refused_naming_the_layer(data, filters, attrs, message):
    b = IRBuilder("binary_conv")
    x = b.parameter("x", *data)
    n = len(filters[1]) - 2
    w = b.packed_const("w", bytes((int(np.prod(filters[1])) + 7) // 8 * (8 if filters[0] == "u8" else 1)),
                       filters[0], filters[1])
    data_attrs = {"strides": ",".join(["1"] * n), "dilations": ",".join(["1"] * n), "pads_begin": ",".join(["0"] * n),
                  "pads_end": ",".join(["0"] * n), "mode": "xnor-popcount", "pad_value": "0", **attrs}
    b.result(b.layer("BinaryConvolution", "opset1", [x, w], attrs=data_attrs, out_specs=[("FP32", [1, 3, 3, 3])],
                     name="bconv"))
    with pytest.raises(ir_runner.IRError, match=r"layer 'bconv' \(BinaryConvolution-1.*" + message):
        ir_runner.load(*b.build())


def test_batch_axis_zero():
    op = lookup("BinaryConvolution", "opset1")
    assert op.batch({}, None, [None], [0, None]) == [0]
