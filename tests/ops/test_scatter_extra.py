"""SliceScatter-15 and SegmentMax-16: shapes as OpenVINO infers them (dynamic dims and ranks, values computed at
run time), IRErrors naming the layer and input, values bit for bit (SliceScatter against the CPU plugin: no
reference evaluate in the wheel; SegmentMax against the CPU plugin too, NaN, signed zeros, empty segments and ids
past num_segments included), and seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset15, opset16  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, IRError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def _i(values):
    return opset1.constant(np.array(values, np.int64))


# -- SliceScatter -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, updates, start, stop, step, axes", [
    ([4, 6, 5], [4, 2, 5], [1], [6], [3], [1]),
    ([4, 6, 5], [2, 6, 5], [-1], [-5], [-2], None),
    ([-1, 6, 5], [-1, 3, 2], [0, 1], [6, 3], [2, 1], [1, 2]),
    (None, [4, 2, 5], [1], [6], [3], [1]),
    ([4, 6, 5], None, [0], [2], [1], [-1]),
    ([ov.Dimension(2, 8), 6], [ov.Dimension(1, 3), 6], [0], [3], [1], [0]),
], ids=str)
def test_slice_scatter_shapes(data, updates, start, stop, step, axes, tmp_path):
    x = opset1.parameter(ov.PartialShape.dynamic() if data is None else ov.PartialShape(data), ov.Type.f32, name="x")
    u = opset1.parameter(ov.PartialShape.dynamic() if updates is None else ov.PartialShape(updates), ov.Type.f32,
                         name="u")
    extra = [] if axes is None else [_i(axes)]
    node = opset15.slice_scatter(x, u, _i(start), _i(stop), _i(step), *extra)
    path = write_ir(node, [x, u], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("et, npt", [(ov.Type.f32, np.float32), (ov.Type.f16, np.float16), (ov.Type.i8, np.int8),
                                     (ov.Type.i64, np.int64), (ov.Type.u8, np.uint8), (ov.Type.boolean, np.bool_)],
                         ids=str)
def test_slice_scatter_values_against_cpu(et, npt, tmp_path):
    x, u = opset1.parameter([4, 6, 5], et, name="x"), opset1.parameter([4, 3, 2], et, name="u")
    path = write_ir(opset15.slice_scatter(x, u, _i([-1, 1]), _i([-7, 5]), _i([-2, 2]), _i([1, 2])), [x, u], tmp_path)
    rng = np.random.default_rng(1)
    feeds = {"x": (rng.integers(0, 9, (4, 6, 5)) % 2 if npt is np.bool_ else rng.integers(-9, 9, (4, 6, 5))),
             "u": rng.integers(0, 2, (4, 3, 2)) if npt is np.bool_ else rng.integers(0, 99, (4, 3, 2))}
    check_run(path, {k: v.astype(npt) for k, v in feeds.items()}, oracle="cpu")


def test_slice_scatter_start_computed_at_run_time(tmp_path):
    x, u = opset1.parameter([3, 8], ov.Type.f32, name="x"), opset1.parameter([3, 2], ov.Type.f32, name="u")
    start = opset1.parameter([1], ov.Type.i64, name="start")
    path = write_ir(opset15.slice_scatter(x, u, start, opset1.add(start, _i([2])), _i([1]), _i([1])),
                    [x, u, start], tmp_path)
    check_inference(path)
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((3, 8)).astype(np.float32), "u": np.ones((3, 2), np.float32)}
    model = ir_runner.load(str(path))
    for value in (5, 0, -3):
        # (the CPU plugin writes garbage when start comes at run time: compared with a constant-start model)
        x, u = opset1.parameter([3, 8], ov.Type.f32, name="x"), opset1.parameter([3, 2], ov.Type.f32, name="u")
        fixed = write_ir(opset15.slice_scatter(x, u, _i([value]), _i([value + 2]), _i([1]), _i([1])), [x, u],
                         tmp_path, f"fixed{value}")
        got = next(iter(model.run({**feeds, "start": np.array([value])}).values()))
        want = check_run(fixed, feeds, oracle="cpu")
        assert got.tobytes() == next(iter(want.values())).tobytes()


def _slice_scatter_layer(updates="4,2,5", step=(3,)):
    b = IRBuilder()
    x, u = b.parameter("x", "f32", "4,6,5"), b.parameter("u", "f32", updates)
    consts = [b.const(n, np.array(v, np.int64)) for n, v in (("start", [1]), ("stop", [6]), ("step", list(step)),
                                                            ("axes", [1]))]
    b.result(b.layer("SliceScatter", "opset15", [x, u, *consts], name="ss", out_specs=[("FP32", [4, 6, 5])]))
    return b.build()


@pytest.mark.parametrize("kwargs, word", [({"updates": "4,3,5"}, "do not fit"), ({"updates": "4,2"}, "one rank"),
                                          ({"step": (0,)}, "zero")])
def test_slice_scatter_errors(kwargs, word, tmp_path):
    xml, weights = _slice_scatter_layer(**kwargs)
    (tmp_path / "m.xml").write_bytes(xml)
    (tmp_path / "m.bin").write_bytes(weights)
    with pytest.raises(InferenceError) as info:
        ir_runner.load(str(tmp_path / "m.xml"))
    assert word in str(info.value) and "'ss'" in str(info.value) and "SliceScatter-15" in str(info.value)


def test_slice_scatter_batch_rule():
    op = lookup("SliceScatter", "opset15")
    params = {"slices": ((None, None, None), (1, 6, 3), (None, None, None))}
    assert op.batch(params, [], [None], [0, 0, None, None, None, None]) == [0]
    assert isinstance(op.batch(params, [], [None], [1, 1, None, None, None, None]), str)
    assert isinstance(op.batch(params, [], [None], [0, None, None, None, None, None]), str)


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


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs(seed, tmp_path):
    rng = np.random.default_rng(seed)
    if seed % 2:
        rows = int(rng.integers(1, 8))
        shape = [rows] + [int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
        ids = np.sort(rng.integers(0, 5, size=rows)).astype(np.int32)
        path, _ = _segment(tmp_path, shape, [rows], int(rng.integers(1, 7)), ["ZERO", "LOWEST"][seed % 4 // 2])
        data = rng.standard_normal(shape).astype(np.float32)
        data[rng.random(shape) < 0.1] = np.nan
        check_run(path, {"x": data, "s": ids}, oracle="cpu")
        return
    rank = int(rng.integers(1, 4))
    shape = [int(d) for d in rng.integers(1, 6, size=rank)]
    axis = int(rng.integers(0, rank))
    step = int(rng.choice([-2, -1, 1, 2, 3]))
    n = shape[axis]
    start, stop = int(rng.integers(-n, n)), int(rng.integers(-n - 1, n + 1))
    taken = len(range(*slice(start, stop, step).indices(n)))
    upd_shape = shape.copy()
    upd_shape[axis] = taken
    x, u = opset1.parameter(shape, ov.Type.f32, name="x"), opset1.parameter(upd_shape, ov.Type.f32, name="u")
    path = write_ir(opset15.slice_scatter(x, u, _i([start]), _i([stop]), _i([step]), _i([axis])), [x, u], tmp_path)
    check_inference(path)
    check_run(path, {"x": rng.standard_normal(shape).astype(np.float32),
                     "u": rng.standard_normal(upd_shape).astype(np.float32)}, oracle="cpu")
