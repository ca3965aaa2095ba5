"""Batch rules of the operations (OpDef.batch) and the generic proof over a graph (batching.trace_batch)."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner.batching import trace_batch
from ir_runner.errors import BatchError
from ir_runner.ops.conversion import convert
from ir_runner.ops.elementwise import select
from ir_runner.ops.indexing import gather
from ir_runner.ops.io_state import io
from ir_runner.types import TensorSpec, element_type, parse_partial_shape
from tests.helpers.irbuild import IRBuilder


def specs(*shapes: str) -> list[TensorSpec]:
    return [TensorSpec(element_type("f32"), parse_partial_shape(shape)) for shape in shapes]


SELECT = select.OPS[0].batch
GATHER = gather.OPS[-1].batch


@pytest.mark.parametrize("mode, axis, shapes, out, axes, expected", [
    ("numpy", 0, ("?,4", "?,4", "4"), "?,4", [0, 0, None], [0]),
    ("numpy", 0, ("1,4", "?,4", "1,4"), "?,4", [None, 0, None], [0]),  # shared operands broadcast on the rows
    ("numpy", 0, ("?,1", "3,?,4", "4"), "3,?,4", [0, 1, None], [1]),  # ranks differ: aligned from the right
    ("numpy", 0, ("?,1", "1,?", "1"), "?,?", [0, 1, None], "different output axes"),  # an outer product
    ("numpy", 0, ("6,4", "?,4", "4"), "6,4", [None, 0, None], "input 0 has no batch axis, but its dim 0"),
    ("none", 0, ("?,4", "?,4", "1,4"), "?,4", [0, 0, None], "input 2 has no batch axis"),  # no broadcasting
    ("none", 0, ("?,4", "?,4", "?,4"), "?,4", [0, 0, 0], [0]),
    ("pdpd", 1, ("4", "2,?,4", "4"), "2,?,4", [None, 1, None], "input 0 has no batch axis, but its dim 0"),
    ("pdpd", 1, ("?", "2,?,4", "?,4"), "2,?,4", [0, 1, 0], [1]),  # cond and else placed from axis 1
    ("pdpd", -1, ("4", "?,4", "4"), "?,4", [None, 0, None], [0]),
    ("pdpd", 0, ("?", "?,4", "?,4"), "?,4", [0, None, 0], "input 1 has no batch axis"),  # then sets the shape
    ("pdpd", 1, ("?", "?,?,4", "4"), "?,?,4", [0, 0, None], "different output axes"),  # cond lands on axis 1
    ("numpy", 0, ("?,4", "...", "4"), "...", [0, 0, None], "dynamic rank"),
])
def test_select(mode, axis, shapes, out, axes, expected):
    found = SELECT({"mode": mode, "axis": axis}, specs(*shapes), specs(out), axes)
    if isinstance(expected, str):
        assert isinstance(found, str) and expected in found
    else:
        assert found == expected


@pytest.mark.parametrize("axis, batch_dims, data, indices, out, axes, expected", [
    (1, 0, "?,5,3", "2", "?,2,3", [0, None, None], [0]),  # gathers along another axis
    (0, 0, "5,?", "2,7", "2,7,?", [1, None, None], [2]),  # the batch axis after the gathered one
    (0, 0, "5,3", "?,2", "?,2,3", [None, 0, None], [0]),  # rows of indices into a shared table
    (2, 1, "?,4,6", "?,3", "?,4,3", [0, 0, None], [0]),  # batch_dims covers it
    (0, 0, "?,3", "2", "2,3", [0, None, None], "gathers along the batch axis (axis 0)"),
    (2, 1, "?,4,6", "5,3", "?,4,3", [0, None, None], "batch_dims=1 covers the batch axis"),
    (1, 0, "?,5", "?", "?,?", [0, 0, None], "both carry the batch axis"),
    (None, 0, "?,5", "2", "?,?", [0, None, None], "only known at run time"),
    (1, 0, "?,5", "2", "?,2", [0, None, 0], "its axis comes from the batched data"),
])
def test_gather(axis, batch_dims, data, indices, out, axes, expected):
    found = GATHER({"axis": axis, "batch_dims": batch_dims}, specs(data, indices, ""), specs(out), axes)
    if isinstance(expected, str):
        assert isinstance(found, str) and expected in found
    else:
        assert found == expected


def test_io_and_convert_rules():
    assert convert.OPS[0].batch({}, specs("?,3"), specs("?,3"), [1]) == [1]
    parameter, const, result = io.OPS
    assert parameter.batch({}, [], specs("?"), []) == [None] and const.batch({}, [], specs("3"), []) == [None]
    assert result.batch({}, specs("?,3"), specs("?,3"), [0]) == [0]


def _model(tmp_path):
    b = IRBuilder()
    x = b.parameter("x", "f32", "?,4")
    table = b.parameter("table", "f32", "4")
    cond = b.const("cond", np.array([True, False, False, True]))
    sel = b.layer("Select", "opset1", [cond, x, table], name="sel", out_specs=[("f32", "?,4")])
    b.result(b.convert(sel, "f16"))
    b.result(b.convert(table, "i8", name="table_i8"))
    return ir_runner.load(b.write(tmp_path))


def test_trace_follows_the_axis_and_leaves_shared_tensors_alone(tmp_path, monkeypatch):
    model = _model(tmp_path)
    assert trace_batch(model.inference, [0, None]) == (0, None)
    assert trace_batch(model.inference, [None, None]) == (None, None)
    convert_op = next(info.op for info in model.inference.layers.values() if info.layer.name == "table_i8")
    monkeypatch.setattr(convert_op, "batch", None)  # a layer that only sees shared tensors needs no rule...
    with pytest.raises(BatchError, match=r"layer 'Convert_4' \(Convert-1.*declares no batch rule.*input 0 on dim 0"):
        trace_batch(model.inference, [0, None])  # ...one that sees the batch axis does


def test_a_rule_that_returns_nonsense_is_reported_as_a_bug(tmp_path, monkeypatch):
    model = _model(tmp_path)
    select_op = next(info.op for info in model.inference.layers.values() if info.layer.name == "sel")
    monkeypatch.setattr(select_op, "batch", lambda *args: [5])
    with pytest.raises(BatchError, match=r"layer 'sel'.*returned \[5\] for outputs of ranks \[2\].*a bug"):
        trace_batch(model.inference, [0, None])
