"""NonMaxSuppression-5/9 (and 1/3/4, selecting as 5: bit for bit against the CPU plugin): output shapes as
OpenVINO infers them (data-dependent: bounded at load, concrete at run), values against OpenVINO's CPU plugin
(the reference has no Node.evaluate for NMS) and OpenVINO's own op_reference expectations, ties, thresholds,
soft NMS, sorting across rows, refusals, seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset4, opset5, opset9  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.ops.detection.nms import NAMES  # noqa: E402
from ir_runner.ops.toolkit.stl_order import std_sort  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, cpu_outputs, write_ir  # noqa: E402

MAKERS = {5: opset5.non_max_suppression, 9: opset9.non_max_suppression}


def _param(shape, et=ov.Type.f32, name="boxes"):
    return opset9.parameter(ov.PartialShape(shape), et, name=name)


def _model(tmp_path, version, boxes_shape, scores_shape, *consts, et=ov.Type.f32, **attrs):
    b, s = _param(boxes_shape, et, "boxes"), _param(scores_shape, et, "scores")
    node = MAKERS[version](b, s, *consts, **attrs)
    return write_ir(node, [b, s], tmp_path), node


def _c(value, dtype=np.float32):
    return opset9.constant(np.array(value, dtype=dtype))


def _consts(most, iou=0.5, score=0.0, sigma=0.0):
    return [_c(most, np.int64), _c(iou), _c(score), _c(sigma)]


# -- shapes --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [5, 9])
@pytest.mark.parametrize("boxes, scores, most", [
    ([1, 6, 4], [1, 1, 6], 3), ([2, 6, 4], [2, 2, 6], 10), ([2, 6, 4], [2, 2, 6], 0), ([2, 6, 4], [2, (2, 5), 6], 3),
    ([2, (1, 10), 4], [2, 2, -1], 3), ([2, -1, 4], [2, 3, 6], 2), ([-1, 6, 4], [-1, 3, 6], 3),
    ([2, 6, -1], [2, 3, 6], 2), ([2, 6, 4], [-1, -1, -1], 0), ([1, 6, 4], [1, 1, 6], None), ([1, 6, 4], [1, 1, 6], -2),
])
def test_shapes_as_openvino_infers_them(version, boxes, scores, most, tmp_path):
    consts = [] if most is None else [_c(most, np.int64)]
    xml, node = _model(tmp_path, version, boxes, scores, *consts)
    check_output_shapes(xml, node)
    check_inference(xml)


def test_dynamic_ranks_and_computed_count(tmp_path):
    b, s, k = _param(ov.PartialShape.dynamic(), name="boxes"), _param([2, 2, 6], name="scores"), \
        _param([], ov.Type.i64, "k")
    node = opset9.non_max_suppression(b, s, k)
    xml = write_ir(node, [b, s, k], tmp_path)
    check_output_shapes(xml, node)
    rng = np.random.default_rng(0)
    boxes = np.concatenate([rng.random((2, 6, 2), dtype=np.float32), 2 + rng.random((2, 6, 2), dtype=np.float32)], -1)
    feeds = {"boxes": boxes, "scores": rng.random((2, 2, 6), dtype=np.float32), "k": np.int64(2)}
    got = list(ir_runner.load(str(xml)).run(feeds).values())
    b2 = _param([2, 6, 4], name="boxes")  # the CPU plugin takes no dynamic rank: compare with a static twin
    static = write_ir(opset9.non_max_suppression(b2, s, k), [b2, s, k], tmp_path, "static")
    want = list(check_run(static, feeds, oracle="cpu").values())
    assert all(np.array_equal(g, w) for g, w in zip(got, want)) and 0 < got[2][0] <= 8


@pytest.mark.parametrize("boxes, scores, what", [
    ([2, 6, 4, 1], [2, 3, 6], "rank 3"), ([2, 6], [2, 3, 6], "rank 3"), ([2, 6, 4], [2, 3], "rank 3"),
    ([2, 6, 5], [2, 3, 6], "must be 4"), ([2, 6, 4], [3, 3, 6], "batch"), ([2, 6, 4], [2, 3, 7], "number of boxes"),
])
def test_bad_shapes_name_layer_and_port(boxes, scores, what, tmp_path):
    xml, _ = _model(tmp_path, 9, [1, 6, 4], [1, 1, 6], _c(3, np.int64))
    text = xml.read_text()
    text = text.replace('<dim>1</dim>\n\t\t\t\t\t<dim>6</dim>\n\t\t\t\t\t<dim>4</dim>', "".join(
        f"<dim>{d}</dim>\n\t\t\t\t\t" for d in boxes).rstrip("\n\t"))
    text = text.replace('<dim>1</dim>\n\t\t\t\t\t<dim>1</dim>\n\t\t\t\t\t<dim>6</dim>', "".join(
        f"<dim>{d}</dim>\n\t\t\t\t\t" for d in scores).rstrip("\n\t"))
    text = text.replace('shape="1,6,4"', f'shape="{",".join(map(str, boxes))}"')
    text = text.replace('shape="1,1,6"', f'shape="{",".join(map(str, scores))}"')
    xml.write_text(text)
    with pytest.raises(InferenceError, match=what) as info:
        ir_runner.load(str(xml))
    assert "NonMaxSuppression" in str(info.value) and "input" in str(info.value)


def test_bad_types_and_attributes(tmp_path):
    xml, _ = _model(tmp_path, 9, [1, 6, 4], [1, 1, 6], _c(3, np.float32))
    with pytest.raises(InferenceError, match="max_output_boxes_per_class must have an integer"):
        ir_runner.load(str(xml))
    xml, _ = _model(tmp_path, 9, [1, 6, 4], [1, 1, 6], _c(3, np.int64))
    xml.write_text(xml.read_text().replace('box_encoding="corner"', 'box_encoding="diagonal"'))
    with pytest.raises(IRError, match="box_encoding"):
        ir_runner.load(str(xml))


# -- values: OpenVINO's op_reference cases ----------------------------------------------------------

CASES = {
    "center": ([[0.5, 0.5, 1.0, 1.0], [0.5, 0.6, 1.0, 1.0], [0.5, 0.4, 1.0, 1.0], [0.5, 10.5, 1.0, 1.0],
                [0.5, 10.6, 1.0, 1.0], [0.5, 100.5, 1.0, 1.0]], "center", 3, [3, 0, 5]),
    "flipped": ([[1.0, 1.0, 0.0, 0.0], [0.0, 0.1, 1.0, 1.1], [0.0, 0.9, 1.0, -0.1], [0.0, 10.0, 1.0, 11.0],
                 [1.0, 10.1, 0.0, 11.1], [1.0, 101.0, 0.0, 100.0]], "corner", 3, [3, 0, 5]),
    "limit": ([[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9], [0.0, 10.0, 1.0, 11.0],
               [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]], "corner", 2, [3, 0]),
}
SCORES = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3]


@pytest.mark.parametrize("version", [5, 9])
@pytest.mark.parametrize("case", sorted(CASES))
def test_op_reference_cases(version, case, tmp_path):
    boxes, encoding, most, want = CASES[case]
    xml, _ = _model(tmp_path, version, [1, 6, 4], [1, 1, 6], *_consts(most), box_encoding=encoding,
                    sort_result_descending=False)
    got = check_run(xml, {"boxes": np.array([boxes], np.float32), "scores": np.array([[SCORES]], np.float32)},
                    oracle="cpu")
    indices, scores, count = got.values()
    assert indices[:, 2].tolist() == want and count.tolist() == [len(want)]
    assert scores[:, 2].tolist() == [np.float32(SCORES[i]) for i in want]


@pytest.mark.parametrize("version", [5, 9])
def test_identical_boxes_and_tied_scores_take_the_lower_index(version, tmp_path):
    xml, _ = _model(tmp_path, version, [1, 10, 4], [1, 1, 10], *_consts(3))
    feeds = {"boxes": np.tile(np.array([0, 0, 1, 1], np.float32), (1, 10, 1)), "scores": np.full((1, 1, 10), 0.9,
                                                                                                np.float32)}
    got = check_run(xml, feeds, oracle="cpu")
    assert list(got.values())[0].tolist() == [[0, 0, 0]]
    feeds["boxes"] = np.arange(40, dtype=np.float32).reshape(1, 10, 4) * 3  # disjoint boxes, all tied
    got = check_run(xml, feeds, oracle="cpu")
    assert list(got.values())[0][:, 2].tolist() == [0, 1, 2]


@pytest.mark.parametrize("version", [5, 9])
def test_iou_equal_to_the_threshold(version, tmp_path):
    """IoU exactly 0.5: version 5 drops the box (``>=``), version 9 keeps it (``>``, as the reference and the
    specification; the CPU plugin drops it: docs/semantics.md)."""
    xml, _ = _model(tmp_path, version, [1, 2, 4], [1, 1, 2], *_consts(5, iou=0.5))
    feeds = {"boxes": np.array([[[0, 0, 1, 3], [0, 1, 1, 4]]], np.float32), "scores": np.array([[[0.9, 0.8]]],
                                                                                                np.float32)}
    got = ir_runner.load(str(xml)).run(feeds) if version == 9 else check_run(xml, feeds, oracle="cpu")
    assert list(got.values())[2].tolist() == ([1] if version == 5 else [2])


def test_zero_count_selects_nothing(tmp_path):
    xml, _ = _model(tmp_path, 5, [1, 3, 4], [1, 1, 3], *_consts(0))
    got = ir_runner.load(str(xml)).run({"boxes": np.zeros((1, 3, 4), np.float32),
                                        "scores": np.ones((1, 1, 3), np.float32)})
    assert [v.tolist() for v in got.values()] == [[], [], [0]]


@pytest.mark.parametrize("version", [5, 9])
def test_score_threshold_is_strict(version, tmp_path):
    xml, _ = _model(tmp_path, version, [1, 3, 4], [1, 1, 3], *_consts(5, score=0.5))
    feeds = {"boxes": np.array([[[0, 0, 1, 1], [0, 2, 1, 3], [0, 4, 1, 5]]], np.float32),
             "scores": np.array([[[0.5, 0.6, 0.4]]], np.float32)}
    got = check_run(xml, feeds, oracle="cpu")
    assert list(got.values())[0][:, 2].tolist() == [1]


@pytest.mark.parametrize("version", [5, 9])
@pytest.mark.parametrize("descending", [False, True])
def test_rows_and_classes_sorted_or_not(version, descending, tmp_path):
    rng = np.random.default_rng(3)
    xml, _ = _model(tmp_path, version, [2, 8, 4], [2, 3, 8], *_consts(4, iou=0.4), sort_result_descending=descending,
                    output_type="i32")
    feeds = {"boxes": (rng.random((2, 8, 4)) * 3).astype(np.float32),
             "scores": np.round(rng.random((2, 3, 8)), 1).astype(np.float32)}
    got = check_run(xml, feeds, oracle="cpu")
    assert list(got.values())[0].dtype == np.int32


def test_near_ties_sorted_with_the_references_comparison(tmp_path):
    """NMS-5 sorts with scores closer than 1e-6 counted equal (then batch, class, box), through std::sort; the CPU
    plugin sorts by the exact score instead. Scores 2e-6 apart are an order: both agree."""
    xml, _ = _model(tmp_path, 5, [1, 20, 4], [1, 2, 20], *_consts(20, iou=0.99))
    boxes = np.arange(80, dtype=np.float32).reshape(1, 20, 4) * 2
    scores = (0.5 + np.arange(40, dtype=np.float32).reshape(1, 2, 20) * 2e-6).astype(np.float32)
    check_run(xml, {"boxes": boxes, "scores": scores}, oracle="cpu")
    scores = (0.5 + np.arange(40, dtype=np.float32).reshape(1, 2, 20) * 1e-7).astype(np.float32)
    with pytest.raises(InputError, match="inconsistent"):  # its unguarded partition runs off the end
        ir_runner.load(str(xml)).run({"boxes": boxes, "scores": scores})



def test_std_sort_emulation_sorts_a_true_order():
    rng = np.random.default_rng(0)
    for n in (0, 1, 5, 16, 17, 100, 300):
        items = rng.integers(0, 50, n).tolist()
        std_sort(items, lambda a, b: a < b)
        assert items == sorted(items)


@pytest.mark.parametrize("version", [5, 9])
def test_soft_nms_indices_exact_scores_near_the_plugin(version, tmp_path):
    rng = np.random.default_rng(7)
    xml, _ = _model(tmp_path, version, [2, 12, 4], [2, 2, 12], *_consts(6, iou=0.4, score=0.1, sigma=0.5),
                    sort_result_descending=False)
    feeds = {"boxes": (rng.random((2, 12, 4)) * 3).astype(np.float32),
             "scores": rng.random((2, 2, 12)).astype(np.float32)}
    check_run(xml, feeds, oracle="cpu", rtol=1e-6)  # indices are integers: exact under any rtol


@pytest.mark.parametrize("et", [ov.Type.f16, ov.Type.bf16])
def test_narrow_float_inputs(et, tmp_path):
    rng = np.random.default_rng(1)
    b, s = _param([1, 6, 4], et, "boxes"), _param([1, 2, 6], et, "scores")
    consts = [_c(3, np.int32), opset9.convert(_c(0.5), et), opset9.convert(_c(0.1), et)]
    xml = write_ir(opset9.non_max_suppression(b, s, *consts), [b, s], tmp_path)
    check_inference(xml)
    if et == ov.Type.f16:
        feeds = {"boxes": (rng.random((1, 6, 4)) * 3).astype(np.float16),
                 "scores": rng.random((1, 2, 6)).astype(np.float16)}
        got = check_run(xml, feeds, oracle="cpu")
        assert list(got.values())[1].dtype == np.float32


def test_absent_optional_inputs_select_nothing(tmp_path):
    xml, _ = _model(tmp_path, 9, [1, 3, 4], [1, 1, 3])
    got = ir_runner.load(str(xml)).run({"boxes": np.zeros((1, 3, 4), np.float32),
                                        "scores": np.ones((1, 1, 3), np.float32)})
    assert [v.shape for v in got.values()] == [(0, 3), (0, 3), (1,)]  # (the CPU plugin leaves valid_outputs unset)
    assert list(got.values())[2].tolist() == [0]


def test_negative_count_refused_at_run(tmp_path):
    b, s, k = _param([1, 3, 4], name="boxes"), _param([1, 1, 3], name="scores"), _param([], ov.Type.i64, "k")
    xml = write_ir(opset9.non_max_suppression(b, s, k), [b, s, k], tmp_path)
    with pytest.raises(InputError, match="the inputs' shapes and values do not fit the model: .*negative"):
        ir_runner.load(str(xml)).run({"boxes": np.zeros((1, 3, 4), np.float32), "scores": np.ones((1, 1, 3),
                                                                                                  np.float32),
                                      "k": np.int64(-1)})


def test_nan_and_degenerate_boxes_follow_the_reference_loop(tmp_path):
    xml, _ = _model(tmp_path, 9, [1, 5, 4], [1, 1, 5], *_consts(5, iou=0.3))
    boxes = np.array([[[0, 0, 1, 1], [np.nan, 0, 1, 1], [0, 0, 0, 1], [0, 0, 1, 1.1], [np.inf, 0, -np.inf, 1]]],
                     np.float32)
    got = ir_runner.load(str(xml)).run({"boxes": boxes, "scores": np.array([[[0.9, 0.8, 0.7, 0.6, 0.5]]],
                                                                           np.float32)})
    # box 1 (NaN): IoU NaN, weight 0, score 0 <= threshold: dropped; box 2 has no area: IoU 0, kept; box 3
    # overlaps box 0; box 4 is infinitely tall: IoU 1 / inf = 0, kept.
    assert list(got.values())[0][:, 2].tolist() == [0, 2, 4]


def test_batch_rule_says_why_rows_mix():
    from ir_runner.ops.detection.nms import OPS

    assert all("batch" in op.batch(None, [], [], [0, 0]) for op in OPS)


# -- seeded differential ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(30))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    version = (5, 9)[seed % 2]
    n, batches, classes = int(rng.integers(1, 25)), int(rng.integers(1, 3)), int(rng.integers(1, 4))
    xml, _ = _model(tmp_path, version, [batches, n, 4], [batches, classes, n],
                    *_consts(int(rng.integers(1, 8)), float(rng.choice([0.3, 0.5, 0.7])), float(rng.choice([0, 0.2])),
                             0.0),
                    box_encoding=("corner", "center")[int(rng.integers(2))],
                    sort_result_descending=bool(rng.integers(2)))
    feeds = {"boxes": (rng.random((batches, n, 4)) * 4).astype(np.float32),
             "scores": np.round(rng.random((batches, classes, n)), 1).astype(np.float32)}
    # hard NMS only: the plugin's soft-NMS decay differs by ULPs, enough to change a selection near a threshold
    check_run(xml, feeds, oracle="cpu")


# -- torchvision's batched NMS: boxes of each class offset apart, thousands of candidates -------------------

def _batched_boxes(rng, n: int, classes: int, side: float = 320.0) -> np.ndarray:
    """torchvision's ``batched_nms`` layout: random boxes in a ``side`` square, each shifted by its class index
    times ``side + 1`` in both axes, so that boxes of different classes never overlap."""
    corner = rng.random((n, 2)) * side
    size = rng.random((n, 2)) * side / 4
    offset = rng.integers(0, classes, n)[:, None] * (side + 1)
    return (np.concatenate([corner, corner + size], axis=1) + offset).astype(np.float32)


def _every_pair(boxes: np.ndarray, scores: np.ndarray, most: int, threshold: float, version: int) -> list[int]:
    """Hard NMS comparing each taken box with every later candidate (the loop before the x1 window)."""
    from ir_runner.ops.detection.nms import _iou_many, _normalised

    norm = _normalised(boxes, False, version)
    order = np.lexsort((np.arange(len(scores)), -scores.astype(np.float64)))
    picked = norm[order]
    areas = (picked[:, 2] - picked[:, 0]) * (picked[:, 3] - picked[:, 1])
    alive, taken = np.ones(len(order), bool), []
    for pos in range(len(order)):
        if alive[pos]:
            taken.append(int(order[pos]))
            if len(taken) == most:
                break
            iou = _iou_many(picked[pos], areas[pos], picked[pos + 1:], areas[pos + 1:])
            alive[pos + 1:] &= ~((iou >= threshold) if version == 5 else (iou > threshold))
    return taken


@pytest.mark.parametrize("version, threshold", [(9, 0.5), (5, 0.45), (9, 0.0), (5, 0.0), (9, -0.1)])
def test_many_class_offset_boxes_as_every_pair_compared(version, threshold, tmp_path):
    """SSDlite's NMS-9 takes ~27000 candidates of 90 classes offset apart (scripts/make_detection_models.py); a
    taken box is compared only with candidates within the widest box's width in x. Selections equal the loop
    comparing every pair, including thresholds where an IoU of 0 drops a box (the window is not used), boxes
    wider than their neighbours, degenerate (zero-width) and touching boxes; and equal the CPU plugin."""
    rng = np.random.default_rng(version)
    boxes = _batched_boxes(rng, 3000, 12)
    boxes[:40, 2] = boxes[:40, 0]  # no width: no area, IoU 0
    boxes[40:60] = boxes[60:80] + np.float32(0)  # duplicates
    boxes[80:90, 0] = boxes[90:100, 2]  # a box starting where another ends (touching, IoU 0)
    boxes[100, 2] = boxes[100, 0] + 2000  # one very wide box widens every window
    scores = (np.round(rng.random(3000), 3) + 0.001).astype(np.float32)  # above 0; ties: the lower index first
    xml, _ = _model(tmp_path, version, [1, 3000, 4], [1, 1, 3000], *_consts(5000, iou=threshold))
    feeds = {"boxes": boxes[None], "scores": scores[None, None]}
    got = ir_runner.load(str(xml)).run(feeds)
    selected = list(got.values())[0][:, 2].tolist()
    assert selected == _every_pair(boxes, scores, 5000, threshold, version)
    assert 12 < len(selected) < 3000 or threshold <= 0
    if threshold > 0:
        check_run(xml, feeds, oracle="cpu")

def _nms(tmp_path, version, shapes, consts, attrs):
    make = {1: opset1.non_max_suppression, 3: opset3.non_max_suppression, 4: opset4.non_max_suppression}[version]
    b = opset1.parameter(shapes[0], ov.Type.f32, name="boxes")
    s = opset1.parameter(shapes[1], ov.Type.f32, name="scores")
    for p in (b, s):
        p.output(0).get_tensor().set_names({p.get_friendly_name()})
    values = [opset1.constant(np.int64(consts[0])), opset1.constant(np.float32(consts[1])),
              opset1.constant(np.float32(consts[2]))]
    node = make(b, s, *values, *attrs)
    return write_ir(node, [b, s], tmp_path), node


@pytest.mark.parametrize("version", [1, 3, 4])
@pytest.mark.parametrize("encoding", ["corner", "center"])
@pytest.mark.parametrize("descending", [True, False])
def test_non_max_suppression_old_versions_equal_the_cpu_plugins(version, encoding, descending, tmp_path):
    """Versions 1, 3 and 4 select as version 5 (the plugins convert them): the CPU plugin's rows, bit for bit,
    over random boxes, thresholds and counts; the declared row count is OpenVINO's static one."""
    rng = np.random.default_rng(version)
    attrs = (encoding, descending) if version == 1 else (encoding, descending, "i32" if version == 3 else "i64")
    for trial in range(4):
        boxes = rng.random((2, 7, 4)).astype(np.float32)
        boxes[..., 2:] += boxes[..., :2] * (1 if encoding == "corner" else 0)
        scores = rng.random((2, 3, 7)).astype(np.float32)
        consts = (int(rng.integers(0, 6)), float(rng.uniform(0, 0.7)), float(rng.uniform(0, 0.9)))
        path, node = _nms(tmp_path, version, ([2, 7, 4], [2, 3, 7]), consts, attrs)
        check_inference(path)
        (got,) = ir_runner.load(str(path)).run({"boxes": boxes, "scores": scores}).values()
        (want,) = cpu_outputs(path, {"boxes": boxes, "scores": scores})
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), trial


@pytest.mark.parametrize("version", [1, 3, 4])
@pytest.mark.parametrize("shapes", [([2, -1, 4], [2, 3, -1]), ([-1, 7, 4], [-1, -1, 7]), ([2, 7, 4], [2, 3, 7])])
def test_non_max_suppression_old_versions_shapes_as_openvino_infers_them(version, shapes, tmp_path):
    attrs = ("corner", True) if version == 1 else ("corner", True, "i64")
    path, node = _nms(tmp_path, version, shapes, (3, 0.5, 0.1), attrs)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("version", [1, 3, 4])
@pytest.mark.parametrize(("most", "scores_shape"), [(-2, [2, 3, -1]), (-2, [2, 3, 7]), (-1, [2, 3, 7]),
                                                    (3, ov.PartialShape.dynamic())])
def test_non_max_suppression_old_versions_counts_as_openvino(version, most, scores_shape, tmp_path):
    """OpenVINO's Dimension of the count: -1 unknown, below -1 zero rows (never a negative dim); versions 1 and 3
    bound the rows by the count alone when the scores' rank is unknown."""
    attrs = ("corner", True) if version == 1 else ("corner", True, "i64")
    path, node = _nms(tmp_path, version, ([2, 7, 4], scores_shape), (most, 0.5, 0.1), attrs)
    check_output_shapes(path, node)


@pytest.mark.parametrize("version", [1, 3, 4])
def test_non_max_suppression_old_versions_negative_count_refused_at_run(version, tmp_path):
    attrs = ("corner", True) if version == 1 else ("corner", True, "i64")
    path, _ = _nms(tmp_path, version, ([2, 7, 4], [2, 3, 7]), (-2, 0.5, 0.1), attrs)
    model = ir_runner.load(str(path))
    feeds = {"boxes": np.zeros((2, 7, 4), np.float32), "scores": np.zeros((2, 3, 7), np.float32)}
    with pytest.raises(InputError, match="max_output_boxes_per_class is -2"):
        model.run(feeds)


@pytest.mark.parametrize("version", ["opset1", "opset3", "opset4"])
def test_non_max_suppression_old_versions_without_a_count_select_nothing(version, tmp_path):
    """Without max_output_boxes_per_class, OpenVINO adds its default 0: no rows, [0, 3] at load."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    boxes, scores = b.parameter("boxes", "f32", "2,7,4"), b.parameter("scores", "f32", "2,3,7")
    b.result(b.layer("NonMaxSuppression", version, [boxes, scores], attrs={"box_encoding": "corner"},
                     out_specs=[("I64", [0, 3])], name="nms"))
    model = ir_runner.load(*b.build())
    assert [str(o.partial_shape) for o in model.outputs] == ["[0,3]"]


@pytest.mark.parametrize("position", [2, 3, 4])
def test_non_max_suppression_old_versions_take_scalars_only(position, tmp_path):
    """Versions 1, 3 and 4 take the count and thresholds as scalars (version 5 also takes 1-element 1-D)."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    inputs = [b.parameter("boxes", "f32", "2,7,4"), b.parameter("scores", "f32", "2,3,7")]
    for i, value in enumerate((np.int64(3), np.float32(0.5), np.float32(0.1)), start=2):
        inputs.append(b.const(f"c{i}", np.array([value] if i == position else value)))
    b.result(b.layer("NonMaxSuppression", "opset4", inputs, out_specs=[("I64", [18, 3])], name="nms"))
    with pytest.raises(InferenceError, match=rf"layer 'nms' \(NonMaxSuppression-4.*{NAMES[position]} must be a"
                                             r" scalar"):
        ir_runner.load(*b.build())
