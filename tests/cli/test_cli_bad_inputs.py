"""What the CLI refuses, and how: arrays of non-IR dtypes or values the cast cannot keep, FIFOs and odd files,
malformed or file-writing run records for ``replay``, folders as models, bad option values (memory limit,
bench time) and usage errors with --json, deeply nested JSON inputs, complex .npy files, port dims above
int64 and ranks or data shapes numpy cannot hold, generated inputs above the memory limit. Each ends in one
message and its documented exit code, never 70 (an internal error). Also: ``-q`` is accepted after every
command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
import zipfile

import numpy as np
import pytest

from ir_runner.types import MAX_DIM
from tests.cli.clikit import SELECT_GATHER, as_json, invoke, ir_run, typed_model
from tests.conftest import MODELS
from tests.helpers.irbuild import IRBuilder
from tests.helpers.limits import ones, param_with_port_dim, parameter_model

INPUTS = SELECT_GATHER.with_suffix(".inputs.npz")
OTHERS = ("--input", f"cond={INPUTS}:cond", "--input", f"else={INPUTS}:else")  # 'then' left to each test


def _one_error(result, code: int) -> str:
    assert result.exit_code == code, result.output
    assert result.stderr.count("error:") == 1 and "Traceback" not in result.output
    return result.stderr


# ----------------------------------------------------------------------------- input arrays and their values


@pytest.mark.parametrize("array", [
    np.array([["a", "b", "c"], ["d", "e", "f"]]),
    np.array([[b"a", b"b", b"c"]] * 2),
    np.ones((2, 3), np.complex64),
    np.zeros((2, 3), "datetime64[s]"),
    np.zeros((2, 3), "V3"),
])
@pytest.mark.parametrize("cast", ["unsafe", "same_kind", "no"])
def test_arrays_of_non_ir_dtypes_are_refused(tmp_path, array, cast):
    np.save(tmp_path / "then.npy", array)
    result = invoke(SELECT_GATHER, *OTHERS, "--input", f"then={tmp_path / 'then.npy'}", "--cast", cast,
                    debug=False)
    assert "not an IR element type" in _one_error(result, 4)


def test_same_kind_refuses_floats_that_overflow(tmp_path):
    np.save(tmp_path / "then.npy", np.array([[1.0, 1e300, 2.0]] * 2))
    result = invoke(SELECT_GATHER, *OTHERS, "--input", f"then={tmp_path / 'then.npy'}", debug=False)
    assert "1e+300" in _one_error(result, 4) and "Warning" not in result.output
    np.save(tmp_path / "then.npy", np.array([[1.0, np.inf, np.nan]] * 2))  # non-finite values stay as they are
    assert invoke(SELECT_GATHER, *OTHERS, "--input", f"then={tmp_path / 'then.npy'}").exit_code == 0
    np.save(tmp_path / "then.npy", np.array([[1.0, 1e300, 2.0]] * 2))
    forced = invoke(SELECT_GATHER, *OTHERS, "--input", f"then={tmp_path / 'then.npy'}", "--cast", "unsafe")
    assert forced.exit_code == 0, forced.output


def test_same_kind_refuses_integers_too_large_for_f16(tmp_path):
    model = typed_model(tmp_path, "f16")
    np.save(tmp_path / "x.npy", np.full((2, 3), 70000, np.int32))
    assert "70000" in _one_error(invoke(model, "--input", tmp_path / "x.npy", debug=False), 4)


@pytest.mark.parametrize("options", [["--trace"], ["--dump-intermediate", "{dump}"], ["bench", "-n", "1"],
                                     ["gen-inputs", "-o", "{dump}.npz"]])
def test_u1_values_are_checked_on_every_path(tmp_path, options):
    model = typed_model(tmp_path, "u1")
    np.save(tmp_path / "x.npy", np.array([[0, 1, 2]] * 2, np.uint8))
    args = [o.format(dump=tmp_path / "dump") for o in options]
    command = [args[0], model, *args[1:]] if args[0] in ("bench", "gen-inputs") else [model, *args]
    result = invoke(*command, "--input", tmp_path / "x.npy", debug=False)
    assert "its values must be 0..1, got 2" in _one_error(result, 4)
    assert not (tmp_path / "dump").exists()


# ----------------------------------------------------------------------------- input files


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".json", ".bin"])
def test_fifo_inputs_are_refused_without_reading(tmp_path, suffix):
    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    done = ir_run(SELECT_GATHER, *OTHERS, "--input", f"then={fifo}")  # would block on open
    assert done.returncode == 4 and "not a regular file" in done.stderr and "Traceback" not in done.stderr


def test_fifo_reference_for_compare_is_refused(tmp_path):
    fifo = tmp_path / "pipe.npy"
    os.mkfifo(fifo)
    np.save(tmp_path / "a.npy", np.zeros(3))
    writer = threading.Thread(target=lambda: open(fifo, "wb").close(), daemon=True)  # unblocks a wrong open
    writer.start()
    assert "not a regular file" in _one_error(invoke("compare", tmp_path / "a.npy", fifo, debug=False), 4)


def test_npz_with_a_non_npy_member_is_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / "odd.npz", "w") as archive:
        archive.writestr("then.txt", "hello")
    run = invoke(SELECT_GATHER, *OTHERS, "--input", f"then={tmp_path / 'odd.npz'}", debug=False)
    assert "member 'then.txt' is not a .npy array" in _one_error(run, 4)
    np.save(tmp_path / "a.npy", np.zeros(3))
    compared = invoke("compare", tmp_path / "a.npy", tmp_path / "odd.npz", debug=False)
    assert "member 'then.txt'" in _one_error(compared, 4)


def test_a_text_file_is_not_called_a_pickle(tmp_path):
    (tmp_path / "bad.npz").write_text("hello, not an array\n")
    result = invoke(SELECT_GATHER, "--input", tmp_path / "bad.npz", debug=False)
    message = _one_error(result, 4)
    assert "is not a .npy or .npz file" in message and "pickle" not in message


# ----------------------------------------------------------------------------- run records for replay


def _record(tmp_path) -> tuple[dict, object]:
    path = tmp_path / "run.json"
    assert invoke(SELECT_GATHER, "--input", INPUTS, "--save-run", path).exit_code == 0
    return json.loads(path.read_text()), path


@pytest.mark.parametrize("change", [
    lambda r: r.pop("model"),
    lambda r: r.update(model=None),
    lambda r: r["model"].update(xml={"path": 1}),
    lambda r: r.pop("inputs"),
    lambda r: r["outputs"][0].pop("sha256"),
    lambda r: r.update(args="x"),
    lambda r: r.update(args=[]),
    lambda r: r["args"].append(3),
])
def test_replay_refuses_malformed_records(tmp_path, change):
    record, path = _record(tmp_path)
    change(record)
    path.write_text(json.dumps(record))
    assert "is not a run saved by ir-run" in _one_error(invoke("replay", path, debug=False), 4)


@pytest.mark.parametrize("extra", [
    ["--save-run", "{victim}"], ["--output", "{victim}"], ["-o", "{victim}"], ["--save-inputs", "{victim}"],
    ["--dump-intermediate", "{folder}"], ["--fill", "zeros"], ["--help"], ["--json"], ["-q"],
])
def test_replay_refuses_args_that_write_files(tmp_path, extra):
    record, path = _record(tmp_path)
    victim, folder = tmp_path / "victim.txt", tmp_path / "dump"
    victim.write_text("precious")
    record["args"] += [e.format(victim=victim, folder=folder) for e in extra]
    path.write_text(json.dumps(record))
    assert "is not a run saved by ir-run" in _one_error(invoke("replay", path, debug=False), 4)
    assert victim.read_text() == "precious" and not folder.exists()


def test_replay_refuses_args_click_cannot_parse(tmp_path):
    record, path = _record(tmp_path)
    record["args"] += ["--bogus"]
    path.write_text(json.dumps(record))
    assert "no such option" in _one_error(invoke("replay", path, debug=False), 4).lower()


def test_replay_refuses_args_naming_another_model(tmp_path):
    record, path = _record(tmp_path)
    record["args"][0] = str(typed_model(tmp_path, "f32"))
    path.write_text(json.dumps(record))
    assert "another model" in _one_error(invoke("replay", path, debug=False), 4)


# ----------------------------------------------------------------------------- models


@pytest.mark.parametrize("command", [[], ["validate"], ["inspect"], ["bench"], ["gen-inputs", "-o", "x.npz"]])
def test_a_folder_as_model_is_an_invalid_model(tmp_path, command):
    args = [*command, tmp_path] if command else ["run", tmp_path]
    result = invoke(*args, debug=False)  # validate reports it in its report, on stdout
    assert result.exit_code == 3 and result.output.count("is a directory") == 1, result.output


def test_a_folder_as_weights_is_an_invalid_model(tmp_path):
    result = invoke(SELECT_GATHER, "--weights", tmp_path, "--input", INPUTS, debug=False)
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output


# ----------------------------------------------------------------------------- options


@pytest.mark.parametrize("limit", ["1e400", "1e308TiB", "nan", "inf"])
def test_memory_limit_must_be_finite(limit):
    result = invoke(SELECT_GATHER, "--input", INPUTS, "--memory-limit", limit, debug=False)
    assert result.exit_code == 2 and "is not a size" in result.output


@pytest.mark.parametrize("duration", ["inf", "1e400", "infs", "nan", "0", "-1s"])
def test_bench_time_must_be_finite_and_positive(duration):
    result = invoke("bench", SELECT_GATHER, "--time", duration, debug=False)
    assert result.exit_code == 2 and "is not a duration" in result.output


def test_usage_errors_with_json_print_one_message():
    result = invoke("--json", SELECT_GATHER, "--bogus", debug=False)
    assert result.exit_code == 2
    assert as_json(result)["error"]["type"] == "UsageError"
    assert result.stderr.count("--bogus") == 1 and "Usage:" not in result.stderr


@pytest.mark.parametrize("command", [["validate", SELECT_GATHER], ["inspect", SELECT_GATHER],
                                     ["compare", INPUTS, INPUTS]])
def test_quiet_is_accepted_after_every_command(command):
    assert invoke(*command, "-q").exit_code == 0


def run_cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ir_runner", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60)


def test_cli_deeply_nested_json_input_is_a_bad_input(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    result = run_cli(str(MODELS / "gather1.xml"), "--input", "data=deep.json", "--input", "indices=random",
                     cwd=tmp_path)
    assert result.returncode == 4, result.stderr
    assert "too deeply" in result.stderr and "Traceback" not in result.stderr


def test_cli_generated_input_respects_the_memory_limit(tmp_path):
    result = run_cli(str(MODELS / "dynamic.xml"), "--fill", "random", "--data-shape", "cond=[3,4]",
                     "--data-shape", "then=[3,4]", "--data-shape", "indices=[50000000,3]",
                     "--memory-limit", "1MiB", cwd=tmp_path)
    assert result.returncode == 6, result.stderr
    assert "generating input 'indices'" in result.stderr


@pytest.mark.parametrize("command", [["validate"], []])
def test_cli_reports_a_port_dim_above_int64_without_traceback(tmp_path, command):
    path = tmp_path / "big.xml"
    path.write_bytes(param_with_port_dim(str(10**23)))
    result = invoke(*command, path, debug=False)
    assert result.exit_code == 3
    assert "<dim>100000000000000000000000</dim>" in result.output and "layer 'p'" in result.output
    assert "port id 0" in result.output


@pytest.mark.parametrize("cast", [[], ["--cast", "unsafe"]])
@pytest.mark.parametrize("array", [np.array([1 + 2j, 3], np.complex64), np.array([1, 3], np.complex128)])
def test_cli_refuses_complex_npy_without_traceback(tmp_path, cast, array):
    b = IRBuilder()
    b.result(b.parameter("x", "f32", "2"), "out")
    model = b.write(tmp_path)
    np.save(tmp_path / "x.npy", array)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = invoke(model, "--input", f"x={tmp_path / 'x.npy'}", *cast, debug=False)
    assert result.exit_code == 4
    assert f"input 'x' is f32, {tmp_path / 'x.npy'} has dtype {array.dtype}, which is not an IR element type" in (
        result.output.replace("\n", " "))


@pytest.mark.parametrize("fill", ["zeros", "random"])
def test_cli_shape_of_a_rank_above_the_limit_is_an_input_error(tmp_path, fill):
    path = tmp_path / "any_rank.xml"
    path.write_bytes(parameter_model("..."))
    result = invoke(path, "--shape", f"p=[{ones(65)}]", "--fill", fill, debug=False)
    assert result.exit_code == 4
    assert "rank 65 is above numpy's limit of 64 dims" in result.output


@pytest.mark.parametrize("command", [["validate"], []])
def test_cli_reports_a_rank_above_the_limit_with_exit_code_5(tmp_path, command):
    path = tmp_path / "deep.xml"
    path.write_bytes(parameter_model(ones(65)))
    result = invoke(*command, path, debug=False)
    assert result.exit_code == 5
    assert "layer 'p'" in result.output and "rank 65 is above numpy's limit of 64 dims" in result.output


def test_generating_an_empty_input_numpy_cannot_describe_is_an_input_error(tmp_path):
    b = IRBuilder()
    b.result(b.parameter("x", "f32", "..."))
    model = b.write(tmp_path)
    for fill in ("zeros", "random"):
        result = invoke(model, "--fill", fill, "--data-shape", f"x=[0,{MAX_DIM}]")
        assert result.exit_code == 4 and "has no elements, but its other dims multiply beyond" in result.stderr


def test_data_shapes_numpy_cannot_hold_are_usage_errors_and_huge_sizes_are_short(tmp_path):
    b = IRBuilder()
    b.result(b.parameter("x", "f32", "..."))
    model = b.write(tmp_path)
    too_many = invoke(model, "--fill", "zeros", "--data-shape", "x=[" + ",".join(["1"] * 70) + "]")
    assert too_many.exit_code == 2 and "rank 70 is above numpy's limit of 64 dims" in too_many.stderr
    huge = invoke(model, "--fill", "zeros", "--data-shape", "x=[" + ",".join(["90000"] * 10) + "]")
    assert huge.exit_code == 6 and "would take more than 1 EiB, above the memory limit of 16.0 GiB" in huge.stderr
