"""Quantized models against OpenVINO's devices: crosscheck explains a FakeQuantize level flipped by a rounding
tie (its input one ulp apart) as such, and attributes what follows from it to it (``OpDef.explain``).

The device's side is the CPU plugin's run with the quantization's input moved by one ulp where the test says
(``_nudged_device``): which elements flip does not depend on the CPU, and neither does the verdict."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from ir_runner.divergence import AGREE, DIVERGES, EXPLAINED, INHERITED
from ir_runner.ops.quantize import OPS, fake_quantize
from tests.cli.clikit import invoke

ov = pytest.importorskip("openvino")
from openvino import opset13 as op  # noqa: E402

LEVELS, LOW, HIGH = 256, -3.0, 3.0
STEP = (HIGH - LOW) / (LEVELS - 1)
LIMITS = [np.array(v, np.float32) for v in (LOW, HIGH, LOW, HIGH)]


def _tie(level: int) -> np.float32:
    """The largest f32 that the reference quantizes to ``level`` (the next one up goes to ``level + 1``)."""
    def rank(value: np.float32) -> float:
        return float(np.rint((fake_quantize(np.array([value]), *LIMITS, levels=LEVELS, mode="numpy", axis=1)[0]
                              - LOW) / STEP))

    x = np.float32(LOW + (level + 0.5) * STEP)
    while rank(x) > level:
        x = np.nextafter(x, np.float32(-np.inf))
    while rank(np.nextafter(x, np.float32(np.inf))) == level:
        x = np.nextafter(x, np.float32(np.inf))
    return x


def _model(tmp_path) -> str:
    """x -> MatMul by [[1]] 'pre' (compared within the tolerance, as a convolution) -> FakeQuantize 'fq' ->
    Multiply by 2 'after' -> Result."""
    x = op.parameter([64, 1], np.float32, name="x")
    pre = op.matmul(x, op.constant(np.ones((1, 1), np.float32)), False, False, name="pre")
    fq = op.fake_quantize(pre, *[op.constant(v) for v in LIMITS], LEVELS, name="fq")
    after = op.multiply(fq, op.constant(np.float32(2)), name="after")
    path = str(tmp_path / "fq.xml")
    ov.save_model(ov.Model([after], [x], "fq"), path, compress_to_fp16=False)
    return path


def _feeds() -> np.ndarray:
    x = np.linspace(-2.9, 2.9, 64, dtype=np.float32)
    x[[5, 40]] = _tie(30), _tie(200)  # two inputs on a boundary between two levels
    return x.reshape(64, 1)


def _nudged_device(monkeypatch, moved: list[int], level_off: list[int] = ()):
    """The device's run, with 'pre' moved one ulp up at ``moved`` (as a device computing it otherwise would)
    and 'fq' and 'after' computed from it; ``level_off``: elements of 'fq' moved one level for no reason."""
    from ir_runner import device

    real = device.run_on_device

    def run(*args, **kwargs):
        result = real(*args, **kwargs)
        pre = result.values[("pre", 0)].copy()
        pre[moved, 0] = np.nextafter(pre[moved, 0], np.float32(np.inf))
        fq = fake_quantize(pre, *LIMITS, levels=LEVELS, mode="numpy", axis=1)
        fq[list(level_off), 0] += np.float32(STEP)
        result.values.update({("pre", 0): pre, ("fq", 0): fq, ("after", 0): fq * np.float32(2)})
        return result

    monkeypatch.setattr(device, "run_on_device", run)


def test_a_level_flipped_by_a_one_ulp_input_is_explained_and_what_follows_inherits_it(tmp_path, monkeypatch):
    _nudged_device(monkeypatch, [5, 40])
    report = ir_runner.crosscheck(_model(tmp_path), {"x": _feeds()})
    rows = {row.layer.name: row for row in report.layers}
    assert rows["pre"].status == AGREE  # (one ulp: within the tolerance, which then applies downstream)
    assert rows["fq"].status == EXPLAINED and rows["fq"].mismatches == 2
    assert rows["fq"].note == ("2 of 64 values one level apart (step 0.0235); their inputs differ by at most 1 ulp"
                               " (f32) — a rounding tie, not an error")
    assert rows["after"].status == INHERITED and rows["after"].cause.name == "fq"
    assert report.ok and report.first is None  # no fault of either side


def test_a_level_apart_away_from_a_boundary_is_a_divergence(tmp_path, monkeypatch):
    _nudged_device(monkeypatch, [5], level_off=[20])
    report = ir_runner.crosscheck(_model(tmp_path), {"x": _feeds()})
    rows = {row.layer.name: row for row in report.layers}
    assert rows["fq"].status == DIVERGES and not report.ok and report.first_divergence.name == "fq"
    assert rows["fq"].note.startswith("1 of 64 values one level apart") and rows["fq"].note.endswith(
        "; 1 other(s) unexplained")


def test_the_cli_says_which_quantization_and_exits_0(tmp_path, monkeypatch):
    _nudged_device(monkeypatch, [40])
    np.save(tmp_path / "x.npy", _feeds())
    result = invoke("crosscheck", _model(tmp_path), "--input", f"x={tmp_path / 'x.npy'}")
    assert result.exit_code == 0, result.output
    assert "1 explained, 1 inherited" in result.stdout
    assert ("explained: layer 'fq' (FakeQuantize-1, id 7): 1 of 64 values one level apart (step 0.0235); their"
            " inputs differ by at most 1 ulp (f32) — a rounding tie, not an error") in result.stdout
    assert "ok: no unexplained divergence from CPU; 1 later layer output(s) differ only because an explained one" \
        in result.stdout


def test_the_explanation_tells_ties_and_the_same_level_from_errors():
    explain = OPS[0].explain
    params = {"levels": LEVELS, "mode": "numpy", "axis": 1}
    x = np.array([_tie(3), _tie(7), 0.5, 1.0, 2.0], np.float32)
    ours = fake_quantize(x, *LIMITS, **params)
    other_x = x.copy()
    other_x[:2] = np.nextafter(x[:2], np.float32(np.inf))
    theirs = fake_quantize(other_x, *LIMITS, **params)
    theirs[2] = np.nextafter(theirs[2], np.float32(0))  # the same level, a rounding apart
    theirs[3] += np.float32(STEP)  # a level apart, equal inputs away from a boundary: unexplained
    theirs[4] += np.float32(2 * STEP)  # two levels apart: unexplained
    differ = ours != theirs
    assert differ.tolist() == [True] * 5
    account = explain(params, [x, *LIMITS], [other_x, *LIMITS], ours, theirs, differ)
    assert account.count == 3
    assert account.text == ("2 of 5 values one level apart (step 0.0235); their inputs differ by at most 1 ulp (f32)"
                            " — a rounding tie, not an error; 1 on the same level differ by at most 5.96e-08 (the"
                            " device computes a level's value by its own formula)")
    unknown = explain(params, [x, *LIMITS], [None] * 5, ours, theirs, differ)  # ties known from our inputs alone
    assert unknown.count == 3 and "the device's input is not known here" in unknown.text
    ints = [v.astype(np.int32) for v in (x, *LIMITS)]
    assert explain(params, ints, [None] * 5, ours, theirs, differ) is None
