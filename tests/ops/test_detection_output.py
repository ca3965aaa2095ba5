"""DetectionOutput-1/8: shapes as OpenVINO infers them (class and prior counts deduced, keep_top_k/top_k rows,
dynamic and interval dims), refusals naming the layer and port, values against the CPU plugin (no
``Node.evaluate``): Caffe and MXNet NMS, CORNER and CENTER_SIZE, shared or per-class locations, variances in the
priors or the target, unnormalised priors, clipping, keep_top_k, RefineDet's five inputs, and seeded runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset8  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, IRError  # noqa: E402
from ir_runner.ops.detection.detection_output import OPS  # noqa: E402
from tests.helpers.cpu_features import require as require_cpu  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, cpu_outputs, write_ir  # noqa: E402

CENTER = "caffe.PriorBoxParameter.CENTER_SIZE"
CORNER = "caffe.PriorBoxParameter.CORNER"
BASE = {"keep_top_k": [5], "nms_threshold": 0.5, "background_label_id": 0, "top_k": 10, "code_type": CENTER,
        "share_location": True, "confidence_threshold": 0.1, "normalized": True}


def _model(tmp_path, shapes, attrs, *, version=8, et=ov.Type.f32, name="model"):
    names = ("loc", "conf", "pri", "arm_conf", "arm_loc")[:len(shapes)]
    params = [opset8.parameter(ov.PartialShape(s) if s != "..." else ov.PartialShape.dynamic(), et, name=n)
              for n, s in zip(names, shapes)]
    make = opset8.detection_output if version == 8 else opset1.detection_output
    node = make(params[0], params[1], params[2], attrs, *params[3:])
    return write_ir(node, params, tmp_path, name), node


def _shapes(n, p, c, attrs, pb=1, refine=False):
    loc = 1 if attrs.get("share_location", True) else c
    size = 4 if attrs.get("normalized", False) else 5
    rows = 1 if attrs.get("variance_encoded_in_target", False) else 2
    shapes = [[n, p * loc * 4], [n, p * c], [pb, rows, p * size]]
    return shapes + ([[n, p * 2], [n, p * loc * 4]] if refine else [])


def _feeds(rng, n, p, c, attrs, pb=1, refine=False, dtype=np.float32):
    shapes = _shapes(n, p, c, attrs, pb, refine)
    size = 4 if attrs.get("normalized", False) else 5
    corners = np.sort(rng.random((pb, p, 2, 2)), axis=2)  # (min, max) of (x, y)
    boxes = np.stack([corners[..., 0, 0], corners[..., 0, 1], corners[..., 1, 0], corners[..., 1, 1]], -1)
    if not attrs.get("normalized", False):
        boxes = boxes * [300, 200, 300, 200]
    if size == 5:
        boxes = np.concatenate([np.zeros((pb, p, 1)), boxes], -1)
    rows = [boxes.reshape(pb, -1)]
    if shapes[2][1] == 2:
        rows.append(np.tile([0.1, 0.1, 0.2, 0.2], (pb, p * size // 4 + 1))[:, :p * size])
    feeds = {"loc": rng.standard_normal(shapes[0]) * 0.5, "conf": rng.random(shapes[1]),
             "pri": np.stack(rows, 1)}
    if refine:
        feeds["arm_conf"] = rng.random(shapes[3])
        feeds["arm_loc"] = rng.standard_normal(shapes[4]) * 0.5
    return {k: v.astype(dtype) for k, v in feeds.items()}


def _same_as_the_plugin(xml, feeds):
    """ir-run's rows equal the CPU plugin's, bit for bit, up to and including the row marked -1 (the plugin leaves
    the rows after it unset in some modes; ir-run writes zeros there, as the reference)."""
    got = list(ir_runner.load(str(xml)).run(feeds).values())[0]
    want = cpu_outputs(xml, feeds)[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    rows_got, rows_want = got.reshape(-1, 7), want.reshape(-1, 7)
    marker = np.flatnonzero(rows_got[:, 0] == -1)
    end = int(marker[0]) + 1 if marker.size else len(rows_got)
    assert np.array_equal(rows_got[:end], rows_want[:end], equal_nan=True), (rows_got[:end], rows_want[:end])
    assert not rows_got[end:].any()
    return got


# -- shapes ---------------------------------------------------------------------------------------------

SHAPE_CASES = [
    ({}, [[4, 20], [4, 15], [4, 2, 20]]),
    ({"keep_top_k": [-1], "top_k": 7}, [[4, 20], [4, 15], [1, 2, 20]]),
    ({"keep_top_k": [-1], "top_k": -1}, [[4, 20], [4, 15], [1, 2, 20]]),
    ({"share_location": False}, [[2, 60], [2, 15], [1, 2, 20]]),
    ({"normalized": False}, [[2, 20], [2, 15], [1, 2, 25]]),
    ({"variance_encoded_in_target": True}, [[2, 20], [2, 15], [1, 1, 20]]),
    ({}, [[-1, 20], [-1, 15], [1, 2, 20]]),
    ({}, [[(2, 5), 20], [-1, -1], [1, 2, -1]]),
    ({"keep_top_k": [-1], "top_k": 3}, [[-1, -1], [3, -1], [1, 2, 20]]),
    ({"keep_top_k": [-1], "top_k": 3}, ["...", "...", "..."]),
    ({}, [[2, 20], [2, 15], [1, 2, 20], [2, 10], [2, 20]]),
]


@pytest.mark.parametrize("version", [1, 8])
@pytest.mark.parametrize("case", range(len(SHAPE_CASES)))
def test_shapes_as_openvino_infers_them(version, case, tmp_path):
    extra, shapes = SHAPE_CASES[case]
    attrs = {**BASE, **extra}
    if version == 1:
        attrs["num_classes"] = 3
    xml, node = _model(tmp_path, shapes, attrs, version=version)
    check_output_shapes(xml, node)
    check_inference(xml)


def _built(shapes=("2,20", "2,15", "1,2,20"), attrs=None, et="f32", version="opset8", out="1,1,10,7"):
    b = IRBuilder()
    inputs = [b.parameter(f"in{i}", et, s) for i, s in enumerate(shapes)]
    layer_attrs = {"keep_top_k": "5", "nms_threshold": "0.5", "top_k": "10", "normalized": "true",
                   "code_type": CENTER}
    if version == "opset1":
        layer_attrs["num_classes"] = "3"
    layer_attrs.update(attrs or {})
    b.result(b.layer("DetectionOutput", version, inputs, attrs=layer_attrs, out_specs=[("FP32", out)]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, error, what, port", [
    ({"shapes": ("2,20,1", "2,15", "1,2,20")}, InferenceError, "must be 2-D", "box_logits"),
    ({"shapes": ("2,20", "2,15", "1,20")}, InferenceError, "must be 3-D", "proposals"),
    ({"shapes": ("2,20", "2,15", "1,2,22")}, InferenceError, "multiple of 4", "proposals"),
    ({"shapes": ("2,20", "2,16", "1,2,20")}, InferenceError, "multiple of the 5 priors", "class_preds"),
    ({"shapes": ("2,24", "2,15", "1,2,20")}, InferenceError, "must be 20", "box_logits"),
    ({"shapes": ("2,20", "3,15", "1,2,20")}, InferenceError, "batch", "class_preds"),
    ({"shapes": ("2,20", "2,15", "3,2,20")}, InferenceError, "1 or the batch", "proposals"),
    ({"shapes": ("2,20", "2,15", "1,3,20")}, InferenceError, "second dim of proposals", "proposals"),
    ({"shapes": ("2,20", "2,15", "1,2,20", "2,12", "2,20")}, InferenceError, "must be 10", "aux_class_preds"),
    ({"shapes": ("2,20", "2,15", "1,2,20", "2,10", "2,24")}, InferenceError, "shape of box_logits", "aux_box_preds"),
    ({"et": "i32"}, InferenceError, "floating-point", "box_logits"),
])
def test_bad_inputs_name_layer_and_port(kwargs, error, what, port):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_built(**kwargs))
    assert "DetectionOutput-8" in str(info.value) and f"({port})" in str(info.value)


@pytest.mark.parametrize("attrs, version, error, what", [
    ({"code_type": "caffe.PriorBoxParameter.CORNER_SIZE"}, "opset8", IRError, "code_type"),
    ({"keep_top_k": ""}, "opset8", InferenceError, "keep_top_k"),
    ({"num_classes": "0"}, "opset1", InferenceError, "num_classes=0"),
    ({"share_location": "maybe"}, "opset8", IRError, "share_location"),
])
def test_bad_attributes(attrs, version, error, what):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_built(attrs=attrs, version=version))
    assert "DetectionOutput" in str(info.value)


# -- values ---------------------------------------------------------------------------------------------

MODES = [
    {}, {"code_type": CORNER}, {"share_location": False, "background_label_id": -1}, {"decrease_label_id": True},
    {"keep_top_k": [-1]}, {"keep_top_k": [-1], "top_k": -1}, {"clip_after_nms": True, "clip_before_nms": True},
    {"variance_encoded_in_target": True}, {"normalized": False, "input_width": 300, "input_height": 200},
    {"keep_top_k": [0]}, {"confidence_threshold": 0.0, "nms_threshold": 0.0}, {"background_label_id": 2},
]


@pytest.mark.parametrize("mode", range(len(MODES)))
@pytest.mark.parametrize("version", [1, 8])
def test_modes_against_the_cpu_plugin(mode, version, tmp_path):
    attrs = {**BASE, **MODES[mode]}
    if version == 1:
        attrs["num_classes"] = 3
    rng = np.random.default_rng(mode)
    xml, _ = _model(tmp_path, _shapes(2, 12, 3, attrs), attrs, version=version)
    check_inference(xml)
    _same_as_the_plugin(xml, _feeds(rng, 2, 12, 3, attrs))


@pytest.mark.parametrize("et", ["f16", "bf16"])
def test_narrow_types_against_the_cpu_plugin(et, tmp_path):
    """f16/bf16 inputs: computed in f32, the output rounded once (equal to the plugin's in the cases tested)."""
    import ml_dtypes

    if et == "bf16":
        require_cpu("bf16")

    attrs = {**BASE, "keep_top_k": [-1]}
    xml, _ = _model(tmp_path, _shapes(2, 12, 3, attrs), attrs, et=getattr(ov.Type, et))
    check_inference(xml)
    dtype = np.float16 if et == "f16" else ml_dtypes.bfloat16
    _same_as_the_plugin(xml, _feeds(np.random.default_rng(3), 2, 12, 3, attrs, dtype=dtype))


@pytest.mark.parametrize("normalized, share, prior_sets", [(True, True, 2), (False, True, 2), (True, False, 2),
                                                           (True, True, 1)])
def test_refinedet_five_inputs(normalized, share, prior_sets, tmp_path):
    attrs = {**BASE, "keep_top_k": [10], "share_location": share, "normalized": normalized, "objectness_score": 0.4,
             "input_width": 2, "input_height": 3}
    xml, _ = _model(tmp_path, _shapes(2, 20, 4, attrs, prior_sets, refine=True), attrs)
    check_inference(xml)
    _same_as_the_plugin(xml, _feeds(np.random.default_rng(7), 2, 20, 4, attrs, prior_sets, refine=True))


def test_every_row_and_the_marker(tmp_path):
    """One image, two priors far apart, two classes: rows (image, label, score, box) in label order, then -1."""
    attrs = {**BASE, "code_type": CORNER, "variance_encoded_in_target": True, "keep_top_k": [-1], "top_k": -1,
             "confidence_threshold": 0.05}
    xml, _ = _model(tmp_path, [[1, 8], [1, 6], [1, 1, 8]], attrs)
    feeds = {"loc": np.zeros((1, 8), np.float32),
             "conf": np.array([[0.9, 0.5, 0.01, 0.2, 0.3, 0.6]], np.float32),
             "pri": np.array([[[0.0, 0.0, 0.25, 0.25, 0.5, 0.5, 1.0, 1.0]]], np.float32)}
    got = _same_as_the_plugin(xml, feeds).reshape(-1, 7)
    np.testing.assert_array_equal(got[:4], np.array([[0, 1, 0.5, 0, 0, 0.25, 0.25], [0, 1, 0.3, 0.5, 0.5, 1, 1],
                                                     [0, 2, 0.6, 0.5, 0.5, 1, 1], [-1, 0, 0, 0, 0, 0, 0]], np.float32))


def test_overlapping_boxes_are_suppressed(tmp_path):
    attrs = {**BASE, "code_type": CORNER, "variance_encoded_in_target": True, "keep_top_k": [-1], "top_k": -1,
             "nms_threshold": 0.3}
    xml, _ = _model(tmp_path, [[1, 12], [1, 6], [1, 1, 12]], attrs)
    feeds = {"loc": np.zeros((1, 12), np.float32), "conf": np.array([[0, 0.9, 0, 0.8, 0, 0.7]], np.float32),
             "pri": np.array([[[0, 0, 0.5, 0.5, 0.05, 0.05, 0.5, 0.5, 0.6, 0.6, 1, 1]]], np.float32)}
    got = _same_as_the_plugin(xml, feeds).reshape(-1, 7)
    assert got[:2, 2].tolist() == [np.float32(0.9), np.float32(0.7)]  # (IoU of the first two 0.81 > 0.3)
    assert got[2, 0] == -1


def test_batch_rule():
    assert OPS[1].batch(None, [], [], [None, None, None]) == [None]
    assert "one [1, 1, R, 7] list" in OPS[1].batch(None, [], [], [0, 0, None])


# -- seeded differential ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(30))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    decrease = bool(rng.integers(2))
    attrs = {**BASE, "share_location": bool(rng.integers(2)), "decrease_label_id": decrease,
             "keep_top_k": [int(rng.choice([-1, 0, 3, 50]))], "top_k": int(rng.choice([-1, 5, 400])),
             "code_type": str(rng.choice([CORNER, CENTER])),
             "background_label_id": 0 if decrease else int(rng.choice([-1, 0, 2])),  # (the plugin's MXNet: 0 only)
             "clip_after_nms": bool(rng.integers(2)), "clip_before_nms": bool(rng.integers(2)),
             "nms_threshold": float(rng.choice([0.3, 0.5, 0.9])),
             "confidence_threshold": float(rng.choice([0.0, 0.2, 0.5])),
             "normalized": bool(rng.integers(2)), "variance_encoded_in_target": bool(rng.integers(2)),
             "input_width": 300, "input_height": 200}
    if decrease and not attrs["share_location"] and attrs["keep_top_k"] == [0]:
        attrs["keep_top_k"] = [3]  # (the plugin refuses this one: "insufficient output buffer size")
    n, p, c = int(rng.integers(1, 3)), int(rng.integers(1, 60)), int(rng.integers(2, 6))
    pb = int(rng.choice([1, n]))
    refine = seed % 5 == 0
    version = (1, 8)[seed % 2]
    if version == 1:
        attrs["num_classes"] = c
    xml, _ = _model(tmp_path, _shapes(n, p, c, attrs, pb, refine), attrs, version=version)
    check_inference(xml)
    _same_as_the_plugin(xml, _feeds(rng, n, p, c, attrs, pb, refine))


def _head(feature, channels: int, seed: int, scale: float):
    """A 1x1 convolution of a feature map, transposed to NHWC and flattened per image (as SSD heads are)."""
    weights = (np.random.default_rng(seed).standard_normal((channels, 8, 1, 1)) * scale).astype(np.float32)
    conv = opset8.convolution(feature, opset8.constant(weights), [1, 1], [0, 0], [0, 0], [1, 1])
    nhwc = opset8.transpose(conv, opset8.constant(np.array([0, 2, 3, 1])))
    return opset8.reshape(nhwc, opset8.constant(np.array([0, -1])), True)


def test_a_small_ssd_head_as_open_model_zoo_writes_it(tmp_path):
    """Two feature maps; priors from PriorBox/PriorBoxClustered on ShapeOf of the maps and the image (they fold to
    constants), concatenated; logits flattened and concatenated; DetectionOutput; also with a dynamic batch."""
    for batch in (2, -1):
        image = opset8.parameter([batch, 3, 64, 64], ov.Type.f32, name="image")
        maps = [opset8.parameter([batch, 8, s, s], ov.Type.f32, name=f"map{s}") for s in (4, 2)]
        hw = lambda node: opset8.gather(opset8.shape_of(node), opset8.constant(np.array([2, 3])), opset8.constant(0))  # noqa: E731
        priors = [opset8.prior_box(hw(maps[0]), hw(image), {"offset": 0.5, "min_size": [16.0], "max_size": [32.0],
                                                            "aspect_ratio": [2.0], "flip": True, "clip": False,
                                                            "variance": [0.1, 0.1, 0.2, 0.2]}),
                  opset8.prior_box_clustered(hw(maps[1]), hw(image), {"offset": 0.5, "width": [20.0, 40.0, 60.0, 30.0],
                                                                      "height": [20.0, 30.0, 60.0, 40.0],
                                                                      "variance": [0.1, 0.1, 0.2, 0.2]})]
        count = 4 * 4 * 4 + 2 * 2 * 4
        loc = opset8.concat([_head(m, 16, i, 0.1) for i, m in enumerate(maps)], 1)
        conf = opset8.concat([_head(m, 12, 5 + i, 1.0) for i, m in enumerate(maps)], 1)
        conf = opset8.reshape(opset8.softmax(opset8.reshape(conf, opset8.constant(np.array([0, -1, 3])), True), 2),
                              opset8.constant(np.array([0, -1])), True)
        pri = opset8.unsqueeze(opset8.concat(priors, 1), opset8.constant(np.array([0])))
        node = opset8.detection_output(loc, conf, pri, {**BASE, "keep_top_k": [20], "top_k": 50,
                                                        "confidence_threshold": 0.3})
        xml = write_ir(node, [image, *maps], tmp_path, f"ssd{batch}")
        check_inference(xml)
        rng = np.random.default_rng(1)
        feeds = {"image": np.zeros((2, 3, 64, 64), np.float32), "map4": rng.standard_normal((2, 8, 4, 4)).astype(
            np.float32), "map2": rng.standard_normal((2, 8, 2, 2)).astype(np.float32)}
        got = list(ir_runner.load(str(xml)).run(feeds).values())[0].reshape(-1, 7)
        want = cpu_outputs(xml, feeds)[0].reshape(-1, 7)
        marker = np.flatnonzero(got[:, 0] == -1)
        end = int(marker[0]) + 1 if marker.size else len(got)
        assert end > 1 and got.shape == (2 * 20, 7) and count == 80
        assert np.array_equal(got[:end, :2], want[:end, :2])  # the same detections: images and labels
        # (scores and boxes come through Convolution and Softmax, whose last bits differ from the plugin's)
        np.testing.assert_allclose(got[:end, 2:], want[:end, 2:], rtol=0, atol=1e-5)
