"""SliceScatter-15: shapes as OpenVINO infers them (dynamic dims and ranks, values computed at run time),
IRErrors naming the layer and input, values bit for bit against the CPU plugin (no reference evaluate in the
wheel), and seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError  # noqa: E402
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


@pytest.mark.parametrize("seed", range(0, 12, 2))
def test_slice_scatter_random_graphs(seed, tmp_path):
    rng = np.random.default_rng(seed)
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
