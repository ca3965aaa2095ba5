"""``inspect`` (text, json, md, dot) and ``validate`` (table, findings, --strict, json, md)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cli.clikit import (
    SELECT_GATHER,
    as_json,
    const_gather_model,
    invoke,
    mismatch_model,
    odd_names_model,
    unsupported_model,
)


def _squeezed(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


def test_inspect_text_shows_io_layers_defaults_and_constants(tmp_path):
    model = const_gather_model(tmp_path, [2, 0], version="opset7", batch_dims=None)
    result = invoke("inspect", model)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "net     constgather (IR v11)" in text
    assert "data  f32   [2,4]" in text
    assert "batch_dims=0 (default)" in text and "resolved: axis=1 batch_dims=0" in text
    assert "indices  i64   [2]    0       16    0    2    [2, 0]" in text


def test_inspect_json_is_typed():
    data = as_json(invoke("inspect", SELECT_GATHER, "--format", "json"))
    assert data["command"] == "inspect" and data["ir_version"] == 11
    assert [i["name"] for i in data["inputs"]] == ["cond", "then", "else"]
    gather = next(layer for layer in data["layers"] if layer["name"] == "gather")
    assert gather["type"] == "Gather-7" and gather["supported"] is True
    assert gather["inputs"][1]["from"] == {"layer": "indices", "id": "4", "port": 0}
    assert gather["outputs"][0]["inferred"] == "f32[2,2]" and gather["outputs"][0]["ok"] is True
    const = next(c for c in data["constants"] if c["name"] == "indices")
    assert const["values"] == [2, 0] and const["min"] == 0 and const["size"] == 8
    assert as_json(invoke("--json", "inspect", SELECT_GATHER)) == data


def test_inspect_markdown_and_dot(tmp_path):
    md = invoke("inspect", SELECT_GATHER, "--format", "md").stdout
    assert md.startswith("# `select_gather`") and "## Layers" in md and "| id | name | type |" in md
    dot = invoke("inspect", odd_names_model(tmp_path), "--format", "dot").stdout
    assert dot.startswith('digraph "odd" {') and dot.rstrip().endswith("}")
    assert '"L0" -> "L4" [label="boolean[2,4]"];' in dot
    assert '[label="g\\nGather-8\\nf32[2,3]"' in dot


def test_inspect_shows_unsupported_and_mismatch_without_failing(tmp_path):
    unsupported = invoke("inspect", unsupported_model(tmp_path))
    assert unsupported.exit_code == 0 and "Frobnicate opset1 (unsupported)" in unsupported.stdout
    assert "problems" not in unsupported.stdout  # an unsupported layer is marked, not counted as a problem
    mismatch = invoke("inspect", mismatch_model(tmp_path))
    assert "f32[2,4] (declared FP32[2,5]: MISMATCH)" in mismatch.stdout
    dot = invoke("inspect", mismatch_model(tmp_path), "--format", "dot").stdout
    assert 'color="#cc0000"' in dot


def test_inspect_unreadable_model_exit_3(tmp_path):
    (tmp_path / "bad.xml").write_text("<net version='11'><layers>")
    result = invoke("inspect", tmp_path / "bad.xml")
    assert result.exit_code == 3 and result.stderr.startswith("error: ")


def test_validate_table_ok():
    result = invoke("validate", SELECT_GATHER)
    assert result.exit_code == 0
    assert "gather (id 6) Gather-7 out 0 FP32[2,2] f32[2,2] ok" in _squeezed(result.stdout)
    assert result.stdout.rstrip().endswith("valid, 0 error(s), 0 warning(s)")


def test_validate_mismatch_exit_3_text_json_md(tmp_path):
    model = mismatch_model(tmp_path)
    result = invoke("validate", model)
    assert result.exit_code == 3
    assert "sel (id 2) Select-1 out 0 FP32[2,5] f32[2,4] MISMATCH" in _squeezed(result.stdout)
    assert "error: layer 'sel' (Select-1, id 2" in result.stdout
    data = as_json(invoke("validate", model, "--format", "json"))
    assert data["valid"] is False and data["exit_code"] == 3
    assert data["errors"][0]["type"] == "DeclaredMismatchError" and data["errors"][0]["layer"]["id"] == "2"
    port = next(p for layer in data["layers"] if layer["name"] == "sel" for p in layer["ports"] if not p["ok"])
    assert port == {"direction": "out", "position": 0, "port_id": "3", "declared": "FP32[2,5]",
                    "inferred": "f32[2,4]", "ok": False}
    md = invoke("validate", model, "--format", "md")
    assert md.exit_code == 3 and "| MISMATCH |" in md.stdout and "**error**" in md.stdout


def test_validate_unsupported_exit_5(tmp_path):
    result = invoke("validate", unsupported_model(tmp_path))
    assert result.exit_code == 5 and "operation type 'Frobnicate' is not implemented" in result.stdout
    assert "not fully checked (1 layer(s) of 1 unsupported type(s)); no problem found" in result.stdout


@pytest.mark.parametrize(("version", "indices", "warned"), [
    ("opset8", [0, -4, 3], False),
    ("opset8", [0, 4], True),
    ("opset8", [-5, 1], True),
    ("opset7", [-1, 1], True),
    ("opset7", [0, 3], False),
])
def test_validate_warns_on_constant_indices_out_of_range(tmp_path, version, indices, warned):
    model = const_gather_model(tmp_path, indices, version=version)
    result = invoke("validate", model)
    assert result.exit_code == 0
    assert ("warning: layer 'g'" in result.stdout) is warned
    strict = invoke("validate", model, "--strict", "--json")
    assert strict.exit_code == (3 if warned else 0)
    assert len(as_json(strict)["errors"]) == int(warned)


def test_validate_warning_text_says_what_happens(tmp_path):
    text = invoke("validate", const_gather_model(tmp_path, [0, 9, 5])).stdout
    assert "constant index 9 at [1] is outside [-4, 3] (Gather-8, axis 1 has 4); 2 such index value(s)" in text
    assert "gives zeros there" in text


def test_validate_missing_weights_and_bin_bounds(tmp_path):
    model = const_gather_model(tmp_path, [0, 1])
    model.with_suffix(".bin").write_bytes(b"\0" * 4)
    result = invoke("validate", model)
    assert result.exit_code == 3 and "outside weights file" in result.stdout
    model.with_suffix(".bin").unlink()
    missing = invoke("validate", model)
    assert missing.exit_code == 3 and "does not exist" in missing.stdout
    assert invoke("validate", tmp_path / "nope.xml").exit_code == 3


def test_run_strict_rejects_out_of_range_parameter_indices(tmp_path):
    model = odd_names_model(tmp_path)
    result = invoke(model, "--fill", "zeros", "--value", "idx=[0,1,7]", "--strict")
    assert result.exit_code == 4 and "index 7" in result.stderr
    lenient = as_json(invoke(model, "--fill", "ones", "--value", "idx=[0,1,7]", "--json"))
    assert lenient["outputs"][0]["values"][2] == 0.0
    assert np.isclose(lenient["outputs"][0]["mean"], 4 / 6)
