"""Eye-9: values bit for bit against OpenVINO's reference (Node.evaluate) for every output type, diagonals
inside, on the edge of and outside the matrix, with and without batch_shape; sizes computed from a ShapeOf
at run time (torch's ``eye(seq_len)``, XLNet) planned per value; shapes inferred as OpenVINO declares them;
a negative constant size refused at load naming the layer."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset3, opset8, opset9  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.optest import check_inference, check_run, write_ir  # noqa: E402


def c(value, dtype=np.int64):
    return opset9.constant(np.array(value, dtype=dtype))


@pytest.mark.parametrize("output_type", ["f32", "f16", "bf16", "f64", "i8", "i32", "i64", "u8"])
def test_constant_sizes_every_output_type(output_type, tmp_path):
    x = opset9.parameter([2], ov.Type.f32, name="x")  # a model needs a Parameter
    nodes = [opset9.eye(c(3), c(5), c(k), output_type) for k in (0, 2, 4, 5, -1, -3, -7)]
    nodes.append(opset9.eye(c([4], np.int32), c(2, np.int32), c([1], np.int32), output_type, c([2, 1, 3])))
    path = write_ir(nodes + [opset9.negative(x)], [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": np.ones(2, np.float32)})


@pytest.mark.parametrize("output_type", ["boolean", "i16", "u16", "u32", "u64"])
def test_output_types_the_reference_does_not_evaluate_match_the_cpu_plugin(output_type, tmp_path):
    x = opset9.parameter([2], ov.Type.f32, name="x")
    nodes = [opset9.eye(c(3), c(5), c(k), output_type) for k in (0, 2, -1, -7)]
    nodes.append(opset9.eye(c([4]), c(2), c([1]), output_type, c([2, 3])))
    path = write_ir(nodes + [opset9.negative(x)], [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": np.ones(2, np.float32)}, oracle="cpu")


def test_sizes_from_the_sequence_length_are_planned_per_value(tmp_path):
    x = opset9.parameter([-1, -1], ov.Type.f32, name="x")
    seq = opset8.gather(opset3.shape_of(x), c(1), c(0))
    rows = opset9.eye(seq, seq, c(0), "f32")
    wide = opset9.eye(seq, c(4), c(-1), "i32", opset8.gather(opset3.shape_of(x), c([0]), c(0)))
    path = write_ir([rows, wide], [x], tmp_path)
    check_inference(path)
    got = [str(info.partial_shape) for info in ir_runner.load(str(path)).outputs]
    assert got == [str(n.get_output_partial_shape(0)).replace(" ", "") for n in (rows, wide)] == ["[?,?]", "[?,?,4]"]
    for shape in ((2, 3), (1, 1), (3, 6)):
        check_run(path, {"x": np.zeros(shape, np.float32)})


def test_a_negative_size_is_refused_naming_the_layer(tmp_path):
    x = opset9.parameter([2], ov.Type.f32, name="x")
    path = write_ir([opset9.eye(c(3), c(2), c(0), "f32"), x], [x], tmp_path)
    data = path.with_suffix(".bin").read_bytes()
    first = data.index(np.int64(3).tobytes())
    path.with_suffix(".bin").write_bytes(data[:first] + np.int64(-3).tobytes() + data[first + 8:])
    with pytest.raises(IRError, match=r"Eye.*num_rows must not be negative, got -3"):
        ir_runner.load(str(path))
