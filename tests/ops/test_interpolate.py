"""Interpolate-4 and Interpolate-11: shapes (sizes and scales, pads, axes, dynamic dims and ranks, as OpenVINO's
type_prop tests), values against OpenVINO's reference (nearest bit for bit in every coordinate transformation
and nearest mode; linear, linear_onnx, cubic and the Pillow modes within the stated bound; integer types
exactly, with the reference's wrapping casts), and seeded random graphs. Interpolate-1 (opset1..opset3) against
the CPU plugin, which runs it as Interpolate-4."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset10, opset11  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, cpu_outputs, write_ir  # noqa: E402

TRANSFORMS = ["half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"]
WEIGHTED = ["linear", "linear_onnx", "cubic"]
RTOL, ATOL = 1e-5, 1e-5


def _c(values, dtype=np.int64):
    return opset1.constant(np.array(values, dtype))


def _x(shape, et=ov.Type.f32):
    return opset1.parameter(ov.PartialShape(shape), et, name="x")


def _feed(rng, shape, dtype=np.float32):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


# -- shapes ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [[1, 3, 5, 7], [-1, 3, -1, -1], [2, -1, 4, -1]], ids=str)
def test_shapes(shape, tmp_path):
    x = _x(shape)
    nodes = [
        opset11.interpolate(x, _c([8, 3]), "nearest", "sizes", axes=_c([2, 3])),
        opset11.interpolate(x, _c([0.5, 2.7], np.float32), "linear", "scales", axes=_c([3, 2])),
        opset11.interpolate(x, _c([1, 1, 1.3333, 3], np.float32), "cubic", "scales"),
        opset11.interpolate(x, _c([6, 4]), "linear_onnx", "sizes", pads_begin=[0, 1, 2], pads_end=[1, 0, 0, 3],
                            axes=_c([2, 3])),
        opset10.interpolate(x, _c([9, 9]), _c([1.5, 0.25], np.float32), "nearest", "scales", axes=_c([3, 2])),
        opset10.interpolate(x, _c([2, 3, 9, 9]), _c([1, 1, 1, 1], np.float32), "nearest", "sizes"),
        opset11.interpolate(x, _c([4, 5]), "bilinear_pillow", "sizes", axes=_c([2, 3])),
    ]
    check_inference(write_ir(nodes, [x], tmp_path))


@pytest.mark.parametrize("dim", [ov.Dimension(-1), ov.Dimension(2, 5), ov.Dimension(0, 4), ov.Dimension(3, -1)],
                         ids=str)
@pytest.mark.parametrize("resized", [1, 2])
def test_pads_widen_interval_dims(dim, resized, tmp_path):
    """Pads add to both bounds of a dynamic or interval dim, resized by scales or kept (found by
    scripts/fuzz_ops.py: ``..4`` padded by 1 stayed ``..4``, OpenVINO says ``1..5``)."""
    x = _x(ov.PartialShape([1, dim, 4]))
    nodes = [opset11.interpolate(x, _c([3]), "nearest", "sizes", pads_begin=[0, 1, 0], pads_end=[0, 2, 0],
                                 axes=_c([resized])),
             opset11.interpolate(x, _c([1.5], np.float32), "nearest", "scales", pads_begin=[0, 1, 1],
                                 pads_end=[0, 2, 0], axes=_c([resized]))]
    path = write_ir(nodes, [x], tmp_path)
    for i, node in enumerate(nodes):
        got = str(ir_runner.load(str(path)).outputs[i].partial_shape)
        assert got == str(node.get_output_partial_shape(0)).replace(" ", "")


def test_dynamic_rank_and_computed_axes(tmp_path):
    x = _x(ov.PartialShape.dynamic())
    y = opset1.parameter([1, 2, 4, 4], ov.Type.f32, name="y")
    axes = opset1.parameter([2], ov.Type.i64, name="axes")
    nodes = [opset11.interpolate(x, _c([8, 3]), "nearest", "sizes", axes=_c([2, 3])),
             opset11.interpolate(y, _c([8, 3]), "nearest", "sizes", axes=axes)]
    check_inference(write_ir(nodes, [x, y, axes], tmp_path))


_AXES_CONST = '<data element_type="i64" shape="2" offset='


@pytest.mark.parametrize("old, new", [
    ('mode="nearest"', 'mode="sideways"'),
    ('pads_begin="0, 0, 0, 0"', 'pads_begin="0, -1"'),
    (_AXES_CONST + '"16"', _AXES_CONST + '"0"'),  # the axes read the sizes [8, 3]: axis 8 is out of range
    ('shape_calculation_mode="sizes"', 'shape_calculation_mode="x"'),
])
def test_invalid_attributes_are_errors(old, new, tmp_path):
    x = _x([1, 2, 4, 4])
    path = write_ir(opset11.interpolate(x, _c([8, 3]), "nearest", "sizes", axes=_c([2, 3])), [x], tmp_path)
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(IRError):
        ir_runner.load(str(path))


def test_pillow_needs_two_axes(tmp_path):
    x = _x([1, 2, 4, 4])
    path = write_ir(opset11.interpolate(x, _c([8, 3]), "bilinear_pillow", "sizes", axes=_c([2, 3])), [x], tmp_path)
    text = path.read_text().replace('bilinear_pillow', 'bicubic_pillow')
    path.write_text(text)
    check_inference(path)
    x3 = _x([1, 2, 4, 4])
    three = write_ir(opset11.interpolate(x3, _c([8, 3, 3]), "nearest", "sizes", axes=_c([1, 2, 3])), [x3],
                     tmp_path, "three")
    three.write_text(three.read_text().replace('mode="nearest"', 'mode="bilinear_pillow"'))
    with pytest.raises(IRError, match="two axes"):
        ir_runner.load(str(three))


# -- values ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape, sizes", [([1, 2, 4, 5], [7, 3]), ([2, 1, 6, 6], [3, 9]), ([1, 1, 3, 8], [1, 8])],
                         ids=str)
def test_nearest_every_mode_bit_exact(shape, sizes, tmp_path):
    x = _x(shape)
    nodes = [opset11.interpolate(x, _c(sizes), "nearest", "sizes", coordinate_transformation_mode=t, nearest_mode=n,
                                 axes=_c([2, 3])) for t, n in itertools.product(TRANSFORMS, NEAREST)]
    path = write_ir(nodes, [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": _feed(np.random.default_rng(0), shape)})


@pytest.mark.parametrize("scales", [[0.6, 1.7], [2.0, 0.5], [1.0, 1.3333], [0.25, 3.0]], ids=str)
def test_nearest_scales_bit_exact(scales, tmp_path):
    x = _x([1, 2, 5, 7])
    nodes = [opset11.interpolate(x, _c(scales, np.float32), "nearest", "scales", coordinate_transformation_mode=t,
                                 nearest_mode=n, axes=_c([2, 3])) for t, n in itertools.product(TRANSFORMS, NEAREST)]
    path = write_ir(nodes, [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": _feed(np.random.default_rng(1), [1, 2, 5, 7])})


@pytest.mark.parametrize("mode", WEIGHTED)
@pytest.mark.parametrize("shape, sizes", [([1, 2, 4, 5], [7, 3]), ([2, 1, 9, 6], [3, 12])], ids=str)
def test_weighted_every_transform(mode, shape, sizes, tmp_path):
    x = _x(shape)
    nodes = [opset11.interpolate(x, _c(sizes), mode, "sizes", coordinate_transformation_mode=t, axes=_c([2, 3]),
                                 cube_coeff=-0.5 if i % 2 else -0.75) for i, t in enumerate(TRANSFORMS)]
    path = write_ir(nodes, [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": _feed(np.random.default_rng(2), shape)}, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("mode", ["nearest"] + WEIGHTED)
def test_sizes_and_axes_given_at_run_time(mode, tmp_path):
    """Sizes and axes fed as inputs (the per-call kernel) give what the constant ones (tables built once per
    plan) give, over two runs of each."""
    x = _x([2, 3, 5, 6])
    sizes = opset1.parameter([2], ov.Type.i64, name="sizes")
    axes = opset1.parameter([2], ov.Type.i64, name="axes")
    fed = write_ir(opset11.interpolate(x, sizes, mode, "sizes", axes=axes), [x, sizes, axes], tmp_path / "fed")
    const = write_ir(opset11.interpolate(x, _c([7, 4]), mode, "sizes", axes=_c([3, 2])), [x], tmp_path / "const")
    fed_model, const_model = ir_runner.load(str(fed)), ir_runner.load(str(const))
    rng = np.random.default_rng(3)
    for _ in range(2):
        data = _feed(rng, [2, 3, 5, 6])
        got = next(iter(fed_model.run({"x": data, "sizes": np.array([7, 4]), "axes": np.array([3, 2])}).values()))
        want = next(iter(const_model.run({"x": data}).values()))
        assert got.shape == (2, 3, 4, 7) and np.array_equal(got, want)


@pytest.mark.parametrize("scales", [[0.6, 1.7], [2.0, 0.5], [0.5, 0.4], [0.3, 1.5]], ids=str)
def test_scales_v4_v11_antialias_and_pillow(scales, tmp_path):
    x = _x([1, 2, 9, 10])
    s = _c(scales, np.float32)
    nodes = [opset11.interpolate(x, s, m, "scales", axes=_c([2, 3])) for m in WEIGHTED + ["bilinear_pillow",
                                                                                          "bicubic_pillow"]]
    nodes += [opset10.interpolate(x, _c([1, 1]), s, m, "scales", axes=_c([2, 3])) for m in WEIGHTED + ["nearest"]]
    nodes.append(opset11.interpolate(x, s, "linear", "scales", antialias=True, axes=_c([2, 3])))
    path = write_ir(nodes, [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": _feed(np.random.default_rng(3), [1, 2, 9, 10])}, rtol=RTOL, atol=ATOL)


def test_pads_and_default_axes(tmp_path):
    x = _x([1, 2, 5, 7])
    nodes = []
    for mode in ["nearest"] + WEIGHTED:
        nodes.append(opset11.interpolate(x, _c([8, 4]), mode, "sizes", pads_begin=[0, 1, 1, 2], pads_end=[0, 0, 2],
                                         axes=_c([2, 3])))
        nodes.append(opset11.interpolate(x, _c([1, 2, 8, 4]), mode, "sizes"))
    path = write_ir(nodes, [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": _feed(np.random.default_rng(4), [1, 2, 5, 7])}, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("et, dtype", [(ov.Type.u8, np.uint8), (ov.Type.i8, np.int8)], ids=str)
def test_integer_types_exactly(et, dtype, tmp_path):
    """Integer results: rounded or truncated and cast (wrapping past the range) as the reference does."""
    x = _x([1, 2, 5, 7], et)
    nodes = [opset11.interpolate(x, _c([8, 4]), m, "sizes", axes=_c([2, 3]))
             for m in ["nearest"] + WEIGHTED + ["bilinear_pillow", "bicubic_pillow"]]
    path = write_ir(nodes, [x], tmp_path)
    check_run(path, {"x": _feed(np.random.default_rng(5), [1, 2, 5, 7], dtype)})


def test_linear_integer_rounding_is_std_round_above_2_pow_23(tmp_path):
    """``linear`` rounds an integer result with ``std::round`` in f32 (``std::round(summa / wsum)``): an odd value
    above 2**23 stays (adding 0.5 first rounded it to the even one above). No reference evaluate for i32: an
    axis kept at its size weighs only its own element (weight 1, the others' triangle taps 0), so the reference
    returns the data itself."""
    x = _x([1, 1, 2, 3], ov.Type.i32)
    path = write_ir(opset11.interpolate(x, _c([2, 3]), "linear", "sizes", axes=_c([2, 3])), [x], tmp_path)
    data = np.array([[[[2**23 + 1, -(2**23 + 3), 5], [7, 2**24 - 1, -(2**24 - 3)]]]], np.int32)
    (out,) = ir_runner.load(str(path)).run({"x": data}).values()
    assert np.array_equal(out, data), out


def test_f16(tmp_path):
    x = _x([1, 2, 5, 7], ov.Type.f16)
    nodes = [opset11.interpolate(x, _c([8, 4]), m, "sizes", axes=_c([2, 3])) for m in WEIGHTED + ["bicubic_pillow"]]
    path = write_ir(nodes, [x], tmp_path)
    check_run(path, {"x": _feed(np.random.default_rng(6), [1, 2, 5, 7], np.float16)}, rtol=1e-2, atol=1e-2)
    nearest = write_ir(opset11.interpolate(x, _c([8, 4]), "nearest", "sizes", axes=_c([2, 3])), [x], tmp_path, "n")
    check_run(nearest, {"x": _feed(np.random.default_rng(6), [1, 2, 5, 7], np.float16)})


def test_5d(tmp_path):
    x = _x([2, 3, 4, 5, 6])
    nodes = [opset11.interpolate(x, _c([3, 9, 4]), m, "sizes", axes=_c([2, 3, 4])) for m in ["nearest"] + WEIGHTED]
    path = write_ir(nodes, [x], tmp_path)
    check_run(path, {"x": _feed(np.random.default_rng(7), [2, 3, 4, 5, 6])}, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", range(20))
def test_random_interpolate(seed, tmp_path):
    rng = np.random.default_rng(seed)
    shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + [int(n) for n in rng.integers(1, 9, size=2)]
    x = _x(shape)
    mode = str(rng.choice(["nearest"] + WEIGHTED + ["bilinear_pillow", "bicubic_pillow"]))
    kw = dict(coordinate_transformation_mode=str(rng.choice(TRANSFORMS)), nearest_mode=str(rng.choice(NEAREST)),
              antialias=bool(rng.random() < 0.3), cube_coeff=float(rng.choice([-0.75, -0.5])), axes=_c([2, 3]))
    if rng.random() < 0.5:
        node = opset11.interpolate(x, _c([int(n) for n in rng.integers(1, 12, size=2)]), mode, "sizes", **kw)
    else:
        scales = [float(v) for v in rng.choice([0.25, 0.5, 0.6, 1.0, 1.5, 2.0, 2.5], size=2)]
        node = opset11.interpolate(x, _c(scales, np.float32), mode, "scales", **kw)
    path = write_ir(node, [x], tmp_path)
    check_inference(path)
    exact = {} if mode == "nearest" else {"rtol": RTOL, "atol": ATOL}
    check_run(path, {"x": _feed(rng, shape)}, **exact)


def test_batch_rule():
    from ir_runner.ops.image.interpolate import OPS
    from ir_runner.types import TensorSpec, element_type, parse_partial_shape

    def spec(dims: str) -> TensorSpec:
        return TensorSpec(element_type("f32"), parse_partial_shape(dims))

    rule = OPS[1].batch
    params = {"axes": (2, 3), "pads_begin": (0, 0, 0, 0), "pads_end": (0, 0, 0, 0), "mode": "linear_onnx"}
    data, out = [spec("[4,3,8,8]")], [spec("[4,3,16,16]")]
    assert rule(params, data, out, [0, None, None]) == [0]
    assert isinstance(rule(params, data, out, [2, None, None]), str)
    assert isinstance(rule(dict(params, pads_begin=(1, 0, 0, 0)), data, out, [0, None, None]), str)
    # every axis resized, the batch axis at scale 1 (ONNX Resize): linear and cubic weigh neighbouring rows
    every = dict(params, axes=(0, 1, 2, 3))
    assert rule(every, data, out, [0, None, None]) == [0]
    assert rule(dict(every, mode="bilinear_pillow"), data, out, [0, None, None]) == [0]
    assert "cubic weighs each row with its neighbours" in rule(dict(every, mode="cubic"), data, out, [0, None, None])
    assert rule(dict(every, mode="nearest"), data, [spec("[8,3,16,16]")], [0, None, None]) == "resizes the batch axis"


@pytest.mark.parametrize("mode", ["nearest", "linear_onnx", "linear", "cubic"])
def test_an_axis_at_scale_1_on_dask(mode, tmp_path):
    """An ONNX Resize (no axes: every axis, the batch at scale 1) with an infinity in one row: nearest and
    linear_onnx keep it in its row as the reference does (linear_onnx's weight product gave every row 0 x inf
    = NaN) and run chunked bit for bit; linear and cubic, whose reference spreads it to neighbouring rows, are
    refused."""
    from ir_runner.errors import BatchError
    from tests.helpers.node_eval import evaluate

    ird = pytest.importorskip("ir_runner.dask")
    x = _x([-1, 2, 3, 3])
    node = opset11.interpolate(x, _c([1.0, 1.0, 2.0, 2.0], np.float32), mode, "scales")
    model = ir_runner.load(write_ir(node, [x], tmp_path))
    data = np.random.default_rng(5).standard_normal((7, 2, 3, 3)).astype(np.float32)
    data[3, 0, 1, 1] = np.inf
    if mode in ("linear", "cubic"):
        with pytest.raises(BatchError, match=f"{mode} weighs each row with its neighbours"):
            ird.run(model, [data], chunk=3)
        return
    whole = next(iter(model.run([data]).values()))
    fixed = _x([7, 2, 3, 3])
    reference = evaluate(opset11.interpolate(fixed, _c([1.0, 1.0, 2.0, 2.0], np.float32), mode, "scales"), [data])
    for result in (whole, reference):  # (within row 3, how an infinity meets its spatial neighbours is another matter)
        assert sorted(set(np.argwhere(~np.isfinite(result))[:, 0].tolist())) == [3]
    others = [0, 1, 2, 4, 5, 6]
    np.testing.assert_allclose(whole[others], reference[others], rtol=RTOL, atol=ATOL)
    (out,) = ird.run(model, [data], chunk=3).values()
    assert np.array_equal(out.compute(scheduler="sync").view(np.uint32), whole.view(np.uint32))


def _scales_model(scales: list[float] | None, data: str = "1,2,3,5", calc: str = "scales", sizes=None):
    """Interpolate-11 nearest over axes 2 and 3: Const scales (or sizes), or a Parameter ``s`` when None."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x = b.parameter("x", "f32", data)
    if scales is None and sizes is None:
        source = b.parameter("s", "f32", "2")
    else:
        source = b.const("s", np.array(scales, np.float32) if sizes is None else np.array(sizes, np.int64))
    axes = b.const("a", np.array([2, 3], np.int64))
    b.result(b.layer("Interpolate", "opset11", [x, source, axes],
                     attrs={"mode": "nearest", "shape_calculation_mode": calc}, out_specs=[("FP32", [-1] * 4)]))
    return ir_runner.load(*b.build())


@pytest.mark.parametrize("scales,dims", [([-1.0, -1.0], (0, 0)), ([-np.inf, -np.inf], (0, 0)),
                                         ([np.inf, 1.0], (0, 5)), ([np.nan, 2.0], (0, 10)), ([1e30, 1.0], (0, 5)),
                                         ([0.5, 2.0], (1, 10))])
def test_scales_out_of_range_give_what_openvino_infers_and_the_run_agrees(scales, dims):
    """OpenVINO's shape inference converts f32(n) * (scale + 1e-6) to int64 (x86: INT64_MIN when it does not
    fit) and clamps at 0. ir-run reported f32[1,2,-3,-5] for scales [-1,-1] while the run returned (1,2,0,0),
    and scales [-inf,-inf] fed at run time raised OverflowError."""
    x = np.ones((1, 2, 3, 5), np.float32)
    model = _scales_model(scales)
    assert model.outputs[0].shape == (1, 2) + dims
    (out,) = model.run({"x": x}).values()
    assert out.shape == (1, 2) + dims
    (out,) = _scales_model(None).run({"x": x, "s": np.array(scales, np.float32)}).values()
    assert out.shape == (1, 2) + dims


def test_an_empty_axis_resized_to_sizes_is_refused_naming_the_layer():
    """An empty axis resized to 4 elements: the kernel read out of bounds (an IndexError escaped)."""
    model = _scales_model(None, data="1,?,?,5", calc="sizes", sizes=[4, 4])
    with pytest.raises(ir_runner.InputError, match="Interpolate-11.*axis 2 has no element to resize to 4"):
        model.run({"x": np.ones((1, 2, 0, 5), np.float32)})
    (out,) = model.run({"x": np.ones((1, 0, 3, 5), np.float32)}).values()
    assert out.shape == (1, 0, 4, 4)

def _interpolate1(tmp_path, shape, target, attrs):
    x = opset1.parameter(shape, ov.Type.f32, name="x")
    x.output(0).get_tensor().set_names({"x"})
    node = opset1.interpolate(x, opset1.constant(np.array(target, np.int64)), attrs)
    return write_ir(node, [x], tmp_path), node


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize(("shape", "axes", "target", "pads"), [
    ([1, 2, 4, 5], [2, 3], [7, 3], None), ([2, 3, 6], [2], [10], None),
    ([1, 2, 4, 5], [3], [9], ([0, 0, 0, 1], [0, 0, 0, 2])),
    ([1, 1, 3, 4, 5], [2, 4], [5, 8], None), ([3, 5], [0, 1], [2, 8], None),
])
def test_interpolate_1_near_the_cpu_plugins(mode, align_corners, shape, axes, target, pads, tmp_path):
    """As the CPU plugin runs it (converted to Interpolate-4): every mode, align_corners or not, with and without
    pads on resized axes, ranks 2 to 5; within 1e-5 (a few f32 ULP of the weights' sums)."""
    attrs = {"axes": axes, "mode": mode, "align_corners": align_corners}
    if pads:
        attrs.update(pads_begin=pads[0], pads_end=pads[1])
    path, node = _interpolate1(tmp_path, shape, target, attrs)
    check_inference(path)
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    (want,) = cpu_outputs(path, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize(("et", "dtype"), [(ov.Type.u8, np.uint8), (ov.Type.i8, np.int8)], ids=str)
def test_interpolate_1_integers_as_the_reference_of_its_interpolate_4(mode, align_corners, et, dtype, tmp_path):
    """Interpolate-1 has no evaluate; OpenVINO converts it to Interpolate-4 (linear_onnx, cubic -0.75; here
    align_corners or asymmetric), whose reference truncates integer results: ir-run gives that reference's
    output, but where the f32 result lies within a few ULP of an integer (truncation turns the summation
    order's last bit into a unit: at most 1 apart). The CPU plugin rounds to nearest even instead (up to 1
    above the reference, docs/semantics.md)."""
    from tests.helpers.node_eval import evaluate

    x = opset1.parameter([1, 2, 4, 5], et, name="x")
    attrs = {"axes": [2, 3], "mode": mode, "align_corners": align_corners, "antialias": False,
             "pads_begin": [0, 0, 0, 0], "pads_end": [0, 0, 0, 0]}
    path = write_ir(opset1.interpolate(x, _c([7, 3]), attrs), [x], tmp_path)
    data = np.random.default_rng(3).integers(0, 100, (1, 2, 4, 5)).astype(dtype)
    (got,) = ir_runner.load(str(path)).run({"x": data}).values()
    mode4 = "linear_onnx" if mode == "linear" else "cubic"
    as4 = {"axes": _c([2, 3]), "coordinate_transformation_mode": "align_corners" if align_corners else "asymmetric",
           "nearest_mode": "simple", "cube_coeff": -0.75}
    reference = evaluate(opset11.interpolate(x, _c([7, 3]), mode4, "sizes", **as4), [data])
    wide = evaluate(opset11.interpolate(_x([1, 2, 4, 5]), _c([7, 3]), mode4, "sizes", **as4), [data.astype(np.float32)])
    near = np.abs(wide - np.rint(wide)) < 1e-4 * np.maximum(1, np.abs(wide))
    assert got.dtype == dtype and np.array_equal(got[~near], reference[~near])
    assert (np.abs(got.astype(np.int64) - reference)[near] <= 1).all()
    assert np.array_equal(reference, np.trunc(wide).astype(dtype))


@pytest.mark.parametrize("shape", [[1, 2, -1, 4], [1, 2, ov.Dimension(2, 5), 4], ov.PartialShape.dynamic()])
def test_interpolate_1_shapes_as_openvino_infers_them(shape, tmp_path):
    path, node = _interpolate1(tmp_path, ov.PartialShape(shape) if isinstance(shape, list) else shape, [8],
                               {"axes": [3], "mode": "linear"})
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize(("attrs", "message"), [
    ({"mode": "area"}, "mode 'area': no OpenVINO plugin runs it"),
    ({"mode": "nearest", "pads_begin": [1, 0, 0, 0]}, "pad axes that are not resized"),
])
def test_interpolate_1_unsupported_cases_name_the_layer(attrs, message, tmp_path):
    path, _ = _interpolate1(tmp_path, [1, 2, 4, 4], [8], {"axes": [3], **attrs})
    with pytest.raises(ir_runner.UnsupportedError, match=r"Interpolate-1.*" + message):
        ir_runner.load(str(path))


@pytest.mark.parametrize(("axes", "target", "declared"), [("3,2", [7, 8], "1,2,7,8"), ("3,3", [6, 9], "1,2,4,6")])
def test_interpolate_1_axes_are_a_set(axes, target, declared, tmp_path):
    """Interpolate-1's axes are an AxisSet: written "3,2" they are {2, 3}, and target_spatial_shape's values go
    to them in increasing order; a repeated axis counts once (the first value). As the CPU plugin runs them."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x = b.parameter("x", "f32", "1,2,4,5")
    size = b.const("size", np.array(target, np.int64))
    b.result(b.layer("Interpolate", "opset1", [x, size], attrs={"axes": axes, "mode": "linear",
                                                                 "align_corners": "false"},
                     out_specs=[("FP32", declared)], name="resize"))
    path = b.write(tmp_path)
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 2, 4, 5)).astype(np.float32)}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    (want,) = cpu_outputs(path, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("target", "attrs", "message"), [
    (np.array([7.0], np.float32), {}, "target_spatial_shape must have an integer element type"),
    (np.array([7], np.int64), {"pads_begin": "0,0,0,-1"}, "must not be negative"),
])
def test_interpolate_1_refusals_openvino_makes(target, attrs, message, tmp_path):
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x = b.parameter("x", "f32", "1,2,4,5")
    b.result(b.layer("Interpolate", "opset1", [x, b.const("size", target)],
                     attrs={"axes": "3", "mode": "nearest", **attrs}, out_specs=[("FP32", "1,2,4,7")], name="resize"))
    with pytest.raises(IRError, match=r"layer 'resize' \(Interpolate-1.*" + message):
        ir_runner.load(*b.build())

