"""PriorBox-1/8 and PriorBoxClustered-1: shapes as OpenVINO infers them (sizes from Constants and from ShapeOf of
static, dynamic and interval dims), refusals naming the layer and port or attribute, values bit for bit against
``Node.evaluate`` (op_reference cases, every integral size type, clip/flip/MXNet/fixed-size/density modes), and
seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset8  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.ops.detection.prior_box import OPS  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

MAKERS = {"PriorBox-8": opset8.prior_box, "PriorBox-1": opset1.prior_box,
          "PriorBoxClustered-1": opset8.prior_box_clustered}
LAYER_ATTRS = {"PriorBox": {"offset": 0.5, "min_size": "2"},
               "PriorBoxClustered": {"offset": 0.5, "width": "1", "height": "1"}}


def _shape_model(tmp_path, kind, attrs, feature=(1, 3, 3, 4), image=(1, 3, 30, 40), name="model"):
    """A PriorBox whose sizes are ShapeOf(feature)[2:] and ShapeOf(image)[2:] (as SSD IRs compute them)."""
    f = opset8.parameter(ov.PartialShape(list(feature)), ov.Type.f32, name="feature")
    i = opset8.parameter(ov.PartialShape(list(image)), ov.Type.f32, name="image")
    take = lambda p: opset8.gather(opset8.shape_of(p), opset8.constant(np.array([2, 3])), opset8.constant(0))  # noqa: E731
    node = MAKERS[kind](take(f), take(i), attrs)
    return write_ir(node, [f, i], tmp_path, name), node


def _feeds(feature=(1, 3, 3, 4), image=(1, 3, 30, 40)):
    return {"feature": np.zeros(feature, np.float32), "image": np.zeros(image, np.float32)}


def _const_model(tmp_path, kind, attrs, size, image, et=ov.Type.i64, name="model"):
    """Sizes as Constants of type ``et``; a dummy Parameter keeps the model runnable."""
    p = opset8.parameter([1], ov.Type.f32, name="unused")
    dtype = et.to_dtype()
    step = attrs.get("step")
    attrs = {k: v for k, v in attrs.items() if not (k == "step" and v < 0)}  # (the Python API refuses MXNet's -1)
    node = MAKERS[kind](opset8.constant(np.array(size, dtype)), opset8.constant(np.array(image, dtype)), attrs)
    if step is not None and step < 0:
        node.set_attribute("step", step)
    return write_ir([node.output(0), p.output(0)], [p], tmp_path, name), node


BASIC = {"offset": 0.5, "min_size": [2.0, 3.0], "max_size": [5.0, 7.0], "aspect_ratio": [2.0, 3.0], "flip": True,
         "clip": True, "variance": [0.1, 0.2, 0.3, 0.4]}
CLUSTERED = {"offset": 0.5, "width": [1.0, 2.5, 30.0], "height": [1.0, 2.0, 25.0], "variance": [0.2]}


def _attrs(kind):
    return CLUSTERED if kind.startswith("PriorBoxClustered") else BASIC


# -- shapes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("feature", [(1, 3, 3, 4), (1, 3, -1, 4), (1, 3, (2, 5), (1, 3)), (-1, -1, 7, 1), (1, 3, 0, 4)])
def test_shapes_as_openvino_infers_them(kind, feature, tmp_path):
    xml, node = _shape_model(tmp_path, kind, _attrs(kind), feature=feature)
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_parameter_sizes_give_a_dynamic_length_and_run_per_value(kind, tmp_path):
    a = opset8.parameter([2], ov.Type.i32, name="size")
    b = opset8.parameter([-1], ov.Type.i32, name="img")
    node = MAKERS[kind](a, b, _attrs(kind))
    xml = write_ir(node, [a, b], tmp_path)
    check_output_shapes(xml, node)
    check_inference(xml)
    model = ir_runner.load(str(xml))
    priors = node.get_output_partial_shape(0)
    for size in ((2, 3), (1, 1), (0, 5)):
        got = list(model.run({"size": np.array(size, np.int32), "img": np.array([20, 30], np.int32)}).values())[0]
        xml_c, node_c = _const_model(tmp_path, kind, _attrs(kind), size, (20, 30), ov.Type.i32, name=f"c{size[0]}")
        assert got.shape == tuple(node_c.get_output_shape(0)), (priors, got.shape)
        want = check_run(xml_c, {"unused": np.zeros(1, np.float32)})
        assert np.array_equal(list(want.values())[0], got)
    with pytest.raises(InputError, match="negative") as info:
        model.run({"size": np.array([-1, 2], np.int32), "img": np.array([20, 30], np.int32)})
    assert "output_size" in str(info.value)


def _built(kind="PriorBox", version="opset8", types=("i64", "i64"), shapes=("2", "2"), attrs=None, out="2,-1"):
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("size", "img"), types, shapes)]
    layer_attrs = dict(LAYER_ATTRS[kind])
    layer_attrs.update(attrs or {})
    b.result(b.layer(kind, version, inputs, attrs=layer_attrs, out_specs=[("FP32", out)]))
    return b.build()[0]


@pytest.mark.parametrize("kind", ["PriorBox", "PriorBoxClustered"])
@pytest.mark.parametrize("kwargs, what, port", [
    ({"types": ("f32", "i64")}, "integral element type", "output_size"),
    ({"types": ("i64", "boolean")}, "integral element type", "image_size"),
    ({"shapes": ("2,1", "2")}, "must be 1-D", "output_size"), ({"shapes": ("2", "")}, "must be 1-D", "image_size"),
    ({"shapes": ("3", "2")}, "two elements", "output_size"),
])
def test_bad_inputs_name_layer_and_port(kind, kwargs, what, port):
    with pytest.raises(InferenceError, match=what) as info:
        ir_runner.load(_built(kind, **kwargs))
    text = str(info.value)
    assert kind in text and f"({port})" in text


@pytest.mark.parametrize("kind, attrs, error, what", [
    ("PriorBox", {"variance": "0.1,0.2"}, InferenceError, "variance"),
    ("PriorBox", {"aspect_ratio": "0"}, InferenceError, "aspect_ratio"),
    ("PriorBox", {"aspect_ratio": "2,nan"}, InferenceError, "aspect_ratio"),
    ("PriorBox", {"max_size": "5", "scale_all_sizes": "false"}, InferenceError, "write 2 boxes"),
    ("PriorBox", {"max_size": "5,6"}, InferenceError, "boxes per cell"),
    ("PriorBox", {"fixed_size": "4", "density": ""}, InferenceError, "density"),
    ("PriorBox", {"fixed_size": "4", "density": "0"}, InferenceError, "density"),
    ("PriorBox", {"clip": "maybe"}, IRError, "clip"), ("PriorBox", {"offset": None}, IRError, "offset"),
    ("PriorBoxClustered", {"width": "1,2"}, InferenceError, "width and height"),
    ("PriorBoxClustered", {"variance": "1,2,3"}, InferenceError, "variance"),
])
def test_bad_attributes(kind, attrs, error, what):
    b = IRBuilder()
    inputs = [b.parameter(n, "i64", "2") for n in ("size", "img")]
    layer_attrs = dict(LAYER_ATTRS[kind])
    layer_attrs.update({k: v for k, v in attrs.items() if v is not None})
    for k in [k for k, v in attrs.items() if v is None]:
        del layer_attrs[k]
    b.result(b.layer(kind, "opset8", inputs, attrs=layer_attrs, out_specs=[("FP32", "2,-1")]))
    with pytest.raises(error, match=what) as info:
        ir_runner.load(b.build()[0])
    assert kind in str(info.value)


# -- values ---------------------------------------------------------------------------------------------

OP_REFERENCE_PRIOR_BOX = {  # OpenVINO's op_reference cases (sizes [2, 2], image [10, 10]; 6 digits)
    "PriorBox-1": ({"min_size": [2.0], "aspect_ratio": [1.5], "scale_all_sizes": False, "offset": 0.0},
                   [-0.75, -0.75, 1.25, 1.25, -0.974745, -0.566497, 1.47474, 1.0665,
                    -0.25, -0.75, 1.75, 1.25, -0.474745, -0.566497, 1.97474, 1.0665,
                    -0.75, -0.25, 1.25, 1.75, -0.974745, -0.0664966, 1.47474, 1.5665,
                    -0.25, -0.25, 1.75, 1.75, -0.474745, -0.0664966, 1.97474, 1.5665] + [0.1] * 32),
    "PriorBox-8": ({"min_size": [2.0], "max_size": [5.0], "aspect_ratio": [1.5], "scale_all_sizes": True,
                    "min_max_aspect_ratios_order": False, "offset": 0.5},
                   [0.15, 0.15, 0.35, 0.35, 0.127526, 0.16835, 0.372474, 0.33165, 0.0918861, 0.0918861, 0.408114,
                    0.408114, 0.65, 0.15, 0.85, 0.35, 0.627526, 0.16835, 0.872474, 0.33165, 0.591886, 0.0918861,
                    0.908114, 0.408114, 0.15, 0.65, 0.35, 0.85, 0.127526, 0.66835, 0.372474, 0.83165, 0.0918861,
                    0.591886, 0.408114, 0.908114, 0.65, 0.65, 0.85, 0.85, 0.627526, 0.66835, 0.872474, 0.83165,
                    0.591886, 0.591886, 0.908114, 0.908114] + [0.1] * 48),
}


@pytest.mark.parametrize("kind", sorted(OP_REFERENCE_PRIOR_BOX))
@pytest.mark.parametrize("et", ["i64", "u8"])
def test_op_reference_case(kind, et, tmp_path):
    attrs, want = OP_REFERENCE_PRIOR_BOX[kind]
    xml, _ = _const_model(tmp_path, kind, attrs, (2, 2), (10, 10), getattr(ov.Type, et))
    got = list(check_run(xml, {"unused": np.zeros(1, np.float32)}).values())[0]
    np.testing.assert_allclose(got.reshape(-1), want, atol=1e-5)


def test_op_reference_clustered_case(tmp_path):
    xml, _ = _const_model(tmp_path, "PriorBoxClustered-1", {"offset": 0.5, "width": [3.0], "height": [3.0],
                                                           "clip": True, "variance": [0.1, 0.1, 0.2, 0.2]},
                          (2, 2), (10, 10))
    got = list(check_run(xml, {"unused": np.zeros(1, np.float32)}).values())[0]
    # by hand: centres (w + 0.5) * 10 / 2 = 2.5 and 7.5, half sizes 1.5, divided by 10
    want = [0.1, 0.1, 0.4, 0.4, 0.6, 0.1, 0.9, 0.4, 0.1, 0.6, 0.4, 0.9, 0.6, 0.6, 0.9, 0.9] + [0.1, 0.1, 0.2, 0.2] * 4
    np.testing.assert_allclose(got.reshape(-1), want, atol=1e-6)


@pytest.mark.parametrize("et", ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"])
def test_every_integral_size_type(et, tmp_path):
    for kind in sorted(MAKERS):
        xml, _ = _const_model(tmp_path, kind, _attrs(kind), (3, 2), (50, 70), getattr(ov.Type, et), name=kind)
        check_inference(xml)
        check_run(xml, {"unused": np.zeros(1, np.float32)})


MODES = [
    {"min_size": [4.0], "max_size": [9.0], "aspect_ratio": [2.0, 0.5, 3.0], "flip": True, "step": 8.0},
    {"min_size": [4.0], "max_size": [9.0], "aspect_ratio": [2.0], "flip": True, "min_max_aspect_ratios_order": False},
    {"min_size": [0.2, 0.35], "aspect_ratio": [2.0, 3.0], "flip": True, "scale_all_sizes": False, "step": -1.0},
    {"min_size": [0.1], "aspect_ratio": [2.0], "scale_all_sizes": False, "step": 0.125, "clip": True},
    {"fixed_size": [8.0, 15.0], "density": [2.0, 3.0], "aspect_ratio": [2.0], "flip": True, "step": 4.0},
    {"fixed_size": [9.0], "density": [3.0], "fixed_ratio": [1.0, 2.0, 0.5], "aspect_ratio": [2.0], "flip": True},
    {"fixed_size": [9.0, 4.0], "density": [3.0, 1.0], "fixed_ratio": [1.0, 3.0], "aspect_ratio": [3.0]},
    {"min_size": [5.0, 9.0], "aspect_ratio": [2.0, 1.0], "variance": [0.3], "clip": True},
]


@pytest.mark.parametrize("mode", range(len(MODES)))
def test_modes_against_node_evaluate(mode, tmp_path):
    attrs = {"offset": 0.25, **MODES[mode]}
    for kind in ("PriorBox-1", "PriorBox-8"):
        if kind == "PriorBox-1" and "min_max_aspect_ratios_order" in attrs:
            continue
        xml, _ = _const_model(tmp_path, kind, attrs, (3, 5), (40, 56), name=kind)
        check_inference(xml)
        check_run(xml, {"unused": np.zeros(1, np.float32)})


@pytest.mark.parametrize("attrs", [
    {"fixed_size": [9.0], "density": [3.0], "fixed_ratio": [1.0, 2.0, 0.5], "aspect_ratio": [2.0, 3.0], "flip": True},
    {"fixed_size": [9.0], "density": [3.0], "aspect_ratio": [2.0], "min_size": [3.0]},  # min_size boxes uncounted
])
def test_mismatched_counts_are_refused_where_the_reference_would_overflow(attrs, tmp_path):
    """Attributes for which the reference writes another number of boxes per cell than the shape declares."""
    xml, _ = _const_model(tmp_path, "PriorBox-8", {"offset": 0.5, **attrs}, (2, 2), (8, 8))
    with pytest.raises(InferenceError, match="boxes per cell") as info:
        ir_runner.load(str(xml))
    assert "PriorBox-8" in str(info.value)


def test_zero_image_gives_infinities_as_the_reference(tmp_path):
    for kind in sorted(MAKERS):
        xml, _ = _const_model(tmp_path, kind, {**_attrs(kind), "clip": False}, (2, 2), (0, 10), name=kind)
        check_run(xml, {"unused": np.zeros(1, np.float32)})


def test_batch_rule():
    assert OPS[0].batch(None, [], [], [None, None]) == [None]
    assert "sizes" in OPS[2].batch(None, [], [], [0, None])


# -- seeded differential ------------------------------------------------------------------------------

def _random_attrs(rng, kind):
    if kind == "PriorBoxClustered-1":
        count = int(rng.integers(1, 5))
        attrs = {"offset": float(rng.choice([1.0, 0.5, 0.3])), "width": list(rng.uniform(0.5, 40, count)),
                 "height": list(rng.uniform(0.5, 40, count)), "clip": bool(rng.integers(2)),
                 "variance": list(rng.uniform(0.05, 0.3, int(rng.choice([0, 1, 4]))))}
        for key in ("step_w", "step_h", "step"):
            if rng.integers(2):
                attrs[key] = float(rng.uniform(1, 10))
        return attrs
    attrs = {"offset": float(rng.choice([0.0, 0.5, 0.3])), "clip": bool(rng.integers(2)), "flip": bool(rng.integers(2)),
             "aspect_ratio": [float(v) for v in rng.choice([2.0, 3.0, 0.5, 1.0, 1.5, 1 / 3], int(rng.integers(0, 4)))],
             "variance": list(rng.uniform(0.05, 0.3, int(rng.choice([0, 1, 4])))),
             "step": float(rng.choice([0.0, 4.0, 7.5, 16.0]))}
    style = int(rng.integers(3))
    if style == 0:
        count = int(rng.integers(1, 4))
        attrs["min_size"] = list(rng.uniform(1, 40, count))
        attrs["max_size"] = list(rng.uniform(40, 90, int(rng.integers(0, count + 1))))
        if kind == "PriorBox-8":
            attrs["min_max_aspect_ratios_order"] = bool(rng.integers(2))
    elif style == 1:
        attrs.update(scale_all_sizes=False, min_size=list(rng.uniform(0.05, 0.9, int(rng.integers(1, 4)))),
                     step=float(rng.choice([-1.0, 0.0, 0.1])))
    else:
        count = int(rng.integers(1, 3))
        attrs.update(fixed_size=[float(v) for v in rng.integers(2, 30, count)],
                     density=[float(v) for v in rng.integers(1, 4, count)])
        if rng.integers(2):
            attrs["fixed_ratio"] = [float(v) for v in rng.choice([1.0, 2.0, 0.5], int(rng.integers(1, 3)))]
    return attrs


@pytest.mark.parametrize("seed", range(30))
def test_random_against_node_evaluate(seed, tmp_path):
    rng = np.random.default_rng(seed)
    kind = sorted(MAKERS)[seed % 3]
    attrs = _random_attrs(rng, kind)
    size = tuple(int(v) for v in rng.integers(1, 8, 2))
    image = tuple(int(v) for v in rng.integers(16, 400, 2))
    et = (ov.Type.i32, ov.Type.i64, ov.Type.u16)[int(rng.integers(3))]
    xml, _ = _const_model(tmp_path, kind, attrs, size, image, et)
    try:
        model = ir_runner.load(str(xml))
    except InferenceError as error:
        assert "boxes per cell" in str(error)  # (the reference would write outside its output)
        return
    assert model is not None
    check_inference(xml)
    check_run(xml, {"unused": np.zeros(1, np.float32)})
