"""Convolution, GroupConvolution, ConvolutionBackpropData, GroupConvolutionBackpropData, DeformableConvolution-8
and -1 (opset1..opset7: v8 without mask and without bilinear_interpolation_pad).

Shape cases follow OpenVINO's type_prop tests (convolution.cpp, group_convolution.cpp,
convolution_backprop_data.cpp, deformable_convolution.cpp): static, dynamic and interval dims, dynamic rank,
every auto_pad. Values are compared with OpenVINO CPU (f32 hint): convolutions have no Node.evaluate in the
core, their reference lives in the template plugin. Bound: 2·K·eps·Σ|x·w| (K = C_in/group × kernel volume),
checked here as 4·K·eps·K·max|x|·max|w| (the CPU plugin's own rounding on top of ours).

BinaryConvolution-1: shapes as OpenVINO infers them, values bit for bit against a loop written from OpenVINO's
reference (``ov::reference::binary_convolution``; the core node has no evaluate and the CPU plugin's f32 path
does not follow its own filter packing) for strides, dilations, pads, auto_pad, pad values, f32/f16/bf16 data;
errors naming the layer; the batch rule."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402
from openvino import opset8 as o8  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.fuzz_misc import binary_conv_reference, u1_constant  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import (  # noqa: E402
    assert_close,
    check_inference,
    check_output_shapes,
    check_run,
    cpu_outputs,
    write_ir,
)

F32 = ov.Type.f32
PADS = ("explicit", "valid", "same_upper", "same_lower")


def ps(*dims):
    """A partial shape: ints, -1 (dynamic) or (lo, hi) intervals; None: dynamic rank."""
    if dims == (None,):
        return ov.PartialShape.dynamic()
    return ov.PartialShape([ov.Dimension(*d) if isinstance(d, tuple) else ov.Dimension(d) for d in dims])


def _const(shape, rng=None):
    rng = rng or np.random.default_rng(0)
    return o8.constant(rng.standard_normal(shape).astype(np.float32))


TYPE_PROP = [
    # Convolution: data, filters (static shape of a Const, or a Parameter's partial shape), attributes
    ("conv", ps(64, 3, 100, 150), (128, 3, 10, 20), dict(strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0],
                                                         dilations=[1, 1])),
    ("conv", ps(-1, 3, (10, 20), -1), (4, 3, 3, 3), dict(strides=[2, 1], pads_begin=[1, 0], pads_end=[2, 1],
                                                          dilations=[1, 2])),
    ("conv", ps((1, 4), 3, (5, 30), (2, 100)), (4, 3, 3, 3), dict(strides=[3, 2], pads_begin=[0, 0],
                                                                   pads_end=[0, 0], dilations=[2, 1],
                                                                   auto_pad="same_upper")),
    ("conv", ps(1, 3, (5, 30), 7), (4, 3, 3, 3), dict(strides=[3, 2], pads_begin=[0, 0], pads_end=[0, 0],
                                                       dilations=[1, 1], auto_pad="same_lower")),
    ("conv", ps(2, 3, 9), (4, 3, 3), dict(strides=[2], pads_begin=[4], pads_end=[0], dilations=[3],
                                         auto_pad="valid")),
    ("conv", ps(1, 2, 5, 6, 7), (3, 2, 2, 3, 1), dict(strides=[1, 2, 3], pads_begin=[0, 1, 2], pads_end=[1, 0, 3],
                                                       dilations=[2, 1, 1])),
    ("conv", ps(None), (4, 3, 3, 3), dict(strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], dilations=[1, 1])),
    ("conv", ps(1, -1, 8, 8), ps(-1, -1, -1, -1), dict(strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0],
                                                        dilations=[1, 1])),
    ("conv", ps(1, 3, -1, 8), ps(5, 3, 2, -1), dict(strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1],
                                                     dilations=[1, 1], auto_pad="same_upper")),
    ("group", ps(1, 6, 10, 10), (3, 4, 2, 3, 3), dict(strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1],
                                                       dilations=[1, 1])),
    ("group", ps(-1, -1, (4, 9), 10), (3, 4, 2, 3, 3), dict(strides=[2, 2], pads_begin=[0, 0], pads_end=[0, 0],
                                                             dilations=[1, 1], auto_pad="same_lower")),
    ("group", ps(2, (4, 8), 10), (2, 1, 3, 3), dict(strides=[1], pads_begin=[0], pads_end=[0], dilations=[1])),
    ("backprop", ps(1, 16, 2, 2), (16, 6, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1],
                                                       dilations=[1, 1], output_padding=[1, 1])),
    ("backprop", ps(-1, 4, (3, 7), -1), (4, 2, 3, 2), dict(strides=[2, 3], pads_begin=[0, 1], pads_end=[2, 0],
                                                            dilations=[1, 2])),
    ("backprop", ps(1, 4, 5, 5), (4, 2, 3, 3), dict(strides=[2, 2], output_shape=[9, 11], auto_pad="same_upper")),
    ("backprop", ps(-1, 4, 5, -1), (4, 2, 3, 3), dict(strides=[2, 2], output_shape=[9, 11],
                                                       auto_pad="same_lower")),
    ("backprop", ps(1, 4, 5), (4, 2, 3), dict(strides=[3], auto_pad="valid", output_padding=[2])),
    ("group_backprop", ps(1, 4, 5, 5, 5), (2, 2, 3, 1, 2, 3), dict(strides=[1, 2, 2], pads_begin=[0, 0, 1],
                                                                    pads_end=[1, 0, 0], dilations=[1, 1, 2])),
    ("group_backprop", ps(-1, -1, 6, 6), (2, 2, 3, 3, 3), dict(strides=[2, 2], output_shape=[12, 13],
                                                                auto_pad="same_upper")),
    ("deformable", ps(1, 4, 5, 5), (2, 4, 3, 3), dict(strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0],
                                                       dilations=[1, 1])),
    ("deformable", ps(-1, 4, (4, 9), 6), (2, 2, 2, 2), dict(strides=[1, 2], pads_begin=[1, 0], pads_end=[0, 1],
                                                             dilations=[1, 1], group=2, deformable_group=2,
                                                             mask=True)),
    ("deformable", ps(2, 4, 7, 7), (4, 4, 3, 3), dict(strides=[2, 2], pads_begin=[0, 0], pads_end=[0, 0],
                                                       dilations=[1, 1], auto_pad="same_upper", mask=True)),
]


def _build(kind, data_shape, filters, attrs, rng=None):
    """The node and its Parameters for one case; offsets and mask of DeformableConvolution are Parameters
    shaped like the output (as OpenVINO's tests make them)."""
    attrs = dict(attrs)
    data = o8.parameter(data_shape, F32, name="x")
    params = [data]
    if isinstance(filters, ov.PartialShape):
        weights = o8.parameter(filters, F32, name="w")
        params.append(weights)
    else:
        weights = _const(filters, rng)
    auto_pad = attrs.pop("auto_pad", "explicit")
    if kind in ("conv", "group"):
        make = o8.convolution if kind == "conv" else o8.group_convolution
        return make(data, weights, attrs["strides"], attrs["pads_begin"], attrs["pads_end"], attrs["dilations"],
                    auto_pad), params
    if kind in ("backprop", "group_backprop"):
        make = o8.convolution_backprop_data if kind == "backprop" else o8.group_convolution_backprop_data
        n = len(attrs["strides"])
        shape = attrs.pop("output_shape", None)
        node = make(data, weights, strides=attrs["strides"],
                    output_shape=None if shape is None else o8.constant(np.array(shape, np.int64)),
                    pads_begin=attrs.get("pads_begin", [0] * n), pads_end=attrs.get("pads_end", [0] * n),
                    dilations=attrs.get("dilations", [1] * n), auto_pad=auto_pad,
                    output_padding=attrs.get("output_padding", [0] * n))
        return node, params
    group, dgroup = attrs.get("group", 1), attrs.get("deformable_group", 1)
    probe = o8.convolution(o8.parameter(data_shape, F32), o8.parameter(
        [filters[0], filters[1] * group, *filters[2:]], F32), attrs["strides"], attrs["pads_begin"],
        attrs["pads_end"], attrs["dilations"], auto_pad).get_output_partial_shape(0)
    taps = filters[2] * filters[3]
    offsets = o8.parameter([probe[0], 2 * dgroup * taps, probe[2], probe[3]], F32, name="offsets")
    params.append(offsets)
    mask = None
    if attrs.get("mask"):
        mask = o8.parameter([probe[0], dgroup * taps, probe[2], probe[3]], F32, name="mask")
        params.append(mask)
    node = o8.deformable_convolution(data, offsets, weights, attrs["strides"], attrs["pads_begin"],
                                     attrs["pads_end"], attrs["dilations"], mask, auto_pad, group, dgroup,
                                     attrs.get("bilinear_pad", False))
    return node, params


def check_shapes(path, node) -> None:
    """Inferred equals declared; a port cannot declare an interval (``10..20`` is written as -1), so the
    layer's inferred output is also compared with OpenVINO's own inference of it, intervals included."""
    expected = str(node.get_output_partial_shape(0)).replace(" ", "")
    if ".." in expected or any(".." in str(i.get_partial_shape()) for i in node.inputs()):
        report = ir_runner.validate(str(path))
        assert report.ok, str(report)
        [info] = [i for i in report.layers if i.ref.type_version.startswith(node.get_type_name())]
        assert str(info.checks[-1].spec.shape) == expected
    else:
        check_inference(path)


@pytest.mark.parametrize("case", range(len(TYPE_PROP)))
def test_inferred_equals_declared(case, tmp_path):
    node, params = _build(*TYPE_PROP[case])
    check_shapes(write_ir(node, params, tmp_path), node)


def _edit(path, old: str, new: str):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old,new,words", [
    ('strides="1, 1"', 'strides="1"', "strides"),
    ('dilations="1, 1"', 'dilations="0,1"', "dilations"),
    ('pads_end="0, 0"', 'pads_end="0,0,0"', "pads"),
    ('auto_pad="explicit"', 'auto_pad="sideways"', "auto_pad"),
])
def test_bad_attributes_name_the_layer(old, new, words, tmp_path):
    node, params = _build("conv", ps(1, 3, 8, 8), (4, 3, 3, 3), dict(strides=[1, 1], pads_begin=[0, 0],
                                                                     pads_end=[0, 0], dilations=[1, 1]))
    path = _edit(write_ir(node, params, tmp_path), old, new)
    with pytest.raises(ir_runner.IRError) as raised:
        ir_runner.load(str(path))
    assert "Convolution" in str(raised.value) and words in str(raised.value)


def test_channel_mismatch_and_oversized_kernel_are_refused(tmp_path):
    node, params = _build("conv", ps(1, 3, 8, 8), (4, 3, 3, 3), dict(strides=[1, 1], pads_begin=[0, 0],
                                                                     pads_end=[0, 0], dilations=[1, 1]))
    path = write_ir(node, params, tmp_path)
    text = re.sub(r"<dim>1</dim>(\s*)<dim>3</dim>", r"<dim>1</dim>\1<dim>5</dim>", path.read_text())
    text = text.replace('shape="1,3,8,8"', 'shape="1,5,8,8"')
    with pytest.raises(ir_runner.IRError, match="channels"):
        ir_runner.load(text.encode(), weights=path.with_suffix(".bin").read_bytes())
    with pytest.raises(ir_runner.IRError, match="larger than the padded data"):
        ir_runner.load(str(_edit(path, 'dilations="1, 1"', 'dilations="9, 1"')))


def _tolerance(x, w, k, dtype=np.float32):
    eps = float(np.finfo(dtype).eps)
    rtol = 4 * k * eps
    return rtol, rtol * k * float(np.abs(x).max(initial=0)) * float(np.abs(w).max(initial=0))


def _differential(seed, tmp_path):
    rng = np.random.default_rng(seed)
    kind = ("conv", "group", "backprop", "group_backprop", "deformable")[seed % 5]
    n = 2 if kind == "deformable" else int(rng.integers(1, 4))
    group = int(rng.integers(1, 4)) if kind != "conv" and kind != "backprop" else 1
    cg, cog = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    kernel = [int(k) for k in rng.integers(1, 4, size=n)]
    spatial = [int(s) for s in rng.integers(4, 9 if n < 3 else 6, size=n)]
    strides = [int(s) for s in rng.integers(1, 4, size=n)]
    dilations = [int(d) for d in rng.integers(1, 3, size=n)]
    pads_begin = [int(p) for p in rng.integers(0, 3, size=n)]
    pads_end = [int(p) for p in rng.integers(0, 3, size=n)]
    auto_pad = PADS[int(rng.integers(0, 4))]
    batch = int(rng.integers(1, 3))
    attrs = dict(strides=strides, pads_begin=pads_begin, pads_end=pads_end, dilations=dilations, auto_pad=auto_pad)
    x = rng.standard_normal((batch, group * cg, *spatial)).astype(np.float32)
    if kind == "conv":
        filters = (cog, cg, *kernel)
    elif kind == "group":
        filters = (group, cog, cg, *kernel)
    elif kind == "backprop":
        filters = (cg, cog, *kernel)
        attrs["output_padding"] = [int(rng.integers(0, s)) for s in strides]
        if rng.random() < 0.3 and auto_pad != "valid":
            attrs["output_shape"] = [int(s) for s in rng.integers(3, 12, size=n)]
    elif kind == "group_backprop":
        filters = (group, cg, cog, *kernel)
        attrs["output_padding"] = [int(rng.integers(0, s)) for s in strides]
    else:
        filters = (group * cog, cg, *kernel)
        attrs.update(group=group, deformable_group=int(rng.choice([d for d in (1, group * cg) if group * cg % d == 0])),
                     mask=bool(rng.random() < 0.5), bilinear_pad=bool(rng.random() < 0.5))
    if kind in ("backprop", "group_backprop") and attrs.get("output_shape") is None and auto_pad.startswith("same"):
        attrs["auto_pad"] = "explicit"
    try:
        node, params = _build(kind, ps(*x.shape), filters, attrs, rng)
    except RuntimeError:
        return None  # OpenVINO refuses the combination (kernel larger than the padded data): nothing to run
    if any(d.get_length() == 0 for d in node.get_output_partial_shape(0)):
        return None
    path = write_ir(node, params, tmp_path)
    feeds = {"x": x}
    for p in params[1:]:
        feeds[p.get_friendly_name()] = (rng.standard_normal(p.get_output_shape(0)) *
                                        (2 if p.get_friendly_name() == "offsets" else 1)).astype(np.float32)
    w = node.input_value(2 if kind == "deformable" else 1).get_node().get_data()
    k = cg * int(np.prod(kernel)) * (2 if kind == "deformable" else 1)
    return path, feeds, _tolerance(x, w, k + (8 if kind == "deformable" else 0))


@pytest.mark.parametrize("seed", range(40))
def test_differential(seed, tmp_path):
    made = _differential(seed, tmp_path)
    if made is None:
        pytest.skip("OpenVINO refuses this combination")
    path, feeds, (rtol, atol) = made
    check_inference(path)
    try:
        ov.Core().compile_model(str(path), "CPU")
    except RuntimeError as error:  # oneDNN lacks some deconvolution geometries; ir-run still runs them
        ir_runner.load(str(path)).run(feeds)
        pytest.skip(f"OpenVINO CPU cannot compile this case: {str(error)[:80]}")
    check_run(path, feeds, rtol=rtol, atol=atol, oracle="cpu")


@pytest.mark.parametrize("group, cg, cog, strides, dilations, auto_pad", [
    (1, 64, 8, [1, 1], [1, 1], "explicit"),
    (1, 64, 32, [2, 2], [1, 1], "same_upper"),
    (2, 64, 4, [2, 1], [2, 1], "explicit"),
    (1, 72, 3, [3, 2], [1, 2], "same_lower"),
])
def test_tap_sum_path(group, cg, cog, strides, dilations, auto_pad, tmp_path):
    """Few output channels from many input channels: one matmul per kernel tap on the flat tap runs (stride
    phase planes, rows between windows cropped)."""
    rng = np.random.default_rng(group * cg + cog)
    x = rng.standard_normal((2, group * cg, 11, 9)).astype(np.float32)
    filters = (group, cog, cg, 3, 3) if group > 1 else (cog, cg, 3, 3)
    attrs = dict(strides=strides, pads_begin=[1, 2], pads_end=[2, 0], dilations=dilations, auto_pad=auto_pad)
    node, params = _build("group" if group > 1 else "conv", ps(*x.shape), filters, attrs, rng)
    path = write_ir(node, params, tmp_path)
    check_inference(path)
    w = node.input_value(1).get_node().get_data()
    rtol, atol = _tolerance(x, w, cg * 9)
    check_run(path, {"x": x}, rtol=rtol, atol=atol, oracle="cpu")


def test_tap_sum_integers_wrap(tmp_path):
    """The tap-sum path on integers: products and sums modulo 2**32 as the reference's ``T sum``."""
    rng = np.random.default_rng(11)
    data = o8.parameter([1, 64, 5, 5], ov.Type.i32, name="x")
    w = rng.integers(-3, 4, size=(4, 64, 3, 3)).astype(np.int32)
    node = o8.convolution(data, o8.constant(w), [1, 1], [1, 1], [1, 1], [1, 1])
    path = write_ir(node, [data], tmp_path)
    x = rng.integers(-5, 6, size=(1, 64, 5, 5)).astype(np.int32)
    check_run(path, {"x": x}, oracle="cpu")
    big = np.full((1, 64, 5, 5), 2**28, dtype=np.int32)
    got = next(iter(ir_runner.load(str(path)).run({"x": big}).values()))
    exact = sum(int(v) for v in w[0, :, 1:, 1:].reshape(-1)) * 2**28  # output (0, 0) sees taps 1..2 x 1..2
    assert got.dtype == np.int32 and int(got[0, 0, 0, 0]) == (exact + 2**31) % 2**32 - 2**31


@pytest.mark.parametrize("strides, dilations", [([2, 2], [1, 1]), ([1, 2], [2, 1]), ([3, 3], [2, 2])])
def test_depthwise_wide(strides, dilations, tmp_path):
    """Depthwise (and channel-multiplier 2) convolutions on many channels (the first two cases are large
    enough to be split across threads)."""
    rng = np.random.default_rng(strides[0] * 10 + dilations[0])
    x = rng.standard_normal((1, 128, 72, 70)).astype(np.float32)
    for cog in (1, 2):
        attrs = dict(strides=strides, pads_begin=[1, 1], pads_end=[1, 2], dilations=dilations, auto_pad="explicit")
        node, params = _build("group", ps(*x.shape), (128, cog, 1, 3, 3), attrs, rng)
        path = write_ir(node, params, tmp_path)
        w = node.input_value(1).get_node().get_data()
        rtol, atol = _tolerance(x, w, 9)
        check_run(path, {"x": x}, rtol=rtol, atol=atol, oracle="cpu")


def test_resnet_block_values(tmp_path):
    rng = np.random.default_rng(7)
    data = o8.parameter([1, 8, 14, 14], F32, name="x")
    conv = o8.convolution(data, _const((16, 8, 3, 3), rng), [2, 2], [1, 1], [1, 1], [1, 1])
    dw = o8.group_convolution(conv, _const((16, 1, 1, 3, 3), rng), [1, 1], [1, 1], [1, 1], [1, 1])
    point = o8.convolution(dw, _const((8, 16, 1, 1), rng), [1, 1], [0, 0], [0, 0], [1, 1])
    up = o8.convolution_backprop_data(point, _const((8, 4, 2, 2), rng), strides=[2, 2])
    path = write_ir(up, [data], tmp_path)
    check_inference(path)
    got = check_run(path, {"x": rng.standard_normal((1, 8, 14, 14)).astype(np.float32)}, rtol=1e-4, atol=1e-3,
                    oracle="cpu")
    assert next(iter(got.values())).shape == (1, 4, 14, 14)


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_other_float_types(dtype, tmp_path):
    """f16 (the reference sums in f16; ir-run in f32, rounded once) and f64 keep their element type; the CPU
    plugin computes both in f32, hence the tolerance of the coarser type."""
    rng = np.random.default_rng(3)
    et = ov.Type.f16 if dtype == np.float16 else ov.Type.f64
    data = o8.parameter([1, 3, 6, 6], et, name="x")
    w = rng.standard_normal((2, 3, 3, 3)).astype(dtype)
    node = o8.convolution(data, o8.constant(w), [1, 1], [1, 1], [1, 1], [1, 1])
    path = write_ir(node, [data], tmp_path)
    check_inference(path)
    x = rng.standard_normal((1, 3, 6, 6)).astype(dtype)
    rtol, atol = _tolerance(x, w, 27, np.float16 if dtype == np.float16 else np.float32)
    got = check_run(path, {"x": x}, rtol=rtol, atol=atol, oracle="cpu")
    assert next(iter(got.values())).dtype == dtype


def test_integer_convolution_wraps_like_the_reference(tmp_path):
    """The reference sums ``T sum`` products: modulo 2**bits for integers. Small values agree with the CPU
    plugin; large ones wrap (computed here exactly in Python ints)."""
    rng = np.random.default_rng(5)
    data = o8.parameter([1, 2, 4, 4], ov.Type.i32, name="x")
    w = rng.integers(-3, 4, size=(2, 2, 2, 2)).astype(np.int32)
    node = o8.convolution(data, o8.constant(w), [1, 1], [0, 0], [0, 0], [1, 1])
    path = write_ir(node, [data], tmp_path)
    check_inference(path)
    x = rng.integers(-5, 6, size=(1, 2, 4, 4)).astype(np.int32)
    check_run(path, {"x": x}, oracle="cpu")
    big = np.full((1, 2, 4, 4), 2**30, dtype=np.int32)
    got = next(iter(ir_runner.load(str(path)).run({"x": big}).values()))
    exact = sum(int(v) for v in w[0].reshape(-1)) * 2**30
    assert got.dtype == np.int32 and int(got[0, 0, 0, 0]) == (exact + 2**31) % 2**32 - 2**31


def test_batch_rule_keeps_axis_zero_only():
    from ir_runner.ops.toolkit.window import batch_axis_zero

    assert batch_axis_zero({}, [None, None], [None], [0, None]) == [0]
    assert isinstance(batch_axis_zero({}, [None, None], [None], [2, None]), str)
    assert isinstance(batch_axis_zero({}, [None, None], [None], [0, 0]), str)


@pytest.mark.parametrize("kind, filters, strides, begin, end", [
    ("conv", (4, 3, 3, 3), [1, 2], [-1, 0], [1, -2]),  # im2col on a cropped (non-contiguous) input
    ("conv", (5, 3, 1, 1), [1, 1], [-2, 0], [0, -1]),  # 1x1: one matmul on the cropped input
    ("group", (3, 2, 1, 3, 3), [1, 1], [0, -1], [-1, 1]),  # depthwise
])
def test_negative_pads_crop(kind, filters, strides, begin, end, tmp_path):
    """Negative pads crop the input before the window, on each kernel path. OpenVINO neither evaluates nor
    compiles them, so the oracle is OpenVINO CPU on the cropped input with the non-negative pads."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 9, 10)).astype(np.float32)
    attrs = dict(strides=strides, pads_begin=begin, pads_end=end, dilations=[1, 1], auto_pad="explicit")
    node, params = _build(kind, ps(*x.shape), filters, attrs, rng)
    path = write_ir(node, params, tmp_path, "negative")
    check_inference(path)
    w = node.input_value(1).get_node().get_data()
    crop = x[:, :, max(-begin[0], 0):x.shape[2] - max(-end[0], 0), max(-begin[1], 0):x.shape[3] - max(-end[1], 0)]
    clipped = dict(attrs, pads_begin=[max(p, 0) for p in begin], pads_end=[max(p, 0) for p in end])
    data = o8.parameter(list(crop.shape), F32, name="x")
    make = o8.convolution if kind == "conv" else o8.group_convolution
    oracle = write_ir(make(data, o8.constant(w), **clipped), [data], tmp_path, "cropped")
    got = next(iter(ir_runner.load(str(path)).run({"x": x}).values()))
    want = cpu_outputs(oracle, {"x": np.ascontiguousarray(crop)})[0]
    rtol, atol = _tolerance(x, w, int(np.prod(filters[-3:])))
    assert got.shape == want.shape
    assert_close("out", got, want, rtol, atol)


def _naive_backprop(x, w, strides, dilations, begin, target):
    """``out[o] += x[i] * w[k]`` for ``o = i*stride - begin + k*dilation`` inside the output, in f64 (grouped w)."""
    g, cig, cog = w.shape[:3]
    out = np.zeros((x.shape[0], g, cog, *target))
    xs = x.reshape(x.shape[0], g, cig, *x.shape[2:]).astype(np.float64)
    for i in np.ndindex(*x.shape[2:]):
        for k in np.ndindex(*w.shape[3:]):
            o = tuple(a * s - b + t * d for a, s, b, t, d in zip(i, strides, begin, k, dilations))
            if all(0 <= p < n for p, n in zip(o, target)):
                out[(slice(None),) * 3 + o] += np.einsum("ngc,gcm->ngm", xs[(Ellipsis,) + i], w[(Ellipsis,) + k])
    return out.reshape(x.shape[0], g * cog, *target)


@pytest.mark.parametrize("seed", range(12))
def test_backprop_prepared_paths(seed):
    """The prepared transposed convolution (one bincount over a precomputed index map for small float
    layers), the per-call kernel (one strided add per tap) and integer data agree with a naive loop."""
    from ir_runner.ops.conv_pool._conv_backprop import BackpropKernel, backprop
    rng = np.random.default_rng(seed)
    n = 1 + seed % 3
    g, cig, cog, batch = int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4)), 1 + seed % 2
    kernel = tuple(int(k) for k in rng.integers(1, 4, size=n))
    strides = tuple(int(s) for s in rng.integers(1, 4, size=n))
    dilations = tuple(int(d) for d in rng.integers(1, 3, size=n))
    begin = tuple(int(p) for p in rng.integers(0, 3, size=n))
    end = tuple(int(p) for p in rng.integers(0, 3, size=n))
    out_pad = tuple(int(rng.integers(0, s)) for s in strides)
    x = rng.standard_normal((batch, g * cig, *rng.integers(2, 6 if n < 3 else 4, size=n))).astype(np.float32)
    w = rng.standard_normal((g, cig, cog, *kernel)).astype(np.float32)
    params = dict(strides=strides, dilations=dilations, pads_begin=begin, pads_end=end, auto_pad="explicit",
                  output_padding=out_pad, grouped=True)
    plain = backprop(x, w, **params)
    want = _naive_backprop(x, w, strides, dilations, begin, plain.shape[2:])
    prepared = BackpropKernel(x.shape, x.dtype, w.shape, target=None, w=w, prepared=True, **params)
    assert (prepared.scatter is not None) != prepared.empty
    k = cig * int(np.prod(kernel))
    atol = 2 * k * float(np.finfo(np.float32).eps) * float(np.abs(x).max()) * float(np.abs(w).max()) * k
    for got in (plain, prepared(x, w)):
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)
    xi, wi = (rng.integers(-50, 50, size=a.shape).astype(np.int8) for a in (x, w))
    got = BackpropKernel(xi.shape, xi.dtype, wi.shape, target=None, w=wi, prepared=True, **params)(xi, wi)
    exact = _naive_backprop(xi, wi, strides, dilations, begin, plain.shape[2:]).astype(np.int64)
    assert got.dtype == np.int8 and np.array_equal(got, exact.astype(np.int8))  # integers wrap as int8


def test_backprop_large_layer_uses_strided_adds(tmp_path):
    """A transposed convolution too large for the index map (strided adds per tap), against OpenVINO CPU."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 16, 24, 24)).astype(np.float32)
    attrs = dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], dilations=[1, 1], auto_pad="explicit",
                 output_padding=[1, 1])
    from ir_runner.ops.conv_pool._conv_backprop import SCATTER_MAX
    assert 16 * 9 * 24 * 24 > SCATTER_MAX  # products of the matmul: more than the index map takes
    node, params = _build("backprop", ps(*x.shape), (16, 16, 3, 3), attrs, rng)
    path = write_ir(node, params, tmp_path)
    w = node.input_value(1).get_node().get_data()
    rtol, atol = _tolerance(x, w, 16 * 9)
    check_run(path, {"x": x}, rtol=rtol, atol=atol, oracle="cpu")


def test_a_negative_output_shape_fed_at_run_time_is_refused_naming_the_layer():
    """ConvolutionBackpropData-1's output_shape [-3,5] left the output's shape unknown and the kernel failed
    (KernelError, exit 7); a known negative element is refused, a huge one by the memory limit."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x = b.parameter("x", "f32", "1,2,3,3")
    w = b.const("w", np.ones((2, 1, 2, 2), np.float32))
    size = b.parameter("size", "i64", "2")
    attrs = {"strides": "1,1", "dilations": "1,1", "pads_begin": "0,0", "pads_end": "0,0", "auto_pad": "explicit"}
    b.result(b.layer("ConvolutionBackpropData", "opset1", [x, w, size], attrs=attrs,
                     out_specs=[("FP32", [1, 1, -1, -1])]))
    model = ir_runner.load(*b.build())
    data = np.ones((1, 2, 3, 3), np.float32)
    with pytest.raises(ir_runner.InputError, match="ConvolutionBackpropData-1.*element 0 of output_shape is -3"):
        model.run({"x": data, "size": np.array([-3, 5])})
    with pytest.raises(ir_runner.ResourceLimitError, match="ConvolutionBackpropData-1"):
        model.run({"x": data, "size": np.array([2**40, 2**40])})
    (out,) = model.run({"x": data, "size": np.array([4, 4])}).values()
    assert out.shape == (1, 1, 4, 4)


@pytest.mark.parametrize("stride,pad,output_padding", [(2, 1, 1), (1, 0, 0)])
def test_backprop_of_an_empty_axis_gives_zeros_of_the_inferred_shape(stride, pad, output_padding, tmp_path):
    """An input axis of 0: OpenVINO's interval arithmetic clamps 0 - 1 to 0 and infers a non-empty output
    ([1,4,6,2] here); the kernel computed (0 - 1)·stride and returned 0 elements where model.outputs said 2
    (found by scripts/fuzz_ir.py on models/real/cnn_onnx)."""
    x = o8.parameter([1, 8, 3, -1], np.float32, name="x")
    w = o8.constant(np.ones((8, 4, 3, 3), np.float32))
    attrs = dict(pads_begin=[pad, pad], pads_end=[pad, pad], output_padding=[output_padding] * 2)
    model = ir_runner.load(write_ir(o8.convolution_backprop_data(x, w, [stride, stride], **attrs), [x], tmp_path))
    (out,) = model.run({"x": np.ones((1, 8, 3, 0), np.float32)}).values()
    static = o8.convolution_backprop_data(o8.parameter([1, 8, 3, 0], np.float32), w, [stride, stride], **attrs)
    assert out.shape == tuple(static.get_output_partial_shape(0).to_shape())
    assert model.outputs[0].partial_shape.accepts(out.shape) and not out.any()


@pytest.mark.parametrize("kind, x_shape, filters, strides, dilations, pads", [
    ("conv", (1, 24, 9, 13), (40, 24, 1, 1), [1, 1], [1, 1], [0, 0]),       # pointwise, one image
    ("group", (2, 24, 9, 13), (3, 5, 8, 1, 1), [1, 1], [1, 1], [0, 0]),     # grouped pointwise, a batch
    ("conv", (2, 6, 11, 10), (7, 6, 3, 2), [2, 1], [1, 2], [1, 2]),         # im2col: strides, dilations, pads
    ("conv", (1, 5, 8, 9, 7), (4, 5, 2, 3, 1), [1, 2, 1], [2, 1, 1], [1, 0, 2]),  # 3-D
    ("conv", (1, 4, 1, 3), (6, 4, 1, 1), [1, 1], [1, 1], [0, 0]),           # 3 positions (split in 2)
])
def test_products_split_over_the_pool(kind, x_shape, filters, strides, dilations, pads, tmp_path, monkeypatch):
    """A convolution's product split by columns over the pool (ir_runner.blas, its threshold lowered to reach
    these small cases) gives the same values within the bound, whatever the split."""
    from ir_runner import blas, parallel

    monkeypatch.setattr(blas, "SPLIT_MIN_MACS", 8)
    monkeypatch.setattr(parallel, "_WORKERS", 3)
    splits = []
    real = blas.run_pieces
    monkeypatch.setattr(blas, "run_pieces", lambda pieces, work: splits.append(pieces) or real(pieces, work))
    rng = np.random.default_rng(len(x_shape) * 7 + filters[0])
    x = rng.standard_normal(x_shape).astype(np.float32)
    n = len(x_shape) - 2
    attrs = dict(strides=strides, pads_begin=pads, pads_end=pads[::-1], dilations=dilations, auto_pad="explicit")
    node, params = _build(kind, ps(*x.shape), filters, attrs, rng)
    path = write_ir(node, params, tmp_path)
    w = node.input_value(1).get_node().get_data()
    k = int(np.prod(w.shape[-n - 1:]))
    rtol, atol = _tolerance(x, w, k)
    check_run(path, {"x": x}, rtol=rtol, atol=atol, oracle="cpu")
    assert splits, "the product was not split"


def test_split_products_of_integers_wrap(tmp_path, monkeypatch):
    """Integer pointwise convolution split over the pool: products and sums wrap as the reference's."""
    from ir_runner import blas, parallel

    monkeypatch.setattr(blas, "SPLIT_MIN_MACS", 8)
    monkeypatch.setattr(parallel, "_WORKERS", 2)
    data = o8.parameter([1, 3, 4, 5], ov.Type.i32, name="x")
    w = np.array([[[[7]], [[-5]], [[3]]], [[[1]], [[1]], [[1]]]], np.int32)
    node = o8.convolution(data, o8.constant(w), [1, 1], [0, 0], [0, 0], [1, 1])
    path = write_ir(node, [data], tmp_path)
    x = np.full((1, 3, 4, 5), 2**29, np.int32)
    x[0, 1] = -(2**30)
    got = next(iter(ir_runner.load(str(path)).run({"x": x}).values()))
    want = np.int64(2**29) * (7 + 3) + np.int64(-(2**30)) * -5, np.int64(2**29) * 2 - 2**30
    wrapped = [(int(v) + 2**31) % 2**32 - 2**31 for v in want]
    assert got.dtype == np.int32 and (got[0, 0] == wrapped[0]).all() and (got[0, 1] == wrapped[1]).all()


# -- BinaryConvolution-1 ------------------------------------------------------------------------------------

BINARY_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _binary_model(tmp_path, shape, bits, strides=(1, 1), pads=((0, 0), (0, 0)), dilations=(1, 1), pad_value=0.0,
           auto_pad="explicit", et="f32"):
    x = opset1.parameter(shape, getattr(ov.Type, et), name="x")
    x.output(0).get_tensor().set_names({"x"})
    node = opset1.binary_convolution(x, u1_constant(bits), list(strides), list(pads[0]), list(pads[1]), list(dilations),
                                     "xnor-popcount", pad_value, auto_pad)
    return write_ir(node, [x], tmp_path), node


@pytest.mark.parametrize(("strides", "pads", "dilations", "pad_value"), [
    ((1, 1), ((0, 0), (0, 0)), (1, 1), 0.0), ((2, 1), ((1, 0), (0, 2)), (1, 1), 1.0),
    ((1, 2), ((2, 1), (1, 1)), (2, 1), 0.0), ((1, 1), ((1, 1), (1, 1)), (1, 2), -1.0),
    ((3, 3), ((0, 0), (0, 0)), (2, 2), 1.0),
])
def test_binary_conv_values_equal_the_references_loop(strides, pads, dilations, pad_value, tmp_path):
    rng = np.random.default_rng(sum(strides) + sum(dilations))
    bits = rng.random((3, 2, 2, 3)) < 0.5
    path, node = _binary_model(tmp_path, [2, 2, 6, 7], bits, strides, pads, dilations, pad_value)
    x = (rng.random((2, 2, 6, 7)) < 0.5).astype(np.float32)
    x[0, 0, 0, :3] = (0.5, -1, 2)  # (values other than 0 and 1 match neither bit)
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    assert got.tolist() == binary_conv_reference(x, bits, strides, pads, dilations, pad_value).tolist()
    check_output_shapes(path, node)


@pytest.mark.parametrize("auto_pad", ["same_upper", "same_lower", "valid"])
def test_binary_conv_auto_pad(auto_pad, tmp_path):
    rng = np.random.default_rng(5)
    bits = rng.random((2, 3, 3, 2)) < 0.5
    path, node = _binary_model(tmp_path, [1, 3, 5, 5], bits, strides=(2, 1), auto_pad=auto_pad, pad_value=1.0)
    x = (rng.random((1, 3, 5, 5)) < 0.5).astype(np.float32)
    (got,) = ir_runner.load(str(path)).run({"x": x}).values()
    pads = {"valid": ((0, 0), (0, 0)), "same_upper": ((1, 0), (1, 1)), "same_lower": ((1, 1), (1, 0))}[auto_pad]
    assert got.tolist() == binary_conv_reference(x, bits, (2, 1), pads, (1, 1), 1.0).tolist()
    check_output_shapes(path, node)


@pytest.mark.parametrize("et", ["f16", "bf16"])
def test_binary_conv_narrow_types_count_in_their_type(et, tmp_path):
    """bf16 counts stop at 256 (256 + 1 rounds to 256), f16 at 2048: a 1x1 kernel over 300 matching channels."""
    bits = np.ones((1, 300, 1, 1), bool)
    path, _ = _binary_model(tmp_path, [1, 300, 1, 1], bits, et=et)
    (got,) = ir_runner.load(str(path)).run({"x": np.ones((1, 300, 1, 1), BINARY_TYPES[et])}).values()
    assert got.dtype == BINARY_TYPES[et] and float(got.reshape(-1)[0]) == (256 if et == "bf16" else 300)


@pytest.mark.parametrize("shape", [[-1, 2, -1, 7], [ov.Dimension(1, 3), 2, 6, ov.Dimension(5, 9)],
                                   ov.PartialShape.dynamic()])
def test_binary_conv_shapes_as_openvino_infers_them(shape, tmp_path):
    bits = np.ones((3, 2, 2, 3), bool)
    path, node = _binary_model(tmp_path, ov.PartialShape(shape) if isinstance(shape, list) else shape, bits, (2, 1),
                        ((1, 0), (0, 1)))
    assert ir_runner.validate(str(path)).ok
    check_output_shapes(path, node)


@pytest.mark.parametrize(("data", "filters", "attrs", "message"), [
    (("i32", "1,2,4,4"), ("u1", (3, 2, 2, 2)), {}, "data must have a floating-point element type"),
    (("f32", "1,2,4,4"), ("u8", (3, 2, 2, 2)), {}, r"filters must be u1 \(packed bits\), got u8"),
    (("f32", "1,3,4,4"), ("u1", (3, 2, 2, 2)), {}, r"data channels \(3\) do not match filter input channels \(2\)"),
    (("f32", "1,2,4,4"), ("u1", (3, 2, 2, 2)), {"mode": "xor"}, "mode='xor' is not one of xnor-popcount"),
    (("f32", "1,2,4,4,4"), ("u1", (3, 2, 2, 2, 2)), {}, "expected a 4D tensor for the data"),
])
def test_binary_conv_invalid_models_are_refused_naming_the_layer(data, filters, attrs, message):
    b = IRBuilder("binary_conv")
    x = b.parameter("x", *data)
    n = len(filters[1]) - 2
    w = b.packed_const("w", bytes((int(np.prod(filters[1])) + 7) // 8 * (8 if filters[0] == "u8" else 1)),
                       filters[0], filters[1])
    data_attrs = {"strides": ",".join(["1"] * n), "dilations": ",".join(["1"] * n), "pads_begin": ",".join(["0"] * n),
                  "pads_end": ",".join(["0"] * n), "mode": "xnor-popcount", "pad_value": "0", **attrs}
    b.result(b.layer("BinaryConvolution", "opset1", [x, w], attrs=data_attrs, out_specs=[("FP32", [1, 3, 3, 3])],
                     name="bconv"))
    with pytest.raises(ir_runner.IRError, match=r"layer 'bconv' \(BinaryConvolution-1.*" + message):
        ir_runner.load(*b.build())


def test_binary_conv_batch_axis_zero():
    op = lookup("BinaryConvolution", "opset1")
    assert op.batch({}, None, [None], [0, None]) == [0]


@pytest.mark.parametrize(("group", "dgroup", "strides", "pads", "dilations"), [
    (1, 1, [1, 1], [0, 0], [1, 1]), (2, 2, [2, 1], [1, 0], [1, 1]), (1, 2, [1, 1], [1, 1], [2, 1]),
])
def test_deformable_convolution_1_near_the_cpu_plugins(group, dgroup, strides, pads, dilations, tmp_path):
    """DeformableConvolution-1 is v8 without mask and without bilinear_interpolation_pad: within v8's bound
    ((2·K + 8)·eps·max|x|·max|w|·K, tests/ops/test_conv.py) of the CPU plugin; offsets push samples outside."""
    rng = np.random.default_rng(group + dgroup)
    x = rng.standard_normal((2, 4, 6, 7)).astype(np.float32)
    w = rng.standard_normal((4, 4 // group, 3, 2)).astype(np.float32)
    data = opset1.parameter([-1, 4, 6, 7], ov.Type.f32, name="x")
    probe = opset1.convolution(opset1.parameter([2, 4, 6, 7], ov.Type.f32), opset1.constant(
        np.zeros((4, 4, 3, 2), np.float32)), strides, pads, pads, dilations).get_output_partial_shape(0)
    offsets = opset1.parameter([2, 2 * dgroup * 6, probe[2].get_length(), probe[3].get_length()], ov.Type.f32,
                               name="offsets")
    for p in (data, offsets):
        p.output(0).get_tensor().set_names({p.get_friendly_name()})
    node = opset1.deformable_convolution(data, offsets, opset1.constant(w), strides, pads, pads, dilations,
                                         group=group, deformable_group=dgroup)
    path = write_ir(node, [data, offsets], tmp_path)
    check_inference(path)
    feeds = {"x": x, "offsets": (rng.standard_normal(offsets.get_output_shape(0)) * 2).astype(np.float32)}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    (want,) = cpu_outputs(path, feeds)
    k = 4 // group * 6
    bound = (2 * k + 8) * float(np.finfo(np.float32).eps) * k * np.abs(x).max() * np.abs(w).max()
    assert np.abs(got - want).max() <= bound
    assert lookup("DeformableConvolution", "opset7").label == "DeformableConvolution-1"
    assert lookup("DeformableConvolution", "opset8").label == "DeformableConvolution-8"
