"""One casting policy: the levels no/safe/same_kind/unsafe mean the same in ``Model.run(cast=)`` and in
``ir-run --cast``; every refusal's hint names a call that then works; a CastWarning points at the caller."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import ir_runner
from tests.cli.clikit import invoke, typed_model

CASES = [  # (input element type, array)
    ("boolean", np.array([[0, 1, 1], [1, 0, 0]], np.int64)),   # 0/1 integers for a boolean input
    ("boolean", np.array([[0, 2, 1], [1, 0, 0]], np.int64)),   # 2 is no boolean
    ("i32", np.array([[1, 2, 3], [4, 5, 6]], np.int64)),
    ("i32", np.array([[1, 2, 3], [4, 5, 2**40]], np.int64)),  # numpy's same_kind would wrap 2**40
    ("i32", np.array([[1, 2, 3], [4, 5, 6]], np.int16)),      # safe
    ("i32", np.array([[1.5, 2, 3], [4, 5, 6]], np.float64)),  # floats never become integers but by unsafe
    ("f32", np.array([[1.5, 2, 3], [4, 5, 6]], np.float64)),
    ("f32", np.array([[1e300, 2, 3], [4, 5, 6]], np.float64)),  # would overflow to inf
    ("f16", np.array([[1, 2, 3], [4, 5, 70000]], np.int32)),    # 70000 is inf in f16
    ("u8", np.array([[0, 1, 2], [3, 4, 255]], np.int64)),
    ("u8", np.array([[0, 1, 2], [3, 4, -1]], np.int64)),
    ("f32", np.array([[True, False, True], [False, True, False]])),
]
LEVELS = ["no", "safe", "same_kind", "unsafe"]


def _library(model: ir_runner.Model, array: np.ndarray, level: str):
    """(output or None, error or None) of Model.run with cast=level."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ir_runner.CastWarning)
        try:
            return next(iter(model.run({"x": array}, cast=level).values())), None
        except ir_runner.InputError as exc:
            return None, exc


def _cli(xml: Path, npy: Path, level: str, tmp_path: Path):
    out = tmp_path / f"out_{level}.npy"
    result = invoke(xml, "--input", f"x={npy}", "--cast", level, "--output", out, "-q")
    return (np.load(out) if result.exit_code == 0 else None), result


@pytest.mark.parametrize("element_type, array", CASES, ids=[f"{a.dtype}->{t}-{i}" for i, (t, a) in enumerate(CASES)])
def test_library_and_cli_agree_on_every_level(element_type, array, tmp_path):
    xml = typed_model(tmp_path, element_type)
    model = ir_runner.load(xml)
    npy = tmp_path / "x.npy"
    np.save(npy, array)
    for level in LEVELS:
        library, error = _library(model, array, level)
        cli, result = _cli(xml, npy, level, tmp_path)
        assert (library is None) == (cli is None), (level, error, result.stderr)
        if library is not None:
            assert library.dtype == cli.dtype and library.tobytes() == cli.tobytes()
        else:
            assert result.exit_code == 4


def test_int64_zeros_and_ones_for_a_boolean_input_pass_same_kind_in_both(tmp_path):
    model = ir_runner.load(typed_model(tmp_path, "boolean"))
    flags = np.array([[0, 1, 1], [1, 0, 0]], np.int64)
    with pytest.warns(ir_runner.CastWarning):
        out = model.run({"x": flags}, cast="same_kind")["x"]
    assert out.dtype == np.bool_ and out.tolist() == flags.astype(bool).tolist()
    with pytest.raises(ir_runner.InputError, match="cannot cast int64 to bool under cast='safe'"):
        model.run({"x": flags}, cast="safe")


@pytest.mark.parametrize("element_type, array", CASES, ids=[f"{a.dtype}->{t}-{i}" for i, (t, a) in enumerate(CASES)])
@pytest.mark.parametrize("given", [None, "no", "safe", "same_kind"])
def test_every_library_hint_names_a_call_that_works(element_type, array, given, tmp_path):
    model = ir_runner.load(typed_model(tmp_path, element_type))
    _, error = _library(model, array, given)
    if error is None:
        return
    suggested = re.search(r"pass cast='(\w+)'", error.hint)
    assert suggested, error.hint
    assert LEVELS.index(suggested.group(1)) > LEVELS.index(given or "no")
    output, again = _library(model, array, suggested.group(1))
    assert again is None and output is not None


@pytest.mark.parametrize("element_type, array", CASES, ids=[f"{a.dtype}->{t}-{i}" for i, (t, a) in enumerate(CASES)])
@pytest.mark.parametrize("given", ["no", "safe", "same_kind"])
def test_every_cli_hint_names_a_flag_that_works(element_type, array, given, tmp_path):
    xml = typed_model(tmp_path, element_type)
    npy = tmp_path / "x.npy"
    np.save(npy, array)
    output, result = _cli(xml, npy, given, tmp_path)
    if output is not None:
        return
    suggested = re.search(r"hint: --cast (\w+) converts it", result.stderr)
    assert suggested, result.stderr
    output, again = _cli(xml, npy, suggested.group(1), tmp_path)
    assert output is not None, again.stderr


def test_cli_accepts_safe_and_library_accepts_no(tmp_path):
    xml = typed_model(tmp_path, "i32")
    npy = tmp_path / "x.npy"
    np.save(npy, np.ones((2, 3), np.int16))
    assert invoke(xml, "--input", f"x={npy}", "--cast", "safe", "-q").exit_code == 0
    with pytest.raises(ir_runner.InputError, match="cannot cast int16 to int32 under cast='no'") as caught:
        ir_runner.load(xml).run({"x": np.ones((2, 3), np.int16)}, cast="no")
    assert "pass cast='safe'" in caught.value.hint
    with pytest.raises(ir_runner.InputError, match="is not one of 'no', 'safe', 'same_kind', 'unsafe'"):
        ir_runner.load(xml).run({"x": np.ones((2, 3), np.int16)}, cast="equiv")


def test_cast_warning_points_at_the_callers_line(tmp_path):
    xml = typed_model(tmp_path, "f32")
    model = ir_runner.load(xml)
    integers = ir_runner.load(typed_model(tmp_path, "i32"))
    feed = np.ones((2, 3))
    calls = {
        "run": lambda: model.run({"x": feed}, cast="same_kind"),
        "call": lambda: model(feed, cast="same_kind"),
        "run by keyword": lambda: model.run(x=feed, cast="same_kind"),
        "python list": lambda: integers.run({"x": [[1.5, 2, 3], [4, 5, 6]]}, cast="unsafe"),
        "ir_runner.run": lambda: ir_runner.run(xml, {"x": feed}, cast="same_kind"),
    }
    for what, call in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        casts = [w for w in caught if issubclass(w.category, ir_runner.CastWarning)]
        assert len(casts) == 1, what
        assert Path(casts[0].filename) == Path(__file__), (what, casts[0].filename)
