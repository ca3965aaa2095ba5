"""ROIAlign-3/9: shapes as OpenVINO infers them (static, dynamic, interval dims, dynamic ranks), refusals naming
the layer and port, values bit for bit against ROIAlign-3's ``Node.evaluate`` (f32, f16, bf16; ROIAlign-9 has
none: its asymmetric mode against ROIAlign-3's evaluate, its aligned modes against the CPU plugin within a bound),
op_reference cases, corners (boxes outside the image, NaN, max of negative samples, adaptive sampling), and
seeded differential runs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset3, opset9  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.ops.detection.roi_align import OPS  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import (  # noqa: E402
    check_inference,
    check_output_shapes,
    check_run,
    cpu_outputs,
    reference_outputs,
    write_ir,
)

F32_EPS = float(np.finfo(np.float32).eps)
TYPES = {"f32": (ov.Type.f32, np.float32), "f16": (ov.Type.f16, np.float16), "bf16": (ov.Type.bf16, ml_dtypes.bfloat16)}


def _model(tmp_path, version, data_shape, rois_shape, indices_shape, *, et=ov.Type.f32, index_et=ov.Type.i32,
           pooled=(2, 2), ratio=2, scale=1.0, mode="avg", aligned="asymmetric", name="model"):
    data = opset9.parameter(ov.PartialShape(data_shape), et, name="data")
    rois = opset9.parameter(ov.PartialShape(rois_shape), et, name="rois")
    indices = opset9.parameter(ov.PartialShape(indices_shape), index_et, name="indices")
    if version == 3:
        node = opset3.roi_align(data, rois, indices, pooled[0], pooled[1], ratio, scale, mode)
    else:
        node = opset9.roi_align(data, rois, indices, pooled[0], pooled[1], ratio, scale, mode, aligned)
    return write_ir(node, [data, rois, indices], tmp_path, name), node


def _boxes(rng, count, h, w, scale=1.0, spread=1.5):
    """Boxes (x1, y1, x2, y2) with x1 <= x2, y1 <= y2, partly outside an h x w image (in input coordinates)."""
    corners = (rng.random((count, 4)) * [w, h, w, h] * spread - 1) / scale
    return np.concatenate([np.minimum(corners[:, :2], corners[:, 2:]), np.maximum(corners[:, :2], corners[:, 2:])],
                          axis=1).astype(np.float32)


def _v3_twin(tmp_path, xml_v9_args):
    """ROIAlign-3's Node.evaluate as the oracle of an asymmetric ROIAlign-9 model with the same attributes."""
    xml, _ = _model(tmp_path, 3, *xml_v9_args[0], **xml_v9_args[1], name="twin")
    return lambda _xml, feeds: reference_outputs(xml, feeds)


# -- shapes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [3, 9])
@pytest.mark.parametrize("data, rois, indices", [
    ([2, 3, 5, 5], [7, 4], [7]), ([10, -1, 5, 5], [7, 4], [7]), ([10, 3, 5, 5], [-1, -1], [9]),
    ([10, 3, 5, 5], [-1, 4], [-1]), ([1, 2, 4, 4], [(1, 3), 4], [(2, 5)]), ([1, 2, 4, 4], [-1, 4], [(2, 5)]),
    ([-1, (2, 8), -1, -1], [(1, 3), 4], [-1]), ("...", "...", "..."), ([1, 3, 4, 4], "...", [5]),
    ([1, 3, 4, 4], [0, 4], [0]),
])
def test_shapes_as_openvino_infers_them(version, data, rois, indices, tmp_path):
    shape = lambda s: ov.PartialShape.dynamic() if s == "..." else s  # noqa: E731
    xml, node = _model(tmp_path, version, shape(data), shape(rois), shape(indices), pooled=(3, 4))
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("et", ["f16", "bf16", "f64"])
def test_element_types_infer(et, tmp_path):
    xml, _ = _model(tmp_path, 9, [1, 2, 4, 4], [3, 4], [3], et=getattr(ov.Type, et), index_et=ov.Type.u8)
    check_inference(xml)


def test_zero_pooled_size_gives_an_empty_output(tmp_path):
    xml, node = _model(tmp_path, 9, [1, 2, 4, 4], [3, 4], [3], pooled=(0, 2))
    check_output_shapes(xml, node)
    got = ir_runner.load(str(xml)).run({"data": np.ones((1, 2, 4, 4), np.float32), "rois": np.ones((3, 4), np.float32),
                                        "indices": np.zeros(3, np.int32)})
    assert list(got.values())[0].shape == (3, 2, 0, 2)


def _built(data="1,2,4,4", rois="3,4", indices="3", types=("f32", "f32", "i32"), attrs=None, out="3,2,2,2"):
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("data", "rois", "indices"), types, (data, rois, indices))]
    layer_attrs = {"pooled_h": 2, "pooled_w": 2, "sampling_ratio": 2, "spatial_scale": 1.0, "mode": "avg"}
    layer_attrs.update(attrs or {})
    b.result(b.layer("ROIAlign", "opset9", inputs, attrs=layer_attrs, out_specs=[("FP32", out)]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, what, port", [
    ({"data": "1,2,4"}, "data must be 4-D", "data"), ({"rois": "3,4,1"}, "rois must be 2-D", "rois"),
    ({"indices": "3,1"}, "batch_indices must be 1-D", "batch_indices"),
    ({"indices": ""}, "must be 1-D", "batch_indices"),
    ({"rois": "3,5"}, "must be 4", "rois"), ({"indices": "2"}, "same first dim", "batch_indices"),
    ({"types": ("f16", "f32", "i32")}, "same floating-point type", "rois"),
    ({"types": ("i32", "i32", "i32")}, "f16, bf16, f32 or f64", "data"),
    ({"types": ("f32", "f32", "f32")}, "integer element type", "batch_indices"),
    ({"types": ("f32", "f32", "boolean")}, "integer element type", "batch_indices"),
])
def test_bad_inputs_name_layer_and_port(kwargs, what, port):
    with pytest.raises(InferenceError, match=what) as info:
        ir_runner.load(_built(**kwargs))
    text = str(info.value)
    assert "ROIAlign-9" in text and f"({port})" in text


@pytest.mark.parametrize("attrs, error, what", [
    ({"pooled_h": -1}, InferenceError, "pooled_h=-1"), ({"sampling_ratio": -2}, InferenceError, "sampling_ratio=-2"),
    ({"mode": "sum"}, IRError, "mode"), ({"aligned_mode": "corner"}, IRError, "aligned_mode"),
    ({"spatial_scale": "x"}, IRError, "spatial_scale"),
])
def test_bad_attributes(attrs, error, what):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_built(attrs=attrs))
    assert "ROIAlign" in str(info.value)


# -- values -----------------------------------------------------------------------------------------

def _ramp(n=2, c=2, h=5, w=5, dtype=np.float32):
    return (np.arange(n * c * h * w, dtype=np.float32).reshape(n, c, h, w) * 0.5 - 3).astype(dtype)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("et", sorted(TYPES))
def test_against_node_evaluate(mode, et, tmp_path):
    ov_type, dtype = TYPES[et]
    xml, _ = _model(tmp_path, 3, [2, 2, 5, 5], [4, 4], [4], et=ov_type, pooled=(3, 2), ratio=2, scale=0.75, mode=mode)
    rois = np.array([[1, 1, 3, 4], [0, 0, 6, 6], [-2, 1, 2.5, 3.3], [4, 5, 4.2, 5.1]], np.float32)
    check_run(xml, {"data": _ramp(dtype=dtype), "rois": rois.astype(dtype),
                    "indices": np.array([0, 1, 1, 0], np.int32)})


OP_REFERENCE_DATA = np.array(
    [0, 1, 8, 5, 5, 2, 0, 7, 7, 10, 4, 5, 9, 0, 0, 5, 7, 0, 4, 0, 4, 7, 6, 10, 9, 5, 1, 7, 4, 7, 10, 8,
     2, 0, 8, 3, 6, 8, 10, 4, 2, 10, 7, 8, 7, 0, 6, 9, 2, 4, 8, 5, 2, 3, 3, 1, 5, 9, 10, 0, 9, 5, 5, 3,
     10, 5, 2, 0, 10, 0, 5, 4, 3, 10, 5, 5, 10, 0, 8, 8, 9, 1, 0, 7, 9, 6, 8, 7, 10, 9, 2, 3, 3, 5, 6, 9,
     4, 9, 2, 4, 5, 5, 3, 1, 1, 6, 8, 0, 5, 5, 10, 8, 6, 9, 6, 9, 1, 2, 7, 1, 1, 3, 0, 4, 0, 7, 10, 2],
    np.float32).reshape(2, 1, 8, 8)
OP_REFERENCE = {  # (version, mode, aligned_mode): expected (OpenVINO's op_reference; half_pixel_for_nn: 2 digits)
    (3, "avg", "asymmetric"): [3, 3.75, 4.75, 5, 3, 5.5, 2.75, 3.75],
    (3, "max", "asymmetric"): [4.375, 4.9375, 5.6875, 5.625, 4.625, 7.125, 3.3125, 4.3125],
    (9, "avg", "asymmetric"): [3, 3.75, 4.75, 5, 3, 5.5, 2.75, 3.75],
    (9, "avg", "half_pixel_for_nn"): [3.14, 2.16, 2.86, 5.03, 1.83, 5.84, 2.77, 3.44],
    (9, "max", "half_pixel"): [4.375, 4.9375, 5.6875, 5.625, 4.625, 7.125, 3.3125, 4.3125],
}


@pytest.mark.parametrize("case", sorted(OP_REFERENCE))
@pytest.mark.parametrize("et, index_et", [("f32", "i8"), ("f16", "u64"), ("bf16", "i32"), ("f32", "u16")])
def test_op_reference_cases(case, et, index_et, tmp_path):
    version, mode, aligned = case
    ov_type, dtype = TYPES[et]
    xml, _ = _model(tmp_path, version, [2, 1, 8, 8], [2, 4], [2], et=ov_type, index_et=getattr(ov.Type, index_et),
                    pooled=(2, 2), ratio=2, scale=1.0, mode=mode, aligned=aligned)
    feeds = {"data": OP_REFERENCE_DATA.astype(dtype), "rois": np.array([[2, 2, 4, 4]] * 2, dtype),
             "indices": np.array([0, 1], getattr(np, {"i8": "int8", "u64": "uint64", "i32": "int32",
                                                       "u16": "uint16"}[index_et]))}
    got = check_run(xml, feeds) if version == 3 else ir_runner.load(str(xml)).run(feeds)
    want = np.array(OP_REFERENCE[case], np.float32).reshape(2, 1, 2, 2)
    tolerance = 0.01 if aligned == "half_pixel_for_nn" else 0.0
    np.testing.assert_allclose(list(got.values())[0].astype(np.float32), want, atol=tolerance, rtol=0)


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_v9_asymmetric_is_v3_bit_for_bit(mode, tmp_path):
    args = ([2, 3, 6, 7], [5, 4], [5]), {"pooled": (2, 3), "ratio": 0, "scale": 0.5, "mode": mode}
    xml, _ = _model(tmp_path, 9, *args[0], **args[1], aligned="asymmetric")
    rng = np.random.default_rng(2)
    feeds = {"data": rng.standard_normal((2, 3, 6, 7)).astype(np.float32), "rois": _boxes(rng, 5, 6, 7, 0.5),
             "indices": rng.integers(0, 2, 5).astype(np.int32)}
    check_run(xml, feeds, oracle=_v3_twin(tmp_path, args))


@pytest.mark.parametrize("aligned", ["half_pixel_for_nn", "half_pixel"])
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_v9_aligned_modes_near_the_cpu_plugin(aligned, mode, tmp_path):
    rng = np.random.default_rng(5)
    xml, _ = _model(tmp_path, 9, [2, 3, 6, 7], [6, 4], [6], pooled=(3, 2), ratio=0, scale=0.5, mode=mode,
                    aligned=aligned)
    data = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    feeds = {"data": data, "rois": _boxes(rng, 6, 6, 7, 0.5), "indices": rng.integers(0, 2, 6).astype(np.int32)}
    check_run(xml, feeds, oracle="cpu", rtol=0, atol=4 * F32_EPS * float(np.abs(data).max()))


def test_aligned_boxes_keep_a_size_below_one(tmp_path):
    """half_pixel keeps a tiny box tiny (asymmetric widens it to 1): the samples differ."""
    feeds = {"data": _ramp(1, 1, 4, 4), "rois": np.array([[1, 1, 1.2, 1.2]], np.float32),
             "indices": np.zeros(1, np.int32)}
    outs = []
    for aligned in ("asymmetric", "half_pixel"):
        xml, _ = _model(tmp_path, 9, [1, 1, 4, 4], [1, 4], [1], pooled=(1, 1), ratio=1, aligned=aligned, name=aligned)
        outs.append(list(check_run(xml, feeds, oracle="cpu", rtol=0, atol=1e-6).values())[0])
    assert outs[0].item() != outs[1].item()


def test_max_starts_from_zero_and_skips_nan(tmp_path):
    """The reference's max starts at 0: a bin of negative samples gives 0; a NaN sample is skipped (avg: NaN)."""
    xml, _ = _model(tmp_path, 3, [1, 1, 4, 4], [2, 4], [2], pooled=(1, 1), ratio=2, mode="max")
    data = -np.ones((1, 1, 4, 4), np.float32)
    data[0, 0, 3, 3] = np.nan
    feeds = {"data": data, "rois": np.array([[0, 0, 2, 2], [2, 2, 4, 4]], np.float32), "indices": np.zeros(2, np.int32)}
    got = list(check_run(xml, feeds).values())[0]
    assert got.reshape(-1).tolist() == [0, 0]
    xml, _ = _model(tmp_path, 3, [1, 1, 4, 4], [2, 4], [2], pooled=(1, 1), ratio=2, mode="avg", name="avg")
    got = list(check_run(xml, feeds).values())[0]
    assert got[0].item() == -1 and np.isnan(got[1].item())


def test_samples_outside_the_image_read_pixel_zero_with_weight_zero(tmp_path):
    """A box far outside: every sample is outside, the value is 0 * data[0, 0] (NaN when that pixel is inf)."""
    xml, _ = _model(tmp_path, 3, [1, 1, 3, 3], [2, 4], [2], pooled=(1, 2), ratio=1)
    data = np.ones((1, 1, 3, 3), np.float32)
    data[0, 0, 0, 0] = np.inf
    feeds = {"data": data, "rois": np.array([[10, 10, 12, 12], [-5, -5, -3, -3]], np.float32),
             "indices": np.zeros(2, np.int32)}
    got = list(check_run(xml, feeds).values())[0]
    assert np.isnan(got).all()


def test_nan_and_degenerate_boxes(tmp_path):
    xml, _ = _model(tmp_path, 3, [1, 2, 4, 4], [3, 4], [3], pooled=(2, 2), ratio=2)
    feeds = {"data": _ramp(1, 2, 4, 4), "rois": np.array([[np.nan, 0, 2, 2], [1, 1, 1, 1], [3, 3, 0, 0]], np.float32),
             "indices": np.zeros(3, np.int32)}
    check_run(xml, feeds)


def test_adaptive_sampling_ratio_per_box(tmp_path):
    """sampling_ratio 0: ceil(bin size) samples per bin, per box and axis (here 1x1 up to 4x3)."""
    xml, _ = _model(tmp_path, 3, [1, 2, 16, 16], [3, 4], [3], pooled=(2, 2), ratio=0, scale=1.0)
    feeds = {"data": _ramp(1, 2, 16, 16), "rois": np.array([[0, 0, 1, 1], [1, 2, 9, 7.5], [0, 0, 15, 15]], np.float32),
             "indices": np.zeros(3, np.int32)}
    check_run(xml, feeds)


def test_batch_index_out_of_range_refused(tmp_path):
    xml, _ = _model(tmp_path, 9, [2, 1, 4, 4], [2, 4], [2], index_et=ov.Type.i64)
    model = ir_runner.load(str(xml))
    for bad in (2, -1):
        with pytest.raises(InputError, match=r"outside \[0, 2\)") as info:
            model.run({"data": np.ones((2, 1, 4, 4), np.float32), "rois": np.ones((2, 4), np.float32),
                       "indices": np.array([0, bad], np.int64)})
        assert "ROIAlign" in str(info.value) and "batch_indices" in str(info.value)


def test_negative_box_with_adaptive_sampling_refused(tmp_path):
    """An aligned box of negative size has a negative bin: ceil of it is negative, the reference's assertion
    fails; ir-run refuses it, naming the rois."""
    xml, _ = _model(tmp_path, 9, [1, 1, 4, 4], [1, 4], [1], ratio=0, aligned="half_pixel")
    with pytest.raises(InputError, match="adaptive sampling ratio") as info:
        ir_runner.load(str(xml)).run({"data": np.ones((1, 1, 4, 4), np.float32),
                                      "rois": np.array([[3, 3, 0, 0]], np.float32), "indices": np.zeros(1, np.int32)})
    assert "rois" in str(info.value)


def test_batch_rule():
    op = OPS[0]
    assert op.batch(None, [], [], [None, 0, 0]) == [0]
    assert op.batch(None, [], [], [None, None, None]) == [None]
    assert "batch index" in op.batch(None, [], [], [0, 0, 0])


# -- seeded differential ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(30))
def test_random_against_the_reference(seed, tmp_path):
    """ROIAlign-3 (and asymmetric ROIAlign-9) bit for bit against Node.evaluate; aligned ROIAlign-9 within
    4 eps(f32) * max|data| of the CPU plugin (f32 only: the plugin computes narrow types in f32)."""
    rng = np.random.default_rng(seed)
    n, c, h, w = (int(v) for v in rng.integers(1, [3, 4, 10, 10], endpoint=True))
    count = int(rng.integers(0, 6))
    version = (3, 9)[seed % 2]
    aligned = ("asymmetric", "half_pixel_for_nn", "half_pixel")[int(rng.integers(3))] if version == 9 else "asymmetric"
    et = sorted(TYPES)[int(rng.integers(3))] if aligned == "asymmetric" else "f32"
    ov_type, dtype = TYPES[et]
    scale = float(rng.choice([1.0, 0.5, 0.25, 1.7]))
    attrs = {"et": ov_type, "pooled": tuple(int(p) for p in rng.integers(1, 4, 2)), "ratio": int(rng.integers(0, 3)),
             "scale": scale, "mode": ("avg", "max")[int(rng.integers(2))]}
    shapes = ([n, c, h, w], [count, 4], [count])
    xml, _ = _model(tmp_path, version, *shapes, aligned=aligned, **attrs)
    data = rng.standard_normal((n, c, h, w)).astype(dtype)
    feeds = {"data": data, "rois": _boxes(rng, count, h, w, scale).astype(dtype),
             "indices": rng.integers(0, n, count).astype(np.int32)}
    if aligned == "asymmetric":
        check_run(xml, feeds, oracle=_v3_twin(tmp_path, (shapes, attrs)) if version == 9 else "reference")
    elif count:
        check_run(xml, feeds, oracle=cpu_outputs, rtol=0, atol=4 * F32_EPS * float(np.abs(data).max()))


def test_f64_follows_the_f32_arithmetic_closely(tmp_path):
    """f64 data (no oracle evaluates it): the same grid in f64, within f32 rounding of the f32 result."""
    rng = np.random.default_rng(9)
    feeds = {"data": rng.standard_normal((1, 2, 6, 6)), "rois": _boxes(rng, 4, 6, 6).astype(np.float64),
             "indices": np.zeros(4, np.int32)}
    results = []
    for et, dtype in ((ov.Type.f64, np.float64), (ov.Type.f32, np.float32)):
        xml, _ = _model(tmp_path, 9, [1, 2, 6, 6], [4, 4], [4], et=et, ratio=0, name=str(dtype.__name__))
        check_inference(xml)
        results.append(list(ir_runner.load(str(xml)).run({k: v.astype(dtype) if k != "indices" else v
                                                          for k, v in feeds.items()}).values())[0])
    assert results[0].dtype == np.float64
    np.testing.assert_allclose(results[0], results[1], rtol=0, atol=1e-5)


def test_dynamic_box_count_runs_per_shape(tmp_path):
    xml, _ = _model(tmp_path, 3, [1, 2, 5, 5], [-1, 4], [-1], pooled=(2, 3), ratio=0)
    model = ir_runner.load(str(xml))
    rng = np.random.default_rng(1)
    for count in (1, 4, 0):
        feeds = {"data": _ramp(1, 2, 5, 5), "rois": _boxes(rng, count, 5, 5), "indices": np.zeros(count, np.int32)}
        assert list(model.run(feeds).values())[0].shape == (count, 2, 2, 3)
        if count:
            check_run(xml, feeds)
