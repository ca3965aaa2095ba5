"""ROIPooling-2: shapes as OpenVINO infers them (static, dynamic, interval dims, dynamic ranks), refusals naming the
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
from ir_runner.ops.roi_pool import OPS  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import (  # noqa: E402
    assert_close,
    assert_same_bits,
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
    assert_same_bits("out", got, _bilinear_loop(feeds["data"], feeds["rois"], pooled))
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
        assert_same_bits(name, chunked[name].compute(), value)
