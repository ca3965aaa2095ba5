"""Usage mistakes: tolerance names that are no output, --json keeping click's "Did you mean", names that
differ only in case."""

import json

import numpy as np
import pytest

from tests.cli.clikit import SELECT_GATHER, invoke


@pytest.mark.parametrize("option", ["--atol", "--rtol"])
def test_a_tolerance_for_an_output_that_does_not_exist_is_an_error_listing_the_outputs(option, tmp_path):
    ref = tmp_path / "ref.npz"
    np.savez(ref, out=np.zeros((2, 2), np.float32))
    for extra in ([], ["--ref", ref]):
        result = invoke(SELECT_GATHER, "--fill", "zeros", option, "OUT=0.5", *extra, "-q")
        assert result.exit_code == 2, result.stderr
        assert "there is no output named 'OUT'; did you mean 'out'? the outputs are: 'out'" in result.stderr
    compared = invoke("compare", ref, ref, option, "outt=1")
    assert compared.exit_code == 2 and "no output named 'outt'" in compared.stderr
    assert invoke("compare", ref, ref, option, "out=1").exit_code == 0


@pytest.mark.parametrize("args, suggestion", [
    (["valdate", str(SELECT_GATHER)], "Did you mean 'validate'?"),
    ([str(SELECT_GATHER), "--inptu", "x"], "Did you mean one of: '--input'"),
])
def test_json_usage_errors_keep_did_you_mean(args, suggestion):
    result = invoke("--json", *args)
    assert result.exit_code == 2
    assert suggestion in json.loads(result.stdout)["error"]["message"]
    assert suggestion in result.stderr


def test_input_names_are_suggested_whatever_their_case():
    result = invoke(SELECT_GATHER, "--input", "COND=ones", "--fill", "zeros")
    assert result.exit_code == 4 and "did you mean 'cond'?" in result.stderr
