"""ShuffleChannels, DepthToSpace and SpaceToDepth: shapes (dynamic dims, as OpenVINO's type_prop tests), values
bit for bit against OpenVINO (its reference; ShuffleChannels, which has no evaluate, against the CPU plugin),
every element type, and seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.cpu_oracle import cpu_outputs  # noqa: E402
from tests.helpers.optest import assert_same_bits, check_inference, check_run, write_ir  # noqa: E402

TYPES = [(ov.Type.f32, np.float32), (ov.Type.f16, np.float16), (ov.Type.i8, np.int8), (ov.Type.u64, np.uint64),
         (ov.Type.boolean, np.bool_), (ov.Type.i32, np.int32)]


def _param(shape, et=ov.Type.f32):
    return opset1.parameter(ov.PartialShape(shape), et, name="x")


@pytest.mark.parametrize("shape", [[1, 8, 2, 3], [-1, 8, -1, 3], [2, -1, 4, 6], [1, 16, 2, 3, 2], [2, 4, 6]],
                         ids=str)
def test_shapes(shape, tmp_path):
    x = _param(shape)
    nodes = [opset1.depth_to_space(x, "blocks_first", 2) if len(shape) != 5 else
             opset1.depth_to_space(x, "depth_first", 2),
             opset3.shuffle_channels(x, 1, 2)]
    if all(d == -1 or d % 2 == 0 for d in shape[2:]):
        nodes.append(opset1.space_to_depth(x, "depth_first", 2))
    check_inference(write_ir(nodes, [x], tmp_path))


def test_dynamic_rank(tmp_path):
    x = _param(ov.PartialShape.dynamic())
    check_inference(write_ir([opset1.depth_to_space(x, "blocks_first", 3), opset3.shuffle_channels(x, -1, 1)],
                             [x], tmp_path))


@pytest.mark.parametrize("build, old, new", [
    (lambda x: opset1.depth_to_space(x, "blocks_first", 2), 'block_size="2"', 'block_size="3"'),
    (lambda x: opset1.space_to_depth(x, "blocks_first", 2), 'block_size="2"', 'block_size="5"'),
    (lambda x: opset3.shuffle_channels(x, 1, 2), 'group="2"', 'group="3"'),
    (lambda x: opset3.shuffle_channels(x, 1, 2), 'axis="1"', 'axis="4"'),
    (lambda x: opset1.depth_to_space(x, "blocks_first", 2), 'mode="blocks_first"', 'mode="sideways"'),
])
def test_invalid_layers_are_errors(build, old, new, tmp_path):
    x = _param([1, 8, 4, 4])
    path = write_ir(build(x), [x], tmp_path)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(IRError):
        ir_runner.load(str(path))


def test_depth_to_space_reference_example(tmp_path):
    """op_reference: blocks_first on [1, 8, 1, 1] with bs 2 gives [[0, 2], [4, 6]] and [[1, 3], [5, 7]]."""
    x = _param([1, 8, 1, 1])
    path = write_ir(opset1.depth_to_space(x, "blocks_first", 2), [x], tmp_path)
    got = check_run(path, {"x": np.arange(8, dtype=np.float32).reshape(1, 8, 1, 1)})
    assert next(iter(got.values())).reshape(-1).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]


@pytest.mark.parametrize("et, dtype", TYPES, ids=lambda v: str(v))
@pytest.mark.parametrize("mode", ["blocks_first", "depth_first"])
def test_every_type_and_mode(et, dtype, mode, tmp_path):
    rng = np.random.default_rng(0)
    x = _param([2, 8, 2, 4], et)
    nodes = [opset1.depth_to_space(x, mode, 2), opset1.space_to_depth(x, mode, 2)]
    path = write_ir(nodes, [x], tmp_path)
    check_inference(path)
    data = rng.integers(0, 100, size=(2, 8, 2, 4)).astype(dtype)
    if dtype == np.float16:
        data.view(np.uint16)[0, 0, 0, :2] = (0x7C01, 0xFE00)  # NaN payloads move unchanged
    check_run(path, {"x": data})


def test_3d_and_5d(tmp_path):
    x3, x5 = _param([1, 4, 3]), opset1.parameter([1, 16, 2, 2, 4], ov.Type.f32, name="y")
    nodes = [opset1.depth_to_space(x3, "depth_first", 4), opset1.space_to_depth(x5, "blocks_first", 2),
             opset1.depth_to_space(x5, "depth_first", 2)]
    path = write_ir(nodes, [x3, x5], tmp_path)
    rng = np.random.default_rng(1)
    check_run(path, {"x": rng.standard_normal((1, 4, 3)).astype(np.float32),
                     "y": rng.standard_normal((1, 16, 2, 2, 4)).astype(np.float32)})


@pytest.mark.parametrize("shape, axis, group", [([1, 6, 2, 2], 1, 3), ([3, 4, 5], -1, 5), ([12], 0, 4),
                                                ([2, 3, 4], 2, 1)])
def test_shuffle_channels(shape, axis, group, tmp_path):
    """ShuffleChannels has no reference evaluate: the CPU plugin's result, bit for bit (pure data movement)."""
    x = _param(shape)
    path = write_ir(opset3.shuffle_channels(x, axis, group), [x], tmp_path)
    check_inference(path)
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = next(iter(ir_runner.load(str(path)).run({"x": data}).values()))
    assert_same_bits("out", got, cpu_outputs(path, {"x": data})[0])


@pytest.mark.parametrize("seed", range(20))
def test_random_depth_space(seed, tmp_path):
    rng = np.random.default_rng(seed)
    k, bs = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    depth = int(rng.integers(1, 4))
    spatial = [int(rng.integers(1, 3)) * bs for _ in range(k)]
    shape = [int(rng.integers(1, 3)), depth * bs ** k] + spatial
    x = _param(shape)
    mode = str(rng.choice(["blocks_first", "depth_first"]))
    path = write_ir([opset1.depth_to_space(x, mode, bs), opset1.space_to_depth(x, mode, bs)], [x], tmp_path)
    check_inference(path)
    check_run(path, {"x": rng.standard_normal(shape).astype(np.float32)})


def test_batch_rules():
    from ir_runner.ops.space import OPS
    shuffle, d2s, _ = OPS
    assert shuffle.batch({"axis": 1}, [], [None], [0]) == [0]
    assert isinstance(shuffle.batch({"axis": 0}, [], [None], [0]), str)
    assert d2s.batch({}, [], [None], [0]) == [0]
    assert isinstance(d2s.batch({}, [], [None], [2]), str)
