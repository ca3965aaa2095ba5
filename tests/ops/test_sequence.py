"""ReverseSequence-1: shapes as OpenVINO infers them (dynamic and interval dims, dynamic rank, negative axes),
IRErrors naming the layer and input, values bit for bit against the CPU plugin (the reference has no evaluate
in the wheel) for several element types and length types, lengths of 0 and the full sequence, and seeded
random graphs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def _graph(tmp_path, shape, lengths_shape, batch_axis=0, seq_axis=1, et=ov.Type.f32, lt=ov.Type.i64, name="m"):
    x = opset1.parameter(ov.PartialShape(shape), et, name="x")
    lengths = opset1.parameter(ov.PartialShape(lengths_shape), lt, name="len")
    node = opset1.reverse_sequence(x, lengths, batch_axis, seq_axis)
    return write_ir(node, [x, lengths], tmp_path, name), node


@pytest.mark.parametrize("shape, lengths, batch_axis, seq_axis", [
    ([4, 3, 2], [4], 0, 1), ([-1, 5], [3], 0, 1), ([2, 3, 4, 5], [-1], 2, -1), ([2, 3], [ov.Dimension(1, 4)], -2, 1),
    ([ov.Dimension(2, 8), 3], [ov.Dimension(4, 10)], 0, 1), (None, [3], 1, 0), ([3, 7, 2], None, 2, 1),
], ids=str)
def test_shapes(shape, lengths, batch_axis, seq_axis, tmp_path):
    shape = ov.PartialShape.dynamic() if shape is None else shape
    lengths = ov.PartialShape.dynamic() if lengths is None else lengths
    path, node = _graph(tmp_path, shape, lengths, batch_axis, seq_axis)
    check_inference(path)
    check_output_shapes(path, node)


def _layer(data="4,3", lengths="4", lt="i64", attrs=None):
    b = IRBuilder()
    x, n = b.parameter("x", "f32", data), b.parameter("len", lt, lengths)
    b.result(b.layer("ReverseSequence", "opset1", [x, n], attrs=attrs or {"batch_axis": 0, "seq_axis": 1},
                     name="rs"))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, word", [
    ({"lengths": "3"}, "batch axis"), ({"data": "4"}, "rank 2"), ({"lengths": "4,1"}, "1-D"),
    ({"lt": "boolean"}, "numeric"), ({"attrs": {"batch_axis": 2, "seq_axis": 1}}, "out of the range"),
    ({"attrs": {"batch_axis": 1, "seq_axis": -1}}, "both axis 1"),
])
def test_bad_layers_are_errors(kwargs, word):
    with pytest.raises(InferenceError) as info:
        ir_runner.load(_layer(**kwargs))
    assert word in str(info.value) and "'rs'" in str(info.value) and "ReverseSequence-1" in str(info.value)


@pytest.mark.parametrize("et, npt", [(ov.Type.f32, np.float32), (ov.Type.f16, np.float16), (ov.Type.i8, np.int8),
                                     (ov.Type.i64, np.int64), (ov.Type.u8, np.uint8), (ov.Type.boolean, np.bool_)],
                         ids=str)
@pytest.mark.parametrize("lt, lnp", [(ov.Type.i32, np.int32), (ov.Type.i64, np.int64), (ov.Type.f32, np.float32)],
                         ids=str)
def test_values_against_cpu(et, npt, lt, lnp, tmp_path):
    path, _ = _graph(tmp_path, [5, 4, 3], [3], 2, 1, et, lt)
    data = (np.arange(60).reshape(5, 4, 3) % 7).astype(npt)
    check_run(path, {"x": data, "len": np.array([0, 4, 2], lnp)}, oracle="cpu")


def test_float_lengths_truncate_and_bf16(tmp_path):
    path, _ = _graph(tmp_path, [2, 5], [2], 0, 1, ov.Type.bf16, ov.Type.f32)
    data = np.arange(10, dtype=np.float32).reshape(2, 5).astype(ml_dtypes.bfloat16)
    out = next(iter(ir_runner.load(str(path)).run({"x": data, "len": np.array([2.9, 5.0], np.float32)}).values()))
    assert out.astype(np.float32).tolist() == [[1, 0, 2, 3, 4], [9, 8, 7, 6, 5]]


@pytest.mark.parametrize("bad", [[6, 1], [-1, 2]])
def test_lengths_out_of_range_are_input_errors(bad, tmp_path):
    path, _ = _graph(tmp_path, [2, 5], [2])
    with pytest.raises(InputError, match="seq_lengths"):
        ir_runner.load(str(path)).run({"x": np.zeros((2, 5), np.float32), "len": np.array(bad)})


def test_empty(tmp_path):
    path, _ = _graph(tmp_path, [3, 0, 2], [3])
    out = ir_runner.load(str(path)).run({"x": np.zeros((3, 0, 2), np.float32), "len": np.zeros(3, np.int64)})
    assert next(iter(out.values())).shape == (3, 0, 2)


def test_batch_rule():
    op = lookup("ReverseSequence", "opset1")
    params = {"batch_axis": 0, "seq_axis": 1}
    assert op.batch(params, [], [None], [0, 0]) == [0]
    assert isinstance(op.batch(params, [], [None], [0, None]), str)
    assert isinstance(op.batch(params, [], [None], [1, None]), str)
    assert op.batch(params, [], [None], [2, None]) == [2]


@pytest.mark.parametrize("seed", range(16))
def test_random_graphs(seed, tmp_path):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(2, 5))
    shape = [int(d) for d in rng.integers(1, 5, size=rank)]
    batch_axis, seq_axis = (int(a) for a in rng.choice(rank, size=2, replace=False))
    path, _ = _graph(tmp_path, shape, [shape[batch_axis]], batch_axis - rank * int(rng.integers(0, 2)), seq_axis)
    check_inference(path)
    lengths = rng.integers(0, shape[seq_axis] + 1, size=shape[batch_axis])
    check_run(path, {"x": rng.standard_normal(shape).astype(np.float32), "len": lengths}, oracle="cpu")
