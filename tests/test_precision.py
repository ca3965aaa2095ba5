"""``ir_runner.precision``: f16/bf16 emulation on networks with planted faults, the fixes it finds checked in the
emulation, and (with AVX-512 BF16) the keep-in-f32 fix applied to OpenVINO's CPU plugin."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import ir_runner
from ir_runner.headroom import DEFAULT_HEADROOM, default_tolerance, report_data
from tests.helpers import cpu_features
from tests.helpers.irbuild import IRBuilder
from tests.helpers.precision_models import (
    CANCEL_LAYER,
    OVERFLOW_LAYER,
    UNDERFLOW_LAYER,
    cancellation_model,
    overflow_model,
    underflow_model,
)


def _report(make, to, **kw):
    """The report of ``make``'s model, the CPU's f32 layers emulated (the rule, not this machine's plugin)."""
    xml, weights, feeds = make()
    model = ir_runner.load(xml, weights)
    return model, feeds, ir_runner.precision(model, feeds, to, **{"learn": False, **kw})


def _row(report, name):
    return next(row for row in report.layers if row.layer.name == name)


def test_an_f16_overflow_in_the_middle_is_named_with_a_scale_and_a_keep_set_that_remove_it():
    model, feeds, report = _report(overflow_model, "f16")
    assert report.device == "GPU" and not report.ok and report.outputs_diverging == ["out"]
    first = report.first
    assert first.layer.name == OVERFLOW_LAYER and first.status == "overflow"
    assert first.max_abs > 65504 and first.overflow > 0 and first.headroom_bits < 0
    assert first.emulated in (math.inf, -math.inf) and abs(first.reference) > 65504
    assert _row(report, "project").status == "ok"  # before the planted layer, f16 is fine
    fix = report.fix
    # the scale: the smallest power of two that brings the largest activation under 65504 / headroom
    assert fix.scale == 2 ** math.ceil(math.log2(first.max_abs * DEFAULT_HEADROOM / 65504)) and fix.scale_fixes
    assert first.max_abs / fix.scale <= 65504 / DEFAULT_HEADROOM < first.max_abs / (fix.scale / 2)
    # keeping the planted layer alone is not enough: the MatMul reading it converts its input to f16 again
    assert [ref.name for ref in fix.keep] == [OVERFLOW_LAYER, "reduce"] and fix.keep_fixes
    assert ir_runner.precision(model, feeds, "f16", keep=[OVERFLOW_LAYER, "reduce"]).ok
    assert not ir_runner.precision(model, feeds, "f16", keep=[OVERFLOW_LAYER], fix=False).ok
    assert "name='precise', version='0'" in fix.snippet and "'amplify', 'reduce'" in fix.snippet


def test_an_f16_underflow_that_zeroes_a_variance_is_named_and_kept_in_f32():
    model, feeds, report = _report(underflow_model, "f16")
    first = report.first
    assert first.layer.name == UNDERFLOW_LAYER and first.status == "underflow"
    assert first.underflow > 0 and first.min_abs < float(ml_dtypes.finfo(np.float16).smallest_subnormal) / 2
    assert _row(report, "variance").status == "underflow"  # a mean of zeros: the variance itself is zero
    assert math.isinf(_row(report, "normalise").max_error)  # d / sqrt(0)
    fix = report.fix
    assert fix.scale is None  # nothing overflows: a scale would only push more values under
    names = [ref.name for ref in fix.keep]
    assert names[0] == UNDERFLOW_LAYER and "variance" in names and fix.keep_fixes
    assert ir_runner.precision(model, feeds, "f16", keep=names, fix=False).ok
    for name in names:  # the search drops what is not needed: each kept layer is necessary
        assert not ir_runner.precision(model, feeds, "f16", keep=[n for n in names if n != name], fix=False).ok


def test_bf16_cancellation_in_a_hand_written_variance_and_the_layers_that_feed_it():
    model, feeds, report = _report(cancellation_model, "bf16")
    assert report.device == "CPU"
    # E[x^2] itself is within bf16's rounding; the subtraction that follows cancels it away
    assert _row(report, CANCEL_LAYER).status == "ok" and report.first.layer.name == "variance"
    names = [ref.name for ref in report.fix.keep]
    assert CANCEL_LAYER in names and "mean_squared" in names and report.fix.keep_fixes
    assert ir_runner.precision(model, feeds, "bf16", keep=names, fix=False, learn=False).ok


def test_the_cpu_plugin_keeps_the_graph_tail_in_f32_and_the_gpu_converts_everything():
    _, _, cpu = _report(overflow_model, "bf16")
    assert {row.layer.name: row.runs for row in cpu.layers} == {"project": "bf16", OVERFLOW_LAYER: "bf16",
                                                                 "reduce": "bf16", "relu": "f32"}
    _, _, gpu = _report(overflow_model, "bf16", device="GPU")
    assert {row.runs for row in gpu.layers} == {"bf16"}
    assert cpu.ok and gpu.ok  # bf16 has f32's range: 2e5 is no overflow there


def test_a_healthy_network_is_ok_and_searches_no_fix():
    _, _, report = _report(underflow_model, "bf16")
    assert report.ok and report.fix is None and report.first is None
    assert all(row.overflow == 0 and row.underflow == 0 for row in report.layers)


def test_emulated_values_are_rounded_to_nearest_even_at_every_lowered_output():
    # x * c with both rounded to f16 (GPU: inputs too), product in f32, rounded again; 65520 is the tie that
    # rounds up to infinity, 65519 rounds down to 65504
    b = IRBuilder("tie")
    x = b.parameter("x", "f32", "3")
    c = b.const("c", np.array([1.0, 1.0, 3.0], np.float32))
    b.result(b.layer("Multiply", "opset1", [x, c], attrs={"auto_broadcast": "numpy"}, name="mul"), "out")
    model = ir_runner.load(*b.build())
    feeds = {"x": np.array([65519.0, 65520.0, 1.0 + 2 ** -11], np.float32)}
    report = ir_runner.precision(model, feeds, "f16", fix=False)
    row = report.layers[0]
    assert row.overflow == 1 and row.mismatches == 1 and row.worst_index == (1,) and row.emulated == math.inf
    # the third: 1 + 2^-11 is a tie of f16 that rounds to 1 (even), 3 * 1 = 3 exactly: within the tolerance
    assert row.max_error == math.inf and default_tolerance("f16").rtol == 8 * 2 ** -10


def test_bad_arguments_are_input_errors_naming_what_is_wrong():
    xml, weights, feeds = overflow_model()
    model = ir_runner.load(xml, weights)
    with pytest.raises(ir_runner.InputError, match="precision 'f8' is not one of f16, bf16"):
        ir_runner.precision(model, feeds, "f8")
    with pytest.raises(ir_runner.InputError, match="device 'NPU' is not one of CPU, GPU"):
        ir_runner.precision(model, feeds, "f16", device="NPU")
    with pytest.raises(ir_runner.InputError, match="keep: the model computes no layer named 'nope'"):
        ir_runner.precision(model, feeds, "f16", keep=["nope"])


def test_a_stateful_model_is_refused(tmp_path):
    pytest.importorskip("openvino")
    from tests.helpers.stateful_models import accumulator

    model = ir_runner.load(accumulator(tmp_path / "acc.xml", init=False))
    with pytest.raises(ir_runner.UnsupportedError, match="stateful") as caught:
        ir_runner.precision(model, {info.name: np.ones(info.partial_shape.to_shape(), info.dtype)
                                    for info in model.inputs}, "f16")
    reader = model.variables[0].readers[0]
    assert caught.value.layer == model.inference.layers[reader].ref and caught.value.layer.type_version == "ReadValue-6"


def test_the_keep_snippet_makes_openvinos_cpu_plugin_agree_under_bf16(tmp_path):
    cpu_features.require("bf16")
    ov = pytest.importorskip("openvino")
    xml, weights, feeds = cancellation_model()
    (tmp_path / "model.xml").write_bytes(xml)
    (tmp_path / "model.bin").write_bytes(weights)
    path = str(tmp_path / "model.xml")
    report = ir_runner.precision(path, feeds, "bf16")
    reference = ir_runner.load(path).run(feeds)["out"].astype(np.float64)
    tolerance = default_tolerance("bf16").rtol * np.abs(reference).max()

    def device_error(compiled) -> float:
        return float(np.nan_to_num(np.abs(compiled(feeds)[0] - reference), nan=np.inf).max())

    core = ov.Core()
    plain = core.compile_model(core.read_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    assert device_error(plain) > tolerance  # the planted fault is real on the device
    scope: dict = {}
    exec(report.fix.snippet, scope)  # the snippet as a user pastes it: it writes model.keep-f32.xml and compiles
    assert (tmp_path / "model.keep-f32.xml").exists()
    assert device_error(scope["compiled"]) <= tolerance


def test_the_documented_example_models_are_what_the_helpers_build(tmp_path):
    from pathlib import Path

    from tests.helpers.precision_models import write_examples

    write_examples(tmp_path)
    shipped = Path(__file__).resolve().parents[1] / "examples" / "precision"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in shipped.iterdir())
    for made in tmp_path.iterdir():
        if made.suffix == ".npz":
            with np.load(made) as new, np.load(shipped / made.name) as old:
                assert {k: new[k].tobytes() for k in new} == {k: old[k].tobytes() for k in old}
        else:
            assert made.read_bytes() == (shipped / made.name).read_bytes(), made.name


@pytest.mark.parametrize("name", ["resnet_block", "lstm", "vit"])
def test_healthy_real_networks_raise_no_false_alarm(name):
    from tests.conftest import MODELS

    with np.load(MODELS / "real" / name / "inputs.npz") as data:
        feeds = dict(data)
    for to in ("f16", "bf16"):
        report = ir_runner.precision(MODELS / "real" / name / "model.xml", feeds, to, fix=False, learn=False)
        assert report.ok and report.first is None and not any(row.overflow for row in report.layers), (name, to)


def test_an_overflow_that_reaches_no_output_is_listed_but_passes():
    # the T5 export masks attention with float32's lowest value; f16 makes it -inf, after which Softmax gives the
    # same zeros
    from tests.conftest import MODELS

    folder = MODELS / "real" / "t5_encoder"
    with np.load(folder / "inputs.npz") as data:
        report = ir_runner.precision(folder / "model.xml", dict(data), "f16")
    assert report.ok and report.fix is None
    assert report.first.status == "overflow" and report.first.reference == float(np.finfo(np.float32).min)


def test_an_f64_layer_is_never_lowered_so_never_overflows():
    # the hint converts f32 only: a 1e6 in f64 is no f16 overflow (it was reported as one)
    b = IRBuilder("f64")
    x = b.parameter("x", "f32", "4")
    wide = b.layer("Convert", "opset1", [x], attrs={"destination_type": "f64"}, out_specs=[("FP64", [4])],
                   name="wide")
    big = b.layer("Multiply", "opset1", [wide, b.const("gain", np.full(4, 1e6))], attrs={"auto_broadcast": "numpy"},
                  out_specs=[("FP64", [4])], name="big")
    b.result(b.layer("Convert", "opset1", [big], attrs={"destination_type": "f32"}, out_specs=[("FP32", [4])],
                     name="back"), "out")
    xml, weights = b.build()
    report = ir_runner.precision(ir_runner.load(xml, weights), {"x": np.arange(4, dtype=np.float32)}, "f16")
    big_row = _row(report, "big")
    assert big_row.runs == "f64" and big_row.status == "ok" and big_row.max_abs == 3e6
    assert big_row.overflow == 0 and big_row.headroom_bits is None
    back = _row(report, "back")  # f32 again: lowered, and 3e6 overflows f16 there
    assert back.runs == "f16" and back.status == "overflow" and back.headroom_bits < 0


def test_every_model_output_of_a_diverging_layer_output_is_named():
    # two Results reading one overflowing output: only the last one was named
    b = IRBuilder("two")
    x = b.parameter("x", "f32", "4")
    big = b.layer("Multiply", "opset1", [x, b.const("gain", np.full(4, 1e5, np.float32))],
                  attrs={"auto_broadcast": "numpy"}, out_specs=[("FP32", [4])], name="big")
    b.result(big, "out_a")
    b.result(big, "out_b")
    xml, weights = b.build()
    report = ir_runner.precision(ir_runner.load(xml, weights), {"x": np.ones(4, np.float32)}, "f16", fix=False)
    assert report.outputs_diverging == ["out_a", "out_b"]


def test_no_scale_is_offered_to_the_cpu_plugin_which_has_no_such_property():
    # the snippet compiled on 'CPU' with ACTIVATIONS_SCALE_FACTOR, which OpenVINO refuses ("Unsupported property")
    _, _, report = _report(overflow_model, "f16", device="CPU")
    assert report.first.layer.name == OVERFLOW_LAYER and report.first.status == "overflow" and not report.ok
    assert report.fix.scale is None and report.fix.keep_fixes


def _tail_overflow():
    """x -> MatMul 'project' -> Multiply by 4e4 'amplify' (~1e5, beyond f16) -> Relu -> out: 'amplify' is in the
    CPU plugin's tail (no matrix product after it), which it keeps in f32."""
    from tests.helpers.precision_models import _binary, _matmul

    rng = np.random.default_rng(27)
    b = IRBuilder("tail_overflow")
    first = _matmul(b, "project", b.parameter("x", "f32", "4,32"), rng.uniform(-1, 1, (32, 64)), 4)
    hot = _binary(b, "Multiply", "amplify", first, b.const("gain", np.array([[4e4]], np.float32)), [4, 64])
    b.result(b.layer("Relu", "opset1", [hot], out_specs=[("FP32", [4, 64])], name="relu"), "out")
    xml, weights = b.build()
    return xml, weights, {"x": rng.uniform(-1, 1, (4, 32)).astype(np.float32)}


def test_a_layer_kept_in_f32_is_never_flagged_as_leaving_the_lower_types_range():
    """'amplify' reaches 1e5: on the GPU (all lowered) it overflows f16; the CPU keeps it in f32, where it was
    reported 'overflow' all the same (and counted) though nothing overflows; so was a layer given in ``keep``."""
    model, feeds, cpu = _report(_tail_overflow, "f16", device="CPU")
    row = _row(cpu, "amplify")
    assert row.runs == "f32" and row.status == "ok" and row.max_abs > 65504
    assert (row.overflow, row.underflow, row.subnormal, row.headroom_bits) == (0, 0, 0, None)
    assert cpu.ok and cpu.first is None and report_data(cpu)["counts"]["overflow"] == 0
    gpu = ir_runner.precision(model, feeds, "f16", fix=False)
    assert _row(gpu, "amplify").status == "overflow" and _row(gpu, "amplify").headroom_bits < 0
    kept = _row(ir_runner.precision(model, feeds, "f16", keep=["amplify"], fix=False), "amplify")
    assert kept.runs == "f32" and kept.status == "ok" and kept.overflow == 0


def test_the_layers_the_cpu_runs_in_f32_are_learned_from_the_compiled_model_or_emulated_saying_why():
    from ir_runner.cpu_precisions import cpu_precisions

    xml, weights, feeds = overflow_model()
    model = ir_runner.load(xml, weights)
    rule = ir_runner.precision(model, feeds, "bf16", fix=False, learn=False)
    assert rule.f32_from == "emulated (the tail before the outputs), as asked (learn=False, --emulated-tail)"
    assert ir_runner.precision(model, feeds, "bf16", device="GPU", fix=False).f32_from is None
    for to in ("f16", "bf16"):  # (what this machine's plugin applies decides which)
        compiled, note = cpu_precisions(model, to)
        report = ir_runner.precision(model, feeds, to, device="CPU", fix=False)
        if compiled is None:
            assert report.f32_from == f"emulated (the tail before the outputs), {note}"
            continue
        assert report.f32_from == note and note.startswith("learned from OpenVINO")
        by_rule = {row.layer.name: row.runs for row in ir_runner.precision(model, feeds, to, device="CPU",
                                                                            fix=False, learn=False).layers}
        for row in report.layers:
            name = row.layer.name
            assert row.runs == ("f32" if name in compiled.f32 else to if name in compiled.lowered else by_rule[name])


def test_the_bf16_cpu_plugin_keeps_a_fused_subgraph_in_f32_matrix_product_included():
    """OpenVINO 2026.4's CPU plugin fuses amplify -> reduce -> relu into one f32 Subgraph under bf16 (its runtime
    graph names amplify and relu: the MatMul between them is found as a layer on a path inside the node); the
    emulated rule lowered amplify and reduce."""
    cpu_features.require("bf16")
    xml, weights, feeds = overflow_model()
    report = ir_runner.precision(ir_runner.load(xml, weights), feeds, "bf16", fix=False)
    assert report.f32_from.startswith("learned from OpenVINO")
    assert {row.layer.name: row.runs for row in report.layers} == {"project": "bf16", OVERFLOW_LAYER: "f32",
                                                                   "reduce": "f32", "relu": "f32"}
