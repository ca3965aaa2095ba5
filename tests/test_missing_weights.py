"""A model whose .bin is missing: validate says so once, takes the declared specs of the Consts it cannot
read, and raises no error that follows only from that (no "axis must be constant"); an edge whose producer
needed the missing values compares its two declared ends, so the edited layer is named, not its consumer."""

import shutil
from pathlib import Path

import pytest

import ir_runner
from tests.cli.clikit import invoke
from tests.conftest import MODELS, ROOT


@pytest.fixture
def without_bin(tmp_path) -> Path:
    shutil.copy(MODELS / "select_gather.xml", tmp_path)
    shutil.copy(ROOT / "examples" / "edited.xml", tmp_path)
    return tmp_path


def test_validate_says_once_that_the_weights_are_missing(without_bin):
    report = ir_runner.validate(without_bin / "select_gather.xml")
    (error,) = report.errors
    assert isinstance(error, ir_runner.WeightsFileNotFoundError) and isinstance(error, FileNotFoundError)
    assert "2 Const layer(s) ('indices', 'axis') cannot be read: the weights file" in str(error)
    assert "select_gather.bin' does not exist" in str(error)
    assert "--weights" in error.hint
    text = str(report)
    assert "axis must be constant" not in text and text.count("does not exist") == 1
    gather_out = [line for line in text.splitlines() if line.startswith("  gather") and " out 0 " in line]
    assert gather_out and gather_out[0].rstrip().endswith("not checked")


def test_an_edited_layer_is_named_even_without_its_weights(without_bin):
    report = ir_runner.validate(without_bin / "edited.xml")
    assert [type(e) for e in report.errors] == [ir_runner.WeightsFileNotFoundError, ir_runner.DeclaredMismatchError]
    edge = str(report.errors[1])
    assert "the edge from layer 'gather' (Gather-7" in edge and "declares FP32[3,2] at its start and FP32[2,2]" in edge
    assert "declare <dim>s" not in edge and "axis must be constant" not in str(report)


def test_the_cli_says_it_once_and_run_says_it_clearly(without_bin):
    result = invoke("validate", without_bin / "select_gather.xml")
    assert result.exit_code == 3 and result.stdout.count("does not exist") == 1
    assert "select_gather.xml: INVALID, 1 error(s)" in result.stdout
    ran = invoke(without_bin / "select_gather.xml", "--fill", "zeros")
    assert ran.exit_code == 3 and "select_gather.bin' does not exist" in ran.stderr
