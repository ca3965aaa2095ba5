"""Proposal-1/4: shapes as OpenVINO infers them, refusals naming the layer and port, values against OpenVINO's
CPU plugin (the reference has no Node.evaluate for Proposal) within the module's bound (image indices, scores
and the end marker exact), the Caffe and TensorFlow anchor schemes, tied scores (libstdc++'s partial_sort),
clipping and normalising, and seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset4, opset9  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.ops.detection._common import top_scores as _top  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, cpu_outputs, write_ir  # noqa: E402

RTOL, ATOL = 1e-5, 1e-3  # coordinates: the plugin's FMA-contracted decoding (ISA-dependent), glibc's expf


def _attrs(**changes):
    attrs = {"base_size": np.uint32(16), "pre_nms_topn": np.uint32(50), "post_nms_topn": np.uint32(10),
             "nms_thresh": np.float32(0.7), "feat_stride": np.uint32(16), "min_size": np.uint32(4),
             "ratio": np.array([0.5, 1.0, 2.0], np.float32), "scale": np.array([1.0, 2.0], np.float32),
             "framework": ""}
    for key, value in changes.items():
        attrs[key] = np.uint32(value) if isinstance(value, int) and not isinstance(value, bool) else value
    return attrs


def _model(tmp_path, version, probs_shape, deltas_shape, info_shape=(3,), et=ov.Type.f32, name="model", **attrs):
    probs = opset1.parameter(ov.PartialShape(probs_shape) if not isinstance(probs_shape, ov.PartialShape)
                             else probs_shape, et, name="probs")
    deltas = opset1.parameter(ov.PartialShape(deltas_shape) if not isinstance(deltas_shape, ov.PartialShape)
                              else deltas_shape, et, name="deltas")
    info = opset1.parameter(ov.PartialShape(list(info_shape)), et, name="info")
    node = (opset1 if version == 1 else opset4).proposal(probs, deltas, info, _attrs(**attrs))
    return write_ir(node, [probs, deltas, info], tmp_path, name), node


def _feeds(rng, n, anchors, h, w, info_size=3, stride=16, spread=0.3):
    info = np.array([h * stride, w * stride, 1.0, 1.0][:info_size], np.float32)
    return {"probs": rng.random((n, 2 * anchors, h, w)).astype(np.float32),
            "deltas": (rng.standard_normal((n, 4 * anchors, h, w)) * spread).astype(np.float32), "info": info}


def _valid(rois: np.ndarray, post: int) -> np.ndarray:
    """Rows holding a box: before each image's end marker (image index -1)."""
    keep = np.zeros(len(rois), bool)
    for first in range(0, len(rois), post):
        block = rois[first:first + post, 0]
        end = np.flatnonzero(block < 0)
        keep[first:first + (end[0] if end.size else post)] = True
    return keep


def _against_cpu(xml, feeds, post):
    got = list(ir_runner.load(str(xml)).run(feeds).values())
    want = cpu_outputs(xml, feeds)
    rois, cpu_rois = got[0], want[0]
    assert rois.dtype == cpu_rois.dtype and rois.shape == cpu_rois.shape
    assert np.array_equal(rois[:, 0], cpu_rois[:, 0]), (rois[:, 0], cpu_rois[:, 0])  # ids, markers: exact
    diff = np.abs(rois[:, 1:].astype(np.float64) - cpu_rois[:, 1:])
    assert (diff <= ATOL + RTOL * np.abs(cpu_rois[:, 1:])).all(), diff.max()
    if len(got) == 2:  # (the plugin leaves the probabilities after the end marker unwritten)
        valid = _valid(rois, post)
        assert np.array_equal(got[1][valid], want[1][valid])
        assert not got[1][~valid].any()
    return got


# -- shapes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 4])
@pytest.mark.parametrize("probs, deltas, info", [
    ([1, 12, 5, 6], [1, 24, 5, 6], (3,)), ([2, 12, 5, 6], [2, 24, 5, 6], (4,)), ([-1, 12, 5, 6], [2, 24, 5, 6], (3,)),
    ([-1, -1, -1, -1], [-1, -1, -1, -1], (-1,)), ([(1, 4), 12, 5, 6], [-1, 24, 5, 6], (3,)), ("...", "...", (3,)),
    ([3, 12, 5, 6], "...", (4,)), ("...", [2, 24, 5, 6], (3,)),
])
def test_shapes_as_openvino_infers_them(version, probs, deltas, info, tmp_path):
    shape = lambda s: ov.PartialShape.dynamic() if s == "..." else s  # noqa: E731
    xml, node = _model(tmp_path, version, shape(probs), shape(deltas), info)
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("et", [ov.Type.f16, ov.Type.bf16, ov.Type.f64])
def test_float_types_infer(et, tmp_path):
    xml, _ = _model(tmp_path, 4, [1, 12, 5, 6], [1, 24, 5, 6], et=et)
    check_inference(xml)


def _built(probs="1,12,5,6", deltas="1,24,5,6", info="3", types=("f32", "f32", "f32")) -> bytes:
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("probs", "deltas", "info"), types, (probs, deltas, info))]
    attrs = {"base_size": 16, "pre_nms_topn": 50, "post_nms_topn": 10, "nms_thresh": 0.7, "feat_stride": 16,
             "min_size": 4, "ratio": "0.5,1,2", "scale": "1,2"}
    b.result(b.layer("Proposal", "opset4", inputs, attrs=attrs, out_specs=[("FP32", "10,5"), ("FP32", "10")]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, what, port", [
    ({"probs": "1,12,5"}, "class_probs must be 4-D", "class_probs"),
    ({"deltas": "1,20,5,6"}, "twice the channels", "bbox_deltas"),
    ({"deltas": "2,24,5,6"}, "same batch", "bbox_deltas"),
    ({"info": "5"}, "3 or 4 elements", "image_shape"),
    ({"types": ("f32", "f32", "i32")}, "floating-point", "image_shape"),
    ({"types": ("u8", "f32", "f32")}, "floating-point", "class_probs"),
])
def test_bad_inputs_name_layer_and_port(kwargs, what, port):
    with pytest.raises(InferenceError, match=what) as info:
        ir_runner.load(_built(**kwargs))
    assert "Proposal-4" in str(info.value) and f"({port})" in str(info.value)


@pytest.mark.parametrize("old, new, error, what", [
    ('framework=""', 'framework="caffe2"', IRError, "framework"),
    ('post_nms_topn="10"', 'post_nms_topn="-3"', InferenceError, "post_nms_topn=-3"),
    ('nms_thresh="0.', 'nms_thresh="x0.', IRError, "nms_thresh"),
    (' base_size="16"', "", IRError, "base_size"),
])
def test_bad_attributes(old, new, error, what, tmp_path):
    xml, _ = _model(tmp_path, 1, [1, 12, 5, 6], [1, 24, 5, 6])
    text = xml.read_text()
    assert old in text
    xml.write_text(text.replace(old, new))
    with pytest.raises(error, match=what) as info:
        ir_runner.load(str(xml))
    assert "Proposal" in str(info.value)


@pytest.mark.parametrize("info, what", [([0, 80, 1], "height 0.0"), ([80, np.inf, 1], "positive normal"),
                                        ([80, 80, -1], "scales"), ([80, 80, 1, np.nan], "scales")])
def test_bad_image_shape_refused_at_run(info, what, tmp_path):
    xml, _ = _model(tmp_path, 4, [1, 12, 5, 6], [1, 24, 5, 6], (len(info),))
    feeds = _feeds(np.random.default_rng(0), 1, 6, 5, 6)
    feeds["info"] = np.array(info, np.float32)
    with pytest.raises(InputError, match=what):
        ir_runner.load(str(xml)).run(feeds)


# -- values ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 4])
def test_faster_rcnn_like(version, tmp_path):
    """Nine anchors (3 ratios x 3 scales) on a 14 x 19 map, Caffe style: 2394 proposals, 300 kept at most."""
    xml, _ = _model(tmp_path, version, [1, 18, 14, 19], [1, 36, 14, 19], (4,), pre_nms_topn=600, post_nms_topn=300,
                    ratio=np.array([0.5, 1, 2], np.float32), scale=np.array([8, 16, 32], np.float32), min_size=16)
    rng = np.random.default_rng(1)
    got = _against_cpu(xml, _feeds(rng, 1, 9, 14, 19, info_size=4), 300)
    assert _valid(got[0], 300).sum() > 50


@pytest.mark.parametrize("options", [
    {"clip_before_nms": False}, {"clip_after_nms": True}, {"normalize": True}, {"clip_after_nms": True,
                                                                               "normalize": True},
    {"box_size_scale": np.float32(5.0), "box_coordinate_scale": np.float32(10.0)}, {"min_size": 40},
    {"nms_thresh": np.float32(0.3)}, {"pre_nms_topn": 8, "post_nms_topn": 20},
])  # (pre_nms_topn below 8 crashes the CPU plugin: docs/semantics.md)
def test_options(options, tmp_path):
    xml, _ = _model(tmp_path, 4, [2, 12, 6, 7], [2, 24, 6, 7], **options)
    _against_cpu(xml, _feeds(np.random.default_rng(2), 2, 6, 6, 7, spread=0.8), options.get("post_nms_topn", 10))


@pytest.mark.parametrize("info_size", [3, 4])
def test_tensorflow_scheme(info_size, tmp_path):
    """framework="tensorflow": offset 0, unrounded anchors shifted by half the base size and clipped first, x
    and y from (h, w) swapped. Square maps only: on others the CPU plugin crashes (docs/semantics.md)."""
    xml, _ = _model(tmp_path, 4, [2, 6, 5, 5], [2, 12, 5, 5], (info_size,), framework="tensorflow",
                    ratio=np.array([0.5, 1.0, 2.0], np.float32), scale=np.array([1.0], np.float32))
    _against_cpu(xml, _feeds(np.random.default_rng(3), 2, 3, 5, 5, info_size), 10)


def test_caffe_anchor_sizes_round_as_std_roundf(tmp_path):
    """Caffe anchors round their width and height with ``std::roundf``: ratio 4.0000005 on base size 1 makes the
    width sqrt(0.24999997) = 0.49999997, which rounds to 0 (and the height with it), not up to 1."""
    xml, _ = _model(tmp_path, 4, [1, 4, 3, 3], [1, 8, 3, 3], base_size=1, feat_stride=4, min_size=1,
                    ratio=np.array([4.0], np.float32), scale=np.array([1.0, 8.0], np.float32))
    text = xml.read_text()  # (OpenVINO's serializer writes 4.0000005 as "4")
    assert text.count('ratio="4"') == 1
    xml.write_text(text.replace('ratio="4"', 'ratio="4.0000005"'))
    rois, _ = _against_cpu(xml, _feeds(np.random.default_rng(8), 1, 2, 3, 3, stride=4), 10)
    assert _valid(rois, 10).sum() > 1


def test_tied_scores_in_partial_sorts_order(tmp_path):
    """Scores rounded to one decimal tie a lot: the boxes taken into NMS and their order are what libstdc++'s
    partial_sort leaves (score-only comparison), which the kernel emulates step by step."""
    xml, _ = _model(tmp_path, 4, [1, 12, 6, 7], [1, 24, 6, 7], pre_nms_topn=40, post_nms_topn=30,
                    nms_thresh=np.float32(0.9))
    feeds = _feeds(np.random.default_rng(4), 1, 6, 6, 7, spread=1.0)
    feeds["probs"] = np.round(feeds["probs"], 1)
    _against_cpu(xml, feeds, 30)


def test_partial_sort_emulation():
    rng = np.random.default_rng(0)
    for n, k in ((1, 1), (10, 3), (100, 100), (200, 17)):
        scores = rng.integers(0, 5, n).astype(np.float32)
        top = _top(scores, k)
        assert sorted(top.tolist()) == sorted(set(top.tolist())) and len(top) == k
        assert (np.diff(scores[top]) <= 0).all() and scores[top].min() >= np.sort(scores)[::-1][k - 1]
        distinct = rng.permutation(n).astype(np.float32)
        assert _top(distinct, k).tolist() == np.argsort(-distinct)[:k].tolist()


def test_boxes_below_min_size_keep_score_0(tmp_path):
    """Boxes smaller than min_size are not dropped: their score becomes 0 and they still go through NMS."""
    xml, _ = _model(tmp_path, 4, [1, 12, 3, 3], [1, 24, 3, 3], min_size=1000, post_nms_topn=60)
    rois, probs = _against_cpu(xml, _feeds(np.random.default_rng(5), 1, 6, 3, 3), 60)
    valid = _valid(rois, 60)
    assert 0 < valid.sum() < 54 and not probs.any() and rois[valid.sum(), 0] == -1


@pytest.mark.parametrize("delta", [np.inf, -np.inf, np.nan])
def test_non_finite_deltas_clip_as_the_plugin(delta, tmp_path):
    """A cell's corners made NaN by infinite or NaN deltas clip to 0 (``std::max(0.0f, NaN)`` gives its first
    operand), so the box stays a candidate, as in the CPU plugin."""
    feeds = _feeds(np.random.default_rng(0), 1, 6, 3, 5)
    feeds["deltas"][0, :, 1, 1] = delta
    feeds["probs"][0, 6:, 1, 1] = 2.0
    xml, _ = _model(tmp_path, 4, [1, 12, 3, 5], [1, 24, 3, 5])
    rois, _ = _against_cpu(xml, feeds, 10)
    assert not np.isnan(rois).any()


def test_f16_data_gives_f16_rois(tmp_path):
    xml, _ = _model(tmp_path, 4, [1, 12, 4, 4], [1, 24, 4, 4], et=ov.Type.f16)
    feeds = {k: v.astype(np.float16) for k, v in _feeds(np.random.default_rng(6), 1, 6, 4, 4).items()}
    got = list(ir_runner.load(str(xml)).run(feeds).values())
    assert got[0].dtype == np.float16 and got[1].dtype == np.float16


def test_batch_rule_says_why():
    from ir_runner.ops.detection.proposals import OPS

    assert "image index" in OPS[0].batch(None, [], [None], [0, 0, None])
    assert OPS[1].batch(None, [], [None, None], [None, None, None]) == [None, None]


# -- seeded differential ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(24))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    ratios = [[1.0], [0.5, 1.0, 2.0], [1.0, 2.0]][seed % 3]
    scales = [[1.0], [2.0, 4.0], [8.0, 16.0, 32.0]][int(rng.integers(3))]
    anchors = len(ratios) * len(scales)
    n = int(rng.integers(1, 3))
    tensorflow = seed % 4 == 3
    h = int(rng.integers(2, 8))
    w = h if tensorflow else int(rng.integers(2, 8))
    post = int(rng.choice([5, 20, 300]))
    options = {"pre_nms_topn": int(rng.choice([10, 50, 1000])), "post_nms_topn": post,
               "nms_thresh": np.float32(rng.choice([0.5, 0.7])), "min_size": int(rng.choice([1, 8])),
               "ratio": np.array(ratios, np.float32), "scale": np.array(scales, np.float32),
               "framework": "tensorflow" if tensorflow else "", "clip_before_nms": bool(rng.integers(2)),
               "clip_after_nms": bool(rng.integers(2)), "normalize": bool(rng.integers(2)),
               "box_size_scale": np.float32(rng.choice([1.0, 5.0])),
               "box_coordinate_scale": np.float32(rng.choice([1.0, 10.0]))}
    info_size = int(rng.choice([3, 4]))
    xml, _ = _model(tmp_path, 1 + 3 * (seed % 2), [n, 2 * anchors, h, w], [n, 4 * anchors, h, w], (info_size,),
                    **options)
    check_inference(xml)
    _against_cpu(xml, _feeds(rng, n, anchors, h, w, info_size), post)


# -- GenerateProposals-9 --------------------------------------------------------------------------------

def _gp_model(tmp_path, info, anchors, deltas, scores, et=ov.Type.f32, name="gp", min_size=1.0, nms=0.7, pre=100,
              post=10, **attrs):
    shape = lambda s: ov.PartialShape.dynamic() if s == "..." else ov.PartialShape(s)  # noqa: E731
    params = [opset9.parameter(shape(s), et, name=n)
              for n, s in (("info", info), ("anchors", anchors), ("deltas", deltas), ("scores", scores))]
    node = opset9.generate_proposals(*params, min_size, nms, pre, post, **attrs)
    return write_ir(node, params, tmp_path, name), node


def _gp_feeds(rng, n, a, h, w, info_size=3, stride=8.0):
    yy, xx = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    size = rng.random((a, 2)) * 3 * stride + stride / 2
    center = np.stack([xx * stride, yy * stride], -1)[:, :, None, :]
    anchors = np.concatenate([center - size / 2, center + size / 2], -1).astype(np.float32)
    return {"info": np.tile(np.array([h * stride, w * stride, 1.0, 1.0][:info_size], np.float32), (n, 1)),
            "anchors": anchors, "deltas": (rng.standard_normal((n, 4 * a, h, w)) * 0.3).astype(np.float32),
            "scores": rng.random((n, a, h, w)).astype(np.float32)}


def _gp_against_cpu(xml, feeds):
    got = list(ir_runner.load(str(xml)).run(feeds).values())
    want = cpu_outputs(xml, feeds)
    assert np.array_equal(got[2], want[2]) and got[2].dtype == want[2].dtype  # counts per image
    assert np.array_equal(got[1], want[1])  # scores: the inputs' own
    diff = np.abs(got[0].astype(np.float64) - want[0])
    assert got[0].shape == want[0].shape and (diff <= ATOL + RTOL * np.abs(want[0])).all(), diff.max()
    return got


@pytest.mark.parametrize("info, anchors, deltas, scores", [
    ([2, 3], [5, 6, 3, 4], [2, 12, 5, 6], [2, 3, 5, 6]), ([2, 4], [5, 6, 3, 4], [-1, 12, 5, 6], [-1, 3, 5, 6]),
    ([-1, 3], [-1, -1, -1, 4], [-1, -1, -1, -1], [(1, 3), 3, 5, 6]), ("...", "...", "...", "..."),
    ([1, -1], [5, 6, 3, -1], "...", [1, 3, 5, 6]), ([-1, 3], [5, 6, 3, 4], [-1, 12, 5, 6], "..."),
])
def test_generate_proposals_shapes(info, anchors, deltas, scores, tmp_path):
    xml, node = _gp_model(tmp_path, info, anchors, deltas, scores, roi_num_type="i32")
    check_output_shapes(xml, node)
    check_inference(xml)


def _gp_built(shapes=("1,3", "5,6,3,4", "1,12,5,6", "1,3,5,6"), types=("f32",) * 4, attrs=None) -> bytes:
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("info", "anchors", "deltas", "scores"), types, shapes)]
    layer_attrs = {"min_size": 1.0, "nms_threshold": 0.7, "pre_nms_count": 100, "post_nms_count": 10}
    layer_attrs.update(attrs or {})
    b.result(b.layer("GenerateProposals", "opset9", inputs, attrs=layer_attrs,
                     out_specs=[("FP32", "-1,4"), ("FP32", "-1"), ("I64", "1")]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, error, what", [
    ({"shapes": ("3", "5,6,3,4", "1,12,5,6", "1,3,5,6")}, InferenceError, "im_info must be 2-D"),
    ({"shapes": ("1,5", "5,6,3,4", "1,12,5,6", "1,3,5,6")}, InferenceError, r"\[N, 3\] or \[N, 4\]"),
    ({"shapes": ("1,3", "5,6,3,5", "1,12,5,6", "1,3,5,6")}, InferenceError, r"\[H, W, A, 4\]"),
    ({"shapes": ("1,3", "5,6,3,4", "1,8,5,6", "1,3,5,6")}, InferenceError, "4 channels per anchor"),
    ({"shapes": ("1,3", "5,6,3,4", "1,12,5,7", "1,3,5,6")}, InferenceError, "same width"),
    ({"shapes": ("1,3", "5,6,2,4", "1,12,5,6", "1,3,5,6")}, InferenceError, "number of anchors"),
    ({"shapes": ("2,3", "5,6,3,4", "1,12,5,6", "1,3,5,6")}, InferenceError, "same batch"),
    ({"types": ("f32", "i32", "f32", "f32")}, InferenceError, "anchors must have a floating-point"),
    ({"attrs": {"pre_nms_count": 0}}, InferenceError, "pre_nms_count=0"),
    ({"attrs": {"post_nms_count": -2}}, InferenceError, "post_nms_count=-2"),
    ({"attrs": {"nms_eta": 0.5}}, InferenceError, "nms_eta"),
    ({"attrs": {"roi_num_type": "u8"}}, IRError, "roi_num_type"),
])
def test_generate_proposals_refusals_name_the_layer(kwargs, error, what):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_gp_built(**kwargs))
    assert "GenerateProposals-9" in str(info.value)


@pytest.mark.parametrize("seed", range(16))
def test_generate_proposals_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    n, a, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(2, 7)), int(rng.integers(2, 7))
    info_size = int(rng.choice([3, 4]))
    xml, _ = _gp_model(tmp_path, [n, info_size], [h, w, a, 4], [n, 4 * a, h, w], [n, a, h, w],
                       min_size=float(rng.choice([0.0, 1.0, 6.0])), nms=float(rng.choice([0.5, 0.7])),
                       pre=int(rng.choice([8, 20, 100])), post=int(rng.choice([3, 10, 50])),
                       normalized=bool(rng.integers(2)), roi_num_type=str(rng.choice(["i32", "i64"])))
    check_inference(xml)
    _gp_against_cpu(xml, _gp_feeds(rng, n, a, h, w, info_size))


def test_generate_proposals_small_boxes_and_ties(tmp_path):
    """Boxes under min_size are dead before NMS but still take a place among the pre_nms_count best (sorted by
    score, ties in partial_sort's order); large deltas are capped at log(1000 / 16)."""
    rng = np.random.default_rng(7)
    xml, _ = _gp_model(tmp_path, [2, 4], [6, 6, 3, 4], [2, 12, 6, 6], [2, 3, 6, 6], min_size=12.0, pre=40, post=30,
                       nms=0.9)
    feeds = _gp_feeds(rng, 2, 3, 6, 6, 4)
    feeds["scores"] = np.round(feeds["scores"], 1)
    feeds["deltas"][:, 2::4] *= 30  # exp(9): capped
    rois, scores, counts = _gp_against_cpu(xml, feeds)
    assert 0 < counts.sum() < 60 and len(rois) == counts.sum()


def test_generate_proposals_f16_types(tmp_path):
    xml, _ = _gp_model(tmp_path, [1, 3], [4, 4, 2, 4], [1, 8, 4, 4], [1, 2, 4, 4], et=ov.Type.f16)
    feeds = {k: v.astype(np.float16) for k, v in _gp_feeds(np.random.default_rng(8), 1, 2, 4, 4).items()}
    rois, scores, counts = ir_runner.load(str(xml)).run(feeds).values()
    assert rois.dtype == np.float16 and scores.dtype == np.float16 and counts.dtype == np.int64


def test_generate_proposals_batch_rule():
    from ir_runner.ops.detection.proposals import OPS

    assert "data-dependent" in OPS[2].batch(None, [], [], [0, None, 0, 0])
