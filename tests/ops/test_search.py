"""Bucketize-3 and SearchSorted-15: values bit for bit against OpenVINO's CPU plugin (neither has a Node.evaluate in
OpenVINO 2026.4) for every element type the reference takes, both bounds/modes, both output types, the 1-D and N-D
sequence cases, NaN values and sequences holding NaN (the reference's binary search, probe for probe), empty
tensors; OpenVINO's op_reference cases with their expected values; shapes (dynamic, interval dims, dynamic rank)
inferred as OpenVINO declares them; bad ranks and types refused naming the layer and port; batch rules; a seeded
random differential; torch.bucketize / torch.searchsorted as OpenVINO converted them (tests/data/search)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset3, opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from ir_runner.ops.sort_search.search import batch_bucketize, batch_search_sorted  # noqa: E402
from ir_runner.types import PartialShape, TensorSpec, element_type  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402

DTYPES = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8,
          "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
          "u64": np.uint64}
OUTPUT_TYPES = ("i32", "i64")
BUCKETIZE_REFERENCE_TYPES = ("f32", "f16", "i32", "i64", "i8", "u8")  # what the template plugin's reference takes
NAN = np.nan


def param(name, et, shape):
    return opset3.parameter(ov.PartialShape(shape) if not isinstance(shape, ov.PartialShape) else shape,
                            ov.Type.bf16 if et == "bf16" else ov.Type(np.dtype(DTYPES[et])), name=name)


def search_sorted(sorted_, values, right=False, output_type="i64"):
    node = opset15.search_sorted(sorted_, values, right)
    if output_type != "i64":
        node.set_attribute("output_type", output_type)
        node.validate_and_infer_types()
    return node


def arr(values, et):
    return np.array(values, dtype=np.float64).astype(DTYPES[et])


# -- values: OpenVINO's op_reference cases -----------------------------------------------------------------------------

def test_bucketize_reference_cases(tmp_path):
    data, buckets = param("data", "f32", [10, 1]), param("buckets", "i32", [4])
    idata, ibuckets = param("idata", "i32", [1, 1, 10]), param("ibuckets", "i32", [4])
    nodes = [opset3.bucketize(data, buckets, "i32", True), opset3.bucketize(idata, ibuckets, "i32", False)]
    path = write_ir(nodes, [data, buckets, idata, ibuckets], tmp_path)
    check_inference(path)
    feeds = {"data": arr([8, 1, 2, 1.1, 8, 10, 1, 10.2, 0, 20], "f32").reshape(10, 1),
             "buckets": arr([1, 4, 10, 20], "i32"),
             "idata": arr([8, 1, 2, 1, 8, 5, 1, 5, 0, 20], "i32").reshape(1, 1, 10),
             "ibuckets": arr([1, 4, 10, 20], "i32")}
    got = list(check_run(path, feeds, oracle="cpu").values())
    assert got[0].reshape(-1).tolist() == [2, 0, 1, 1, 2, 2, 0, 3, 0, 3]
    assert got[1].reshape(-1).tolist() == [2, 1, 1, 1, 2, 2, 1, 2, 0, 4]


GRID = [0, 6, 20, 1, 6, 9, 1, 0, 0, 9, 10, 20]
SEARCH_SORTED_CASES = [  # (sorted shape, values shape, right_mode, sorted, values, expected): OpenVINO's table
    ([5], [2, 3], False, [1, 3, 5, 7, 9], [3, 6, 9, 3, 6, 9], [1, 3, 4, 1, 3, 4]),
    ([5], [4, 3], False, [1, 3, 5, 7, 9], GRID, [0, 3, 5, 0, 3, 4, 0, 0, 0, 4, 5, 5]),
    ([5], [4, 3], True, [1, 3, 5, 7, 9], GRID, [0, 3, 5, 1, 3, 5, 1, 0, 0, 5, 5, 5]),
    ([5], [2, 2, 3], False, [1, 3, 5, 7, 9], GRID,
     [0, 3, 5, 0, 3, 4, 0, 0, 0, 4, 5, 5]),
    ([2, 5], [2, 3], False, [1, 3, 5, 7, 9, 2, 4, 6, 8, 10], [3, 6, 9, 3, 6, 9], [1, 3, 4, 1, 2, 4]),
    ([2, 5], [2, 3], True, [1, 3, 5, 7, 9, 2, 4, 6, 8, 10], [3, 6, 9, 3, 6, 9], [2, 3, 5, 1, 3, 4]),
    ([2, 2, 5], [2, 2, 3], False, [1, 3, 5, 7, 9, 0, 2, 4, 6, 8, -20, 5, 10, 23, 41, 100, 125, 130, 132, 139],
     GRID, [0, 3, 5, 1, 3, 5, 1, 1, 1, 0, 0, 0]),
    ([2, 2, 5], [2, 2, 3], True, [1, 3, 5, 7, 9, 0, 2, 4, 6, 8, -20, 5, 10, 23, 41, 100, 125, 130, 132, 139],
     GRID, [0, 3, 5, 1, 4, 5, 1, 1, 1, 0, 0, 0]),
]


@pytest.mark.parametrize("et", ["i32", "f32"])
def test_search_sorted_reference_cases(et, tmp_path):
    params, nodes, feeds = [], [], {}
    for i, (s_shape, v_shape, right, s, v, _) in enumerate(SEARCH_SORTED_CASES):
        ps, pv = param(f"s{i}", et, s_shape), param(f"v{i}", et, v_shape)
        params += [ps, pv]
        nodes.append(search_sorted(ps, pv, right))
        feeds[f"s{i}"], feeds[f"v{i}"] = arr(s, et).reshape(s_shape), arr(v, et).reshape(v_shape)
    path = write_ir(nodes, params, tmp_path)
    check_inference(path)
    got = list(check_run(path, feeds, oracle="cpu").values())
    assert [g.reshape(-1).tolist() for g in got] == [case[-1] for case in SEARCH_SORTED_CASES]


# -- values: every element type, both bounds, both output types --------------------------------------------------------

def _data_for(et):
    signed = [-3, 0, 1, 2, 2, 3, 4.5, 7, 100, -128] if et[0] in "fi" else [0, 1, 2, 3, 4, 7, 100, 255, 2, 1]
    values = [v for v in signed if et[0] == "f" or float(v).is_integer()]
    if et[0] == "f":
        values = values + [NAN, -np.inf, np.inf, -0.0]
    return arr(values, et)


def _buckets_for(et):
    return arr([0, 2, 2, 3, 7, 100] if et[0] == "u" else [-5, 0, 2, 2, 3, 7, 100], et)


@pytest.mark.parametrize("output_type", ["i32", "i64"])
def test_bucketize_every_pair_of_reference_types(output_type, tmp_path):
    types = BUCKETIZE_REFERENCE_TYPES
    datas = {et: param(f"d_{et}", et, [-1]) for et in types}
    buckets = {et: param(f"b_{et}", et, [-1]) for et in types}
    nodes = [opset3.bucketize(datas[d], buckets[b], output_type, right) for d in types for b in types
             for right in (True, False)]
    path = write_ir(nodes, list(datas.values()) + list(buckets.values()), tmp_path)
    check_inference(path)
    feeds = {f"d_{et}": _data_for(et) for et in types} | {f"b_{et}": _buckets_for(et) for et in types}
    check_run(path, feeds, oracle="cpu")


def test_bucketize_other_numeric_types_as_the_cpu_plugin(tmp_path):
    """bf16, f64, i16, u16, u32, u64 are outside the reference's list; compared as C++ compares them (the CPU plugin
    agrees while values fit i32 and f32)."""
    others = ("bf16", "f64", "i16", "u16", "u32", "u64")
    datas = {et: param(f"d_{et}", et, [-1]) for et in others}
    buckets = {et: param(f"b_{et}", et, [-1]) for et in others}
    f32_data, f32_buckets = param("d_f32", "f32", [-1]), param("b_f32", "f32", [-1])
    nodes = [opset3.bucketize(datas[et], f32_buckets, "i64", right) for et in others for right in (True, False)]
    nodes += [opset3.bucketize(f32_data, buckets[et], "i32", right) for et in others for right in (True, False)]
    nodes += [opset3.bucketize(datas[et], buckets[et], "i64", False) for et in others]
    path = write_ir(nodes, [*datas.values(), *buckets.values(), f32_data, f32_buckets], tmp_path)
    check_inference(path)
    feeds = ({f"d_{et}": _data_for(et) for et in others} | {f"b_{et}": _buckets_for(et) for et in others}
             | {"d_f32": _data_for("f32"), "b_f32": _buckets_for("f32")})
    check_run(path, feeds, oracle="cpu")


@pytest.mark.parametrize("output_type", ["i32", "i64"])
def test_search_sorted_every_type_both_modes_1d_and_nd(output_type, tmp_path):
    params, nodes, feeds = [], [], {}
    for et in DTYPES:
        one, flat = param(f"s1_{et}", et, [-1]), param(f"v1_{et}", et, [-1, -1])
        rows, values = param(f"s2_{et}", et, [2, -1]), param(f"v2_{et}", et, [2, -1])
        params += [one, flat, rows, values]
        nodes += [search_sorted(one, flat, right, output_type) for right in (False, True)]
        nodes += [search_sorted(rows, values, right, output_type) for right in (False, True)]
        sequence = _buckets_for(et)
        data = _data_for(et)
        data = data[:data.size // 2 * 2]
        feeds[f"s1_{et}"], feeds[f"v1_{et}"] = sequence, data.reshape(2, -1)
        feeds[f"s2_{et}"] = np.stack([sequence, np.sort(arr([9, 1, 1, 0, 4, 3, 2], et)[:sequence.size])])
        feeds[f"v2_{et}"] = data.reshape(2, -1)
    path = write_ir(nodes, params, tmp_path)
    check_inference(path)
    check_run(path, feeds, oracle="cpu")


# -- NaN, unsorted sequences, exact types, empty tensors ---------------------------------------------------------------

def test_nan_values_and_sequences_holding_nan_follow_the_reference_search(tmp_path):
    """A NaN value goes to 0 (to len(buckets) in Bucketize without with_right_bound); a sequence with NaN, or one
    out of order, gives what the reference's binary search gives."""
    seq, values = param("seq", "f32", [-1]), param("values", "f32", [-1])
    rows, row_values = param("rows", "f32", [3, -1]), param("row_values", "f32", [3, -1])
    nodes = [opset3.bucketize(values, seq, "i64", right) for right in (True, False)]
    nodes += [search_sorted(seq, values, right) for right in (False, True)]
    nodes += [search_sorted(rows, row_values, right) for right in (False, True)]
    path = write_ir(nodes, [seq, values, rows, row_values], tmp_path)
    check_inference(path)
    grid = arr([NAN, -np.inf, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, np.inf, NAN], "f32")
    for sequence in ([1, 2, 2, 3, 5], [1, NAN, 3, 4, 5, 6, 7], [5, 1, 4, 2, 3, 0, 9, 8], [NAN], [NAN, NAN, 1, 2],
                     [1, 2, 3, NAN], [3]):
        table = np.stack([arr([1, 2, 2, 3, 5, 8, 9], "f32"), arr([1, NAN, 3, 4, 5, 6, 7], "f32"),
                          arr([5, 1, 4, 2, 3, 0, 9], "f32")])
        got = check_run(path, {"seq": arr(sequence, "f32"), "values": grid, "rows": table,
                               "row_values": np.stack([grid, grid[::-1], grid])}, oracle="cpu")
    first = list(got.values())
    assert first[0][0] == 0 and first[1][0] == 1 and first[2][0] == 0 and first[3][0] == 0  # NaN values, seq [3]


def test_64_bit_values_are_compared_exactly_where_the_cpu_plugin_wraps_them(tmp_path):
    """The CPU plugin converts i64, u32 and u64 to i32 and f64 to f32 first; the reference, and ir-run, compare
    the values themselves."""
    cases = {"i64": ([2**40, 2**40 + 1, 2**62], [2**40, 2**40 + 1, 2**40 + 2, 2**62, -2**62, 5]),
             "u64": ([1, 2**40, 2**63 + 5], [0, 2**40, 2**40 + 1, 2**63 + 5, 2**64 - 1]),
             "u32": ([1, 2**31, 2**32 - 5], [0, 2**31 - 1, 2**31, 2**32 - 5, 2**32 - 1]),
             "f64": ([1.0, 1 + 2**-40, 2.0], [1.0, 1 + 2**-41, 1 + 2**-40, 1.5])}
    for et, (sequence, values) in cases.items():
        s, v = param("s", et, [len(sequence)]), param("v", et, [len(values)])
        nodes = [search_sorted(s, v, right) for right in (False, True)]
        nodes += [opset3.bucketize(v, s, "i32", right) for right in (True, False)]
        path = write_ir(nodes, [s, v], tmp_path / et)
        check_inference(path)
        sequence_array = np.array(sequence, dtype=DTYPES[et])
        values_array = np.array(values, dtype=DTYPES[et])
        got = list(ir_runner.load(str(path)).run({"s": sequence_array, "v": values_array}).values())
        want = [np.searchsorted(sequence_array, values_array, side) for side in ("left", "right", "left", "right")]
        assert [g.tolist() for g in got] == [w.tolist() for w in want], et


def test_bucketize_mixed_types_compare_as_cpp_does(tmp_path):
    """i64 data against f32 buckets (and f32 data against i64 buckets) are compared as f32: 16777217 equals
    16777216 there."""
    di, bf = param("di", "i64", [3]), param("bf", "f32", [2])
    df, bi = param("df", "f32", [2]), param("bi", "i64", [3])
    nodes = [opset3.bucketize(di, bf, "i64", r) for r in (True, False)]
    nodes += [opset3.bucketize(df, bi, "i64", r) for r in (True, False)]
    path = write_ir(nodes, [di, bf, df, bi], tmp_path)
    feeds = {"di": np.array([16777217, 16777216, 16777218], np.int64), "bf": np.array([16777216, 16777218], np.float32),
             "df": np.array([16777216, 16777218], np.float32), "bi": np.array([16777216, 16777217, 16777218], np.int64)}
    got = check_run(path, feeds, oracle="cpu")
    assert [g.tolist() for g in got.values()] == [[0, 0, 1], [1, 1, 2], [0, 2], [2, 3]]


def test_empty_tensors(tmp_path):
    """Empty buckets or an empty innermost sequence give zeros; empty values an empty output. (The CPU plugin
    refuses empty inputs, so the expected values are written out.)"""
    data, buckets = param("data", "f32", [-1, -1]), param("buckets", "f32", [-1])
    rows, values = param("rows", "i32", [-1, -1]), param("values", "i32", [-1, -1])
    nodes = [opset3.bucketize(data, buckets, "i32", True), search_sorted(buckets, data, True),
             search_sorted(rows, values, False)]
    path = write_ir(nodes, [data, buckets, rows, values], tmp_path)
    check_inference(path)
    model = ir_runner.load(str(path))
    cases = [((2, 3), 0, (2, 0), (2, 4)), ((0, 3), 4, (3, 5), (3, 0)), ((2, 0), 3, (0, 5), (0, 2))]
    for data_shape, count, rows_shape, values_shape in cases:
        feeds = {"data": np.ones(data_shape, np.float32), "buckets": np.arange(count, dtype=np.float32),
                 "rows": np.zeros(rows_shape, np.int32), "values": np.ones(values_shape, np.int32)}
        got = list(model.run(feeds).values())
        assert [g.shape for g in got] == [data_shape, data_shape, values_shape]
        assert [g.dtype for g in got] == [np.int32, np.int64, np.int64]
        if count == 0:
            assert got[0].size and not got[0].any() and not got[1].any()
        else:
            assert got[0].size == got[1].size == 0
        if rows_shape[-1] == 0:
            assert got[2].size and not got[2].any()


def test_scalar_values_and_large_inputs_take_every_kernel_path(tmp_path):
    """Scalar values; large N-D inputs of 32-bit types (one np.searchsorted over row keys) and of 64-bit types
    (the vectorised binary search); a large 1-D sequence."""
    rng = np.random.default_rng(7)
    scalar, seq = param("scalar", "f32", []), param("seq", "f32", [-1])
    rows32, values32 = param("rows32", "f32", [-1, -1, -1]), param("values32", "f32", [-1, -1, -1])
    rows64, values64 = param("rows64", "i64", [-1, -1]), param("values64", "i64", [-1, -1])
    nodes = [search_sorted(seq, scalar, True), opset3.bucketize(scalar, seq, "i32", False),
             search_sorted(rows32, values32, False), search_sorted(rows32, values32, True),
             search_sorted(rows64, values64, True), search_sorted(seq, values32, False)]
    path = write_ir(nodes, [scalar, seq, rows32, values32, rows64, values64], tmp_path)
    check_inference(path)
    rows32_value = np.sort(rng.integers(-50, 50, (4, 5, 300)).astype(np.float32) / 4, axis=-1)
    rows32_value[0, 0, :3] = -0.0
    feeds = {"scalar": np.array(2.5, np.float32), "seq": np.sort(rng.normal(size=5000).astype(np.float32)),
             "rows32": rows32_value, "values32": rng.integers(-60, 60, (4, 5, 700)).astype(np.float32) / 4,
             "rows64": np.sort(rng.integers(-1000, 1000, (30, 200)), axis=-1),
             "values64": rng.integers(-1100, 1100, (30, 400))}
    feeds["values32"][0, 0, :2] = (0.0, -0.0)
    got = check_run(path, feeds, oracle="cpu")
    assert list(got.values())[0].shape == ()


# -- shapes ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sorted_shape, values_shape", [
    ([1, 3, 6], [1, 3, 6]), (ov.PartialShape.dynamic(), [1, 3, 6]), ([1, 3, 7, 5], ov.PartialShape.dynamic()),
    ([1, 3, 7, 100], [1, 3, 7, 10]), ([5], [2, 3]), ([5], [20]), ([8], [-1, -1, 3]), ([100], []),
    ([1, -1, 7, -1], [-1, 3, -1, 10]), ([1, -1, 7, 50], [-1, 3, -1, -1]),
    (ov.PartialShape.dynamic(), ov.PartialShape.dynamic()), ([-1, -1, 50], [-1, -1, 20]), ([-1], [-1, -1, 3]),
    ([4], ov.PartialShape.dynamic()), (ov.PartialShape.dynamic(), []), ([-1], []),
    (ov.PartialShape("[2,1..5,4]"), ov.PartialShape("[2..3,?,7]")),
    (ov.PartialShape("[1..8,?]"), ov.PartialShape("[3..,2..4]")),
])
def test_search_sorted_shapes_as_openvino_infers_them(sorted_shape, values_shape, tmp_path):
    node = search_sorted(param("s", "i32", sorted_shape), param("v", "i32", values_shape))
    path = write_ir(node, [node.input_value(0).get_node(), node.input_value(1).get_node()], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize("data_shape, buckets_shape", [
    ([2, 3, 2], [4]), ([4, -1], [5]), ([4, -1], [-1]), (ov.PartialShape.dynamic(), [3]), ([], [3]),
    (ov.PartialShape("[1..4,?,3..]"), ov.PartialShape.dynamic()), ([0, 3], [0]),
])
def test_bucketize_shapes_as_openvino_infers_them(data_shape, buckets_shape, tmp_path):
    node = opset3.bucketize(param("d", "f16", data_shape), param("b", "f32", buckets_shape), "i32", False)
    path = write_ir(node, [node.input_value(0).get_node(), node.input_value(1).get_node()], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


def _cpu_at_feed_shapes(xml, feeds):
    """The CPU plugin's outputs for the model reshaped to the feeds' shapes (it refuses inputs of dynamic rank)."""
    core = ov.Core()
    model = core.read_model(str(xml))
    model.reshape({p.output(0): ov.PartialShape(list(feeds[p.output(0).get_any_name()].shape))
                   for p in model.get_parameters()})
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled([feeds[p.output(0).get_any_name()] for p in model.get_parameters()])
    return [np.array(result[out]) for out in compiled.outputs]


def test_dynamic_rank_and_interval_dims_run_per_feed_shape(tmp_path):
    """Values of unknown rank against a 1-D and an N-D sequence, buckets of an interval length: inferred as OpenVINO
    declares them, then run at several feed shapes."""
    s1, s2 = param("s1", "f32", [4]), param("s2", "f32", ov.PartialShape("[2,?]"))
    values, buckets = param("v", "f32", ov.PartialShape.dynamic()), param("b", "f32", ov.PartialShape("[1..10]"))
    nodes = [search_sorted(s1, values, True), search_sorted(s2, values),
             opset3.bucketize(values, buckets, "i32", False)]
    path = write_ir(nodes, [s1, s2, values, buckets], tmp_path)
    check_inference(path)
    assert [str(o.partial_shape) for o in ir_runner.load(str(path)).outputs] == ["[...]", "[2,?]", "[...]"]
    rng = np.random.default_rng(5)
    for shape in ((2, 3), (2, 1), (2, 7)):
        feeds = {"s1": np.array([0, 1, 2, 3], np.float32), "s2": np.sort(rng.normal(size=(2, 5)).astype(np.float32)),
                 "v": rng.normal(size=shape).astype(np.float32), "b": np.array([-1, 0, 1], np.float32)}
        check_run(path, feeds, oracle=_cpu_at_feed_shapes)


# -- errors ------------------------------------------------------------------------------------------------------------

ERRORS = [  # (type, attrs, (data/sorted type, shape), (buckets/values type, shape), message)
    ("Bucketize", {"output_type": "f32"}, ("f32", "2,3"), ("f32", "4"), r"output_type must be i32 or i64"),
    ("Bucketize", {}, ("f32", "2,3"), ("f32", "2,2"),
     r"input port 1 \(id 1\) \(buckets\).*buckets must be 1-D, got \[2,2\]"),
    ("Bucketize", {}, ("f32", "2,3"), ("f32", ""), r"buckets must be 1-D, got \[\]"),
    ("Bucketize", {}, ("boolean", "2,3"), ("f32", "4"),
     r"input port 0 \(id 0\) \(data\).*numeric element type, got boolean"),
    ("Bucketize", {}, ("f32", "2,3"), ("boolean", "4"),
     r"port 1 \(id 1\) \(buckets\).*numeric element type, got boolean"),
    ("SearchSorted", {"output_type": "u8"}, ("f32", "5"), ("f32", "3"), r"output_type must be i32 or i64"),
    ("SearchSorted", {}, ("f32", "1,1,3,6"), ("f32", "1,3,6"),
     r"port 1 \(id 1\) \(values\).*must have the rank of sorted_sequence \(4\)"),
    ("SearchSorted", {}, ("f32", "1,1,3,6"), ("f32", "1,1,5,6"), r"values dim 2 is 5, sorted_sequence's 3"),
    ("SearchSorted", {}, ("f32", "2..4,6"), ("f32", "5..7,6"), r"values dim 0 is 5\.\.7, sorted_sequence's 2\.\.4"),
    ("SearchSorted", {}, ("i32", ""), ("i32", "1,1,5,6"), r"port 0 \(id 0\) \(sorted_sequence\).*cannot be a scalar"),
    ("SearchSorted", {}, ("i32", "2,2"), ("i32", ""), r"values is a scalar, so sorted_sequence must be 1-D"),
    ("SearchSorted", {}, ("f32", "1,3,6"), ("i32", "1,3,6"), r"element types of sorted_sequence, values must be equal"),
    ("SearchSorted", {}, ("boolean", "6"), ("boolean", "3"), r"numeric element type, got boolean"),
]


@pytest.mark.parametrize("kind, attrs, first, second, message", ERRORS)
def test_bad_ranks_types_and_attributes_are_refused_naming_the_layer_and_port(kind, attrs, first, second, message):
    builder = IRBuilder()
    a, b = builder.parameter("a", *first), builder.parameter("b", *second)
    version = "opset3" if kind == "Bucketize" else "opset15"
    layer = builder.layer(kind, version, [a, b], name="finder", attrs=attrs, out_specs=[("i64", "1")])
    builder.result(layer)
    with pytest.raises(IRError, match=message) as info:
        ir_runner.load(builder.build()[0])
    assert f"'finder' ({kind}-{3 if kind == 'Bucketize' else 15}" in str(info.value)


# -- batch rules -------------------------------------------------------------------------------------------------------

def _specs(*shapes):
    return [TensorSpec(element_type("f32"), PartialShape.of(s) if s is not None else PartialShape(None))
            for s in shapes]


def test_batch_rules():
    assert batch_bucketize({}, _specs((4, 3), (5,)), _specs((4, 3)), [0, None]) == [0]
    assert batch_bucketize({}, _specs((4, 3), (5,)), _specs((4, 3)), [1, None]) == [1]
    assert "buckets" in batch_bucketize({}, _specs((4, 3), (5,)), _specs((4, 3)), [None, 0])
    one_d = _specs((5,), (4, 3))
    assert batch_search_sorted({}, one_d, _specs((4, 3)), [None, 0]) == [0]
    assert "sorted sequences would be split" in batch_search_sorted({}, one_d, _specs((4, 3)), [0, 0])
    rows = _specs((4, 5), (4, 3))
    assert batch_search_sorted({}, rows, _specs((4, 3)), [0, 0]) == [0]
    assert batch_search_sorted({}, rows, _specs((4, 3)), [None, 1]) == [1]  # values along the searched axis
    assert "own row" in batch_search_sorted({}, rows, _specs((4, 3)), [None, 0])
    assert "own row" in batch_search_sorted({}, rows, _specs((4, 3)), [0, None])
    assert "split" in batch_search_sorted({}, rows, _specs((4, 3)), [1, 1])
    assert "dynamic rank" in batch_search_sorted({}, _specs(None, (4, 3)), _specs((4, 3)), [None, 0])


def test_a_chunked_run_equals_the_whole_run(tmp_path):
    ird = pytest.importorskip("ir_runner.dask")
    values, rows = param("values", "f32", [-1, 3]), param("rows", "f32", [-1, 6])
    buckets = opset3.constant(np.array([-1, 0, 0.5, 2], np.float32))
    nodes = [opset3.bucketize(values, buckets, "i32", False), search_sorted(rows, values, True),
             search_sorted(buckets, values, False)]
    path = write_ir(nodes, [values, rows], tmp_path)
    rng = np.random.default_rng(3)
    feeds = {"values": rng.normal(size=(10, 3)).astype(np.float32),
             "rows": np.sort(rng.normal(size=(10, 6)).astype(np.float32), axis=-1)}
    model = ir_runner.load(str(path))
    whole = model.run(feeds)
    chunked = ird.run(model, feeds, chunk=4)
    for name, value in whole.items():
        np.testing.assert_array_equal(chunked[name].compute(), value)


# -- a seeded random differential against the CPU plugin ---------------------------------------------------------------

def _random_case(seed, tmp_path):
    rng = np.random.default_rng(seed)
    et = str(rng.choice(list(DTYPES)))
    other = str(rng.choice(BUCKETIZE_REFERENCE_TYPES))
    low = 0 if et[0] == "u" else -20
    rank = int(rng.integers(1, 4))
    lead = tuple(int(n) for n in rng.integers(1, 4, rank - 1))
    length, count = int(rng.integers(1, 12)), int(rng.integers(1, 9))
    one_d = bool(rng.integers(2))
    sorted_shape = (length,) if one_d else lead + (length,)
    values_shape = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(0, 3)))) + (count,) if one_d \
        else lead + (count,)

    def draw(shape, dtype, sort=False):
        values = rng.integers(low, 21, shape).astype(np.float64)
        if dtype[0] in "fb":
            values /= 2
            if rng.integers(3) == 0 and values.size:
                values.flat[rng.integers(values.size)] = NAN
        if sort:
            values = np.sort(values, axis=-1) if rng.integers(5) else values  # now and then out of order
        return values.astype(DTYPES[dtype])

    s, v = param("s", et, [-1] * len(sorted_shape)), param("v", et, [-1] * len(values_shape))
    b = param("b", other, [-1])
    output_type = str(rng.choice(OUTPUT_TYPES))
    right = bool(rng.integers(2))
    nodes = [search_sorted(s, v, right, output_type), opset3.bucketize(v, b, output_type, right)]
    path = write_ir(nodes, [s, v, b], tmp_path / f"seed{seed}")
    feeds = {"s": draw(sorted_shape, et, sort=True), "v": draw(values_shape, et),
             "b": draw((int(rng.integers(0, 8)),), other, sort=True)}
    if not feeds["b"].size:  # (the CPU plugin refuses empty inputs)
        feeds["b"] = np.zeros(1, DTYPES[other])
    return path, feeds


@pytest.mark.parametrize("block", range(4))
def test_random_differential_against_the_cpu_plugin(block, tmp_path):
    for seed in range(block * 10, block * 10 + 10):
        path, feeds = _random_case(seed, tmp_path)
        check_inference(path)
        check_run(path, feeds, oracle="cpu")


# -- torch -------------------------------------------------------------------------------------------------------------

TORCH_SEARCH = Path(__file__).parent.parent / "data" / "search" / "torch_search.xml"


def test_torch_bucketize_and_searchsorted_converted_by_openvino():
    """torch.bucketize (left; right with an int32 output) and torch.searchsorted (left, right; a sequence per row)
    as ``openvino.convert_model`` (2026.4.1, torch 2.13) wrote them: inferred as declared, equal to the CPU plugin
    and to torch's outputs (``scripts/make_torch_samples.py`` wrote the IR and them)."""
    text = TORCH_SEARCH.read_text()
    assert text.count('type="Bucketize"') == 2 and text.count('type="SearchSorted"') == 2
    check_inference(TORCH_SEARCH)
    stored = np.load(TORCH_SEARCH.with_name("torch_search_expected.npz"), allow_pickle=False)
    feeds = {name: stored[name] for name in ("x", "boundaries", "rows")}
    got = list(check_run(TORCH_SEARCH, feeds, oracle="cpu").values())
    for j, value in enumerate(got):
        assert value.dtype == stored[f"out{j}"].dtype and value.tolist() == stored[f"out{j}"].tolist()
