"""Reductions and CumSum: OpenVINO's type_prop shapes (static, dynamic dims and ranks, axes known only at run
time), op_reference values (integers wrapping, NaN, signed zeros, empty tensors) and seeded differential
graphs, against ``Node.evaluate``; float sums within the bound stated in ``ir_runner/ops/reduction/reduce.py``."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset13 as ops  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.bits import assert_same_bits  # noqa: E402
from tests.helpers.bounds import reduce_bound  # noqa: E402
from tests.helpers.node_eval import NP_TYPES, OV_TYPES, evaluate  # noqa: E402
from tests.helpers.optest import check_inference, check_run, write_ir  # noqa: E402

BUILDERS = {"sum": ops.reduce_sum, "mean": ops.reduce_mean, "prod": ops.reduce_prod, "max": ops.reduce_max,
            "min": ops.reduce_min, "l1": ops.reduce_l1, "l2": ops.reduce_l2, "and": ops.reduce_logical_and,
            "or": ops.reduce_logical_or}
EVALUATED = {  # the element types OpenVINO's reference evaluates (2026.4)
    "sum": ("f16", "bf16", "f32", "i32", "u32", "i64", "u64"),
    "mean": ("f16", "bf16", "f32", "i32", "u32", "i64", "u64"),
    "prod": ("f16", "bf16", "f32", "i32", "u32", "i64", "u64"),
    "max": ("f16", "bf16", "f32", "i8", "u8", "i32", "u32", "i64", "u64"),
    "min": ("f16", "bf16", "f32", "i8", "u8", "i32", "u32", "i64", "u64"),
    "l1": ("f16", "bf16", "f32", "i32", "i64"), "l2": ("f16", "bf16", "f32"), "and": ("boolean",), "or": ("boolean",)}


def run_one(tmp_path, kind: str, x: np.ndarray, axes, keep_dims: bool, et: str):
    data = ops.parameter(list(x.shape), OV_TYPES[et], name="x")
    node = BUILDERS[kind](data, ops.constant(np.array(axes, np.int64)), keep_dims)
    path = write_ir(node, [data], tmp_path)
    check_inference(path)
    got = ir_runner.load(str(path)).run({"x": x})
    return next(iter(got.values())), evaluate(node, [x])


# -- type_prop ---------------------------------------------------------------------------------------------

SHAPE_CASES = [
    ([3, 4, 5], [1, 2], False), ([3, 4, 5], [1, 2], True), ([3, 4, 5], [-1], False), ([3, 4, 5], [0, -3], True),
    ([3, 4, 5], [], False), ([3, 4, 5], [0, 1, 2], False), ([3, 4, 5], 2, False), ([7], [0], False),
    ([-1, 4, -1], [0], False), ([-1, 4, -1], [2], True), ([-1, -1], [0, 1], False), ([2, 0, 3], [1], False),
]


@pytest.mark.parametrize(("shape", "axes", "keep"), SHAPE_CASES)
@pytest.mark.parametrize("kind", ["sum", "max", "l2"])
def test_static_axes_shapes(shape, axes, keep, kind, tmp_path):
    data = ops.parameter(shape, ov.Type.f32)
    check_inference(write_ir(BUILDERS[kind](data, ops.constant(np.array(axes, np.int64)), keep), [data], tmp_path))


@pytest.mark.parametrize("kind", ["and", "or"])
def test_logical_shapes(kind, tmp_path):
    data = ops.parameter([2, -1, 4], ov.Type.boolean)
    outputs = [BUILDERS[kind](data, ops.constant(np.array(a, np.int32)), k) for a, k in (([1], True), ([-1, 0], False))]
    check_inference(write_ir(outputs, [data], tmp_path))


@pytest.mark.parametrize(("axes_shape", "keep"), [([1], False), ([1], True), ([2], False), ([-1], False), ([], False)])
def test_axes_known_at_run_time(axes_shape, keep, tmp_path):
    data = ops.parameter([3, 4, 5], ov.Type.f32, name="x")
    axes = ops.parameter(axes_shape, ov.Type.i64, name="axes")
    path = write_ir(ops.reduce_sum(data, axes, keep), [data, axes], tmp_path)
    check_inference(path)
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    value = np.array([-1] if axes_shape != [] else -1, np.int64)
    if axes_shape == [2]:
        value = np.array([0, 2], np.int64)
    check_run(path, {"x": x, "axes": value})


def test_dynamic_rank(tmp_path):
    data = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32)
    outputs = [ops.reduce_mean(data, ops.constant(np.array([0], np.int64)), k) for k in (False, True)]
    check_inference(write_ir(outputs, [data], tmp_path))


def test_axis_out_of_range_is_an_error_naming_the_layer(tmp_path):
    data = ops.parameter([2, 3], ov.Type.f32)
    path = write_ir(ops.reduce_sum(data, ops.constant(np.array([1], np.int64)), False), [data], tmp_path)
    path.with_suffix(".bin").write_bytes(np.array([5], np.int64).tobytes())
    with pytest.raises(ir_runner.IRError, match="ReduceSum-1.*out of the range"):
        ir_runner.load(str(path))


def test_boolean_sum_is_refused(tmp_path):
    data = ops.parameter([2, 3], ov.Type.f32)
    path = write_ir(ops.reduce_sum(data, ops.constant(np.array([1], np.int64)), False), [data], tmp_path)
    text = path.read_text().replace('element_type="f32"', 'element_type="boolean"').replace("FP32", "BOOL")
    path.write_text(text)
    with pytest.raises(ir_runner.IRError, match="numeric element type"):
        ir_runner.load(str(path))


# -- op_reference values -------------------------------------------------------------------------------------

def special(et: str, rng: np.random.Generator, shape) -> np.ndarray:
    dtype = np.dtype(NP_TYPES[et])
    if et == "boolean":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        corners = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype)
        values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        flat = values.reshape(-1)
        flat[: min(flat.size, corners.size)] = corners[: min(flat.size, corners.size)]
        return values
    values = (rng.standard_normal(shape) * 4).astype(dtype)
    flat = values.reshape(-1)
    corners = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf], np.float32).astype(dtype)
    if flat.size > 20:
        flat[rng.choice(flat.size, 5, replace=False)] = corners
    return values


EXACT_CASES = [(kind, et) for kind in ("max", "min") for et in EVALUATED[kind]] + [
    ("and", "boolean"), ("or", "boolean")] + [(kind, et) for kind in ("sum", "mean", "prod", "l1")
                                           for et in EVALUATED[kind] if et[0] in "iu"]


@pytest.mark.parametrize(("kind", "et"), EXACT_CASES)
def test_exact_values(kind, et, tmp_path):
    rng = np.random.default_rng(len(kind) * 31 + len(et))
    x = special(et, rng, (4, 6, 5))
    for axes, keep in (([1], False), ([0, 2], True), ([-1], False)):
        got, want = run_one(tmp_path, kind, x, axes, keep, et)
        assert_same_bits(got, want, f"{kind}-{et}")


@pytest.mark.parametrize("kind", ["max", "min"])
def test_extremes_of_nan_infinities_and_signed_zeros(kind, tmp_path):
    rows = np.array([[1, np.nan, 3], [np.nan] * 3, [-np.inf, np.nan, 2], [-0.0, 0.0, -1], [0.0, -0.0, -1],
                     [-np.inf] * 3, [np.inf] * 3, [-0.0, -0.0, np.nan]], np.float32)
    for et in ("f32", "f16", "bf16"):
        got, want = run_one(tmp_path, kind, rows.astype(NP_TYPES[et]), [1], False, et)
        assert_same_bits(got, want, f"{kind}-{et}")


@pytest.mark.parametrize("kind", ["sum", "mean", "prod", "max", "min", "l1", "l2"])
def test_empty_reductions(kind, tmp_path):
    for et in ("f32", "i32") if kind != "l2" else ("f32",):
        x = np.zeros((2, 0, 3), NP_TYPES[et])
        got, want = run_one(tmp_path, kind, x, [1], False, et)
        assert_same_bits(got, want, kind)
        got, want = run_one(tmp_path, kind, x, [0], True, et)
        assert got.shape == want.shape == (1, 0, 3)


def test_integer_wrap_and_truncating_mean(tmp_path):
    x = np.array([[2**31 - 1, 1, 0], [-7, 0, 0], [7, 1, 0], [-2**31, -1, 0]], np.int32)
    for kind in ("sum", "mean", "l1", "prod"):
        got, want = run_one(tmp_path, kind, x, [1], False, "i32")
        assert_same_bits(got, want, kind)
    got, _ = run_one(tmp_path, "mean", x, [1], False, "i32")
    assert got.tolist() == [-715827882, -2, 2, 715827882]


@pytest.mark.parametrize("kind", ["sum", "mean", "prod", "l1", "l2"])
@pytest.mark.parametrize("et", ["f32", "f16", "bf16"])
def test_float_values_within_the_bound(kind, et, tmp_path):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 40, 7)) * (0.3 if kind == "prod" else 3)).astype(NP_TYPES[et])
    if kind == "prod":
        x = (np.abs(x.astype(np.float32)) + 0.6).astype(NP_TYPES[et])
    for axes, keep in (([1], False), ([0, 2], True), ([0, 1, 2], False), ([], False)):
        got, want = run_one(tmp_path, kind, x, axes, keep, et)
        assert got.shape == want.shape and got.dtype == want.dtype
        reduce_bound(kind, x, axes, got, want)


def test_kahan_cases_within_the_bound(tmp_path):
    x = np.array([[16777216, 1, 1, 1, 1], [1e8, 1, -1e8, 1, 1]], np.float32)
    got, want = run_one(tmp_path, "sum", x, [1], False, "f32")
    reduce_bound("sum", x, [1], got, want)


# -- CumSum ------------------------------------------------------------------------------------------------

def expected_cumsum(x: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """CumSum written out: a running total along ``axis`` in the given direction, in the type (wrapping)."""
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros_like(moved)
    order = range(moved.shape[-1] - 1, -1, -1) if reverse else range(moved.shape[-1])
    total = np.zeros(moved.shape[:-1], x.dtype)
    with np.errstate(over="ignore"):
        for i in order:
            if exclusive:
                out[..., i] = total
                total = total + moved[..., i]
            else:
                total = total + moved[..., i]
                out[..., i] = total
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_f32_bit_exact(exclusive, reverse, tmp_path):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 17, 4)) * 100).astype(np.float32)
    data = ops.parameter([3, 17, 4], ov.Type.f32, name="x")
    outputs = [ops.cumsum(data, ops.constant(np.array(a, t)), exclusive, reverse)
               for a, t in ((1, np.int64), (-1, np.int32), (0, np.int64))]
    path = write_ir(outputs, [data], tmp_path)
    check_inference(path)
    check_run(path, {"x": x})


@pytest.mark.parametrize("et", ["i8", "i32", "u64", "f16"])
def test_cumsum_types_the_reference_lacks(et, tmp_path):
    rng = np.random.default_rng(4)
    x = special(et, rng, (5, 6)) if et != "f16" else rng.integers(-50, 50, (5, 6)).astype(np.float16)
    data = ops.parameter([5, 6], OV_TYPES[et], name="x")
    path = write_ir([ops.cumsum(data, ops.constant(np.int64(1)), e, r) for e in (False, True) for r in (False, True)],
                    [data], tmp_path)
    got = list(ir_runner.load(str(path)).run({"x": x}).values())
    for g, (e, r) in zip(got, [(e, r) for e in (False, True) for r in (False, True)]):
        assert_same_bits(g, expected_cumsum(x, 1, e, r), "cumsum")


def test_cumsum_default_axis_and_axis_at_run_time(tmp_path):
    data = ops.parameter([4, 3], ov.Type.f32, name="x")
    axis = ops.parameter([], ov.Type.i32, name="axis")
    path = write_ir([ops.cumsum(data, axis)], [data, axis], tmp_path)
    check_inference(path)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for value in (0, 1, -1):
        check_run(path, {"x": x, "axis": np.array(value, np.int32)})


# -- differential ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(30))
def test_differential(seed, tmp_path):
    rng = np.random.default_rng(1000 + seed)
    kind = str(rng.choice(list(BUILDERS)))
    et = str(rng.choice(EVALUATED[kind]))
    rank = int(rng.integers(1, 5))
    shape = [int(n) for n in rng.integers(1, 7, size=rank)]
    axes = [int(a) for a in rng.integers(-rank, rank, size=int(rng.integers(0, rank + 1)))]
    keep = bool(rng.integers(0, 2))
    x = special(et, rng, shape)
    if kind == "prod" and et[0] in "fb":
        x = (rng.random(shape) + 0.5).astype(NP_TYPES[et])
    got, want = run_one(tmp_path, kind, x, axes, keep, et)
    if kind in ("max", "min", "and", "or") or et[0] in "iu":
        assert_same_bits(got, want, f"{kind}-{et}")
    else:
        reduce_bound(kind, x, axes, got, want)


@pytest.mark.parametrize("kind", ["sum", "mean", "prod", "l1", "l2", "max"])
@pytest.mark.parametrize("et", ["bf16", "f16", "f32", "i32"])
def test_scalar_reduced_over_no_axis(kind, et, tmp_path):
    """A 0-D input with empty axes (found by scripts/fuzz_ops.py: numpy gave a scalar, which Mean's and L2's
    in-place steps cannot take)."""
    if kind == "l2" and et == "i32":
        return
    x = np.array(3, NP_TYPES[et])
    got, want = run_one(tmp_path, kind, x, [], False, et)
    assert got.shape == () and got.dtype == x.dtype
    if et in EVALUATED[kind]:
        assert_same_bits(got, want, kind)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_do_not_depend_on_the_rows_block_or_alignment(dtype):
    """Each row sums to the same bits whatever block of rows holds it and wherever it starts in memory, so
    threads and Dask blocks agree with a whole run (OpenBLAS's matrix-vector product fails this)."""
    from ir_runner.ops.toolkit.numeric import row_sums

    rng = np.random.default_rng(3)
    for length in (*range(1, 40), 63, 64, 65, 127, 1000, 4099, 8193, 20001):
        rows = (rng.standard_normal((11, length)) * 10 ** rng.uniform(-3, 3, (11, 1))).astype(dtype)
        whole = row_sums(rows)
        for offset in range(4):
            shifted = np.empty(rows.size + offset, dtype)[offset:].reshape(rows.shape)
            shifted[...] = rows
            for start in range(4):
                assert_same_bits(row_sums(shifted[start:]), whole[start:], "f32")
                assert_same_bits(row_sums(shifted[start:start + 1]), whole[start:start + 1], "f32")  # (alone)
        exact = rows.astype(np.float64).sum(axis=1)
        bound = length * np.finfo(dtype).eps * np.abs(rows).astype(np.float64).sum(axis=1)
        assert (np.abs(whole - exact) <= bound).all()


@pytest.mark.parametrize("kind", ["sum", "mean", "l2"])
def test_last_axis_sums_of_a_strided_input_equal_a_contiguous_ones(kind):
    """A Transpose's view (strided) summed along its last axis gives the bits of the same rows contiguous, in
    one block or alone (the summation is chosen by shape and type, never by layout: a Dask block of one row of
    a transposed batch is contiguous)."""
    from ir_runner.ops.reduction.reduce import reduce

    x = np.random.default_rng(2).standard_normal((300, 64)).astype(np.float32).T  # [64, 300], strided
    params = {"kind": kind, "axes": (1,), "keep_dims": False}
    whole = reduce(x, np.array([1]), **params)
    assert_same_bits(whole, reduce(np.ascontiguousarray(x), np.array([1]), **params), "f32")
    for i in (0, 31, 63):
        assert_same_bits(reduce(np.ascontiguousarray(x[i:i + 1]), np.array([1]), **params), whole[i:i + 1], "f32")


@pytest.mark.parametrize("kind", ["sum", "mean", "l1", "l2"])
def test_last_axis_sums_of_a_block_equal_the_whole_runs(kind):
    """ReduceX over the last axes: rows reduced in a large (threaded) run, in a small prepared kernel, and
    in slices of rows give the same bits; a row of -0.0 sums to +0.0 as in the reference."""
    from ir_runner.ops.reduction.reduce import prepare_reduce, reduce
    from ir_runner.types import PartialShape, TensorSpec, element_type

    rng = np.random.default_rng(9)
    x = rng.standard_normal((1100, 1000)).astype(np.float32)
    x[5] = -0.0
    params = {"kind": kind, "axes": (1,), "keep_dims": False}
    whole = reduce(x, np.array([1]), **params)
    spec = TensorSpec(element_type("f32"), PartialShape.of((7, 1000)))
    small = prepare_reduce(params, [spec], [TensorSpec(spec.element_type, PartialShape.of((7,)))], {})
    for lo in (0, 5, 333):
        assert_same_bits(reduce(x[lo:lo + 7], np.array([1]), **params), whole[lo:lo + 7], "f32")
        if kind in ("sum", "mean"):
            assert_same_bits(small(x[lo:lo + 7], np.array([1])), whole[lo:lo + 7], "f32")
    assert np.signbit(whole[5]) == np.False_ and whole[5] == 0
