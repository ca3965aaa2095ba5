"""Select's whole-row path (cond constant along the trailing axes, e.g. [R,1] against [R,C]): it is the path
chosen for such shapes, and it gives np.where's bits on same-width unsigned views (every NaN payload, -0.0,
bool bytes other than 0/1 kept), with f16 signalling NaNs quietened as the reference does; into a given
output buffer too, threaded, and through a model. One case is checked against OpenVINO's reference."""

import functools

import ml_dtypes
import numpy as np
import openvino as ov
import pytest
from openvino import opset1

import ir_runner
import ir_runner.ops.elementwise.select as select_module
from ir_runner.ops.elementwise.select import (
    ROW_MIN_BYTES,
    bit_select_broadcast,
    choose_kernel,
    prepare_select,
    row_select,
    select,
)
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS
from ir_runner.types import PartialShape, TensorSpec, element_type_of
from tests.helpers.bits import same_bits
from tests.helpers.irbuild import IRBuilder

DTYPES = [np.float32, np.float16, np.float64, ml_dtypes.bfloat16, np.int8, np.int64, np.uint16, np.bool_]
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SPECIAL_BITS = {  # signalling and quiet NaNs with payloads, -0.0, infinities, the largest values
    2: [0x7C01, 0xFC01, 0x7D55, 0x7E01, 0xFFFF, 0x8000, 0x7C00, 0xFC00, 0x7BFF],
    4: [0x7F800001, 0xFF800123, 0x7FC00001, 0xFFFFFFFF, 0x80000000, 0x7F800000, 0x7F7FFFFF],
    8: [0x7FF0000000000001, 0xFFF0000012345678, 0x7FF8000000000001, 0x8000000000000000, 0x7FF0000000000000],
}
# (cond, then, else): rows of one axis, of two axes, a mask broadcast over a leading axis, then/else broadcast
# over leading axes, a scalar cond (the whole output from one operand), rows over threads
SHAPES = {
    "column": ((1000, 1), (1000, 64), (1000, 64)),
    "two_trailing": ((40, 1, 1), (40, 30, 40), (40, 30, 40)),
    "mask_broadcast": ((1, 30, 1), (40, 30, 40), (40, 30, 40)),
    "then_broadcast": ((2000, 1), (32,), (2000, 32)),
    "else_broadcast": ((50, 20, 1), (50, 20, 40), (20, 40)),
    "scalar_cond": ((), (300, 200), (300, 200)),
    "threaded": ((PARALLEL_MIN_ELEMENTS // 100 + 3, 1), (PARALLEL_MIN_ELEMENTS // 100 + 3, 100),
                 (PARALLEL_MIN_ELEMENTS // 100 + 3, 100)),
}


def random_bits(rng, dtype, shape):
    """Random bit patterns (any NaN payload, -0.0, any bool byte), with the special values sprinkled in."""
    dtype = np.dtype(dtype)
    values = rng.integers(0, 256, (*shape, dtype.itemsize), dtype=np.uint8).view(dtype).reshape(shape)
    special = SPECIAL_BITS.get(dtype.itemsize)
    if special is not None and dtype.kind != "i" and values.size:
        flat = values.reshape(-1).view(UNSIGNED[dtype.itemsize])
        spots = rng.integers(0, flat.size, 4 * len(special))
        flat[spots] = np.tile(np.array(special, dtype=UNSIGNED[dtype.itemsize]), 4)
    return values


def random_cond(rng, shape):
    return rng.integers(0, 4, shape).astype(np.uint8).view(np.bool_)  # bytes 2 and 3 are true too


def reference(cond, then, else_):
    """np.where on same-width unsigned views; f16 signalling NaNs get the quiet bit, as the reference does."""
    unsigned = UNSIGNED[then.dtype.itemsize]
    bits = np.where(cond.view(np.uint8) != 0, then.view(unsigned), else_.view(unsigned))
    if then.dtype == np.float16:
        bits[((bits & 0x7C00) == 0x7C00) & ((bits & 0x3FF) != 0)] |= 0x200
    return bits.view(then.dtype)


def specs(shapes, dtype):
    et = element_type_of(np.dtype(dtype))
    cond = TensorSpec(element_type_of(np.dtype(np.bool_)), PartialShape.of(shapes[0]))
    return [cond, TensorSpec(et, PartialShape.of(shapes[1])), TensorSpec(et, PartialShape.of(shapes[2]))]


@pytest.mark.parametrize("case", list(SHAPES))
def test_row_path_is_chosen(case):
    kernel = choose_kernel(*SHAPES[case], np.dtype(np.float32))
    assert isinstance(kernel, functools.partial) and kernel.func is row_select


@pytest.mark.parametrize("case", list(SHAPES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_rows_equal_where_on_bits(case, dtype):
    rng = np.random.default_rng(len(case))
    cond_shape, then_shape, else_shape = SHAPES[case]
    cond = random_cond(rng, cond_shape)
    then, else_ = random_bits(rng, dtype, then_shape), random_bits(rng, dtype, else_shape)
    want = reference(cond, then, else_)
    out_shape = want.shape
    kernel = prepare_select({"mode": "numpy", "axis": 0}, specs(SHAPES[case], dtype),
                            [TensorSpec(element_type_of(np.dtype(dtype)), PartialShape.of(out_shape))], [None] * 3)
    assert same_bits(kernel(cond, then, else_), want)
    buffer = np.full(out_shape, 7, dtype=dtype)
    assert kernel(cond, then, else_, out=buffer) is buffer
    assert same_bits(buffer, want)
    assert same_bits(select(cond, then, else_, mode="numpy", axis=0), want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_row_kernel_directly_with_and_without_out(dtype):
    rng = np.random.default_rng(5)
    cond = random_cond(rng, (3000, 1))
    then, else_ = random_bits(rng, dtype, (3000, 48)), random_bits(rng, dtype, (3000, 48))
    unsigned = UNSIGNED[np.dtype(dtype).itemsize]
    plain = np.where(cond, then.view(unsigned), else_.view(unsigned)).view(dtype)  # row_select itself never quietens
    assert same_bits(row_select(cond, then, else_, (3000, 48), 1), plain)
    buffer = np.empty((3000, 48), dtype)
    assert row_select(cond, then, else_, (3000, 48), 1, out=buffer) is buffer
    assert same_bits(buffer, plain)


def test_strided_inputs():
    rng = np.random.default_rng(9)
    cond = random_cond(rng, (2000, 2))[:, :1]
    then = random_bits(rng, np.float32, (2000, 128))[:, ::2]
    else_ = random_bits(rng, np.float32, (4000, 64))[::2]
    assert same_bits(row_select(cond, then, else_, (2000, 64), 1), reference(cond, then, else_))


def test_all_true_and_all_false_masks():
    rng = np.random.default_rng(2)
    then, else_ = random_bits(rng, np.float32, (1000, 40)), random_bits(rng, np.float32, (1000, 40))
    for cond in (np.ones((1000, 1), bool), np.zeros((1000, 1), bool)):
        assert same_bits(row_select(cond, then, else_, (1000, 40), 1), reference(cond, then, else_))


def test_short_rows_and_small_outputs_take_other_paths():
    """Rows below ROW_MIN_BYTES go to the blocked bit-select; small outputs to np.where; a cond that varies
    along the last axis (or a then broadcast along it) cannot be copied row by row."""
    short = ROW_MIN_BYTES // 4 - 1
    kernel = choose_kernel((100000, 1), (100000, short), (100000, short), np.dtype(np.float32))
    assert kernel.func is bit_select_broadcast
    assert choose_kernel((100, 1), (100, 64), (100, 64), np.dtype(np.float32)) is np.where
    assert choose_kernel((1, 1000), (1000, 1000), (1000, 1000), np.dtype(np.float32)).func is bit_select_broadcast
    assert choose_kernel((1000, 1), (1000, 1), (1000, 1000), np.dtype(np.float32)).func is bit_select_broadcast
    kernel = choose_kernel((100, 1, 1), (100, 40, 1), (100, 40, 40), np.dtype(np.float32))
    assert kernel.func is bit_select_broadcast
    kernel = choose_kernel((100, 40, 1), (100, 40, 1), (100, 40, 40), np.dtype(np.float64))
    assert kernel.func is bit_select_broadcast


@pytest.mark.parametrize("mode", ["numpy", "pdpd"])
@pytest.mark.parametrize("et", ["f16", "f32", "i64"])
def test_through_a_model(mode, et, monkeypatch):
    """The plan picks the row path (f16 and pdpd too); a pdpd cond of rank 1 at axis 0 is a column."""
    calls = []

    def spy(*args, **kwargs):
        calls.append(kwargs.get("out") is not None)
        return row_select(*args, **kwargs)

    spy.accepts_out = True
    monkeypatch.setattr(select_module, "row_select", spy)
    rows, cols = 2000, 40
    b = IRBuilder()
    cond_shape = (rows, 1) if mode == "numpy" else (rows,)
    cond = b.parameter("cond", "boolean", ",".join(map(str, cond_shape)))
    then = b.parameter("then", et, f"{rows},{cols}")
    other = b.parameter("else", et, f"{rows},{cols}")
    attrs = {"auto_broadcast": mode} if mode == "numpy" else {"auto_broadcast": "pdpd",
                                                              "auto_broadcast.auto_broadcast_axis": 0}
    b.result(b.layer("Select", "opset1", [cond, then, other], attrs=attrs, out_specs=[(et, [rows, cols])],
                     out_names=["out"]))
    model = ir_runner.load(*b.build())
    rng = np.random.default_rng(3)
    dtype = model.inputs[1].dtype
    feeds = {"cond": random_cond(rng, cond_shape), "then": random_bits(rng, dtype, (rows, cols)),
             "else": random_bits(rng, dtype, (rows, cols))}
    want = reference(feeds["cond"].reshape(rows, 1), feeds["then"], feeds["else"])
    assert same_bits(model.run(feeds)["out"], want)
    buffer = np.empty((rows, cols), dtype)
    assert model.run(feeds, out=[buffer])["out"] is buffer
    assert same_bits(buffer, want)
    assert calls == [False, True]


@pytest.mark.parametrize("et", ["f16", "f32"])
def test_against_openvino_reference(et):
    """OpenVINO's reference Select (Node.evaluate) on a [R,1] cond: the same bits, f16 sNaN quietened."""
    rng = np.random.default_rng(11)
    dtype = np.float16 if et == "f16" else np.float32
    cond = rng.random((600, 1)) < 0.5
    then, else_ = random_bits(rng, dtype, (600, 64)), random_bits(rng, dtype, (600, 64))
    node = opset1.select(opset1.parameter([600, 1], ov.Type.boolean), opset1.parameter([600, 64], getattr(ov.Type, et)),
                         opset1.parameter([600, 64], getattr(ov.Type, et)))
    outputs = [ov.Tensor(getattr(ov.Type, et), ov.Shape([0]))]
    assert node.evaluate(outputs, [ov.Tensor(np.ascontiguousarray(a)) for a in (cond, then, else_)])
    expected = outputs[0].data.copy()
    got = row_select(cond, then, else_, (600, 64), 1)
    if et == "f16":
        from ir_runner.ops.api import quiet_f16_nans

        got = quiet_f16_nans(got)
    assert same_bits(got, expected)
