"""``ir_runner.crosscheck``: each CPU-plugin fault, inside a larger graph, is named as the first divergence and
the layers after it that differ as inherited; a graph without a fault agrees."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ir_runner
from ir_runner.divergence import AGREE, DIVERGES, INHERITED, REPRESENTED, Tolerance
from tests.helpers.cpu_features import require as require_cpu
from tests.helpers.crosscheck_models import FAULTS, negative_gather
from tests.helpers.irbuild import IRBuilder


def _check(builder, feeds, **options) -> ir_runner.CrosscheckReport:
    return ir_runner.crosscheck(ir_runner.load(*builder.build()), feeds, every_layer=True, **options)


@pytest.mark.parametrize("fault", list(FAULTS))
def test_the_faulty_layer_is_the_first_divergence_and_later_ones_are_inherited(fault):
    if fault == "bf16 denormals":  # (an AVX-512 CPU without it converts them as the reference does)
        require_cpu("bf16")
    builder, feeds, faulty, later = FAULTS[fault]()
    report = _check(builder, feeds)
    assert not report.ok
    assert report.first_divergence.name == faulty
    statuses = {row.layer.name: row.status for row in report.layers}
    assert statuses[faulty] == DIVERGES
    assert sorted(name for name, status in statuses.items() if status == INHERITED) == sorted(later)
    assert all(status == AGREE for name, status in statuses.items() if name not in (faulty, *later))


def test_a_graph_without_a_fault_agrees_everywhere():
    builder, feeds, _, _ = negative_gather("opset7", indices=(5, 0, 4, 2))
    report = _check(builder, feeds)
    assert report.ok and report.first_divergence is None and report.first is None
    assert {row.status for row in report.layers} == {AGREE}
    assert [row.layer.name for row in report.layers][:3] == ["x", "idx", "to_float"]  # execution order


def test_a_row_has_the_errors_and_the_worst_element_with_both_values():
    builder, feeds, _, _ = negative_gather("opset7")  # indices -1, 0, -2, 2 of [10..60]
    row = _check(builder, feeds).first
    assert (row.layer.type_version, row.layer.id, row.port, row.position) == ("Gather-7", "4", "3", 0)
    assert row.layer.line is not None and row.rule == "bits"
    assert (row.mismatches, row.size, row.max_abs, row.max_rel) == (2, 4, 60.0, 1.0)
    assert (row.worst_index, row.ours, row.device) == ((0,), 60.0, 0.0)


def test_bits_tell_minus_zero_from_zero_and_tolerance_does_not():
    builder, feeds, _, _ = FAULTS["f32 Const denormals"]()
    exact = _check(builder, feeds).first
    assert exact.layer.name == "weights" and exact.mismatches == 3  # two denormals and -0.0
    # under an f16 hint, f32 outputs (wider than the hint) are compared within f16's bound
    loose = _check(builder, feeds, precision="f16")
    assert {row.rule for row in loose.layers if row.element_type == "f32"} == {"tolerance"}
    assert loose.ok


def test_a_given_tolerance_replaces_the_default():
    builder, feeds, _, _ = FAULTS["f32 Const denormals"]()
    report = _check(builder, feeds, precision="f16", tolerance=Tolerance(0.0, 0.0, None))
    assert report.first_divergence.name == "weights" and report.tolerance.atol == 0.0


def test_a_path_works_and_a_model_built_without_load_is_refused(tmp_path):
    builder, feeds, faulty, _ = negative_gather("opset1")
    path = builder.write(tmp_path)
    assert ir_runner.crosscheck(str(path), feeds).first_divergence.name == faulty
    model = ir_runner.load(path)
    bare = ir_runner.Model(model.graph, model.inference, strict=False, memory_limit=None)
    with pytest.raises(ir_runner.InputError, match="needs the model's XML"):
        ir_runner.crosscheck(bare, feeds)
    with pytest.raises(ir_runner.InputError, match="precision 'f64' is not one of f32, f16, bf16"):
        ir_runner.crosscheck(model, feeds, precision="f64")


def test_feeds_are_checked_as_run_checks_them():
    builder, feeds, _, _ = negative_gather("opset7")
    with pytest.raises(ir_runner.InputError, match="no value given for input"):
        _check(builder, {"x": feeds["x"]})


_WITHOUT_OPENVINO = """
import sys
sys.modules["openvino"] = None  # import openvino now fails as if it were not installed
import numpy as np, ir_runner
try:
    ir_runner.crosscheck(sys.argv[1], {"x": np.zeros(6, np.int32), "idx": np.zeros(4, np.int32),
                                        "keep": np.ones(4, bool)})
except ir_runner.UnsupportedError as error:
    print(error.exit_code, error)
"""


def test_without_openvino_the_error_says_how_to_install_it(tmp_path):
    path = negative_gather()[0].write(tmp_path)
    done = subprocess.run([sys.executable, "-c", _WITHOUT_OPENVINO, str(path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("5 crosscheck needs the openvino package")
    assert "pip install 'ir-run[openvino]'" in done.stdout


def test_feeding_bf16_inputs_moves_their_bits():
    from tests.helpers.crosscheck_models import BF16
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("bf16_in")
    x = b.parameter("x", "bf16", "3")
    b.result(b.convert(x, "f32", name="widen"))
    report = _check(b, {"x": np.array([1.5, -2.25, 3e38], BF16)})
    assert report.ok and [row.rule for row in report.layers] == ["bits", "bits"]


@pytest.mark.parametrize("network", ["resnet_block", "gpt2", "vit"])
def test_exact_layers_after_bounded_ones_are_compared_within_the_tolerance(network):
    """A real network: an exact operation (the Add after a Convolution, a Reshape after a MatMul) reading outputs
    that agree only within the tolerance is compared within it too, not by bits, so nothing diverges; nor do
    a LayerNorm's outputs near zero, which differ by the rounding of values near one (ViT's MVN)."""
    pytest.importorskip("openvino")
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "models" / "real" / network
    feeds = dict(np.load(folder / "inputs.npz"))
    report = ir_runner.crosscheck(str(folder / "model.xml"), feeds)
    assert report.ok, [(str(r.layer), r.rule, r.max_abs) for r in report.layers if r.diverged]
    exact_after_bounded = [r for r in report.layers if r.rule == "tolerance" and r.layer.type_version.startswith("Add")]
    assert exact_after_bounded  # the Add of a bias after a Convolution/MatMul


def _real_crosscheck(network: str) -> ir_runner.CrosscheckReport:
    pytest.importorskip("openvino")
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "models" / "real" / network
    return ir_runner.crosscheck(str(folder / "model.xml"), dict(np.load(folder / "inputs.npz")), every_layer=True)


def test_a_64_bit_output_the_device_holds_in_32_bits_is_named_as_such():
    """T5's relative-position bucket converts a -inf to i64, which the CPU plugin holds in i32: that Convert is
    the one cause; its float LayerNorm (which the CPU fuses: its Multiply is 2 ULP off inputs that agree bit for
    bit, downstream of a ReduceMean that agrees within the tolerance) is compared within the tolerance."""
    report = _real_crosscheck("t5_encoder")
    causes = [row for row in report.layers if row.status == DIVERGES]
    assert [row.layer.type_version for row in causes] == ["Convert-1"]
    assert causes[0].element_type == "i64" and "holds this 64-bit output in 32 bits" in causes[0].note
    assert (causes[0].ours, causes[0].device) == (np.iinfo(np.int64).min, np.iinfo(np.int32).min)
    norm = [row for row in report.layers if row.layer.name.endswith("layer_norm/aten::mul/Multiply")]
    assert norm and all(row.rule == "tolerance" and row.status == AGREE for row in norm)


@pytest.mark.parametrize("element_type", ["f32", "bf16"])
def test_a_rank_0_input_is_fed_to_the_device_as_rank_0(element_type):
    """A scalar feed stays a scalar on its way to OpenVINO (np.ascontiguousarray would make it shape (1,),
    which the device refuses for a Parameter of shape [])."""
    from tests.helpers.crosscheck_models import BF16
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder("scalar_in")
    x = b.parameter("x", element_type, "3")
    s = b.parameter("s", element_type, "")
    wide = [b.convert(x, "f32", name="wide_x"), b.convert(s, "f32", name="wide_s")]
    b.result(b.layer("Add", "opset1", wide, out_specs=[("FP32", [3])], name="sum"))
    dtype = BF16 if element_type == "bf16" else np.float32
    report = _check(b, {"x": np.array([1.5, -2.0, 4.0], dtype), "s": np.array(0.25, dtype)})
    assert report.ok and [row.layer.name for row in report.layers][-1] == "sum"


def _slice_to_the_end() -> IRBuilder:
    """A Slice to INT64_MAX, as torch exports ``x[:, 1:]``: the CPU plugin holds the i64 Const in 32 bits."""
    b = IRBuilder("slice_to_end")
    x = b.parameter("x", "f32", "2,5")
    ints = [b.const(name, np.array([value], np.int64))
            for name, value in (("start", 1), ("stop", np.iinfo(np.int64).max), ("step", 1), ("axes", 1))]
    tail = b.layer("Slice", "opset8", [x, *ints], out_specs=[("FP32", [2, 4])], name="tail")
    b.result(b.layer("Relu", "opset1", [tail], out_specs=[("FP32", [2, 4])], name="relu"))
    return b


_X = {"x": np.arange(10, dtype=np.float32).reshape(2, 5) - 3}


def test_a_64_bit_const_the_device_holds_in_32_bits_is_a_representation_not_a_divergence():
    report = _check(_slice_to_the_end(), _X)
    assert report.ok and report.first is None
    statuses = {row.layer.name: row.status for row in report.layers}
    assert statuses.pop("stop") == REPRESENTED and set(statuses.values()) == {AGREE}
    stop = next(row for row in report.layers if row.layer.name == "stop")
    assert (stop.ours, stop.device) == (np.iinfo(np.int64).max, np.iinfo(np.int32).max)
    assert "holds this 64-bit output in 32 bits" in stop.note
    strict = _check(_slice_to_the_end(), _X, strict_representations=True)
    assert not strict.ok and strict.first_divergence.name == "stop"


def test_a_representation_that_later_outputs_show_is_the_cause():
    b = IRBuilder("wide_sum")
    x = b.parameter("x", "i64", "2")
    big = b.const("big", np.array([2**40, 3], np.int64))
    total = b.layer("Add", "opset1", [x, big], out_specs=[("I64", [2])], name="sum")
    b.result(b.convert(total, "f32", name="as_float"))
    report = _check(b, {"x": np.array([1, 2], np.int64)})
    assert not report.ok and report.first_divergence.name == "big"
    assert [row.status for row in report.layers] == [AGREE, DIVERGES, INHERITED, INHERITED]


@pytest.mark.parametrize("order", ["in_order", "reversed"])
def test_a_representation_computed_from_representations_only_is_one_too(order):
    """INT64_MAX Consts -> Concat -> Slice stop (torch's export of ``x[a:, b:]``): the Concat differs only as the
    device holds it too, from representations only, so it is one, whichever input comes first (it was inherited
    from the first one, which became the cause: exit 1)."""
    b = IRBuilder("rep_chain")
    x = b.parameter("x", "f32", "2,5")
    ends = [b.const("max1", np.array([np.iinfo(np.int64).max], np.int64)),
            b.const("max2", np.array([np.iinfo(np.int64).max], np.int64))]
    ends = ends if order == "in_order" else ends[::-1]
    stop = b.layer("Concat", "opset1", ends, out_specs=[("I64", [2])], name="stop", attrs={"axis": "0"})
    start = b.const("start", np.array([0, 1], np.int64))
    step = b.const("step", np.array([1, 1], np.int64))
    axes = b.const("axes", np.array([0, 1], np.int64))
    tail = b.layer("Slice", "opset8", [x, start, stop, step, axes], out_specs=[("FP32", [2, 4])], name="tail")
    b.result(b.layer("Relu", "opset1", [tail], out_specs=[("FP32", [2, 4])], name="relu"))
    report = _check(b, _X)
    assert report.ok, [(row.layer.name, row.status) for row in report.layers]
    assert sorted(row.layer.name for row in report.layers if row.status == REPRESENTED) == ["max1", "max2", "stop"]
    assert {row.status for row in report.layers if row.status != REPRESENTED} == {AGREE}
    strict = _check(b, _X, strict_representations=True)
    assert strict.first_divergence.name == "max1"
    assert {row.layer.name: row.status for row in strict.layers}["stop"] == INHERITED


def test_a_computed_output_that_overflows_32_bits_on_the_device_diverges():
    """``x + x`` on i64 with x = 2**30: ir-run gives 2**31, the CPU plugin -2**31 (it computes in 32 bits). The
    device computed other values from agreeing inputs, and the model returns them: a divergence (it was a
    'device representation', ok)."""
    b = IRBuilder("overflow")
    x = b.parameter("x", "i64", "2")
    b.result(b.layer("Add", "opset1", [x, x], out_specs=[("I64", [2])], name="sum"))
    report = _check(b, {"x": np.array([2**30, 2**31 - 1], np.int64)})
    assert not report.ok and report.first_divergence.name == "sum"
    assert (report.first.ours, report.first.device) == (2**31, -2**31)
    assert "computed from inputs that agree" in report.first.note


def test_a_representation_a_model_returns_diverges():
    """An INT64_MAX Const returned by the model: the user sees INT32_MAX, so it is no mere representation."""
    b = IRBuilder("const_out")
    x = b.parameter("x", "i64", "2")
    b.result(b.layer("Add", "opset1", [x, x], out_specs=[("I64", [2])], name="sum"))
    b.result(b.const("max", np.array([np.iinfo(np.int64).max, 1], np.int64)))
    report = _check(b, {"x": np.array([1, 2], np.int64)})
    assert not report.ok and report.first_divergence.name == "max"
    assert "it is a model output" in report.first.note


def test_the_cli_reports_a_representation_with_exit_0_and_fails_it_with_strict_representations(tmp_path):
    """--strict-representations fails a representation; --strict alone is spec-strict index checking, as for
    every other command, and leaves it a representation."""
    from tests.cli.clikit import invoke

    path = _slice_to_the_end().write(tmp_path)
    np.savez(tmp_path / "x.npz", **_X)
    ok = invoke("crosscheck", path, "-i", tmp_path / "x.npz", "--every-layer")
    assert ok.exit_code == 0, ok.output
    assert "1 differ only as the device represents them" in ok.stdout and "device representation" in ok.stdout
    assert "ok: no divergence from CPU: 1 layer output(s) differ only as it represents them" in ok.stdout
    assert ok.stdout.count("ok:") == 1
    assert invoke("crosscheck", path, "-i", tmp_path / "x.npz", "--strict", "--every-layer").exit_code == 0
    strict = invoke("crosscheck", path, "-i", tmp_path / "x.npz", "--strict-representations", "--every-layer")
    assert strict.exit_code == 1 and "first divergence: layer 'stop'" in strict.stdout


def test_a_llama_export_agrees_with_its_int64_max_slice_ends_as_representations():
    """The trial's case (a Mistral export; the Llama of models/real has the same Slices): four i64 Consts holding
    INT64_MAX, which the CPU plugin holds as INT32_MAX, and every other layer output agrees."""
    report = _real_crosscheck("llama")
    assert report.ok, [(str(r.layer), r.status) for r in report.layers if r.status != AGREE]
    representations = [row for row in report.layers if row.status == REPRESENTED]
    assert len(representations) == 4
    assert {(row.layer.type_version, row.ours, row.device) for row in representations} == {
        ("Const-1", np.iinfo(np.int64).max, np.iinfo(np.int32).max)}


def test_a_representation_read_next_to_a_divergence_is_not_blamed_for_it():
    """A Slice to INT64_MAX of a Gather the CPU plugin gets wrong (negative indices): the Slice differs because
    of the Gather, which is the first divergence; the INT64_MAX end stays a representation (it was made a cause
    too, as on Mask R-CNN, where ten such constants were listed as diverging after a tie elsewhere)."""
    b, feeds, faulty, _ = negative_gather()
    pick = next(layer for layer in b.layers if layer.name == faulty)
    ints = [b.const(name, np.array([value], np.int64))
            for name, value in (("start", 1), ("stop", np.iinfo(np.int64).max), ("step", 1), ("axes", 0))]
    tail = b.layer("Slice", "opset8", [pick, *ints], out_specs=[("FP32", [3])], name="tail")
    b.result(b.layer("Relu", "opset1", [tail], out_specs=[("FP32", [3])], name="relu"))
    report = _check(b, feeds)
    statuses = {row.layer.name: row.status for row in report.layers}
    assert report.first_divergence.name == faulty
    assert statuses["stop"] == REPRESENTED and statuses["tail"] == INHERITED
