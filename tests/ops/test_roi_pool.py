"""ROIPooling-2 and PSROIPooling-1 (bit for bit against the CPU plugin, whose semantics it follows): shapes as
OpenVINO infers them (static, dynamic, interval dims, dynamic ranks), refusals naming the
layer and port, values (no Node.evaluate in the wheel) bit for bit against the CPU plugin for ``max`` and against a
loop written from OpenVINO's reference for ``bilinear`` (the CPU plugin within a bound), corners (boxes outside
the image, empty bins, bad batch ids), the batch rule, and seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset2  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.ops.detection.roi_pool import OPS  # noqa: E402
from tests.helpers.bits import assert_same_bits  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import (  # noqa: E402
    assert_close,
    check_inference,
    check_output_shapes,
    check_run,
    cpu_outputs,
    write_ir,
)

D = ov.Dimension
F32_EPS = float(np.finfo(np.float32).eps)


def _shape(dims):
    return ov.PartialShape.dynamic() if dims is None else ov.PartialShape(dims)


def _model(tmp_path, data_shape, rois_shape, *, et=ov.Type.f32, pooled=(2, 2), scale=1.0, method="max",
           name="model"):
    data = opset2.parameter(_shape(data_shape), et, name="data")
    rois = opset2.parameter(_shape(rois_shape), et, name="rois")
    node = opset2.roi_pooling(data, rois, list(pooled), scale, method)
    return write_ir(node, [data, rois], tmp_path, name), node


@pytest.mark.parametrize("method", ["max", "bilinear"])
@pytest.mark.parametrize("shapes", [([1, 3, 6, 6], [4, 5]), ([-1, 3, -1, -1], [-1, 5]), ([D(1, 2), D(2, 5), 4, 4],
                                    [D(2, 9), -1]), (None, [3, 5]), ([2, 4, 5, 5], None), (None, None)], ids=str)
def test_shapes_as_openvino_infers_them(shapes, method, tmp_path):
    path, node = _model(tmp_path, *shapes, pooled=(3, 2), method=method)
    check_inference(path)
    check_output_shapes(path, node)


def _ir(shapes=("1,3,6,6", "2,5"), types=("f32", "f32"), attrs=None):
    b = IRBuilder()
    data, rois = (b.parameter(n, t, s) for n, t, s in zip(("data", "rois"), types, shapes))
    attrs = {"pooled_h": "2", "pooled_w": "2", "spatial_scale": "1", "method": "max", **(attrs or {})}
    attrs = {k: v for k, v in attrs.items() if v is not None}
    b.result(b.layer("ROIPooling", "opset2", [data, rois], attrs=attrs, out_specs=[(types[0].upper(), [2, 3, 2, 2])]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, what, port", [
    ({"shapes": ("3,6,6", "2,5")}, "data must be 4-D", "data"),
    ({"shapes": ("1,3,6,6", "2,4")}, r"rois must be 2-D \[R, 5\]", "rois"),
    ({"shapes": ("1,3,6,6", "2,5,1")}, r"rois must be 2-D \[R, 5\]", "rois"),
    ({"types": ("f32", "f16")}, "same element type", "rois"),
    ({"types": ("i32", "i32")}, "must be f16, bf16, f32 or f64", "data"),
])
def test_bad_inputs_name_layer_and_port(kwargs, what, port):
    with pytest.raises(InferenceError, match=what) as info:
        ir_runner.load(_ir(**kwargs))
    assert "ROIPooling-2" in str(info.value) and f"({port})" in str(info.value)


@pytest.mark.parametrize("attrs, what", [
    ({"pooled_h": "0"}, "positive"), ({"pooled_w": "-2"}, "positive"), ({"spatial_scale": "0"}, "positive normal"),
    ({"spatial_scale": "-1"}, "positive normal"), ({"spatial_scale": "nan"}, "positive normal"),
    ({"method": "avg"}, "method"),
])
def test_bad_attributes_name_the_layer(attrs, what):
    with pytest.raises(IRError, match=what) as info:
        ir_runner.load(_ir(attrs=attrs))
    assert "ROIPooling-2" in str(info.value)


def test_output_size_alone_is_read():
    """IRs may carry only ``output_size`` (OpenVINO writes it with pooled_h and pooled_w)."""
    xml = _ir(attrs={"pooled_h": None, "pooled_w": None, "output_size": "2, 2"})
    assert b"pooled_h" not in xml and ir_runner.validate(xml).ok
    with pytest.raises(IRError, match="pooled_h=0"):
        ir_runner.load(_ir(attrs={"pooled_h": None, "pooled_w": None}))


def _feeds(rng, n, c, h, w, r, method, scale, et=np.float32):
    data = rng.standard_normal((n, c, h, w)).astype(et)
    if method == "max":
        corners = np.round(rng.uniform(-3, max(h, w) / scale + 3, (r, 4)) * 2) / 2  # (halves: round's ties)
    else:
        corners = rng.uniform(-0.2, 1.2, (r, 4))
    rois = np.concatenate([rng.integers(0, n, (r, 1)), corners], axis=1).astype(et)
    return {"data": data, "rois": rois}


def _bilinear_loop(data, rois, pooled):
    """OpenVINO's reference ``bilinear`` loop, written anew in plain Python with f32 scalars."""
    f = np.float32
    _, c, h, w = data.shape
    ph, pw = pooled
    out = np.zeros((rois.shape[0], c, ph, pw), np.float32)
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        b = int(b)
        rh, rw = (y2 - y1) * f(h - 1), (x2 - x1) * f(w - 1)
        sh = rh / f(ph - 1) if ph > 1 else f(0)
        sw = rw / f(pw - 1) if pw > 1 else f(0)
        for i in range(ph):
            for j in range(pw):
                if ph > 1:
                    y = f(h - 1) * y2 if i == ph - 1 else f(i) * sh + y1 * f(h - 1)
                else:
                    y = f(0.5 * float(y1 + y2) * (h - 1))
                if pw > 1:
                    x = f(w - 1) * x2 if j == pw - 1 else f(j) * sw + x1 * f(w - 1)
                else:
                    x = f(0.5 * float(x1 + x2) * (w - 1))
                if y < 0 or y > f(h - 1) or x < 0 or x > f(w - 1):
                    continue
                t, lo = int(np.floor(y)), int(np.floor(x))
                bo, ri = min(int(np.ceil(y)), h - 1), min(int(np.ceil(x)), w - 1)
                for ch in range(c):
                    tl, tr = data[b, ch, t, lo], data[b, ch, t, ri]
                    bl, br = data[b, ch, bo, lo], data[b, ch, bo, ri]
                    top = tl + (tr - tl) * (x - f(lo))
                    bottom = bl + (br - bl) * (x - f(lo))
                    out[r, ch, i, j] = top + (bottom - top) * (y - f(t))
    return out


@pytest.mark.parametrize("seed", range(16))
def test_max_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    n, c, h, w = (int(v) for v in rng.integers(1, [3, 4, 12, 12], endpoint=True))
    r, pooled = int(rng.integers(1, 7)), tuple(int(v) for v in rng.integers(1, 5, 2))
    scale = float(rng.choice([1.0, 0.5, 0.0625, 0.3]))
    dynamic = seed % 2 == 1
    path, _ = _model(tmp_path, [-1, c, -1, -1] if dynamic else [n, c, h, w], [-1, 5] if dynamic else [r, 5],
                     pooled=pooled, scale=scale)
    check_inference(path)
    check_run(path, _feeds(rng, n, c, h, w, r, "max", scale), oracle="cpu")


@pytest.mark.parametrize("seed", range(16))
def test_bilinear_random_against_the_reference_loop_and_the_cpu_plugin(seed, tmp_path):
    """Bit for bit against the reference loop; the CPU plugin rounds differently (seen: 1 ULP of the inputs'
    scale): within 4 eps(f32) times the largest magnitude of the data."""
    rng = np.random.default_rng(100 + seed)
    n, c, h, w = (int(v) for v in rng.integers(1, [3, 4, 12, 12], endpoint=True))
    r, pooled = int(rng.integers(1, 7)), tuple(int(v) for v in rng.integers(1, 5, 2))
    path, _ = _model(tmp_path, [n, c, h, w], [r, 5], pooled=pooled, method="bilinear")
    feeds = _feeds(rng, n, c, h, w, r, "bilinear", 1.0)
    got = list(ir_runner.load(str(path)).run(feeds).values())[0]
    assert_same_bits(got, _bilinear_loop(feeds["data"], feeds["rois"], pooled), "out")
    bound = 4 * F32_EPS * float(np.abs(feeds["data"]).max())
    assert_close("out", got, cpu_outputs(path, feeds)[0], 0.0, bound)


def test_max_corners(tmp_path):
    """A box beyond the image (empty bins give 0), a reversed box (forced to 1 x 1), ties of round (2.5 -> 3,
    -0.5 -> -1), a box covering everything, and the last image."""
    rois = np.array([[0, 20, 20, 30, 30], [1, 3, 3, 1, 1], [0, 2.5, -0.5, 4.5, 3.5], [1, -5, -5, 50, 50],
                     [1, 0, 0, 0, 0]], np.float32)
    data = np.random.default_rng(0).standard_normal((2, 3, 6, 7)).astype(np.float32)
    path, _ = _model(tmp_path, [2, 3, 6, 7], [5, 5], pooled=(3, 2))
    got = check_run(path, {"data": data, "rois": rois}, oracle="cpu")
    out = list(got.values())[0]
    assert (out[0] == 0).all() and out[3].max() == data[1].max()


@pytest.mark.parametrize("where", [0, 5, 15, (0, 15), "all"])
def test_max_nan_as_the_cpu_plugin(where, tmp_path):
    """A NaN first in the bin wins, later ones never do (a NaN last: the reference would give NaN)."""
    data = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    data.reshape(-1)[slice(None) if where == "all" else list(np.atleast_1d(where))] = np.nan
    path, _ = _model(tmp_path, [1, 1, 4, 4], [2, 5], pooled=(1, 1))
    rois = np.array([[0, 0, 0, 3, 3], [0, 1, 1, 3, 3]], np.float32)
    check_run(path, {"data": data, "rois": rois}, oracle="cpu")


@pytest.mark.parametrize("bad", [2.0, -1.0, np.nan])
def test_batch_id_outside_the_images_is_an_input_error(bad, tmp_path):
    path, _ = _model(tmp_path, [2, 3, 6, 6], [2, 5])
    rois = np.array([[0, 0, 0, 2, 2], [bad, 0, 0, 2, 2]], np.float32)
    with pytest.raises(InputError, match=r"rois\[1, 0\]") as info:
        ir_runner.load(str(path)).run({"data": np.ones((2, 3, 6, 6), np.float32), "rois": rois})
    assert "ROIPooling-2" in str(info.value) and "rois" in str(info.value)


def test_fractional_batch_ids_are_truncated(tmp_path):
    path, _ = _model(tmp_path, [2, 1, 4, 4], [2, 5])
    rois = np.array([[1.9, 0, 0, 3, 3], [0.7, 0, 0, 3, 3]], np.float32)
    data = np.stack([np.zeros((1, 4, 4)), np.ones((1, 4, 4))]).astype(np.float32)
    check_run(path, {"data": data, "rois": rois}, oracle="cpu")


@pytest.mark.parametrize("method", ["max", "bilinear"])
def test_f16_against_the_cpu_plugin(method, tmp_path):
    """f16: the box arithmetic in f16 (as ov::float16), values moved (max) or interpolated (bilinear, bounded)."""
    rng = np.random.default_rng(7)
    path, _ = _model(tmp_path, [2, 3, 8, 8], [6, 5], et=ov.Type.f16, pooled=(3, 3), method=method, scale=0.5)
    feeds = _feeds(rng, 2, 3, 8, 8, 6, method, 0.5, np.float16)
    if method == "max":
        check_run(path, feeds, oracle="cpu")
    else:
        check_run(path, feeds, oracle="cpu", rtol=0.0, atol=8 * float(np.finfo(np.float16).eps) * 4)


def test_empty_inputs(tmp_path):
    for method in ("max", "bilinear"):
        path, _ = _model(tmp_path, [-1, 2, -1, -1], [-1, 5], method=method, name=method)
        model = ir_runner.load(str(path))
        out = list(model.run({"data": np.ones((1, 2, 0, 3), np.float32),
                              "rois": np.array([[0, 0, 0, 1, 1]], np.float32)}).values())[0]
        assert out.shape == (1, 2, 2, 2) and (out == 0).all()
        out = list(model.run({"data": np.ones((1, 2, 3, 3), np.float32),
                              "rois": np.zeros((0, 5), np.float32)}).values())[0]
        assert out.shape == (0, 2, 2, 2)


def test_batch_rule_and_chunked_run(tmp_path):
    op = OPS[0]
    assert op.batch({}, [], [None], [None, 0]) == [0]
    assert op.batch({}, [], [None], [None, None]) == [None]
    assert "only rois" in op.batch({}, [], [None], [0, 0])
    ird = pytest.importorskip("ir_runner.dask")
    path, _ = _model(tmp_path, [2, 3, 8, 8], [-1, 5], pooled=(2, 3))
    feeds = _feeds(np.random.default_rng(3), 2, 3, 8, 8, 9, "max", 1.0)
    model = ir_runner.load(str(path))
    chunked = ird.run(model, feeds, batch_axis={"rois": 0}, chunk=4)
    for name, value in model.run(feeds).items():
        assert_same_bits(chunked[name].compute(), value, name)


# -- PSROIPooling-1 ----------------------------------------------------------------------------------------------

def _ps_model(tmp_path, data_shape, rois_shape, *, et=ov.Type.f32, output_dim=2, group=2, scale=1.0, bins=(1, 1),
              mode="average", name="ps"):
    from openvino import opset1
    data = opset1.parameter(_shape(data_shape), et, name="data")
    rois = opset1.parameter(_shape(rois_shape), et, name="rois")
    node = opset1.psroi_pooling(data, rois, output_dim, group, scale, bins[1], bins[0], mode)
    return write_ir(node, [data, rois], tmp_path, name), node


@pytest.mark.parametrize("mode, channels", [("average", 8), ("bilinear", 12)])
@pytest.mark.parametrize("shapes", [([1, None, 6, 6], [4, 5]), ([-1, None, -1, -1], [-1, 5]),
                                    ([D(1, 2), -1, 4, 4], [D(2, 9), -1]), (None, [3, 5]), ([2, None, 5, 5], None)],
                         ids=str)
def test_ps_shapes_as_openvino_infers_them(shapes, mode, channels, tmp_path):
    data_shape = None if shapes[0] is None else [channels if d is None else d for d in shapes[0]]
    path, node = _ps_model(tmp_path, data_shape, shapes[1], mode=mode, bins=(2, 3))
    check_inference(path)
    check_output_shapes(path, node)


def _ps_ir(shapes=("1,8,6,6", "2,5"), types=("f32", "f32"), attrs=None):
    b = IRBuilder()
    data, rois = (b.parameter(n, t, s) for n, t, s in zip(("data", "rois"), types, shapes))
    attrs = {"output_dim": "2", "group_size": "2", "spatial_scale": "1", "mode": "average", **(attrs or {})}
    b.result(b.layer("PSROIPooling", "opset1", [data, rois], attrs={k: v for k, v in attrs.items() if v is not None},
                     out_specs=[(types[0].upper(), [2, 2, 2, 2])]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, error, what", [
    ({"shapes": ("1,9,6,6", "2,5")}, InferenceError, "channels"),
    ({"shapes": ("1,8,6,6", "2,4")}, InferenceError, r"\[R, 5\]"),
    ({"types": ("f32", "f16")}, InferenceError, "same element type"),
    ({"attrs": {"group_size": "0"}}, IRError, "group_size"),
    ({"attrs": {"mode": "bilinear", "spatial_bins_x": "0"}}, IRError, "spatial_bins_x"),
    ({"attrs": {"mode": "max"}}, IRError, "mode"),
    ({"attrs": {"mode": None}}, IRError, "mode"),
    ({"attrs": {"spatial_scale": "-0.5"}}, IRError, "spatial_scale"),
])
def test_ps_bad_layers_name_the_layer(kwargs, error, what):
    with pytest.raises(error, match=what) as info:
        ir_runner.load(_ps_ir(**kwargs))
    assert "PSROIPooling-1" in str(info.value)


def _ps_feeds(rng, n, c, h, w, r, mode, scale, et=np.float32):
    data = rng.standard_normal((n, c, h, w)).astype(et)
    if mode == "average":  # (boxes partly beyond the image included)
        corners = rng.uniform(-3, [w / scale + 3, h / scale + 3] * 2, (r, 4))
    else:  # normalised boxes, some samples outside [0, 1]
        corners = rng.uniform(-0.2, 1.2, (r, 4)) / scale
    return {"data": data, "rois": np.concatenate([rng.integers(0, n, (r, 1)), corners], axis=1).astype(et)}


@pytest.mark.parametrize("seed", range(24))
def test_ps_random_against_the_cpu_plugin(seed, tmp_path):
    """Bit for bit against the CPU plugin, boxes beyond the image and reversed boxes included."""
    rng = np.random.default_rng(seed)
    mode = ("average", "bilinear")[seed % 2]
    dim, group = (int(v) for v in rng.integers(1, 4, 2))
    bins = tuple(int(v) for v in rng.integers(1, 4, 2))
    c = dim * (group * group if mode == "average" else bins[0] * bins[1])
    n, h, w = (int(v) for v in rng.integers(1, [3, 12, 12], endpoint=True))
    r, scale = int(rng.integers(1, 6)), float(rng.choice([1.0, 0.5, 0.25]))
    attrs = dict(output_dim=dim, group=group, scale=scale, bins=bins, mode=mode)
    path, _ = _ps_model(tmp_path, [n, c, h, w], [r, 5], **attrs)
    check_inference(path)
    feeds = _ps_feeds(rng, n, c, h, w, r, mode, scale)
    got = check_run(path, feeds, oracle="cpu")
    dynamic, _ = _ps_model(tmp_path, [-1, c, -1, -1], [-1, 5], name="dynamic", **attrs)  # (the CPU plugin: static only)
    check_inference(dynamic)
    for name, value in ir_runner.load(str(dynamic)).run(feeds).items():
        assert_same_bits(value, list(got.values())[0], name)


@pytest.mark.parametrize("mode", ["average", "bilinear"])
def test_ps_f16_against_the_cpu_plugin(mode, tmp_path):
    """f16: computed in f32 and rounded once, as the CPU plugin."""
    rng = np.random.default_rng(11)
    c = 3 * 4
    path, _ = _ps_model(tmp_path, [2, c, 9, 7], [5, 5], et=ov.Type.f16, output_dim=3, group=2, bins=(2, 2),
                        mode=mode, scale=0.5)
    check_run(path, _ps_feeds(rng, 2, c, 9, 7, 5, mode, 0.5, np.float16), oracle="cpu")


def test_ps_average_by_hand(tmp_path):
    """One box over a 4 x 4 image, group 2: each output is the mean of its own channel's quarter."""
    data = np.arange(4 * 16, dtype=np.float32).reshape(1, 4, 4, 4)
    path, _ = _ps_model(tmp_path, [1, 4, 4, 4], [1, 5], output_dim=1, group=2)
    got = list(check_run(path, {"data": data, "rois": np.array([[0, 0, 0, 3, 3]], np.float32)},
                         oracle="cpu").values())[0]
    want = [[data[0, 0, :2, :2].mean(), data[0, 1, :2, 2:].mean()],
            [data[0, 2, 2:, :2].mean(), data[0, 3, 2:, 2:].mean()]]
    np.testing.assert_array_equal(got[0, 0], np.array(want, np.float32))


def test_ps_batch_rule_and_bad_batch_id(tmp_path):
    op = next(op for op in OPS if op.type == "PSROIPooling")
    assert op.batch({}, [], [None], [None, 0]) == [0]
    assert isinstance(op.batch({}, [], [None], [0, None]), str)
    path, _ = _ps_model(tmp_path, [1, 8, 6, 6], [1, 5])
    with pytest.raises(InputError, match=r"rois\[0, 0\]"):
        ir_runner.load(str(path)).run({"data": np.ones((1, 8, 6, 6), np.float32),
                                       "rois": np.array([[1, 0, 0, 2, 2]], np.float32)})
