"""Quantized and weight-compressed models against OpenVINO's devices: crosscheck explains a FakeQuantize level
flipped by a rounding tie (its input one ulp apart) and a decompression subgraph computed in the inference
precision as such, and attributes what follows from them to them (``OpDef.explain``); ``run --ref`` names the
layers whose values sit on a rounding boundary, and ``compare`` sees a quantized output's levels.

The device's side is the CPU plugin's run with the quantization's input moved by one ulp where the test says
(``_nudged_device``): which elements flip does not depend on the CPU, and neither does the verdict."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ir_runner
from ir_runner.divergence import AGREE, DIVERGES, EXPLAINED, INHERITED, decompressions, rounding_ties
from ir_runner.ops.quantization.quantize import OPS, SAME_LEVEL_ULP, fake_quantize
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
    report = ir_runner.crosscheck(_model(tmp_path), {"x": _feeds()}, every_layer=True)
    rows = {row.layer.name: row for row in report.layers}
    assert rows["pre"].status == AGREE  # (one ulp: within the tolerance, which then applies downstream)
    assert rows["fq"].status == EXPLAINED and rows["fq"].mismatches == 2
    assert rows["fq"].note == ("2 of 64 values one level apart (step 0.0235); their inputs differ by at most 1 ulp"
                               " (f32) — a rounding tie, not an error")
    assert rows["after"].status == INHERITED and rows["after"].cause.name == "fq"
    assert report.ok and report.first is None  # no fault of either side


def test_a_level_apart_away_from_a_boundary_is_a_divergence(tmp_path, monkeypatch):
    _nudged_device(monkeypatch, [5], level_off=[20])
    report = ir_runner.crosscheck(_model(tmp_path), {"x": _feeds()}, every_layer=True)
    rows = {row.layer.name: row for row in report.layers}
    assert rows["fq"].status == DIVERGES and not report.ok and report.first_divergence.name == "fq"
    assert rows["fq"].note.startswith("1 of 64 values one level apart") and rows["fq"].note.endswith(
        "; 1 other(s) unexplained")


def test_a_cause_after_a_quantization_the_device_cannot_show_names_its_rounding_ties(tmp_path, monkeypatch):
    _nudged_device(monkeypatch, [40])
    from ir_runner import device

    nudged = device.run_on_device

    def fused(*args):  # the device fuses the quantization: its output cannot be shown
        result = nudged(*args)
        del result.values[("fq", 0)]
        result.unobservable[("fq", 0)] = "fused"
        return result

    monkeypatch.setattr(device, "run_on_device", fused)
    report = ir_runner.crosscheck(_model(tmp_path), {"x": _feeds()}, every_layer=True)
    assert report.first_divergence.name == "after"
    assert report.first.note == (
        "it reads layer output(s) CPU cannot show that hold values on a rounding boundary, where a level flipped"
        " there would first show here: 'fq' (FakeQuantize-1, id 7): 2 of 64 values one level apart (step 0.0235);"
        " their inputs differ by at most 1 ulp (f32) — a rounding tie, not an error")


def test_the_cli_says_which_quantization_and_exits_0(tmp_path, monkeypatch):
    _nudged_device(monkeypatch, [40])
    np.save(tmp_path / "x.npy", _feeds())
    result = invoke("crosscheck", _model(tmp_path), "--input", f"x={tmp_path / 'x.npy'}", "--every-layer")
    assert result.exit_code == 0, result.output
    assert "1 explained, 1 inherited" in result.stdout
    assert ("explained: layer 'fq' (FakeQuantize-1, id 7): 1 of 64 values one level apart (step 0.0235); their"
            " inputs differ by at most 1 ulp (f32) — a rounding tie, not an error") in result.stdout
    assert ("ok: no divergence from CPU: 1 differ as explained above and 1 later one(s) only because an explained"
            " one did (inherited)") in result.stdout and result.stdout.count("ok:") == 1


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


@pytest.mark.parametrize(("shift", "explained"), [(SAME_LEVEL_ULP, True), (SAME_LEVEL_ULP + 1, False),
                                                   (0.24 * STEP / np.spacing(np.float32(HIGH)), False)])
def test_the_same_level_is_explained_only_within_a_few_ulp_of_the_output_range(shift, explained):
    """The same level computed by another formula is a few ulp apart (at most 4 ulp of max(|output_low|,
    |output_high|) on the CPU plugin); a quarter of a step apart is an error (any difference up to half a step
    was explained)."""
    explain = OPS[0].explain
    params = {"levels": LEVELS, "mode": "numpy", "axis": 1}
    x = np.array([0.5, -1.0, 2.0, -2.5], np.float32)
    ours = fake_quantize(x, *LIMITS, **params)
    theirs = (ours.astype(np.float64) + shift * float(np.spacing(np.float32(HIGH)))).astype(np.float32)
    differ = ours != theirs
    assert differ.all()
    account = explain(params, [x, *LIMITS], [x, *LIMITS], ours, theirs, differ)
    assert (account is not None and account.count == 4) == explained


def _compressed(tmp_path) -> str:
    """NNCF's int8 weight compression: u8 -> Convert f16 -> Subtract zero point -> Multiply f16 scale -> Convert
    f32 'weights', added to x ('use')."""
    rng = np.random.default_rng(3)
    q = op.constant(rng.integers(0, 256, (16, 32)).astype(np.uint8))
    zero = op.convert(op.constant(rng.integers(100, 150, (16, 1)).astype(np.uint8)), np.float16)
    scale = op.constant((rng.random((16, 1)) * 0.01 + 0.001).astype(np.float16))
    weights = op.convert(op.multiply(op.subtract(op.convert(q, np.float16), zero), scale), np.float32,
                         name="weights")
    x = op.parameter([16, 32], np.float32, name="x")
    path = str(tmp_path / "compressed.xml")
    ov.save_model(ov.Model([op.add(x, weights, name="use")], [x], "compressed"), path, compress_to_fp16=False)
    return path


def _device_decompressing_in_f32(monkeypatch, off: float = 0.0):
    """The device's run with 'weights' computed from the same constants in f32 (times ``1 + off``)."""
    from ir_runner import device

    real = device.run_on_device

    def run(xml, weights, wanted, feeds, *rest):
        result = real(xml, weights, wanted, feeds, *rest)
        model = ov.Core().read_model(xml)
        nodes = {node.get_friendly_name(): node for node in model.get_ordered_ops()}
        multiply = nodes["weights"].input(0).get_source_output().get_node()
        subtract, scale = (multiply.input(i).get_source_output().get_node() for i in (0, 1))
        q, zero = (subtract.input(i).get_source_output().get_node().input(0).get_source_output().get_node()
                   for i in (0, 1))
        wide = ((q.get_data().astype(np.float32) - zero.get_data().astype(np.float32))
                * scale.get_data().astype(np.float32)) * np.float32(1 + off)
        result.values[("weights", 0)] = wide
        result.values[("use", 0)] = feeds["x"] + wide
        return result

    monkeypatch.setattr(device, "run_on_device", run)


def test_a_decompression_subgraph_computed_in_the_inference_precision_is_explained(tmp_path, monkeypatch):
    _device_decompressing_in_f32(monkeypatch)
    x = np.random.default_rng(4).standard_normal((16, 32)).astype(np.float32)
    report = ir_runner.crosscheck(_compressed(tmp_path), {"x": x}, every_layer=True)
    rows = {row.layer.name: row for row in report.layers}
    weights = rows["weights"]
    assert weights.source == "folded" and weights.status == EXPLAINED and weights.mismatches > 100
    assert weights.note.startswith(f"{weights.mismatches} of 512 values within half an ulp of f16 (at most ")
    assert weights.note.endswith("a decompression subgraph, computed from constants in f16 as the IR says"
                                 " (OpenVINO's reference too); CPU computes it in f32, its inference precision")
    assert rows["use"].status == INHERITED and rows["use"].cause.name == "weights" and report.ok


def test_a_constant_further_than_half_an_ulp_of_the_narrow_type_diverges(tmp_path, monkeypatch):
    _device_decompressing_in_f32(monkeypatch, off=2.0 ** -10)
    x = np.zeros((16, 32), np.float32)
    report = ir_runner.crosscheck(_compressed(tmp_path), {"x": x}, every_layer=True)
    assert report.first_divergence.name == "weights" and not report.ok


def test_the_cpu_plugin_on_a_compressed_model_differs_only_as_explained(tmp_path):
    """On any ISA: the CPU plugin computes the decompression in f32 (explained), or as the IR (agrees)."""
    x = np.random.default_rng(5).standard_normal((16, 32)).astype(np.float32)
    report = ir_runner.crosscheck(_compressed(tmp_path), {"x": x}, every_layer=True)
    statuses = {row.layer.name: row.status for row in report.layers}
    assert statuses["weights"] in (AGREE, EXPLAINED) and report.ok


def test_rounding_ties_names_the_quantization_whose_values_one_ulp_moves(tmp_path):
    model = ir_runner.load(_model(tmp_path))
    ties = rounding_ties(model, {"x": _feeds()})
    assert [(tie.layer.name, tie.count, tie.size) for tie in ties] == [("fq", 2, 64)]
    assert ties[0].text == ("2 of 64 values one level apart (step 0.0235); their inputs differ by at most 1 ulp"
                            " (f32) — a rounding tie, not an error")
    away = np.full((64, 1), LOW + 10.2 * STEP, np.float32)  # a fifth of a level from any boundary
    assert rounding_ties(model, {"x": away}) == []


def test_run_ref_says_where_values_sit_on_a_rounding_boundary(tmp_path):
    path = _model(tmp_path)
    x = _feeds()
    out = next(iter(ir_runner.load(path).run({"x": x}).values()))
    ref = out.copy()
    ref[[5, 40], 0] += np.float32(2 * STEP)  # 'after' doubles the quantized value: its levels are 2 steps apart
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "ref.npy", ref)
    result = invoke("run", path, "--input", f"x={tmp_path / 'x.npy'}", "--ref", tmp_path / "ref.npy")
    assert result.exit_code == 1, result.output
    assert re.search(r"the expected values lie on a grid of step 0\.0470\d* \(quantized\): 2 mismatch\(es\) one"
                     r" level apart, 0 more than one, 0 off the grid", result.stdout)
    assert "rounding ties: these layers hold values on a boundary between two levels" in result.stdout
    assert ("  layer 'fq' (FakeQuantize-1, id 7): 2 of 64 values one level apart (step 0.0235); their inputs differ"
            " by at most 1 ulp (f32) — a rounding tie, not an error") in result.stdout


def test_compare_sees_the_levels_of_quantized_arrays_only(tmp_path):
    levels = np.arange(-128, 128, dtype=np.float32) * np.float32(0.05)
    expected = np.random.default_rng(6).choice(levels, 1000).astype(np.float32)
    actual = expected.copy()
    actual[[3, 7]] += np.float32(0.05)
    actual[9] += np.float32(0.15)
    for name, array in (("actual", actual), ("expected", expected), ("smooth", np.random.default_rng(7).random(1000))):
        np.save(tmp_path / f"{name}.npy", array.astype(np.float32))
    result = invoke("compare", tmp_path / "actual.npy", tmp_path / "expected.npy", "--atol", "1e-3")
    assert result.exit_code == 1
    assert "grid of step 0.05 (quantized): 2 mismatch(es) one level apart, 1 more than one, 0 off the grid" \
        in result.stdout
    result = invoke("compare", tmp_path / "actual.npy", tmp_path / "smooth.npy")
    assert result.exit_code == 1 and "grid" not in result.stdout and "rounding ties" not in result.stdout


def test_decompressions_are_the_constant_results_computed_in_a_narrower_type(tmp_path):
    found = decompressions(ir_runner.load(_compressed(tmp_path)))
    assert [(d.layer.name, d.spec, d.narrow) for d in found] == [("weights", "f32[16,32]", "f16")]
    x = op.parameter([2, 3], np.float32, name="x")  # compress_to_fp16: an f16 Const widened, exact in any type
    path = str(tmp_path / "fp16.xml")
    ov.save_model(ov.Model([op.add(x, op.constant(np.ones((2, 3), np.float32)))], [x]), path)
    assert decompressions(ir_runner.load(path)) == []


def test_run_ref_names_decompression_subgraphs(tmp_path):
    path = _compressed(tmp_path)
    model = ir_runner.load(path)
    x = np.zeros((16, 32), np.float32)
    weights = next(r.value for r in model.trace({"x": x}).layers if r.layer.name == "weights")
    ref = weights.copy()
    ref[0, 0] = np.nextafter(ref[0, 0], np.float32(np.inf))  # (a device's f32 decompression differs so)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "ref.npy", ref)
    result = invoke("run", path, "--input", f"x={tmp_path / 'x.npy'}", "--ref", tmp_path / "ref.npy", "--exact")
    assert result.exit_code == 1
    assert "decompression subgraphs: 1 constant output(s) computed through a narrower float type, as the IR says" \
        in result.stdout
    assert "  layer 'weights' (Convert-1, id " in result.stdout and "): f32[16,32] through f16" in result.stdout
