"""``ir-run compare A B``: tolerances, the mismatch report, exact integers, NaN, shapes, files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ir_runner.cli.compare import Tolerances, compare_array
from tests.cli.clikit import as_json, invoke


def _pair(tmp_path, actual, expected, suffix=".npz"):
    a, e = tmp_path / f"a{suffix}", tmp_path / f"e{suffix}"
    for path, arrays in ((a, actual), (e, expected)):
        if suffix == ".npz":
            np.savez(path, **arrays)
        elif suffix == ".npy":
            np.save(path, arrays)
        else:
            path.write_text(json.dumps(arrays))
    return a, e


def test_identical_files_pass(tmp_path):
    a, e = _pair(tmp_path, {"x": np.arange(6, dtype=np.float32)}, {"x": np.arange(6, dtype=np.float32)})
    result = invoke("compare", a, e)
    assert result.exit_code == 0 and "comparison: 1 array(s), all match" in result.stdout


def test_report_of_a_float_mismatch(tmp_path):
    got = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], np.float32)
    want = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    a, e = _pair(tmp_path, {"out": got}, {"out": want})
    result = invoke("compare", a, e)
    assert result.exit_code == 1
    text = result.stdout
    assert "rule        |actual - expected| <= atol + rtol * |expected|" in text
    assert "(atol=0.0001 rtol=0.001, default for f32)" in text
    assert "mismatched  1 of 6 (16.667%)" in text
    assert "max abs     0.5 at [1, 2]: actual 6.5, expected 6" in text
    assert "first       [1, 2] 6.5 vs 6" in text
    assert "would pass  atol >= 0.494 (rtol=0.001) or rtol >= 0.0833167 (atol=0.0001)" in text
    data = as_json(invoke("compare", a, e, "--json"))
    report = data["comparison"]["outputs"][0]
    assert report["mismatched"] == 1 and report["total"] == 6
    assert report["max_abs"] == {"value": 0.5, "index": [1, 2], "actual": 6.5, "expected": 6.0}
    assert report["first_mismatches"] == [{"index": [1, 2], "actual": 6.5, "expected": 6.0}]
    assert isinstance(report["mismatched_percent"], float) and data["exit_code"] == 1


def test_tolerances_global_and_per_output(tmp_path):
    a, e = _pair(tmp_path, {"p": np.float32([1.0, 2.05]), "q": np.float32([1.0])},
                 {"p": np.float32([1.0, 2.0]), "q": np.float32([1.2])})
    assert invoke("compare", a, e).exit_code == 1
    assert invoke("compare", a, e, "--atol", "0.06").exit_code == 1
    assert invoke("compare", a, e, "--atol", "0.06", "--atol", "q=0.2").exit_code == 0
    assert invoke("compare", a, e, "--rtol", "0.2").exit_code == 0
    assert invoke("compare", a, e, "--atol", "p=x").exit_code == 2
    assert invoke("compare", a, e, "--atol", "-1").exit_code == 2


def test_integers_and_booleans_are_exact_by_default(tmp_path):
    a, e = _pair(tmp_path, {"i": np.int64([2**62, 5]), "b": np.array([True, False])},
                 {"i": np.int64([2**62 + 1, 5]), "b": np.array([True, True])})
    data = as_json(invoke("compare", a, e, "--json"))
    reports = {r["name"]: r for r in data["comparison"]["outputs"]}
    assert reports["i"]["mismatched"] == 1 and reports["i"]["tolerance"] == "integer/boolean: exact"
    assert reports["b"]["mismatched"] == 1 and reports["b"]["atol"] == 0.0
    assert "rule        exact" in invoke("compare", a, e).stdout


def test_nan_and_inf_handling(tmp_path):
    got = np.array([np.nan, np.inf, 1.0, np.nan], np.float32)
    want = np.array([np.nan, np.inf, 1.0, 2.0], np.float32)
    a, e = _pair(tmp_path, {"x": got}, {"x": want})
    result = invoke("compare", a, e)
    assert result.exit_code == 1
    assert "mismatched  1 of 4" in result.stdout and "nan / inf   actual 2 / 1, expected 1 / 1" in result.stdout
    assert "would pass  never" in result.stdout
    report = as_json(invoke("compare", a, e, "--json"))["comparison"]["outputs"][0]
    assert report["first_mismatches"] == [{"index": [3], "actual": "NaN", "expected": 2.0}]


def test_shape_dtype_missing_and_extra(tmp_path):
    a, e = _pair(tmp_path, {"x": np.zeros((2, 3), np.float32), "y": np.zeros(2, np.float16), "extra": np.zeros(1)},
                 {"x": np.zeros((3, 2), np.float32), "y": np.zeros(2, np.float32), "gone": np.zeros(1)})
    result = invoke("compare", a, e)
    assert result.exit_code == 1
    assert "problem     shape [2,3] differs from [3,2]" in result.stdout
    assert "problem     element type f16 differs from f32" in result.stdout
    assert "gone  missing" in result.stdout and "extra  not in" in result.stdout
    assert "3 of 3 FAILED" in result.stdout


def test_npy_json_and_key_syntax(tmp_path):
    a, e = _pair(tmp_path, np.arange(4, dtype=np.int32), np.arange(4, dtype=np.int32), suffix=".npy")
    assert invoke("compare", a, e).exit_code == 0
    (tmp_path / "ref.json").write_text(json.dumps({"x": [0, 1, 2, 3]}))
    np.savez(tmp_path / "many.npz", x=np.arange(4, dtype=np.int32), y=np.ones(2))
    assert invoke("compare", f"{tmp_path / 'many.npz'}:x", tmp_path / "ref.json").exit_code == 0
    assert invoke("compare", a, tmp_path / "ref.json").exit_code == 0
    assert invoke("compare", tmp_path / "many.npz", a).exit_code == 4
    assert invoke("compare", tmp_path / "nope.npz", a).exit_code == 4


@pytest.mark.parametrize(("dtype", "atol"), [(np.float64, 1e-8), (np.float16, 1e-2), (np.float32, 1e-4)])
def test_dtype_aware_defaults(dtype, atol):
    report = compare_array("x", np.zeros(1, dtype), np.zeros(1, dtype), Tolerances())
    assert report["atol"] == atol and report["passed"]


def test_max_mismatches_limits_the_list(tmp_path):
    a, e = _pair(tmp_path, {"x": np.arange(10)}, {"x": np.zeros(10, np.int64)})
    report = as_json(invoke("compare", a, e, "--json", "--max-mismatches", "2"))["comparison"]["outputs"][0]
    assert [m["index"] for m in report["first_mismatches"]] == [[1], [2]] and report["mismatched"] == 9
