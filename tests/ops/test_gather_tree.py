"""GatherTree-1: shapes inferred as OpenVINO declares them (static, dynamic and interval dims, dynamic ranks),
values bit for bit against OpenVINO's CPU plugin (no Node.evaluate) for every element type it runs, the corners
where the CPU plugin, the reference kernel and the specification differ (documented in docs/semantics.md),
errors naming the layer and port, the batch rule and chunked runs, and a seeded differential generator."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError  # noqa: E402
from ir_runner.ops.sequence_recurrent.gather_tree import OPS as TREE_OPS  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.node_eval import NP_TYPES, OV_TYPES  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402
from tests.helpers.shapes import partial_shape  # noqa: E402

D = ov.Dimension


# -- GatherTree-1 ------------------------------------------------------------------------------------------

def _tree(tmp_path, shapes, et="i32", name="tree"):
    params = [opset1.parameter(partial_shape(s), OV_TYPES[et], name=n)
              for n, s in zip(("step_ids", "parent_ids", "max_seq_len", "end_token"), shapes)]
    node = opset1.gather_tree(*params)
    return write_ir(node, params, tmp_path, name), node


def _tree_feeds(steps, parents, lengths, end, et):
    dtype = NP_TYPES[et]
    return {"step_ids": np.array(steps).astype(dtype), "parent_ids": np.array(parents).astype(dtype),
            "max_seq_len": np.array(lengths).astype(dtype), "end_token": np.array(end).astype(dtype)}


@pytest.mark.parametrize("shapes", [
    ([4, 2, 3], [4, 2, 3], [2], []),
    ([-1, 2, -1], [3, -1, 4], [D(1, 5)], []),
    ([-1, -1, -1], [-1, -1, -1], [3], []),
    ([D(2, 8), -1, 3], None, [-1], []),
    (None, None, [3], None),
    (None, [5, 1, 2], None, []),
])
def test_gather_tree_shapes_as_openvino_infers_them(shapes, tmp_path):
    path, node = _tree(tmp_path, shapes, "f32")
    check_inference(path)
    check_output_shapes(path, node)


# (the specification's example and OpenVINO's op_reference cases, written anew)
TREE_CASES = [
    # steps [T, B, W], parents, max_seq_len, end_token
    ([[[1, 2, 3]], [[4, 5, 6]], [[7, 8, 9]], [[-1, -1, -1]]],
     [[[0, 0, 0]], [[0, 1, 1]], [[2, 1, 2]], [[-1, -1, -1]]], [3], 10),
    ([[[1]], [[1]], [[1]]], [[[0]], [[0]], [[0]]], [3], 1),  # every step is the end token
    ([[[2, 1]], [[3, 4]], [[5, 6]]], [[[0, 0]], [[0, 1]], [[1, 0]]], [3], 9),
    ([[[2, 1], [7, 7]], [[3, 4], [9, 8]]], [[[0, 0], [0, 0]], [[1, 0], [1, 1]]], [2, 1], 4),
    ([[[5, 6, 7]], [[1, 2, 3]]], [[[1, 2, 0]], [[2, 0, 1]]], [5], 0),  # max_seq_len above MAX_TIME
]


@pytest.mark.parametrize("et", ["i32", "f32", "f16", "i64", "f64"])
@pytest.mark.parametrize("case", range(len(TREE_CASES)))
def test_gather_tree_values(case, et, tmp_path):
    steps, parents, lengths, end = TREE_CASES[case]
    shape = list(np.shape(steps))
    path, _ = _tree(tmp_path, (shape, shape, [shape[1]], []), et)
    check_inference(path)
    check_run(path, _tree_feeds(steps, parents, lengths, end, et), oracle="cpu")


def test_gather_tree_truncates_fractional_indices_and_compares_end_exactly(tmp_path):
    """Parents and lengths 1.7, 2.9 count as 1 and 2 (the CPU plugin's int cast); a step of 2.5 does not end
    a path whose end_token is 2.0 (the reference kernel, comparing truncated values, would end it)."""
    steps = [[[2.5, 1.0]], [[3.0, 4.0]], [[5.0, 6.0]]]
    parents = [[[0.0, 0.0]], [[1.7, 0.2]], [[1.9, -0.5]]]
    path, _ = _tree(tmp_path, ([3, 1, 2], [3, 1, 2], [1], []), "f32")
    got = check_run(path, _tree_feeds(steps, parents, [2.9], 2.0, "f32"), oracle="cpu")
    assert list(got.values())[0][:, 0].tolist() == [[1.0, 2.5], [3.0, 4.0], [2.0, 2.0]]


def test_gather_tree_unused_parents_may_be_anything(tmp_path):
    """Parents at time 0 and at or past max_seq_len are never followed: no error (as the CPU plugin)."""
    steps = np.arange(24).reshape(4, 2, 3) % 7
    parents = np.full((4, 2, 3), -5)
    parents[1] = [[2, 0, 1], [1, 1, 0]]
    path, _ = _tree(tmp_path, ([4, 2, 3], [4, 2, 3], [2], []), "i32")
    check_run(path, _tree_feeds(steps, parents, [2, 1], 99, "i32"), oracle="cpu")


@pytest.mark.parametrize("et, bad", [("i32", -1), ("i32", 3), ("f32", 3.0), ("f32", np.nan), ("f32", -1.0)])
def test_gather_tree_parent_outside_the_beams_is_an_input_error(et, bad, tmp_path):
    parents = np.zeros((3, 1, 3))
    parents[2, 0, 1] = bad
    path, _ = _tree(tmp_path, ([3, 1, 3], [3, 1, 3], [1], []), et)
    model = ir_runner.load(str(path))
    with pytest.raises(InputError, match=r"parent_ids\[2, 0, 1\] .* outside \[0, 3\)") as info:
        model.run(_tree_feeds(np.ones((3, 1, 3)), parents, [3], 0, et))
    assert "GatherTree" in str(info.value) and "parent_ids" in str(info.value)


@pytest.mark.parametrize("et, length", [("i32", 0), ("i32", -4), ("f32", -0.5), ("f32", np.nan), ("f32", 0.9)])
def test_gather_tree_length_zero_or_less_gives_end_tokens(et, length, tmp_path):
    """The specification (and TensorFlow): nothing to trace, every step is end_token. The CPU plugin leaves such
    beams unwritten (garbage); the reference kernel wraps a negative integer to MAX_TIME."""
    path, _ = _tree(tmp_path, ([3, 2, 2], [3, 2, 2], [2], []), et)
    feeds = _tree_feeds(np.ones((3, 2, 2)), np.zeros((3, 2, 2)), [length, 3], 7, et)
    out = list(ir_runner.load(str(path)).run(feeds).values())[0]
    assert (out[:, 0] == 7).all() and (out[:, 1] == 1).all()


def test_gather_tree_u8_and_bf16_as_i32(tmp_path):
    """Types the CPU plugin does not run (OpenVINO accepts any numeric type): the i32 results, converted."""
    rng = np.random.default_rng(4)
    steps, parents = rng.integers(0, 6, (5, 2, 3)), rng.integers(0, 3, (5, 2, 3))
    want = None
    for et in ("i32", "u8", "bf16"):
        path, _ = _tree(tmp_path, ([5, 2, 3], [5, 2, 3], [2], []), et, name=et)
        got = list(ir_runner.load(str(path)).run(_tree_feeds(steps, parents, [4, 5], 5, et)).values())[0]
        assert got.dtype == NP_TYPES[et]
        want = got.astype(np.int64) if want is None else want
        np.testing.assert_array_equal(got.astype(np.int64), want)


def _tree_ir(shapes=("4,2,3", "4,2,3", "2", ""), types=("i32",) * 4, out="4,2,3"):
    b = IRBuilder()
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("step_ids", "parent_ids", "max_seq_len", "end_token"),
                                                      types, shapes)]
    b.result(b.layer("GatherTree", "opset1", inputs, out_specs=[(types[0].upper(), [int(d) for d in out.split(",")])]))
    return b.build()[0]


@pytest.mark.parametrize("kwargs, what, port", [
    ({"shapes": ("4,2,3", "4,2,4", "2", "")}, "must have one shape", "parent_ids"),
    ({"shapes": ("4,2", "4,2", "2", "")}, "must have one shape", "step_ids"),
    ({"shapes": ("4,2,3", "4,2,3", "2,1", "")}, "max_seq_len must be 1-D", "max_seq_len"),
    ({"shapes": ("4,2,3", "4,2,3", "3", "")}, "BATCH_SIZE", "max_seq_len"),
    ({"shapes": ("4,2,3", "4,2,3", "2", "1")}, "end_token must be a scalar", "end_token"),
    ({"types": ("i32", "f32", "i32", "i32")}, "element types of step_ids, .* must be equal", "parent_ids"),
    ({"types": ("boolean",) * 4}, "numeric element type", "step_ids"),
])
def test_gather_tree_bad_inputs_name_layer_and_port(kwargs, what, port):
    with pytest.raises(InferenceError, match=what) as info:
        ir_runner.load(_tree_ir(**kwargs))
    assert "GatherTree-1" in str(info.value) and f"({port})" in str(info.value)


def test_gather_tree_batch_rule_and_chunked_run(tmp_path):
    op = TREE_OPS[0]
    assert op.batch({}, [], [], [1, 1, 0, None]) == [1]
    assert "BATCH_SIZE" in op.batch({}, [], [], [0, 0, None, None])
    ird = pytest.importorskip("ir_runner.dask")
    path, _ = _tree(tmp_path, ([5, -1, 3], [5, -1, 3], [-1], []), "i32")
    rng = np.random.default_rng(8)
    feeds = _tree_feeds(rng.integers(0, 6, (5, 7, 3)), rng.integers(0, 3, (5, 7, 3)), rng.integers(0, 6, 7), 2, "i32")
    model = ir_runner.load(str(path))
    whole = model.run(feeds)
    chunked = ird.run(model, feeds, batch_axis={"step_ids": 1, "parent_ids": 1, "max_seq_len": 0}, chunk=3)
    for name, value in whole.items():
        np.testing.assert_array_equal(chunked[name].compute(), value)


@pytest.mark.parametrize("seed", range(20))
def test_gather_tree_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    et = ("i32", "f32", "i64", "f16")[seed % 4]
    t, b, w = (int(v) for v in rng.integers(1, [8, 4, 5], endpoint=True))
    shapes = ([t, b, w], [t, b, w], [b], [])
    if rng.random() < 0.5:
        shapes = ([-1, -1, -1], [-1, -1, -1], [-1], [])
    path, _ = _tree(tmp_path, shapes, et)
    check_inference(path)
    end = int(rng.integers(0, 4))
    feeds = _tree_feeds(rng.integers(0, 5, (t, b, w)), rng.integers(0, w, (t, b, w)),
                        rng.integers(1, t + 3, b), end, et)
    check_run(path, feeds, oracle="cpu")
