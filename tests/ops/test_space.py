"""ShuffleChannels, DepthToSpace, SpaceToDepth and ExtractImagePatches: shapes (dynamic dims, as OpenVINO's
type_prop tests), values bit for bit against OpenVINO (its reference; ShuffleChannels and ExtractImagePatches,
which have no evaluate, against the CPU plugin and, for ExtractImagePatches, a loop written from the reference),
every element type, and seeded random graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from tests.helpers.bits import assert_same_bits  # noqa: E402
from tests.helpers.cpu_oracle import cpu_outputs  # noqa: E402
from tests.helpers.optest import check_inference, check_run, write_ir  # noqa: E402

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
    assert_same_bits(got, cpu_outputs(path, {"x": data})[0], "out")


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
    from ir_runner.ops.shape_movement.space import OPS
    shuffle, d2s = OPS[:2]
    assert shuffle.batch({"axis": 1}, [], [None], [0]) == [0]
    assert isinstance(shuffle.batch({"axis": 0}, [], [None], [0]), str)
    assert d2s.batch({}, [], [None], [0]) == [0]
    assert isinstance(d2s.batch({}, [], [None], [2]), str)


# -- ExtractImagePatches-3 ---------------------------------------------------------------------------------

D = ov.Dimension
PATCH_GEOMETRIES = [([2, 2], [2, 2], [1, 1]), ([3, 3], [2, 3], [2, 1]), ([1, 1], [1, 1], [1, 1]),
                    ([3, 2], [1, 2], [1, 3]), ([6, 1], [1, 1], [1, 1])]


def _patches(shape, geometry, pad, et=ov.Type.f32):
    x = _param(shape, et)
    return x, opset3.extract_image_patches(x, *geometry, pad)


@pytest.mark.parametrize("pad", ["valid", "same_upper", "same_lower"])
@pytest.mark.parametrize("shape", [[1, 2, 5, 5], [2, 3, 7, 4], [1, 1, 0, 5], [1, 2, 1, 1], [-1, -1, -1, -1],
                                   [D(1, 3), D(2, 4), D(5, 9), D(6, -1)], [1, 2, D(0, 7), D(2, 9)],
                                   [1, 2, D(3, -1), 4], ov.PartialShape.dynamic()], ids=str)
def test_extract_image_patches_shapes_as_openvino_infers_them(shape, pad, tmp_path):
    from tests.helpers.optest import check_output_shapes
    for i, geometry in enumerate(PATCH_GEOMETRIES):
        x, node = _patches(shape, geometry, pad)
        path = write_ir(node, [x], tmp_path, f"m{i}")
        check_inference(path)
        check_output_shapes(path, node)


@pytest.mark.parametrize("old, new, message", [
    ('sizes="2, 2"', 'sizes="2"', "sizes"), ('strides="2, 2"', 'strides="0,2"', "strides"),
    ('rates="1, 1"', 'rates="1,-1"', "rates"), ('sizes="2, 2"', 'sizes="0,2"', "sizes"),
    ('auto_pad="valid"', 'auto_pad="explicit"', "auto_pad"), ('rates="1, 1"', 'rates="1,1,1"', "rates"),
])
def test_extract_image_patches_bad_attributes_name_the_layer(old, new, message, tmp_path):
    x, node = _patches([1, 2, 5, 5], ([2, 2], [2, 2], [1, 1]), "valid")
    path = write_ir(node, [x], tmp_path)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    with pytest.raises(IRError, match=message) as info:
        ir_runner.load(str(path))
    assert "ExtractImagePatches-3" in str(info.value)


def test_extract_image_patches_data_must_be_4d():
    from tests.helpers.irbuild import IRBuilder
    b = IRBuilder()
    x = b.parameter("x", "f32", "2,5,5")
    b.result(b.layer("ExtractImagePatches", "opset3", [x], out_specs=[("FP32", [2, 20, 2, 2])],
                     attrs={"sizes": "2,2", "strides": "2,2", "rates": "1,1", "auto_pad": "valid"}))
    with pytest.raises(IRError, match="must be 4-D") as info:
        ir_runner.load(b.build()[0])
    assert "ExtractImagePatches-3" in str(info.value) and "(data)" in str(info.value)


def _patches_loop(data, sizes, strides, rates, pad):
    """OpenVINO's reference loop (``ov::reference::extract_image_patches``), written anew in plain Python."""
    n, c, h, w = data.shape
    (kh, kw), (sh, sw), (rh, rw) = sizes, strides, rates

    def count(size, k, s, r):
        return max(0, (size - r * (k - 1) - 1) // s + 1) if pad == "valid" else max(0, (size - 1) // s + 1)

    def lead(size, k, s, r):
        span = k + (r - 1) * (k - 1)
        total = (int(np.ceil(size / s)) - 1) * s + span - size
        if pad == "valid" or not 0 < total < span:
            return 0
        return total // 2 if total % 2 == 0 else (total + 1) // 2 if pad == "same_lower" else (total - 1) // 2

    oh, ow = count(h, kh, sh, rh), count(w, kw, sw, rw)
    pt, pl = lead(h, kh, sh, rh), lead(w, kw, sw, rw)
    out = np.zeros((n, c * kh * kw, oh, ow), data.dtype)
    for b in range(n):
        for y in range(oh):
            for x in range(ow):
                oc = 0
                for i in range(kh):
                    for j in range(kw):
                        for ch in range(c):
                            iy, ix = y * sh - pt + i * rh, x * sw - pl + j * rw
                            if 0 <= iy < h and 0 <= ix < w:
                                out[b, oc, y, x] = data[b, ch, iy, ix]
                            oc += 1
    return out


@pytest.mark.parametrize("pad", ["valid", "same_upper", "same_lower"])
@pytest.mark.parametrize("geometry", PATCH_GEOMETRIES, ids=str)
@pytest.mark.parametrize("shape", [[1, 2, 5, 5], [2, 3, 7, 4], [1, 1, 4, 9], [1, 2, 1, 2]], ids=str)
def test_extract_image_patches_against_the_cpu_plugin_and_the_reference_loop(shape, geometry, pad, tmp_path):
    """No evaluate in the wheel: bit for bit against the CPU plugin (f32, i32, u8) and the reference loop."""
    for et, dtype in ((ov.Type.f32, np.float32), (ov.Type.i32, np.int32), (ov.Type.u8, np.uint8)):
        x, node = _patches(shape, geometry, pad, et)
        path = write_ir(node, [x], tmp_path, f"m{dtype.__name__}")
        data = (np.arange(np.prod(shape)).reshape(shape) % 251 + 1).astype(dtype)
        got = list(ir_runner.load(str(path)).run({"x": data}).values())[0]
        assert_same_bits(got, _patches_loop(data, *geometry, pad), "out")
        assert_same_bits(got, cpu_outputs(path, {"x": data})[0], "out")


@pytest.mark.parametrize("et, dtype", TYPES)
def test_extract_image_patches_every_type(et, dtype, tmp_path):
    """Data movement: every element type (NaN bits, f16 and i64 included) against the reference loop."""
    shape = [2, 3, 6, 5]
    x, node = _patches([-1, 3, -1, -1], ([3, 2], [2, 2], [2, 1]), "same_lower", et)
    path = write_ir(node, [x], tmp_path)
    check_inference(path)
    data = np.random.default_rng(1).integers(0, 2 if dtype == np.bool_ else 100, shape).astype(dtype)
    got = list(ir_runner.load(str(path)).run({"x": data}).values())[0]
    assert got.dtype == dtype
    assert_same_bits(got, _patches_loop(data, [3, 2], [2, 2], [2, 1], "same_lower"), "out")


def test_extract_image_patches_empty_inputs(tmp_path):
    for shape in ([0, 2, 5, 5], [1, 0, 5, 5], [1, 2, 0, 5], [1, 2, 1, 1]):
        x, node = _patches([-1, -1, -1, -1], ([2, 2], [1, 1], [1, 1]), "valid")
        path = write_ir(node, [x], tmp_path)
        got = list(ir_runner.load(str(path)).run({"x": np.ones(shape, np.float32)}).values())[0]
        assert got.shape == _patches_loop(np.ones(shape, np.float32), [2, 2], [1, 1], [1, 1], "valid").shape


def test_extract_image_patches_batch_rule_and_chunked_run(tmp_path):
    from ir_runner.ops.shape_movement import space
    op = next(op for op in space.OPS if op.type == "ExtractImagePatches")
    assert op.batch({}, [], [None], [0]) == [0]
    assert isinstance(op.batch({}, [], [None], [2]), str)
    ird = pytest.importorskip("ir_runner.dask")
    x, node = _patches([-1, 2, 6, 6], ([2, 3], [2, 1], [1, 2]), "same_upper")
    model = ir_runner.load(str(write_ir(node, [x], tmp_path)))
    feeds = {"x": np.random.default_rng(2).standard_normal((5, 2, 6, 6)).astype(np.float32)}
    chunked = ird.run(model, feeds, batch_axis={"x": 0}, chunk=2)
    for name, value in model.run(feeds).items():
        assert_same_bits(chunked[name].compute(), value, name)


@pytest.mark.parametrize("seed", range(12))
def test_extract_image_patches_random_against_the_cpu_plugin(seed, tmp_path):
    rng = np.random.default_rng(seed)
    shape = [int(v) for v in rng.integers(1, [3, 4, 10, 10], endpoint=True)]
    geometry = tuple([int(v) for v in rng.integers(1, 4, 2)] for _ in range(3))
    pad = str(rng.choice(["valid", "same_upper", "same_lower"]))
    x, node = _patches([-1, shape[1], -1, -1] if seed % 2 else shape, geometry, pad)
    path = write_ir(node, [x], tmp_path)
    check_inference(path)
    data = rng.standard_normal(shape).astype(np.float32)
    got = list(ir_runner.load(str(path)).run({"x": data}).values())[0]
    assert_same_bits(got, _patches_loop(data, *geometry, pad), "out")
    if got.size:
        assert_same_bits(got, cpu_outputs(path, {"x": data})[0], "out")
