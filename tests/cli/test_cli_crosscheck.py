"""``ir-run crosscheck``: text and JSON reports, exit codes, and the path without openvino."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import numpy as np

from tests.cli.clikit import as_json, invoke
from tests.helpers.crosscheck_models import FAULTS, negative_gather, out_of_range_gather


def _files(tmp_path, made):
    builder, feeds, faulty, later = made
    path = builder.write(tmp_path)
    np.savez(tmp_path / "inputs.npz", **feeds)
    return path, tmp_path / "inputs.npz", faulty, later


def _strict_json(text: str) -> dict:
    def refuse(constant: str):
        raise AssertionError(f"invalid JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def test_a_fault_is_named_in_text_and_exits_1(tmp_path):
    path, inputs, _, _ = _files(tmp_path, negative_gather("opset1"))
    result = invoke("crosscheck", path, "--input", inputs, "--every-layer")
    assert result.exit_code == 1, result.output
    assert "first divergence: layer 'pick' (Gather-1, id 4, line " in result.stdout
    assert "), output port 3: 2 of 4 elements differ; at [0] ir-run gives 60, CPU gives 0" in result.stdout
    assert "3 later layer output(s) diverge only because their inputs did (inherited)" in result.stdout
    assert "10 layer outputs: 6 agree, 1 diverge, 3 inherited, 0 not observable on CPU" in result.stdout


def test_json_names_the_first_divergence_and_spells_infinities_as_strings(tmp_path):
    path, inputs, faulty, _ = _files(tmp_path, FAULTS["+-inf to f64"]())
    result = invoke("crosscheck", path, "--input", inputs, "--json", "--every-layer")
    assert result.exit_code == 1
    data = _strict_json(result.stdout)
    assert data["command"] == "crosscheck" and data["ok"] is False and data["exit_code"] == 1
    first = data["first_divergence"]
    assert isinstance(first.pop("line"), int)
    assert first == {"layer": faulty, "id": "2", "type": "Convert-1", "port": "1", "position": 0}
    row = next(r for r in data["layers"] if r["layer"] == faulty)
    assert row["ours"] == "Infinity" and row["device"] == 3.4028234663852886e38 and row["max_abs"] == "Infinity"
    assert [r["status"] for r in data["layers"]].count("inherited") == 1


def test_out_of_range_indices_on_short_data_in_a_separate_process(tmp_path):
    """The CPU plugin reads past the data here (garbage; it could crash): run in a subprocess."""
    path, inputs, faulty, later = _files(tmp_path, out_of_range_gather())
    done = subprocess.run([sys.executable, "-m", "ir_runner", "crosscheck", str(path), "--input", str(inputs),
                           "--json", "--every-layer"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    data = _strict_json(done.stdout)
    assert data["first_divergence"]["layer"] == faulty
    assert sorted(r["layer"] for r in data["layers"] if r["status"] == "inherited") == sorted(later)


def test_a_graph_without_a_fault_exits_0(tmp_path):
    path, inputs, _, _ = _files(tmp_path, negative_gather("opset7", indices=(5, 0, 4, 2)))
    result = invoke("crosscheck", path, "--input", inputs, "--all")
    assert result.exit_code == 0, result.output
    assert "ok: every observable layer output agrees with CPU" in result.stdout
    assert [line.split()[:2] for line in result.stdout.splitlines() if "pick (" in line] == [["agree", "pick"]]
    data = as_json(invoke("crosscheck", path, "--input", inputs, "--json"))
    assert data["ok"] is True and data["first_divergence"] is None and data["counts"]["diverges"] == 0


def test_tolerance_options_and_precision(tmp_path):
    path, inputs, _, _ = _files(tmp_path, FAULTS["f32 Const denormals"]())
    data = as_json(invoke("crosscheck", path, "--input", inputs, "--precision", "f16", "--json"))
    assert data["ok"] is True and data["tolerance"] == {"atol": 1e-3, "rtol": 2e-3, "ulp": None}
    result = invoke("crosscheck", path, "--input", inputs, "--precision", "f16", "--atol", "0", "--rtol", "0",
                    "--json", "--every-layer")
    assert result.exit_code == 1 and as_json(result)["first_divergence"]["layer"] == "weights"


def test_a_missing_input_is_a_usage_problem_not_a_crash(tmp_path):
    path, _, _, _ = _files(tmp_path, negative_gather())
    result = invoke("crosscheck", path, debug=False)
    assert result.exit_code == 4 and "error:" in result.stderr


def test_output_folder_without_reduce_is_a_usage_error(tmp_path):
    """-o is the folder --reduce writes: given without it (it would be ignored), nothing runs; --reduce takes it."""
    path, inputs, _, _ = _files(tmp_path, negative_gather())
    for option in (["-o", tmp_path / "repro"], [f"--output={tmp_path / 'repro'}"]):
        result = invoke("crosscheck", path, "--input", inputs, *option, debug=False)
        assert result.exit_code == 2 and "-o is the folder --reduce writes: add --reduce" in result.stderr
        assert result.stdout == "" and not (tmp_path / "repro").exists()
    assert invoke("crosscheck", path, "--input", inputs, "--reduce", "-o", tmp_path / "repro").exit_code == 1
    assert (tmp_path / "repro" / "model.xml").is_file()


_WITHOUT_OPENVINO = """
import sys
sys.modules["openvino"] = None  # as if openvino were not installed
from ir_runner.cli import main
sys.argv = ["ir-run", *sys.argv[1:]]
main()
"""


def test_without_openvino_it_exits_with_the_unsupported_code_and_the_install_hint(tmp_path):
    path, inputs, _, _ = _files(tmp_path, negative_gather())
    done = subprocess.run([sys.executable, "-c", _WITHOUT_OPENVINO, "crosscheck", str(path), "--input", str(inputs)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 5
    assert done.stderr.startswith("error: crosscheck needs the openvino package")
    assert "hint: install it with: pip install 'ir-run[openvino]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_explained_and_represented_rows_give_one_ok_line():
    """A report with both explained and represented rows and no divergence says 'ok' once, naming both (it
    printed two 'ok:' lines)."""
    from ir_runner.cli.crosscheck import render_crosscheck
    from ir_runner.divergence import EXPLAINED, INHERITED, REPRESENTED

    def row(name: str, status: str) -> dict:
        return {"layer": name, "id": name, "type": "Const-1", "line": None, "port": "0", "position": 0,
                "source": "constant", "element_type": "i64", "shape": [1], "rule": "bits", "status": status,
                "mismatches": 1, "size": 1, "max_abs": 1.0, "max_rel": 1.0, "max_ulp": None, "worst_index": [0],
                "ours": 1, "device": 2, "note": "why", "cause": None}

    layers = [row("rep", REPRESENTED), row("fq", EXPLAINED), row("after", INHERITED)]
    counts = {status: sum(r["status"] == status for r in layers)
              for status in ("agree", "diverges", EXPLAINED, INHERITED, "not observable", REPRESENTED)}
    result = {"device": "CPU", "precision": "f32", "openvino_version": "x", "agree": True, "first_divergence": None,
              "tolerance": {"atol": 1e-6, "rtol": 1e-5, "ulp": 4}, "counts": counts, "layers": layers,
              "inputs": [], "model": {"path": "m.xml", "weights": None}, "seed": None}
    with click.Context(click.Command("crosscheck")):
        text = render_crosscheck(result)
    assert text.count("ok:") == 1, text
    assert ("ok: no divergence from CPU: 1 layer output(s) differ only as it represents them" in text
            and "; 1 differ as explained above and 1 later one(s) only because an explained one did" in text)
