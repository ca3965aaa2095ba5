"""SegmentMax-16: shapes as OpenVINO infers them, IRErrors naming the layer and input, values bit for bit
against the CPU plugin (NaN, signed zeros, empty segments and ids past num_segments included), and seeded
random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset16  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, IRError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

# -- SegmentMax ---------------------------------------------------------------------------------------------

def _segment(tmp_path, data_shape, ids_shape=None, num=None, fill="ZERO", et=ov.Type.f32, ids=None, name="m"):
    x = opset1.parameter(ov.PartialShape(data_shape), et, name="x")
    params = [x]
    if ids is None:
        s = opset1.parameter(ov.PartialShape(ids_shape), ov.Type.i32, name="s")
        params.append(s)
    else:
        s = opset1.constant(np.array(ids, np.int32))
    args = [] if num is None else [opset1.constant(np.int32(num))]
    node = opset16.segment_max(x, s, *args, fill_mode=fill)
    return write_ir(node, params, tmp_path, name), node


@pytest.mark.parametrize("data, ids_shape, ids, num", [
    ([6, 2], [6], None, 4), ([6, 2, 3], [6], None, None), ([-1, 3], [-1], None, 7), ([5, 3], None, [0, 0, 1, 3, 3],
                                                                                       None),
    ([5, 3], None, [0, 0, 1, 3, 3], 2), (None, [4], None, 3), ([ov.Dimension(2, 9), 4], [5], None, None),
], ids=str)
def test_segment_max_shapes(data, ids_shape, ids, num, tmp_path):
    path, node = _segment(tmp_path, ov.PartialShape.dynamic() if data is None else data, ids_shape, num, ids=ids)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("fill", ["ZERO", "LOWEST"])
def test_segment_max_corners_against_cpu(fill, tmp_path):
    data = np.array([[np.nan, -0.0], [1.0, 0.0], [np.nan, 0.0], [-0.0, -0.0], [np.nan, -1], [-np.inf, 8]], np.float32)
    path, _ = _segment(tmp_path, [6, 2], [6], 6, fill)
    got = check_run(path, {"x": data, "s": np.array([0, 0, 2, 2, 4, 9], np.int32)}, oracle="cpu")
    assert next(iter(got.values()))[4, 0] == -np.finfo(np.float32).max  # only NaNs: the lowest finite value
    check_run(path, {"x": data, "s": np.array([0, 0, 2, 2, 5, 5], np.int32)}, oracle="cpu")


@pytest.mark.parametrize("et, npt", [(ov.Type.f16, np.float16), (ov.Type.i8, np.int8), (ov.Type.i32, np.int32),
                                     (ov.Type.i64, np.int64), (ov.Type.u8, np.uint8)], ids=str)
def test_segment_max_types_against_cpu(et, npt, tmp_path):
    path, _ = _segment(tmp_path, [7, 3], [7], None, "LOWEST", et)
    data = np.random.default_rng(4).integers(0, 100, (7, 3)).astype(npt)
    ids = np.array([0, 1, 1, 4, 4, 4, 6], np.int32)
    got = next(iter(ir_runner.load(str(path)).run({"x": data, "s": ids}).values()))
    lowest = -np.finfo(npt).max if npt is np.float16 else np.iinfo(npt).min
    assert (got[[2, 3, 5]] == lowest).all()  # empty segments: numeric_limits<T>::lowest(), as the reference
    # (the CPU plugin computes f16 in f32 and i64 in i32: its lowest is -inf and INT32_MIN there)
    ids = np.array([0, 1, 1, 2, 2, 2, 3], np.int32)
    check_run(path, {"x": data, "s": ids}, oracle="cpu")


@pytest.mark.parametrize("ids, word", [([0, 2, 1], "sorted"), ([-1, 0, 1], "negative")])
def test_segment_max_bad_constant_ids(ids, word, tmp_path):
    x = opset1.parameter([3, 2], ov.Type.f32, name="x")
    path = write_ir(opset16.segment_max(x, opset1.constant(np.array([0, 1, 2], np.int32)), fill_mode="ZERO"), [x],
                    tmp_path)
    weights = path.with_suffix(".bin")
    raw = weights.read_bytes()
    weights.write_bytes(raw.replace(np.array([0, 1, 2], np.int32).tobytes(), np.array(ids, np.int32).tobytes()))
    with pytest.raises(InferenceError) as info:
        ir_runner.load(str(path))
    assert word in str(info.value) and "SegmentMax-16" in str(info.value) and "segment_ids" in str(info.value)


def test_segment_max_bad_run_time_ids_are_errors(tmp_path):
    path, _ = _segment(tmp_path, [3, 2], [3], 4)
    with pytest.raises(IRError, match="sorted"):
        ir_runner.load(str(path)).run({"x": np.zeros((3, 2), np.float32), "s": np.array([2, 1, 0], np.int32)})


def test_segment_max_batch_rule():
    op = lookup("SegmentMax", "opset16")
    assert op.batch({}, [], [None], [1, None, None]) == [1]
    assert isinstance(op.batch({}, [], [None], [0, 0, None]), str)


@pytest.mark.parametrize("seed", range(1, 12, 2))
def test_segment_max_random_graphs(seed, tmp_path):
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 8))
    shape = [rows] + [int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
    ids = np.sort(rng.integers(0, 5, size=rows)).astype(np.int32)
    path, _ = _segment(tmp_path, shape, [rows], int(rng.integers(1, 7)), ["ZERO", "LOWEST"][seed % 4 // 2])
    data = rng.standard_normal(shape).astype(np.float32)
    data[rng.random(shape) < 0.1] = np.nan
    check_run(path, {"x": data, "s": ids}, oracle="cpu")
