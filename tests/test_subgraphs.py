"""Layers with sub-graphs (``<body>``, ``<then_body>``/``<else_body>`` and their port maps), as OpenVINO writes
them: read into records, and inferred and run through the op API's Body (``ir_runner.subgraph``)."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset8  # noqa: E402

from ir_runner.graph import read_graph  # noqa: E402
from ir_runner.ops.registry import layer_ref  # noqa: E402
from ir_runner.subgraph import body_provider  # noqa: E402
from ir_runner.types import PartialShape, TensorSpec, element_type  # noqa: E402


def _if_model(tmp_path):
    cond = opset8.parameter([], ov.Type.boolean, name="cond")
    x = opset8.parameter([2, 3], ov.Type.f32, name="x")
    then_x = opset8.parameter([2, 3], ov.Type.f32)
    then_out = opset8.result(opset8.multiply(then_x, opset8.constant(np.float32(2))))
    else_x = opset8.parameter([2, 3], ov.Type.f32)
    else_out = opset8.result(opset8.gather(else_x, opset8.constant(np.array([1, 0, 1], np.int32)),
                                           opset8.constant(np.int64(0))))
    node = opset8.if_op(cond)
    node.set_then_body(ov.Model([then_out], [then_x], "then"))
    node.set_else_body(ov.Model([else_out], [else_x], "else"))
    node.set_input(x.output(0), then_x, else_x)
    out = node.set_output(then_out, else_out)
    path = tmp_path / "if.xml"
    ov.save_model(ov.Model([out], [cond, x], "if"), str(path), compress_to_fp16=False)
    return path


def test_bodies_and_port_maps_are_read(tmp_path):
    graph = read_graph(str(_if_model(tmp_path)))
    layer = next(layer for layer in graph.layers.values() if layer.bodies)
    assert sorted(layer.bodies) == ["else_body", "then_body"]
    assert [entry[0] for entry in layer.maps["then_port_map"]] == ["input", "output"]
    then_types = [inner.type for inner in layer.bodies["then_body"].layers]
    assert then_types[0] == "Parameter" and then_types[-1] == "Result" and "Multiply" in then_types
    assert "Gather" in [inner.type for inner in layer.bodies["else_body"].layers]


def test_a_body_is_inferred_and_run_per_input_signature(tmp_path):
    graph = read_graph(str(_if_model(tmp_path)))
    layer = next(layer for layer in graph.layers.values() if layer.bodies)
    bodies = body_provider(graph, False, layer_ref)
    else_body = bodies(layer, "else_body")
    assert bodies(layer, "else_body") is else_body  # built once per layer
    (parameter,), (result,) = else_body.parameters, else_body.results
    f32 = element_type("f32")
    specs = else_body.infer({parameter: TensorSpec(f32, PartialShape.of((4, 5)))})
    assert specs == {result: TensorSpec(f32, PartialShape.of((3, 5)))}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(else_body.run({parameter: x})[result], x[[1, 0, 1]])


def test_an_inner_problem_names_the_outer_layer(tmp_path):
    graph = read_graph(str(_if_model(tmp_path)))
    layer = next(layer for layer in graph.layers.values() if layer.bodies)
    else_body = body_provider(graph, False, layer_ref)(layer, "else_body")
    with pytest.raises(Exception) as caught:
        else_body.infer({"no such id": TensorSpec(element_type("f32"), PartialShape.of((1,)))})
    assert layer.name in str(caught.value) and "<else_body>" in str(caught.value)


def test_nested_loops_infer_each_body_once_per_signature(tmp_path, monkeypatch):
    """Each nesting level asks its body for specs and for constants; without a memo every level inferred all
    the levels below it again (a 16-deep nest did not load in 40 s, 12 deep took 1 s)."""
    import ir_runner
    from ir_runner import subgraph
    from tests.helpers.loops import write_nested_loops

    calls = []
    real = subgraph.infer_for_inputs
    monkeypatch.setattr(subgraph, "infer_for_inputs", lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    model = ir_runner.load(write_nested_loops(12, tmp_path / "nested.xml"))
    assert len(calls) <= 12
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (out,) = model.run({"x": x}).values()
    assert np.array_equal(out, x + 1)
    assert len(calls) <= 2 * 12  # run plans each body once more, for the concrete shapes
