"""ExperimentalDetectronTopKROIs-6, ExperimentalDetectronPriorGridGenerator-6,
ExperimentalDetectronROIFeatureExtractor-6, ExperimentalDetectronGenerateProposalsSingleImage-6 and
ExperimentalDetectronDetectionOutput-6:
shapes as OpenVINO infers them,
values bit for bit against its CPU plugin (the core nodes have no evaluate), the corners (fewer rois than
max_rois, strides, grids that differ from the feature map), errors naming the layer."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.cpu_oracle import cpu_outputs  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, write_ir  # noqa: E402

D = ov.Dimension


def _params(**shapes):
    params = []
    for name, shape in shapes.items():
        p = opset1.parameter(ov.PartialShape.dynamic() if shape is None else shape, ov.Type.f32, name=name)
        p.output(0).get_tensor().set_names({name})
        params.append(p)
    return params


def _topk(tmp_path, rois_shape, probs_shape, k):
    params = _params(rois=rois_shape, probs=probs_shape)
    node = NodeFactory("opset6").create("ExperimentalDetectronTopKROIs", [p.output(0) for p in params],
                                        {"max_rois": k})
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize(("count", "k"), [(9, 4), (6, 6), (3, 5), (1, 1)])
def test_topk_rois_equal_the_cpu_plugins(count, k, tmp_path):
    rng = np.random.default_rng(count)
    path, _ = _topk(tmp_path, [count, 4], [count], k)
    check_inference(path)
    rois = rng.standard_normal((count, 4)).astype(np.float32)
    probs = rng.permutation(count).astype(np.float32) / count  # (distinct: the order of ties is unspecified)
    (got,) = ir_runner.load(str(path)).run({"rois": rois, "probs": probs}).values()
    (want,) = cpu_outputs(path, {"rois": rois, "probs": probs})
    kept = min(count, k)
    assert got.shape == want.shape and got[:kept].tolist() == want[:kept].tolist()
    assert not got[kept:].any()  # (the CPU plugin leaves those rows unwritten)


def test_topk_rois_ties_keep_the_input_order(tmp_path):
    path, _ = _topk(tmp_path, [4, 4], [4], 3)
    rois = np.arange(16, dtype=np.float32).reshape(4, 4)
    (got,) = ir_runner.load(str(path)).run({"rois": rois, "probs": np.array([0.5, 0.9, 0.5, 0.5], np.float32)}
                                           ).values()
    assert got[:, 0].tolist() == [4, 0, 8]


@pytest.mark.parametrize(("rois", "probs"), [([-1, 4], [-1]), (None, [5]), ([D(2, 6), 4], None)])
def test_topk_rois_shapes_as_openvino_infers_them(rois, probs, tmp_path):
    path, node = _topk(tmp_path, rois, probs, 3)
    check_inference(path)
    check_output_shapes(path, node)


def _grid(tmp_path, shapes, attrs):
    params = _params(priors=shapes[0], feature=shapes[1], image=shapes[2])
    node = NodeFactory("opset6").create("ExperimentalDetectronPriorGridGenerator", [p.output(0) for p in params],
                                        {"flatten": True, "h": 0, "w": 0, "stride_x": 0.0, "stride_y": 0.0, **attrs})
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize("attrs", [{}, {"flatten": False}, {"stride_x": 3.5}, {"stride_y": 2.25, "flatten": False},
                                   {"h": 4, "w": 5}])
def test_prior_grid_equals_the_cpu_plugins(attrs, tmp_path):
    path, node = _grid(tmp_path, ([3, 4], [1, 2, 4, 5], [1, 3, 30, 41]), attrs)
    check_inference(path)
    feeds = {"priors": np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32) * 9,
             "feature": np.zeros((1, 2, 4, 5), np.float32), "image": np.zeros((1, 3, 30, 41), np.float32)}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    (want,) = cpu_outputs(path, feeds)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("shapes", [([-1, 4], [1, 2, -1, 5], [1, 3, 32, 40]), ([3, 4], [1, 2, D(2, 4), 5], None),
                                    (None, None, None)])
@pytest.mark.parametrize("flatten", [True, False])
def test_prior_grid_shapes_as_openvino_infers_them(shapes, flatten, tmp_path):
    path, node = _grid(tmp_path, shapes, {"flatten": flatten})
    check_inference(path)
    check_output_shapes(path, node)


def test_a_grid_other_than_the_feature_map_is_refused(tmp_path):
    path, _ = _grid(tmp_path, ([3, 4], [1, 2, 4, 5], [1, 3, 32, 40]), {"h": 2, "w": 3})
    with pytest.raises(ir_runner.UnsupportedError, match=r"ExperimentalDetectronPriorGridGenerator-6.*h=2 differs"):
        ir_runner.load(str(path))


@pytest.mark.parametrize(("shapes", "message"), [
    (("5,4", "6"), r"rois has 5 rows, rois_probs 6"), (("5,3", "5"), "rois must have 4 coordinates"),
    (("5,4", "5,1"), r"rois_probs must be 1-D \[N\]"),
])
def test_topk_rois_invalid_models_are_refused_naming_the_layer(shapes, message):
    b = IRBuilder("topk")
    inputs = [b.parameter("rois", "f32", shapes[0]), b.parameter("probs", "f32", shapes[1])]
    b.result(b.layer("ExperimentalDetectronTopKROIs", "opset6", inputs, attrs={"max_rois": "3"},
                     out_specs=[("FP32", [3, 4])], name="top"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'top' \(ExperimentalDetectronTopKROIs-6.*" + message):
        ir_runner.load(*b.build())


def _extractor(tmp_path, rois_shape, maps, attrs):
    params = _params(rois=rois_shape, **{f"level{i}": shape for i, shape in enumerate(maps)})
    node = NodeFactory("opset6").create("ExperimentalDetectronROIFeatureExtractor", [p.output(0) for p in params],
                                        attrs)
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize("seed", range(6))
def test_roi_feature_extractor_equals_the_cpu_plugins(seed, tmp_path):
    """Random pyramids (1-3 levels), rois of every size (some empty or inverted: zero features), sampling ratios
    0-2, aligned or not: features and rois bit for bit."""
    rng = np.random.default_rng(seed)
    levels, channels, count = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 9))
    maps = [[1, channels, int(rng.integers(4, 40)), int(rng.integers(4, 40))] for _ in range(levels)]
    attrs = {"output_size": int(rng.integers(1, 4)), "sampling_ratio": int(rng.integers(0, 3)),
             "pyramid_scales": [4 * 2**i for i in range(levels)], "aligned": bool(seed % 2)}
    path, _ = _extractor(tmp_path, [count, 4], maps, attrs)
    check_inference(path)
    corner, size = rng.uniform(0, 300, (count, 2)), rng.uniform(-5, 400, (count, 2))
    feeds = {"rois": np.concatenate([corner, corner + size], axis=1).astype(np.float32),
             **{f"level{i}": rng.standard_normal(shape).astype(np.float32) for i, shape in enumerate(maps)}}
    got = list(ir_runner.load(str(path)).run(feeds).values())
    want = cpu_outputs(path, feeds)
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]


@pytest.mark.parametrize(("rois", "maps"), [([-1, 4], [[1, -1, 16, 16], [1, 6, 8, 8]]), (None, [[1, 6, 16, 16]]),
                                            ([D(2, 9), 4], [[1, D(2, 8), 16, 16], [1, D(4, 9), 8, 8]])])
def test_roi_feature_extractor_shapes_as_openvino_infers_them(rois, maps, tmp_path):
    path, node = _extractor(tmp_path, rois, maps, {"output_size": 3, "sampling_ratio": 2, "pyramid_scales": [4, 8],
                                                  "aligned": False})
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize(("maps", "message"), [
    (("1,6,16,16", "1,7,8,8"), "every pyramid level must have the same channels"),
    (("2,6,16,16", "1,6,8,8"), "feature map 0 must have batch 1"),
    (("1,6,16", "1,6,8,8"), r"feature map 0 must be 4-D \[1, C, H, W\]"),
])
def test_roi_feature_extractor_invalid_models_are_refused_naming_the_layer(maps, message):
    b = IRBuilder("extractor")
    inputs = [b.parameter("rois", "f32", "5,4")] + [b.parameter(f"m{i}", "f32", s) for i, s in enumerate(maps)]
    b.result(b.layer("ExperimentalDetectronROIFeatureExtractor", "opset6", inputs, name="pool",
                     attrs={"output_size": "3", "sampling_ratio": "2", "pyramid_scales": "4,8", "aligned": "false"},
                     out_specs=[("FP32", [5, 6, 3, 3]), ("FP32", [5, 4])]))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'pool' \(ExperimentalDetectronROIFeatureExtractor-6.*"
                                                       + message):
        ir_runner.load(*b.build())


def _proposals(tmp_path, shapes, attrs):
    params = _params(info=shapes[0], anchors=shapes[1], deltas=shapes[2], scores=shapes[3])
    node = NodeFactory("opset6").create("ExperimentalDetectronGenerateProposalsSingleImage",
                                        [p.output(0) for p in params], attrs)
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize("seed", range(8))
def test_generate_proposals_equal_the_cpu_plugins(seed, tmp_path):
    """Random anchors, deltas and scores; min sizes that zero many scores (the ties then follow libstdc++'s
    partial_sort, as in the CPU plugin); any thresholds and counts: rois and scores bit for bit."""
    rng = np.random.default_rng(seed)
    count, height, width = int(rng.integers(1, 4)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
    attrs = {"min_size": float(rng.choice([0.0, 4.0, 30.0])), "nms_threshold": float(rng.uniform(0.2, 0.9)),
             "post_nms_count": int(rng.integers(1, 30)), "pre_nms_count": int(rng.integers(1, 60))}
    path, _ = _proposals(tmp_path, ([3], [height * width * count, 4], [count * 4, height, width],
                                    [count, height, width]), attrs)
    check_inference(path)
    corner, size = rng.uniform(0, 200, (height * width * count, 2)), rng.uniform(1, 120, (height * width * count, 2))
    feeds = {"info": np.array([240, 320, 1], np.float32),
             "anchors": np.concatenate([corner, corner + size], axis=1).astype(np.float32),
             "deltas": (rng.standard_normal((count * 4, height, width)) * 0.5).astype(np.float32),
             "scores": rng.random((count, height, width)).astype(np.float32)}
    got = list(ir_runner.load(str(path)).run(feeds).values())
    assert [g.tobytes() for g in got] == [w.tobytes() for w in cpu_outputs(path, feeds)]


def _small_feeds(rng, spread: float) -> dict:
    """Inputs of a 2-anchor 3 x 4 map (24 boxes) in a 240 x 320 image, deltas of ``spread``."""
    corner, size = rng.uniform(0, 200, (24, 2)), rng.uniform(1, 120, (24, 2))
    return {"info": np.array([240, 320, 1], np.float32),
            "anchors": np.concatenate([corner, corner + size], axis=1).astype(np.float32),
            "deltas": (rng.standard_normal((8, 3, 4)) * spread).astype(np.float32),
            "scores": rng.random((2, 3, 4)).astype(np.float32)}


@pytest.mark.parametrize("delta", [np.nan, np.inf, -np.inf])
def test_generate_proposals_non_finite_deltas_as_the_cpu_plugin(delta, tmp_path):
    """A corner made NaN by the deltas clips to 0 (``std::max(0.0f, NaN)`` gives 0): the box stays, bit for bit."""
    rng = np.random.default_rng(1)
    attrs = {"min_size": 0.0, "nms_threshold": 0.7, "post_nms_count": 10, "pre_nms_count": 30}
    path, _ = _proposals(tmp_path, ([3], [24, 4], [8, 3, 4], [2, 3, 4]), attrs)
    feeds = _small_feeds(rng, 0.5)
    feeds["deltas"][:4, 1, 1], feeds["scores"][0, 1, 1] = delta, 2.0
    got = list(ir_runner.load(str(path)).run(feeds).values())
    assert [g.tobytes() for g in got] == [w.tobytes() for w in cpu_outputs(path, feeds)]


@pytest.mark.parametrize(("shapes", "message"), [
    (("4", "24,4", "12,2,4", "3,2,4"), "im_info must have 3 elements"),
    (("3", "24,5", "12,2,4", "3,2,4"), "anchors must have 4 coordinates"),
    (("3", "24,4", "12,2,4", "3,3,4"), r"the heights of deltas \(2\) and scores \(3\) differ"),
    (("3", "24,4", "12,2", "3,2,4"), r"deltas must be 3-D \[A \* 4, H, W\]"),
])
def test_generate_proposals_invalid_models_are_refused_naming_the_layer(shapes, message):
    b = IRBuilder("proposals")
    inputs = [b.parameter(n, "f32", s) for n, s in zip(("info", "anchors", "deltas", "scores"), shapes)]
    b.result(b.layer("ExperimentalDetectronGenerateProposalsSingleImage", "opset6", inputs, name="rpn",
                     attrs={"min_size": "0", "nms_threshold": "0.7", "pre_nms_count": "20", "post_nms_count": "5"},
                     out_specs=[("FP32", [5, 4]), ("FP32", [5])]))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'rpn' \(ExperimentalDetectronGenerateProposals"
                                                       r"SingleImage-6.*" + message):
        ir_runner.load(*b.build())


def test_generate_proposals_negative_post_nms_count_is_refused_naming_the_layer():
    """OpenVINO infers an unknown length for it and its CPU plugin fails to compile the model; ir-run inferred a
    negative dim (rois [-1, 4])."""
    b = IRBuilder("proposals")
    inputs = [b.parameter(n, "f32", s) for n, s in zip(("info", "anchors", "deltas", "scores"),
                                                        ("3", "24,4", "8,3,4", "2,3,4"))]
    attrs = {"min_size": "0", "nms_threshold": "0.7", "pre_nms_count": "20", "post_nms_count": "-1"}
    b.result(b.layer("ExperimentalDetectronGenerateProposalsSingleImage", "opset6", inputs, name="rpn", attrs=attrs,
                     out_specs=[("FP32", [-1, 4]), ("FP32", [-1])]))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'rpn' .*post_nms_count=-1 must not be negative"):
        ir_runner.load(*b.build())


def test_generate_proposals_negative_pre_nms_count_takes_every_box(tmp_path):
    """pre_nms_count -1: the CPU plugin reads it unsigned and sorts every box; bit for bit."""
    rng = np.random.default_rng(0)
    attrs = {"min_size": 0.0, "nms_threshold": 0.7, "post_nms_count": 5, "pre_nms_count": -1}
    path, _ = _proposals(tmp_path, ([3], [24, 4], [8, 3, 4], [2, 3, 4]), attrs)
    feeds = _small_feeds(rng, 1.0)
    got = list(ir_runner.load(str(path)).run(feeds).values())
    assert [g.tobytes() for g in got] == [w.tobytes() for w in cpu_outputs(path, feeds)]


def test_generate_proposals_negative_nms_threshold_kills_boxes_apart(tmp_path):
    """The plugin's nms_cpu takes IoU 0 for boxes that do not overlap and drops a box when the threshold is below
    its IoU: a negative threshold keeps the best box only; bit for bit."""
    rng = np.random.default_rng(1)
    attrs = {"min_size": 0.0, "nms_threshold": -0.5, "post_nms_count": 10, "pre_nms_count": 30}
    path, _ = _proposals(tmp_path, ([3], [24, 4], [8, 3, 4], [2, 3, 4]), attrs)
    feeds = _small_feeds(rng, 0.5)
    got = list(ir_runner.load(str(path)).run(feeds).values())
    assert [g.tobytes() for g in got] == [w.tobytes() for w in cpu_outputs(path, feeds)]
    assert np.count_nonzero(got[1]) == 1


def test_generate_proposals_shapes_as_openvino_infers_them(tmp_path):
    path, node = _proposals(tmp_path, (None, [-1, 4], [-1, -1, -1], None),
                            {"min_size": 0.0, "nms_threshold": 0.7, "pre_nms_count": 20, "post_nms_count": 5})
    check_inference(path)
    check_output_shapes(path, node)


DETECTION_ATTRS = {"score_threshold": 0.05, "nms_threshold": 0.5, "max_delta_log_wh": 4.135, "num_classes": 3,
                   "post_nms_count": 5, "max_detections_per_image": 7, "class_agnostic_box_regression": False,
                   "deltas_weights": [10.0, 10.0, 5.0, 5.0]}


def _detections(tmp_path, shapes, attrs):
    params = _params(rois=shapes[0], deltas=shapes[1], scores=shapes[2], info=shapes[3])
    node = NodeFactory("opset6").create("ExperimentalDetectronDetectionOutput", [p.output(0) for p in params], attrs)
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize("seed", range(8))
def test_detection_output_equals_the_cpu_plugins(seed, tmp_path):
    """Random rois (some empty), deltas and scores (every third case with many equal scores, so that the per-image
    cut follows libstdc++'s partial_sort as the CPU plugin's does), thresholds and counts: bit for bit."""
    rng = np.random.default_rng(seed)
    count, classes = int(rng.integers(1, 12)), int(rng.integers(2, 5))
    attrs = {**DETECTION_ATTRS, "num_classes": classes, "score_threshold": float(rng.uniform(0, 0.5)),
             "nms_threshold": float(rng.uniform(0.2, 0.8)), "post_nms_count": int(rng.integers(1, 8)),
             "max_detections_per_image": int(rng.integers(1, 15))}
    path, _ = _detections(tmp_path, ([count, 4], [count, 4 * classes], [count, classes], [1, 3]), attrs)
    check_inference(path)
    corner, size = rng.uniform(0, 200, (count, 2)), rng.uniform(-10, 120, (count, 2))
    scores = rng.random((count, classes))
    feeds = {"rois": np.concatenate([corner, corner + size], axis=1).astype(np.float32),
             "deltas": rng.standard_normal((count, 4 * classes)).astype(np.float32),
             "scores": (np.round(scores * 4) / 4 if seed % 3 == 0 else scores).astype(np.float32),
             "info": np.array([[240, 320, 1]], np.float32)}
    got = list(ir_runner.load(str(path)).run(feeds).values())
    assert [g.tobytes() for g in got] == [w.tobytes() for w in cpu_outputs(path, feeds)]
    assert got[1].dtype == np.int32


def _small_detection(tmp_path, post_nms_count, change=None):
    """Five rois of three classes, the plugin's outputs and ir-run's (``change`` edits the feeds first)."""
    rng = np.random.default_rng(2)
    attrs = {**DETECTION_ATTRS, "num_classes": 3, "score_threshold": 0.1, "nms_threshold": 0.5,
             "post_nms_count": post_nms_count, "max_detections_per_image": 10}
    path, _ = _detections(tmp_path, ([5, 4], [5, 12], [5, 3], [1, 3]), attrs)
    corner, size = rng.uniform(0, 200, (5, 2)), rng.uniform(1, 120, (5, 2))
    feeds = {"rois": np.concatenate([corner, corner + size], axis=1).astype(np.float32),
             "deltas": rng.standard_normal((5, 12)).astype(np.float32),
             "scores": rng.random((5, 3)).astype(np.float32), "info": np.array([[240, 320, 1]], np.float32)}
    if change:
        change(feeds)
    return list(ir_runner.load(str(path)).run(feeds).values()), cpu_outputs(path, feeds)


@pytest.mark.parametrize("delta", [np.nan, np.inf, -np.inf])
def test_detection_output_non_finite_deltas_as_the_cpu_plugin(delta, tmp_path):
    """Refined corners that are NaN clip to 0 (``std::max(0.0f, NaN)``), as in the CPU plugin: bit for bit."""
    def change(feeds):
        feeds["deltas"][1], feeds["scores"][1] = delta, 0.99
    got, want = _small_detection(tmp_path, 5, change)
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]


def test_detection_output_post_nms_count_minus_one_keeps_every_detection(tmp_path):
    """post_nms_count -1: no limit per class, as the CPU plugin (ir-run kept none); bit for bit."""
    got, want = _small_detection(tmp_path, -1)
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
    assert got[2][:8].all()


def test_detection_output_shapes_and_the_class_agnostic_refusal(tmp_path):
    path, node = _detections(tmp_path, (None, [-1, 12], [-1, 3], None), DETECTION_ATTRS)
    check_inference(path)
    check_output_shapes(path, node)
    path, _ = _detections(tmp_path, ([5, 4], [5, 12], [5, 3], [1, 3]),
                          {**DETECTION_ATTRS, "class_agnostic_box_regression": True})
    with pytest.raises(ir_runner.UnsupportedError, match="ExperimentalDetectronDetectionOutput-6.*class_agnostic"):
        ir_runner.load(str(path))


@pytest.mark.parametrize(("shapes", "message"), [
    (("5,4", "5,12", "5,4", "1,3"), r"scores must have 3 columns \(num_classes=3\)"),
    (("5,4", "5,8", "5,3", "1,3"), r"deltas must have 12 columns"),
    (("5,4", "6,12", "5,3", "1,3"), "rois, deltas and scores must have one row count"),
    (("5,4", "5,12", "5,3", "3"), r"im_info must be 2-D \[1, 3\]"),
])
def test_detection_output_invalid_models_are_refused_naming_the_layer(shapes, message):
    b = IRBuilder("detections")
    inputs = [b.parameter(n, "f32", s) for n, s in zip(("rois", "deltas", "scores", "info"), shapes)]
    attrs = {k: ",".join(map(str, v)) if isinstance(v, list) else str(v).lower() for k, v in DETECTION_ATTRS.items()}
    b.result(b.layer("ExperimentalDetectronDetectionOutput", "opset6", inputs, name="heads", attrs=attrs,
                     out_specs=[("FP32", [7, 4]), ("I32", [7]), ("FP32", [7])]))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'heads' \(ExperimentalDetectronDetectionOutput-6.*"
                                                       + message):
        ir_runner.load(*b.build())
