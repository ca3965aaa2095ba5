"""Unique-10: output shapes as OpenVINO infers them (data-dependent: intervals at load, exact for a constant input,
concrete at run), refusals naming the layer and port, values against OpenVINO's CPU plugin (the reference has no
Node.evaluate for Unique) and OpenVINO's op_reference expectations, NaN, -0.0, empty and scalar inputs, every
element type, seeded differential runs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset10  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError, IRError  # noqa: E402
from ir_runner.ops.sort_search.unique import OPS  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, cpu_outputs, write_ir  # noqa: E402


def _model(tmp_path, shape, axis=None, *, et=ov.Type.f32, axis_dtype=np.int64, name="model", **attrs):
    data = opset10.parameter(ov.PartialShape(shape), et, name="data")
    node = opset10.unique(data, None if axis is None else opset10.constant(np.array(axis, axis_dtype)), **attrs)
    return write_ir(node, [data], tmp_path, name), node


def _widened_cpu(xml_factory):
    """The CPU plugin on i32-widened data, the values output narrowed back: the plugin's own i8/u8/boolean
    kernel with an axis returns wrong or uninitialised indices and counts (docs/semantics.md, Unique)."""
    def oracle(_xml, feeds):
        x = feeds["data"]
        want = cpu_outputs(xml_factory(), {"data": x.astype(np.int32)})
        return [want[0].astype(x.dtype)] + want[1:]
    return oracle


# -- shapes --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, axis", [
    ([5], None), ([0], None), ([1], None), ([], None), ([2, 3], None), ([2, 3], 1), ([2, 3], -1), ([2, 3], 0),
    ([-1, 3], 0), ([-1, 3], 1), ([(2, 6), 3], 1), ([(2, 6), 3], 0), ([2, 0], 0), ([2, 0], 1), ([0, 3], 0),
    ("...", None), ("...", 1), ([(3, -1), 2], 0), ([(0, 4), 2], 0), ([(0, 4)], None), ([1, 1, 1], None), ([3, 1], 1),
    ([2, 3], [1]),
])
def test_shapes_as_openvino_infers_them(shape, axis, tmp_path):
    xml, node = _model(tmp_path, ov.PartialShape.dynamic() if shape == "..." else shape, axis)
    check_output_shapes(xml, node)
    check_inference(xml)


@pytest.mark.parametrize("index_type, count_type", [("i32", "i32"), ("i32", "i64"), ("i64", "i32")])
def test_index_and_count_types(index_type, count_type, tmp_path):
    xml, _ = _model(tmp_path, [6], index_element_type=index_type, count_element_type=count_type)
    check_inference(xml)
    got = check_run(xml, {"data": np.array([3, 1, 3, 2, 1, 3], np.float32)}, oracle="cpu")
    assert [v.dtype.name for v in got.values()][1:] == ["int" + index_type[1:]] * 2 + ["int" + count_type[1:]]


def test_constant_input_gives_exact_shapes(tmp_path):
    const = opset10.constant(np.array([[1, 2], [1, 2], [0, 5]], np.float32))
    node = opset10.unique(const, opset10.constant(np.array(0, np.int64)), sorted=False)
    param = opset10.parameter([1], ov.Type.f32, name="unused")
    xml = write_ir([node.output(i) for i in range(4)] + [param.output(0)], [param], tmp_path)
    check_inference(xml)
    got = list(ir_runner.load(str(xml)).run({"unused": np.zeros(1, np.float32)}).values())
    assert got[0].tolist() == [[1, 2], [0, 5]] and got[3].tolist() == [2, 1]


def _built(data=("f32", "2,3"), axis=("i64", "", 1), attrs=None, axis_param=False):
    b = IRBuilder()
    inputs = [b.parameter("data", *data)]
    if axis is not None:
        et, shape, value = axis
        inputs.append(b.parameter("axis", et, shape) if axis_param else b.const("axis", np.array(value).reshape(
            [int(d) for d in shape.split(",")] if shape else []), et))
    specs = [("FP32", "-1"), ("I64", "-1"), ("I64", "-1"), ("I64", "-1")]
    b.result(b.layer("Unique", "opset10", inputs, attrs=attrs or {}, out_specs=specs))
    return b.build()


@pytest.mark.parametrize("kwargs, error, what, port", [
    ({"axis": ("i64", "", 2)}, InferenceError, "out of the range", "axis"),
    ({"axis": ("i64", "", -3)}, InferenceError, "out of the range", "axis"),
    ({"axis": ("f32", "", 1)}, InferenceError, "i32 or i64", "axis"),
    ({"axis": ("i64", "2", [0, 1])}, InferenceError, "1 element", "axis"),
    ({"axis": ("i64", "", 1), "axis_param": True}, InferenceError, "constant", "axis"),
    ({"data": ("u1", "8")}, InferenceError, "8 bits or more", "data"),
    ({"attrs": {"index_element_type": "u8"}}, IRError, "index_element_type", None),
    ({"attrs": {"sorted": "maybe"}}, IRError, "sorted", None),
])
def test_bad_inputs_name_layer_and_port(kwargs, error, what, port):
    xml, weights = _built(**kwargs)
    with pytest.raises(error, match=what) as info:
        ir_runner.load(xml, weights=weights)
    assert "Unique" in str(info.value) and (port is None or f"({port})" in str(info.value))


# -- values ---------------------------------------------------------------------------------------------

OP_REFERENCE = [  # OpenVINO's op_reference cases: (data, axis, sorted, uniques, indices, reverse, counts)
    ([1, 1, 2, 3], None, True, [1, 2, 3], [0, 2, 3], [0, 0, 1, 2], [2, 1, 1]),
    ([-1, 3, -2, -3, 3, -2, 5, 3], None, True, [-3, -2, -1, 3, 5], [3, 2, 0, 1, 6], [2, 3, 1, 0, 3, 1, 4, 3],
     [1, 2, 1, 3, 1]),
    ([-1, 3, -2, -3, 3, -2, 5, 3], None, False, [-1, 3, -2, -3, 5], [0, 1, 2, 3, 6], [0, 1, 2, 3, 1, 2, 4, 1],
     [1, 3, 2, 1, 1]),
    ([[-1, 2, -1], [2, -1, 2], [-1, 2, -1]], 0, True, [[-1, 2, -1], [2, -1, 2]], [0, 1], [0, 1, 0], [2, 1]),
    ([[-1, 2, -1], [2, -1, 2], [-1, 2, -1]], 1, False, [[-1, 2], [2, -1], [-1, 2]], [0, 1], [0, 1, 0], [2, 1]),
    ([[[5, 1], [2, 2]], [[5, 1], [2, 2]]], -1, True, [[[1, 5], [2, 2]], [[1, 5], [2, 2]]], [1, 0], [1, 0], [1, 1]),
]


@pytest.mark.parametrize("case", range(len(OP_REFERENCE)))
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int16, np.float16])
def test_op_reference_cases(case, dtype, tmp_path):
    data, axis, sorted_, *want = OP_REFERENCE[case]
    x = np.array(data, dtype)
    xml, _ = _model(tmp_path, list(x.shape), axis, et=ov.Type(np.dtype(dtype)), sorted=sorted_)
    got = list(check_run(xml, {"data": x}, oracle="cpu").values())
    assert [g.tolist() for g in got] == want


def test_nan_without_sorting_is_a_unique_each_time(tmp_path):
    xml, _ = _model(tmp_path, [8], sorted=False)
    x = np.array([3, 1, np.nan, 2, 1, np.nan, -0.0, 0.0], np.float32)
    got = list(check_run(xml, {"data": x}, oracle="cpu").values())
    assert got[1].tolist() == [0, 1, 2, 3, 5, 6] and got[3].tolist() == [1, 2, 1, 1, 1, 2]
    assert np.signbit(got[0][-1])  # -0.0 was first: it is kept (0.0 equals it)
    xml, _ = _model(tmp_path, [4, 2], 0, sorted=False, name="rows")
    x = np.array([[1, 2], [np.nan, 1], [1, 2], [np.nan, 1]], np.float32)
    got = list(check_run(xml, {"data": x}, oracle="cpu").values())
    assert got[1].tolist() == [0, 1, 3] and got[2].tolist() == [0, 1, 0, 2]


@pytest.mark.parametrize("axis", [None, 0])
def test_nan_with_sorting_refused(axis, tmp_path):
    xml, _ = _model(tmp_path, [2, 2], axis, sorted=True)
    with pytest.raises(InputError, match="NaN") as info:
        ir_runner.load(str(xml)).run({"data": np.array([[1, np.nan], [0, 2]], np.float32)})
    assert "Unique" in str(info.value) and "(data)" in str(info.value)


def test_signed_zeros_sorted_keep_the_first(tmp_path):
    xml, _ = _model(tmp_path, [5], sorted=True)
    got = list(check_run(xml, {"data": np.array([0.0, -1, -0.0, 2, 0.0], np.float32)}, oracle="cpu").values())
    assert got[0].tolist() == [-1, 0, 2] and not np.signbit(got[0][1]) and got[3].tolist() == [1, 3, 1]


def test_empty_and_scalar_inputs(tmp_path):
    xml, _ = _model(tmp_path, [-1, 3], 0)
    got = list(ir_runner.load(str(xml)).run({"data": np.zeros((0, 3), np.float32)}).values())
    assert [g.shape for g in got] == [(0, 3), (0,), (0,), (0,)]  # (the CPU plugin fails on an empty input)
    xml, _ = _model(tmp_path, [-1], name="flat")
    got = list(ir_runner.load(str(xml)).run({"data": np.zeros(0, np.float32)}).values())
    assert [g.shape for g in got] == [(0,), (0,), (0,), (0,)]
    xml, _ = _model(tmp_path, [2, -1], 0, name="rows")
    got = list(ir_runner.load(str(xml)).run({"data": np.zeros((2, 0), np.float32)}).values())
    assert [g.tolist() for g in got[1:]] == [[0], [0, 0], [2]] and got[0].shape == (1, 0)
    xml, _ = _model(tmp_path, [], name="scalar")
    got = list(check_run(xml, {"data": np.array(7, np.float32)}, oracle="cpu").values())
    assert [g.tolist() for g in got] == [[7], [0], [0], [1]]


def test_wide_integers_kept_whole(tmp_path):
    """i64/u64 beyond 32 bits: distinct values stay distinct (the CPU plugin computes them in i32)."""
    for dtype, values in ((np.int64, [2**62 + 1, 2**62, 2**62 + 1]), (np.uint64, [2**63 + 5, 1, 2**63 + 5])):
        xml, _ = _model(tmp_path, [3], et=ov.Type(np.dtype(dtype)), name=np.dtype(dtype).name)
        got = list(ir_runner.load(str(xml)).run({"data": np.array(values, dtype)}).values())
        assert got[0].tolist() == sorted(set(values)) and got[3].tolist() == [1, 2]


def test_bf16(tmp_path):
    xml, _ = _model(tmp_path, [5], et=ov.Type.bf16)
    x = np.array([1.5, -2, 1.5, 0.25, -2], ml_dtypes.bfloat16)
    got = list(check_run(xml, {"data": x}, oracle="cpu").values())
    assert got[0].dtype == x.dtype and got[0].astype(np.float32).tolist() == [-2, 0.25, 1.5]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_])
@pytest.mark.parametrize("sorted_", [True, False])
def test_one_byte_types_with_an_axis(dtype, sorted_, tmp_path):
    rng = np.random.default_rng(4)
    x = rng.integers(0, 2, (6, 3)).astype(dtype)
    xml, _ = _model(tmp_path, [6, 3], 0, et=ov.Type(np.dtype(dtype)), sorted=sorted_)
    twin = lambda: _model(tmp_path, [6, 3], 0, et=ov.Type.i32, sorted=sorted_, name="twin")[0]  # noqa: E731
    check_run(xml, {"data": x}, oracle=_widened_cpu(twin))


def test_batch_rule_says_why_rows_mix():
    assert "compares" in OPS[0].batch({"axis": 1}, [], [], [0, None])


# -- seeded differential --------------------------------------------------------------------------------

TYPES = [np.float32, np.int32, np.int8, np.uint8, np.float16, np.int64, np.bool_, np.float64, np.uint16, np.int16]


@pytest.mark.parametrize("seed", range(40))
def test_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(0, 4))
    shape = [int(v) for v in rng.integers(1, 5, rank)]
    dtype = TYPES[seed % len(TYPES)]
    x = rng.integers(-2, 3, shape)
    x = (x > 0) if dtype == np.bool_ else x.astype(dtype)
    if np.dtype(dtype).kind == "f" and rng.integers(2):
        x = np.where(x == 0, -0.0, x).astype(dtype)
    axis = None if rank == 0 or rng.integers(2) else int(rng.integers(-rank, rank))
    attrs = {"sorted": bool(rng.integers(2)), "index_element_type": ("i32", "i64")[int(rng.integers(2))],
             "count_element_type": ("i32", "i64")[int(rng.integers(2))]}
    et = ov.Type(np.dtype(dtype))
    xml, _ = _model(tmp_path, shape, axis, et=et, axis_dtype=(np.int32, np.int64)[seed % 2], **attrs)
    check_inference(xml)
    if axis is not None and np.dtype(dtype).itemsize == 1:
        oracle = _widened_cpu(lambda: _model(tmp_path, shape, axis, et=ov.Type.i32, name="twin", **attrs)[0])
    else:
        oracle = "cpu"
    check_run(xml, {"data": x}, oracle=oracle)
