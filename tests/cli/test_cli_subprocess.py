"""``ir-run`` as a real process (``python -m ir_runner``): exit codes, streams, help, completion."""

from __future__ import annotations

import json

import numpy as np

from tests.cli.clikit import SELECT_GATHER, expected_of, invoke, ir_run, odd_names_model


def test_run_as_documented(tmp_path):
    out = tmp_path / "out.npz"
    done = ir_run(SELECT_GATHER, "--input", SELECT_GATHER.with_suffix(".inputs.npz"), "--output", out)
    assert done.returncode == 0, done.stderr
    assert "out: f32[2,2]" in done.stdout
    with np.load(out) as data:
        assert data["out"].tobytes() == expected_of("select_gather")["out"].tobytes()


def test_bad_input_exit_4_one_paragraph_no_traceback(tmp_path):
    done = ir_run(SELECT_GATHER, "--input", tmp_path / "missing.npy", "--fill", "zeros")
    assert done.returncode == 4
    assert done.stderr.startswith("error: the file") and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_json_on_stdout_logs_on_stderr(tmp_path):
    done = ir_run("--json", SELECT_GATHER, "--fill", "random", "-o", tmp_path / "o.npz")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["schema"] == "ir-run/1" and isinstance(data["outputs"][0]["max"], float)
    assert "wrote outputs" in done.stderr


def test_exit_codes_are_distinct(tmp_path):
    (tmp_path / "ref.npz").write_bytes(b"")
    np.savez(tmp_path / "ref.npz", out=np.zeros((2, 2), np.float32))
    assert ir_run(SELECT_GATHER, "--fill", "ones", "--ref", tmp_path / "ref.npz").returncode == 1
    assert ir_run(SELECT_GATHER, "--bogus").returncode == 2
    assert ir_run(tmp_path / "none.xml").returncode == 3


def test_help_documents_exit_codes_and_version():
    done = ir_run("--help")
    assert done.returncode == 0 and "4 bad input; 5 unsupported operation" in " ".join(done.stdout.split())
    for command in ("run", "validate", "inspect", "compare", "bench", "gen-inputs", "replay", "completion"):
        assert command in done.stdout
    assert "0.1.0" in ir_run("--version").stdout


def test_completion_of_model_input_names(tmp_path):
    model = odd_names_model(tmp_path)
    env = {"_IR_RUN_COMPLETE": "bash_complete", "COMP_WORDS": f"ir-run {model} --input ", "COMP_CWORD": "3"}
    done = ir_run(env=env)
    assert done.returncode == 0, done.stderr
    values = [line.split(",", 1)[1] for line in done.stdout.splitlines()]
    assert {"input.cond/x:0=", "then=1=", "idx:0=", "c=", "random"} <= set(values)
    env["COMP_WORDS"] = f"ir-run run {model} --input idx:0=ra"
    env["COMP_CWORD"] = "4"
    assert ir_run(env=env).stdout.splitlines() == ["plain,idx:0=random"]


def test_completion_command_prints_a_script():
    result = invoke("completion", "bash")
    assert result.exit_code == 0 and "_IR_RUN_COMPLETE=bash_complete" in result.stdout
    assert "compdef" in invoke("completion", "zsh").stdout
