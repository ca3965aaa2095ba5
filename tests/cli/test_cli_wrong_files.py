"""Files that are not an IR, given where a model (or a run record) is expected: each gets one message that
says what the file is and what to do instead."""

import json

import numpy as np
import pytest

import ir_runner
from tests.cli.clikit import SELECT_GATHER, invoke
from tests.conftest import MODELS

ONNX_HEAD = b"\x08\x07\x12\x07pytorch\x1a\x052.1.0:\x00"  # ir_version 7, producer_name "pytorch", version


@pytest.mark.parametrize("name, content, says", [
    ("model.onnx", b"\x00\x01garbage", "an ONNX model"),
    ("model", ONNX_HEAD, "an ONNX model"),                      # recognised by its bytes
    ("frozen.pb", b"\n\x0e\n\x01x\x12\x0bPlaceholder", "a TensorFlow protobuf model"),
])
def test_models_of_other_frameworks_say_how_to_convert(tmp_path, name, content, says):
    path = tmp_path / name
    path.write_bytes(content)
    for args in ([path], ["validate", path], ["inspect", path]):
        result = invoke(*args)
        assert result.exit_code == 3
        text = result.stdout + result.stderr  # validate reports on stdout, the others on stderr
        assert f"is {says}" in text and "not an OpenVINO IR (.xml)" in text
        assert f"`ovc {name}`" in text and "openvino.convert_model(" in text
    with pytest.raises(ir_runner.ModelFormatError, match=says):
        ir_runner.load(path)


def test_array_files_given_as_the_model_say_to_pass_them_with_input(tmp_path):
    np.save(tmp_path / "x.npy", np.ones(3))
    for path in (tmp_path / "x.npy", MODELS / "select_gather.inputs.npz"):
        result = invoke(path, "--fill", "zeros")
        assert result.exit_code == 3
        assert "not an OpenVINO IR (.xml)" in result.stderr and "pass it with --input" in result.stderr
        assert "binary weights" not in result.stderr


def test_a_model_name_without_xml_suggests_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(MODELS)
    result = invoke("select_gather", "--fill", "zeros")
    assert result.exit_code == 2
    assert "Did you mean the model 'select_gather.xml'?" in result.stderr
    explicit = invoke("run", "select_gather", "--fill", "zeros")
    assert explicit.exit_code == 3 and "did you mean 'select_gather.xml'?" in explicit.stderr
    plain = invoke("selec")
    assert plain.exit_code == 2 and "No such command 'selec'" in plain.stderr


def test_replay_of_a_file_that_is_not_a_run_record_says_what_replay_reads(tmp_path):
    (tmp_path / "list.json").write_text(json.dumps([1, 2]))
    for path in (MODELS / "select_gather.inputs.npz", MODELS / "select_gather.bin", tmp_path / "list.json"):
        result = invoke("replay", path)
        assert result.exit_code == 4
        assert "codec" not in result.stderr
        assert "--save-run run.json" in result.stderr, result.stderr


def test_the_real_model_still_reads(tmp_path):
    assert invoke(SELECT_GATHER, "--fill", "zeros", "-q").exit_code == 0


@pytest.mark.parametrize(("xml_files", "hint"), [
    (["model.xml"], "did you mean '{folder}/model.xml'?"),
    (["b.xml", "a.xml"], "it holds 2 .xml files: '{folder}/a.xml', '{folder}/b.xml'; pass one of them"),
    ([], None),
])
def test_a_folder_given_as_the_model_suggests_the_xml_it_holds(tmp_path, xml_files, hint):
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "model.bin").write_bytes(b"")
    for name in xml_files:
        (folder / name).write_bytes(SELECT_GATHER.read_bytes())
    for args in ([folder], ["validate", folder], ["inspect", folder]):
        result = invoke(*args)
        text = result.stdout + result.stderr
        assert result.exit_code == 3 and f"'{folder}' is a directory, not a model .xml" in text
        assert (hint is None and "hint" not in text) or f"hint: {hint.format(folder=folder)}" in text, text


@pytest.mark.parametrize(("content", "says"), [(b"", "is empty (0 bytes)"),
                                               (b" \n\n", "is empty: 3 bytes of whitespace")])
def test_an_empty_xml_is_called_empty(tmp_path, content, says):
    path = tmp_path / "model.xml"
    path.write_bytes(content)
    result = invoke(path)
    assert result.exit_code == 3 and f"'{path}' {says}" in result.stderr and "not XML" not in result.stderr


def test_an_output_file_that_is_a_symlink_is_written_through(tmp_path):
    """--output to a symlink writes its target (atomically) and keeps the link, as a plain open() would (the
    link was replaced by a file)."""
    target = tmp_path / "store" / "out.npz"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "out.npz"
    link.symlink_to(target)
    result = invoke("run", SELECT_GATHER, "--fill", "random", "--seed", "1", "--output", link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and link.resolve() == target.resolve()
    with np.load(target) as written:
        assert written.files
