"""What the library says about a missing model file, a path with a NUL byte, and names that differ only in
case."""

import numpy as np
import pytest

import ir_runner
from tests.conftest import MODELS


def test_a_missing_model_is_a_model_format_error_and_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        ir_runner.load(tmp_path / "missing.xml")
    assert isinstance(caught.value, ir_runner.ModelFormatError)
    assert isinstance(caught.value, ir_runner.ModelFileNotFoundError)
    assert str(caught.value) == f"model file '{tmp_path / 'missing.xml'}' does not exist"
    assert caught.value.exit_code == 3
    with pytest.raises(FileNotFoundError):
        ir_runner.run(tmp_path / "missing.xml", {})


def test_a_model_named_without_xml_is_suggested(monkeypatch):
    monkeypatch.chdir(MODELS)
    with pytest.raises(FileNotFoundError) as caught:
        ir_runner.load("select_gather")
    assert caught.value.hint == "did you mean 'select_gather.xml'?"


def test_an_input_name_in_another_case_is_suggested():
    model = ir_runner.load(MODELS / "select_gather.xml")
    feeds = {"COND": np.ones((2, 3), bool), "then": np.ones((2, 3), np.float32), "else": np.ones((2, 3), np.float32)}
    with pytest.raises(ir_runner.InputError, match="no input named 'COND'") as caught:
        model.run(feeds)
    assert caught.value.hint.startswith("did you mean 'cond'?")


def test_nul_byte_in_model_path():
    with pytest.raises(ir_runner.ModelFormatError, match="cannot read"):
        ir_runner.load("model\x00.xml")
