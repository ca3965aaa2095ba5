"""ROIAlignRotated-15: shapes as OpenVINO infers them, refusals naming the layer and port, values against
OpenVINO's CPU plugin (which runs the reference kernel; the wheel has no Node.evaluate for it) within the
module's bound, rotation direction, adaptive sampling, boxes partly outside the map, narrow types, seeded
differential runs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

RTOL = 1e-5  # glibc's sinf/cosf against f64 rounded to f32 (docs/semantics.md)


def _model(tmp_path, data_shape, rois_shape, indices_shape, *, et=ov.Type.f32, pooled=(2, 3), ratio=2, scale=1.0,
           clockwise=False, name="model"):
    shape = lambda s: ov.PartialShape.dynamic() if s == "..." else ov.PartialShape(s)  # noqa: E731
    data = opset1.parameter(shape(data_shape), et, name="data")
    rois = opset1.parameter(shape(rois_shape), et, name="rois")
    indices = opset1.parameter(shape(indices_shape), ov.Type.i32, name="indices")
    node = opset15.roi_align_rotated(data, rois, indices, pooled[0], pooled[1], ratio, scale, clockwise)
    return write_ir(node, [data, rois, indices], tmp_path, name), node


def _rois(rng, count, h, w, scale=1.0, spread=1.5):
    return np.stack([rng.random(count) * w / scale, rng.random(count) * h / scale,
                     rng.random(count) * w * spread / scale, rng.random(count) * h * spread / scale,
                     (rng.random(count) - 0.5) * 7], 1).astype(np.float32)


def _against_cpu(xml, feeds):
    data = feeds["data"]
    atol = 1e-6 * float(np.abs(data).max()) if data.size else 0.0
    return check_run(xml, feeds, oracle="cpu", rtol=RTOL, atol=atol)


# -- shapes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, rois, indices", [
    ([2, 3, 5, 5], [7, 5], [7]), ([2, -1, 5, 5], [7, 5], [-1]), ([2, 3, 5, 5], [-1, -1], [4]),
    ([1, (2, 6), 4, 4], [(1, 3), 5], [(2, 5)]), ("...", "...", "..."), ([1, 3, 4, 4], [0, 5], [0]),
])
def test_shapes_as_openvino_infers_them(data, rois, indices, tmp_path):
    xml, node = _model(tmp_path, data, rois, indices, pooled=(3, 4))
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("et", [ov.Type.f16, ov.Type.bf16, ov.Type.f64])
def test_element_types_infer(et, tmp_path):
    xml, _ = _model(tmp_path, [1, 2, 4, 4], [3, 5], [3], et=et)
    check_inference(xml)


def _built(data="1,2,4,4", rois="3,5", indices="3", types=("f32", "f32", "i32"), attrs=None):
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("data", "rois", "indices"), types, (data, rois, indices))]
    layer_attrs = {"pooled_h": 2, "pooled_w": 2, "sampling_ratio": 2, "spatial_scale": 1.0, "clockwise_mode": "false"}
    layer_attrs.update(attrs or {})
    b.result(b.layer("ROIAlignRotated", "opset15", inputs, attrs=layer_attrs, out_specs=[("FP32", "3,2,2,2")]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, error, what", [
    ({"data": "1,2,4"}, InferenceError, r"\(data\): data must be 4-D"),
    ({"rois": "3,4"}, InferenceError, r"\(rois\): the second dim of rois must be 5 \(cx, cy, w, h, angle\)"),
    ({"indices": "2"}, InferenceError, r"\(batch_indices\): .*same first dim"),
    ({"types": ("f16", "f32", "i32")}, InferenceError, "same floating-point type"),
    ({"types": ("f32", "f32", "f32")}, InferenceError, r"\(batch_indices\): .*integer element type"),
    ({"types": ("i32", "i32", "i32")}, InferenceError, "f16, bf16, f32 or f64"),
    ({"attrs": {"pooled_w": -1}}, InferenceError, "pooled_w=-1"),
    ({"attrs": {"sampling_ratio": -3}}, InferenceError, "sampling_ratio=-3"),
    ({"attrs": {"clockwise_mode": "maybe"}}, IRError, "clockwise_mode"),
])
def test_refusals_name_the_layer(kwargs, error, what):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_built(**kwargs))
    assert "ROIAlignRotated-15" in str(info.value)


# -- values ---------------------------------------------------------------------------------------------

def test_unrotated_box_is_a_plain_roi_align(tmp_path):
    """Angle 0, a box centred on pixel centres: the samples are ROIAlign's with ``half_pixel`` offsets."""
    xml, _ = _model(tmp_path, [1, 1, 4, 4], [1, 5], [1], pooled=(1, 1), ratio=1)
    data = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    got = _against_cpu(xml, {"data": data, "rois": np.array([[2.0, 2.0, 2.0, 2.0, 0.0]], np.float32),
                             "indices": np.zeros(1, np.int32)})
    assert list(got.values())[0].item() == np.float32(7.5)  # the sample at (1.5, 1.5): mean of 5, 6, 9, 10


@pytest.mark.parametrize("clockwise", [False, True])
def test_rotation_direction(clockwise, tmp_path):
    """A quarter turn of a 2 x 4 box: its two bins along the height land along x, left to right turning
    counterclockwise (the map's values grow along x), right to left clockwise."""
    xml, _ = _model(tmp_path, [1, 1, 8, 8], [1, 5], [1], pooled=(2, 1), ratio=1, clockwise=clockwise)
    data = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8)
    feeds = {"data": data, "rois": np.array([[4.0, 4.0, 2.0, 4.0, np.pi / 2]], np.float32),
             "indices": np.zeros(1, np.int32)}
    got = list(_against_cpu(xml, feeds).values())[0].reshape(-1)
    assert (got[0] < got[1]) != clockwise


@pytest.mark.parametrize("ratio", [0, 1, 3])
def test_sampling_ratios_and_boxes_outside(ratio, tmp_path):
    rng = np.random.default_rng(ratio)
    xml, _ = _model(tmp_path, [2, 3, 7, 9], [12, 5], [12], pooled=(3, 2), ratio=ratio, scale=0.5)
    rois = _rois(rng, 12, 7, 9, scale=0.5, spread=2.5)
    rois[:3, :2] *= 3  # centres far outside the map
    _against_cpu(xml, {"data": rng.standard_normal((2, 3, 7, 9)).astype(np.float32), "rois": rois,
                       "indices": rng.integers(0, 2, 12).astype(np.int32)})


def test_tiny_and_zero_boxes(tmp_path):
    """Adaptive sampling of a box thinner than a bin takes ceil(bin) = 1 sample; a box of size 0 takes none
    (ceil(0) = 0) and gives 0."""
    xml, _ = _model(tmp_path, [1, 2, 5, 5], [3, 5], [3], pooled=(2, 2), ratio=0)
    rois = np.array([[2, 2, 0.3, 0.2, 0.4], [2, 2, 0, 0, 0], [1, 3, 6, 0, 1.0]], np.float32)
    data = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    out = list(_against_cpu(xml, {"data": data, "rois": rois, "indices": np.zeros(3, np.int32)}).values())[0]
    assert not out[1].any() and not out[2].any() and out[0].all()


def test_bad_batch_index_and_negative_adaptive_ratio_refused(tmp_path):
    xml, _ = _model(tmp_path, [2, 1, 4, 4], [1, 5], [1], ratio=0)
    model = ir_runner.load(str(xml))
    feeds = {"data": np.ones((2, 1, 4, 4), np.float32), "rois": np.array([[1, 1, 2, 2, 0]], np.float32),
             "indices": np.array([2], np.int32)}
    with pytest.raises(InputError, match="outside"):
        model.run(feeds)
    feeds.update(indices=np.array([1], np.int32), rois=np.array([[1, 1, -5, 2, 0]], np.float32))
    with pytest.raises(InputError, match="adaptive sampling ratio"):
        model.run(feeds)


@pytest.mark.parametrize("et, dtype, tol", [(ov.Type.f16, np.float16, 1e-2), (ov.Type.bf16, ml_dtypes.bfloat16, 5e-2),
                                             (ov.Type.f64, np.float64, 1e-6)])
def test_narrow_and_wide_types_follow_the_f32_result(et, dtype, tol, tmp_path):
    """Each operation in T (f16/bf16 rounded after each step): close to the f32 result, in T. (The CPU plugin
    reads non-f32 rois from its converted f32 buffer as T, so it is no oracle here.)"""
    rng = np.random.default_rng(9)
    feeds = {"data": rng.random((1, 2, 6, 6)).astype(np.float32), "rois": _rois(rng, 4, 6, 6),
             "indices": np.zeros(4, np.int32)}
    want = list(ir_runner.load(str(_model(tmp_path, [1, 2, 6, 6], [4, 5], [4])[0])).run(feeds).values())[0]
    xml, _ = _model(tmp_path, [1, 2, 6, 6], [4, 5], [4], et=et, name="typed")
    typed = dict(feeds, data=feeds["data"].astype(dtype), rois=feeds["rois"].astype(dtype))
    got = list(ir_runner.load(str(xml)).run(typed).values())[0]
    assert got.dtype == np.dtype(dtype)
    assert np.allclose(got.astype(np.float64), want, atol=tol)


def test_batch_rule():
    from ir_runner.ops.detection.roi_rotated import OPS

    assert OPS[0].batch(None, [], [], [None, 0, 0]) == [0]
    assert "batch index" in OPS[0].batch(None, [], [], [0, 0, 0])


# -- seeded differential ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(24))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    n, c, h, w, r = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 9)),
                     int(rng.integers(1, 9)), int(rng.integers(1, 6)))
    scale = float(rng.choice([1.0, 0.5, 0.25]))
    xml, _ = _model(tmp_path, [n, c, h, w], [r, 5], [r], pooled=(int(rng.integers(1, 4)), int(rng.integers(1, 4))),
                    ratio=int(rng.choice([0, 1, 2, 3])), scale=scale, clockwise=bool(rng.integers(2)))
    check_inference(xml)
    _against_cpu(xml, {"data": rng.standard_normal((n, c, h, w)).astype(np.float32),
                       "rois": _rois(rng, r, h, w, scale), "indices": rng.integers(0, n, r).astype(np.int32)})


def test_generated_batch_indices_name_images(tmp_path):
    from tests.cli.clikit import invoke

    xml, _ = _model(tmp_path, [3, 2, 6, 6], [5, 5], [5])
    result = invoke("run", xml, "--fill", "random")
    assert result.exit_code == 0 and "random [0,2] (batch_indices of ROIAlignRotated-15" in result.stdout
