"""The slicing module (ir_runner/ops/shape_movement/slicing.py).

Slice-8 and StridedSlice-1: shapes as OpenVINO infers them (``check_shapes``: masks, negative steps, begin or
end known only at run, bounds included), runs bit for bit against its reference, cases found by
scripts/fuzz_ops.py. SliceScatter-15: shapes as OpenVINO infers them (dynamic dims and ranks, values computed
at run time), IRErrors naming the layer and input, values bit for bit against the CPU plugin (no reference
evaluate in the wheel), and seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset8, opset13, opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402
from tests.helpers.shape_cases import P, concrete, const, run_cases  # noqa: E402
from tests.helpers.shapes import check_shapes  # noqa: E402


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


# -- Slice / StridedSlice -----------------------------------------------------------------------------------

SLICES = [
    (P(10, 8), [1, 2], [8, 7], [2, 3], None), (P(10, 8), [-1], [-11], [-1], None),
    (P(10, 8), [0], [100], [1], [1]), (P(-1, 8), [1], [3], [1], [0]), (P(-1, 8), [2], [-2], [1], [0]),
    (P((2, 20), 8), [1], [5], [1], [0]), (P(10, 8), [9, 7], [0, 0], [-3, -2], [0, 1]),
    (P(10, 8), [-3], [2**63 - 1], [1], [-2]), (P(-1, -1), [0, 1], [2**63 - 1, 2**63 - 1], [1, 2], None),
    (P(10, 8), [5], [1], [1], [0]),
]


@pytest.mark.parametrize("shape,start,stop,step,axes", SLICES)
def test_slice_shapes(shape, start, stop, step, axes, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    args = [x, const(start), const(stop), const(step)] + ([const(axes)] if axes is not None else [])
    s = opset8.slice(*args)
    run_cases(write_ir(s, [x], tmp_path), [x], np.random.default_rng(7))


STRIDED = [
    (P(5, 6, 7), [1, 0, 2], [4, 6, 6], [1, 2, 2], [0, 1, 0], [0, 0, 0], [], [], []),
    (P(5, 6, 7), [-1, 0], [-6, 6], [-1, 1], [0, 0], [0, 0], [], [], []),
    (P(5, 6, 7), [0, 2, 0], [0, 3, 0], [1, 1, 1], [1, 0, 1], [1, 0, 1], [], [0, 1, 0], []),
    (P(5, 6, 7), [0, 0, 0], [1, 1, 1], [1, 1, 1], [0, 0, 0], [0, 0, 0], [0, 1, 0], [], []),
    (P(5, 6, 7), [1, 0, 2], [3, 0, 5], [1, 1, 1], [0, 0, 0], [0, 0, 0], [], [], [0, 1, 0]),
    (P(-1, 6, 7), [0, 1], [2**63 - 1, 3], [1, 1], [0, 0], [0, 0], [], [], []),
    (P((1, 9), 6), [1], [4], [1], [0], [0], [], [], []),
    (P(5, 6, 7), [4], [0], [-2], [0], [1], [], [], []),
    (P(5, 6, 7), [0, 3], [0, 4], [1, 1], [0, 0], [0, 0], [1, 0], [], [0, 0]),
    (P(5, 6, 7), [-2, 1], [0, 4], [1, 1], [0, 0], [1, 0], [], [1, 0], []),
]


@pytest.mark.parametrize("shape,begin,end,stride,bm,em,nm,sm,el", STRIDED)
def test_strided_slice_shapes(shape, begin, end, stride, bm, em, nm, sm, el, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    s = opset1.strided_slice(x, const(begin), const(end), const(stride), bm, em, nm, sm, el)
    run_cases(write_ir(s, [x], tmp_path), [x], np.random.default_rng(8))


def test_slices_with_negative_steps_from_before_the_first_element(tmp_path):
    """A negative step whose start lies before the dim's first element starts there (numpy would take nothing):
    the reference's clamping, in Slice and StridedSlice (found by the fuzzer)."""
    x = opset13.parameter(P(6, 5), ov.Type.i32, name="x")
    outs = [opset8.slice(x, const([-8, -2**62]), const([-2**62, 1]), const([-1, -2]), const([0, 1])),
            opset1.strided_slice(x, const([-2**62, -9]), const([0, 0]), const([-3, -1]), [0, 0], [1, 0])]
    path = write_ir(outs, [x], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(30, dtype=np.int32).reshape(6, 5)})


STRIDED_UNKNOWN = [  # begin or end a Parameter: masked elements need no value (as OpenVINO infers them)
    (P(4, 5, 6), "end", [1, -1], [-1, 3], [0, 0], [1, 1]),
    (P(5, 2, -1), "begin", [10], [1], [1], [0]),
    (P(5, -1), "begin", [3, 3], [-3, -2], [1, 0], [0, 0]),
    (P(9, (0, 9), 9, 9), "end", [1, 1, 1], [1, 1, 1], [0, 0, 0], [1, 1, 1]),
    (P(9, 9, 9, 9), "end", [1, 1, 1], [1, 2, -3], [0, 0, 0], [1, 1, 1]),
    (P(9, 9, 9), "begin", [2, 2, 2], [2, 2, 2], [0, 1, 1], [0, 0, 0]),
    (P((9, 12)), "end", [1], [-1], [0], [1]),
    (P((0, 9)), "begin", [2], [-3], [1], [0]),
]


@pytest.mark.parametrize("shape,unknown,known,stride,bm,em", STRIDED_UNKNOWN)
def test_strided_slice_with_begin_or_end_known_at_run(shape, unknown, known, stride, bm, em, tmp_path):
    x = opset13.parameter(shape, ov.Type.f32, name="x")
    p = opset13.parameter([len(known)], ov.Type.i64, name="p")
    begin, end = (p, const(known)) if unknown == "begin" else (const(known), p)
    s = opset1.strided_slice(x, begin, end, const(stride), bm, em)
    path = write_ir(s, [x, p], tmp_path)
    check_shapes(path)
    data = np.arange(np.prod(concrete(shape, np.random.default_rng(3))), dtype=np.float32)
    data = data.reshape(concrete(shape, np.random.default_rng(3)))
    check_run(path, {"x": data, "p": np.array([1] * len(known), np.int64)})


def test_strided_slice_ellipsis_that_is_also_a_new_or_shrunk_axis(tmp_path):
    """An element both the ellipsis and a new/shrunk axis is the ellipsis, as OpenVINO's shape inference and
    CPU plugin read it (its reference reads the other mask and contradicts the inferred shape)."""
    x = opset13.parameter(P(2, 2, 6), ov.Type.f32, name="x")
    s = opset1.strided_slice(x, const([1, 0]), const([2, 0]), const([1, 1]), [0, 0], [0, 1], [0, 1], [1, 0], [1, 0])
    path = write_ir(s, [x], tmp_path)
    check_shapes(path)
    data = np.arange(24, dtype=np.float32).reshape(2, 2, 6)
    got = ir_runner.load(str(path)).run({"x": data})
    assert np.array_equal(next(iter(got.values())), data[..., None])


# -- Slice / StridedSlice: found by scripts/fuzz_ops.py --------------------------------------------------------

@pytest.mark.parametrize(("start", "stop", "step"), [(-2**31, -1, 3), (0, 2**31 - 1, 2), (2**31 - 1, 0, -1),
                                                     (-2**31 + 1, -1, 3), (1, 2**31 - 1, 1)])
def test_slices_of_an_unbounded_dim_read_i32_limits_as_int64_limits(start, stop, step, tmp_path):
    """Found by the fuzzer: OpenVINO reads an i32 start/stop of 2**31 - 1 (or -2**31) as int64's limit, so
    slicing an unbounded dim with it gives ?, not a bound."""
    x = opset13.parameter(P(-1), ov.Type.f16, name="x")
    args = [const([v], np.int32) for v in (start, stop, step)]
    outs = [opset8.slice(x, *args), opset1.strided_slice(x, *args, [0], [0])]
    path = write_ir(outs, [x], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(7, dtype=np.float16)})


@pytest.mark.parametrize("dim,start,stop", [((1, 3), -1, 1), ((2, 5), -2, 2), ((1, 8), -1, 1), ((2, 5), -1, 1)])
def test_slice_bounds_that_cross_give_a_dynamic_dim(dim, start, stop, tmp_path):
    """Found by the fuzzer: a lower end above the upper one ([1..3] sliced -1:1 gives 1..0) is ?, as OpenVINO."""
    x = opset13.parameter(P(dim, 3), ov.Type.i32, name="x")
    outs = [opset8.slice(x, const([start]), const([stop]), const([1])),
            opset1.strided_slice(x, const([start]), const([stop]), const([1]), [0], [0])]
    path = write_ir(outs, [x], tmp_path)
    check_shapes(path)
    check_run(path, {"x": np.arange(3 * dim[0], dtype=np.int32).reshape(dim[0], 3)})


def test_strided_slice_shrink_index_out_of_range_is_an_input_error(tmp_path):
    """A shrunk axis is not clamped: a begin outside the axis is an IndexOutOfRangeError naming the layer and the
    begin port (the reference asserts; found by the fuzzer as a KernelError)."""
    x = opset13.parameter(P(4, 6), ov.Type.f32, name="x")
    b = opset13.parameter([2], ov.Type.i64, name="b")
    s = opset1.strided_slice(x, b, const([0, 0]), const([1, 1]), [0, 0], [0, 0], [], [1, 1])
    path = write_ir(s, [x, b], tmp_path)
    model = ir_runner.load(str(path))
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert next(iter(model.run({"x": data, "b": np.array([3, -6], np.int64)}).values())) == data[3, -6]
    with pytest.raises(ir_runner.errors.IndexOutOfRangeError, match=r"StridedSlice.*begin element 1 \(6\)"):
        model.run({"x": data, "b": np.array([3, 6], np.int64)})


@pytest.mark.parametrize("axes", [[0, 1], [1]])
def test_slice_axes_of_another_length_than_start_is_refused_naming_the_layer(axes):
    """axes [0,1] against a start of one element read start[1] (an IndexError escaped at load; found by
    scripts/fuzz_ir.py turning a Llama export's Consts into Parameters); all lengths must agree."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x = b.parameter("x", "f32", "4,6")
    ints = [b.const(name, np.array(value, np.int64)) for name, value in
            (("start", [0]), ("stop", [2]), ("step", [1]), ("axes", axes))]
    b.result(b.layer("Slice", "opset8", [x, *ints], attrs=None, out_specs=[("FP32", [-1, -1])]))
    xml, weights = b.build()
    if len(axes) == 1:
        (out,) = ir_runner.load(xml, weights).run({"x": np.ones((4, 6), np.float32)}).values()
        assert out.shape == (4, 2)
        return
    with pytest.raises(ir_runner.InferenceError, match="Slice-8.*one length, got start 1, stop 1, step 1, axes 2"):
        ir_runner.load(xml, weights)
