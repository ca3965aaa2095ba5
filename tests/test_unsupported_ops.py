"""Models with operations ir-run does not implement yet (most real IRs for now): validate checks everything
else and says "not fully checked" (its own verdict, exit code and ok/complete fields), reports the operations
once grouped by type, compares the two declared ends of an edge whose producer it cannot infer; gen-inputs
works on them; run's refusal is short."""

import json
from pathlib import Path

import numpy as np
import pytest

import ir_runner
from tests.cli.clikit import invoke
from tests.helpers.irbuild import IRBuilder


def _deformable(o, x, rois, scale):
    return o["opset1"].deformable_psroi_pooling(x, rois, output_dim=2, spatial_scale=scale, group_size=2,
                                                mode="bilinear_deformable", spatial_bins_x=1, spatial_bins_y=1,
                                                trans_std=1.0, part_size=1)


# An operation of an extension's opset that ir-run has no declaration of: OpenVINO writes the layers as a
# DeformablePSROIPooling-1 (on x [1, 8, 6, 6] and rois [2, 5]), renamed in the XML to this type and opset
# (every operation of OpenVINO's own opsets is implemented)
UNKNOWN_TYPE, UNKNOWN_OPSET = "RoiWarpPooling", "vendor_opset"


@pytest.fixture(scope="module")
def unsupported_ir(tmp_path_factory) -> tuple[Path, str, int]:
    """An IR written by OpenVINO: two layers of an operation ir-run does not implement, one feeding a Gather-8;
    with the operation's ``type opset`` label and the size of the Gather's axis."""
    ov = pytest.importorskip("openvino")
    o = {name: __import__(f"openvino.{name}", fromlist=["x"]) for name in ("opset1", "opset8", "opset15")}
    x = o["opset1"].parameter([1, 8, 6, 6], np.float32, name="x")
    rois = o["opset1"].parameter([2, 5], np.float32, name="rois")
    layers = [_deformable(o, x, rois, scale) for scale in (1.0, 0.5)]
    idx = o["opset1"].parameter([3], np.int32, name="idx")
    gather = o["opset8"].gather(layers[0], idx, o["opset1"].constant(np.int64(1)), 0)
    path = tmp_path_factory.mktemp("ov") / "unsupported.xml"
    ov.save_model(ov.Model([gather.output(0), layers[1].output(0)], [x, rois, idx], "unsupported"), str(path))
    xml = path.read_text()
    assert xml.count('type="DeformablePSROIPooling" version="opset1"') == 2
    path.write_text(xml.replace('type="DeformablePSROIPooling" version="opset1"',
                                f'type="{UNKNOWN_TYPE}" version="{UNKNOWN_OPSET}"'))
    return path, f"{UNKNOWN_TYPE} {UNKNOWN_OPSET}", layers[0].get_output_partial_shape(0)[1].get_length()


@pytest.fixture(scope="module")
def openvino_ir(unsupported_ir) -> Path:
    return unsupported_ir[0]


@pytest.fixture(scope="module")
def label(unsupported_ir) -> str:
    return unsupported_ir[1]


def test_a_valid_ir_with_unsupported_operations_is_not_fully_checked_not_invalid(openvino_ir, label):
    report = ir_runner.validate(openvino_ir)
    assert report.ok and not report.complete and not report.valid
    assert [info.layer.type for info in report.unsupported] == [label.split()[0]] * 2
    assert report.errors == []
    text = str(report)
    assert text.endswith("not fully checked (2 layer(s) of 1 unsupported type(s)); no problem found in what was"
                         " checked, 0 error(s), 0 warning(s)")
    assert "INVALID" not in text and "Supported:" not in text


def test_the_cli_reports_unsupported_operations_once_grouped_with_its_own_exit_code(openvino_ir, label):
    result = invoke("validate", openvino_ir)
    assert result.exit_code == 5
    problem_lines = [line for line in result.stdout.splitlines() if not line.startswith("  ")]
    assert sum(f"{label} x2" in line for line in problem_lines) == 1
    assert not any(line.startswith("error:") for line in problem_lines)
    data = json.loads(invoke("validate", openvino_ir, "--format", "json").stdout)
    assert data["ok"] is True and data["complete"] is False and data["valid"] is False and data["exit_code"] == 5
    assert data["verdict"].startswith("not fully checked")
    assert [(g["type"], g["count"]) for g in data["unsupported"]] == [(label, 2)]
    clean = json.loads(invoke("validate", "models/select_gather.xml", "--format", "json").stdout)
    assert clean["ok"] and clean["complete"] and clean["valid"] and clean["verdict"] == "valid"


def test_gen_inputs_needs_only_the_parameters(unsupported_ir, tmp_path):
    openvino_ir, _, axis_size = unsupported_ir
    out = tmp_path / "inputs.npz"
    result = invoke("gen-inputs", openvino_ir, "-o", out)
    assert result.exit_code == 0, result.stderr
    with np.load(out) as saved:
        assert {name: saved[name].shape for name in saved} == {"x": (1, 8, 6, 6), "rois": (2, 5), "idx": (3,)}
        assert saved["idx"].max() <= axis_size - 1  # indices of the Gather it feeds


def test_run_says_it_in_one_short_line_by_type_with_a_pointer_to_inspect(openvino_ir, label):
    result = invoke(openvino_ir, "--fill", "random")
    assert result.exit_code == 5
    first, hint = result.stderr.strip().split("\n")
    assert len(first) < 300 and "2 layer(s)" in first and f"{label} x2" in first
    assert "ir-run inspect" in hint
    with pytest.raises(ir_runner.UnsupportedError, match=f"{label} x2"):
        ir_runner.load(openvino_ir)


def _edge_model(consumer_dims: list[int]) -> tuple[bytes, bytes]:
    """Parameter -> Frobnicate (no such operation) declaring [2,5] -> Gather-8 whose data input declares
    ``consumer_dims``."""
    b = IRBuilder("edge")
    x = b.parameter("x", "f32", "2,4")
    frob = b.layer("Frobnicate", "opset1", [x], name="frob", out_specs=[("FP32", [2, 5])])
    idx = b.const("idx", np.array([0, 1], np.int64))
    axis = b.const("axis", np.array(1, np.int64))
    gather = b.layer("Gather", "opset8", [frob, idx, axis], attrs={"batch_dims": "0"}, name="g",
                     in_specs=[("FP32", consumer_dims), None, None], out_specs=[("FP32", [2, 2])])
    b.result(gather, "out")
    return b.build()


def test_an_edge_from_an_unsupported_producer_compares_its_two_declared_ends():
    report = ir_runner.validate(*_edge_model([2, 6]))
    assert not report.ok and not report.complete
    (error,) = report.errors
    text = str(error)
    assert "layer 'g' (Gather-8" in text and "input port 0" in text
    assert "the edge from layer 'frob' (Frobnicate opset1" in text
    assert "declares FP32[2,5] at its start and FP32[2,6] at its end" in text
    assert "declare <dim>s" not in text  # no fix that blames one end: ir-run cannot say which is right
    assert str(report).splitlines()[-1].startswith("<bytes>: INVALID, not fully checked (1 layer(s) of 1")
    assert ir_runner.validate(*_edge_model([2, 5])).ok
