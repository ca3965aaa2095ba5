"""Review round 3 of the CLI: no needless re-inference for generated inputs, layer statistics computed only
for --trace, --ref read before the run, one builder of JSON error entries."""

from __future__ import annotations

import json
import shlex
import sys

import numpy as np
import pytest

import ir_runner.cli.generate
import ir_runner.cli.inputs
import ir_runner.infer
from ir_runner.cli import run as run_module
from ir_runner.model import Model
from tests.cli.clikit import DYNAMIC, SELECT_GATHER, as_json, invoke
from tests.conftest import MODELS
from tests.helpers.irbuild import IRBuilder


@pytest.fixture
def infer_calls(monkeypatch) -> list[int]:
    """Counts calls of ``infer_graph``, wherever an ir_runner module imported it (the CLI modules that
    import lazily are imported above, so that they are patched too)."""
    original = ir_runner.infer.infer_graph
    calls: list[int] = []

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith("ir_runner") and getattr(module, "infer_graph", None) is original:
            monkeypatch.setattr(module, "infer_graph", counting)
    return calls


def test_random_inputs_of_a_static_model_need_no_second_inference(infer_calls):
    result = invoke(MODELS / "gather7_example1.xml", "--fill", "random")
    assert result.exit_code == 0, result.output
    assert "random [0,4] (indices of Gather-7 'gather': axis 0 has 5)" in result.stdout  # ranges still from the layers
    assert len(infer_calls) == 1  # the load's


def test_random_inputs_of_a_dynamic_model_are_inferred_with_their_shapes(infer_calls):
    data = as_json(invoke(DYNAMIC, "--fill", "random", "--data-shape", "cond=[5,4]", "--data-shape", "then=[1,4]",
                          "--data-shape", "indices=[1,3]", "--json"))
    assert data["outputs"][0]["shape"] == [5, 4]
    assert len(infer_calls) == 2  # load, then the random inputs' ranges (the run's plan reuses that inference)


def test_shape_that_changes_nothing_keeps_the_model(infer_calls):
    result = invoke(SELECT_GATHER, "--shape", "cond=[2,3]", "--fill", "zeros")
    assert result.exit_code == 0, result.output
    assert len(infer_calls) == 1


def _dynamic_type_model(folder) -> str:
    b = IRBuilder("dyn")
    x = b.parameter("x", "dynamic", "2,3", names="x")
    y = b.parameter("y", "f32", "2,3", names="y")
    b.result(b.convert(x, "f32"), "r1")
    b.result(y, "r2")
    return str(b.write(folder, "dyn"))


@pytest.mark.parametrize("options", [["--fill", "random"], ["--input", "x=zeros", "--input", "y=random"]])
def test_generating_data_for_a_dynamic_element_type_is_bad_input(tmp_path, options):
    result = invoke(_dynamic_type_model(tmp_path), *options, debug=False)
    assert result.exit_code == 4, result.output
    assert "input 'x' has element type dynamic: give its data in a file" in result.stderr


def test_random_next_to_a_file_for_a_dynamic_element_type(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.int32).reshape(2, 3))
    data = as_json(invoke(_dynamic_type_model(tmp_path), "-i", f"x={tmp_path / 'x.npy'}", "-i", "y=random", "--json"))
    assert data["outputs"][0]["values"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.fixture
def stats_calls(monkeypatch) -> list[tuple]:
    original = run_module.array_stats
    calls: list[tuple] = []

    def counting(array):
        calls.append(array.shape)
        return original(array)

    monkeypatch.setattr(run_module, "array_stats", counting)
    return calls


def test_dump_intermediate_alone_computes_no_layer_statistics(tmp_path, stats_calls):
    folder = tmp_path / "layers"
    result = invoke(SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"), "--dump-intermediate", folder)
    assert result.exit_code == 0, result.output
    assert stats_calls == [(2, 2)]  # the output row's only
    index = json.loads((folder / "index.json").read_text())["layers"]
    assert index == [
        {"file": "0000_select.npy", "layer": "select", "id": "3", "type": "Select-1", "element_type": "f32",
         "shape": [2, 3]},
        {"file": "0001_gather.npy", "layer": "gather", "id": "6", "type": "Gather-7", "element_type": "f32",
         "shape": [2, 2]},
    ]


def test_trace_and_index_describe_the_same_layers(tmp_path, stats_calls):
    folder = tmp_path / "layers"
    data = as_json(invoke(SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"), "--trace", "--json",
                          "--dump-intermediate", folder))
    assert stats_calls == [(2, 3), (2, 2), (2, 2)]  # each layer once, then the output
    index = json.loads((folder / "index.json").read_text())["layers"]
    keys = ["layer", "id", "type", "element_type", "shape"]
    assert [{k: row[k] for k in keys} for row in data["trace"]] == [{k: e[k] for k in keys} for e in index]
    assert list(data["trace"][0]) == ["step", *keys, "min", "max", "mean", "nan", "inf", "ms"]
    assert [row["step"] for row in data["trace"]] == [0, 1]


@pytest.fixture
def no_run(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the model ran")

    monkeypatch.setattr(Model, "run", refuse)
    monkeypatch.setattr(Model, "trace", refuse)


@pytest.mark.parametrize("trace", [[], ["--trace"]])
def test_a_missing_reference_fails_before_the_run(tmp_path, no_run, trace):
    result = invoke(SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"), "--ref", tmp_path / "no.npz",
                    *trace)
    assert result.exit_code == 4
    assert f"error: the file '{tmp_path / 'no.npz'}' does not exist" in result.stderr


def test_an_unreadable_reference_fails_before_the_run(tmp_path, no_run):
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    result = invoke(SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"), "--ref", tmp_path / "bad.npy")
    assert result.exit_code == 4 and "is not a .npy or .npz file" in result.stderr


def test_a_single_array_reference_for_two_outputs_fails_before_the_run(tmp_path, no_run):
    np.save(tmp_path / "one.npy", np.zeros((2, 3), np.float32))
    result = invoke(_dynamic_type_model(tmp_path), "-i", "y=zeros", "--value", "x=[[1,2,3],[4,5,6]]",
                    "--ref", tmp_path / "one.npy")
    assert result.exit_code == 4
    assert f"'{tmp_path / 'one.npy'}' holds one array, the model has 2 outputs" in result.stderr


def test_reference_still_compared_after_the_run(tmp_path):
    np.save(tmp_path / "one.npy", np.array([[3, 1], [60, 40]], np.float32))
    data = as_json(invoke(SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"), "--ref",
                          tmp_path / "one.npy", "--json"))
    assert data["comparison"]["passed"] is True and data["comparison"]["reference"] == str(tmp_path / "one.npy")


def test_json_error_object_names_the_layer_and_gives_the_detail():
    result = invoke(DYNAMIC, "--fill", "random", "--shape", "cond=[3,5]", "--shape", "then=[3,5]", "--json")
    assert result.exit_code == 4
    error = as_json(result)["error"]
    assert list(error) == ["type", "message", "detail", "layer"]
    assert error["type"] == "InputError"
    assert error["detail"].startswith("with --shape 'cond=[3,5]' --shape 'then=[3,5]': ")
    assert error["layer"] == {"name": "select", "type": "Select-1", "id": "4", "line": 39}
    assert error["message"] == f"layer 'select' (Select-1, id 4, line 39): {error['detail']}"


def test_every_input_missing_a_data_shape_is_named_in_one_error():
    result = invoke(DYNAMIC, "--fill", "random")
    assert result.exit_code == 4
    assert "inputs 'cond' [1..10,4], 'then' [?,4], 'indices' [?,..3] have dynamic shapes" in result.stderr
    hint = "add --data-shape 'cond=[1,4]' --data-shape 'then=[1,4]' --data-shape 'indices=[1,1]'"
    assert hint in result.stderr
    suggested = shlex.split(hint.removeprefix("add "))
    assert invoke(DYNAMIC, "--fill", "random", *suggested).exit_code == 0
    one_left = invoke(DYNAMIC, "--fill", "random", "--data-shape", "cond=[2,4]", "--data-shape", "then=[2,4]")
    assert one_left.exit_code == 4 and "input 'indices' has the dynamic shape [?,..3]" in one_left.stderr
    wrong_first = invoke(DYNAMIC, "--fill", "random", "--data-shape", "cond=[11,4]")
    assert wrong_first.exit_code == 4 and "--data-shape 'cond=[11,4]' does not fit" in wrong_first.stderr


def test_data_shapes_numpy_cannot_hold_are_usage_errors_and_huge_sizes_are_short(tmp_path):
    b = IRBuilder()
    b.result(b.parameter("x", "f32", "..."))
    model = b.write(tmp_path)
    too_many = invoke(model, "--fill", "zeros", "--data-shape", "x=[" + ",".join(["1"] * 70) + "]")
    assert too_many.exit_code == 2 and "rank 70 is above numpy's limit of 64 dims" in too_many.stderr
    huge = invoke(model, "--fill", "zeros", "--data-shape", "x=[" + ",".join(["90000"] * 10) + "]")
    assert huge.exit_code == 6 and "would take more than 1 EiB, above the memory limit of 16.0 GiB" in huge.stderr
