"""BitwiseLeftShift-15 and BitwiseRightShift-15: shapes as OpenVINO infers them (numpy/none broadcasting,
dynamic dims and ranks), integer types only; values bit for bit against the reference (``Node.evaluate``, which
the wheel builds for i32 only) and against the CPU plugin (i8..u32; it computes i64/u64 in i32), shift counts
outside [0, width) included (taken modulo 32, or 64 for i64/u64, as x86 does); seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_run, write_ir  # noqa: E402

TYPES = {np.int8: ov.Type.i8, np.int16: ov.Type.i16, np.int32: ov.Type.i32, np.int64: ov.Type.i64,
         np.uint8: ov.Type.u8, np.uint16: ov.Type.u16, np.uint32: ov.Type.u32, np.uint64: ov.Type.u64}
OPS = (opset15.bitwise_left_shift, opset15.bitwise_right_shift)


def _graph(tmp_path, shape_a, shape_b, npt=np.int32, name="model", **kwargs):
    a = opset15.parameter(ov.PartialShape(shape_a), TYPES[npt], name="a")
    b = opset15.parameter(ov.PartialShape(shape_b), TYPES[npt], name="b")
    return write_ir([op(a, b, **kwargs) for op in OPS], [a, b], tmp_path, name)


@pytest.mark.parametrize("shapes", [([2, 3], [2, 3]), ([2, 1, 4], [3, 1]), ([], [5]), ([-1, 3], [4, 1, 3]),
                                    ([ov.Dimension(1, 5), 3], [3]), (None, [2]), ([0, 2], [1])], ids=str)
def test_shapes(shapes, tmp_path):
    a, b = (ov.PartialShape.dynamic() if s is None else s for s in shapes)
    check_inference(_graph(tmp_path, a, b))


def test_broadcast_none(tmp_path):
    check_inference(_graph(tmp_path, [2, -1], [-1, 3], auto_broadcast="none"))


def _corners(npt):
    info = np.iinfo(npt)
    a = np.array([1, 3, info.max, info.min, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 1, info.max // 3], npt)
    counts = [0, 1, 2, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 100, info.max, 30]
    b = np.array(counts, np.int64).astype(npt)
    if info.min < 0:
        b[-2:] = [-1, -33]
    return a, b


def test_i32_against_the_reference(tmp_path):
    a, b = _corners(np.int32)
    check_run(_graph(tmp_path, [a.size], [b.size]), {"a": a, "b": b})


@pytest.mark.parametrize("npt", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_narrow_types_against_cpu(npt, tmp_path):
    a, b = _corners(npt)
    if npt == np.uint32:  # the CPU plugin shifts u32 as i32 (arithmetically): its top bit only against the rule
        path = _graph(tmp_path, [1], [1], npt, name="top")
        _, right = ir_runner.load(str(path)).run({"a": np.array([0xFFFFFFFF], npt), "b": np.array([4], npt)}).values()
        assert right.tolist() == [0x0FFFFFFF]
        a = a & npt(0x7FFFFFFF)
    check_run(_graph(tmp_path, [a.size], [b.size], npt), {"a": a, "b": b}, oracle="cpu")


@pytest.mark.parametrize("npt", [np.int64, np.uint64])
def test_64_bit_types_shift_in_64_bits(npt, tmp_path):
    a = np.array([1, 3, 5, -1 if npt == np.int64 else 7, 1, 2], npt)
    b = np.array([0, 40, 63, 1, 64, 65], npt)
    path = _graph(tmp_path, [6], [6], npt)
    left, right = ir_runner.load(str(path)).run({"a": a, "b": b}).values()
    assert left.dtype == npt and right.dtype == npt
    count = b.astype(np.uint64) & np.uint64(63)
    want_left = [int(x) << int(c) & 0xFFFFFFFFFFFFFFFF for x, c in zip(a.astype(np.uint64), count)]
    assert left.astype(np.uint64).tolist() == want_left
    assert right.tolist() == [int(x) >> int(c) for x, c in zip(a.tolist(), count)]
    small = np.array([1, 3, 5, 6], npt), np.array([0, 4, 9, 20], npt)  # within i32: the CPU plugin agrees
    check_run(_graph(tmp_path, [4], [4], npt, name="small"), {"a": small[0], "b": small[1]}, oracle="cpu")


def test_empty_and_scalar(tmp_path):
    check_run(_graph(tmp_path, [0, 3], [3]), {"a": np.zeros((0, 3), np.int32), "b": np.ones(3, np.int32)})
    check_run(_graph(tmp_path, [], [], name="scalar"), {"a": np.array(-7, np.int32), "b": np.array(2, np.int32)})


@pytest.mark.parametrize("et", ["f32", "boolean"])
def test_non_integer_types_are_errors(et):
    b = IRBuilder()
    x, y = b.parameter("a", et, "2"), b.parameter("b", et, "2")
    b.result(b.layer("BitwiseLeftShift", "opset15", [x, y], name="shl"))
    with pytest.raises(InferenceError) as info:
        ir_runner.load(b.build()[0])
    assert "'shl'" in str(info.value) and "integer" in str(info.value)


def test_mixed_types_are_errors():
    b = IRBuilder()
    x, y = b.parameter("a", "i32", "2"), b.parameter("b", "i64", "2")
    b.result(b.layer("BitwiseRightShift", "opset15", [x, y], name="shr"))
    with pytest.raises(InferenceError, match="element type"):
        ir_runner.load(b.build()[0])


def test_batch_rule():
    op = lookup("BitwiseLeftShift", "opset15")
    from ir_runner.types import PartialShape, TensorSpec, element_type

    spec = TensorSpec(element_type("i32"), PartialShape.of((4, 3)))
    one = TensorSpec(element_type("i32"), PartialShape.of((3,)))
    assert op.batch({"mode": "numpy", "axis": 0}, [spec, one], [spec], [0, None]) == [0]


@pytest.mark.parametrize("seed", range(16))
def test_random_graphs(seed, tmp_path):
    rng = np.random.default_rng(seed)
    npt = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32][seed % 6]
    rank = int(rng.integers(0, 4))
    shape_a = [int(d) for d in rng.integers(1, 4, size=rank)]
    shape_b = [d if rng.random() < 0.6 else 1 for d in shape_a][int(rng.integers(0, rank + 1)):]
    info = np.iinfo(npt)
    a = rng.integers(info.min, min(info.max, 2**31 - 1), size=shape_a, endpoint=True, dtype=npt)
    b = rng.integers(-40 if info.min < 0 else 0, 70, size=shape_b).astype(npt)
    check_run(_graph(tmp_path, shape_a, shape_b, npt), {"a": a, "b": b}, oracle="cpu")
