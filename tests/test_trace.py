"""``Model.trace``: every layer's output in execution order, folded layers included, with its reference."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from tests.helpers.irbuild import IRBuilder


def _model() -> ir_runner.Model:
    b = IRBuilder()
    cond = b.parameter("cond", "boolean", "4")
    x = b.parameter("x", "i32", "4")
    k = b.const("k", np.array([1.5, -2.5, 7.0, 9.9], np.float32))
    folded = b.convert(k, "i32", name="k_as_i32")  # all inputs constant: computed when planning
    sel = b.layer("Select", "opset1", [cond, x, folded], attrs={"auto_broadcast": "numpy"}, out_specs=[("I32", [4])],
                  name="sel")
    idx = b.const("idx", np.array([3, 0], np.int64))
    axis = b.const("axis", np.array(0, np.int64))
    gather = b.layer("Gather", "opset8", [sel, idx, axis], attrs={"batch_dims": 0}, out_specs=[("I32", [2])],
                     name="gather")
    b.result(gather, "out")
    return ir_runner.load(*b.build())


FEEDS = {"cond": np.array([True, False, True, False]), "x": np.array([10, 20, 30, 40], np.int32)}


def test_every_layer_is_reported_in_order_with_its_source():
    trace = _model().trace(FEEDS)
    rows = [(r.layer.name, r.layer.type_version, r.source, r.position) for r in trace.layers]
    assert rows == [("cond", "Parameter-1", "input", 0), ("x", "Parameter-1", "input", 0),
                    ("k", "Const-1", "constant", 0), ("k_as_i32", "Convert-1", "folded", 0),
                    ("sel", "Select-1", "computed", 0), ("idx", "Const-1", "constant", 0),
                    ("axis", "Const-1", "constant", 0), ("gather", "Gather-8", "computed", 0)]
    values = {r.layer.name: r.value for r in trace.layers}
    np.testing.assert_array_equal(values["k_as_i32"], [1, -2, 7, 9])
    np.testing.assert_array_equal(values["sel"], [10, -2, 30, 9])
    assert values["sel"].dtype == np.int32
    np.testing.assert_array_equal(trace.outputs["out"], [9, 10])


def test_times_are_those_of_computed_layers_only():
    trace = _model().trace(FEEDS)
    assert all(r.seconds == 0.0 for r in trace.layers if r.source != "computed")
    assert all(r.seconds >= 0.0 for r in trace.layers)
    assert trace.layers[4].port == "3" and trace.layers[4].layer.line is not None  # Select's output port id


def test_a_callback_gets_the_same_records_and_nothing_is_kept():
    model = _model()
    seen = []
    trace = model.trace(FEEDS, callback=seen.append)
    assert trace.layers == []
    assert [(r.layer, r.source) for r in seen] == [(r.layer, r.source) for r in model.trace(FEEDS).layers]
    np.testing.assert_array_equal(trace.outputs["out"], model.run(FEEDS)["out"])


def test_feeds_are_checked_as_run_checks_them():
    model = _model()
    try:
        model.trace({"cond": FEEDS["cond"]})
    except ir_runner.InputError as error:
        assert "no value given for input(s) 'x'" in str(error)
    else:
        raise AssertionError("a missing input was accepted")
    with pytest.warns(ir_runner.CastWarning, match="cast int64 to int32"):
        assert model.trace(cond=FEEDS["cond"], x=FEEDS["x"].astype(np.int64), cast="same_kind").layers


def test_a_layer_of_several_outputs_is_traced_port_by_port(tmp_path):
    """Split gives two outputs: the trace has one record per output port, in port order, with the run's values."""
    ov = pytest.importorskip("openvino")
    from openvino import opset8

    x = opset8.parameter([4, 3], ov.Type.f32, name="x")
    split = opset8.split(x, opset8.constant(np.int64(0)), 2)
    model_path = tmp_path / "split.xml"
    ov.save_model(ov.Model([split.output(0), split.output(1)], [x], "split"), str(model_path))
    model = ir_runner.load(str(model_path))
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    records = [r for r in model.trace({"x": data}).layers if r.source == "computed"]
    assert [r.position for r in records] == [0, 1]
    assert np.array_equal(records[0].value, data[:2]) and np.array_equal(records[1].value, data[2:])


def test_a_layer_trace_prints_one_short_line_without_the_values():
    trace = _model().trace(FEEDS)
    rows = {row.layer.name: repr(row) for row in trace.layers}
    assert rows["cond"] == "<LayerTrace layer 'cond' (Parameter-1, id 0, line 4), output 0 (port 0), input:" \
                           " boolean[4] 2 true>"
    assert rows["axis"].endswith("constant: i64[] value 0>")
    assert rows["k_as_i32"].endswith("folded: i32[4] min -2 max 9 mean 3.75>")
    assert rows["sel"].startswith("<LayerTrace layer 'sel' (Select-1, id 4") and " computed in " in rows["sel"]
    assert rows["sel"].endswith(": i32[4] min -2 max 30 mean 11.75>")
    assert repr(trace) == "<Trace of 8 layer outputs; outputs out: i32[2] min 9 max 10 mean 9.5>"


def test_a_large_value_prints_its_statistics_not_its_elements():
    from ir_runner.model import value_summary

    big = np.arange(1_000_000, dtype=np.float32)
    big[:2] = [np.nan, -np.inf]
    assert value_summary(big) == "f32[1000000] min 2 max 999999 mean 500000 nan 1 inf 1"
    assert value_summary(np.full((2, 0), np.nan, np.float16)) == "f16[2,0]"
    assert value_summary(np.full(3, np.nan, np.float16)) == "f16[3] no finite value nan 3"
