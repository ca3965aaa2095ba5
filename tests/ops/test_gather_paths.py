"""Each fast path of the Gather kernel gives the reference result: the chunked, threaded take for
non-constant indices (in-range chunks and chunks with negative or out-of-range values), the single take
for constant indices, and the flattened-rows take for batch_dims > 0; and strict mode checks the indices even
when an empty axis or output means nothing is read."""

import ml_dtypes
import numpy as np
import pytest

import ir_runner
from ir_runner.ops.indexing.gather import _INDEX_CHUNK, GatherKernel
from ir_runner.parallel import PARALLEL_MIN_ELEMENTS
from tests.helpers.gather_reference import gather_with_zeros
from tests.helpers.irbuild import IRBuilder


def run(data, indices, axis=0, constant=False):
    kernel = GatherKernel(data.shape, indices.shape, axis, 0, None)
    if constant:
        kernel.fix_indices(indices)
    return kernel(data, indices)


SIZES = [3, _INDEX_CHUNK + 7, PARALLEL_MIN_ELEMENTS + 11]


@pytest.mark.parametrize("count", SIZES, ids=["small", "two_chunks", "threaded"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16, np.int8])
@pytest.mark.parametrize("kind", ["in_range", "negative", "out_of_range"])
@pytest.mark.parametrize("constant", [False, True], ids=["param", "const"])
def test_one_dimensional_paths(count, dtype, kind, constant):
    rng = np.random.default_rng(count)
    data = rng.random(100).astype(np.float32)
    low = {"in_range": 0, "negative": -100, "out_of_range": -130}[kind]
    high = 100 if kind != "out_of_range" else 130
    if np.dtype(dtype).kind == "u":
        low = 0
    high = min(high, np.iinfo(dtype).max)
    indices = rng.integers(max(low, np.iinfo(dtype).min), high, count).astype(dtype)
    got = run(data, indices, constant=constant)
    assert got.tobytes() == gather_with_zeros(data, indices, 0).tobytes()


def test_rows_with_inner_dims_in_chunks():
    rng = np.random.default_rng(1)
    data = rng.random((50, 7)).astype(np.float32)
    indices = rng.integers(-60, 60, _INDEX_CHUNK * 3).astype(np.int32)
    assert run(data, indices).tobytes() == gather_with_zeros(data, indices, 0).tobytes()


def test_u64_indices_are_read_as_int64():
    """2**64 - 1 is -1 for the reference (it reads indices as int64): the last row."""
    data = np.arange(10, dtype=np.int32)
    indices = np.array([2**64 - 1, 3, 2**63], np.uint64)
    assert run(data, indices).tolist() == [9, 3, 0]


def test_packed_and_float_indices_in_chunks():
    data = np.arange(8, dtype=np.int16)
    int4 = np.array([-8, -1, 0, 7] * (_INDEX_CHUNK // 2), ml_dtypes.int4)
    assert run(data, int4).tobytes() == gather_with_zeros(data, int4.astype(np.int64), 0).tobytes()
    floats = np.array([1.9, -1.5, np.nan, 9.0], np.float32)
    assert run(data, floats).tolist() == [1, 7, 0, 0]


def test_bf16_and_f16_data_move_bits():
    data = np.array([0x7C01, 0x3C00, 0xFC00], np.uint16).view(np.float16)  # a signalling NaN, 1.0, -inf
    got = run(data, np.array([0, 1, 2, 5], np.int64))
    assert got.view(np.uint16).tolist() == [0x7E01, 0x3C00, 0xFC00, 0]
    bf = np.array([1.5, -2.0], ml_dtypes.bfloat16)
    assert run(bf, np.array([1, 0, -1], np.int32)).astype(np.float32).tolist() == [-2.0, 1.5, -2.0]


@pytest.mark.parametrize("data_shape, indices, axis", [
    ((5,), [0, -1, 4], 0), ((3, 4, 2), [[1, -4], [3, 0]], 1), ((0, 4), [2, -1], 1), ((3, 4), [], 1),
    ((2, 3), 2, 1), ((6, 3), [5, 0], 0),
])
def test_prepared_small_constant_take(data_shape, indices, axis):
    """prepare_gather's small path (constant, valid indices, one batch) on odd shapes and strided data."""
    from ir_runner.ops.indexing.gather import prepare_gather
    from ir_runner.types import PartialShape, TensorSpec, element_type_of

    data = (np.arange(int(np.prod(data_shape)) * 2, dtype=np.float32).reshape(*data_shape, 2)[..., 0]
            if data_shape else np.float32(1))
    idx = np.array(indices, np.int64)
    f32, i64 = element_type_of(np.dtype(np.float32)), element_type_of(np.dtype(np.int64))
    out_shape = data_shape[:axis] + idx.shape + data_shape[axis + 1:]
    kernel = prepare_gather(
        {"axis": axis, "batch_dims": 0, "strict_low": None},
        [TensorSpec(f32, PartialShape.of(data_shape)), TensorSpec(i64, PartialShape.of(idx.shape)),
         TensorSpec(i64, PartialShape.of(()))],
        [TensorSpec(f32, PartialShape.of(out_shape))], [None, idx, np.array(axis)],
    )
    got = kernel(data, idx, np.array(axis))
    want = gather_with_zeros(data, idx, axis)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    assert not np.shares_memory(got, data)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_negative_indices_at_the_limits_of_the_index_type(dtype):
    """Valid negative indices are wrapped without numpy's per-index loop; the smallest value of the index
    type and a dim above its largest value must still land on the right rows."""
    info = np.iinfo(dtype)
    dim = min(int(info.max) + 2, 70_000)
    data = np.arange(dim, dtype=np.int32)
    rng = np.random.default_rng(dim)
    indices = rng.integers(max(info.min, -dim), min(info.max, dim - 1), _INDEX_CHUNK + 5).astype(dtype)
    indices[:3] = [max(info.min, -dim), -1, 0]
    assert run(data, indices).tobytes() == gather_with_zeros(data, indices, 0).tobytes()


# ----------------------------------------------------------------------------- strict mode when nothing is read


def gather_ir(data_shape: str, indices, axis: int, version: str = "opset8") -> tuple[bytes, bytes]:
    """f32 data Parameter ``d``; indices a Parameter ``i`` (i64, shape given as text) or a Const (a list)."""
    b = IRBuilder("gather")
    data = b.parameter("d", "f32", data_shape)
    if isinstance(indices, str):
        idx = b.parameter("i", "i64", indices)
        idx_shape = [int(x) for x in indices.split(",") if x]
    else:
        idx = b.const("i", np.array(indices, np.int64))
        idx_shape = list(np.shape(indices))
    dims = [int(x) for x in data_shape.split(",")]
    out = dims[:axis] + idx_shape + dims[axis + 1:]
    node = b.layer("Gather", version, [data, idx, b.const("a", np.array(axis, np.int64))], out_specs=[("f32", out)],
                   name="g")
    b.result(node, "out")
    return b.build()


@pytest.mark.parametrize("data_shape", ["0,3", "3,0", "2,0,3"])
@pytest.mark.parametrize("constant", [False, True], ids=["fed", "const"])
def test_strict_checks_indices_even_when_nothing_is_read(data_shape, constant):
    """An axis of size 0, or an empty output, reads no element; strict mode must still refuse index 5 (and, for
    an axis of size 0, every index), whether the indices are fed or constant (they were only checked when
    constant: the fed ones gave zeros or an empty output)."""
    dims = tuple(int(x) for x in data_shape.split(","))
    feeds = {"d": np.zeros(dims, np.float32)}
    if not constant:
        feeds["i"] = np.array([0, 5])
    built = gather_ir(data_shape, [0, 5] if constant else "2", 0)
    with pytest.raises(ir_runner.IndexOutOfRangeError, match=r"'g'.*index (0|5) at position \[[01]\]"):
        ir_runner.load(*built, strict=True).run(feeds)
    loose = ir_runner.load(*built).run(feeds)["out"]  # without strict: zeros (or nothing) as the reference
    assert loose.shape == (2,) + dims[1:] and not loose.any()
