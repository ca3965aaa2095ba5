"""GatherElements-6, GatherND-5/8, ScatterUpdate-3, ScatterElementsUpdate-3/12, ScatterNDUpdate-3/15: shapes as
OpenVINO infers them (type_prop cases), values against its reference (scatters: Node.evaluate; gathers have
no evaluate: the CPU plugin on in-range indices), index corners, seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset3, opset5, opset13, opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IndexOutOfRangeError, IRError  # noqa: E402
from tests.helpers.optest import check_inference, check_run, cpu_outputs, write_ir  # noqa: E402
from tests.helpers.ov_random import parameter  # noqa: E402


def _param(shape, et=ov.Type.f32, name="data"):
    return opset13.parameter(ov.PartialShape(shape), et, name=name)


# -- shapes (type_prop) --------------------------------------------------------------------------------

@pytest.mark.parametrize("data, indices, axis", [
    ([3, 4], [3, 7], 1), ([3, 4], [2, 4], 0), ([3, 4, 5], [3, 2, 5], -2), ([-1, 4], [3, -1], 1),
    ([-1, -1, -1], [-1, 2, -1], 2),
])
def test_gather_elements_shapes(data, indices, axis, tmp_path):
    d, i = _param(data), _param(indices, ov.Type.i32, "indices")
    check_inference(write_ir(opset13.gather_elements(d, i, axis), [d, i], tmp_path))


def test_gather_elements_dynamic_ranks(tmp_path):
    d, i = _param(ov.PartialShape.dynamic()), _param([2, 3], ov.Type.i64, "indices")
    check_inference(write_ir(opset13.gather_elements(d, i, 1), [d, i], tmp_path))
    d, i = _param([2, 5]), _param(ov.PartialShape.dynamic(), ov.Type.i64, "indices")
    check_inference(write_ir(opset13.gather_elements(d, i, 1), [d, i], tmp_path, "b"))


@pytest.mark.parametrize("version", [5, 8])
@pytest.mark.parametrize("data, indices, batch_dims", [
    ([3, 4, 5], [2, 2], 0), ([3, 4, 5], [2, 3, 1], 0), ([2, 3, 4, 5], [2, 3, 2], 2), ([2, 3, 4, 5], [2, 3, 7, 1], 2),
    ([2, -1, 4], [2, 3, 1], 1), ([-1, 3, 4], [-1, 2, 1], 1), ([-1, 3, 4], [3, 3, 1, 1], 2),
    ([4, 3], [-1, 2], 0), ([3, 4], [3, 1], 1),
])
def test_gather_nd_shapes(version, data, indices, batch_dims, tmp_path):
    make = opset5.gather_nd if version == 5 else opset13.gather_nd
    d, i = _param(data), _param(indices, ov.Type.i32, "indices")
    check_inference(write_ir(make(d, i, batch_dims), [d, i], tmp_path))


def test_gather_nd_dynamic_tuple_length(tmp_path):
    d, i = _param([3, 4]), _param([2, -1], ov.Type.i64, "indices")
    check_inference(write_ir(opset13.gather_nd(d, i), [d, i], tmp_path))


@pytest.mark.parametrize("data, indices, updates, axis", [
    ([4, 3], [2], [2, 3], 0), ([4, 3, 2], [2, 2], [4, 2, 2, 2], 1), ([-1, 3], [5], [-1, 5], 1), ([4], [], [], 0),
])
def test_scatter_update_shapes(data, indices, updates, axis, tmp_path):
    d, i, u = _param(data), _param(indices, ov.Type.i64, "indices"), _param(updates, name="updates")
    node = opset13.scatter_update(d, i, u, opset13.constant(np.int64(axis)))
    check_inference(write_ir(node, [d, i, u], tmp_path))


@pytest.mark.parametrize("version", [3, 12])
@pytest.mark.parametrize("data, indices", [([4, 3], [2, 3]), ([-1, 5], [2, 2]), ([4, 3, 2], [1, 1, 1])])
def test_scatter_elements_shapes(version, data, indices, tmp_path):
    d, i, u = _param(data), _param(indices, ov.Type.i32, "indices"), _param(indices, name="updates")
    axis = opset13.constant(np.int64(0))
    node = opset3.scatter_elements_update(d, i, u, axis) if version == 3 else opset13.scatter_elements_update(
        d, i, u, axis, "sum", False)
    check_inference(write_ir(node, [d, i, u], tmp_path))


@pytest.mark.parametrize("data, indices, updates", [
    ([4, 3], [2, 1], [2, 3]), ([4, 3], [2, 2], [2]), ([4, 3, 2], [5, 2], [5, 2]), ([-1, 3], [2, 1], [2, 3]),
])
def test_scatter_nd_shapes(data, indices, updates, tmp_path):
    d, i, u = _param(data), _param(indices, ov.Type.i32, "indices"), _param(updates, name="updates")
    check_inference(write_ir(opset13.scatter_nd_update(d, i, u), [d, i, u], tmp_path))


def test_bad_shapes_are_inference_errors(tmp_path):
    d, i = _param([3, 4]), _param([3, 2], ov.Type.i32, "indices")
    path = write_ir(opset13.gather_elements(d, i, 1), [d, i], tmp_path)
    text = path.read_text().replace('axis="1"', 'axis="5"')
    path.write_text(text)
    with pytest.raises(IRError, match="GatherElements-6.*axis=5"):
        ir_runner.load(str(path))


# -- values --------------------------------------------------------------------------------------------

def test_gather_elements_reference_cases(tmp_path):
    # op_reference gather_elements: 2-D axis 0/1, 3-D
    d, i = _param([2, 2], ov.Type.i32), _param([2, 2], ov.Type.i32, "indices")
    path = write_ir(opset13.gather_elements(d, i, 1), [d, i], tmp_path)
    out = ir_runner.load(str(path)).run({"data": np.array([[1, 2], [3, 4]], np.int32),
                                         "indices": np.array([[0, 0], [1, 0]], np.int32)})
    assert out[next(iter(out))].tolist() == [[1, 1], [4, 3]]
    feeds = {"data": np.array([[1, 2], [3, 4]], np.int32), "indices": np.array([[-1, -2], [0, 1]], np.int32)}
    check_run(path, feeds, oracle=cpu_outputs)  # negative indices: the spec's and the CPU plugin's reading


def test_gather_nd_reference_cases(tmp_path):
    d, i = _param([2, 2], ov.Type.i32), _param([2, 2], ov.Type.i64, "indices")
    path = write_ir(opset13.gather_nd(d, i), [d, i], tmp_path)
    out = ir_runner.load(str(path)).run({"data": np.array([[1, 2], [3, 4]], np.int32),
                                         "indices": np.array([[0, 0], [1, -1]], np.int64)})
    assert out[next(iter(out))].tolist() == [1, 4]


@pytest.mark.parametrize("op", ["gather_elements", "gather_nd", "scatter_update", "scatter_nd"])
def test_out_of_range_index_is_refused_naming_the_layer(op, tmp_path):
    d = _param([3, 4])
    if op == "gather_elements":
        i = _param([3, 4], ov.Type.i32, "indices")
        node, bad = opset13.gather_elements(d, i, 1), np.full((3, 4), 4, np.int32)
    elif op == "gather_nd":
        i = _param([1, 2], ov.Type.i32, "indices")
        node, bad = opset13.gather_nd(d, i), np.array([[0, -5]], np.int32)
    elif op == "scatter_update":
        i = _param([1], ov.Type.i32, "indices")
        node = opset13.scatter_update(d, i, opset13.constant(np.ones((1, 4), np.float32)),
                                      opset13.constant(np.int64(0)))
        bad = np.array([-1], np.int32)  # the reference refuses negative indices here
    else:
        i = _param([1, 2], ov.Type.i32, "indices")
        node, bad = opset13.scatter_nd_update(d, i, opset13.constant(np.ones(1, np.float32))), np.array([[3, 0]],
                                                                                                     np.int32)
    path = write_ir(node, [d, i], tmp_path)
    with pytest.raises(IndexOutOfRangeError) as caught:
        ir_runner.load(str(path)).run({"data": np.zeros((3, 4), np.float32), "indices": bad})
    assert caught.value.layer is not None


DTYPES = [np.float32, np.float16, np.int32, np.uint32, np.int64, np.uint64, np.bool_]
"""The element types every scatter has a reference ``evaluate`` for (i8, u8, u16, f64 have none: ir-run gives
them the same semantics)."""


def _values(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 4).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def _et(dtype):
    return ov.Type.boolean if dtype == np.bool_ else ov.Type(np.dtype(dtype))


@pytest.mark.parametrize("reduction", ["none", "sum", "prod", "min", "max", "mean"])
@pytest.mark.parametrize("use_init", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_elements_reductions(reduction, use_init, dtype, tmp_path):
    if reduction == "mean" and dtype == np.bool_:
        pytest.skip("mean of booleans has no reference")
    rng = np.random.default_rng(hash((reduction, use_init, np.dtype(dtype).str)) % 2**32)
    d, i, u = _param([4, 5], _et(dtype)), _param([6, 5], ov.Type.i64, "indices"), _param([6, 5], _et(dtype), "u")
    node = opset13.scatter_elements_update(d, i, u, opset13.constant(np.int64(0)), reduction, use_init)
    path = write_ir(node, [d, i, u], tmp_path)
    check_inference(path)
    feeds = {"data": _values(rng, (4, 5), dtype), "indices": rng.integers(-4, 4, size=(6, 5)),
             "u": _values(rng, (6, 5), dtype)}
    if dtype == np.float32:
        feeds["u"][0, :2] = [-0.0, np.nan]
    check_run(path, feeds)


@pytest.mark.parametrize("reduction", ["none", "sum", "sub", "prod", "min", "max"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_nd_reductions(reduction, dtype, tmp_path):
    """ScatterNDUpdate-15 (ONNX ScatterND with a reduction, torch's index_put with accumulate): repeated
    index tuples reduce in order, whole slices at once, NaN and -0.0 as the reference's min/max keep them."""
    rng = np.random.default_rng(hash((reduction, np.dtype(dtype).str)) % 2**32)
    d, i, u = _param([4, 3], _et(dtype)), _param([5, 1], ov.Type.i64, "indices"), _param([5, 3], _et(dtype), "u")
    path = write_ir(opset15.scatter_nd_update(d, i, u, reduction), [d, i, u], tmp_path)
    check_inference(path)
    feeds = {"data": _values(rng, (4, 3), dtype), "indices": np.array([[1], [-3], [3], [0], [1]]),
             "u": _values(rng, (5, 3), dtype)}
    if np.dtype(dtype).kind == "f":
        feeds["data"][1] = [np.nan, -0.0, 0.0]
        feeds["u"][0] = [1.0, 0.0, -0.0]
        feeds["u"][4, 0] = np.nan
    check_run(path, feeds)


@pytest.mark.parametrize(("reduction", "updates", "want"), [("prod", [300, 0.01], 900), ("sum", [65000, -65000], 300)])
def test_scatter_nd_reductions_of_f16_accumulate_in_f32(reduction, updates, want, tmp_path):
    """300 * 300 * 0.01 and 300 + 65000 - 65000 in f16: the reference reduces in f32 and rounds once (900 and
    300), where f16 steps would overflow to inf or round 65300 (found by scripts/fuzz_ops.py)."""
    d, i, u = _param([1], ov.Type.f16), _param([2, 1], ov.Type.i64, "indices"), _param([2], ov.Type.f16, "u")
    path = write_ir(opset15.scatter_nd_update(d, i, u, reduction), [d, i, u], tmp_path)
    feeds = {"data": np.array([300], np.float16), "indices": np.zeros((2, 1), np.int64),
             "u": np.array(updates, np.float16)}
    assert next(iter(check_run(path, feeds).values())).tolist() == [want]


@pytest.mark.parametrize("op", ["update", "elements", "nd3", "nd15"])
def test_scatter_into_a_transposed_view(op, tmp_path):
    """Data that is a non-contiguous view (a Transpose's output, as BEiT's relative position index built in
    ONNX): the copy written into must be C-ordered, or the writes land in a temporary reshape and are lost."""
    x = _param([2, 4, 3], ov.Type.i64, "x")
    data = opset13.transpose(x, opset13.constant(np.array([2, 1, 0])))  # [3, 4, 2]
    if op == "update":
        node = opset13.scatter_update(data, opset13.constant(np.array([2, 0])),
                                      opset13.constant(np.arange(16).reshape(2, 4, 2)), opset13.constant(np.int64(0)))
    elif op == "elements":
        node = opset13.scatter_elements_update(data, opset13.constant(np.array([[[1, 0]]])),
                                               opset13.constant(np.array([[[7, 8]]])), opset13.constant(np.int64(1)))
    else:
        make = opset13.scatter_nd_update if op == "nd3" else opset15.scatter_nd_update
        tuples = opset13.constant(np.array([[[0, 0, 0]], [[2, 3, 1]]]))
        node = make(data, tuples, opset13.constant(np.array([[5], [6]])))
    path = write_ir(node, [x], tmp_path)
    check_inference(path)
    got = check_run(path, {"x": np.arange(24).reshape(2, 4, 3)})
    assert next(iter(got.values())).flags.c_contiguous


def _scatter_graph(rng, tmp_path):
    kind = rng.choice(["update", "elements3", "nd"])
    rank = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 5, size=rank))
    dtype = DTYPES[int(rng.integers(len(DTYPES)))]
    data = _param(shape, _et(dtype))
    feeds = {"data": _values(rng, shape, dtype)}
    if kind == "update":
        axis = int(rng.integers(-rank, rank))
        ishape = tuple(int(n) for n in rng.integers(0, 3, size=int(rng.integers(1, 3))))  # 0-D: the reference crashes
        ushape = shape[:axis % rank] + ishape + shape[axis % rank + 1:]
        i, u = _param(ishape, ov.Type.i32, "indices"), _param(ushape, _et(dtype), "u")
        node = opset13.scatter_update(data, i, u, opset13.constant(np.int32(axis)))
        feeds["indices"] = rng.integers(0, shape[axis], size=ishape).astype(np.int32)
    elif kind == "elements3":
        axis = int(rng.integers(-rank, rank))
        ushape = tuple(int(rng.integers(1, n + 1)) for n in shape)
        i, u = _param(ushape, ov.Type.i64, "indices"), _param(ushape, _et(dtype), "u")
        node = opset3.scatter_elements_update(data, i, u, opset13.constant(np.int64(axis)))
        dim = shape[axis]
        feeds["indices"] = rng.integers(-dim, dim, size=ushape)
    else:
        k = int(rng.integers(1, rank + 1))
        lead = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(1, 3))))
        i, u = _param(lead + (k,), ov.Type.i64, "indices"), _param(lead + shape[k:], _et(dtype), "u")
        node = opset13.scatter_nd_update(data, i, u)
        feeds["indices"] = np.stack([rng.integers(-n, n, size=lead) for n in shape[:k]], axis=-1)
    feeds["u"] = _values(rng, tuple(u.get_output_partial_shape(0).to_shape()), dtype)
    return write_ir(node, [data, i, u], tmp_path), feeds


@pytest.mark.parametrize("seed", range(30))
def test_scatter_differential(seed, tmp_path):
    path, feeds = _scatter_graph(np.random.default_rng(seed), tmp_path)
    check_inference(path)
    check_run(path, feeds)


def _gather_graph(rng, tmp_path):
    rank = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 5, size=rank))
    dtype = [np.float32, np.int32, np.int8, np.float16][int(rng.integers(4))]
    data = _param(shape, _et(dtype))
    feeds = {"data": _values(rng, shape, dtype)}
    if rng.random() < 0.5:
        axis = int(rng.integers(-rank, rank))
        ishape = tuple(int(rng.integers(1, 4)) if i == axis % rank else n for i, n in enumerate(shape))
        i = _param(ishape, ov.Type.i32, "indices")
        node = opset13.gather_elements(data, i, axis)
        feeds["indices"] = rng.integers(-shape[axis], shape[axis], size=ishape).astype(np.int32)
    else:
        batch_dims = int(rng.integers(0, rank))
        k = int(rng.integers(1, rank - batch_dims + 1))
        middle = tuple(int(n) for n in rng.integers(1, 3, size=int(rng.integers(0, 2))))
        ishape = shape[:batch_dims] + middle + (k,)
        i = _param(ishape, ov.Type.i64, "indices")
        node = (opset5.gather_nd if rng.random() < 0.5 else opset13.gather_nd)(data, i, batch_dims)
        lead = shape[batch_dims:batch_dims + k]
        feeds["indices"] = np.stack([rng.integers(0, n, size=ishape[:-1]) for n in lead], axis=-1)
    return write_ir(node, [data, i], tmp_path), feeds


@pytest.mark.parametrize("seed", range(20))
def test_gather_differential_against_cpu(seed, tmp_path):
    path, feeds = _gather_graph(np.random.default_rng(seed), tmp_path)
    check_inference(path)
    check_run(path, feeds, oracle=cpu_outputs)


@pytest.mark.parametrize("op", ["update", "elements", "nd"])
def test_signalling_f16_nans_as_the_reference_moves_them(op, tmp_path):
    """ScatterElementsUpdate and ScatterNDUpdate evaluate f16 through f32 (NaNs quietened everywhere);
    ScatterUpdate copies bits."""
    d, u = _param([2, 2], ov.Type.f16), _param([1, 2], ov.Type.f16, "u")
    if op == "update":
        node = opset13.scatter_update(d, opset13.constant(np.array([1])), u, opset13.constant(np.int64(0)))
    elif op == "elements":
        node = opset13.scatter_elements_update(d, opset13.constant(np.array([[1, 0]])), u,
                                               opset13.constant(np.int64(0)))
    else:
        node = opset13.scatter_nd_update(d, opset13.constant(np.array([[1]])), u)
    path = write_ir(node, [d, u], tmp_path)
    signalling = np.array([0x7C01, 0x3C00, 0xFC05, 0x7E00], np.uint16).view(np.float16).reshape(2, 2)
    check_run(path, {"data": signalling, "u": signalling[:1].copy()})


@pytest.mark.parametrize("reduction", ["none", "max", "min", "sum", "prod", "mean"])
def test_bf16_scatter_elements(reduction, tmp_path):
    """bf16 reduces in f32 and rounds with OpenVINO's own conversion (half up when the kept bit is odd, else
    down), not numpy's round-to-nearest-even."""
    import ml_dtypes

    rng = np.random.default_rng(4)
    d, i, u = _param([4, 5], ov.Type.bf16), _param([6, 5], ov.Type.i64, "indices"), _param([6, 5], ov.Type.bf16, "u")
    path = write_ir(opset13.scatter_elements_update(d, i, u, opset13.constant(np.int64(0)), reduction), [d, i, u],
                    tmp_path)
    feeds = {"data": rng.standard_normal((4, 5)).astype(ml_dtypes.bfloat16), "indices": rng.integers(-4, 4, (6, 5)),
             "u": rng.standard_normal((6, 5)).astype(ml_dtypes.bfloat16)}
    check_run(path, feeds)
    if reduction == "sum":  # 1 + k/1024 for k = 0..16: 0.75 ULP rounds down, 1.5 ULP up
        feeds = {"data": np.ones((4, 5), ml_dtypes.bfloat16), "indices": np.zeros((6, 5), np.int64),
                 "u": np.zeros((6, 5), ml_dtypes.bfloat16)}
        feeds["u"][0] = np.array([0, 4, 6, 12, 14], np.float32) / 1024
        got = check_run(path, feeds)[next(iter(ir_runner.load(str(path)).run(feeds)))]
        assert ((got[0].astype(np.float32) - 1) * 1024).tolist() == [0, 0, 0, 16, 16]


@pytest.mark.parametrize("op", ["update", "nd"])
def test_scatter_into_a_shape_vector_keeps_known_dims(op, tmp_path):
    """ShapeOf -> ScatterUpdate/ScatterNDUpdate -> Reshape, as exported models build target shapes: the dims
    OpenVINO knows through the scatter are the ones ir-run infers."""
    from ir_runner.ops.registry import lookup

    if lookup("ShapeOf", "opset3") is None or lookup("Reshape", "opset1") is None:
        pytest.skip("ShapeOf and Reshape are not on this branch yet")
    d = _param([-1, 3, 4])
    shape = opset13.shape_of(d, "i64")
    if op == "update":
        target = opset13.scatter_update(shape, opset13.constant(np.array([2])), opset13.constant(np.array([-1])),
                                        opset13.constant(np.int64(0)))
    else:
        target = opset13.scatter_nd_update(shape, opset13.constant(np.array([[0]])), opset13.constant(np.array([-1])))
    node = opset13.reshape(d, target, False)
    path = write_ir(node, [d], tmp_path)
    check_inference(path)
    check_run(path, {"data": np.arange(24, dtype=np.float32).reshape(2, 3, 4)})


def test_scatter_update_with_a_computed_axis_is_planned_per_value(tmp_path):
    d, i, u, axis = _param([2, 2]), _param([1], ov.Type.i64, "indices"), _param([2, 1], name="u"), _param(
        [], ov.Type.i64, "axis")
    path = write_ir(opset13.scatter_update(d, i, u, axis), [d, i, u, axis], tmp_path)
    check_inference(path)
    feeds = {"data": np.zeros((2, 2), np.float32), "indices": np.array([1]), "u": np.ones((2, 1), np.float32)}
    for value in (1, -1):
        check_run(path, {**feeds, "axis": np.array(value)})


# -- empty and scalar tensors --------------------------------------------------------------------------------

def _gather_elements_empty():
    d, i = parameter("data", "f32", [0, 3]), parameter("i", "i32", [0, 3])
    feeds = {"data": np.zeros((0, 3), np.float32), "i": np.zeros((0, 3), np.int32)}
    return opset13.gather_elements(d, i, 0), [d, i], feeds, cpu_outputs


def _gather_nd_no_tuples():
    d, i = parameter("data", "f32", [3, 2]), parameter("i", "i32", [0, 1])
    feeds = {"data": np.ones((3, 2), np.float32), "i": np.zeros((0, 1), np.int32)}
    return opset13.gather_nd(d, i), [d, i], feeds, cpu_outputs


def _gather_nd_empty_slices():
    d, i = parameter("data", "f32", [3, 0]), parameter("i", "i32", [2, 1])
    feeds = {"data": np.zeros((3, 0), np.float32), "i": np.zeros((2, 1), np.int32)}
    return opset13.gather_nd(d, i), [d, i], feeds, cpu_outputs


def _scatter_update_empty():
    d, i, u = parameter("data", "f32", [3, 2]), parameter("i", "i64", [0]), parameter("u", "f32", [0, 2])
    node = opset13.scatter_update(d, i, u, opset13.constant(np.array(0, np.int64)))
    feeds = {"data": np.ones((3, 2), np.float32), "i": np.zeros(0, np.int64), "u": np.zeros((0, 2), np.float32)}
    return node, [d, i, u], feeds, None


def _scatter_elements_sum_empty():
    d, i, u = parameter("data", "f32", [3, 2]), parameter("i", "i64", [0, 2]), parameter("u", "f32", [0, 2])
    node = opset13.scatter_elements_update(d, i, u, opset13.constant(np.array(0, np.int64)), "sum")
    feeds = {"data": np.ones((3, 2), np.float32), "i": np.zeros((0, 2), np.int64), "u": np.zeros((0, 2), np.float32)}
    return node, [d, i, u], feeds, None


def _scatter_nd_empty():
    d, i, u = parameter("data", "f32", [3, 2]), parameter("i", "i64", [0, 1]), parameter("u", "f32", [0, 2])
    feeds = {"data": np.ones((3, 2), np.float32), "i": np.zeros((0, 1), np.int64), "u": np.zeros((0, 2), np.float32)}
    return opset13.scatter_nd_update(d, i, u), [d, i, u], feeds, None


def _scatter_nd_scalar_update():
    d, u = parameter("data", "f32", [3, 2]), parameter("u", "f32", [])
    feeds = {"data": np.ones((3, 2), np.float32), "u": np.array(7, np.float32)}
    return opset13.scatter_nd_update(d, opset13.constant(np.array([1, 0], np.int64)), u), [d, u], feeds, None


EMPTY_CASES = {  # name -> () -> (node, parameters, feeds, oracle)
    "gather-elements-empty": _gather_elements_empty, "gather-nd-no-tuples": _gather_nd_no_tuples,
    "gather-nd-empty-slices": _gather_nd_empty_slices, "scatter-update-empty": _scatter_update_empty,
    "scatter-elements-sum-empty": _scatter_elements_sum_empty, "scatter-nd-empty": _scatter_nd_empty,
    "scatter-nd-scalar-update": _scatter_nd_scalar_update,
}


@pytest.mark.parametrize("name", list(EMPTY_CASES))
def test_empty_and_scalar(name, tmp_path):
    node, params, feeds, oracle = EMPTY_CASES[name]()
    check_run(write_ir(node, params, tmp_path), feeds, oracle=oracle)


def test_gather_nd_with_empty_tuples_takes_whole_batch_elements(tmp_path):
    """Index tuples of length 0 pick the whole (batch) element each: the reference kernel's reading (the CPU plugin
    returns uninitialised memory there)."""
    d, i = parameter("data", "f32", [3, 2]), parameter("i", "i32", [2, 0])
    path = write_ir(opset13.gather_nd(d, i), [d, i], tmp_path)
    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    got = next(iter(ir_runner.load(str(path)).run({"data": data, "i": np.zeros((2, 0), np.int32)}).values()))
    assert np.array_equal(got, np.stack([data, data]))
