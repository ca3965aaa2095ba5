"""TopK-1/3/11 (ir_runner/ops/sort_search/topk.py): output shapes as OpenVINO infers them (a computed k: bounded
at load, concrete at run), values against its reference (Node.evaluate) for every mode and sort
(``sort='none'``: the order std::nth_element leaves), ties, refusals, seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import InferenceError, InputError  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, write_ir  # noqa: E402
from tests.helpers.ov_random import parameter  # noqa: E402

MAKERS = {1: opset1.topk, 3: opset3.topk, 11: opset13.topk}


def _param(shape, et=ov.Type.f32, name="data"):
    return opset13.parameter(ov.PartialShape(shape), et, name=name)


def _k(value):
    return opset13.constant(np.int64(value))


# -- TopK shapes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 3, 11])
@pytest.mark.parametrize("shape, k, axis", [([2, 5], 3, 1), ([2, 5], 0, 1), ([4, -1, 3], 2, -2), ([-1, 5], 5, 1),
                                           ([6], 1, 0)])
def test_topk_shapes_with_constant_k(version, shape, k, axis, tmp_path):
    d = _param(shape)
    check_inference(write_ir(MAKERS[version](d, _k(k), axis, "max", "value"), [d], tmp_path))


@pytest.mark.parametrize("shape", [[2, 5], [2, (3, 8)], [2, -1]])
def test_topk_computed_k_is_bounded_at_load_and_concrete_at_run(shape, tmp_path):
    d, k = _param(shape), _param([], ov.Type.i64, "k")
    node = opset13.topk(d, k, 1, "max", "value", "i64")
    path = write_ir(node, [d, k], tmp_path)
    check_output_shapes(path, node)
    data = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    for value in (1, 2, 5):
        got = check_run(path, {"data": data, "k": np.array(value, np.int64)})
        assert [a.shape for a in got.values()] == [(2, value)] * 2
    got = ir_runner.load(str(path)).run({"data": data, "k": np.array(0, np.int64)})  # evaluate: the whole axis
    assert [a.shape for a in got.values()] == [(2, 0)] * 2


def test_topk_k_from_shape_of_has_its_bounds(tmp_path):
    from ir_runner.ops.registry import lookup

    if lookup("ShapeOf", "opset3") is None:
        pytest.skip("ShapeOf is not on this branch yet")
    d = _param([2, (3, 8)])
    k = opset13.gather(opset13.shape_of(d), opset13.constant(np.int64(1)), opset13.constant(np.int64(0)))
    node = opset13.topk(d, k, 1, "min", "index")
    check_output_shapes(write_ir(node, [d], tmp_path), node)


# -- TopK values ---------------------------------------------------------------------------------------

DTYPES = [np.float32, np.float16, np.int32, np.int64, np.uint32, np.uint64]


@pytest.mark.parametrize("version", [1, 3, 11])
@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("sort", ["value", "index", "none"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_topk_modes_sorts_and_ties(version, mode, sort, dtype, tmp_path):
    rng = np.random.default_rng(version * 7 + len(mode) + len(sort))
    et = ov.Type(np.dtype(dtype))
    d = _param([3, 17, 2], et)
    kwargs = {"stable": True} if version == 11 and sort != "none" else {}
    node = MAKERS[version](d, _k(6), 1, mode, sort, **kwargs)
    path = write_ir(node, [d], tmp_path)
    check_inference(path)
    data = rng.integers(0, 6, size=(3, 17, 2)).astype(dtype)  # many ties
    if dtype == np.float32:
        data[0, :3, 0] = [-0.0, 0.0, np.inf]
    check_run(path, {"data": data})


@pytest.mark.parametrize("seed", range(12))
def test_topk_sort_none_matches_nth_element(seed, tmp_path):
    """libstdc++'s introselect on long rows (several partition rounds, the insertion sort at the end)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    k = int(rng.integers(1, n))
    d = _param([4, n])
    path = write_ir(opset13.topk(d, _k(k), -1, ["max", "min"][seed % 2], "none"), [d], tmp_path)
    data = rng.integers(0, max(2, n // int(rng.integers(1, 4))), size=(4, n)).astype(np.float32)
    check_run(path, {"data": data})


def test_topk_nan_and_oversized_k_are_refused(tmp_path):
    d = _param([2, 4])
    path = write_ir(opset13.topk(d, _k(2), 1, "max", "value"), [d], tmp_path)
    with pytest.raises(InputError, match="NaN") as caught:
        ir_runner.load(str(path)).run({"data": np.array([[1, np.nan, 2, 3], [0, 1, 2, 3]], np.float32)})
    assert caught.value.layer is not None
    d, k = _param([2, 4]), _param([], ov.Type.i64, "k")
    path = write_ir(opset13.topk(d, k, 1, "max", "value"), [d, k], tmp_path, "k")
    with pytest.raises(InputError, match="k=5"):
        ir_runner.load(str(path)).run({"data": np.zeros((2, 4), np.float32), "k": np.array(5)})
    text = write_ir(opset13.topk(d, _k(3), 1, "max", "value"), [d], tmp_path, "const").read_text()
    bad = tmp_path / "bad.xml"
    bad.write_text(text.replace('mode="max"', 'mode="largest"'))
    (tmp_path / "bad.bin").write_bytes((tmp_path / "const.bin").read_bytes())
    with pytest.raises(ir_runner.IRError, match="mode"):
        ir_runner.load(str(bad))


@pytest.mark.parametrize("seed", range(20))
def test_topk_differential(seed, tmp_path):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 7, size=rank))
    axis = int(rng.integers(-rank, rank))
    k = int(rng.integers(0, shape[axis] + 1))
    version = [1, 3, 11][int(rng.integers(3))]
    mode, sort = ["max", "min"][int(rng.integers(2))], ["value", "index", "none"][int(rng.integers(3))]
    dtype = DTYPES[int(rng.integers(len(DTYPES)))]
    d = _param(shape, ov.Type(np.dtype(dtype)))
    index_type = ["i32", "i64"][int(rng.integers(2))]
    path = write_ir(MAKERS[version](d, _k(k), axis, mode, sort, index_type), [d], tmp_path)
    check_inference(path)
    data = rng.integers(-5, 5, size=shape).astype(dtype) if np.dtype(dtype).kind != "u" else rng.integers(
        0, 9, size=shape).astype(dtype)
    if k == 0:  # the reference's evaluate returns the whole axis for k=0 (inference says 0): ir-run follows inference
        got = ir_runner.load(str(path)).run({"data": data})
        assert all(a.size == 0 for a in got.values())
        return
    check_run(path, {"data": data})


def test_bad_k_type_is_an_inference_error(tmp_path):
    d = _param([2, 4])
    path = write_ir(opset13.topk(d, _k(2), 1, "max", "value"), [d], tmp_path)
    path.write_text(path.read_text().replace('axis="1"', 'axis="2"'))
    with pytest.raises(InferenceError, match="axis=2"):
        ir_runner.load(str(path))


@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("sort", ["value", "index"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint32])  # (u8: no reference evaluate)
def test_topk_small_k_on_long_rows_with_ties(mode, sort, dtype, tmp_path):
    """Small k takes the partition path: ties at the k-th value go to the lowest indices, as the reference."""
    rng = np.random.default_rng(len(mode) * 3 + len(sort))
    et = ov.Type(np.dtype(dtype))
    d = _param([5, 200], et)
    path = write_ir(opset13.topk(d, _k(7), -1, mode, sort, "i64"), [d], tmp_path)
    data = rng.integers(0, 4, size=(5, 200)).astype(dtype)
    if dtype == np.float32:
        data[0] = np.where(data[0] == 3, -0.0, 0.0)  # signed zeros tie
        data[1, ::3] = np.inf
    if dtype == np.int64:
        data[2, 5:9] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max, np.iinfo(np.int64).max, 0]
    check_run(path, {"data": data})


# -- empty and scalar tensors --------------------------------------------------------------------------------

def test_empty_rows(tmp_path):
    d = parameter("data", "f32", [0, 3])
    node = opset13.topk(d, opset13.constant(np.array(2, np.int64)), 1, "max", "value")
    check_run(write_ir(node, [d], tmp_path), {"data": np.zeros((0, 3), np.float32)})
