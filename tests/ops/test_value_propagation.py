"""Value propagation: shape subgraphs (ShapeOf -> Gather/Slice/StridedSlice/Concat/Squeeze/Unsqueeze/Convert/
Split) feeding Reshape, Broadcast, Range, Tile and Slice on dynamic inputs.

Each chain is written by OpenVINO; ir-run must infer the very dims OpenVINO declares, bounds included
(``check_shapes``), validate with no finding, and run on several input shapes (a plan per shape) bit for
bit against OpenVINO's reference. A seeded generator builds random chains of the same kinds.
"""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset8, opset13  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.optest import check_run, write_ir  # noqa: E402
from tests.helpers.shapes import check_shapes  # noqa: E402

D = ov.Dimension


def c(values, dtype=np.int64):
    return opset13.constant(np.array(values, dtype=dtype))


def dims_of(x, indices):
    return opset8.gather(opset3.shape_of(x), c(indices), c(0))


def check(outputs, params, shapes_list, tmp_path, rng_seed=0):
    path = write_ir(outputs, params, tmp_path)
    check_shapes(path)
    rng = np.random.default_rng(rng_seed)
    model = ir_runner.load(str(path))
    assert model is not None
    for shapes in shapes_list:
        feeds = {p.get_friendly_name(): rng.standard_normal(s).astype(np.float32) for p, s in zip(params, shapes)}
        check_run(path, feeds)
    return path


def test_flatten_batch(tmp_path):
    """x[?,?] -> ShapeOf -> Gather(0) -> Concat with [-1] -> Reshape: the example of the task."""
    x = opset13.parameter([-1, -1], ov.Type.f32, name="x")
    r = opset13.reshape(x, opset13.concat([dims_of(x, [0]), c([-1])], 0), False)
    check([r], [x], [[(2, 3)], [(4, 5)], [(1, 7)], [(3, 1)]], tmp_path)


def test_split_heads(tmp_path):
    """x[?,?,24] -> Reshape to [batch, seq, 4, 6] -> Transpose: static head dims declared."""
    x = opset13.parameter([-1, -1, 24], ov.Type.f32, name="x")
    target = opset13.concat([dims_of(x, [0, 1]), c([4, 6])], 0)
    heads = opset13.transpose(opset13.reshape(x, target, False), c([0, 2, 1, 3]))
    check([heads], [x], [[(2, 3, 24)], [(1, 5, 24)]], tmp_path)


def test_merge_with_special_zero_and_bounds(tmp_path):
    x = opset13.parameter(ov.PartialShape([D(1, 8), D(2, 6), 4]), ov.Type.f32, name="x")
    r1 = opset13.reshape(x, c([0, -1]), True)
    r2 = opset13.reshape(x, opset13.concat([dims_of(x, [1]), c([-1])], 0), False)
    check([r1, r2], [x], [[(3, 2, 4)], [(8, 6, 4)]], tmp_path)


def test_broadcast_to_shape_of_another(tmp_path):
    x = opset13.parameter([-1, 3], ov.Type.f32, name="x")
    y = opset13.parameter([1, 3], ov.Type.f32, name="y")
    b1 = opset3.broadcast(y, opset3.shape_of(x))
    b2 = opset3.broadcast(y, opset3.shape_of(x), broadcast_spec="bidirectional")
    b3 = opset1.broadcast(y, opset3.shape_of(x))
    check([b1, b2, b3], [x, y], [[(2, 3), (1, 3)], [(5, 3), (1, 3)]], tmp_path)


def test_range_from_sequence_length(tmp_path):
    """positions = Range(0, seq, 1) with seq = ShapeOf(x)[1] (a scalar Gather), also through a Convert."""
    x = opset13.parameter([-1, -1], ov.Type.f32, name="x")
    seq = opset8.gather(opset3.shape_of(x), c(1), c(0))
    r4 = opset13.range(c(0), seq, c(1), "i64")
    r4f = opset13.range(c(0, np.float32), opset13.convert(seq, "f32"), c(0.5, np.float32), "f32")
    r1 = opset1.range(c(0, np.int32), opset13.convert(seq, "i32"), c(2, np.int32))
    check([r4, r4f, r1], [x], [[(2, 3)], [(1, 8)], [(2, 0)]], tmp_path)


def test_slice_position_table(tmp_path):
    """A constant table sliced to the sequence length: the bound of the table is declared (..16)."""
    x = opset13.parameter([-1, -1], ov.Type.f32, name="x")
    table = c(np.arange(64).reshape(16, 4), np.float32)
    seq = dims_of(x, [1])
    s8 = opset8.slice(table, c([0]), seq, c([1]), c([0]))
    ss = opset1.strided_slice(table, c([0]), seq, c([1]), [0], [0])
    back = opset8.slice(table, c([-1]), c([-17]), c([-1]), c([0]))
    check([s8, ss, back], [x], [[(2, 3)], [(1, 16)], [(2, 20)]], tmp_path)


def test_strided_slice_and_slice_of_the_shape(tmp_path):
    x = opset13.parameter([-1, -1, 5, 6], ov.Type.f32, name="x")
    shape = opset3.shape_of(x)
    head = opset1.strided_slice(shape, c([0]), c([2]), c([1]), [0], [0])
    tail = opset8.slice(shape, c([-2]), c([2**63 - 1]), c([1]))
    r1 = opset13.reshape(x, opset13.concat([head, c([30])], 0), False)
    r2 = opset13.reshape(x, opset13.concat([c([-1]), tail], 0), False)
    check([r1, r2], [x], [[(2, 3, 5, 6)], [(1, 1, 5, 6)]], tmp_path)


def test_squeeze_unsqueeze_convert_of_values(tmp_path):
    x = opset13.parameter([-1, 4, -1], ov.Type.f32, name="x")
    shape = opset3.shape_of(x, "i32")
    first = opset13.squeeze(opset8.gather(shape, c([0]), c(0)), c([0]))
    last = opset8.gather(shape, c(2), c(0))
    target = opset13.concat([opset13.unsqueeze(first, c([0])), opset13.unsqueeze(last, c([0])), c([-1], np.int32)],
                            0)
    r = opset13.reshape(x, opset13.convert(target, "i64"), False)
    check([r], [x], [[(2, 4, 3)], [(1, 4, 1)]], tmp_path)


def test_tile_by_shape(tmp_path):
    x = opset13.parameter([-1, 2], ov.Type.f32, name="x")
    y = opset13.parameter([2, 3], ov.Type.f32, name="y")
    reps = opset13.concat([dims_of(x, [0]), c([1])], 0)
    check([opset13.tile(y, reps)], [x, y], [[(3, 2), (2, 3)], [(1, 2), (2, 3)]], tmp_path)


def test_tile_of_an_empty_dim_by_an_unknown_repeat_is_empty(tmp_path):
    """A 0 times a repeat known only at run (from ShapeOf), or an unknown dim times a repeat of 0, is 0, as
    OpenVINO infers (found by the fuzzer)."""
    x = opset13.parameter(ov.PartialShape([4, -1, -1, ov.Dimension(3, 7)]), ov.Type.u8, name="x")
    y = opset13.parameter([0, 4, 0], ov.Type.u8, name="y")
    z = opset13.parameter([-1, 2], ov.Type.u8, name="z")
    w = opset13.parameter([0, 3], ov.Type.u8, name="w")
    outs = [opset13.tile(y, opset3.shape_of(x, "i32")), opset13.tile(z, opset3.shape_of(w))]
    path = write_ir(outs, [x, y, z, w], tmp_path)
    check_shapes(path)  # [4,0,?,0] and [0,6]
    feeds = {"x": np.zeros((4, 2, 3, 4), np.uint8), "y": np.zeros((0, 4, 0), np.uint8),
             "z": np.ones((3, 2), np.uint8), "w": np.zeros((0, 3), np.uint8)}
    got = list(ir_runner.load(str(path)).run(feeds).values())  # (the reference crashes on empty Tiles)
    assert [g.shape for g in got] == [(4, 0, 12, 0), (0, 6)] and all(g.dtype == np.uint8 for g in got)


def test_variadic_split_of_the_shape(tmp_path):
    x = opset13.parameter([-1, 3, -1], ov.Type.f32, name="x")
    parts = opset13.variadic_split(opset3.shape_of(x), c(0), c([2, 1]))
    r = opset13.reshape(x, opset13.concat([c([-1]), parts.output(1)], 0), False)
    check([r], [x], [[(2, 3, 4)], [(1, 3, 5)]], tmp_path)


def test_expand_target_with_minus_one_replaced_by_select(tmp_path):
    """torch.onnx's ``expand(b, -1, s, s)``: Select(Equal(shape, -1), 1, shape) as the target of a bidirectional
    Broadcast. Equal of a dim (in [0, inf)) with -1 is known false, -1 == -1 known true, so the Select's value
    is [b, 1, s, s] and the Broadcast [?,1,?,?] (BERT exported through ONNX); Equal on overlapping bounds
    stays unknown and a Select with an unknown condition has no value ([?,?] below, as OpenVINO)."""
    x = opset13.parameter([-1, -1], ov.Type.f32, name="x")
    b, s = dims_of(x, [0]), dims_of(x, [1])
    shape = opset13.concat([b, c([-1]), s, s], 0)
    target = opset13.select(opset13.equal(shape, c([-1, -1, -1, -1])), c([1, 1, 1, 1]), shape)
    mask = opset13.reshape(x, opset13.concat([b, c([1, 1]), s], 0), False)
    expanded = opset3.broadcast(mask, target, "bidirectional")
    y = opset13.parameter(ov.PartialShape([D(2, 5), -1]), ov.Type.f32, name="y")
    shape_y = opset3.shape_of(y)
    unknown = opset13.select(opset13.equal(shape_y, c([3, 4])), c([1, 1]), shape_y)
    kept = opset3.broadcast(c([[0.5]], np.float32), unknown, "bidirectional")
    assert str(expanded.get_output_partial_shape(0)) == "[?,1,?,?]"
    assert str(kept.get_output_partial_shape(0)) == "[?,?]"
    check([expanded, kept], [x, y], [[(2, 3), (3, 4)], [(1, 1), (2, 5)]], tmp_path)


def test_fed_target_shape_is_planned_per_value(tmp_path):
    """A Reshape target fed as an input: dynamic at load, a plan per value at run."""
    x = opset13.parameter([2, 6], ov.Type.f32, name="x")
    t = opset13.parameter([2], ov.Type.i64, name="t")
    r = opset13.reshape(x, t, False)
    path = write_ir(r, [x, t], tmp_path)
    check_shapes(path)
    data = np.arange(12, dtype=np.float32).reshape(2, 6)
    for target in ([3, 4], [-1, 2], [12, 1]):
        check_run(path, {"x": data, "t": np.array(target, np.int64)})


# -- a seeded generator of chains ---------------------------------------------------------------------------

def _random_chain(rng: np.random.Generator):
    rank = int(rng.integers(2, 5))
    static = [int(v) for v in rng.integers(1, 5, size=rank)]
    dynamic = rng.random(rank) < 0.6
    pshape = [-1 if dyn else s for s, dyn in zip(static, dynamic)]
    x = opset13.parameter(pshape, ov.Type.f32, name="x")
    kind = rng.integers(0, 4)
    keep = sorted(rng.choice(rank, size=int(rng.integers(1, rank)), replace=False).tolist())
    picked = dims_of(x, keep)
    if kind == 0:  # flatten what is not kept
        out = opset13.reshape(x, opset13.concat([picked, c([-1])], 0), False) if keep == list(range(len(keep))) \
            else opset13.reshape(x, opset13.concat([dims_of(x, list(range(len(keep)))), c([-1])], 0), False)
    elif kind == 1:  # broadcast a row to x's shape
        row = c(rng.standard_normal(static[-1]).astype(np.float32)) if not dynamic[-1] else c(np.ones(1, np.float32))
        out = opset3.broadcast(row, opset3.shape_of(x))
    elif kind == 2:  # Range over one dim
        dim = opset8.gather(opset3.shape_of(x), c(keep[0]), c(0))
        out = opset13.range(c(0), dim, c(1), "i32")
    else:  # slice a table by a dim
        dim = dims_of(x, [keep[0]])
        out = opset8.slice(c(np.arange(24, dtype=np.float32).reshape(6, 4)), c([0]), dim, c([1]), c([0]))
    shapes = [tuple(int(rng.integers(1, 5)) if dyn else s for s, dyn in zip(static, dynamic)) for _ in range(2)]
    return out, x, shapes


@pytest.mark.parametrize("seed", range(30))
def test_random_chains(seed, tmp_path):
    out, x, shapes = _random_chain(np.random.default_rng(seed))
    check([out], [x], [[s] for s in shapes], tmp_path, seed)
