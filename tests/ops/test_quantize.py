"""FakeQuantize-1: shapes as OpenVINO infers them (type_prop cases), values bit for bit against OpenVINO's
reference (op_reference cases, every element type it computes, bound corners), the CPU plugin where it
agrees, an NNCF-style INT8 convolution, IRErrors, the batch rule and a seeded differential test."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ir_runner
from ir_runner.errors import InferenceError, ModelFormatError, UnsupportedError
from ir_runner.ops.registry import lookup
from ir_runner.types import TensorSpec, element_type, parse_partial_shape
from tests.helpers.cpu_features import require as require_cpu
from tests.helpers.irbuild import IRBuilder

ov = pytest.importorskip("openvino")
from openvino import opset13  # noqa: E402

from tests.helpers.optest import (  # noqa: E402
    check_inference,
    check_output_shapes,
    check_run,
    cpu_outputs,
    reference_outputs,
    write_ir,
)

BF16 = np.dtype(ml_dtypes.bfloat16)
OV_TYPES = {"f32": ov.Type.f32, "f16": ov.Type.f16, "bf16": ov.Type.bf16, "i32": ov.Type.i32,
            "i64": ov.Type.i64, "u32": ov.Type.u32, "u64": ov.Type.u64}
DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": BF16, "i32": np.int32, "i64": np.int64,
          "u32": np.uint32, "u64": np.uint64}


def _fq_model(tmp_path, data_shape, limit_shapes, et="f32", levels=256, auto_broadcast="numpy", const_limits=None):
    """data (and the limits, unless ``const_limits`` gives their values) as Parameters -> FakeQuantize."""
    data = opset13.parameter(data_shape, OV_TYPES[et], name="data")
    params, limits = [data], []
    for name, shape, value in zip(("il", "ih", "ol", "oh"), limit_shapes, const_limits or [None] * 4):
        if value is None:
            node = opset13.parameter(shape, OV_TYPES[et], name=name)
            params.append(node)
        else:
            value = np.asarray(value, dtype=np.float32 if et == "bf16" else DTYPES[et])
            node = opset13.constant(value, OV_TYPES[et])
        limits.append(node)
    node = opset13.fake_quantize(data, *limits, levels, auto_broadcast=auto_broadcast)
    return write_ir(node, params, tmp_path), node


# -- shapes --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "limits"), [
    ([1, 2, 3, 4], [[], [], [], []]),
    ([1, 2, 3, 4], [[3, 1], [1, 2, 3, 4], [4], []]),           # type_prop fake_quantize_autob
    ([1, 3, 1, 1], [[1, 3, 4, 5], [], [], []]),                # a limit wider than data: OpenVINO accepts it
    (ov.PartialShape("[?,3,?,?]"), [[1, 3, 1, 1], [1, 3, 1, 1], [], []]),
    (ov.PartialShape("[1..8,3,2..,4]"), [[1, 3, 1, 1], [3, 1, 4], [1], [4]]),
    (ov.PartialShape.dynamic(), [[1, 3, 1, 1], [], [], []]),
    ([], [[], [], [], []]),
    ([0, 3], [[3], [3], [], []]),
])
def test_inferred_shapes_equal_declared(tmp_path, data, limits):
    path, node = _fq_model(tmp_path, data, limits)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize(("data", "limits", "mode"), [
    ([1, 2, 3, 4], [[2, 3, 4]] * 4, "none"),
    ([1, 2, 3, 4], [[1, 2, 3, 4]] * 4, "none"),
    (ov.PartialShape("[?,2,3]"), [[2, 1, 3]] * 4, "none"),
    ([1, 2, 5, 5], [[1, 2, 5, 5]] * 4, "none"),
    ([1, 2, 5, 5], [[2, 1, 1]] * 4, "pdpd"),      # pdpd with OpenVINO's default axis
])
def test_inferred_shapes_other_broadcasts(tmp_path, data, limits, mode):
    try:
        path, node = _fq_model(tmp_path, data, limits, auto_broadcast=mode)
    except RuntimeError:
        # OpenVINO refuses it: so must ir-run (built by hand)
        b = IRBuilder()
        shape = ",".join(str(d) if d is not None else "?" for d in data) if isinstance(data, list) else str(data)[1:-1]
        ins = [b.parameter("data", "f32", shape)] + [b.parameter(f"l{i}", "f32", ",".join(map(str, s)))
                                                     for i, s in enumerate(limits)]
        b.result(b.layer("FakeQuantize", "opset1", ins, attrs={"levels": 5, "auto_broadcast": mode}))
        with pytest.raises(InferenceError, match=f"auto_broadcast={mode}"):
            ir_runner.load(b.build()[0])
        return
    check_inference(path)
    check_output_shapes(path, node)


def _hand_built(attrs, limit_shapes=("", "", "", ""), et="f32", limit_types=None, data_shape="1,2,3,4"):
    b = IRBuilder()
    ins = [b.parameter("data", et, data_shape)]
    for i, shape in enumerate(limit_shapes):
        ins.append(b.parameter(f"l{i}", (limit_types or [et] * 4)[i], shape))
    b.result(b.layer("FakeQuantize", "opset1", ins, attrs=attrs, name="fq"))
    return b.build()[0]


@pytest.mark.parametrize(("xml", "error", "match"), [
    (_hand_built({"levels": 5}, ("3", "", "", "")), InferenceError, r"input_low \[3\] does not broadcast"),
    (_hand_built({"levels": 5}, ("", "", "", "2,3")), InferenceError, "output_high"),
    (_hand_built({"levels": 5, "auto_broadcast": "none"}, ("", "", "", "")), InferenceError, "auto_broadcast=none"),
    (_hand_built({"levels": 5, "auto_broadcast": "bogus"}), ModelFormatError, "auto_broadcast"),
    (_hand_built({}), ModelFormatError, "'levels' is missing"),
    (_hand_built({"levels": 1}), ModelFormatError, "at least 2"),
    (_hand_built({"levels": 0}), ModelFormatError, "at least 2"),
    (_hand_built({"levels": "-3"}), ModelFormatError, "at least 2"),
    (_hand_built({"levels": "many"}), ModelFormatError, "not an integer"),
    (_hand_built({"levels": 256}, limit_types=["f32", "f16", "f32", "f32"]), InferenceError, "input_high must have"),
    (_hand_built({"levels": 256}, et="i8"), UnsupportedError, "FakeQuantize of i8"),
    (_hand_built({"levels": 256}, et="f64"), UnsupportedError, "FakeQuantize of f64"),
])
def test_bad_layers_name_layer_and_port(xml, error, match):
    with pytest.raises(error, match=match) as info:
        ir_runner.load(xml)
    assert "fq" in str(info.value)
    assert "FakeQuantize-1" in str(info.value)


def test_error_names_the_port():
    with pytest.raises(InferenceError) as info:
        ir_runner.load(_hand_built({"levels": 5}, ("", "", "7", "")))
    assert info.value.port is not None and "output_low" in info.value.port


# -- values against the reference ----------------------------------------------------------------------------

@pytest.mark.parametrize("et", ["f32", "f16"])
@pytest.mark.parametrize(("shape", "limits", "levels", "mode", "want"), [
    ([1, 2, 3, 4], [0, 23, 2, 16], 4, "numpy", None),
    ([1, 2, 3, 4], [3, 17, 2, 16], 5, "numpy", [2, 2, 2, 2, 2, 5.5, 5.5, 5.5, 5.5, 9, 9, 9, 12.5, 12.5, 12.5, 12.5]
     + [16] * 8),
    ([1, 2, 5, 5], [[[[5]], [[30]]], [[[10]], [[40]]], [[[0]], [[50]]], [[[20]], [[70]]]], 5, "numpy", None),
    ([1, 2, 5, 5], [[[[5]], [[30]]], [[[10]], [[40]]], [[[0]], [[50]]], [[[20]], [[70]]]], 5, "none", None),
])
def test_op_reference_cases(tmp_path, et, shape, limits, levels, mode, want):
    limits = [np.broadcast_to(np.asarray(v, np.float32), shape) if mode == "none" else np.asarray(v, np.float32)
              for v in limits]
    path, _ = _fq_model(tmp_path, shape, [v.shape for v in limits], et, levels, mode, const_limits=limits)
    check_inference(path)
    x = np.arange(int(np.prod(shape)), dtype=DTYPES[et]).reshape(shape)
    got = check_run(path, {"data": x})
    if want is not None:
        assert np.array_equal(next(iter(got.values())).reshape(-1), np.asarray(want, DTYPES[et]))


def test_pdpd_axis_places_the_limits(tmp_path):
    """pdpd with an explicit axis (as op_reference's AutoBroadcastSpec(PDPD, 1)): [2,1,1] limits on [1,2,5,5]."""
    b = IRBuilder()
    data = b.parameter("data", "f32", "1,2,5,5")
    lims = [b.const(f"l{i}", np.asarray(v, np.float32).reshape(2, 1, 1))
            for i, v in enumerate(([5, 30], [10, 40], [0, 50], [20, 70]))]
    b.result(b.layer("FakeQuantize", "opset1", [data, *lims],
                     attrs={"levels": 5, "auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": 1}))
    model = ir_runner.load(b.build()[0], weights=b.bin)
    got = next(iter(model.run({"data": np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5)}).values()))
    want = [0, 0, 0, 0, 0, 0, 5, 10, 10, 15] + [20] * 15 + [50] * 7 + [55, 55, 60, 60, 60, 65, 65] + [70] * 11
    assert got.reshape(-1).tolist() == want


def _x(rng, shape, et):
    if et in ("f32", "f16", "bf16"):
        return (rng.standard_normal(shape) * 3).astype(np.float32).astype(DTYPES[et])
    info = np.iinfo(DTYPES[et])
    if rng.random() < 0.3:  # the whole range: wrapping differences and products
        return rng.integers(info.min, info.max, shape, dtype=DTYPES[et], endpoint=True)
    return rng.integers(max(info.min, -20), 40, shape).astype(DTYPES[et])


@pytest.mark.parametrize("et", list(OV_TYPES))
def test_corners_bit_exact(tmp_path, et):
    """Equal bounds, input_low > input_high, NaN/inf data (floats), levels 2 to 65536, per-channel limits
    (negative limits wrap for the unsigned types)."""
    dtype = DTYPES[et]
    floats = et in ("f32", "f16", "bf16")
    shape = [2, 3, 4]
    rng = np.random.default_rng(7)
    x = _x(rng, shape, et)
    if floats:
        x[0, 0, :3] = np.array([np.nan, np.inf, -np.inf], np.float32).astype(dtype)
    il = np.array([[1], [5], [-2]]).astype(dtype)        # channel 1: input_low > input_high
    ih = np.array([[1], [0], [3]]).astype(dtype)         # channel 0: equal bounds
    with np.errstate(over="ignore"):
        ol, oh = np.array([[0, -1, 2, 7]]).astype(dtype), np.array([10, 3, -4, 7]).astype(dtype)
    for levels in (2, 3, 256, 65536):
        path, _ = _fq_model(tmp_path, shape, [[3, 1], [3, 1], [1, 4], [4]], et, levels)
        check_run(path, {"data": x, "il": il, "ih": ih, "ol": ol, "oh": oh})


def test_f16_and_bf16_round_once_from_f32(tmp_path):
    """f16/bf16 are computed in f32 and rounded once (not per operation): with 255 levels over [0, 1) the
    results are seldom representable; bf16 rounds as OpenVINO's class (not to nearest even)."""
    rng = np.random.default_rng(3)
    for et in ("f16", "bf16"):
        path, _ = _fq_model(tmp_path, [4096], [[], [], [], []], et, 255,
                            const_limits=[-0.37, 0.91, -1.3, 2.7])
        x = rng.uniform(-0.5, 1, 4096).astype(np.float32).astype(DTYPES[et])
        got = check_run(path, {"data": x})
        value = next(iter(got.values())).astype(np.float32)
        if et == "bf16":  # the quirk matters here: ml_dtypes' nearest-even rounding gives other bits
            f32 = _reference_f32(x.astype(np.float32), -0.37, 0.91, -1.3, 2.7, 255, BF16)
            assert not np.array_equal(f32.astype(BF16).view(np.uint16), value.astype(BF16).view(np.uint16))


def _reference_f32(x, il, ih, ol, oh, levels, dtype):
    il, ih, ol, oh = (np.float32(np.float32(v).astype(dtype)) for v in (il, ih, ol, oh))
    steps = np.float32(levels - 1)
    q = np.rint((x - il) / (ih - il) * steps) / steps * (oh - ol) + ol
    return np.where(x <= min(il, ih), ol, np.where(x > max(il, ih), oh, q)).astype(np.float32)


def test_limits_wider_than_data_read_index_zero(tmp_path):
    """data [1,3,1,2] with input_low [2,1,3,4,2]: OpenVINO accepts it; the reference reads the first elements of
    the limit's buffer as if it had only the dims matching data's."""
    rng = np.random.default_rng(5)
    path, _ = _fq_model(tmp_path, [1, 3, 1, 2], [[2, 1, 3, 4, 2], [3, 4, 1], [], [1, 1, 4, 1]])
    feeds = {"data": _x(rng, (1, 3, 1, 2), "f32"), "il": rng.standard_normal((2, 1, 3, 4, 2)).astype(np.float32) - 2,
             "ih": rng.standard_normal((3, 4, 1)).astype(np.float32) + 2, "ol": np.float32(-1).reshape(()),
             "oh": rng.standard_normal((1, 1, 4, 1)).astype(np.float32)}
    check_inference(path)
    check_run(path, feeds)


def test_empty_and_scalar(tmp_path):
    path, _ = _fq_model(tmp_path, [0, 3], [[3], [3], [], []])
    z = np.zeros(3, np.float32)
    check_run(path, {"data": np.zeros((0, 3), np.float32), "il": z, "ih": z + 1, "ol": np.float32(0).reshape(()),
                     "oh": np.float32(1).reshape(())})
    path, _ = _fq_model(tmp_path, [], [[], [], [], []], "i64", 7)
    one = np.int64(1).reshape(())
    check_run(path, {"data": np.int64(9).reshape(()), "il": one * 2, "ih": one * 30, "ol": one * -5, "oh": one * 5})


@pytest.mark.parametrize("seed", range(6))
def test_cpu_plugin_within_a_few_eps_of_the_range(tmp_path, seed):
    """The CPU plugin (f32 inference precision) computes FakeQuantize as ``round(x * scale + shift) * scale' +
    shift'`` (other roundings): its results are within 3 eps of the larger limit's magnitude of the reference's,
    never a whole quantization step away (measured: at most 2.5 eps over 20 seeds)."""
    rng = np.random.default_rng(seed)
    low = np.zeros((1, 8, 1, 1), np.float32) if seed % 2 else -rng.uniform(1, 4, (1, 8, 1, 1)).astype(np.float32)
    high = rng.uniform(1, 4, (1, 8, 1, 1)).astype(np.float32)
    path, _ = _fq_model(tmp_path, [2, 8, 5, 5], [[1, 8, 1, 1]] * 4, "f32", [256, 255, 16][seed % 3],
                        const_limits=[low, high, low, high])
    x = rng.uniform(-5, 5, (2, 8, 5, 5)).astype(np.float32)
    got = next(iter(check_run(path, {"data": x}).values()))
    want = cpu_outputs(path, {"data": x})[0]
    bound = 3 * np.finfo(np.float32).eps * np.maximum(np.abs(low), np.abs(high))
    assert (np.abs(got - want) <= bound).all()


# -- an INT8 model as NNCF writes it -------------------------------------------------------------------------

def _nncf_int8_convolution(tmp_path):
    """Const weights -> FakeQuantize (255 levels, symmetric, per output channel) and the activation ->
    FakeQuantize (256 levels, signed symmetric with NNCF's integer zero point: [-s, s * 127/128]) ->
    Convolution -> bias, with ``[out, act, wq]`` as outputs: (path, x, act, wq, bias, feeds, ir-run's outputs)."""
    rng = np.random.default_rng(2)
    x = opset13.parameter([1, 4, 9, 9], ov.Type.f32, name="x")
    lo, hi = (opset13.constant(np.float32(v)) for v in (-2.5, 2.5 * 127 / 128))
    act = opset13.fake_quantize(x, lo, hi, lo, hi, 256)
    weights = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    scale = np.abs(weights).reshape(6, -1).max(axis=1).reshape(6, 1, 1, 1).astype(np.float32)
    wq = opset13.fake_quantize(opset13.constant(weights), opset13.constant(-scale), opset13.constant(scale),
                               opset13.constant(-scale), opset13.constant(scale), 255)
    conv = opset13.convolution(act, wq, [1, 1], [1, 1], [1, 1], [1, 1])
    bias = rng.standard_normal((1, 6, 1, 1)).astype(np.float32)
    out = opset13.add(conv, opset13.constant(bias))
    path = write_ir([out, act, wq], [x], tmp_path)
    feeds = {"x": rng.uniform(-3, 3, (1, 4, 9, 9)).astype(np.float32)}
    return path, x, act, wq, bias, feeds, list(ir_runner.load(path).run(feeds).values())


def test_nncf_style_int8_convolution(tmp_path):
    """The NNCF-style int8 convolution (``_nncf_int8_convolution``) loads, infers the declared dims and runs.
    The FakeQuantize outputs are bit-exact against the reference; the output within 2e-5 of a float64
    convolution of them."""
    path, x, act, wq, bias, feeds, got = _nncf_int8_convolution(tmp_path)
    assert check_inference(path).complete
    assert len(np.unique(got[2])) <= 255 and len(np.unique(got[1])) <= 256
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(got[1].astype(np.float64), [(0, 0)] * 2 + [(1, 1)] * 2),
                                                       (3, 3), axis=(2, 3))
    exact = np.einsum("nchwij,ocij->nohw", windows, got[2].astype(np.float64)) + bias
    np.testing.assert_allclose(got[0], exact, rtol=0, atol=2e-5)
    # the quantized activation and weights, bit for bit (the reference has no Convolution evaluate: cut the graph)
    check_run(write_ir([act, wq], [x], tmp_path, "fq_only"), feeds)


def test_nncf_style_int8_convolution_as_the_cpu_plugin(tmp_path):
    """The same within 2e-5 of the CPU plugin's int8 kernel, where that kernel multiplies exactly (VNNI)."""
    require_cpu("vnni")
    path, *_, feeds, got = _nncf_int8_convolution(tmp_path)
    np.testing.assert_allclose(got[0], cpu_outputs(path, feeds)[0], rtol=0, atol=2e-5)


def test_cpu_plugin_shifts_a_non_integer_zero_point(tmp_path):
    """Documented CPU plugin difference: an activation FakeQuantize over [-2.5, 2.5] with 256 levels (zero point
    127.5) before a Convolution runs in the CPU plugin's INT8 kernel with a rounded zero point: its output is off
    by a whole fraction of a step; ir-run follows the reference."""
    x = opset13.parameter([1, 2, 4, 4], ov.Type.f32, name="x")
    lo, hi = (opset13.constant(np.float32(v)) for v in (-2.5, 2.5))
    act = opset13.fake_quantize(x, lo, hi, lo, hi, 256)
    w = np.full((1, 2, 1, 1), 0.5, np.float32)
    wq = opset13.fake_quantize(opset13.constant(w), *(opset13.constant(np.float32(v)) for v in (-1, 1, -1, 1)), 255)
    path = write_ir(opset13.convolution(act, wq, [1, 1], [0, 0], [0, 0], [1, 1]), [x], tmp_path)
    feeds = {"x": np.random.default_rng(0).uniform(-2, 2, (1, 2, 4, 4)).astype(np.float32)}
    got = next(iter(ir_runner.load(path).run(feeds).values()))
    assert np.abs(got - cpu_outputs(path, feeds)[0]).max() > 1e-3


# -- batch ---------------------------------------------------------------------------------------------------

def _spec(shape: str) -> TensorSpec:
    return TensorSpec(element_type("f32"), parse_partial_shape(shape))


def test_batch_rule():
    op = lookup("FakeQuantize", "opset1")
    numpy = {"levels": 256, "mode": "numpy", "axis": 0}
    specs = [_spec("8,3,4"), _spec("1,3,1"), _spec("3,1"), _spec(""), _spec("4")]
    assert op.batch(numpy, specs, [_spec("8,3,4")], [0, None, None, None, None]) == [0]
    assert op.batch(numpy, specs, [_spec("8,3,4")], [None] * 5) == [None]
    per_row = [_spec("8,3,4"), _spec("8,3,4"), _spec(""), _spec(""), _spec("")]
    assert op.batch(numpy, per_row, [_spec("8,3,4")], [0, 0, None, None, None]) == [0]
    assert isinstance(op.batch(numpy, per_row, [_spec("8,3,4")], [0, None, None, None, None]), str)
    assert isinstance(op.batch(numpy, specs, [_spec("8,3,4")], [None, 0, None, None, None]), str)
    pdpd = {"levels": 256, "mode": "pdpd", "axis": 0}
    lims = [_spec("8,3"), _spec(""), _spec(""), _spec(""), _spec("")]
    assert op.batch(pdpd, lims, [_spec("8,3")], [0, None, None, None, None]) == [0]


def test_chunked_run_equals_whole_run(tmp_path):
    """ir_runner.dask runs FakeQuantize and FakeConvert block by block over the batch axis, bit-identical to the
    whole run; a constant limit spanning the batch axis is refused before any work, naming the layer and port."""
    dask_run = pytest.importorskip("ir_runner.dask").run
    x = opset13.parameter(ov.PartialShape("[?,3,4]"), ov.Type.f32, name="data")
    limits = [opset13.constant(np.full((1, 3, 1), v, np.float32)) for v in (-1.0, 2.0, -4.0, 4.0)]
    fq = opset13.fake_quantize(x, *limits, 16)
    fc = opset13.fake_convert(fq, opset13.constant(np.float32([[[0.5], [2.0], [4.0]]])), None, "f8e5m2")
    path = write_ir(fc, [x], tmp_path)
    data = np.random.default_rng(1).standard_normal((6, 3, 4)).astype(np.float32)
    whole = next(iter(ir_runner.load(path).run({"data": data}).values()))
    blocks = next(iter(dask_run(str(path), {"data": data}, chunk=2).values())).compute(scheduler="synchronous")
    assert np.array_equal(blocks, whole)
    per_row = opset13.constant(np.zeros((6, 3, 4), np.float32))
    x = opset13.parameter(ov.PartialShape("[?,3,4]"), ov.Type.f32, name="data")
    path = write_ir(opset13.fake_quantize(x, per_row, *limits[1:], 16), [x], tmp_path, "rows")
    with pytest.raises(ir_runner.IRError, match="FakeQuantize") as info:
        dask_run(str(path), {"data": data}, chunk=2)
    assert "input_low" in str(info.value) and "a block of 2 rows does not fit" in str(info.value)


# -- differential --------------------------------------------------------------------------------------------

_SHAPES = [(), (1,), (4,), (3, 1), (3, 4), (1, 3, 1), (2, 3, 4), (2, 1, 4), (2, 1, 1), (1, 1, 4)]


@pytest.mark.parametrize("seed", range(30))
def test_differential(tmp_path, seed):
    rng = np.random.default_rng(seed)
    et = list(OV_TYPES)[seed % len(OV_TYPES)]
    shape = (2, 3, 4)
    limit_shapes = [_SHAPES[rng.integers(len(_SHAPES))] for _ in range(4)]
    levels = int(rng.choice([2, 3, 15, 16, 255, 256, 65536, int(rng.integers(2, 1 << 20))]))
    path, _ = _fq_model(tmp_path, list(shape), [list(s) for s in limit_shapes], et, levels)
    x = _x(rng, shape, et)
    feeds = {"data": x}
    for k, (name, s) in enumerate(zip(("il", "ih", "ol", "oh"), limit_shapes)):
        if et in ("f32", "f16", "bf16"):
            v = rng.standard_normal(s) * 2 + (2 if k % 2 else -2) * rng.random()
            if rng.random() < 0.1:
                v = np.round(v)  # ties and equal bounds
            feeds[name] = np.asarray(v, np.float32).astype(DTYPES[et])
        else:
            feeds[name] = _x(rng, s, et) if s else _x(rng, (1,), et).reshape(())
    check_inference(path)
    got = check_run(path, feeds)
    assert next(iter(got.values())).dtype == DTYPES[et]


def test_reference_helper_is_the_oracle(tmp_path):
    """(The bf16 feeds reach the reference as bf16: a sanity check of the test's own plumbing.)"""
    path, _ = _fq_model(tmp_path, [3], [[], [], [], []], "bf16", 4, const_limits=[0, 1, 0, 3])
    x = np.array([0.2, 0.5, 2], np.float32).astype(BF16)
    want = reference_outputs(path, {"data": x})[0]
    assert want.dtype == BF16 and want.astype(np.float32).tolist() == [1.0, 2.0, 3.0]


# -- FakeConvert-13 ------------------------------------------------------------------------------------------

FC_TYPES = ("f32", "f16", "bf16")


def _fc_model(tmp_path, data_shape, scale_shape, shift_shape, et="f32", dst="f8e4m3"):
    data = opset13.parameter(data_shape, OV_TYPES[et], name="data")
    scale = opset13.parameter(scale_shape, OV_TYPES[et], name="scale")
    params = [data, scale]
    shift = None
    if shift_shape is not None:
        shift = opset13.parameter(shift_shape, OV_TYPES[et], name="shift")
        params.append(shift)
    node = opset13.fake_convert(data, scale, shift, dst)
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize(("data", "scale", "shift"), [
    ([2, 3, 4], [], []), ([1, 3, 5, 5], [1, 3, 1, 1], [1, 3, 1, 1]), ([2, 3, 4], [4], None),
    (ov.PartialShape("[?,3,1..4]"), [1, 3, 1], [1, 3, 1]), (ov.PartialShape("[?,?]"), [1, 5], [1, 5]),
    (ov.PartialShape.dynamic(), [1, 3, 1], [1, 3, 1]), ([], [], []), ([0, 3], [3], [3]),
])
def test_fake_convert_shapes(tmp_path, data, scale, shift):
    path, node = _fc_model(tmp_path, data, scale, shift)
    check_inference(path)
    check_output_shapes(path, node)


def _fc_hand_built(attrs, shapes=("2,3,4", "", ""), types=("f32", "f32", "f32")):
    b = IRBuilder()
    ins = [b.parameter(name, et, shape) for name, et, shape in zip(("data", "scale", "shift"), types, shapes)]
    b.result(b.layer("FakeConvert", "opset13", ins, attrs=attrs, name="fc"))
    return b.build()[0]


@pytest.mark.parametrize(("xml", "error", "match"), [
    (_fc_hand_built({"destination_type": "f8e4m3"}, ("2,3,4", "5", "5")), InferenceError, "does not broadcast"),
    (_fc_hand_built({"destination_type": "f8e4m3"}, ("3,4", "2,3,4", "2,3,4")), InferenceError, "one way only"),
    (_fc_hand_built({"destination_type": "f8e4m3"}, ("2,3,4", "1,3,1", "")), InferenceError,
     "not compatible with scale"),
    (_fc_hand_built({"destination_type": "f8e4m3"}, types=("f32", "f16", "f32")), InferenceError, "must be equal"),
    (_fc_hand_built({"destination_type": "f8e4m3"}, types=("f64", "f64", "f64")), InferenceError,
     "f32, f16 or bf16"),
    (_fc_hand_built({"destination_type": "f16"}), ModelFormatError, "destination_type"),
    (_fc_hand_built({}), ModelFormatError, "'destination_type' is missing"),
])
def test_fake_convert_bad_layers(xml, error, match):
    with pytest.raises(error, match=match) as info:
        ir_runner.load(xml)
    assert "fc" in str(info.value) and "FakeConvert-13" in str(info.value)


_FC_SHAPES = [((2, 3, 4), ()), ((1, 3, 5, 5), (1, 3, 1, 1)), ((2, 3, 4), (4,)), ((2, 3, 4), (2, 3, 4)),
              ((2, 3, 4), (3, 1)), ((4, 3), (1, 3)), ((5,), (1,))]


@pytest.mark.parametrize("seed", range(24))
def test_fake_convert_differential(tmp_path, seed):
    """Random magnitudes (flushed to zero, subnormal, saturating), NaN and infinities, every type and both
    destinations, with and without shift, against the reference bit for bit."""
    rng = np.random.default_rng(seed)
    et, dst = FC_TYPES[seed % 3], ("f8e4m3", "f8e5m2")[seed // 3 % 2]
    data_shape, scale_shape = _FC_SHAPES[seed % len(_FC_SHAPES)]
    with_shift = seed % 4 != 3
    path, _ = _fc_model(tmp_path, list(data_shape), list(scale_shape), list(scale_shape) if with_shift else None,
                        et, dst)
    x = rng.standard_normal(data_shape) * rng.choice([1e-4, 1e-2, 1, 30, 500, 1e5], data_shape)
    x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf][: x.size]
    with np.errstate(over="ignore"):
        feeds = {"data": x.astype(np.float32).astype(DTYPES[et]),
                 "scale": rng.uniform(0.05, 20, scale_shape).astype(np.float32).astype(DTYPES[et])}
    if with_shift:
        feeds["shift"] = (rng.standard_normal(scale_shape) * rng.choice([0, 1, 10])).astype(np.float32).astype(
            DTYPES[et])
    check_run(path, feeds)


@pytest.mark.parametrize("dst", ["f8e4m3", "f8e5m2"])
def test_fake_convert_f8_corners(tmp_path, dst):
    """Every f16 value through the f8 emulation (scale 1, shift 0), against the reference: rounding ties,
    subnormals, saturation, NaN payloads."""
    path, _ = _fc_model(tmp_path, [1 << 16], [], [], "f16", dst)
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    check_run(path, {"data": every, "scale": np.float16(1).reshape(()), "shift": np.float16(0).reshape(())})


def test_fake_convert_empty(tmp_path):
    path, _ = _fc_model(tmp_path, [0, 3], [3], [3], "bf16", "f8e5m2")
    one = np.ones(3, np.float32).astype(BF16)
    check_run(path, {"data": np.zeros((0, 3), BF16), "scale": one, "shift": one})


def test_fake_convert_batch_rule():
    op = lookup("FakeConvert", "opset13")
    specs = [_spec("8,3,4"), _spec("1,3,1"), _spec("1,3,1")]
    assert op.batch({"dst": "f8e4m3"}, specs, [_spec("8,3,4")], [0, None, None]) == [0]
    assert isinstance(op.batch({"dst": "f8e4m3"}, specs, [_spec("8,3,4")], [None, 0, None]), str)


def test_pdpd_axis_follows_the_spec_where_the_reference_ignores_it(tmp_path):
    """Documented difference: limits [3] on data [2,3,4] with pdpd axis 1 lie along axis 1 (the spec's pdpd);
    OpenVINO's reference ignores the axis and aligns them right (reading them as if along the last axis), and
    the CPU plugin refuses the layer. ir-run follows the spec."""
    b = IRBuilder()
    data = b.parameter("data", "f32", "2,3,4")
    lims = [b.const(f"l{i}", np.asarray(v, np.float32))
            for i, v in enumerate(([-1, 0, 1], [1, 2, 3], [0, 0, 0], [10, 20, 30]))]
    b.result(b.layer("FakeQuantize", "opset1", [data, *lims],
                     attrs={"levels": 5, "auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": 1}))
    xml, weights = b.build()
    (tmp_path / "m.xml").write_bytes(xml)
    (tmp_path / "m.bin").write_bytes(weights)
    x = np.linspace(-2, 4, 24, dtype=np.float32).reshape(2, 3, 4)
    got = next(iter(ir_runner.load(tmp_path / "m.xml").run({"data": x}).values()))
    low, high, top = (np.array(v, np.float32).reshape(3, 1) for v in ([-1, 0, 1], [1, 2, 3], [10, 20, 30]))
    q = np.rint((x - low) / (high - low) * np.float32(4)) / np.float32(4) * top
    want = np.where(x <= low, np.float32(0), np.where(x > high, top, q)).astype(np.float32)
    assert np.array_equal(got, want)
    assert not np.array_equal(reference_outputs(tmp_path / "m.xml", {"data": x})[0], want)


@pytest.mark.parametrize("seed", range(4))
def test_fake_convert_cpu_plugin_within_one_ulp(tmp_path, seed):
    """The CPU plugin's FakeConvert (f32) is within 1 ULP of the reference's (its last division rounds
    differently); a NaN input, which the reference saturates to +448 (f8e4m3) or keeps (f8e5m2), gives a
    negative saturated value in the CPU plugin (documented; not compared)."""
    rng = np.random.default_rng(seed)
    dst, shape = ("f8e4m3", "f8e5m2")[seed % 2], [(), (1, 3, 1, 1)][seed // 2]
    x = opset13.parameter([2, 3, 4, 4], ov.Type.f32, name="data")
    node = opset13.fake_convert(x, opset13.constant(rng.uniform(0.05, 20, shape).astype(np.float32)),
                                opset13.constant((rng.standard_normal(shape) * 3).astype(np.float32)), dst)
    path = write_ir(node, [x], tmp_path)
    data = (rng.standard_normal((2, 3, 4, 4)) * rng.choice([1e-3, 1, 100, 1e5], (2, 3, 4, 4))).astype(np.float32)
    data.reshape(-1)[:2] = [np.inf, -np.inf]
    check_run(path, {"data": data}, ulp=1, oracle="cpu")
    check_run(path, {"data": data})


def test_zoo_squeezenet_quantized_as_nncf_does(tmp_path):
    """SqueezeNet from the ONNX zoo (tests/helpers/zoo.py) quantized as NNCF does it: every Convolution's
    activation through a 256-level FakeQuantize over its traced range (unsigned [0, max] after a ReLU, signed
    [-s, s * 127/128] otherwise) and its weights through a 255-level symmetric per-output-channel one. The IR
    OpenVINO writes validates (inferred equal declared) and runs; its output is within 2e-3 of the CPU plugin's
    INT8 run and much closer to it than to the float model (the quantization error: 8e-3 measured), where the
    plugin's int8 convolutions multiply exactly (VNNI; without it the two were 0.031 apart)."""
    pytest.importorskip("onnx", reason="the zoo CNNs need the onnx package")
    from tests.helpers.zoo import zoo_ir

    xml = zoo_ir("squeezenet")
    feeds = dict(np.load(xml.parent / "inputs.npz"))
    original = ir_runner.load(str(xml))
    traced = {r.layer.name: r.value for r in original.trace(feeds).layers}
    model = ov.Core().read_model(str(xml))
    for conv in [op for op in model.get_ordered_ops() if op.get_type_name() == "Convolution"]:
        source = conv.input_value(0)
        value = traced[source.get_node().get_friendly_name()]
        if value.min() >= 0:
            low, high = np.float32(0), np.float32(value.max())
        else:
            scale = max(-float(value.min()), float(value.max()))
            low, high = np.float32(-scale), np.float32(scale * 127 / 128)
        limits = [opset13.constant(v) for v in (low, high, low, high)]
        conv.input(0).replace_source_output(opset13.fake_quantize(source, *limits, 256).output(0))
        weights = conv.input_value(1)
        w = weights.get_node().get_data().astype(np.float32)
        scale = np.abs(w).reshape(len(w), -1).max(axis=1).reshape((-1,) + (1,) * (w.ndim - 1)).astype(np.float32)
        limits = [opset13.constant(v) for v in (-scale, scale, -scale, scale)]
        conv.input(1).replace_source_output(opset13.fake_quantize(weights, *limits, 255).output(0))
    model.validate_nodes_and_infer_types()
    path = tmp_path / "int8.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    check_inference(path)
    got = next(iter(ir_runner.load(path).run(feeds).values()))
    require_cpu("vnni")
    cpu = cpu_outputs(path, feeds)[0]
    float_model = next(iter(original.run(feeds).values()))
    assert np.abs(got - cpu).max() < 2e-3
    assert np.abs(got - cpu).max() < 0.25 * np.abs(got - float_model).max()
    assert got.argmax() == cpu.argmax()
