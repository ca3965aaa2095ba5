"""RegionYolo-1 and ReorgYolo-2: shapes as OpenVINO infers them (static, dynamic, interval dims, dynamic rank, the
flattened axes), refusals naming the layer and port, values against the CPU plugin (neither op has a
``Node.evaluate``): ReorgYolo bit for bit for every element type, RegionYolo within 8 eps(f32) absolute (its
outputs lie in [0, 1] where transformed; copied channels exactly), and seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset2  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.ops.detection.yolo import OPS  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

F32_EPS = float(np.finfo(np.float32).eps)


def _region(tmp_path, shape, *, classes=2, coords=4, num=3, softmax=True, mask=(0, 1), axis=1, end_axis=3,
            et=ov.Type.f32, name="model"):
    p = opset1.parameter(ov.PartialShape(shape) if shape != "..." else ov.PartialShape.dynamic(), et, name="x")
    node = opset1.region_yolo(p, coords, classes, num, softmax, list(mask), axis, end_axis, [10.0, 13.0, 16.0, 30.0])
    return write_ir(node, [p], tmp_path, name), node


def _reorg(tmp_path, shape, stride=2, et=ov.Type.f32, name="model"):
    p = opset2.parameter(ov.PartialShape(shape) if shape != "..." else ov.PartialShape.dynamic(), et, name="x")
    node = opset2.reorg_yolo(p, [stride])
    return write_ir(node, [p], tmp_path, name), node


# -- shapes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [[2, 21, 3, 4], [2, 21, -1, 3], [2, 21, (2, 4), 3], [-1, -1, -1, -1], "...",
                                   [1, (10, 30), 13, 13]])
@pytest.mark.parametrize("softmax, axis, end_axis", [(True, 1, 3), (True, 0, 1), (True, 2, 3), (True, -3, -1),
                                                     (True, 3, 1), (False, 1, 3)])
def test_region_shapes_as_openvino_infers_them(shape, softmax, axis, end_axis, tmp_path):
    xml, node = _region(tmp_path, shape, softmax=softmax, axis=axis, end_axis=end_axis)
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("shape", [[2, 8, 4, 6], [1, -1, 4, 6], [1, 8, -1, (4, 9)], [-1, (4, 10), (2, 3), 6], "...",
                                   [1, 4, 0, 2]])
def test_reorg_shapes_as_openvino_infers_them(shape, tmp_path):
    xml, node = _reorg(tmp_path, shape)
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("et", ["f16", "bf16", "f64"])
def test_region_element_types_infer(et, tmp_path):
    xml, _ = _region(tmp_path, [1, 21, 2, 2], et=getattr(ov.Type, et))
    check_inference(xml)


def _built(kind, shape="1,21,2,2", et="f32", attrs=None, out="1,84"):
    b = IRBuilder()
    x = b.parameter("x", et, shape)
    layer_attrs = ({"coords": 4, "classes": 2, "num": 3, "do_softmax": "true", "mask": "0,1", "axis": 1,
                    "end_axis": 3} if kind == "RegionYolo" else {"stride": 2})
    layer_attrs.update(attrs or {})
    version = "opset1" if kind == "RegionYolo" else "opset2"
    b.result(b.layer(kind, version, [x], attrs=layer_attrs, out_specs=[("FP32", out)]))
    return b.build()[0]


@pytest.mark.parametrize("kind, kwargs, error, what", [
    ("RegionYolo", {"shape": "1,21,2"}, InferenceError, "must be 4-D"),
    ("RegionYolo", {"et": "i32"}, InferenceError, "floating-point"),
    ("RegionYolo", {"shape": "1,20,2,2"}, InferenceError, "21 channels|= 21"),
    ("RegionYolo", {"attrs": {"do_softmax": "false", "mask": "0,1,2,3"}}, InferenceError, "at least"),
    ("RegionYolo", {"attrs": {"axis": 4}}, InferenceError, "axis=4"),
    ("RegionYolo", {"attrs": {"classes": -1}}, InferenceError, "classes=-1"),
    ("RegionYolo", {"attrs": {"do_softmax": "perhaps"}}, IRError, "do_softmax"),
    ("ReorgYolo", {"shape": "1,8,4"}, InferenceError, "must be 4-D"),
    ("ReorgYolo", {"shape": "1,3,4,4"}, InferenceError, "at least stride"),
    ("ReorgYolo", {"shape": "1,6,4,4"}, InferenceError, "multiple of stride"),
    ("ReorgYolo", {"shape": "1,8,5,4"}, InferenceError, "divisible"),
    ("ReorgYolo", {"attrs": {"stride": 0}}, InferenceError, "stride=0"),
    ("ReorgYolo", {"attrs": {"stride": "x"}}, IRError, "stride"),
])
def test_bad_models_name_the_layer(kind, kwargs, error, what):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_built(kind, **kwargs))
    assert kind in str(info.value)
    if "shape" in kwargs or "et" in kwargs:
        assert "(data)" in str(info.value)


def test_channels_checked_at_run_when_dynamic(tmp_path):
    xml, _ = _region(tmp_path, [1, -1, 2, 2])
    with pytest.raises(InputError, match="21") as info:
        ir_runner.load(str(xml)).run({"x": np.zeros((1, 20, 2, 2), np.float32)})
    assert "RegionYolo" in str(info.value) and "data" in str(info.value)
    xml, _ = _reorg(tmp_path, [1, -1, 4, 4], name="reorg")
    with pytest.raises(InputError, match="multiple of stride"):
        ir_runner.load(str(xml)).run({"x": np.zeros((1, 6, 4, 4), np.float32)})


# -- values ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("et", ["f32", "f16", "i8", "u8", "i32", "i64", "u16"])
def test_reorg_bit_for_bit(et, tmp_path):
    xml, _ = _reorg(tmp_path, [2, 8, 4, 6], et=getattr(ov.Type, et))
    data = np.arange(2 * 8 * 4 * 6).reshape(2, 8, 4, 6).astype(np.dtype(getattr(ov.Type, et).to_dtype()))
    check_run(xml, {"x": data}, oracle="cpu")


def test_reorg_op_reference_case(tmp_path):
    """[1, 8, 4, 4] of 0..127, stride 2 -> [1, 32, 2, 2]; its first values by the reference's index formula (the
    input read as [1, 2, 8, 8], the output written as [1, 8, 4, 4]: rows 0, 2 and even columns of channel 0)."""
    xml, _ = _reorg(tmp_path, [1, 8, 4, 4])
    got = list(check_run(xml, {"x": np.arange(128, dtype=np.float32).reshape(1, 8, 4, 4)}, oracle="cpu").values())[0]
    assert got[0, :2].reshape(-1).tolist() == [0, 2, 4, 6, 16, 18, 20, 22]


@pytest.mark.parametrize("softmax, classes, mask", [(True, 2, ()), (True, 20, ()), (False, 2, (0, 2)),
                                                    (False, 80, (0, 1, 2)), (True, 0, ()), (False, 3, (1,))])
@pytest.mark.parametrize("et", ["f32", "f16"])
def test_region_against_the_cpu_plugin(softmax, classes, mask, et, tmp_path):
    rng = np.random.default_rng(classes)
    shape = [2, 3 * (classes + 5), 4, 5]
    ov_type = getattr(ov.Type, et)
    xml, _ = _region(tmp_path, shape, classes=classes, softmax=softmax, mask=mask, et=ov_type)
    data = (rng.standard_normal(shape) * 4).astype(ov_type.to_dtype())
    atol = 8 * F32_EPS if et == "f32" else 2.0**-11
    check_run(xml, {"x": data}, oracle="cpu", rtol=0, atol=atol)


def test_region_v3_reads_the_input_as_the_plugin_does(tmp_path):
    """More channels than the mask keeps, batch 2: the regions are read from the flat input in blocks of the
    output's size per image (as the CPU plugin, and the reference's indices), not per input image."""
    xml, _ = _region(tmp_path, [2, 21, 2, 2], softmax=False, mask=(0, 2))
    data = np.random.default_rng(3).standard_normal((2, 21, 2, 2)).astype(np.float32)
    got = check_run(xml, {"x": data}, oracle="cpu", rtol=0, atol=8 * F32_EPS)
    out = list(got.values())[0]
    assert out[1, 2, 0, 0] == data.reshape(-1)[14 * 4 + 2 * 4]  # a copied w channel of image 1


def test_region_logistic_saturates_without_nan(tmp_path):
    xml, _ = _region(tmp_path, [1, 21, 1, 2])
    data = np.zeros((1, 21, 1, 2), np.float32)
    data[0, :, 0, 0] = 1e30
    data[0, :, 0, 1] = -1e30
    check_run(xml, {"x": data}, oracle="cpu", rtol=0, atol=8 * F32_EPS)


def test_batch_rules():
    region, reorg = OPS
    params = {"do_softmax": True, "axis": 1, "end_axis": 3}
    assert region.batch(params, [], [], [0]) == [0]
    assert region.batch(params, [], [], [None]) == [None]
    assert "flattens" in region.batch({**params, "axis": 0}, [], [], [0])
    assert "first axis" in region.batch(params, [], [], [2])
    assert reorg.batch({"stride": 2}, [], [], [0]) == [0]
    assert "only N" in reorg.batch({"stride": 2}, [], [], [1])


def test_batched_runs_agree(tmp_path):
    xml, _ = _region(tmp_path, [-1, 21, 3, 3])
    data = np.random.default_rng(4).standard_normal((3, 21, 3, 3)).astype(np.float32)
    model = ir_runner.load(str(xml))
    whole = list(model.run({"x": data}).values())[0]
    parts = [list(model.run({"x": data[i:i + 1]}).values())[0] for i in range(3)]
    assert np.array_equal(whole, np.concatenate(parts))


# -- seeded differential ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(24))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    n, h, w = (int(v) for v in rng.integers(1, [3, 7, 7], endpoint=True))
    if seed % 2:
        stride = int(rng.integers(1, 4))
        c = stride * stride * int(rng.integers(1, 4))
        et = (ov.Type.f32, ov.Type.i32, ov.Type.u8, ov.Type.f16)[int(rng.integers(4))]
        xml, _ = _reorg(tmp_path, [n, c, h * stride, w * stride], stride, et)
        check_inference(xml)
        data = (rng.standard_normal((n, c, h * stride, w * stride)) * 50).astype(et.to_dtype())
        check_run(xml, {"x": data}, oracle="cpu")
        return
    classes, coords, num = int(rng.integers(0, 12)), int(rng.choice([4, 2, 1])), int(rng.integers(1, 5))
    softmax = bool(rng.integers(2))
    mask = tuple(int(v) for v in rng.choice(num, int(rng.integers(1, num + 1)), replace=False))
    axis, end_axis = (int(v) for v in rng.integers(0, 4, 2))
    xml, _ = _region(tmp_path, [n, num * (classes + coords + 1), h, w], classes=classes, coords=coords, num=num,
                     softmax=softmax, mask=mask, axis=axis, end_axis=end_axis)
    check_inference(xml)
    data = (rng.standard_normal((n, num * (classes + coords + 1), h, w)) * 3).astype(np.float32)
    check_run(xml, {"x": data}, oracle="cpu", rtol=0, atol=8 * F32_EPS)


@pytest.mark.parametrize("coords", [0, 1])
def test_region_coords_below_two_apply_the_logistic_twice_where_entries_overlap(coords, tmp_path):
    """Channels 0, 1 get the logistic function, then channels ``coords`` onwards: an overlap gets it twice (as the
    CPU plugin and the reference compute it)."""
    xml, _ = _region(tmp_path, [1, 2 * (coords + 4), 2, 2], classes=3, coords=coords, num=2, softmax=False, mask=(0, 1))
    data = np.random.default_rng(coords).standard_normal((1, 2 * (coords + 4), 2, 2)).astype(np.float32)
    out = list(check_run(xml, {"x": data}, oracle="cpu", rtol=0, atol=8 * F32_EPS).values())[0]
    once = 1 / (1 + np.exp(-data[0, coords].astype(np.float64)))
    np.testing.assert_allclose(out[0, coords], 1 / (1 + np.exp(-once)), rtol=1e-6)
