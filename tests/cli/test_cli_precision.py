"""``ir-run precision``: text and JSON reports of the emulation and of --compression, exit codes, bad options."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tests.cli.clikit import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "precision"


def _model(name: str) -> tuple[str, str]:
    return str(EXAMPLES / f"{name}.xml"), str(EXAMPLES / f"{name}.npz")


def _strict_json(text: str) -> dict:
    def refuse(constant: str):
        raise AssertionError(f"invalid JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def test_an_overflow_exits_1_naming_the_layer_and_both_fixes():
    xml, feeds = _model("overflow")
    result = invoke("precision", xml, "-i", feeds)
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "first divergence: layer 'amplify' (Multiply-1, id 4), output port 2: overflow, 91 of 256" in out
    assert "fix: ACTIVATIONS_SCALE_FACTOR 32 (every output agrees when the emulation holds the whole network" in out
    assert "fix: keep 2 layer(s) in f32: 'amplify', 'reduce' (fixes every output in the emulation)" in out
    assert "ET.SubElement(rt_info, 'attribute', name='precise', version='0')" in out


@pytest.mark.parametrize("device", [[], ["--device", "GPU"]], ids=["f16's default GPU", "GPU"])
def test_emulated_tail_with_a_device_other_than_the_cpu_is_a_usage_error(device):
    xml, feeds = _model("underflow")
    result = invoke("precision", xml, "-i", feeds, "--to", "f16", "--emulated-tail", *device)
    assert result.exit_code == 2 and "--emulated-tail is for --device CPU" in result.output
    on_cpu = invoke("precision", xml, "-i", feeds, "--to", "f16", "--emulated-tail", "--device", "cpu")
    assert on_cpu.exit_code in (0, 1), on_cpu.output


def test_a_healthy_run_exits_0_and_no_fix_reports_only():
    xml, feeds = _model("underflow")
    result = invoke("precision", xml, "-i", feeds, "--to", "bf16", "--emulated-tail")
    assert result.exit_code == 0, result.output
    assert "ok: no layer output diverges in bf16" in result.stdout
    assert "layers the CPU plugin keeps in f32 (runs f32, never flagged as overflowing): emulated (the tail before" \
           " the outputs), as asked (learn=False, --emulated-tail)" in result.stdout
    result = invoke("precision", xml, "-i", feeds, "--no-fix", "--all")
    assert result.exit_code == 1 and "fix:" not in result.stdout
    assert "  ok         mean (ReduceMean-1, id 2)" in result.stdout  # --all lists the layers without a problem too


def test_json_schema_of_the_emulation():
    xml, feeds = _model("overflow")
    result = invoke("--json", "precision", xml, "-i", feeds)
    data = _strict_json(result.stdout)
    assert data["command"] == "precision" and data["exit_code"] == 1 and data["ok"] is False
    report = data["precision"]
    assert set(report) == {"to", "device", "tolerance", "headroom", "agree", "outputs_diverging", "first_divergence",
                           "counts", "layers", "fix", "f32_from"}
    assert (report["to"], report["device"], report["agree"], report["outputs_diverging"]) == ("f16", "GPU", False,
                                                                                              ["out"])
    assert report["tolerance"] == {"atol": 0.0, "rtol": 2 ** -7} and report["headroom"] == 8.0
    assert report["counts"] == {"overflow": 1, "underflow": 0, "diverges": 2, "ok": 1}
    assert report["first_divergence"] == {"layer": "amplify", "id": "4", "type": "Multiply-1", "line": 50,
                                          "port": "2", "position": 0}
    row = next(r for r in report["layers"] if r["layer"] == "amplify")
    assert set(row) == {"layer", "id", "type", "line", "port", "position", "shape", "runs", "status", "max_abs",
                        "min_abs", "overflow", "underflow", "subnormal", "headroom_bits", "mismatches", "size",
                        "max_error", "worst_index", "reference", "emulated"}
    assert row["status"] == "overflow" and row["max_error"] == "Infinity"
    assert row["emulated"] in ("Infinity", "-Infinity")
    assert row["max_abs"] > 65504 and math.isclose(row["headroom_bits"], math.log2(65504 / row["max_abs"]))
    fix = report["fix"]
    assert set(fix) == {"scale", "scale_fixes", "scale_snippet", "keep", "keep_fixes", "keep_snippet"}
    assert fix["scale"] == 32 and fix["scale_fixes"] and "'ACTIVATIONS_SCALE_FACTOR': 32.0" in fix["scale_snippet"]
    assert [ref["layer"] for ref in fix["keep"]] == ["amplify", "reduce"] and fix["keep_fixes"]
    compile(fix["keep_snippet"], "snippet", "exec")  # valid Python


def test_compression_against_the_original_names_the_planted_layer():
    xml, feeds = _model("mlp_int8")
    result = invoke("--json", "precision", xml, "-i", feeds, "--compression", "--reference",
                    EXAMPLES / "mlp_f32.xml", "--top", "1")
    assert result.exit_code == 0, result.output
    report = _strict_json(result.stdout)["compression"]
    assert report["against"] == "reference" and report["worst"] == ["fc2"]
    assert [row["layer"] for row in report["layers"]][0] == "fc2"
    assert set(report["layers"][0]) == {"layer", "id", "type", "line", "position", "codes", "shape", "against",
                                        "relative", "max_error", "output_max", "note"}
    text = invoke("precision", xml, "-i", feeds, "--compression").stdout
    assert "by one quantisation step of random rounding" in text and "nncf.IgnoredScope(names=[" in text


def test_bad_options_exit_with_their_codes():
    xml, feeds = _model("overflow")
    assert invoke("precision", xml, "-i", feeds, "--to", "f8").exit_code == 2
    result = invoke("precision", xml, "-i", feeds, "--keep", "nope")
    assert result.exit_code == 4 and "keep: the model computes no layer named 'nope'" in result.stderr
    assert invoke("precision", xml).exit_code == 4  # no input and --fill error
    result = invoke("precision", xml, "-i", feeds, "--reference", xml)
    assert result.exit_code == 2 and "--reference is for --compression: add --compression" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--top", "2"], "--top is for --compression: add --compression"),
    (["--compression", "--to", "bf16", "--keep", "x", "--no-fix"],
     "--to, --keep, --no-fix are for the headroom report, not --compression"),
    (["--compression", "--device", "cpu", "--headroom", "4", "--atol", "0", "--rtol", "0.1"],
     "--device, --atol, --rtol, --headroom are for the headroom report"),
])
def test_an_option_of_the_other_mode_is_a_usage_error(args, message):
    # they were silently ignored (only --reference was refused)
    xml, feeds = _model("overflow")
    result = invoke("precision", xml, "-i", feeds, *args, debug=False)
    assert result.exit_code == 2 and message in result.output, result.output


def test_the_keep_snippet_reads_the_weights_given(tmp_path):
    # --weights names a .bin that is not next to the .xml: the snippet must read that one (it read m.bin)
    examples = Path(__file__).resolve().parents[2] / "examples" / "precision"
    shutil.copy(examples / "overflow.xml", tmp_path / "m.xml")
    shutil.copy(examples / "overflow.bin", tmp_path / "weights.bin")
    result = invoke("precision", tmp_path / "m.xml", "--weights", tmp_path / "weights.bin", "--input",
                    examples / "overflow.npz", "--json", debug=False)
    snippet = json.loads(result.stdout)["precision"]["fix"]["keep_snippet"]
    assert f"core.read_model({str(tmp_path / 'm.keep-f32.xml')!r}, {str(tmp_path / 'weights.bin')!r})" in snippet


def test_a_stateful_model_is_refused_before_its_inputs_are_asked_for(tmp_path):
    # it asked for --data-shape of every dynamic input first, then refused the model
    from tests.helpers.stateful_models import accumulator

    result = invoke("precision", accumulator(tmp_path / "acc.xml", init=False), debug=False)
    assert result.exit_code == 5 and "does not run stateful models" in result.stderr, result.output
    # named as every error names a layer: the reader of the variable
    assert "(ReadValue-6, id 1, line " in result.stderr and "reads the variable 'sum'" in result.stderr


def test_a_tokenizer_whose_variables_are_options_is_run(tmp_path):
    """openvino-tokenizers' 'truncation' variable (never changed by a run) does not make the model stateful."""
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(["Hello, World!", "abc"]))
    xml = Path(__file__).resolve().parents[1] / "data" / "tokenizers" / "gpt2_bpe" / "openvino_tokenizer.xml"
    result = invoke("precision", xml, "-i", texts, debug=False)
    assert result.exit_code == 0 and "no layer output diverges" in result.stdout, result.output
