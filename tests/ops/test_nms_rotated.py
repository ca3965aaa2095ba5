"""NMSRotated-13: output shapes as OpenVINO infers them (data-dependent: bounded at load, concrete at run),
refusals naming the layer and port, values against OpenVINO's CPU plugin (the reference has no Node.evaluate
for it): rotation direction, degenerate and coincident boxes, negative thresholds, sorting, the rotated-IoU
geometry, seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.ops.detection.nms_rotated import _corners, _iou  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def _model(tmp_path, boxes_shape, scores_shape, most=10, iou=0.5, score=0.0, et=ov.Type.f32, most_param=False,
           name="model", **attrs):
    shape = lambda s: ov.PartialShape.dynamic() if s == "..." else ov.PartialShape(s)  # noqa: E731
    b, s = opset1.parameter(shape(boxes_shape), et, name="boxes"), opset1.parameter(shape(scores_shape), et,
                                                                                   name="scores")
    params = [b, s]
    if most_param:
        k = opset1.parameter([], ov.Type.i64, name="k")
        params.append(k)
    else:
        k = opset1.constant(np.int64(most))
    node = opset13.nms_rotated(b, s, k, opset1.convert(opset1.constant(np.float32(iou)), et),
                               opset1.convert(opset1.constant(np.float32(score)), et), **attrs)
    return write_ir(node, params, tmp_path, name), node


def _boxes(rng, batches, count, spread=10.0, size=4.0):
    return np.stack([rng.random((batches, count)) * spread, rng.random((batches, count)) * spread,
                     rng.random((batches, count)) * size + 0.5, rng.random((batches, count)) * size + 0.5,
                     (rng.random((batches, count)) - 0.5) * 6], -1).astype(np.float32)


# -- shapes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("boxes, scores, most", [
    ([1, 6, 5], [1, 1, 6], 3), ([2, 6, 5], [2, 3, 6], 10), ([2, 6, 5], [2, 3, 6], 0), ([2, -1, 5], [2, 3, -1], 4),
    ([-1, 6, 5], [-1, 2, 6], 2), ([2, (1, 8), 5], [2, 2, -1], 3), ("...", [2, 2, 6], 3), ([2, 6, -1], [2, 2, 6], 3),
])
def test_shapes_as_openvino_infers_them(boxes, scores, most, tmp_path):
    xml, node = _model(tmp_path, boxes, scores, most)
    check_output_shapes(xml, node)
    check_inference(xml)


def test_computed_count_is_dynamic_and_concrete_at_run(tmp_path):
    xml, node = _model(tmp_path, [1, 8, 5], [1, 2, 8], most_param=True, output_type="i32")
    check_output_shapes(xml, node)
    feeds = {"boxes": _boxes(np.random.default_rng(0), 1, 8), "scores": np.random.default_rng(1).random(
        (1, 2, 8)).astype(np.float32), "k": np.int64(3)}
    indices, scores, count = check_run(xml, feeds, oracle="cpu").values()
    assert indices.dtype == np.int32 and len(indices) == count[0] <= 6


def _built(boxes="1,6,5", scores="1,2,6", types=("f32", "f32", "i64", "f32", "f32"), attrs=None):
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("boxes", "scores", "k", "iou", "score"), types,
                                                      (boxes, scores, "", "", ""))]
    b.result(b.layer("NMSRotated", "opset13", inputs, attrs=attrs or {},
                     out_specs=[("I64", "-1,3"), ("FP32", "-1,3"), ("I64", "1")]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, error, what", [
    ({"boxes": "1,6,4"}, InferenceError, r"\(boxes\): the last dim of boxes must be 5"),
    ({"boxes": "1,6"}, InferenceError, r"\(boxes\): boxes must have rank 3"),
    ({"scores": "2,2,6"}, InferenceError, r"\(scores\): .*same batch"),
    ({"scores": "1,2,7"}, InferenceError, r"\(scores\): .*number of boxes"),
    ({"types": ("f32", "f32", "f32", "f32", "f32")}, InferenceError, "integer element type"),
    ({"types": ("i32", "f32", "i64", "f32", "f32")}, InferenceError, r"\(boxes\): boxes must have a floating-point"),
    ({"types": ("f32", "f32", "i64", "i32", "f32")}, InferenceError, r"iou_threshold must have a floating-point"),
    ({"attrs": {"clockwise": "sometimes"}}, IRError, "clockwise"),
    ({"attrs": {"output_type": "u8"}}, IRError, "output_type"),
])
def test_refusals_name_the_layer(kwargs, error, what):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_built(**kwargs))
    assert "NMSRotated-13" in str(info.value)


def test_negative_count_refused_at_run(tmp_path):
    xml, _ = _model(tmp_path, [1, 3, 5], [1, 1, 3], most_param=True)
    with pytest.raises(InputError, match="negative"):
        ir_runner.load(str(xml)).run({"boxes": np.ones((1, 3, 5), np.float32), "scores": np.ones((1, 1, 3),
                                                                                                   np.float32),
                                      "k": np.int64(-1)})


# -- the geometry ---------------------------------------------------------------------------------------

def test_iou_of_known_shapes():
    """Equal boxes: 1; a box and itself turned a quarter (a 4 x 2 box): overlap 2 x 2 = 4 of 8 + 8 - 4; apart: 0;
    a square and the same square turned 45 degrees: the octagon, 8 (sqrt(2) - 1) of 4 + 4 - that."""
    box = np.array([5, 5, 4, 2, 0], np.float32)
    corners = _corners(box, True)
    assert _iou(corners, 8.0, box, True) == pytest.approx(1.0, abs=1e-6)
    assert _iou(corners, 8.0, np.array([5, 5, 4, 2, np.pi / 2], np.float32), True) == pytest.approx(4 / 12, abs=1e-6)
    assert _iou(corners, 8.0, np.array([50, 5, 4, 2, 0], np.float32), True) == 0.0
    square = np.array([0, 0, 2, 2, 0], np.float32)
    octagon = 8 * (np.sqrt(2) - 1)
    got = _iou(_corners(square, False), 4.0, np.array([0, 0, 2, 2, np.pi / 4], np.float32), False)
    assert got == pytest.approx(octagon / (8 - octagon), abs=1e-6)


# -- values ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("clockwise", [True, False])
def test_rotation_direction_decides_the_overlap(clockwise, tmp_path):
    """A long thin box turned +30 degrees and one turned -30 degrees around nearby centres: which pair overlaps
    depends on the direction of rotation."""
    xml, _ = _model(tmp_path, [1, 3, 5], [1, 1, 3], iou=0.3, clockwise=clockwise)
    boxes = np.array([[[0, 0, 10, 1, 0.5], [2.5, 1.4, 10, 1, 0.5], [2.5, -1.4, 10, 1, 0.5]]], np.float32)
    got = check_run(xml, {"boxes": boxes, "scores": np.array([[[0.9, 0.8, 0.7]]], np.float32)}, oracle="cpu")
    selected = list(got.values())[0][:, 2].tolist()
    assert len(selected) == 2 and (1 in selected) != (2 in selected)


def test_degenerate_coincident_and_negative_threshold(tmp_path):
    """Zero-area boxes are taken (IoU 0) unless the threshold is negative; coincident boxes overlap fully; with a
    negative threshold every box after the first goes."""
    boxes = np.array([[[1, 1, 2, 2, 0.3], [1, 1, 2, 2, 0.3], [1, 1, 0, 2, 0], [8, 8, 1, 1, 1], [8, 8, 1, 1, 1 + np.pi],
                       [3, 3, 2, 1e-30, 0.1]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6, 0.5, 0.4]]], np.float32)
    for iou, want in ((0.5, [0, 2, 3, 5]), (-0.1, [0])):
        xml, _ = _model(tmp_path, [1, 6, 5], [1, 1, 6], iou=iou, name=f"m{iou}", sort_result_descending=False)
        got = check_run(xml, {"boxes": boxes, "scores": scores}, oracle="cpu")
        assert list(got.values())[0][:, 2].tolist() == want


@pytest.mark.parametrize("descending", [True, False])
def test_sorting_across_rows(descending, tmp_path):
    rng = np.random.default_rng(4)
    xml, _ = _model(tmp_path, [2, 20, 5], [2, 3, 20], iou=0.4, score=0.2, sort_result_descending=descending)
    feeds = {"boxes": _boxes(rng, 2, 20), "scores": np.round(rng.random((2, 3, 20)), 1).astype(np.float32)}
    _, scores, _ = check_run(xml, feeds, oracle="cpu").values()
    assert descending == bool((np.diff(scores[:, 2]) <= 0).all())


def test_f64_inputs_as_openvino_accepts_them(tmp_path):
    """OpenVINO takes any real type for NMSRotated (the plugin computes in f32, as ir-run)."""
    rng = np.random.default_rng(8)
    xml, _ = _model(tmp_path, [1, 10, 5], [1, 2, 10], et=ov.Type.f64)
    check_inference(xml)
    feeds = {"boxes": _boxes(rng, 1, 10).astype(np.float64), "scores": rng.random((1, 2, 10))}
    check_run(xml, feeds, oracle="cpu")


def test_f16_inputs(tmp_path):
    rng = np.random.default_rng(6)
    xml, _ = _model(tmp_path, [1, 12, 5], [1, 2, 12], et=ov.Type.f16)
    feeds = {"boxes": _boxes(rng, 1, 12).astype(np.float16), "scores": rng.random((1, 2, 12)).astype(np.float16)}
    check_inference(xml)
    _, scores, _ = ir_runner.load(str(xml)).run(feeds).values()
    assert scores.dtype == np.float32


def test_batch_rule_says_why():
    from ir_runner.ops.detection.nms_rotated import OPS

    assert "batch" in OPS[0].batch(None, [], [], [0, 0, None, None, None])


# -- seeded differential ------------------------------------------------------------------------------

def _closest(boxes: np.ndarray, threshold: float, clockwise: bool) -> float:
    """The smallest distance between the threshold and the IoU of any two boxes of one batch row."""
    gaps = [1.0]
    for row in boxes:
        for i, box in enumerate(row):
            corners, area = _corners(box, clockwise), float(np.float32(box[2] * box[3]))
            gaps += [abs(_iou(corners, area, other, clockwise) - threshold) for other in row[:i]]
    return min(gaps)


@pytest.mark.parametrize("seed", range(24))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    """Random boxes crowded enough to overlap, against the plugin bit for bit: the cases' IoUs keep away from the
    threshold by more than the bound (a pair within it would be decided by the plugin's last ULP)."""
    rng = np.random.default_rng(seed)
    b, c, m = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 24))
    iou = float(np.float32(rng.choice([0.1, 0.3, 0.5, 0.7])))
    clockwise = bool(rng.integers(2))
    xml, _ = _model(tmp_path, [b, m, 5], [b, c, m], most=int(rng.choice([1, 5, 100])), iou=iou,
                    score=float(rng.choice([0.0, 0.2])), sort_result_descending=bool(rng.integers(2)),
                    output_type=str(rng.choice(["i32", "i64"])), clockwise=clockwise)
    check_inference(xml)
    feeds = {"boxes": _boxes(rng, b, m), "scores": rng.random((b, c, m)).astype(np.float32)}
    assert _closest(feeds["boxes"], iou, clockwise) > 1e-5
    check_run(xml, feeds, oracle="cpu")
