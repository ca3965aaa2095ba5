"""DeformablePSROIPooling-1: shapes as OpenVINO infers them, refusals naming the layer, values bit for bit
against OpenVINO's CPU plugin (the reference has no Node.evaluate for it): with and without offsets, several
classes of offsets, part sizes, spatial bins, boxes outside the map, the -1 end of the boxes, seeded
differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def _model(tmp_path, data_shape, rois_shape, offsets_shape=None, et=ov.Type.f32, name="model", **attrs):
    shape = lambda s: ov.PartialShape.dynamic() if s == "..." else ov.PartialShape(s)  # noqa: E731
    data = opset1.parameter(shape(data_shape), et, name="data")
    rois = opset1.parameter(shape(rois_shape), et, name="rois")
    params = [data, rois]
    kw = {"output_dim": 2, "spatial_scale": 1.0, "group_size": 2, "mode": "bilinear_deformable"}
    kw.update(attrs)
    if offsets_shape is not None:
        offsets = opset1.parameter(shape(offsets_shape), et, name="offsets")
        params.append(offsets)
        kw["offsets"] = offsets
    node = opset1.deformable_psroi_pooling(data, rois, **kw)
    return write_ir(node, params, tmp_path, name), node


def _rois(rng, count, n, h, w, scale=1.0):
    x1, y1 = rng.random(count) * w / scale, rng.random(count) * h / scale
    return np.stack([rng.integers(0, n, count), x1, y1, x1 + rng.random(count) * w / scale,
                     y1 + rng.random(count) * h / scale], 1).astype(np.float32)


# -- shapes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, rois, offsets", [
    ([1, 8, 6, 6], [3, 5], None), ([1, 8, 6, 6], [3, 5], [3, 2, 2, 2]), ([-1, -1, -1, -1], [-1, 5], [-1, 2, 1, 1]),
    ("...", "...", None), ([2, 8, 6, 6], [(1, 7), 5], "..."),
])
def test_shapes_as_openvino_infers_them(data, rois, offsets, tmp_path):
    xml, node = _model(tmp_path, data, rois, offsets, output_dim=2, group_size=2, part_size=2)
    check_output_shapes(xml, node)
    check_inference(xml)


def _built(shapes=("1,8,6,6", "3,5"), attrs=None, types=("f32", "f32")):
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("data", "rois", "offsets"), types, shapes)]
    layer_attrs = {"output_dim": 2, "spatial_scale": 1.0, "group_size": 2, "mode": "bilinear_deformable"}
    layer_attrs.update(attrs or {})
    layer_attrs = {k: v for k, v in layer_attrs.items() if v is not None}
    b.result(b.layer("DeformablePSROIPooling", "opset1", inputs, attrs=layer_attrs, out_specs=[("FP32", "3,2,2,2")]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, error, what", [
    ({"shapes": ("1,8,6", "3,5")}, InferenceError, r"\(data\): data must be 4-D"),
    ({"shapes": ("1,8,6,6", "3,5,1")}, InferenceError, r"\(rois\): rois must be 2-D"),
    ({"shapes": ("1,8,6,6", "3,5", "3,2,2"), "types": ("f32",) * 3}, InferenceError, r"offsets must be 4-D"),
    ({"types": ("i32", "f32")}, InferenceError, "floating-point"),
    ({"attrs": {"output_dim": 0}}, InferenceError, "output_dim=0"),
    ({"attrs": {"group_size": -1}}, InferenceError, "group_size=-1"),
    ({"attrs": {"part_size": 0}}, InferenceError, "part_size=0"),
    ({"attrs": {"mode": "average"}}, IRError, "mode"),
    ({"attrs": {"spatial_scale": None}}, IRError, "spatial_scale"),
])
def test_refusals_name_the_layer(kwargs, error, what):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_built(**kwargs))
    assert "DeformablePSROIPooling-1" in str(info.value)


# -- values ---------------------------------------------------------------------------------------------

def test_without_offsets_a_centred_bin(tmp_path):
    """One bin (group_size 1), one sample at the box start: a box [1, 1, 2, 2] at scale 1 starts at 0.5, so the
    sample is the mean of the 2 x 2 pixels from (0, 0)."""
    xml, _ = _model(tmp_path, [1, 1, 4, 4], [1, 5], output_dim=1, group_size=1)
    data = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    got = check_run(xml, {"data": data, "rois": np.array([[0, 1, 1, 2, 2]], np.float32)}, oracle="cpu")
    assert list(got.values())[0].item() == np.float32(2.5)


@pytest.mark.parametrize("classes, part, bins", [(1, 1, (1, 1)), (2, 2, (2, 3)), (1, 3, (2, 2)), (2, 1, (3, 1))])
def test_offsets_classes_parts_and_bins(classes, part, bins, tmp_path):
    rng = np.random.default_rng(classes * 10 + part)
    xml, _ = _model(tmp_path, [2, 4 * 9, 7, 8], [5, 5], [5, 2 * classes, part, part], output_dim=4, group_size=3,
                    part_size=part, spatial_bins_y=bins[0], spatial_bins_x=bins[1], trans_std=0.5, spatial_scale=0.5)
    feeds = {"data": rng.standard_normal((2, 36, 7, 8)).astype(np.float32), "rois": _rois(rng, 5, 2, 7, 8, 0.5),
             "offsets": (rng.standard_normal((5, 2 * classes, part, part)) * 0.4).astype(np.float32)}
    check_run(xml, feeds, oracle="cpu")


def test_boxes_outside_and_the_end_marker(tmp_path):
    """Samples outside [-0.5, size - 0.5] are skipped (a bin of none gives 0); the box with batch id -1 and all
    after it give 0."""
    rng = np.random.default_rng(3)
    xml, _ = _model(tmp_path, [1, 8, 5, 5], [4, 5], [4, 2, 1, 1], spatial_bins_x=2, spatial_bins_y=2)
    rois = np.array([[0, -20, -20, -10, -10], [0, 1, 1, 8, 9], [-1, 1, 1, 2, 2], [0, 1, 1, 3, 3]], np.float32)
    feeds = {"data": rng.standard_normal((1, 8, 5, 5)).astype(np.float32), "rois": rois,
             "offsets": np.full((4, 2, 1, 1), 0.25, np.float32)}
    out = list(check_run(xml, feeds, oracle="cpu").values())[0]
    assert not out[0].any() and out[1].any() and not out[2:].any()


@pytest.mark.parametrize("rois, what", [([[1, 1, 1, 2, 2]], "not a batch index"), ([[-2, 1, 1, 2, 2]], "nor -1")])
def test_bad_batch_ids_refused(rois, what, tmp_path):
    xml, _ = _model(tmp_path, [1, 8, 5, 5], [1, 5])
    with pytest.raises(InputError, match=what):
        ir_runner.load(str(xml)).run({"data": np.ones((1, 8, 5, 5), np.float32), "rois": np.array(rois, np.float32)})


def test_offsets_too_small_refused(tmp_path):
    xml, _ = _model(tmp_path, [1, 8, 5, 5], [3, 5], [-1, 2, 1, 1])
    with pytest.raises(InputError, match="too small"):
        ir_runner.load(str(xml)).run({"data": np.ones((1, 8, 5, 5), np.float32),
                                      "rois": np.zeros((3, 5), np.float32), "offsets": np.zeros((1, 2, 1, 1),
                                                                                                 np.float32)})


def test_f16_computes_in_f32(tmp_path):
    rng = np.random.default_rng(5)
    feeds = {"data": rng.standard_normal((1, 8, 5, 5)).astype(np.float16),
             "rois": _rois(rng, 3, 1, 5, 5).astype(np.float16)}
    xml, _ = _model(tmp_path, [1, 8, 5, 5], [3, 5], et=ov.Type.f16)
    got = list(ir_runner.load(str(xml)).run(feeds).values())[0]
    xml32, _ = _model(tmp_path, [1, 8, 5, 5], [3, 5], name="f32")
    want = list(ir_runner.load(str(xml32)).run({k: v.astype(np.float32) for k, v in feeds.items()}).values())[0]
    assert got.dtype == np.float16 and np.array_equal(got, want.astype(np.float16))


def test_batch_rule_refuses_chunks():
    from ir_runner.ops.detection.deformable_psroi import OPS

    assert "-1" in OPS[0].batch(None, [], [], [None, 0])
    assert OPS[0].batch(None, [], [], [None, None]) == [None]


# -- seeded differential ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(24))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    g, dim = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    n, h, w, r = int(rng.integers(1, 3)), int(rng.integers(2, 9)), int(rng.integers(2, 9)), int(rng.integers(1, 6))
    classes = int(rng.choice([c for c in (1, 2) if dim % c == 0]))
    part = int(rng.integers(1, 4))
    scale = float(rng.choice([1.0, 0.5, 0.0625]))
    attrs = {"output_dim": dim, "spatial_scale": scale, "group_size": g, "spatial_bins_x": int(rng.integers(1, 4)),
             "spatial_bins_y": int(rng.integers(1, 4)), "trans_std": float(rng.choice([0.1, 1.0])), "part_size": part}
    offsets = [r, 2 * classes, part, part] if seed % 3 else None
    xml, _ = _model(tmp_path, [n, dim * g * g, h, w], [r, 5], offsets, **attrs)
    check_inference(xml)
    feeds = {"data": rng.standard_normal((n, dim * g * g, h, w)).astype(np.float32),
             "rois": _rois(rng, r, n, h, w, scale)}
    if seed % 5 == 4 and r > 1:
        feeds["rois"][r // 2, 0] = -1
    if offsets:
        feeds["offsets"] = (rng.standard_normal(offsets) * 0.3).astype(np.float32)
    check_run(xml, feeds, oracle="cpu")
