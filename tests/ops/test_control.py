"""If-8, TensorIterator-1 and Loop-5 (ir_runner/ops/control/control.py): graphs with sub-graphs written by OpenVINO,
inferred port specs equal to the declared ones, runs bit-exact against OpenVINO's reference (``Node.evaluate``
for If and Loop; TensorIterator has no evaluate in the Python API, so the CPU plugin with an f32 hint, exact
here since the bodies only move data; the CPU plugin quietens no NaN of f32). Bodies use Gather, Select and Convert."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset8 as ops  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.types import Dim  # noqa: E402
from tests.helpers.bits import assert_same_bits  # noqa: E402
from tests.helpers.optest import check_inference, check_run, cpu_outputs, write_ir  # noqa: E402

F32, I64, BOOL = ov.Type.f32, ov.Type.i64, ov.Type.boolean


def _const(value):
    return ops.constant(np.asarray(value))


def _rows(x, order):
    """Gather of rows ``order`` along axis 0."""
    return ops.gather(x, _const(np.array(order, np.int32)), _const(np.int64(0)))


def check_run_cpu(xml, feeds) -> dict[str, np.ndarray]:
    """ir-run against the CPU plugin (f32 hint), bit for bit: for If and TensorIterator (no evaluate)."""
    got = ir_runner.load(str(xml)).run(feeds)
    want = cpu_outputs(xml, feeds)
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want):
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape, g.dtype, w.dtype)
        assert_same_bits(g, w, name)
    return got


# -- If ------------------------------------------------------------------------------------------------------

def _if(cond, x, then_order=(1, 0), else_rows=None, else_shape=(2, 3)):
    then_x = ops.parameter(x.get_partial_shape(), F32)
    then_out = ops.result(_rows(then_x, then_order))
    else_x = ops.parameter(x.get_partial_shape(), F32)
    if else_rows is None:
        mask = _const(np.array([True, False, True]))
        else_value = ops.select(mask, else_x, ops.convert(ops.convert(else_x, ov.Type.i32), F32))
    else:
        else_value = _rows(else_x, else_rows)
    else_out = ops.result(else_value)
    node = ops.if_op(cond)
    node.set_then_body(ov.Model([then_out], [then_x], "then"))
    node.set_else_body(ov.Model([else_out], [else_x], "else"))
    node.set_input(x.output(0), then_x, else_x)
    return node.set_output(then_out, else_out)


X23 = np.array([[1.5, -2.25, 3.0], [np.nan, -0.0, 7.75]], np.float32)


@pytest.mark.parametrize("truth", [True, False])
def test_if_with_a_constant_condition_infers_the_chosen_branch(tmp_path, truth):
    x = ops.parameter([2, 3], F32, name="x")
    out = _if(_const(truth), x, then_order=(1, 0, 1), else_rows=(0,))
    xml = write_ir(out, [x], tmp_path)
    report = check_inference(xml)
    layer = next(info for info in report.layers if info.ref.type_version == "If-8")
    assert layer.outputs[0].shape.to_shape() == ((3, 3) if truth else (1, 3))
    check_run_cpu(xml, {"x": X23})


@pytest.mark.parametrize("truth", [True, False])
def test_if_with_a_fed_condition_runs_the_branch_it_picks(tmp_path, truth):
    x = ops.parameter([2, 3], F32, name="x")
    cond = ops.parameter([], BOOL, name="cond")
    xml = write_ir(_if(cond, x), [cond, x], tmp_path)
    check_inference(xml)
    got = check_run_cpu(xml, {"cond": np.array(truth), "x": X23})
    value = got[next(iter(got))]
    if truth:
        assert np.array_equal(value, X23[::-1], equal_nan=True)
    else:  # columns 0 and 2 pass through the Select, column 1 is converted through i32
        assert np.array_equal(value[:, [0, 2]], X23[:, [0, 2]], equal_nan=True) and value[0, 1] == -2


def test_if_branches_of_different_shapes_merge_as_openvino_and_run_with_either_shape(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    cond = ops.parameter([1], BOOL, name="cond")
    out = _if(cond, x, then_order=(1, 0), else_rows=(0, 1, 1))
    after = _rows(out, (0,))  # a layer after it runs on a shape only the run decides
    xml = write_ir([out, after.output(0)], [cond, x], tmp_path)
    report = ir_runner.validate(str(xml))
    assert report.ok, str(report)
    layer = next(info for info in report.layers if info.ref.type_version == "If-8")
    assert layer.outputs[0].shape.dims == (Dim(2, 3), Dim(3, 3))  # OpenVINO's interval of the two branches
    for truth in (True, False):
        check_run_cpu(xml, {"cond": np.array([truth]), "x": X23})


def test_if_branches_of_different_ranks(tmp_path):
    x = ops.parameter([4], F32, name="x")
    cond = ops.parameter([], BOOL, name="cond")
    then_x, else_x = ops.parameter([4], F32), ops.parameter([4], F32)
    then_out = ops.result(_rows(then_x, (3, 2)))
    else_out = ops.result(ops.gather(else_x, _const(np.int32(1)), _const(np.int64(0))))  # a scalar
    node = ops.if_op(cond)
    node.set_then_body(ov.Model([then_out], [then_x]))
    node.set_else_body(ov.Model([else_out], [else_x]))
    node.set_input(x.output(0), then_x, else_x)
    xml = write_ir(node.set_output(then_out, else_out), [cond, x], tmp_path)
    check_inference(xml)  # [?]: a scalar and a 1-D branch
    for truth in (True, False):
        check_run_cpu(xml, {"cond": np.array(truth), "x": np.arange(4, dtype=np.float32)})


def test_if_condition_must_be_boolean(tmp_path):
    xml = _if_model_with_cond_type(tmp_path)
    text = xml.read_text().replace('precision="BOOL"', 'precision="I32"').replace(
        'element_type="boolean"', 'element_type="i32"')
    xml.write_text(text)
    with pytest.raises(InferenceError, match="cond must be boolean"):
        ir_runner.load(str(xml))


def _if_model_with_cond_type(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    cond = ops.parameter([], BOOL, name="cond")
    return write_ir(_if(cond, x), [cond, x], tmp_path)


# -- Loop ----------------------------------------------------------------------------------------------------

def _loop(trip, start, x, *, stop_table=None, trip_value_param=None):
    """A Loop: the merged ``x`` has its rows reversed each iteration (back edge); the current iteration is
    concatenated (as f32); the body condition is ``stop_table[iteration]`` when given, else constant true."""
    body_x = ops.parameter(x.get_partial_shape(), F32)
    body_i = ops.parameter([1], I64)
    flipped = ops.result(_rows(body_x, (1, 0)))
    counted = ops.result(ops.convert(body_i, F32))
    if stop_table is None:
        cond = ops.result(_const(True))
    else:
        cond = ops.result(ops.gather(_const(np.array(stop_table)), body_i, _const(np.int64(0))))
    loop = ops.loop(trip, start)
    loop.set_function(ov.Model([flipped, counted, cond], [body_x, body_i], "body"))
    loop.set_special_body_ports([1, 2])
    loop.set_merged_input(body_x, x.output(0), flipped.output(0))
    return loop.get_iter_value(flipped.output(0), -1), loop.get_concatenated_slices(counted.output(0), 0, 1, 1, -1, 0)


X2 = np.array([[1, 2, 3], [4, 5, 6]], np.float32)


def test_loop_with_a_constant_trip_count(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    last, cat = _loop(_const(np.int64(3)), _const(True), x)
    xml = write_ir([last, cat], [x], tmp_path)
    report = check_inference(xml)
    layer = next(info for info in report.layers if info.ref.type_version == "Loop-5")
    assert layer.outputs[1].shape.to_shape() == (3,)
    got = check_run(xml, {"x": X2})
    assert np.array_equal(list(got.values())[1], [0, 1, 2])


def test_loop_trip_count_from_a_parameter_is_planned_per_value(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    trip = ops.parameter([], I64, name="trip")
    last, cat = _loop(trip, _const(True), x)
    xml = write_ir([last, cat], [trip, x], tmp_path)
    report = check_inference(xml)
    layer = next(info for info in report.layers if info.ref.type_version == "Loop-5")
    assert layer.outputs[1].shape.dims == (Dim(0, None),)
    model = ir_runner.load(str(xml))
    for n in (1, 4, 2, 4):
        check_run(xml, {"trip": np.array(n, np.int64), "x": X2})
        assert model.run({"trip": np.array(n, np.int64), "x": X2})[model.outputs[1].name].shape == (n,)


def test_loop_body_condition_stops_early(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    trip = ops.parameter([], I64, name="trip")
    last, cat = _loop(trip, _const(True), x, stop_table=[True, True, False, True, True])
    after = _rows(cat, (0,))  # a layer fed by a shape only the run decides
    xml = write_ir([last, cat, after.output(0)], [trip, x], tmp_path)
    check_inference(xml)
    for n in (1, 2, 5, -1):  # -1: no limit, the condition stops it after 3 iterations
        got = check_run(xml, {"trip": np.array(n, np.int64), "x": X2})
        assert list(got.values())[1].shape == (min(n if n > 0 else 3, 3),)


def test_loop_that_never_ends_is_refused(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    last, cat = _loop(_const(np.int64(-1)), _const(True), x)
    xml = write_ir([last, cat], [x], tmp_path)
    with pytest.raises(InferenceError, match="never ends"):
        ir_runner.load(str(xml))
    trip = ops.parameter([], I64, name="trip")
    last, cat = _loop(trip, _const(True), x)
    fed = write_ir([last, cat], [trip, x], tmp_path, "fed")
    model = ir_runner.load(str(fed))
    with pytest.raises(InputError, match="never ends"):
        model.run({"trip": np.array(-1, np.int64), "x": X2})
    with pytest.raises(InputError, match="runs no iteration"):
        model.run({"trip": np.array(0, np.int64), "x": X2})


def test_loop_execution_condition_fed_false_is_refused_as_the_reference_does(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    start = ops.parameter([], BOOL, name="start")
    last, cat = _loop(_const(np.int64(2)), start, x)
    xml = write_ir([last, cat], [start, x], tmp_path)
    check_inference(xml)
    check_run(xml, {"start": np.array(True), "x": X2})
    with pytest.raises(InputError, match="runs no iteration"):
        ir_runner.load(str(xml)).run({"start": np.array(False), "x": X2})


def test_loop_sliced_input_and_concatenation_on_axis_1(tmp_path):
    xs = ops.parameter([2, 4], F32, name="xs")
    acc = ops.parameter([2, 1], F32, name="acc")
    body_s, body_acc = ops.parameter([2, 1], F32), ops.parameter([2, 1], F32)
    picked = ops.select(_const(np.array([[True], [False]])), body_s, body_acc)
    out_acc = ops.result(picked)
    out_cat = ops.result(_rows(body_s, (1, 0)))
    cond = ops.result(_const(True))
    loop = ops.loop(_const(np.int64(4)), _const(True))
    loop.set_function(ov.Model([out_acc, out_cat, cond], [body_s, body_acc]))
    loop.set_special_body_ports([-1, 2])
    loop.set_sliced_input(body_s, xs.output(0), 0, 1, 1, -1, 1)
    loop.set_merged_input(body_acc, acc.output(0), out_acc.output(0))
    outs = [loop.get_iter_value(out_acc.output(0), -1), loop.get_concatenated_slices(out_cat.output(0), 0, 1, 1, -1, 1)]
    xml = write_ir(outs, [xs, acc], tmp_path)
    check_inference(xml)
    check_run(xml, {"xs": np.arange(8, dtype=np.float32).reshape(2, 4), "acc": np.array([[-1], [-2]], np.float32)})


def test_nested_if_in_a_loop_body(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    trip = ops.parameter([], I64, name="trip")
    body_x = ops.parameter([2, 3], F32)
    body_i = ops.parameter([], I64)
    odd = ops.gather(_const(np.array([False, True] * 4)), body_i, _const(np.int64(0)))
    inner = _if(odd.output(0), body_x, then_order=(1, 0))
    out_x = ops.result(inner)
    first = ops.result(_rows(inner, (0,)))  # the CPU plugin concatenates slices of 1 only
    cond = ops.result(_const(True))
    loop = ops.loop(trip, _const(True))
    loop.set_function(ov.Model([out_x, cond, first], [body_x, body_i]))
    loop.set_special_body_ports([1, 1])
    loop.set_merged_input(body_x, x.output(0), out_x.output(0))
    outs = [loop.get_iter_value(out_x.output(0), -1), loop.get_concatenated_slices(first.output(0), 0, 1, 1, -1, 0)]
    xml = write_ir(outs, [trip, x], tmp_path)
    check_inference(xml)
    for n in (1, 2, 5):
        check_run_cpu(xml, {"trip": np.array(n, np.int64), "x": X23 * 3.5})


# -- TensorIterator ------------------------------------------------------------------------------------------

def _ti(xs_shape, stride, axis=0, concat_stride=1):
    xs = ops.parameter(xs_shape, F32, name="xs")
    h_shape = list(xs_shape)
    h_shape[axis] = 1
    h = ops.parameter(h_shape, F32, name="h")
    body_s, body_h = ops.parameter(h_shape, F32), ops.parameter(h_shape, F32)
    mask = _const(np.arange(int(np.prod(h_shape))).reshape(h_shape) % 2 == 0)
    new_h = ops.result(ops.select(mask, body_s, body_h))
    mixed = ops.result(ops.select(mask, body_h, body_s))
    ti = ops.tensor_iterator()
    ti.set_body(ov.Model([new_h, mixed], [body_s, body_h]))
    start, end = (0, -1) if stride > 0 else (-1, 0)
    ti.set_sliced_input(body_s, xs.output(0), start, stride, 1, end, axis)
    ti.set_merged_input(body_h, h.output(0), new_h.output(0))
    cs, ce = (0, -1) if concat_stride > 0 else (-1, 0)
    outs = [ti.get_iter_value(new_h.output(0), -1), ti.get_concatenated_slices(mixed.output(0), cs, concat_stride, 1,
                                                                               ce, axis)]
    return outs, [xs, h], h_shape


@pytest.mark.parametrize("stride,concat_stride,axis", [(1, 1, 0), (-1, 1, 0), (1, -1, 1), (-1, -1, 1)])
def test_tensor_iterator_slices_merges_and_concatenates(tmp_path, stride, concat_stride, axis):
    shape = [5, 3] if axis == 0 else [2, 4]
    outs, params, h_shape = _ti(shape, stride, axis, concat_stride)
    xml = write_ir(outs, params, tmp_path)
    check_inference(xml)
    rng = np.random.default_rng(axis)
    check_run_cpu(xml, {"xs": rng.standard_normal(shape).astype(np.float32),
                        "h": rng.standard_normal(h_shape).astype(np.float32)})


def test_tensor_iterator_with_a_dynamic_input_is_inferred_as_openvino_and_runs(tmp_path):
    outs, params, _ = _ti([-1, 3], 1)
    xml = write_ir(outs, params, tmp_path)
    check_inference(xml)
    for n in (1, 4):
        check_run_cpu(xml, {"xs": np.arange(3 * n, dtype=np.float32).reshape(n, 3),
                            "h": np.full((1, 3), -1, np.float32)})


def test_tensor_iterator_slices_not_covering_the_axis_are_refused(tmp_path):
    outs, params, _ = _ti([5, 3], 1)
    xml = write_ir(outs, params, tmp_path)
    text = xml.read_text().replace('start="0" end="-1" stride="1" part_size="1" />',
                                   'start="1" end="-1" stride="1" part_size="1" />', 1)
    xml.write_text(text)
    with pytest.raises(IRError, match="do not cover"):
        ir_runner.load(str(xml))


# -- port maps, CLI, random graphs ---------------------------------------------------------------------------

def test_a_port_map_naming_no_body_parameter_is_a_format_error(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    last, cat = _loop(_const(np.int64(2)), _const(True), x)
    xml = write_ir([last, cat], [x], tmp_path)
    xml.write_text(xml.read_text().replace('internal_layer_id="0"', 'internal_layer_id="77"', 1))
    with pytest.raises(IRError, match="internal_layer_id='77'") as caught:
        ir_runner.load(str(xml))
    assert "Loop" in str(caught.value)


def test_validate_and_inspect_on_a_loop_model(tmp_path):
    x = ops.parameter([2, 3], F32, name="x")
    trip = ops.parameter([], I64, name="trip")
    last, cat = _loop(trip, _const(True), x, stop_table=[True, False, True])
    xml = write_ir([last, cat], [trip, x], tmp_path)
    for command in ("validate", "inspect"):
        done = subprocess.run([sys.executable, "-m", "ir_runner", command, str(xml)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Loop" in done.stdout


@pytest.mark.parametrize("seed", range(20))
def test_random_loops_against_the_reference(tmp_path, seed):
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(2, 5))
    x = ops.parameter([rows, 2], F32, name="x")
    trip = ops.parameter([], I64, name="trip")
    body_x, body_i = ops.parameter([rows, 2], F32), ops.parameter([], I64)
    order = rng.permutation(rows).astype(np.int32)
    moved = ops.result(ops.gather(body_x, _const(order), _const(np.int64(0))))
    table = rng.random(8) < 0.7
    cond = ops.result(ops.gather(_const(table), body_i, _const(np.int64(0))))
    value = ops.select(_const(rng.random((rows, 2)) < 0.5), body_x, ops.convert(ops.convert(body_x, ov.Type.i8), F32))
    picked = ops.result(value)
    axis = int(rng.integers(0, 2))  # the reference concatenates slices of 1 on the axis only
    piece = ops.result(ops.gather(value, _const(np.array([int(rng.integers(0, 2))], np.int32)), _const(np.int64(axis))))
    loop = ops.loop(trip, _const(True))
    loop.set_function(ov.Model([moved, cond, picked, piece], [body_x, body_i]))
    loop.set_special_body_ports([1, 1])
    loop.set_merged_input(body_x, x.output(0), moved.output(0))
    outs = [loop.get_iter_value(moved.output(0), -1), loop.get_iter_value(picked.output(0), -1),
            loop.get_concatenated_slices(piece.output(0), 0, 1, 1, -1, axis)]
    xml = write_ir(outs, [trip, x], tmp_path)
    check_inference(xml)
    for _ in range(2):
        n = int(rng.integers(1, 8))
        check_run(xml, {"trip": np.array(n, np.int64), "x": (rng.standard_normal((rows, 2)) * 200).astype(np.float32)})


def _counting_loop(tmp_path, dtype) -> str:
    """Loop-5 of 3 iterations: body Parameters ``it`` (current_iteration, i64 [1]) and ``x`` ([2,3] of
    ``dtype``, carried on a back edge); ``y = x + it``. Returns the XML text."""
    from openvino import opset13

    it = opset13.parameter([1], np.int64, name="it")
    x = opset13.parameter([2, 3], dtype, name="xb")
    results = [opset13.result(opset13.constant(np.array(True))),
               opset13.result(opset13.add(x, opset13.convert(it, ov.Type(np.dtype(dtype)))))]
    loop = opset13.loop(opset13.constant(np.int64(3)), opset13.constant(np.array(True)))
    loop.set_function(ov.Model(results, [it, x], "body"))
    loop.set_special_body_ports([0, 0])
    data = opset13.parameter([2, 3], dtype, name="x")
    loop.set_merged_input(x, data.output(0), results[1].output(0))
    path = tmp_path / "loop.xml"
    ov.save_model(ov.Model([loop.get_iter_value(results[1].output(0), -1)], [data], "loop"), str(path),
                  compress_to_fp16=False)
    return path.read_text()


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_a_back_edge_into_the_current_iteration_parameter(tmp_path, dtype):
    """<back_edges> naming the current_iteration Parameter instead of x: its spec was relaxed to a dynamic
    shape and the Loop's start value read it (an empty AssertionError at load). Now the back edge's value
    replaces the counter, as the kernel runs it; a value of another element type is refused."""
    xml = _counting_loop(tmp_path, dtype)
    weights = (tmp_path / "loop.bin").read_bytes()
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    (out,) = ir_runner.load(xml.encode(), weights).run({"x": x}).values()
    assert np.array_equal(out, x + 3)
    edge = re.search(r'<edge from-layer="(\d+)" to-layer="1" />', xml)
    rewired = xml.replace(edge.group(0), f'<edge from-layer="{edge.group(1)}" to-layer="0" />').encode()
    if dtype is np.float32:
        with pytest.raises(ir_runner.InferenceError, match="Loop-5.*element types differ"):
            ir_runner.load(rewired, weights)
        return
    (out,) = ir_runner.load(rewired, weights).run({"x": x}).values()
    assert np.array_equal(out, x + x + x)  # it: 0, then y = x + 0, then y = x + x
