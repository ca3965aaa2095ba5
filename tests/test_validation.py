"""Whole-model inference and validation: ports a Result or Parameter declares, the constant-folding size limit (above
it a value is "not constant"), the Gather index warnings (exactly what strict loading refuses, and
``validate(strict=True)`` reports), and one validation pipeline and one error entry (``report.error_entry``) for the
API and the CLI."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner.errors import LayerRef
from ir_runner.infer import static_nbytes
from ir_runner.ops.api import FOLD_MAX_BYTES
from ir_runner.report import Finding, analyse, error_entry
from ir_runner.types import PartialShape, TensorSpec, element_type
from tests.cli.clikit import as_json, const_gather_model, invoke
from tests.helpers.irbuild import IRBuilder

# -- a Result declaring output ports ---------------------------------------------------------------


def _result_with_two_outputs() -> tuple[bytes, bytes]:
    b = IRBuilder("result_ports")
    x = b.parameter("x", "f32", "2")
    r = b.layer("Result", "opset1", [x], out_specs=[("FP32", [2]), ("FP32", [2])], name="r")
    b.result(r[1], "out")
    return b.build()


def test_result_declaring_a_consumed_second_output_is_a_format_error():
    with pytest.raises(ir_runner.ModelFormatError, match=r"'r' \(Result-1.*has 1 output\(s\), the layer declares 2"):
        ir_runner.load(*_result_with_two_outputs())


def test_result_declaring_outputs_is_reported_by_validate(tmp_path):
    report = ir_runner.validate(*_result_with_two_outputs())
    assert not report.ok
    assert [type(e) for e in report.errors] == [ir_runner.ModelFormatError]
    path = tmp_path / "result_ports.xml"
    xml, weights = _result_with_two_outputs()
    path.write_bytes(xml)
    path.with_suffix(".bin").write_bytes(weights)
    result = invoke("validate", path)
    assert result.exit_code == 3 and "the layer declares 2" in result.stdout


def test_result_declaring_no_output_is_still_fine():
    b = IRBuilder()
    b.result(b.parameter("x", "f32", "2"), "out")
    x = np.arange(2, dtype=np.float32)
    assert ir_runner.load(*b.build()).run({"x": x})["x"].tobytes() == x.tobytes()


# -- a Parameter whose inference failed and that declares no output port ---------------------------


def _portless_bogus_parameter(tmp_path):
    b = IRBuilder("bogus")
    b.layer("Parameter", "opset1", [], attrs={"shape": "2", "element_type": "bogus"}, out_specs=[], name="p")
    b.result(b.parameter("x", "f32", "2"), "out")
    return b.write(tmp_path, "bogus")


def test_inspect_shows_a_portless_failed_parameter_as_dynamic(tmp_path):
    model = _portless_bogus_parameter(tmp_path)
    data = as_json(invoke("inspect", model, "--json"))
    entry = next(i for i in data["inputs"] if i["layer"] == "p")
    assert (entry["element_type"], entry["shape"]) == ("dynamic", "[...]")
    assert any("'bogus'" in p["message"] for p in data["problems"])
    with pytest.raises(ir_runner.UnsupportedError, match="'bogus'"):
        ir_runner.load(model)


# -- constant folding above the limit means "not constant" -----------------------------------------


def _big_converted_indices(values: np.ndarray, version: str = "opset8") -> tuple[bytes, bytes]:
    """Gather of a [2,3] Parameter along axis 1 with indices Convert(Const i32 -> i64) above FOLD_MAX_BYTES."""
    b = IRBuilder("big_indices")
    data = b.parameter("data", "f32", "2,3")
    indices = b.convert(b.const("indices", values.astype(np.int32)), "i64")
    axis = b.const("axis", np.array(1, np.int64))
    g = b.layer("Gather", version, [data, indices, axis], attrs={"batch_dims": 0},
                out_specs=[("f32", [2, values.size])], name="g")
    b.result(g, "out")
    return b.build()


BIG = FOLD_MAX_BYTES // 8 + 1  # i64 indices just above the folding limit


def test_strict_gather_with_large_folded_indices_loads_and_runs():
    values = np.arange(BIG) % 3
    model = ir_runner.load(*_big_converted_indices(values), strict=True)
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert model.run({"data": data})["out"].tobytes() == data[:, values].tobytes()


def test_strict_gather_checks_large_folded_indices_when_run():
    values = np.arange(BIG) % 3
    values[-1] = 7
    model = ir_runner.load(*_big_converted_indices(values), strict=True)
    with pytest.raises(ir_runner.IndexOutOfRangeError, match=rf"index 7 at position \[{BIG - 1}\]"):
        model.run({"data": np.zeros((2, 3), np.float32)})


def test_large_folded_indices_are_not_constant():
    report = ir_runner.validate(*_big_converted_indices(np.full(BIG, 9)))
    assert report.ok and not report.warnings


def _axis_through(n: int) -> tuple[bytes, bytes]:
    """A Gather whose axis is computed from Consts through an [n, n] u8 Select."""
    b = IRBuilder("axis_through")
    data, indices = b.parameter("data", "f32", "2,3"), b.parameter("indices", "i32", "2")
    sel = b.layer("Select", "opset1", [b.const("c", np.ones((1, n), bool)), b.const("t", np.zeros((n, 1), np.uint8)),
                                       b.const("e", np.zeros(1, np.uint8))], out_specs=[("u8", [n, n])], name="sel")
    zero = b.const("zero", np.array(0, np.int64))
    row = b.layer("Gather", "opset8", [sel, zero, zero], attrs={"batch_dims": 0}, out_specs=[("u8", [n])])
    axis = b.layer("Gather", "opset8", [row, zero, zero], attrs={"batch_dims": 0}, out_specs=[("u8", [])])
    g = b.layer("Gather", "opset8", [data, indices, axis], attrs={"batch_dims": 0}, out_specs=[("f32", "2,3")],
                name="g")
    b.result(g, "out")
    return b.build()


def test_axis_folded_through_a_small_layer_is_constant():
    model = ir_runner.load(*_axis_through(100))
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert model.run({"data": data, "indices": np.array([1, 0], np.int32)})["out"].tobytes() == data[[1, 0]].tobytes()


def test_axis_folded_through_a_layer_above_the_limit_is_not_constant():
    n = 1100  # 1.2 MB of u8
    assert n * n > FOLD_MAX_BYTES
    with pytest.raises(ir_runner.InferenceError,
                       match=rf"(?s)'g' \(Gather-8.*axis is not constant.*limit of {FOLD_MAX_BYTES} bytes") as caught:
        ir_runner.load(*_axis_through(n))
    assert not isinstance(caught.value, ir_runner.ResourceLimitError)
    analysis = analyse(_axis_through(n)[0], _axis_through(n)[1])
    sel = next(info for info in analysis.layers if info.layer.name == "sel")
    row = next(i for i in analysis.layers if i.layer.type == "Gather" and analysis.graph.sources[i.layer.id][0][0]
               == sel.layer.id)
    assert analysis.inference.constant_input(row.layer.id, 0) is None
    assert analysis.inference.constant_input(row.layer.id, 1) is not None


def test_static_nbytes():
    assert static_nbytes(TensorSpec(element_type("f32"), PartialShape.of((2, 3)))) == 24
    assert static_nbytes(TensorSpec(element_type("u8"), PartialShape.of((1100, 1100)))) == 1_210_000


# -- the index warnings are exactly what strict loading refuses ------------------------------------


def _const_indices(values: np.ndarray, version: str) -> tuple[bytes, bytes]:
    b = IRBuilder("const_indices")
    data = b.parameter("data", "f32", "2,4")
    g = b.layer("Gather", version, [data, b.const("indices", values), b.const("axis", np.array(1, np.int64))],
                attrs=None if version == "opset1" else {"batch_dims": 0},
                out_specs=[("f32", [2, values.size])], name="g")
    b.result(g, "out")
    return b.build()


INDEX_CASES = [
    ("opset1", np.array([0, np.nan], np.float32), True),
    ("opset1", np.array([-0.5, 1], np.float32), True),
    ("opset1", np.array([3.9, 0], np.float32), False),
    ("opset1", np.array([4.0], np.float32), True),
    ("opset1", np.array([np.inf], np.float32), True),
    ("opset7", np.array([-1, 2], np.int32), True),
    ("opset7", np.array([0, 3], np.int64), False),
    ("opset8", np.array([2**64 - 1], np.uint64), True),
    ("opset8", np.array([3, 0], np.uint64), False),
    ("opset8", np.array([-4, 3], np.int8), False),
    ("opset8", np.array([-5], np.int16), True),
]


@pytest.mark.parametrize(("version", "values", "outside"), INDEX_CASES, ids=lambda v: str(v))
def test_index_warning_iff_strict_load_refuses(version, values, outside):
    model = _const_indices(values, version)
    report = ir_runner.validate(*model)
    assert report.ok
    assert len(report.warnings) == int(outside)
    if outside:
        with pytest.raises(ir_runner.IndexOutOfRangeError):
            ir_runner.load(*model, strict=True)
    else:
        ir_runner.load(*model, strict=True)


@pytest.mark.parametrize(("version", "values", "text"), [
    ("opset1", np.array([0, -0.5], np.float32), "constant index -0.5 at [1] is outside [0, 3]"
                                                 " (Gather-1, axis 1 has 4); 1 such index value(s), 0 of which give"
                                                 " zeros. OpenVINO's reference reads it as index 0"),
    ("opset1", np.array([np.nan], np.float32), "constant index nan at [0] is outside [0, 3] (Gather-1, axis 1 has 4);"
                                               " 1 such index value(s), 1 of which give zeros. OpenVINO's reference"
                                               " gives zeros there"),
    ("opset8", np.array([1, 2**64 - 1], np.uint64), f"constant index {2**64 - 1} at [1] is outside [-4, 3] (Gather-8,"
                                                     " axis 1 has 4); 1 such index value(s), 0 of which give zeros."
                                                     " OpenVINO's reference wraps it (the CPU plugin gives 0)"),
])
def test_index_warning_text(version, values, text):
    warnings = ir_runner.validate(*_const_indices(values, version)).warnings
    assert [w.message for w in warnings] == [text]


def test_strict_validate_reports_the_index_as_an_error_not_a_warning():
    report = ir_runner.validate(*_const_indices(np.array([9], np.int64), "opset8"), strict=True)
    assert [type(e) for e in report.errors] == [ir_runner.IndexOutOfRangeError] and not report.warnings


# -- one validation pipeline and one error entry for the API and the CLI --------------------------


def test_validate_matches_the_cli(tmp_path):
    model = const_gather_model(tmp_path, [0, 9, 5])
    report = ir_runner.validate(model)
    assert report.ok and len(report.warnings) == 1
    assert "1 warning(s)" in repr(report)
    result = invoke("validate", model)
    assert result.exit_code == 0
    assert str(report) == result.stdout.rstrip("\n")


def test_validate_labels_content_sources():
    xml, weights = _const_indices(np.array([0], np.int64), "opset8")
    assert ir_runner.validate(xml, weights).source == "<bytes>"
    assert ir_runner.validate(xml.decode(), weights).source == "<xml>"
    assert str(ir_runner.validate("  <net/>")).endswith("<xml>: INVALID, 1 error(s), 0 warning(s)")


def test_validate_gives_the_constant_hint():
    xml, weights = _const_indices(np.array([0], np.int64), "opset8")
    xml = xml.replace(b'name="axis" type="Const"', b'name="axis" type="Constant"')
    report = ir_runner.validate(xml, weights)
    assert not report.ok
    assert any(e.hint and "'Const', not 'Constant'" in e.hint for e in report.errors)


def test_error_entry_for_the_cli_and_for_validate():
    error = ir_runner.InputError("bad", layer=LayerRef("g", "Gather-8", "3", 7), port="input 1", hint="fix it")
    assert error_entry(error) == {"type": "InputError", "message": str(error),
                                  "layer": {"name": "g", "type": "Gather-8", "id": "3", "line": 7},
                                  "port": "input 1", "hint": "fix it"}
    cli = error_entry(error, "InputError", detail=True)
    assert list(cli) == ["type", "message", "detail", "layer", "port", "hint"] and cli["detail"] == "bad"
    assert error_entry(RuntimeError("internal error: x"), "InternalError", detail=True) == {
        "type": "InternalError", "message": "internal error: x"}
    finding = Finding(LayerRef("g", "Gather-8", "3"), "input 1 (indices)", "outside")
    assert error_entry(finding)["type"] == "warning" and "detail" not in error_entry(finding, detail=True)


def strict_gather_model() -> tuple[bytes, bytes]:
    b = IRBuilder("strict")
    data = b.parameter("data", "f32", "3")
    indices = b.const("indices", np.array([0, 5], np.int64))
    axis = b.const("axis", np.array(0, np.int64))
    g = b.layer("Gather", "opset8", [data, indices, axis], attrs={"batch_dims": 0}, out_specs=[("FP32", [2])])
    b.result(g, "out")
    return b.build()


def test_validate_strict_reports_constant_indices_like_load_strict():
    xml, weights = strict_gather_model()
    with pytest.raises(ir_runner.IndexOutOfRangeError, match="index 5"):
        ir_runner.load(xml, weights, strict=True)
    report = ir_runner.validate(xml, weights, strict=True)
    assert not report.ok
    assert any("index 5" in str(error) for error in report.errors)
    assert ir_runner.validate(xml, weights).ok
