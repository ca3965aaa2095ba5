"""MulticlassNms-8/9 and MatrixNms-8: output shapes as OpenVINO infers them (data-dependent: bounded at load,
concrete at run), refusals naming the layer, values against OpenVINO's CPU plugin (the reference has no
Node.evaluate for them): MulticlassNms bit for bit, MatrixNms' decayed scores within a bound; roisnum layouts,
nms_eta, background class, keep_top_k, the sort orders, and seeded differential runs."""

from __future__ import annotations

import re

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset8, opset9  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

MATRIX_RTOL = 2e-6  # decayed scores: the plugin's f32 IoU may be contracted into FMAs (ISA-dependent), ~4 ULP


def _param(shape, et=ov.Type.f32, name="boxes"):
    return opset9.parameter(ov.PartialShape(shape) if not isinstance(shape, ov.PartialShape) else shape, et,
                            name=name)


def _make(kind, boxes, scores, *rest, **attrs):
    if kind == "matrix":
        return opset8.matrix_nms(boxes, scores, **attrs)
    if kind == "mc8":
        return opset8.multiclass_nms(boxes, scores, **attrs)
    return opset9.multiclass_nms(boxes, scores, *rest, **attrs)


def _model(tmp_path, kind, boxes_shape, scores_shape, rois_shape=None, et=ov.Type.f32, name="model", **attrs):
    b, s = _param(boxes_shape, et, "boxes"), _param(scores_shape, et, "scores")
    params = [b, s]
    if rois_shape is not None:
        params.append(_param(rois_shape, ov.Type.i32, "roisnum"))
    node = _make(kind, *params, **attrs)
    return write_ir(node, params, tmp_path, name), node


def _boxes(rng, shape, spread=4.0, size=2.0):
    corner = rng.random(shape[:-1] + (2,)) * spread
    return np.concatenate([corner, corner + rng.random(shape[:-1] + (2,)) * size], -1).astype(np.float32)


def _distinct(rng, shape) -> np.ndarray:
    """Scores in (0, 1), all different: MatrixNms orders tied candidates in an unspecified way (partial_sort)."""
    size = int(np.prod(shape))
    return ((rng.permutation(size) + 1) / (size + 1)).astype(np.float32).reshape(shape)


def _against_cpu(xml, feeds, kind):
    """ir-run's outputs against the CPU plugin's: exact, MatrixNms' scores within MATRIX_RTOL. The plugin's
    MatrixNms refuses to give no box at all ("Total number of boxes is less or equal than 0"): then ir-run's
    empty result stands alone."""
    got = ir_runner.load(str(xml)).run(feeds)
    outputs, indices, counts = got.values()
    if kind == "matrix" and not len(outputs):
        assert counts.sum() == 0 and indices.shape == (0, 1)
        return got
    if kind == "matrix":
        return check_run(xml, feeds, oracle="cpu", rtol=MATRIX_RTOL)
    return check_run(xml, feeds, oracle="cpu")


# -- shapes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["mc8", "mc9", "matrix"])
@pytest.mark.parametrize("boxes, scores, attrs", [
    ([2, 7, 4], [2, 3, 7], {}), ([2, 7, 4], [2, 3, 7], {"nms_top_k": 3}), ([2, 7, 4], [2, 3, 7], {"keep_top_k": 5}),
    ([2, 7, 4], [2, 3, 7], {"nms_top_k": 30, "keep_top_k": 50}), ([2, 7, 4], [2, 3, 7], {"background_class": 1}),
    ([-1, 7, 4], [-1, 3, 7], {}), ([2, -1, 4], [2, 3, -1], {"nms_top_k": 4}), ([2, (2, 9), 4], [2, 3, -1], {}),
    ([2, 7, 4], [2, -1, 7], {"keep_top_k": 4}), ([2, 7, -1], [2, 3, 7], {}), ([1, 0, 4], [1, 3, 0], {}),
    ([2, 7, 4], [2, 0, 7], {}), ("...", [2, 3, 7], {}), ([2, 7, 4], [2, 3, -1], {"keep_top_k": 3}),
    ([2, -1, 4], [2, 3, -1], {"nms_top_k": 4, "keep_top_k": 2}),
])
def test_shapes_as_openvino_infers_them(kind, boxes, scores, attrs, tmp_path):
    shape = lambda s: ov.PartialShape.dynamic() if s == "..." else s  # noqa: E731
    xml, node = _model(tmp_path, kind, shape(boxes), shape(scores), **attrs)
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("boxes, scores, rois, attrs", [
    ([3, 10, 4], [3, 10], [2], {}), ([3, 10, 4], [3, 10], [-1], {"nms_top_k": 2}),
    ([-1, 10, 4], [-1, -1], [4], {"keep_top_k": 6}), ([3, 10, 4], [3, 10], "...", {}),
    ([3, (1, 12), 4], [3, 10], [2], {"background_class": 0}),
])
def test_roisnum_shapes(boxes, scores, rois, attrs, tmp_path):
    rois = ov.PartialShape.dynamic() if rois == "..." else rois
    xml, node = _model(tmp_path, "mc9", boxes, scores, rois, **attrs)
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("et", [ov.Type.f16, ov.Type.bf16])
@pytest.mark.parametrize("kind", ["mc9", "matrix"])
def test_narrow_types_and_output_type(kind, et, tmp_path):
    xml, _ = _model(tmp_path, kind, [1, 5, 4], [1, 2, 5], et=et, output_type="i32")
    check_inference(xml)


def _edited(tmp_path, kind, old, new, **attrs):
    xml, _ = _model(tmp_path, kind, [1, 6, 4], [1, 2, 6], **attrs)
    text = xml.read_text()
    assert old in text
    xml.write_text(text.replace(old, new))
    return xml


@pytest.mark.parametrize("kind, old, new, error, what", [
    ("mc9", 'nms_top_k="-1"', 'nms_top_k="-2"', InferenceError, "nms_top_k=-2"),
    ("matrix", 'keep_top_k="-1"', 'keep_top_k="-5"', InferenceError, "keep_top_k=-5"),
    ("mc8", 'background_class="-1"', 'background_class="-3"', InferenceError, "background_class=-3"),
    ("mc9", 'nms_eta="1"', 'nms_eta="1.5"', InferenceError, "nms_eta"),
    ("mc9", 'sort_result_type="none"', 'sort_result_type="area"', IRError, "sort_result_type"),
    ("matrix", 'decay_function="linear"', 'decay_function="cubic"', IRError, "decay_function"),
    ("matrix", 'output_type="i64"', 'output_type="u8"', IRError, "output_type"),
])
def test_bad_attributes_name_the_layer(kind, old, new, error, what, tmp_path):
    xml = _edited(tmp_path, kind, old, new)
    with pytest.raises(error, match=what) as info:
        ir_runner.load(str(xml))
    assert ("MulticlassNms" if kind != "matrix" else "MatrixNms") in str(info.value)


@pytest.mark.parametrize("kind, boxes, scores, what", [
    ("mc9", "1,6,4,1", "1,2,6", "boxes must have rank 3"), ("mc8", "1,6,5", "1,2,6", "last dim of boxes must be 4"),
    ("matrix", "1,6,4", "2,2,6", "first dims"), ("mc9", "1,6,4", "1,2,7", "same number of boxes"),
    ("mc8", "1,6,4", "2,6", "scores must have rank 3"),
])
def test_bad_shapes_name_layer_and_port(kind, boxes, scores, what, tmp_path):
    xml, _ = _model(tmp_path, kind, [1, 6, 4], [1, 2, 6])
    text = re.sub(r">\s+<dim>", "><dim>", xml.read_text())  # (one line per port's dims: then swap them)
    for old, new in (("1,6,4", boxes), ("1,2,6", scores)):
        text = text.replace(f'shape="{old}"', f'shape="{new}"')
        text = text.replace("".join(f"<dim>{d}</dim>" for d in old.split(",")),
                            "".join(f"<dim>{d}</dim>" for d in new.split(",")))
    xml.write_text(text)
    with pytest.raises(InferenceError, match=what) as info:
        ir_runner.load(str(xml))
    assert "input" in str(info.value)


def test_bad_types(tmp_path):
    xml, _ = _model(tmp_path, "mc9", [2, 6, 4], [2, 6], [1])
    xml.write_text(xml.read_text().replace('element_type="i32"', 'element_type="f32"').replace(
        'precision="I32"', 'precision="FP32"'))
    with pytest.raises(InferenceError, match="roisnum must be i32 or i64"):
        ir_runner.load(str(xml))


# -- values ---------------------------------------------------------------------------------------------

def test_paddle_style_example(tmp_path):
    """Two overlapping boxes and a far one, two classes: in each class the lower-scored of the overlapping boxes
    (IoU 0.81 >= 0.5) goes; the image's boxes are ordered by score."""
    xml, _ = _model(tmp_path, "mc9", [1, 3, 4], [1, 2, 3], iou_threshold=0.5, sort_result_type="score")
    boxes = np.array([[[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7], [0.1, 0.6, 0.2]]], np.float32)
    outputs, indices, counts = check_run(xml, {"boxes": boxes, "scores": scores}, oracle="cpu").values()
    assert outputs[:, :2].tolist() == [[0, np.float32(0.9)], [0, np.float32(0.7)], [1, np.float32(0.6)],
                                       [1, np.float32(0.2)]]
    assert indices[:, 0].tolist() == [0, 2, 1, 2] and counts.tolist() == [4]


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("eta", [1.0, 0.7, 0.0])
def test_iou_threshold_eta_and_normalized(eta, normalized, tmp_path):
    rng = np.random.default_rng(int(eta * 10) + normalized)
    xml, _ = _model(tmp_path, "mc9", [2, 40, 4], [2, 3, 40], iou_threshold=0.9, nms_eta=eta, normalized=normalized,
                    score_threshold=0.05)
    feeds = {"boxes": _boxes(rng, (2, 40, 4), 3.0, 3.0), "scores": np.round(rng.random((2, 3, 40)), 2).astype(
        np.float32)}
    _against_cpu(xml, feeds, "mc9")


@pytest.mark.parametrize("sort", ["none", "score", "classid"])
@pytest.mark.parametrize("across", [False, True])
@pytest.mark.parametrize("kind", ["mc8", "matrix"])
def test_sort_orders(kind, sort, across, tmp_path):
    rng = np.random.default_rng(5)
    xml, _ = _model(tmp_path, kind, [3, 12, 4], [3, 3, 12], sort_result_type=sort, sort_result_across_batch=across,
                    keep_top_k=7, score_threshold=0.2)
    scores = _distinct(rng, (3, 3, 12)) if kind == "matrix" else np.round(rng.random((3, 3, 12)), 2).astype(np.float32)
    feeds = {"boxes": _boxes(rng, (3, 12, 4)), "scores": scores}
    outputs, _, counts = _against_cpu(xml, feeds, kind).values()
    assert len(outputs) == counts.sum() and (counts <= 7).all()


def test_roisnum_layout_against_the_plugin(tmp_path):
    """boxes [C, M, 4], scores [C, M], roisnum [N]: image b owns rows sum(roisnum[:b])...; an image with no rows
    gives nothing; selected_indices are (row * C + class)."""
    rng = np.random.default_rng(11)
    xml, _ = _model(tmp_path, "mc9", [3, 20, 4], [3, 20], [4], iou_threshold=0.5, background_class=1,
                    keep_top_k=6, sort_result_type="classid")
    feeds = {"boxes": _boxes(rng, (3, 20, 4)), "scores": np.round(rng.random((3, 20)), 2).astype(np.float32),
             "roisnum": np.array([5, 0, 9, 6], np.int32)}
    outputs, indices, counts = _against_cpu(xml, feeds, "mc9").values()
    assert counts[1] == 0 and (indices[:, 0] % 3 != 1).all()


@pytest.mark.parametrize("rois, what", [([5, -1, 2], "negative"), ([10, 9, 2], "more than the 20 rows")])
def test_bad_roisnum_refused(rois, what, tmp_path):
    xml, _ = _model(tmp_path, "mc9", [2, 20, 4], [2, 20], [3])
    with pytest.raises(InputError, match=what):
        ir_runner.load(str(xml)).run({"boxes": np.zeros((2, 20, 4), np.float32), "scores": np.ones((2, 20), np.float32),
                                      "roisnum": np.array(rois, np.int32)})


@pytest.mark.parametrize("decay", ["linear", "gaussian"])
@pytest.mark.parametrize("normalized", [True, False])
def test_matrix_decay(decay, normalized, tmp_path):
    rng = np.random.default_rng(3 + normalized)
    xml, _ = _model(tmp_path, "matrix", [2, 30, 4], [2, 2, 30], decay_function=decay, gaussian_sigma=2.0,
                    post_threshold=0.1, normalized=normalized, score_threshold=0.05)
    feeds = {"boxes": _boxes(rng, (2, 30, 4)), "scores": _distinct(rng, (2, 2, 30))}
    outputs = list(_against_cpu(xml, feeds, "matrix").values())[0]
    assert (outputs[:, 1] <= 1).all() and len(outputs) > 10


def test_matrix_linear_decay_by_hand(tmp_path):
    """Three boxes, one class: the second overlaps the first with IoU 1/2 (decay (1 - 0.5) / (1 - 0 + 1e-10));
    the third overlaps the second (IoU 1/3) but the second's own max IoU is 1/2: decay (1 - 1/3) / (1 - 1/2)
    = 4/3 > 1, so the first's IoU 0 decides (decay 1)."""
    xml, _ = _model(tmp_path, "matrix", [1, 3, 4], [1, 1, 3])
    boxes = np.array([[[0, 0, 2, 2], [0, 0, 2, 1], [0, 0.5, 2, 1.5]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7]]], np.float32)
    outputs = list(_against_cpu(xml, {"boxes": boxes, "scores": scores}, "matrix").values())[0]
    want = [np.float32(0.9), np.float32(np.float32(0.5) * np.float32(0.8))]
    assert outputs[:2, 1].tolist() == want and len(outputs) == 3


def test_nothing_selected(tmp_path):
    xml, _ = _model(tmp_path, "mc8", [2, 4, 4], [2, 1, 4], score_threshold=0.5)
    got = _against_cpu(xml, {"boxes": np.zeros((2, 4, 4), np.float32),
                             "scores": np.full((2, 1, 4), 0.25, np.float32)}, "mc8")
    assert [v.shape for v in got.values()] == [(0, 6), (0, 1), (2,)]
    xml, _ = _model(tmp_path, "matrix", [2, 4, 4], [2, 1, 4], score_threshold=0.5, name="matrix")
    got = ir_runner.load(str(xml)).run({"boxes": np.zeros((2, 4, 4), np.float32),
                                        "scores": np.full((2, 1, 4), 0.25, np.float32)})
    assert [v.shape for v in got.values()] == [(0, 6), (0, 1), (2,)]


def test_f16_inputs_give_f16_outputs(tmp_path):
    rng = np.random.default_rng(2)
    xml, _ = _model(tmp_path, "mc9", [1, 10, 4], [1, 2, 10], et=ov.Type.f16, iou_threshold=0.5)
    feeds = {"boxes": _boxes(rng, (1, 10, 4)).astype(np.float16),
             "scores": np.round(rng.random((1, 2, 10)), 2).astype(np.float16)}
    outputs = list(check_run(xml, feeds, oracle="cpu").values())[0]
    assert outputs.dtype == np.float16


def test_batch_rule_says_why_rows_mix():
    from ir_runner.ops.detection.nms_multiclass import OPS

    assert all("images" in op.batch(None, [], [], [0, 0]) for op in OPS)


# -- seeded differential ------------------------------------------------------------------------------

def _random_case(rng, seed, tmp_path):
    kind = ("mc8", "mc9", "matrix", "mc9-rois")[seed % 4]
    n, b, c = int(rng.integers(1, 30)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    common = {"sort_result_type": str(rng.choice(["none", "score", "classid"])),
              "sort_result_across_batch": bool(rng.integers(2)), "output_type": str(rng.choice(["i32", "i64"])),
              "score_threshold": float(rng.choice([0.0, 0.3])), "nms_top_k": int(rng.choice([-1, 3, 10])),
              "keep_top_k": int(rng.choice([-1, 4, 20])), "background_class": int(rng.choice([-1, 0, 2])),
              "normalized": bool(rng.integers(2))}
    if kind == "matrix":
        common.update(decay_function=str(rng.choice(["linear", "gaussian"])), post_threshold=float(rng.choice([0,
                                                                                                          0.2])),
                      gaussian_sigma=float(rng.choice([2.0, 0.5])))
    else:
        common.update(iou_threshold=float(rng.choice([0.3, 0.5, 0.7])), nms_eta=float(rng.choice([1.0, 1.0, 0.8])))
    if kind == "mc9-rois":
        rois = rng.integers(0, 8, b).astype(np.int32)
        m = int(rois.sum()) + int(rng.integers(0, 3))
        xml, _ = _model(tmp_path, "mc9", [c, m, 4], [c, m], [b], **common)
        feeds = {"boxes": _boxes(rng, (c, m, 4)), "scores": np.round(rng.random((c, m)), 2).astype(np.float32),
                 "roisnum": rois}
        return xml, feeds, "mc9"
    xml, _ = _model(tmp_path, kind, [b, n, 4], [b, c, n], **common)
    scores = _distinct(rng, (b, c, n)) if kind == "matrix" else np.round(rng.random((b, c, n)), 2).astype(np.float32)
    return xml, {"boxes": _boxes(rng, (b, n, 4)), "scores": scores}, kind


@pytest.mark.parametrize("seed", range(40))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    xml, feeds, kind = _random_case(np.random.default_rng(seed), seed, tmp_path)
    check_inference(xml)
    _against_cpu(xml, feeds, kind)




@pytest.mark.parametrize("seed", range(4))
def test_generated_roisnum_fits_the_boxes(seed, tmp_path):
    """``--fill random`` draws roisnum counts of at most M / N, so that they never overrun the boxes."""
    from tests.cli.clikit import invoke

    xml, _ = _model(tmp_path, "mc9", [3, 20, 4], [3, 20], [4])
    result = invoke("run", xml, "--fill", "random", "--seed", str(seed))
    assert result.exit_code == 0 and "random [0,5] (roisnum of MulticlassNms-9" in result.stdout
