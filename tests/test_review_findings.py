"""Regression tests for the findings of a code review: each failed before its fix."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ir_runner
from tests.conftest import MODELS
from tests.helpers.irbuild import IRBuilder
from tests.helpers.threads import in_threads


def boolean_const_convert_model() -> tuple[bytes, bytes]:
    b = IRBuilder("boolconst")
    flags = b.const("flags", np.array([1, 2, 255], np.uint8).view(np.bool_))
    b.result(b.convert(flags, "i32"), "out")
    return b.build()


def test_boolean_const_bytes_convert_as_signed_chars():
    """OpenVINO keeps a boolean Const's raw bytes: Convert to i32 reads 2 and 255 as 2 and -1."""
    xml, weights = boolean_const_convert_model()
    out = ir_runner.load(xml, weights).run({})["out"]
    assert out.tolist() == [1, 2, -1]


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


def test_strict_gather_refuses_nan_float_indices():
    b = IRBuilder("nan_index")
    data = b.parameter("data", "f32", "3")
    indices = b.parameter("indices", "f32", "1")
    axis = b.const("axis", np.array(0, np.int64))
    g = b.layer("Gather", "opset1", [data, indices, axis], out_specs=[("FP32", [1])])
    b.result(g, "out")
    model = ir_runner.load(*b.build(), strict=True)
    with pytest.raises(ir_runner.IndexOutOfRangeError, match="nan"):
        model.run({"data": np.zeros(3, np.float32), "indices": np.array([np.nan], np.float32)})


@pytest.mark.parametrize("version", ["opset\u00b2", "opset\u0663"])
def test_non_ascii_opset_digits_are_not_versions(version):
    b = IRBuilder("digits")
    x = b.parameter("x", "f32", "2")
    b.result(b.layer("Convert", version, [x], attrs={"destination_type": "f16"}, out_specs=[("FP16", [2])]))
    with pytest.raises(ir_runner.UnsupportedError, match="not implemented"):
        ir_runner.load(*b.build())
    assert not ir_runner.validate(*b.build()).complete


def test_non_ascii_net_version_is_refused():
    with pytest.raises(ir_runner.ModelFormatError, match="version"):
        ir_runner.load('<net version="\u00b2"><layers/></net>'.encode())


def test_nul_byte_in_model_path():
    with pytest.raises(ir_runner.ModelFormatError, match="cannot read"):
        ir_runner.load("model\x00.xml")


def select_gather():
    return ir_runner.load(MODELS / "select_gather.xml")


@pytest.mark.parametrize("value", [np.array([["x"] * 3] * 2), [["x"] * 3] * 2, np.array([[b"x"] * 3] * 2)])
def test_string_feeds_are_refused_even_with_unsafe_cast(value):
    model = select_gather()
    feeds = {"cond": np.ones((2, 3), bool), "then": value, "else": np.zeros((2, 3), np.float32)}
    with pytest.raises(ir_runner.InputError, match="'then'"):
        model.run(feeds, cast="unsafe")


@pytest.mark.parametrize("feeds", [5, "cond", 2.5])
def test_feeds_that_are_neither_mapping_nor_sequence(feeds):
    with pytest.raises(ir_runner.InputError, match="mapping"):
        select_gather().run(feeds)


def test_input_given_in_mapping_and_by_keyword():
    model = select_gather()
    feeds = {"cond": np.ones((2, 3), bool), "then": np.ones((2, 3), np.float32),
             "else": np.zeros((2, 3), np.float32)}
    with pytest.raises(ir_runner.InputError, match="given twice"):
        model.run(feeds, cond=np.zeros((2, 3), bool))


def test_non_contiguous_memoryview_weights():
    xml, weights = boolean_const_convert_model()
    padded = np.zeros(len(weights) * 2, np.uint8)
    padded[::2] = np.frombuffer(weights, np.uint8)
    out = ir_runner.load(xml, memoryview(padded[::2])).run({})["out"]
    assert out.tolist() == [1, 2, -1]


def test_first_use_from_many_threads_at_once():
    """The operation registry is filled once, under a lock: concurrent first loads all succeed."""
    script = textwrap.dedent(f"""
        import threading, ir_runner
        barrier, errors = threading.Barrier(8), []
        def work():
            barrier.wait()
            try:
                ir_runner.load({str(MODELS / "gather1.xml")!r})
            except Exception as exc:
                errors.append(exc)
        threads = [threading.Thread(target=work) for _ in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(len(errors))
    """)
    for _ in range(3):
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        assert result.stdout.strip() == "0", result.stdout + result.stderr


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


def test_concurrent_loads_leave_the_garbage_collector_on():
    import gc

    assert gc.isenabled()
    feeds = dict(np.load(MODELS / "dynamic.inputs.npz"))

    def work(_: int) -> None:
        for _ in range(20):
            ir_runner.load(MODELS / "dynamic.xml").run(feeds)

    in_threads(work)
    assert gc.isenabled()


@pytest.mark.parametrize("extra", ["<note>7</note>", "<note>-5</note>", "<rt_info><attribute name='x'/></rt_info>"])
def test_port_children_other_than_dims_are_ignored(extra):
    xml = (MODELS / "select_gather.xml").read_text()
    port = '<port id="0" precision="BOOL" names="cond">'
    xml = xml.replace(port, port + extra, 1)
    assert extra in xml
    model = ir_runner.load(xml.encode(), (MODELS / "select_gather.bin").read_bytes())
    assert model.inputs[0].shape == (2, 3)
