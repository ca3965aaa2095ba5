"""NV12toRGB/BGR-8 and I420toRGB/BGR-8: shapes inferred as OpenVINO declares them (static, dynamic, interval
dims, dynamic rank; one, two and three planes), values bit for bit against OpenVINO's CPU plugin (the
operations have no Node.evaluate) for u8 (every (U, V) pair, rounding halves), f32, f16, bf16 and f64 (NaN,
infinities, values outside [0, 255]), the IR PrePostProcessor writes for NV12 camera frames, errors naming
the layer and port, the batch rule and a chunked run, and a seeded differential generator."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset8  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, UnsupportedError  # noqa: E402
from ir_runner.ops.image.color import OPS  # noqa: E402
from tests.helpers.cpu_features import require as require_cpu  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

D = ov.Dimension
TYPES = {"u8": (ov.Type.u8, np.uint8), "f32": (ov.Type.f32, np.float32), "f16": (ov.Type.f16, np.float16),
         "bf16": (ov.Type.bf16, ml_dtypes.bfloat16), "f64": (ov.Type.f64, np.float64)}
CONVERT = {("nv12", "rgb"): opset8.nv12_to_rgb, ("nv12", "bgr"): opset8.nv12_to_bgr,
           ("i420", "rgb"): opset8.i420_to_rgb, ("i420", "bgr"): opset8.i420_to_bgr}
PLANES = {"nv12": ("y", "uv"), "i420": ("y", "u", "v")}


def _shape(dims):
    return ov.PartialShape.dynamic() if dims is None else ov.PartialShape([d if isinstance(d, D) else D(d)
                                                                             for d in dims])


def _model(tmp_path, family, order, shapes, et="u8", name="model"):
    """A model converting planes of ``shapes`` (one shape: the single plane)."""
    names = ("frame",) if len(shapes) == 1 else PLANES[family]
    params = [opset8.parameter(_shape(s), TYPES[et][0], name=n) for n, s in zip(names, shapes)]
    node = CONVERT[family, order](*params)
    return write_ir(node, params, tmp_path, name), node


def _values(rng, shape, et):
    dtype = TYPES[et][1]
    if et == "u8":
        return rng.integers(0, 256, shape).astype(dtype)
    return (rng.random(shape) * 320 - 30).astype(dtype)


def _feeds(rng, family, n, h, w, planes, et):
    if planes == 1:
        return {"frame": _values(rng, (n, h * 3 // 2, w, 1), et)}
    if family == "nv12":
        return {"y": _values(rng, (n, h, w, 1), et), "uv": _values(rng, (n, h // 2, w // 2, 2), et)}
    return {"y": _values(rng, (n, h, w, 1), et), "u": _values(rng, (n, h // 2, w // 2, 1), et),
            "v": _values(rng, (n, h // 2, w // 2, 1), et)}


def _plane_shapes(family, n, h, w, planes):
    if planes == 1:
        return ([n, h * 3 // 2, w, 1],)
    chroma = [n, h // 2, w // 2, 2 if family == "nv12" else 1]
    return ([n, h, w, 1], chroma) if family == "nv12" else ([n, h, w, 1], chroma, chroma)


# -- shapes (OpenVINO's type_prop cases) ---------------------------------------------------------------------

SHAPE_CASES = [
    # family, plane shapes
    ("nv12", ([2, 480, 640, 1],)),
    ("nv12", ([2, -1, -1, 1],)),
    ("nv12", ([-1, D(3, 9), D(4, 10), 1],)),
    ("nv12", ([1, D(4, 7), 4, -1],)),
    ("nv12", ([1, D(1, -1), 4, 1],)),
    ("nv12", (None,)),
    ("nv12", ([1, 480, 640, 1], [1, 240, 320, 2])),
    ("nv12", ([-1, -1, 4, 1], [1, D(3, -1), -1, 2])),
    ("nv12", ([1, D(1, 3), 4, 1], [-1, -1, 2, -1])),
    ("nv12", (None, [2, 3, 4, 2])),
    ("nv12", ([1, -1, -1, 1], None)),
    ("i420", ([3, 24, 8, 1],)),
    ("i420", ([-1, D(6, 30), -1, 1],)),
    ("i420", ([1, 480, 640, 1], [1, 240, 320, 1], [1, 240, 320, 1])),
    ("i420", (None, [2, 3, -1, 1], [-1, -1, 4, 1])),
    ("i420", ([-1, -1, 8, 1], [1, D(2, 5), -1, 1], [-1, D(3, 9), 4, -1])),
    ("i420", ([1, 6, 8, 1], None, None)),
]


@pytest.mark.parametrize("family, shapes", SHAPE_CASES)
@pytest.mark.parametrize("order", ["rgb", "bgr"])
def test_shapes_as_openvino_infers_them(family, shapes, order, tmp_path):
    path, node = _model(tmp_path, family, order, shapes)
    check_inference(path)
    check_output_shapes(path, node)


def test_dynamic_element_type_takes_the_other_planes(tmp_path):
    y = opset8.parameter([1, 4, 4, 1], ov.Type.dynamic, name="y")
    uv = opset8.parameter([1, 2, 2, 2], ov.Type.f16, name="uv")
    node = opset8.nv12_to_bgr(y, uv)
    assert node.get_output_element_type(0) == ov.Type.f16
    b = IRBuilder()
    inputs = [b.parameter("y", "dynamic", "1,4,4,1"), b.parameter("uv", "f16", "1,2,2,2")]
    b.result(b.layer("NV12toBGR", "opset8", inputs, out_specs=[("FP16", [1, 4, 4, 3])]))
    model = ir_runner.load(b.build()[0])
    assert str(model.outputs[0].partial_shape) == "[1,4,4,3]"


# -- values (OpenVINO's op_reference cases and corners) ------------------------------------------------------

@pytest.mark.parametrize("family", ["nv12", "i420"])
def test_every_chroma_pair_in_u8(family, tmp_path):
    """All 65536 (U, V) pairs, each with four random Y (every rounding of halves the CPU plugin makes)."""
    rng = np.random.default_rng(7)
    pairs = np.stack(np.meshgrid(np.arange(256), np.arange(256), indexing="ij"), -1).reshape(1, 256, 256, 2)
    y = rng.integers(0, 256, (1, 512, 512, 1)).astype(np.uint8)
    if family == "nv12":
        path, _ = _model(tmp_path, family, "rgb", ([1, 512, 512, 1], [1, 256, 256, 2]))
        feeds = {"y": y, "uv": pairs.astype(np.uint8)}
    else:
        path, _ = _model(tmp_path, family, "bgr", ([1, 512, 512, 1], [1, 256, 256, 1], [1, 256, 256, 1]))
        feeds = {"y": y, "u": pairs[..., :1].astype(np.uint8), "v": pairs[..., 1:].astype(np.uint8)}
    check_run(path, feeds, oracle="cpu")


@pytest.mark.parametrize("family", ["nv12", "i420"])
def test_large_frames_in_blocks_over_threads(family, tmp_path):
    """Two 720p frames in one plane: blocks of rows cross the images' boundary and run over threads."""
    path, _ = _model(tmp_path, family, "bgr", ([2, 1080, 1280, 1],))
    check_run(path, _feeds(np.random.default_rng(9), family, 2, 720, 1280, 1, "u8"), oracle="cpu")


def test_u8_halves_round_to_even_as_the_cpu_plugin(tmp_path):
    """Y=4, V=211 gives R = 118.5 exactly in f32: the CPU plugin (and ir-run) 118, the reference kernel's
    std::round would give 119 (docs/semantics.md)."""
    path, _ = _model(tmp_path, "nv12", "rgb", ([1, 2, 2, 1], [1, 1, 1, 2]))
    feeds = {"y": np.full((1, 2, 2, 1), 4, np.uint8), "uv": np.array([128, 211], np.uint8).reshape(1, 1, 1, 2)}
    got = check_run(path, feeds, oracle="cpu")
    assert list(got.values())[0][0, 0, 0, 0] == 118


@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "f64"])
@pytest.mark.parametrize("family", ["nv12", "i420"])
def test_float_types_with_nan_infinities_and_out_of_range(et, family, tmp_path):
    if et == "bf16":
        require_cpu("bf16")
    rng = np.random.default_rng(3)
    path, _ = _model(tmp_path, family, "bgr", ([2, 12, 8, 1],), et)
    frame = _values(rng, (2, 12, 8, 1), et)
    flat = frame.reshape(-1)
    special = np.array([np.nan, np.inf, -np.inf, -1e4, 1e4, 0, 255, 128], np.float32).astype(frame.dtype)
    finite = np.array([np.nan, 3e38, -1e4, 1e4, 0, 255, 128, np.nan], np.float64)
    for start in (0, 96 + 5):  # Y rows of both images
        flat[start:start + special.size] = special
    for start in (8 * 8, 8 * 8 + 16, 96 + 8 * 8 + 2, 96 + 8 * 8 + 17):  # U, V (UV) rows of both images
        flat[start:start + special.size] = finite if et == "f64" else special  # (f64: see the next test)
    check_run(path, {"frame": frame}, oracle="cpu")


def test_f64_nan_from_opposite_infinities_differs_in_the_cpu_plugin(tmp_path):
    """A channel whose sum is inf - inf (NaN made inside the conversion): the CPU plugin gives 0 for f32, f16
    and bf16 (as ir-run, for every type) but 255 for f64; a NaN input gives 0 for every type."""
    from tests.helpers.optest import cpu_outputs

    frame = np.array([71, 71, 71, 71, np.inf, -np.inf], np.float64).reshape(1, 3, 2, 1)
    got = {}
    for et in ("f32", "f64"):
        path, _ = _model(tmp_path, "nv12", "rgb", ([1, 3, 2, 1],), et, name=et)
        feeds = {"frame": frame.astype(TYPES[et][1])}
        got[et] = (cpu_outputs(path, feeds)[0][0, 0, 0].tolist(),
                   list(ir_runner.load(str(path)).run(feeds).values())[0][0, 0, 0].tolist())
    assert got == {"f32": ([0, 0, 255], [0, 0, 255]), "f64": ([0, 255, 255], [0, 0, 255])}


@pytest.mark.parametrize("family", ["nv12", "i420"])
@pytest.mark.parametrize("planes", [1, 2])
def test_dynamic_dims_planned_per_shape(family, planes, tmp_path):
    count = 1 if planes == 1 else len(PLANES[family])
    path, _ = _model(tmp_path, family, "rgb", ([-1, -1, -1, 1],) + ([-1, -1, -1, -1],) * (count - 1))
    check_inference(path)
    rng = np.random.default_rng(planes)
    model = ir_runner.load(str(path))
    for n, h, w in ((1, 2, 2), (2, 6, 10), (1, 0, 4), (0, 4, 4)):
        feeds = _feeds(rng, family, n, h, w, count, "u8")
        got = list(model.run(feeds).values())[0]
        assert got.shape == (n, h, w, 3)
        if n and h:
            check_run(path, feeds, oracle="cpu")


def test_preprocessing_ir_for_nv12_camera_frames(tmp_path):
    """The IR PrePostProcessor writes for a model taking BGR f32 NCHW from NV12 u8 frames in two planes."""
    from openvino.preprocess import ColorFormat, PrePostProcessor

    data = opset8.parameter([1, 3, 8, 12], ov.Type.f32, name="image")
    model = ov.Model([opset8.relu(data)], [data], "net")
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_element_type(ov.Type.u8).set_color_format(ColorFormat.NV12_TWO_PLANES, ["y", "uv"])
    ppp.input().tensor().set_spatial_dynamic_shape()
    ppp.input().preprocess().convert_color(ColorFormat.BGR).convert_element_type(ov.Type.f32).resize(
        ov.preprocess.ResizeAlgorithm.RESIZE_NEAREST)
    ppp.input().model().set_layout(ov.Layout("NCHW"))
    model = ppp.build()
    path = tmp_path / "ppp.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    text = path.read_text()
    assert 'type="NV12toBGR"' in text
    check_inference(path)
    rng = np.random.default_rng(5)
    names = [p.output(0).get_any_name() for p in model.get_parameters()]
    for h, w in ((8, 12), (16, 24)):
        feeds = {names[0]: rng.integers(0, 256, (1, h, w, 1)).astype(np.uint8),
                 names[1]: rng.integers(0, 256, (1, h // 2, w // 2, 2)).astype(np.uint8)}
        check_run(path, feeds, oracle="cpu")


# -- errors -------------------------------------------------------------------------------------------------

def _built(kind, shapes, types=None, out="1,4,4,3"):
    b = IRBuilder()
    names = ("frame",) if len(shapes) == 1 else ("y", "uv", "v")[:len(shapes)]
    types = types or ("u8",) * len(shapes)
    inputs = [b.parameter(n, t, s) for n, t, s in zip(names, types, shapes)]
    b.result(b.layer(kind, "opset8", inputs, out_specs=[("U8", [int(d) for d in out.split(",")])]))
    return b.build()[0]


@pytest.mark.parametrize("kind, shapes, types, what, port", [
    ("NV12toRGB", ("1,7,4,1",), None, "multiple of 3", "frame"),
    ("NV12toRGB", ("1,4..5,4,1",), None, "height must be even", "frame"),
    ("NV12toRGB", ("1,6,5,1",), None, "width must be even", "frame"),
    ("NV12toBGR", ("1,6,4,3",), None, "1 channel", "frame"),
    ("NV12toBGR", ("1,6,4",), None, "4 dims", "frame"),
    ("NV12toRGB", ("1,4,4,1", "1,2,2,1"), None, r"UV input must be \[N, H/2, W/2, 2\]", "uv"),
    ("NV12toRGB", ("1,4,4,1", "1,2,2"), None, r"UV input must be", "uv"),
    ("NV12toRGB", ("1,4,4,1", "1,3,2,2"), None, "does not fit UV", "uv"),
    ("NV12toRGB", ("1,4,4,1", "2,2,2,2"), None, "does not fit UV", "uv"),
    ("NV12toRGB", ("1,5,4,1", "1,?,2,2"), None, "height must be even", "frame"),
    ("NV12toRGB", ("1,4,4,1", "1,2,2,2"), ("u8", "f32"), "element types of .* must be equal", "uv"),
    ("NV12toRGB", ("1,6,4,1",), ("i32",), "u8 or a floating-point type", "frame"),
    ("I420toRGB", ("1,4,4,1", "1,2,2,1"), None, "one plane .* or three", "u"),
    ("I420toRGB", ("1,4,4,1", "1,2,2,1", "1,2,3,1"), None, "must have equal shapes", "v"),
    ("I420toBGR", ("1,4,4,1", "1,2,2,2", "1,2,2,2"), None, r"must be \[N, H/2, W/2, 1\]", "u"),
    ("I420toBGR", ("1,4,6,1", "1,2,2,1", "1,2,2,1"), None, "does not fit U and V", "u"),
    ("I420toBGR", ("1,4,4,1", "1,2,2,1", "1,2,2,1"), ("f32", "f32", "f16"), "element types of .* must be equal", "v"),
    ("I420toBGR", ("1,6,3,1",), ("f32",), "width must be even", "frame"),
])
def test_bad_inputs_name_layer_and_port(kind, shapes, types, what, port):
    with pytest.raises(InferenceError, match=what) as info:
        ir_runner.load(_built(kind, shapes, types))
    text = str(info.value)
    assert f"{kind}-8" in text and f"({'y' if port == 'frame' else port})" in text


def test_f8_is_refused_as_unsupported():
    with pytest.raises(UnsupportedError, match="f8e4m3") as info:
        ir_runner.load(_built("NV12toRGB", ("1,6,4,1",), ("f8e4m3",)))
    assert "NV12toRGB-8" in str(info.value)


# -- batch ---------------------------------------------------------------------------------------------------

def test_batch_rule():
    for op in OPS:
        assert op.batch({}, [], [], [0]) == [0]
        assert op.batch({}, [], [], [0, 0, 0]) == [0]
        assert "axis 0" in op.batch({}, [], [], [1])
        assert "axis 0" in op.batch({}, [], [], [0, None])


def test_a_chunked_run_equals_the_whole_run(tmp_path):
    ird = pytest.importorskip("ir_runner.dask")
    path, _ = _model(tmp_path, "i420", "rgb", ([-1, 4, 6, 1], [-1, 2, 3, 1], [-1, 2, 3, 1]))
    feeds = _feeds(np.random.default_rng(2), "i420", 7, 4, 6, 3, "u8")
    model = ir_runner.load(str(path))
    whole = model.run(feeds)
    chunked = ird.run(model, feeds, chunk=3)
    for name, value in whole.items():
        np.testing.assert_array_equal(chunked[name].compute(), value)


# -- seeded differential ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(24))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    family = ("nv12", "i420")[seed % 2]
    order = ("rgb", "bgr")[seed // 2 % 2]
    et = ("u8", "u8", "f32", "f16", "bf16", "f64")[int(rng.integers(6))]
    if et == "bf16":
        require_cpu("bf16")
    planes = 1 if rng.random() < 0.5 else len(PLANES[family])
    n = int(rng.integers(1, 4))
    h, w = (int(v) * 2 for v in rng.integers(1, 9, 2))
    shapes = _plane_shapes(family, n, h, w, planes)
    if rng.random() < 0.4:
        shapes = tuple([-1, -1, -1, s[3]] for s in shapes)
    path, _ = _model(tmp_path, family, order, shapes, et)
    check_inference(path)
    check_run(path, _feeds(rng, family, n, h, w, planes, et), oracle="cpu")
