"""Review round 3: ``Model.inference_for`` (the one re-inference for new input specs, used by ``plan_for`` and
the CLI's --shape and generated inputs), ``TensorInfo.spec_for``, and ``report.error_entry`` as the
CLI's error object."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
import ir_runner.model
from ir_runner import IndexOutOfRangeError, InputError
from ir_runner.errors import LayerRef
from ir_runner.report import Finding, error_entry
from ir_runner.types import ELEMENT_TYPES, PartialShape, TensorSpec, parse_partial_shape
from tests.irbuild import IRBuilder

F32 = ELEMENT_TYPES["f32"]


def gather_model(data_shape: str, *, strict: bool = False, data_type: str = "f32") -> ir_runner.Model:
    """data -> Gather(axis 0, constant indices [3]) -> ``out``."""
    b = IRBuilder("g")
    data = b.parameter("data", data_type, data_shape)
    indices = b.const("indices", np.array([3], np.int64))
    axis = b.const("axis", np.array(0, np.int64))
    out_dims = [1] + [int(d) if d.isdigit() else -1 for d in data_shape.split(",")[1:]]
    gather = b.layer("Gather", "opset8", [data, indices, axis], attrs={"batch_dims": 0},
                     out_specs=[("f32" if data_type == "f32" else None, out_dims)], name="gather", out_names=["out"])
    b.result(gather, "result")
    return ir_runner.load(*b.build(), strict=strict)


def count_inferences(monkeypatch) -> list[dict]:
    """From now on, the keyword arguments of each ``infer_graph`` call of model.py."""
    original = ir_runner.model.infer_graph
    calls: list[dict] = []

    def counting(graph, **kwargs):
        calls.append(kwargs)
        return original(graph, **kwargs)

    monkeypatch.setattr(ir_runner.model, "infer_graph", counting)
    return calls


def test_the_inputs_own_specs_give_the_models_inference(monkeypatch):
    model = gather_model("?,2")
    infer_calls = count_inferences(monkeypatch)
    same = [TensorSpec(F32, parse_partial_shape("?,2"))]
    assert model.inference_for(same) is model.inference
    assert infer_calls == []


def test_new_specs_are_inferred_without_declared_checks(monkeypatch):
    model = gather_model("?,2")
    infer_calls = count_inferences(monkeypatch)
    inference = model.inference_for([TensorSpec(F32, PartialShape.of((5, 2)))])
    assert inference is not model.inference
    assert str(inference.output_spec(model.graph.results[0].id, 0)) == "f32[1,2]"
    assert len(infer_calls) == 1 and infer_calls[0]["check_declared"] is False


def test_the_same_new_specs_twice_in_a_row_are_inferred_once(monkeypatch):
    model = gather_model("?,2")
    infer_calls = count_inferences(monkeypatch)
    five, six = [TensorSpec(F32, PartialShape.of((5, 2)))], [TensorSpec(F32, PartialShape.of((6, 2)))]
    first = model.inference_for(five)
    assert model.inference_for(list(five)) is first and len(infer_calls) == 1
    assert model.inference_for(six) is not first and len(infer_calls) == 2
    assert model.inference_for(five) is not first and len(infer_calls) == 3  # only the last one is kept


def test_specs_that_do_not_fit_name_the_context_and_layer():
    model = gather_model("?,2")
    with pytest.raises(InputError) as caught:
        model.inference_for([TensorSpec(F32, parse_partial_shape("[]"))], context="with --shape data=[]")
    error = caught.value
    assert type(error) is InputError and error.detail.startswith("with --shape data=[]: ")
    assert error.layer.name == "gather"


def test_strict_index_errors_keep_their_class_and_get_the_context():
    model = gather_model("?,2", strict=True)
    with pytest.raises(IndexOutOfRangeError) as caught:
        model.run({"data": np.zeros((2, 2), np.float32)})
    error = caught.value
    assert error.detail.startswith("the inputs' shapes do not fit the model: index 3 at position [0]")
    assert error.port == "input 1 (indices)" and error.layer.name == "gather"
    assert model.run({"data": np.arange(8, dtype=np.float32).reshape(4, 2)})["out"].tolist() == [[6.0, 7.0]]


def test_plan_for_infers_each_signature_once(monkeypatch):
    model = gather_model("?,2")
    infer_calls = count_inferences(monkeypatch)
    for _ in range(3):
        assert model.run({"data": np.ones((4, 2), np.float32)})["out"].shape == (1, 2)
    assert len(infer_calls) == 1


def test_spec_for_takes_the_arrays_type_only_for_a_dynamic_input():
    typed = gather_model("?,2").inputs[0]
    dynamic = gather_model("?,2", data_type="dynamic").inputs[0]
    array = np.zeros((4, 2), np.int32)
    assert str(typed.spec_for(array)) == "f32[4,2]"
    assert str(dynamic.spec_for(array)) == "i32[4,2]"


def test_error_entry_for_the_cli_and_for_validate():
    error = InputError("bad", layer=LayerRef("g", "Gather-8", "3", 7), port="input 1", hint="fix it")
    assert error_entry(error) == {"type": "InputError", "message": str(error),
                                  "layer": {"name": "g", "type": "Gather-8", "id": "3", "line": 7},
                                  "port": "input 1", "hint": "fix it"}
    cli = error_entry(error, "InputError", detail=True)
    assert list(cli) == ["type", "message", "detail", "layer", "port", "hint"] and cli["detail"] == "bad"
    assert error_entry(RuntimeError("internal error: x"), "InternalError", detail=True) == {
        "type": "InternalError", "message": "internal error: x"}
    finding = Finding(LayerRef("g", "Gather-8", "3"), "input 1 (indices)", "outside")
    assert error_entry(finding)["type"] == "warning" and "detail" not in error_entry(finding, detail=True)
