"""MaxPool-1/8/14, AvgPool-1/14/16, AdaptiveAvgPool-8, AdaptiveMaxPool-8.

Shape cases follow OpenVINO's type_prop tests (max_pool.cpp, avg_pool.cpp, adaptive_*_pool.cpp): rounding
types, auto_pad modes, dynamic and interval dims. MaxPool values are compared bit for bit with the reference
(Node.evaluate), NaN, -inf and padding included; AvgPool and the adaptive pools with OpenVINO CPU (they have
no Node.evaluate): AvgPool within 4·K·eps·max|x|, AdaptiveMaxPool exactly."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset14, opset16  # noqa: E402
from openvino import opset8 as o8  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.optest import assert_close, check_inference, check_run, cpu_outputs, write_ir  # noqa: E402
from tests.ops.test_conv import check_shapes, ps  # noqa: E402

F32 = ov.Type.f32
ROUNDINGS = ("floor", "ceil", "ceil_torch")
PADS = ("explicit", "valid", "same_upper", "same_lower")


def _max(version, data, strides, dilations, begin, end, kernel, rounding="floor", auto_pad="explicit",
         index="i64", axis=0):
    if version == 1:
        return opset1.max_pool(data, strides, begin, end, kernel, rounding, auto_pad)
    make = o8.max_pool if version == 8 else opset14.max_pool
    return make(data, strides, dilations, begin, end, kernel, rounding, auto_pad, index, axis)


def _avg(version, data, strides, begin, end, kernel, exclude_pad, rounding="floor", auto_pad="explicit",
         dilations=None):
    if version == 16:  # AvgPool-16: AvgPool-14 with dilations (ONNX AveragePool with ceil_mode writes it)
        return opset16.avg_pool(data, strides, begin, end, kernel, exclude_pad, rounding, auto_pad, dilations)
    make = opset1.avg_pool if version == 1 else opset14.avg_pool
    return make(data, strides, begin, end, kernel, exclude_pad, rounding, auto_pad)


SHAPES = [
    lambda p: _max(8, p(1, 3, 32, 32), [1, 1], [1, 1], [0, 0], [0, 0], [2, 2]),
    lambda p: _max(8, p(-1, 3, (10, 40), -1), [2, 2], [2, 1], [1, 0], [0, 1], [3, 3], "ceil"),
    lambda p: _max(14, p(2, 4, (5, 17), 9), [3, 2], [1, 1], [1, 1], [1, 0], [3, 2], "ceil_torch"),
    lambda p: _max(14, p(1, 2, 10), [3], [2], [0], [0], [2], "ceil_torch", "same_upper", "i32", -1),
    lambda p: _max(8, p(1, 2, (4, 12), 10, 9), [2, 2, 2], [1, 1, 2], [0, 0, 0], [0, 0, 0], [2, 2, 2],
                   "floor", "same_lower"),
    lambda p: _max(1, p(None), [2, 2], None, [0, 0], [0, 0], [2, 2]),
    lambda p: _max(1, p(1, 1, 7, 7), [3, 3], None, [1, 1], [1, 1], [3, 3], "ceil", "valid"),
    lambda p: _avg(1, p(-1, 3, 8, (3, 9)), [2, 2], [1, 1], [1, 1], [3, 3], True, "ceil"),
    lambda p: _avg(14, p(1, 3, 8, 9), [2, 3], [1, 1], [1, 0], [3, 3], False, "ceil_torch"),
    lambda p: _avg(16, p(-1, 3, (6, 12), 9), [2, 2], [1, 1], [1, 1], [3, 3], True, "ceil_torch", dilations=[2, 1]),
    lambda p: _avg(16, p(1, 2, 9), [2], [0], [0], [3], False, "floor", "same_lower", [3]),
    lambda p: _avg(1, p(2, 3, 5, 7, 9), [2, 2, 2], [0, 0, 0], [0, 0, 0], [2, 2, 2], False, "floor", "same_upper"),
    lambda p: o8.adaptive_avg_pool(p(-1, 3, 7, 9), o8.constant(np.array([3, 4], np.int64))),
    lambda p: o8.adaptive_max_pool(p(1, -1, 7, 9, 5), o8.constant(np.array([3, 4, 2], np.int32)), "i32"),
]


@pytest.mark.parametrize("case", range(len(SHAPES)))
def test_inferred_equals_declared(case, tmp_path):
    made = []

    def parameter(*dims):
        made.append(o8.parameter(ps(*dims), F32, name="x"))
        return made[-1]

    node = SHAPES[case](parameter)
    check_shapes(write_ir(node, made, tmp_path), node)


def test_adaptive_output_shape_from_a_parameter_is_dynamic(tmp_path):
    data = o8.parameter([1, 3, 8, 8], F32, name="x")
    sizes = o8.parameter([2], ov.Type.i64, name="sizes")
    node = o8.adaptive_avg_pool(data, sizes)
    path = write_ir(node, [data, sizes], tmp_path)
    check_inference(path)
    got = ir_runner.load(str(path)).run({"x": np.ones((1, 3, 8, 8), np.float32), "sizes": np.array([3, 5])})
    assert next(iter(got.values())).shape == (1, 3, 3, 5)


def test_ceil_torch_needs_v14(tmp_path):
    data = o8.parameter([1, 1, 5, 5], F32, name="x")
    path = write_ir(_max(8, data, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], "ceil"), [data], tmp_path)
    text = path.read_text().replace('rounding_type="ceil"', 'rounding_type="ceil_torch"')
    with pytest.raises(ir_runner.IRError, match="ceil_torch"):
        ir_runner.load(text.encode())


def _nasty(rng, shape, dtype=np.float32):
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    picks = rng.integers(0, flat.size, size=max(flat.size // 6, 1))
    flat[picks[::3]] = np.nan
    flat[picks[1::3]] = -np.inf
    flat[picks[2::3]] = flat[0]  # ties: the first of equal maxima wins
    return x


@pytest.mark.parametrize("seed", range(30))
def test_max_pool_differential(seed, tmp_path):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    version = (1, 8, 14)[seed % 3]
    kernel = [int(k) for k in rng.integers(1, 4, size=n)]
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *(int(s) for s in rng.integers(3, 8, size=n)))
    strides = [int(s) for s in rng.integers(1, 4, size=n)]
    dilations = [int(d) for d in rng.integers(1, 3, size=n)] if version > 1 else None
    begin = [int(rng.integers(0, k)) for k in kernel]
    end = [int(rng.integers(0, k)) for k in kernel]
    rounding = ROUNDINGS[int(rng.integers(0, 3 if version == 14 else 2))]
    auto_pad = PADS[int(rng.integers(0, 4))]
    axis = int(rng.integers(-len(shape), len(shape)))
    dtype = (np.float32, np.float16, np.int32, np.int8)[int(rng.integers(0, 4))]
    et = {np.float32: ov.Type.f32, np.float16: ov.Type.f16, np.int32: ov.Type.i32, np.int8: ov.Type.i8}[dtype]
    data = o8.parameter(shape, et, name="x")
    try:
        node = _max(version, data, strides, dilations, begin, end, kernel, rounding, auto_pad,
                    ("i32", "i64")[seed % 2], axis)
    except RuntimeError:
        pytest.skip("OpenVINO refuses this combination")
    path = write_ir(node, [data], tmp_path)
    check_inference(path)
    x = _nasty(rng, shape) if dtype in (np.float32, np.float16) else rng.integers(-128, 127, size=shape)
    oracle = "cpu" if version == 1 and dtype == np.int8 else "reference"  # MaxPool-1 evaluates no i8
    check_run(path, {"x": x.astype(dtype)}, oracle=oracle)




@pytest.mark.parametrize(("shape", "dtype"), [((2, 5, 7, 7), np.float32), ((1, 3, 4, 6, 5), np.float16),
                                              ((1, 2, 9), np.float32)])
def test_global_avg_pool(shape, dtype, tmp_path):
    """A window covering the whole input (global average pooling) is one sum per channel."""
    et = ov.Type.f32 if dtype == np.float32 else ov.Type.f16
    data = o8.parameter(shape, et, name="x")
    n = len(shape) - 2
    path = write_ir(_avg(1, data, [1] * n, [0] * n, [0] * n, list(shape[2:]), False), [data], tmp_path)
    x = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    got = next(iter(ir_runner.load(str(path)).run({"x": x}).values()))
    assert got.dtype == dtype and got.shape == shape[:2] + (1,) * n
    want = x.astype(np.float64).mean(axis=tuple(range(2, len(shape))), keepdims=True)
    k = int(np.prod(shape[2:]))
    eps = float(np.finfo(dtype).eps)
    assert_close("out", got.astype(np.float64), want, 0, 2 * k * eps * float(np.abs(x).max()) / k + eps)

@pytest.mark.parametrize("seed", range(12))
def test_max_pool_values_when_no_layer_reads_the_indices(seed, tmp_path):
    """MaxPool-8/14 whose indices output is not read: the plan computes the values only (a scan over one
    spatial axis after the other), bit for bit the reference's, NaN, -inf, ties, -0.0 and padding included;
    a trace reports no indices."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 4))
    kernel = [int(k) for k in rng.integers(1, 4, size=n)]
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *(int(s) for s in rng.integers(3, 9, size=n)))
    strides = [int(s) for s in rng.integers(1, 4, size=n)]
    dilations = [int(d) for d in rng.integers(1, 3, size=n)]
    begin = [int(rng.integers(0, k)) for k in kernel]
    end = [int(rng.integers(0, k)) for k in kernel]
    dtype = (np.float32, np.float16, np.int32, np.int8)[seed % 4]
    et = {np.float32: ov.Type.f32, np.float16: ov.Type.f16, np.int32: ov.Type.i32, np.int8: ov.Type.i8}[dtype]
    data = o8.parameter(shape, et, name="x")
    try:
        node = _max(8 + 6 * (seed % 2), data, strides, dilations, begin, end, kernel,
                    ROUNDINGS[int(rng.integers(0, 3))], PADS[int(rng.integers(0, 4))])
    except RuntimeError:
        pytest.skip("OpenVINO refuses this combination")
    path = write_ir(node.output(0), [data], tmp_path)
    x = _nasty(rng, shape) if dtype in (np.float32, np.float16) else rng.integers(-128, 127, size=shape)
    if seed % 3 == 0 and dtype in (np.float32, np.float16):
        x[..., ::2] = np.where(rng.random(x[..., ::2].shape) < 0.5, -0.0, 0.0)
    (values,) = check_run(path, {"x": x.astype(dtype)}).values()
    trace = ir_runner.load(path).trace({"x": x.astype(dtype)})
    assert [r.position for r in trace.layers if r.layer.type_version.startswith("MaxPool")] == [0]

def test_max_pool_lowest_value_rules(tmp_path):
    """A window of NaN or -inf only gives -FLT_MAX and index 0 (the reference's start value and index)."""
    data = o8.parameter([1, 1, 2, 4], F32, name="x")
    path = write_ir(_max(8, data, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2]), [data], tmp_path)
    x = np.array([[[[np.nan, np.nan, -np.inf, 1], [np.nan, np.nan, -np.inf, -np.inf]]]], np.float32)
    values, indices = check_run(path, {"x": x}).values()
    assert values.reshape(-1).tolist() == [np.finfo(np.float32).min, 1.0]
    assert indices.reshape(-1).tolist() == [0, 3]


@pytest.mark.parametrize("version", [1, 8])
@pytest.mark.parametrize("negative_zero", [False, True], ids=["zeros", "signed_zeros"])
def test_max_pool_zero_ties_and_threads(version, negative_zero, tmp_path):
    """Windows whose maximum is zero keep the first zero's sign (+0.0 and -0.0 compare equal), with padding,
    on an input large enough to be split over threads."""
    rng = np.random.default_rng(7)
    x = -np.abs(rng.standard_normal((2, 16, 64, 64))).astype(np.float32)
    zeros = rng.random(x.shape) < 0.4
    x[zeros] = np.where(rng.random(int(zeros.sum())) < 0.5, -0.0, 0.0) if negative_zero else 0.0
    x[0, 0, 5, 5] = np.nan
    data = o8.parameter(list(x.shape), F32, name="x")
    path = write_ir(_max(version, data, [1, 1], [1, 1], [1, 1], [1, 1], [3, 3]), [data], tmp_path)
    check_run(path, {"x": x})


@pytest.mark.parametrize("seed", range(27))
def test_avg_pool_differential(seed, tmp_path):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 4))
    version = (1, 14, 16)[seed % 3]
    kernel = [int(k) for k in rng.integers(1, 4, size=n)]
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *(int(s) for s in rng.integers(3, 8, size=n)))
    strides = [int(s) for s in rng.integers(1, 4, size=n)]
    begin = [int(rng.integers(0, k)) for k in kernel]
    end = [int(rng.integers(0, k)) for k in kernel]
    rounding = ROUNDINGS[int(rng.integers(0, 2 if version == 1 else 3))]
    dilations = [int(d) for d in rng.integers(1, 3, size=n)]
    data = o8.parameter(shape, F32, name="x")
    try:
        node = _avg(version, data, strides, begin, end, kernel, bool(rng.random() < 0.5), rounding,
                    PADS[int(rng.integers(0, 4))], dilations)
    except RuntimeError:
        pytest.skip("OpenVINO refuses this combination")
    path = write_ir(node, [data], tmp_path)
    check_inference(path)
    x = rng.standard_normal(shape).astype(np.float32)
    k = int(np.prod(kernel))
    rtol = 4 * k * float(np.finfo(np.float32).eps)
    got = next(iter(ir_runner.load(str(path)).run({"x": x}).values()))
    want = cpu_outputs(path, {"x": x})[0]
    # a window wholly in the padding (exclude-pad, ceil rounding): the reference gives 0, the CPU plugin 0/0
    empty = np.isnan(want) & (got == 0)
    assert_close("out", got, np.where(empty, 0, want), rtol, rtol * float(np.abs(x).max()))


@pytest.mark.parametrize("seed", range(12))
def test_adaptive_differential(seed, tmp_path):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 4))
    shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *(int(s) for s in rng.integers(2, 10, size=n)))
    sizes = np.array([int(rng.integers(1, s + 3)) for s in shape[2:]], np.int64)
    data = o8.parameter(shape, F32, name="x")
    x = rng.standard_normal(shape).astype(np.float32)
    if seed % 2:  # the CPU plugin has no i64 indices: i64 is checked against the i32 run
        paths = [write_ir(o8.adaptive_max_pool(data, o8.constant(sizes), t), [data], tmp_path, t) for t in
                 ("i32", "i64")]
        check_inference(paths[1])
        values, indices = check_run(paths[0], {"x": x}, oracle="cpu").values()
        values64, indices64 = ir_runner.load(str(paths[1])).run({"x": x}).values()
        assert indices64.dtype == np.int64 and np.array_equal(indices64, indices) and np.array_equal(values64, values)
    else:
        path = write_ir(o8.adaptive_avg_pool(data, o8.constant(sizes)), [data], tmp_path)
        check_inference(path)
        k = int(np.prod([-(-s // o) + 1 for s, o in zip(shape[2:], sizes)]))
        rtol = 4 * k * float(np.finfo(np.float32).eps)
        check_run(path, {"x": x}, rtol=rtol, atol=rtol * float(np.abs(x).max()), oracle="cpu")


@pytest.mark.parametrize("et", [ov.Type.i32, ov.Type.u8])
def test_integer_avg_pool_is_refused_at_load_naming_the_layer(tmp_path, et):
    """Integer AvgPool (the reference divides a signed sum by an unsigned count) is refused when the model is
    loaded and validated, not at its first run; integer MaxPool is computed."""
    x = opset1.parameter([1, 2, 4, 4], et, name="x")
    avg = opset1.avg_pool(x, [1, 1], [0, 0], [0, 0], [2, 2], True)
    path = write_ir(avg, [x], tmp_path)
    with pytest.raises(ir_runner.UnsupportedError, match=r"AvgPool-1.*element type .* is not implemented"):
        ir_runner.load(str(path))
    assert not ir_runner.validate(str(path)).valid
    peak = opset1.max_pool(x, [1, 1], [0, 0], [0, 0], [2, 2])
    ir_runner.load(str(write_ir(peak, [x], tmp_path, "max")))


@pytest.mark.parametrize("kind", ["AdaptiveAvgPool", "AdaptiveMaxPool"])
def test_a_negative_adaptive_output_size_fed_at_run_time_is_refused_naming_the_layer(kind):
    """An output size [2,-2] left the output's shape unknown and the kernel failed (KernelError, exit 7)."""
    from tests.helpers.irbuild import IRBuilder

    b = IRBuilder()
    x = b.parameter("x", "f32", "1,2,3,3")
    size = b.parameter("size", "i64", "2")
    outs = [("FP32", [1, 2, -1, -1])] + ([("I64", [1, 2, -1, -1])] if kind == "AdaptiveMaxPool" else [])
    b.result(b.layer(kind, "opset8", [x, size], attrs=None, out_specs=outs))
    model = ir_runner.load(*b.build())
    data = np.ones((1, 2, 3, 3), np.float32)
    with pytest.raises(ir_runner.InputError, match=f"{kind}-8.*element 1 of output_shape is -2"):
        model.run({"x": data, "size": np.array([2, -2])})
    (out,) = model.run({"x": data, "size": np.array([2, 1])}).values()
    assert out.shape == (1, 2, 2, 1)
