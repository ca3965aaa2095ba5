"""Col2Im-15: shapes as OpenVINO infers them (its type_prop cases: batched and unbatched, constant and run-time
sizes, dynamic and interval dims, dynamic ranks), bad layers refused naming the layer and port, values bit
for bit against OpenVINO's reference kernel (``ov::reference::col2im``, which the CPU plugin runs: Node.evaluate
has no Col2Im in this release) for every type the CPU plugin keeps (bf16 with OpenVINO's own rounding at each
step), overlapping windows with strides, dilations and pads, integer wrap-around; output_size and kernel_size
computed at run time (planned per value); a seeded random differential generator."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
import ml_dtypes  # noqa: E402
from openvino import opset3, opset8, opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.batching import trace_batch  # noqa: E402
from ir_runner.errors import BatchError, IRError  # noqa: E402
from ir_runner.ops.conv_pool.col2im import OPS, col2im  # noqa: E402
from ir_runner.types import PartialShape, TensorSpec, element_type  # noqa: E402
from tests.helpers.cpu_features import require as require_cpu  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def c(value, dtype=np.int64):
    return opset15.constant(np.array(value, dtype=dtype))


def _blocks(size, kernel, strides=(1, 1), dilations=(1, 1), pads_begin=(0, 0), pads_end=(0, 0)):
    return [(s + b + e - d * (k - 1) - 1) // st + 1
            for s, k, st, d, b, e in zip(size, kernel, strides, dilations, pads_begin, pads_end)]


def _build(data_shape, size, kernel, tmp_path, et=ov.Type.f32, index=np.int64, strides=(1, 1), dilations=(1, 1),
           pads_begin=(0, 0), pads_end=(0, 0)):
    data = opset15.parameter(data_shape, et, name="data")
    node = opset15.col2im(data, c(size, index), c(kernel, index), list(strides), list(dilations), list(pads_begin),
                          list(pads_end))
    return write_ir(node, [data], tmp_path), node


def _shape(dims):
    return ov.PartialShape.dynamic() if dims is None else ov.PartialShape(
        [ov.Dimension(*d) if isinstance(d, tuple) else ov.Dimension(d) for d in dims])


@pytest.mark.parametrize("data_shape, size, kernel, attrs", [
    ([3, 12, 81], [16, 16], [2, 2], {"strides": (2, 2), "dilations": (2, 2), "pads_begin": (2, 2), "pads_end": (2, 2)}),
    ([12, 324], [32, 32], [2, 2], {"strides": (2, 2), "dilations": (2, 2), "pads_begin": (3, 3), "pads_end": (3, 3)}),
    ([-1, 12, 81], [16, 16], [2, 2], {"strides": (2, 2), "dilations": (2, 2), "pads_begin": (2, 2),
                                      "pads_end": (2, 2)}),
    ([(1, 4), -1, -1], [5, 7], [3, 2], {}),
    ([-1, 24], [6, 7], [3, 2], {}),
    ([2, (6, 12), 24], [6, 7], [3, 2], {}),
    (None, [6, 7], [3, 2], {}),
])
def test_constant_sizes_shapes(data_shape, size, kernel, attrs, tmp_path):
    path, node = _build(_shape(data_shape), size, kernel, tmp_path, ov.Type.i64, **attrs)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("data_shape, size_shape, kernel_shape", [
    ([3, 12, 225], [2], [2]), ([5, -1, -1], None, None), ([-1, -1], None, None), (None, None, None),
    ([(2, 5), 12, 225], [2], None),
])
def test_run_time_sizes_shapes(data_shape, size_shape, kernel_shape, tmp_path):
    data = opset15.parameter(_shape(data_shape), ov.Type.i32, name="data")
    size = opset15.parameter(_shape(size_shape), ov.Type.i64, name="size")
    kernel = opset15.parameter(_shape(kernel_shape), ov.Type.i64, name="kernel")
    node = opset15.col2im(data, size, kernel, [2, 2], [2, 2], [3, 3], [3, 3])
    path = write_ir(node, [data, size, kernel], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("image_shape", [[-1, 3, -1, -1], [-1, 3, (1, 9), (2, 5)]])
def test_sizes_from_a_shape_of_are_planned_per_value(image_shape, tmp_path):
    """torch's fold with the image size taken from another tensor: output_size = ShapeOf(image)[2:] (interval
    dims pass on as intervals)."""
    data = opset15.parameter([-1, 12, -1], ov.Type.f32, name="data")
    image = opset15.parameter(_shape(image_shape), ov.Type.f32, name="image")
    size = opset8.slice(opset3.shape_of(image), c([2]), c([4]), c([1]))
    node = opset15.col2im(data, size, c([2, 2]), [1, 2], [1, 1], [1, 0], [0, 1])
    path = write_ir(node, [data, image], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)
    rng = np.random.default_rng(5)
    for n, h, w in ((1, 4, 5), (2, 7, 3), (3, 1, 2)):
        lh, lw = _blocks((h, w), (2, 2), (1, 2), (1, 1), (1, 0), (0, 1))
        feeds = {"data": rng.normal(size=(n, 12, lh * lw)).astype(np.float32),
                 "image": np.zeros((n, 3, h, w), np.float32)}
        check_run(path, feeds, oracle="cpu")


def test_sizes_fed_as_inputs_are_planned_per_value(tmp_path):
    data = opset15.parameter([2, -1, -1], ov.Type.i32, name="data")
    size = opset15.parameter([2], ov.Type.i64, name="size")
    kernel = opset15.parameter([2], ov.Type.i64, name="kernel")
    path = write_ir(opset15.col2im(data, size, kernel), [data, size, kernel], tmp_path)
    check_inference(path)
    rng = np.random.default_rng(6)
    for hw, k in (((4, 5), (2, 3)), ((3, 3), (1, 1)), ((6, 2), (3, 2))):
        lh, lw = _blocks(hw, k)
        feeds = {"data": rng.integers(-50, 50, size=(2, 3 * k[0] * k[1], lh * lw)).astype(np.int32),
                 "size": np.array(hw, np.int64), "kernel": np.array(k, np.int64)}
        check_run(path, feeds, oracle="cpu")


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize("old, new, message", [
    ('strides="1, 1"', 'strides="0, 1"', r"Col2Im.*strides must be two integers of at least 1"),
    ('dilations="1, 1"', 'dilations="1"', r"Col2Im.*dilations must be two integers"),
    ('pads_end="0, 0"', 'pads_end="0, -1"', r"Col2Im.*pads_end must be two integers of at least 0"),
])
def test_bad_attributes_are_refused_naming_the_layer(old, new, message, tmp_path):
    path, _ = _build([2, 12, 20], [5, 6], [2, 2], tmp_path)
    _edit(path, old, new)
    with pytest.raises(IRError, match=message):
        ir_runner.load(str(path))


def test_bad_inputs_are_refused_naming_the_port(tmp_path):
    path, _ = _build([2, 12, 20], [5, 6], [2, 2], tmp_path)
    _edit(path, "<dim>12</dim>", "<dim>13</dim>")
    _edit(path, 'shape="2,12,20"', 'shape="2,13,20"')
    with pytest.raises(IRError, match=r"Col2Im.*port 0.*columns dim of data \(13\) is not divisible by kh \* kw = 4"):
        ir_runner.load(str(path))
    path, _ = _build([2, 12, 20], [5, 6], [2, 2], tmp_path)
    _edit(path, "<dim>20</dim>", "<dim>21</dim>")
    _edit(path, 'shape="2,12,20"', 'shape="2,12,21"')
    with pytest.raises(IRError, match=r"Col2Im.*port 0.*data has 21 blocks.*make 4 x 5 = 20"):
        ir_runner.load(str(path))
    path, _ = _build([2, 12, 20], [5, 6], [2, 2], tmp_path, index=np.int32)
    _edit(path, 'element_type="i32"', 'element_type="f32"')
    _edit(path, 'precision="I32"', 'precision="FP32"')
    with pytest.raises(IRError, match=r"Col2Im.*port 1.*output_size must be i32 or i64, got f32"):
        ir_runner.load(str(path))


def test_a_kernel_wider_than_the_image_is_refused(tmp_path):
    data = opset15.parameter([4, 1], ov.Type.f32, name="data")
    size = opset15.parameter([2], ov.Type.i64, name="size")
    path = write_ir(opset15.col2im(data, size, c([2, 2]), [2, 2]), [data, size], tmp_path)
    model = ir_runner.load(str(path))
    with pytest.raises(IRError, match=r"Col2Im.*dilated kernel \(2\) is larger than the padded output size \(1\)"):
        model.run({"data": np.ones((4, 1), np.float32), "size": np.array([1, 2], np.int64)})


TYPES = [(ov.Type.f32, np.float32), (ov.Type.f16, np.float16), (ov.Type.bf16, ml_dtypes.bfloat16),
         (ov.Type.i8, np.int8), (ov.Type.i16, np.int16),
         (ov.Type.i32, np.int32), (ov.Type.u8, np.uint8), (ov.Type.u16, np.uint16), (ov.Type.u32, np.uint32)]


@pytest.mark.parametrize("et, dtype", TYPES)
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_types_bit_exact_against_the_reference_kernel(et, dtype, index, tmp_path):
    """Integers over their whole range: the sums wrap as the reference's do; compared with the CPU plugin, whose
    kernel sums as the reference does (bf16 only with native bf16: without it the plugin rounds the sums otherwise)."""
    if et == ov.Type.bf16:
        require_cpu("bf16")
    rng = np.random.default_rng(2)
    geometry = {"strides": (1, 2), "dilations": (2, 1), "pads_begin": (1, 2), "pads_end": (2, 0)}
    lh, lw = _blocks((6, 7), (3, 2), **geometry)
    path, _ = _build([2, 18, lh * lw], [6, 7], [3, 2], tmp_path, et, index, **geometry)
    check_inference(path)
    if np.dtype(dtype).kind not in "iu":
        data = (rng.normal(size=(2, 18, lh * lw)) * 100).astype(dtype)
    else:
        data = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, size=(2, 18, lh * lw), dtype=dtype,
                            endpoint=True)
    check_run(path, {"data": data}, oracle="cpu")


def test_wide_types_against_the_cpu_plugin(tmp_path):
    """The CPU plugin computes f64 in f32, i64 and u64 in i32: compared where those agree (small integers) or
    within a bound."""
    rng = np.random.default_rng(4)
    lh, lw = _blocks((5, 6), (2, 3), strides=(1, 1))
    for et, dtype in ((ov.Type.i64, np.int64), (ov.Type.u64, np.uint64)):
        path, _ = _build([2, 12, lh * lw], [5, 6], [2, 3], tmp_path, et)
        check_run(path, {"data": rng.integers(0, 1000, size=(2, 12, lh * lw)).astype(dtype)}, oracle="cpu")
    path, _ = _build([2, 12, lh * lw], [5, 6], [2, 3], tmp_path, ov.Type.f64)
    data = rng.normal(size=(2, 12, lh * lw))
    check_run(path, {"data": data}, oracle="cpu", rtol=0, atol=6 * 2.0**-23 * float(np.abs(data).max()))


def test_wide_integers_wrap_and_f64_sums_in_f64():
    big = np.iinfo(np.int64).max
    data = np.full((1, 4, 4), big, np.int64)  # 2x2 kernel over a 3x3 image, stride 1: the centre takes 4 taps
    params = {"size": (3, 3), "kernel": (2, 2), "strides": (1, 1), "dilations": (1, 1), "pads_begin": (0, 0),
              "pads_end": (0, 0)}
    out = col2im(data, None, None, **params)
    assert out[0, 0, 1, 1] == np.int64(-4) and out[0, 0, 0, 0] == big and out[0, 0, 0, 1] == np.int64(-2)
    tiny = np.array([[[1.0, 2.0**-60, 2.0**-60, 2.0**-60]] * 4]).reshape(1, 4, 4)
    assert col2im(tiny, None, None, **params).dtype == np.float64


def test_overlap_sums_f16_in_f32_rounded_once(tmp_path):
    """Four taps onto the centre of a 3x3 image: 2048 + 1 + 1 + 1 = 2051 -> 2052 in f16 (rounding at each
    step, 2048 + 1 would stay 2048)."""
    data = np.zeros((4, 4), np.float16)
    data[[0, 1, 2, 3], [3, 2, 1, 0]] = [2048, 1, 1, 1]  # tap (i, j) of the window that puts it on (1, 1)
    path, _ = _build([4, 4], [3, 3], [2, 2], tmp_path, ov.Type.f16)
    got = check_run(path, {"data": data}, oracle="cpu")
    assert next(iter(got.values()))[0, 1, 1] == 2052


def test_empty_tensors(tmp_path):
    for data_shape, size, kernel in (([0, 4, 12], [4, 5], [2, 2]), ([1, 0, 12], [4, 5], [2, 2])):
        path, _ = _build(data_shape, size, kernel, tmp_path)
        check_run(path, {"data": np.ones(data_shape, np.float32)}, oracle="cpu")


def test_batch_axis_through_a_model(tmp_path):
    path, _ = _build([4, 12, 20], [5, 6], [2, 2], tmp_path)
    model = ir_runner.load(str(path))
    assert trace_batch(model.inference, [0]) == (0,)
    with pytest.raises(BatchError, match="Col2Im.*columns or the blocks"):
        trace_batch(model.inference, [2])


def test_batch_rule():
    op = OPS[0]
    f32 = element_type("f32")
    three, two = [TensorSpec(f32, PartialShape.of((2, 4, 6)))], [TensorSpec(f32, PartialShape.of((4, 6)))]
    assert op.batch({}, three, [None], [0, None, None]) == [0]
    assert op.batch({}, three, [None], [None, None, None]) == [None]
    assert isinstance(op.batch({}, two, [None], [0, None, None]), str)
    assert isinstance(op.batch({}, three, [None], [2, None, None]), str)
    assert isinstance(op.batch({}, three, [None], [0, 0, None]), str)


@pytest.mark.parametrize("seed", range(30))
def test_random_against_the_reference_kernel(seed, tmp_path):
    rng = np.random.default_rng(2000 + seed)
    kernel = [int(v) for v in rng.integers(1, 4, size=2, endpoint=True)]
    strides = tuple(int(v) for v in rng.integers(1, 3, size=2, endpoint=True))
    dilations = tuple(int(v) for v in rng.integers(1, 2, size=2, endpoint=True))
    pads_begin = tuple(int(v) for v in rng.integers(0, 2, size=2, endpoint=True))
    pads_end = tuple(int(v) for v in rng.integers(0, 2, size=2, endpoint=True))
    size = [int(d * (k - 1) + 1 + rng.integers(0, 6)) for d, k in zip(dilations, kernel)]
    lh, lw = _blocks(size, kernel, strides, dilations, pads_begin, pads_end)
    channels = int(rng.integers(1, 3, endpoint=True)) * kernel[0] * kernel[1]
    batched = bool(rng.integers(2))
    shape = ([int(rng.integers(1, 3, endpoint=True))] if batched else []) + [channels, lh * lw]
    et, dtype = TYPES[rng.integers(len(TYPES))]
    path, _ = _build(shape, size, kernel, tmp_path, et, (np.int32, np.int64)[rng.integers(2)], strides, dilations,
                     pads_begin, pads_end)
    check_inference(path)
    if np.dtype(dtype).kind not in "iu":
        data = (rng.normal(size=shape) * 10 ** rng.uniform(-2, 3)).astype(dtype)
    else:
        data = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)
    check_run(path, {"data": data}, oracle="cpu")
