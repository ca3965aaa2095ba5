"""``ir-run run`` (the default command): binding, outputs, files, errors and exit codes; layer statistics
computed only for --trace (and --dump-intermediate's index agreeing with the trace); --ref read and checked
before the run; the JSON error object."""

from __future__ import annotations

import json
import os
import pickle
import stat
import subprocess
import sys

import numpy as np
import pytest

import ir_runner.cli.run as run_module
from ir_runner.model import Model
from tests.cli.clikit import (
    DYNAMIC,
    SELECT_GATHER,
    as_json,
    dynamic_type_model,
    expected_of,
    inputs_of,
    invoke,
    load_npz,
    mismatch_model,
    odd_names_model,
    typed_model,
    unsupported_model,
)


@pytest.fixture
def split_inputs(tmp_path):
    """The select_gather inputs as one .npy per input."""
    paths = {}
    for name, value in inputs_of("select_gather").items():
        paths[name] = tmp_path / f"{name}.npy"
        np.save(paths[name], value)
    return paths


def test_default_command_runs_and_saves_exact_outputs(tmp_path):
    out = tmp_path / "out.npz"
    result = invoke(SELECT_GATHER, "--input", SELECT_GATHER.with_suffix(".inputs.npz"), "-o", out)
    assert result.exit_code == 0, result.output
    got, want = load_npz(out), expected_of("select_gather")
    assert got.keys() == want.keys()
    assert got["out"].dtype == want["out"].dtype and got["out"].tobytes() == want["out"].tobytes()
    assert "out: f32[2,2]" in result.stdout and "[60. 40.]" in result.stdout
    assert "cond   boolean  [2,3]" in result.stdout
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left behind


def test_positional_files_fill_inputs_in_model_order(tmp_path, split_inputs):
    out = tmp_path / "o.npz"
    result = invoke(SELECT_GATHER, "-i", split_inputs["cond"], "-i", split_inputs["then"], "-i", split_inputs["else"],
                    "--output", out)
    assert result.exit_code == 0, result.output
    assert np.array_equal(load_npz(out)["out"], expected_of("select_gather")["out"])


def test_named_inputs_in_any_order_then_positional(tmp_path, split_inputs):
    out = tmp_path / "o.npz"
    result = invoke("run", SELECT_GATHER, "-i", f"else={split_inputs['else']}", "-i", split_inputs["cond"],
                    "-i", split_inputs["then"], "--save-outputs", out)
    assert result.exit_code == 0, result.output
    assert np.array_equal(load_npz(out)["out"], expected_of("select_gather")["out"])


@pytest.mark.parametrize("suffix", [".json", ".npy"])
def test_output_formats_by_suffix(tmp_path, suffix):
    out = tmp_path / f"out{suffix}"
    assert invoke(SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"), "-o", out).exit_code == 0
    value = json.loads(out.read_text())["out"] if suffix == ".json" else np.load(out)
    assert np.array_equal(np.asarray(value, dtype=np.float32), expected_of("select_gather")["out"])


def test_output_never_overwrites_an_input_file(split_inputs):
    before = split_inputs["cond"].read_bytes()
    result = invoke(SELECT_GATHER, "-i", split_inputs["cond"], "-i", split_inputs["then"], "-i", split_inputs["else"],
                    "-o", split_inputs["cond"])
    assert result.exit_code == 2
    assert "never overwrites an input" in result.stderr
    assert split_inputs["cond"].read_bytes() == before


def test_names_with_dots_slashes_colons_and_equals(tmp_path):
    model = odd_names_model(tmp_path)
    np.save(tmp_path / "c.npy", np.array([[1, 0, 1, 0]] * 2, dtype=bool))
    np.savez(tmp_path / "data.npz", **{"then=1": np.ones((2, 4), np.float32), "e": np.zeros((2, 4), np.float32)})
    np.savez(tmp_path / "keys.npz", **{"idx:0": np.array([3, 0, 1], np.int32)})
    out = tmp_path / "o.npz"
    result = invoke(model, "-i", f"input.cond/x:0={tmp_path / 'c.npy'}", "-i", tmp_path / "data.npz",
                    "-i", f"idx:0={tmp_path / 'keys.npz'}:idx:0", "-o", out)
    assert result.exit_code == 0, result.output
    assert load_npz(out)["out.0"].tolist() == [[0, 1, 0]] * 2
    by_layer = invoke(model, "-i", f"c={tmp_path / 'c.npy'}", "--value", "t=[[1,1,1,1],[1,1,1,1]]",
                      "--value", "e=[[0,0,0,0],[0,0,0,0]]", "--value", "idx=[0,1,2]")
    assert by_layer.exit_code == 0, by_layer.output


def test_unknown_name_lists_inputs_and_suggests(tmp_path):
    result = invoke(SELECT_GATHER, "-i", "conde=random", "--fill", "random")
    assert result.exit_code == 4
    assert "no input named 'conde'" in result.stderr
    assert "did you mean 'cond'" in result.stderr and "then: f32[2,3]" in result.stderr
    assert result.stdout == ""


def test_npz_key_syntax_and_bad_key(tmp_path):
    npz = SELECT_GATHER.with_suffix(".inputs.npz")
    ok = invoke(SELECT_GATHER, "-i", f"{npz}:cond", "-i", f"then={npz}:else", "-i", f"else={npz}")
    assert ok.exit_code == 0, ok.output
    assert "[[60. 40.]" not in ok.stdout  # then and else were swapped on purpose
    bad = invoke(SELECT_GATHER, "-i", f"cond={npz}:nope", "--fill", "zeros")
    assert bad.exit_code == 4 and "no array named 'nope'" in bad.stderr and "cond, then, else" in bad.stderr


def test_unnamed_npz_with_unknown_key_is_refused(tmp_path):
    np.savez(tmp_path / "x.npz", cnd=np.zeros((2, 3), bool))
    result = invoke(SELECT_GATHER, "-i", tmp_path / "x.npz", "--fill", "zeros")
    assert result.exit_code == 4 and "'cnd', which is not an input" in result.stderr


def test_positional_npz_from_np_savez(tmp_path):
    data = inputs_of("select_gather")
    np.savez(tmp_path / "pos.npz", data["cond"], data["then"], data["else"])
    out = tmp_path / "o.npz"
    assert invoke(SELECT_GATHER, "-i", tmp_path / "pos.npz", "-o", out).exit_code == 0
    assert np.array_equal(load_npz(out)["out"], expected_of("select_gather")["out"])


def test_json_inputs_and_inline_values(tmp_path):
    data = inputs_of("select_gather")
    (tmp_path / "in.json").write_text(json.dumps({k: v.tolist() for k, v in data.items()}))
    out = tmp_path / "o.npz"
    assert invoke(SELECT_GATHER, "-i", tmp_path / "in.json", "-o", out).exit_code == 0
    assert np.array_equal(load_npz(out)["out"], expected_of("select_gather")["out"])
    (tmp_path / "cond.json").write_text(json.dumps(data["cond"].astype(int).tolist()))
    result = invoke(SELECT_GATHER, "-i", f"cond={tmp_path / 'cond.json'}", "--value",
                    f"then={json.dumps(data['then'].tolist())}", "--value", f"else={json.dumps(data['else'].tolist())}",
                    "-o", out)
    assert result.exit_code == 0, result.output
    assert np.array_equal(load_npz(out)["out"], expected_of("select_gather")["out"])


def test_json_values_must_fit_the_input_type(tmp_path):
    model = odd_names_model(tmp_path)
    result = invoke(model, "--value", "idx=[0.5,1,2]", "--fill", "zeros")
    assert result.exit_code == 4 and "not whole" in result.stderr
    result = invoke(model, "--value", "idx=[0,1,3000000000]", "--fill", "zeros")
    assert result.exit_code == 4 and "outside [-2147483648, 2147483647]" in result.stderr
    result = invoke(model, "--value", "idx=[0,1", "--fill", "zeros")
    assert result.exit_code == 2 and "not JSON" in result.stderr
    result = invoke(model, "--value", "idx=[[0],[1,2]]", "--fill", "zeros")
    assert result.exit_code == 4 and "rectangular" in result.stderr


def test_raw_bin_inputs_checked_by_byte_count(tmp_path):
    model = odd_names_model(tmp_path)
    (tmp_path / "idx.bin").write_bytes(np.array([2, 1, 0], np.int32).tobytes())
    (tmp_path / "cond.bin").write_bytes(bytes([1, 0, 1, 0, 0, 1, 0, 1]))
    out = tmp_path / "o.npz"
    result = invoke(model, "-i", f"idx={tmp_path / 'idx.bin'}", "-i", f"c={tmp_path / 'cond.bin'}", "--fill", "ones",
                    "-o", out)
    assert result.exit_code == 0, result.output
    (tmp_path / "short.bin").write_bytes(b"\0" * 10)
    bad = invoke(model, "-i", f"idx={tmp_path / 'short.bin'}", "--fill", "zeros")
    assert bad.exit_code == 4 and "has 10 bytes" in bad.stderr and "needs 12 bytes" in bad.stderr


def test_keywords_binding_twice_and_too_many(tmp_path):
    zeros = invoke(SELECT_GATHER, "-i", "ones", "-i", "ones", "-i", "zeros", "--json")
    assert zeros.exit_code == 0
    assert as_json(zeros)["outputs"][0]["values"] == [1.0, 1.0, 1.0, 1.0]
    twice = invoke(SELECT_GATHER, "-i", "cond=zeros", "-i", "cond=ones", "--fill", "zeros")
    assert twice.exit_code == 4 and "bound twice" in twice.stderr
    many = invoke(SELECT_GATHER, "-i", "zeros", "-i", "zeros", "-i", "zeros", "-i", "zeros")
    assert many.exit_code == 4 and "4 unnamed input source(s)" in many.stderr


def test_missing_inputs_give_the_flag_to_add():
    result = invoke(SELECT_GATHER, "-i", "cond=zeros")
    assert result.exit_code == 4
    assert "no data given for input(s) 'then', 'else'" in result.stderr and "--input NAME=random" in result.stderr


def test_cast_policies(tmp_path):
    model = odd_names_model(tmp_path)
    np.save(tmp_path / "i64.npy", np.array([0, 1, 2], np.int64))
    ok = invoke(model, "-i", f"idx={tmp_path / 'i64.npy'}", "--fill", "zeros")
    assert ok.exit_code == 0 and "(i64->i32)" in ok.stdout
    assert invoke(model, "-i", f"idx={tmp_path / 'i64.npy'}", "--fill", "zeros", "--cast", "no").exit_code == 4
    np.save(tmp_path / "big.npy", np.array([0, 1, 2**40], np.int64))
    big = invoke(model, "-i", f"idx={tmp_path / 'big.npy'}", "--fill", "zeros")
    assert big.exit_code == 4 and "outside [-2147483648, 2147483647]" in big.stderr
    np.save(tmp_path / "f.npy", np.array([0.0, 1.9, 2.0]))
    lossy = invoke(model, "-i", f"idx={tmp_path / 'f.npy'}", "--fill", "zeros")
    assert lossy.exit_code == 4 and "--cast unsafe" in lossy.stderr
    unsafe = invoke(model, "-i", f"idx={tmp_path / 'f.npy'}", "--fill", "zeros", "--cast", "unsafe", "--save-inputs",
                    tmp_path / "used.npz")
    assert unsafe.exit_code == 0 and "unsafe" in unsafe.stdout
    assert load_npz(tmp_path / "used.npz")["idx:0"].tolist() == [0, 1, 2]
    np.save(tmp_path / "c01.npy", np.array([[0, 1, 1, 0]] * 2, np.int64))
    cond = invoke(model, "-i", f"c={tmp_path / 'c01.npy'}", "--fill", "zeros")
    assert cond.exit_code == 0 and "(i64->boolean)" in cond.stdout


def test_object_arrays_are_never_unpickled(tmp_path):
    path = tmp_path / "evil.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    result = invoke(SELECT_GATHER, "-i", path, "--fill", "zeros")
    assert result.exit_code == 4 and "never unpickles" in result.stderr
    (tmp_path / "raw.npy").write_bytes(pickle.dumps([1, 2]))
    assert invoke(SELECT_GATHER, "-i", tmp_path / "raw.npy", "--fill", "zeros").exit_code == 4


@pytest.mark.parametrize(
    ("make", "code"),
    [(lambda d: d / "missing.xml", 3), (mismatch_model, 3), (unsupported_model, 5)],
)
def test_model_errors_exit_codes(tmp_path, make, code):
    result = invoke(make(tmp_path), "--fill", "zeros")
    assert result.exit_code == code
    assert result.stderr.startswith("error: ") and result.stdout == ""


def test_usage_errors_exit_2():
    assert invoke(SELECT_GATHER, "--no-such-option").exit_code == 2
    assert invoke(SELECT_GATHER, "--seed", "-1").exit_code == 2
    assert invoke(SELECT_GATHER, "--shape", "cond=[2,x]", "--fill", "zeros").exit_code == 2
    assert invoke(SELECT_GATHER, "--range", "then=[3,1]", "--fill", "random").exit_code == 2
    assert invoke(SELECT_GATHER, "--memory-limit", "lots", "--fill", "zeros").exit_code == 2
    unknown = invoke("inpsect", SELECT_GATHER)
    assert unknown.exit_code == 2 and "inspect" in unknown.stderr


def test_memory_limit_exit_6():
    result = invoke(SELECT_GATHER, "--fill", "zeros", "--memory-limit", "16B")
    assert result.exit_code == 6 and "memory limit" in result.stderr


def test_internal_error_is_one_line_and_exit_70(monkeypatch):
    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(run_module, "array_stats", broken)
    result = invoke(SELECT_GATHER, "--fill", "zeros", debug=False)
    assert result.exit_code == 70
    assert "internal error: ZeroDivisionError: boom" in result.stderr
    with pytest.raises(ZeroDivisionError):
        invoke(SELECT_GATHER, "--fill", "zeros", debug=True)


def test_trace_and_dump_intermediate(tmp_path):
    folder = tmp_path / "layers"
    result = invoke(SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"), "--trace",
                    "--dump-intermediate", folder)
    assert result.exit_code == 0, result.output
    trace = result.stdout.split("trace\n")[1].split("outputs")[0]
    assert "select (id 3)  Select-1  f32[2,3]" in trace and "gather (id 6)  Gather-7  f32[2,2]" in trace
    index = json.loads((folder / "index.json").read_text())["layers"]
    assert [entry["layer"] for entry in index] == ["select", "gather"]
    gathered = np.load(folder / index[1]["file"])
    assert np.array_equal(gathered, expected_of("select_gather")["out"])
    data = as_json(invoke(SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"), "--trace", "--json"))
    assert [row["type"] for row in data["trace"]] == ["Select-1", "Gather-7"]
    assert data["trace"][1]["max"] == 60.0 and data["trace"][1]["nan"] == 0


def test_trace_counts_nan(tmp_path):
    then = np.full((2, 3), np.nan, np.float32)
    np.save(tmp_path / "t.npy", then)
    data = as_json(invoke(SELECT_GATHER, "-i", "cond=ones", "-i", f"then={tmp_path / 't.npy'}", "-i", "else=zeros",
                          "--trace", "--json"))
    assert data["trace"][0]["nan"] == 6 and data["outputs"][0]["nan"] == 4
    assert data["outputs"][0]["values"] == ["NaN"] * 4 and data["outputs"][0]["min"] is None


def test_reference_comparison_pass_and_fail(tmp_path):
    npz = SELECT_GATHER.with_suffix(".inputs.npz")
    ok = invoke(SELECT_GATHER, "-i", npz, "--ref", SELECT_GATHER.with_suffix(".expected.npz"))
    assert ok.exit_code == 0 and "all match" in ok.stdout
    np.savez(tmp_path / "ref.npz", out=np.array([[3, 1.5], [60, 40]], np.float32))
    bad = invoke(SELECT_GATHER, "-i", npz, "--ref", tmp_path / "ref.npz")
    assert bad.exit_code == 1
    assert "max abs     0.5 at [0, 1]: actual 1, expected 1.5" in bad.stdout
    assert "would pass  atol >= 0.4985" in bad.stdout
    loose = invoke(SELECT_GATHER, "-i", npz, "--ref", tmp_path / "ref.npz", "--atol", "out=0.5")
    assert loose.exit_code == 0
    np.save(tmp_path / "single.npy", expected_of("select_gather")["out"])
    assert invoke(SELECT_GATHER, "-i", npz, "--ref", tmp_path / "single.npy", "--exact").exit_code == 0


def test_json_output_is_typed_and_versioned():
    result = invoke("--json", SELECT_GATHER, "-i", SELECT_GATHER.with_suffix(".inputs.npz"))
    data = as_json(result)
    assert data["schema"] == "ir-run/1" and data["command"] == "run" and data["exit_code"] == 0
    row = data["outputs"][0]
    assert row["shape"] == [2, 2] and row["values"] == [3.0, 1.0, 60.0, 40.0]
    assert all(isinstance(row[k], float) for k in ("min", "max", "mean")) and isinstance(row["nan"], int)
    assert data["inputs"][0]["element_type"] == "boolean"
    assert result.stderr == ""


def test_json_error_object_on_stdout():
    result = invoke(SELECT_GATHER, "-i", "conde=zeros", "--json")
    assert result.exit_code == 4
    data = as_json(result)
    assert data["ok"] is False and data["error"]["type"] == "InputError" and "cond" in data["error"]["hint"]
    assert "error:" in result.stderr
    usage = invoke("--json", "run", SELECT_GATHER, "--seed", "x")
    assert usage.exit_code == 2 and as_json(usage)["error"]["type"] == "UsageError"


def test_shape_override_and_data_shape():
    missing = invoke(DYNAMIC, "--fill", "random")
    assert missing.exit_code == 4 and "--data-shape 'cond=[1,4]'" in missing.stderr
    data = as_json(invoke(DYNAMIC, "--fill", "random", "--shape", "cond=[3,4]", "--shape", "then=[3,4]",
                          "--shape", "indices=[2,2]", "--json"))
    assert [i["shape"] for i in data["inputs"]] == [[3, 4], [3, 4], [4], [2, 2]]
    given = as_json(invoke(DYNAMIC, "--fill", "random", "--data-shape", "cond=[5,4]", "--data-shape", "then=[1,4]",
                           "--data-shape", "indices=[1,3]", "--json"))
    assert given["outputs"][0]["shape"] == [5, 4] and given["outputs"][1]["shape"] == [5, 1, 3]
    wrong = invoke(DYNAMIC, "--fill", "random", "--data-shape", "cond=[11,4]")
    assert wrong.exit_code == 4 and "does not fit" in wrong.stderr
    bad_shape = invoke(DYNAMIC, "--fill", "random", "--shape", "cond=[3,5]", "--shape", "then=[3,5]")
    assert bad_shape.exit_code == 4 and "--shape" in bad_shape.stderr


def test_dynamic_shapes_that_do_not_broadcast_are_bad_input(tmp_path):
    np.save(tmp_path / "c.npy", np.ones((2, 4), bool))
    np.save(tmp_path / "t.npy", np.ones((3, 4), np.float32))
    result = invoke(DYNAMIC, "-i", f"cond={tmp_path / 'c.npy'}", "-i", f"then={tmp_path / 't.npy'}", "--fill", "ones",
                    "--data-shape", "indices=[1,1]")
    assert result.exit_code == 4 and "do not fit the model" in result.stderr


def test_bf16_inputs_from_npy(tmp_path):
    model = typed_model(tmp_path, "bf16")
    import ml_dtypes

    np.save(tmp_path / "x.npy", np.array([[1.5, 2, 3], [4, 5, 6]], ml_dtypes.bfloat16))
    out = tmp_path / "o.npz"
    result = invoke(model, "-i", tmp_path / "x.npy", "--json", "-o", out)
    assert result.exit_code == 0, result.output
    assert as_json(result)["outputs"][0]["values"][:2] == [1.5, 2.0]


def test_out_of_memory_is_a_resource_error(monkeypatch):
    def exhausted(*_args, **_kwargs):
        raise MemoryError("cannot allocate 80 GiB")

    monkeypatch.setattr(run_module, "array_stats", exhausted)
    result = invoke(SELECT_GATHER, "--fill", "zeros", debug=False)
    assert result.exit_code == 6 and "out of memory: cannot allocate 80 GiB" in result.stderr


def test_unwritable_output_exit_74_and_nothing_left(tmp_path):
    result = invoke(SELECT_GATHER, "--fill", "zeros", "-o", tmp_path / "no" / "such" / "out.npz")
    assert result.exit_code == 74 and "the folder" in result.stderr and "no/such" in result.stderr
    (tmp_path / "dir.npz").mkdir()
    assert invoke(SELECT_GATHER, "--fill", "zeros", "-o", tmp_path / "dir.npz").exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.npz"]


def test_a_folder_that_cannot_be_created_is_exit_74(tmp_path):
    (tmp_path / "file").write_text("a regular file, not a folder")
    result = invoke(SELECT_GATHER, "--fill", "zeros", "--dump-intermediate", tmp_path / "file" / "layers", debug=False)
    assert result.exit_code == 74, result.output
    assert "cannot create the folder" in result.stderr and "file/layers" in result.stderr


@pytest.fixture
def umask():
    """Set the process's umask for the test, then restore it."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002], ids=oct)
def test_written_files_get_the_mode_open_gives_them(tmp_path, umask, mask):
    umask(mask)
    out, inputs, layers = tmp_path / "out.npz", tmp_path / "in.json", tmp_path / "layers"
    result = invoke(SELECT_GATHER, "--fill", "zeros", "-o", out, "--save-inputs", inputs, "--dump-intermediate", layers)
    assert result.exit_code == 0, result.output
    written = [out, inputs, *layers.iterdir()]
    assert len(written) == 5 and {stat.S_IMODE(p.stat().st_mode) for p in written} == {0o666 & ~mask}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.json", "layers", "out.npz"]  # no temporary left


def test_a_replaced_file_keeps_its_mode(tmp_path, umask):
    out = tmp_path / "out.npz"
    out.write_bytes(b"old")
    out.chmod(0o664)
    umask(0o077)
    assert invoke(SELECT_GATHER, "--fill", "zeros", "-o", out).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o664 and set(load_npz(out)) == {"out"}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device that is always full)")
@pytest.mark.parametrize("args", [["inspect", SELECT_GATHER, "--format", "dot"], ["--json", "inspect", SELECT_GATHER],
                                  [SELECT_GATHER, "--fill", "zeros"]])
def test_a_full_stdout_is_exit_74(args):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "ir_runner", *map(str, args)], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=60, env={k: v for k, v in os.environ.items() if k != "IR_RUN_DEBUG"})
    assert done.returncode == 74, done.stderr
    assert done.stderr == "error: cannot write the result to stdout: No space left on device\n"


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
    result = invoke(dynamic_type_model(tmp_path), "-i", "y=zeros", "--value", "x=[[1,2,3],[4,5,6]]",
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
