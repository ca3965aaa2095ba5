"""``gen-inputs`` and ``--input random``: data that fits the layers each input feeds, with no needless second
inference; inputs of dynamic element type need a file; every input missing a ``--data-shape`` is named in one
error whose suggested flags then work."""

from __future__ import annotations

import json
import shlex
import sys

import ml_dtypes
import numpy as np
import pytest

import ir_runner.cli.generate
import ir_runner.cli.inputs
import ir_runner.infer
from tests.cli.clikit import (
    DYNAMIC,
    SELECT_GATHER,
    as_json,
    convert_cond_model,
    dynamic_type_model,
    invoke,
    load_npz,
    odd_names_model,
    typed_model,
)
from tests.conftest import MODELS
from tests.helpers.irbuild import IRBuilder


def test_random_gather_indices_stay_in_range_for_many_seeds(tmp_path):
    model = odd_names_model(tmp_path)
    seen = set()
    for seed in range(30):
        out = tmp_path / f"in{seed}.npz"
        result = invoke("gen-inputs", model, "-o", out, "--seed", seed)
        assert result.exit_code == 0, result.output
        idx = load_npz(out)["idx:0"]
        assert idx.dtype == np.int32 and idx.min() >= 0 and idx.max() <= 3
        seen.update(idx.tolist())
    assert seen == {0, 1, 2, 3}
    assert "random [0,3] (indices of Gather-8 'g': axis 1 has 4)" in result.stdout


def test_select_cond_is_boolean_and_seed_is_echoed(tmp_path):
    out = tmp_path / "in.npz"
    result = invoke("gen-inputs", SELECT_GATHER, "-o", out, "--seed", "11")
    assert "inputs (seed 11; change it with --seed)" in result.stdout
    cond = load_npz(out)["cond"]
    assert cond.dtype == np.bool_ and cond.any() and not cond.all()
    data = as_json(invoke("--json", SELECT_GATHER, "--fill", "random"))
    assert data["seed"] == 0 and data["inputs"][0]["source"].startswith("random true/false (cond of Select")


def test_same_seed_same_data_other_seed_other_data(tmp_path):
    a, b, c = (tmp_path / f"{n}.npz" for n in "abc")
    invoke("gen-inputs", SELECT_GATHER, "-o", a, "--seed", "3")
    invoke("gen-inputs", SELECT_GATHER, "-o", b, "--seed", "3")
    invoke("gen-inputs", SELECT_GATHER, "-o", c, "--seed", "4")
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()


def test_through_convert_to_cond_and_float_indices(tmp_path):
    model = convert_cond_model(tmp_path)
    out = tmp_path / "in.npz"
    result = invoke("gen-inputs", model, "-o", out)
    assert result.exit_code == 0, result.output
    data = load_npz(out)
    assert set(np.unique(data["flag"]).tolist()) <= {0.0, 1.0}
    assert set(np.unique(data["pos"]).tolist()) <= {0.0, 1.0, 2.0}
    assert "indices of Gather-1 'g1': axis 0 has 3" in result.stdout


def test_token_ids_through_reshape_and_unsqueeze_fit_the_embedding(tmp_path):
    """ids -> Reshape -> Unsqueeze -> Squeeze -> Convert -> Gather(table [50,4], axis 0), as a traced GPT-2
    embeds its tokens: the generated ids cover [0, 49]."""
    b = IRBuilder("embed")
    ids = b.parameter("ids", "i64", "2,6")
    shape = b.const("shape", np.array([3, 4], dtype=np.int64))
    reshaped = b.layer("Reshape", "opset1", [ids, shape], attrs={"special_zero": "false"}, out_specs=[("I64", [3, 4])])
    axis = b.const("axis0", np.array([0], dtype=np.int64))
    unsqueezed = b.layer("Unsqueeze", "opset1", [reshaped, axis], out_specs=[("I64", [1, 3, 4])])
    squeezed = b.layer("Squeeze", "opset1", [unsqueezed, axis], out_specs=[("I64", [3, 4])])
    converted = b.convert(squeezed, "i32")
    table = b.const("table", np.arange(200, dtype=np.float32).reshape(50, 4))
    gather_axis = b.const("gather_axis", np.array(0, dtype=np.int64))
    b.result(b.layer("Gather", "opset8", [table, converted, gather_axis], attrs={"batch_dims": "0"},
                     out_specs=[("FP32", [3, 4, 4])], name="embed"))
    model = b.write(tmp_path, "embed")
    out = tmp_path / "in.npz"
    result = invoke("gen-inputs", model, "-o", out)
    assert result.exit_code == 0, result.output
    generated = load_npz(out)["ids"]
    assert generated.min() >= 0 and generated.max() <= 49 and generated.max() >= 25
    assert "random [0,49] (indices of Gather-8 'embed': axis 0 has 50)" in result.stdout


def test_range_option_and_warning_beyond_valid_indices(tmp_path):
    model = odd_names_model(tmp_path)
    out = tmp_path / "in.npz"
    result = invoke("gen-inputs", model, "-o", out, "--range", "t=[-5,-4]", "--range", "idx:0=[0,9]")
    assert result.exit_code == 0, result.output
    data = load_npz(out)
    assert data["then=1"].min() >= -5 and data["then=1"].max() < -4
    assert "beyond the valid indices [0,3]" in result.stderr
    bad = invoke("gen-inputs", model, "-o", out, "--range", "idx=[0.5,2]")
    assert bad.exit_code == 4 and "whole numbers" in bad.stderr
    assert invoke("gen-inputs", model, "-o", out, "--range", "idx=[0,2]]").exit_code == 2
    assert invoke("gen-inputs", model, "-o", out, "--range", "idx=[0,9999999999]").exit_code == 4


@pytest.mark.parametrize(("element_type", "dtype"), [
    ("bf16", ml_dtypes.bfloat16), ("f16", np.float16), ("f8e4m3", ml_dtypes.float8_e4m3fn),
    ("u4", ml_dtypes.uint4), ("i4", ml_dtypes.int4), ("u1", np.uint8), ("u64", np.uint64), ("boolean", np.bool_),
])
def test_every_element_type_generates(tmp_path, element_type, dtype):
    model = typed_model(tmp_path, element_type)
    out = tmp_path / "in.npz"
    result = invoke("gen-inputs", model, "-o", out, "--json")
    assert result.exit_code == 0, result.output
    with np.load(out) as data:
        raw = data["x"]
    assert raw.shape == (2, 3) and raw.dtype.itemsize == np.dtype(dtype).itemsize
    if element_type == "u1":
        assert set(np.unique(raw).tolist()) <= {0, 1}
    ran = invoke(model, "-i", out, "--json")
    assert ran.exit_code == 0, ran.output


def test_gen_inputs_json_template_and_zeros(tmp_path):
    out = tmp_path / "in.json"
    assert invoke("gen-inputs", SELECT_GATHER, "-o", out, "--fill", "zeros").exit_code == 0
    data = json.loads(out.read_text())
    assert data["cond"] == [[False] * 3] * 2 and data["then"] == [[0.0] * 3] * 2
    assert invoke(SELECT_GATHER, "-i", out).exit_code == 0


def test_gen_inputs_dynamic_needs_data_shape(tmp_path):
    out = tmp_path / "in.npz"
    result = invoke("gen-inputs", DYNAMIC, "-o", out)
    assert result.exit_code == 4 and "add --data-shape 'cond=[1,4]'" in result.stderr
    ok = invoke("gen-inputs", DYNAMIC, "-o", out, "--data-shape", "cond=[2,4]", "--data-shape", "then=[2,4]",
                "--data-shape", "indices=[3,1]")
    assert ok.exit_code == 0
    assert {k: v.shape for k, v in load_npz(out).items()} == {"cond": (2, 4), "then": (2, 4), "else": (4,),
                                                               "indices": (3, 1)}
    assert load_npz(out)["indices"].max() <= 3
    unknown = invoke("gen-inputs", DYNAMIC, "-o", out, "--data-shape", "cnd=[2,4]")
    assert unknown.exit_code == 4 and "did you mean 'cond'" in unknown.stderr


def test_gen_inputs_requires_output():
    assert invoke("gen-inputs", SELECT_GATHER).exit_code == 2


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


@pytest.mark.parametrize("options", [["--fill", "random"], ["--input", "x=zeros", "--input", "y=random"]])
def test_generating_data_for_a_dynamic_element_type_is_bad_input(tmp_path, options):
    result = invoke(dynamic_type_model(tmp_path), *options, debug=False)
    assert result.exit_code == 4, result.output
    assert "input 'x' has element type dynamic: give its data in a file" in result.stderr


def test_random_next_to_a_file_for_a_dynamic_element_type(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.int32).reshape(2, 3))
    data = as_json(invoke(dynamic_type_model(tmp_path), "-i", f"x={tmp_path / 'x.npy'}", "-i", "y=random", "--json"))
    assert data["outputs"][0]["values"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


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


def _mask_model(folder, name: str, to_boolean: bool):
    """``name`` (i64 [2,6]) either converted to boolean (as HF exports do with an attention mask) or only to f32
    and scaled, which says nothing of its role."""
    b = IRBuilder("masked")
    mask = b.parameter(name, "i64", "2,6")
    if to_boolean:
        flat = b.layer("Reshape", "opset1", [mask, b.const("shape", np.array([12], np.int64))],
                       attrs={"special_zero": "false"}, out_specs=[("I64", [12])], name="flat")
        b.result(b.convert(b.convert(flat, "boolean", name="as_bool"), "f32", name="back"), "out")
    else:
        scaled = b.layer("Multiply", "opset1", [b.convert(mask, "f32"), b.const("scale", np.float32([-1e4]))],
                         out_specs=[("FP32", [2, 6])], name="scaled")
        b.result(scaled, "out")
    return b.write(folder, "masked")


@pytest.mark.parametrize(("name", "to_boolean", "says"), [
    ("m", True, "random [0,1] (data of Convert-1 'as_bool': converted to boolean, only zero or not counts)"),
    ("attention_mask", True, "random [0,1] (data of Convert-1 'as_bool'"),
    ("attention_mask", False, "random [0,1] (named like a mask)"),
    ("attentionMask", False, "random [0,1] (named like a mask)"),
    ("masked_positions", False, "random [0,9]"),
])
def test_a_mask_gets_zeros_and_ones_from_the_graph_or_its_name(tmp_path, name, to_boolean, says):
    model = _mask_model(tmp_path, name, to_boolean)
    out = tmp_path / "in.npz"
    result = invoke("gen-inputs", model, "-o", out, "--seed", "3")
    assert result.exit_code == 0, result.output
    assert says in result.stdout, result.stdout
    values = set(np.unique(load_npz(out)[name]).tolist())
    assert values == {0, 1} if "[0,1]" in says else len(values) > 2
