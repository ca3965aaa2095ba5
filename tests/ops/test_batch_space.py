"""SpaceToBatch-2 and BatchToSpace-2: shapes as OpenVINO infers them (interval and dynamic dims, dynamic rank,
block or crops computed at run time), IRErrors naming the input, values bit for bit against the reference
(``Node.evaluate``) for several element types, and seeded random graphs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset2  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError  # noqa: E402
from ir_runner.ops.registry import lookup  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402


def _i(values):
    return opset1.constant(np.array(values, np.int64))


@pytest.mark.parametrize("shape, block, begin, end, pads_end", [
    ([8, 3, 4], [1, 2, 2], [0, 1, 0], [0, 0, 3], [0, 0, 2]),
    ([[4, 12], [2, 5], -1, 7], [1, 2, 1, 1], [0, 1, 0, 0], [0, 0, 0, 2], [0, 0, 0, 2]),
    ([-1, 6], [1, 3], [0, 0], [0, 0], [0, 3]),
    ([[3, 12], [2, 5], -1, 7], [1, 2, 1, 1], [0, 3, 0, 0], [0, 3, 0, 2], [0, 3, 0, 2]),
    ([-1, -1, -1, -1], [1, 1, 2, 3], [0, 0, 2, 0], [0, 0, 0, 3], [0, 0, 0, 3]),  # (pads give lower bounds: 1..)
], ids=str)
def test_shapes_with_constant_blocks(shape, block, begin, end, pads_end, tmp_path):
    x = opset1.parameter(ov.PartialShape([ov.Dimension(*d) if isinstance(d, list) else d for d in shape]),
                         ov.Type.f32, name="x")
    b2s = opset2.batch_to_space(x, _i(block), _i(begin), _i(end))
    s2b = opset2.space_to_batch(x, _i(block), _i(begin), _i(pads_end))
    for node, name in ((b2s, "b2s"), (s2b, "s2b")):
        path = write_ir(node, [x], tmp_path, name)
        check_inference(path)
        check_output_shapes(path, node)


def test_shapes_with_blocks_computed_at_run_time(tmp_path):
    x = opset1.parameter(ov.PartialShape([ov.Dimension(4, 12), ov.Dimension(2, 5), -1, 7]), ov.Type.f32, name="x")
    block = opset1.parameter([4], ov.Type.i64, name="block")
    nodes = [opset2.batch_to_space(x, block, _i([0, 1, 0, 0]), _i([0, 0, 0, 2])),
             opset2.space_to_batch(x, block, _i([0, 1, 0, 0]), _i([0, 0, 0, 2]))]
    path = write_ir(nodes, [x, block], tmp_path)
    check_inference(path)
    model = ir_runner.load(str(path))
    assert [str(o.partial_shape) for o in model.outputs] == [str(n.get_output_partial_shape(0)).replace(" ", "")
                                                              for n in nodes]
    feeds = {"x": np.arange(4 * 2 * 3 * 7, dtype=np.float32).reshape(4, 2, 3, 7), "block": np.array([1, 1, 1, 1])}
    out = model.run(feeds)
    assert [v.shape for v in out.values()] == [(4, 1, 3, 5), (4, 3, 3, 9)]


def test_dynamic_rank(tmp_path):
    x = opset1.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="x")
    nodes = [opset2.batch_to_space(x, _i([1, 2, 2]), _i([0, 1, 0]), _i([0, 0, 0])),
             opset2.space_to_batch(x, _i([1, 2, 2]), _i([0, 1, 0]), _i([0, 1, 0]))]
    check_inference(write_ir(nodes, [x], tmp_path))


TYPES = [(ov.Type.f32, np.float32), (ov.Type.f16, np.float16), (ov.Type.i8, np.int8), (ov.Type.i64, np.int64),
         (ov.Type.u8, np.uint8), (ov.Type.boolean, np.bool_)]


@pytest.mark.parametrize("et, npt", TYPES, ids=str)
def test_values_every_type(et, npt, tmp_path):
    x = opset1.parameter([8, 2, 3], et, name="x")
    nodes = [opset2.batch_to_space(x, _i([1, 2, 4]), _i([0, 1, 2]), _i([0, 0, 1])),
             opset2.space_to_batch(x, _i([1, 2, 3]), _i([0, 1, 1]), _i([0, 1, 2]))]
    path = write_ir(nodes, [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": (np.arange(48).reshape(8, 2, 3) % 5).astype(npt)})


def test_bf16_and_empty(tmp_path):
    x = opset1.parameter([4, 2, 2], ov.Type.bf16, name="x")
    path = write_ir(opset2.space_to_batch(x, _i([1, 2, 1]), _i([0, 0, 0]), _i([0, 0, 0])), [x], tmp_path)
    check_run(path, {"x": np.arange(16, dtype=np.float32).reshape(4, 2, 2).astype(ml_dtypes.bfloat16)})
    e = opset1.parameter([0, 2, 2], ov.Type.f32, name="x")
    path = write_ir(opset2.batch_to_space(e, _i([1, 2, 1]), _i([0, 1, 0]), _i([0, 0, 0])), [e], tmp_path, "empty")
    assert next(iter(ir_runner.load(str(path)).run({"x": np.zeros((0, 2, 2), np.float32)}).values())).shape == (0, 3, 2)


def _bad(tmp_path, block, begin, end, b2s=True, shape="8,3,4"):
    b = IRBuilder()
    x = b.parameter("x", "f32", shape)
    consts = [b.const(name, np.array(v, np.int64)) for name, v in (("block", block), ("begin", begin), ("end", end))]
    b.result(b.layer("BatchToSpace" if b2s else "SpaceToBatch", "opset2", [x, *consts], name="layer",
                     out_specs=[("FP32", [8, 3, 4])]))
    xml, weights = b.build()
    (tmp_path / "m.xml").write_bytes(xml)
    (tmp_path / "m.bin").write_bytes(weights)
    with pytest.raises(InferenceError) as info:
        ir_runner.load(str(tmp_path / "m.xml"))
    return str(info.value)


@pytest.mark.parametrize("b2s", [True, False])
@pytest.mark.parametrize("block, begin, end, word", [
    ([1, 0, 1], [0, 0, 0], [0, 0, 0], "at least 1"), ([1, 1, 1], [0, -1, 0], [0, 0, 0], "negative"),
    ([2, 1, 1], [0, 0, 0], [0, 0, 0], "batch axis"), ([1, 1, 1], [1, 0, 0], [0, 0, 0], "batch axis"),
    ([1, 5, 1], [0, 0, 0], [0, 0, 0], "multiple"),
])
def test_bad_values_are_errors_naming_the_input(block, begin, end, word, b2s, tmp_path):
    text = _bad(tmp_path, block, begin, end, b2s)
    assert word in text and "input" in text and ("BatchToSpace-2" if b2s else "SpaceToBatch-2") in text, text


def test_crops_too_large(tmp_path):
    assert "exceed" in _bad(tmp_path, [1, 2, 1], [0, 5, 0], [0, 2, 0])


def test_bad_run_time_block_is_an_input_error(tmp_path):
    x = opset1.parameter([4, 2, 3], ov.Type.f32, name="x")
    block = opset1.parameter([3], ov.Type.i64, name="block")
    path = write_ir(opset2.batch_to_space(x, block, _i([0, 0, 0]), _i([0, 0, 0])), [x, block], tmp_path)
    model = ir_runner.load(str(path))
    with pytest.raises(InputError):
        model.run({"x": np.zeros((4, 2, 3), np.float32), "block": np.array([1, 3, 1])})
    with pytest.raises(InputError):
        model.run({"x": np.zeros((4, 2, 3), np.float32), "block": np.array([2, 1, 1])})


def test_batch_rule():
    for kind in ("SpaceToBatch", "BatchToSpace"):
        op = lookup(kind, "opset2")
        assert isinstance(op.batch({}, [], [None], [0, None, None, None]), str)
        assert op.batch({}, [], [None], [None, None, None, None]) == [None]


@pytest.mark.parametrize("seed", range(16))
def test_random_graphs(seed, tmp_path):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(2, 5))
    block = [1] + [int(b) for b in rng.integers(1, 4, size=rank - 1)]
    spatial = [int(d) for d in rng.integers(1, 4, size=rank - 1)]
    batch = int(rng.integers(1, 3))
    if seed % 2:  # BatchToSpace
        shape = [batch * int(np.prod(block))] + spatial
        begin = [0] + [int(rng.integers(0, d * b + 1)) for d, b in zip(spatial, block[1:])]
        end = [0] + [int(rng.integers(0, d * b - s + 1)) for d, b, s in zip(spatial, block[1:], begin[1:])]
        build = opset2.batch_to_space
    else:
        shape = [batch] + spatial
        begin = [0] + [int(rng.integers(0, 3)) for _ in spatial]
        end = [0] + [int(-(d + s) % b + b * rng.integers(0, 2)) for d, s, b in zip(spatial, begin[1:], block[1:])]
        build = opset2.space_to_batch
    x = opset1.parameter(shape, ov.Type.f32, name="x")
    path = write_ir(build(x, _i(block), _i(begin), _i(end)), [x], tmp_path)
    check_inference(path)
    # (the reference evaluates SpaceToBatch from rank 3 only: rank 2 against the CPU plugin)
    oracle = "cpu" if rank == 2 and build is opset2.space_to_batch else "reference"
    check_run(path, {"x": rng.standard_normal(shape).astype(np.float32)}, oracle=oracle)
