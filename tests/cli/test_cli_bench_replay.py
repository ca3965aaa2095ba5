"""``bench`` (timing, percentiles, per layer, progress) and ``--save-run`` / ``replay``."""

from __future__ import annotations

import io
import json
import shlex

import numpy as np

from ir_runner.cli.bench import Progress, measure
from tests.cli.clikit import DYNAMIC, SELECT_GATHER, as_json, inputs_of, invoke, load_npz


def test_bench_iterations_percentiles_and_per_layer():
    result = invoke("bench", SELECT_GATHER, "--iterations", "20", "--warmup", "2", "--percentiles", "50,99.9",
                    "--per-layer", "--json")
    assert result.exit_code == 0, result.output
    data = as_json(result)
    timing = data["timing"]
    assert timing["iterations"] == 20 and timing["warmup"] == 2 and timing["unit"] == "ms"
    assert [p["percentile"] for p in timing["percentiles"]] == [50.0, 99.9]
    assert 0 < timing["min"] <= timing["percentiles"][0]["value"] <= timing["max"]
    assert timing["throughput_per_second"] > 0
    assert {row["layer"] for row in data["per_layer"]} == {"select", "gather"}
    assert abs(sum(row["percent"] for row in data["per_layer"]) - 100) < 1e-6
    assert all(row["runs"] == 20 for row in data["per_layer"])
    assert "\r" not in result.stderr  # no progress bar when stderr is not a terminal


def test_bench_per_layer_says_what_it_does_before_its_runs(monkeypatch):
    """The per-layer part runs as long as the timed part again: a line says so before it starts (also when
    stderr is not a terminal), and --quiet leaves it out."""
    import ir_runner.cli.bench as bench_module
    from ir_runner.model import Model

    events = []
    say, trace = bench_module.info, Model.trace
    monkeypatch.setattr(bench_module, "info", lambda message: events.append("line") or say(message))
    monkeypatch.setattr(Model, "trace", lambda self, *a, **k: events.append("trace") or trace(self, *a, **k))
    result = invoke("bench", SELECT_GATHER, "-n", "7", "--warmup", "3", "--per-layer")
    assert result.exit_code == 0, result.output
    line = "timing each layer: 7 more runs after 3 warm-up runs, each layer timed alone (the timed runs took"
    assert line in result.stderr
    assert events == ["line"] + ["trace"] * 7
    quiet = invoke("bench", SELECT_GATHER, "-n", "2", "--per-layer", "-q")
    assert quiet.exit_code == 0 and "timing each layer" not in quiet.stderr


def test_bench_text_and_time_budget():
    result = invoke("bench", SELECT_GATHER, "--time", "50ms", "--warmup", "0")
    assert result.exit_code == 0, result.output
    assert "latency over" in result.stdout and "p95" in result.stdout and "throughput" in result.stdout
    assert "random true/false" in result.stdout  # inputs not given are generated (before timing)


def test_bench_usage_errors():
    assert invoke("bench", SELECT_GATHER, "--iterations", "5", "--time", "1s").exit_code == 2
    assert invoke("bench", SELECT_GATHER, "--percentiles", "50,101").exit_code == 2
    assert invoke("bench", SELECT_GATHER, "--percentiles", "p50").exit_code == 2
    assert invoke("bench", SELECT_GATHER, "--time", "soon").exit_code == 2
    assert invoke("bench", SELECT_GATHER, "--iterations", "0").exit_code == 2


def test_bench_dynamic_needs_data_shapes():
    assert invoke("bench", DYNAMIC, "-n", "2").exit_code == 4
    ok = invoke("bench", DYNAMIC, "-n", "2", "--data-shape", "cond=[2,4]", "--data-shape", "then=[2,4]",
                "--data-shape", "indices=[2,2]", "--per-layer")
    assert ok.exit_code == 0, ok.output


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal_and_cleared():
    terminal, pipe = _Terminal(), io.StringIO()
    calls = []
    latencies = measure(lambda: calls.append(1), 3, None, Progress("bench", 3, None, terminal))
    assert len(latencies) == 3 == len(calls)
    assert terminal.getvalue().startswith("\rbench [") and terminal.getvalue().endswith("\r")
    measure(lambda: None, 3, None, Progress("bench", 3, None, pipe))
    assert pipe.getvalue() == ""


def test_save_run_and_replay(tmp_path):
    record, out, used = tmp_path / "run.json", tmp_path / "out.npz", tmp_path / "in.npz"
    result = invoke(SELECT_GATHER, "-i", "cond=random", "--fill", "random", "--seed", "5", "--save-run", record,
                    "-o", out, "--save-inputs", used, "--ref", SELECT_GATHER.with_suffix(".expected.npz"),
                    "--atol", "100")
    assert result.exit_code == 0, result.output
    saved = json.loads(record.read_text())
    assert saved["schema"] == "ir-run/run/1" and saved["seed"] == 5
    assert len(saved["model"]["xml"]["sha256"]) == 64 and saved["model"]["weights"]["sha256"]
    assert [entry["name"] for entry in saved["inputs"]] == ["cond", "then", "else"]
    assert "--seed" in saved["args"] and "--atol" in saved["args"]
    assert set(load_npz(used)) == {"cond", "then", "else"}
    replayed = invoke("replay", record)
    assert replayed.exit_code == 0, replayed.output
    assert "outputs identical to the recording" in replayed.stdout
    data = as_json(invoke("replay", record, "--json"))
    assert data["command"] == "replay" and data["replay"]["outputs_identical"] is True


def test_replay_detects_changed_inputs_and_outputs(tmp_path):
    inputs, record = tmp_path / "in.npz", tmp_path / "run.json"
    invoke("gen-inputs", SELECT_GATHER, "-o", inputs)
    assert invoke(SELECT_GATHER, "-i", inputs, "--save-run", record).exit_code == 0
    saved = json.loads(record.read_text())
    saved["outputs"][0]["sha256"] = "0" * 64
    record.write_text(json.dumps(saved))
    changed = invoke("replay", record)
    assert changed.exit_code == 1 and "DIFFERENT from the recording (differ: out)" in changed.stdout
    data = dict(load_npz(inputs))
    data["then"] = data["then"] + 1
    np.savez(inputs, **data)
    assert invoke("replay", record).exit_code == 4
    (tmp_path / "other.json").write_text("{}")
    assert invoke("replay", tmp_path / "other.json").exit_code == 4


def test_record_command_is_shell_quoted(tmp_path):
    folder = tmp_path / "a b"
    folder.mkdir()
    np.savez(folder / "in's.npz", **inputs_of("select_gather"))
    path = tmp_path / "run.json"
    assert invoke(SELECT_GATHER, "--input", folder / "in's.npz", "--save-run", path).exit_code == 0
    record = json.loads(path.read_text())
    assert shlex.split(record["command"]) == ["ir-run", "run", *record["args"]]
    assert invoke("replay", path).exit_code == 0
