"""MatMul-1: OpenVINO's type_prop shapes (transposes, 1-D operands, broadcast batch dims, dynamic dims and
ranks), values against ``Node.evaluate`` within the bound stated in ``ir_runner/ops/linalg/matmul.py``
(integers bit for bit, wrapping), and seeded differential graphs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset13 as ops  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.bits import assert_same_bits  # noqa: E402
from tests.helpers.bounds import matmul_bound  # noqa: E402
from tests.helpers.node_eval import NP_TYPES, OV_TYPES, evaluate  # noqa: E402
from tests.helpers.optest import check_inference, run_and_evaluate, write_ir  # noqa: E402

# -- MatMul shapes -------------------------------------------------------------------------------------------

MATMUL_SHAPES = [
    ([2, 3], [3, 4], False, False), ([3, 2], [3, 4], True, False), ([2, 3], [4, 3], False, True),
    ([3], [3, 4], False, False), ([2, 3], [3], False, False), ([3], [3], False, False), ([3], [3], True, True),
    ([5, 2, 3], [3, 4], False, False), ([2, 3], [5, 3, 4], False, False), ([5, 1, 2, 3], [7, 3, 4], False, False),
    ([1, 2, 3], [6, 3, 4], False, False), ([-1, 2, 3], [3, 4], False, False), ([2, -1], [-1, 4], False, False),
    ([-1, -1, -1], [-1, -1], True, True), ([4, -1, 2, 3], [1, 3, -1], False, False), ([2, 0], [0, 3], False, False),
]


@pytest.mark.parametrize(("a_shape", "b_shape", "ta", "tb"), MATMUL_SHAPES)
def test_matmul_shapes(a_shape, b_shape, ta, tb, tmp_path):
    a, b = ops.parameter(a_shape, ov.Type.f32), ops.parameter(b_shape, ov.Type.f32)
    check_inference(write_ir(ops.matmul(a, b, ta, tb), [a, b], tmp_path))


def test_matmul_dynamic_rank(tmp_path):
    a, b = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32), ops.parameter([3, 4], ov.Type.f32)
    check_inference(write_ir(ops.matmul(a, b, False, False), [a, b], tmp_path))


def test_matmul_mismatch_is_an_error_naming_the_layer(tmp_path):
    a, b = ops.parameter([2, 3], ov.Type.f32), ops.parameter([3, 4], ov.Type.f32)
    path = write_ir(ops.matmul(a, b, False, False), [a, b], tmp_path)
    path.write_text(path.read_text().replace('transpose_b="false"', 'transpose_b="true"'))
    with pytest.raises(ir_runner.IRError, match="MatMul-1.*do not match"):
        ir_runner.load(str(path))


# -- MatMul values -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "i32", "i64", "u32", "u64"])
@pytest.mark.parametrize(("a_shape", "b_shape", "ta", "tb"), [
    ([4, 3, 70], [70, 5], False, False), ([70, 6], [2, 5, 70], True, True), ([70], [70], False, False),
    ([2, 1, 3, 70], [4, 70, 2], False, False),
    # a linear layer: rank > 2 times a 2-D b, prepared as one 2-D product; 2-D operands with transposes
    ([2, 3, 70], [5, 70], False, True), ([2, 2, 3, 70], [70, 5], False, False), ([70, 6], [70, 5], True, False),
    ([70, 6], [5, 70], True, True)])
def test_matmul_values(et, a_shape, b_shape, ta, tb, tmp_path):
    rng = np.random.default_rng(len(et) + len(a_shape))
    dtype = np.dtype(NP_TYPES[et])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, size=a_shape, dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, size=b_shape, dtype=dtype, endpoint=True)
    else:
        a = rng.standard_normal(a_shape).astype(dtype)
        b = rng.standard_normal(b_shape).astype(dtype)
    pa, pb = ops.parameter(a_shape, OV_TYPES[et], name="a"), ops.parameter(b_shape, OV_TYPES[et], name="b")
    got, want = run_and_evaluate(tmp_path, ops.matmul(pa, pb, ta, tb), [pa, pb], {"a": a, "b": b})
    assert got.shape == want.shape and got.dtype == want.dtype
    if dtype.kind in "iu":
        assert_same_bits(got, want, et)
    else:
        matmul_bound(a, b, ta, tb, got, want)


def test_matmul_f16_accumulates_wider(tmp_path):
    a = np.array([[2048, 1, 1, 1, 1]], np.float16)
    pa, pb = ops.parameter([1, 5], ov.Type.f16, name="a"), ops.parameter([5, 1], ov.Type.f16, name="b")
    got, want = run_and_evaluate(tmp_path, ops.matmul(pa, pb, False, False), [pa, pb],
                                 {"a": a, "b": np.ones((5, 1), np.float16)})
    assert got.tolist() == want.tolist() == [[2052.0]]


@pytest.mark.parametrize("a_shape", [(0, 64), (1, 0, 64)], ids=str)
def test_matmul_of_no_rows(a_shape, tmp_path):
    """A mixture-of-experts layer's expert that no token was routed to multiplies an empty [0, K] activation
    by its weight: an empty product (it divided by zero planning its row blocks)."""
    pa, pb = ops.parameter([-1] * len(a_shape), ov.Type.f32, name="a"), ops.parameter([24, 64], ov.Type.f32, name="b")
    got, want = run_and_evaluate(tmp_path, ops.matmul(pa, pb, False, True), [pa, pb],
                                 {"a": np.zeros(a_shape, np.float32), "b": np.ones((24, 64), np.float32)})
    assert got.shape == want.shape == a_shape[:-1] + (24,)


def test_matmul_writes_into_out(tmp_path):
    a, b = ops.parameter([8, 16, 32], ov.Type.f32, name="a"), ops.parameter([8, 32, 4], ov.Type.f32, name="b")
    path = write_ir(ops.matmul(a, b, False, False), [a, b], tmp_path)
    rng = np.random.default_rng(0)
    feeds = {"a": rng.standard_normal((8, 16, 32)).astype(np.float32),
             "b": rng.standard_normal((8, 32, 4)).astype(np.float32)}
    model = ir_runner.load(str(path))
    name = next(iter(model.run(feeds)))
    out = np.empty((8, 16, 4), np.float32)
    model.run(feeds, out={name: out})
    np.testing.assert_array_equal(out, np.matmul(feeds["a"], feeds["b"]))


@pytest.mark.parametrize("tb", [False, True])
def test_a_linear_layer_writes_into_out(tmp_path, tb):
    """[2,5,32] times a constant [32,4] (or [4,32] transposed): the prepared one-product path, fresh and into
    ``out=``, equal to numpy's matmul of the flattened rows (by the transposed weight copied once: a small
    constant)."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 32) if tb else (32, 4)).astype(np.float32)
    x = ops.parameter([2, 5, 32], ov.Type.f32, name="x")
    path = write_ir(ops.matmul(x, ops.constant(w), False, tb), [x], tmp_path)
    feeds = {"x": rng.standard_normal((2, 5, 32)).astype(np.float32)}
    want = np.matmul(feeds["x"].reshape(10, 32), np.ascontiguousarray(w.T) if tb else w).reshape(2, 5, 4)
    model = ir_runner.load(str(path))
    name, got = next(iter(model.run(feeds).items()))
    out = np.empty((2, 5, 4), np.float32)
    model.run(feeds, out={name: out})
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("w_shape", [(256, 64), (64, 1024), (512, 160)])
def test_a_constant_transposed_weight_small_or_not(tmp_path, w_shape):
    """A constant f32 weight with transpose_b: copied transposed once when small ([256,64], [64,1024]: 64 and
    256 KiB), kept as a view above ([512,160], 320 KiB); within the bound of the reference both ways, over
    repeated runs (the copy is the weight's, not the first run's)."""
    from ir_runner.ops.linalg.matmul import _TRANSPOSED_MAX

    w = np.random.default_rng(sum(w_shape)).standard_normal(w_shape).astype(np.float32)
    assert (w.nbytes <= _TRANSPOSED_MAX) == (w_shape != (512, 160))
    x = ops.parameter([3, 5, w_shape[1]], ov.Type.f32, name="x")
    path = write_ir(ops.matmul(x, ops.constant(w), False, True), [x], tmp_path)
    model = ir_runner.load(str(path))
    for seed in range(2):
        feed = np.random.default_rng(seed).standard_normal((3, 5, w_shape[1])).astype(np.float32)
        got = next(iter(model.run({"x": feed}).values()))
        want = evaluate(ops.matmul(ops.parameter(feed.shape, ov.Type.f32), ops.constant(w), False, True), [feed])
        matmul_bound(feed, w, False, True, got, want)


def test_a_prepared_kernel_given_another_weight_uses_it():
    """The prepared kernel of a small constant transposed weight uses its contiguous copy only when given that
    constant: another array in its place (``ir-run precision`` substitutes weights) is what it multiplies by."""
    from ir_runner.ops.linalg.matmul import _prepare_matmul
    from ir_runner.types import PartialShape, TensorSpec, element_type

    rng = np.random.default_rng(11)
    w, other = (rng.standard_normal((24, 16)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((2, 3, 16)).astype(np.float32)
    f32 = element_type("f32")
    specs = [TensorSpec(f32, PartialShape.of(s)) for s in (x.shape, w.shape, (2, 3, 24))]
    kernel = _prepare_matmul({"transpose_a": False, "transpose_b": True}, specs[:2], specs[2:], [None, w])
    for weight in (w, other):
        np.testing.assert_allclose(kernel(x, weight), x @ weight.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("et", "a_shape", "b_shape", "ta", "tb"), [
    ("f32", [2, 10001, 64], [64, 3], False, False), ("f32", [64, 20001], [3, 64], True, True),
    ("f64", [9000, 64], [64, 5], False, False), ("f16", [1, 5000, 1000], [1000, 8], False, False),
    ("bf16", [1000, 4500], [8, 1000], True, True)])
def test_matmul_in_blocks_of_rows_is_within_the_bound(et, a_shape, b_shape, ta, tb, tmp_path):
    """An ``a`` of more rows than one BLAS call packs (``matmul._row_blocks``) goes in blocks of rows, fresh and
    into ``out=`` (the same bits: the same calls), within MatMul's bound of the reference, without a widened
    copy of the whole ``a`` (numpy reports its buffers to tracemalloc). Not bit for bit with one
    ``np.matmul`` of the whole: OpenBLAS's result for a row depends on the call's row count and the row's
    place in it on some CPUs (its Haswell kernels, which AVX2 CPUs get: 28 of 9000 f64 rows differed in one
    trial, 3 f16 elements; ``OPENBLAS_CORETYPE=Haswell`` reproduces it on any x86-64), not on others
    (SkylakeX: the same bits for these shapes); docs/scale.md."""
    import tracemalloc

    dtype = NP_TYPES[et] if et in NP_TYPES else np.float64
    ov_type = OV_TYPES[et] if et in OV_TYPES else ov.Type.f64
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    pa, pb = ops.parameter(a_shape, ov_type, name="a"), ops.parameter(b_shape, ov_type, name="b")
    node = ops.matmul(pa, pb, ta, tb)
    model = ir_runner.load(str(write_ir(node, [pa, pb], tmp_path)))
    name, got = next(iter(model.run({"a": a, "b": b}).items()))
    out = np.empty_like(got)
    tracemalloc.start()
    try:
        model.run({"a": a, "b": b}, out={name: out})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20  # (a block of rows in f32 and b widened; the whole a widened is 18 MB or more)
    assert_same_bits(out, got, et)
    if et == "f64":  # (the reference evaluates no f64 MatMul: extended precision, rounded once)
        wide_a, wide_b = a.astype(np.longdouble), b.astype(np.longdouble)
        want = np.matmul(wide_a.T if ta else wide_a, wide_b.T if tb else wide_b).astype(np.float64)
    else:
        want = evaluate(node, [a, b])
    matmul_bound(a, b, ta, tb, got, want)


@pytest.mark.parametrize("et", ["f32", "f16", "i32"])
@pytest.mark.parametrize(("a_shape", "b_shape", "declared"), [
    ([0, 4], [4, 3], [-1, 4]), ([3, 0], [0, 2], [3, -1]), ([2, 0, 4], [4, 3], [2, -1, 4]),
    ([16388, 0], [0, 3], [-1, -1])])
def test_matmul_of_an_empty_feed_is_the_references(et, a_shape, b_shape, declared, tmp_path):
    """An empty feed on a dynamic model: no rows give an empty product, an empty contracted dim gives zeros
    (a sum over no terms), as the reference (found by fuzzing: the row blocking divided by zero)."""
    pa, pb = ops.parameter(declared, OV_TYPES[et], name="a"), ops.parameter(b_shape, OV_TYPES[et], name="b")
    feeds = {"a": np.ones(a_shape, NP_TYPES[et]), "b": np.ones(b_shape, NP_TYPES[et])}
    got, want = run_and_evaluate(tmp_path, ops.matmul(pa, pb, False, False), [pa, pb], feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_same_bits(got, want, et)


# -- differential: random ranks, transposes and broadcast batch dims -----------------------------------------

@pytest.mark.parametrize("seed", range(1, 20, 2))
def test_matmul_differential(seed, tmp_path):
    rng = np.random.default_rng(2000 + seed)
    et = str(rng.choice(["f32", "f16", "bf16", "i32", "i64"]))
    dtype = np.dtype(NP_TYPES[et])
    m, k, n = (int(v) for v in rng.integers(1, 9, size=3))
    batch = [int(v) for v in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
    b_batch = [1 if rng.random() < 0.3 else d for d in batch][int(rng.integers(0, len(batch) + 1)):]
    ta, tb = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    a_shape = batch + ([k, m] if ta else [m, k])
    b_shape = b_batch + ([n, k] if tb else [k, n])
    if rng.random() < 0.2:
        a_shape = [k]
    arrays = [rng.integers(-1000, 1000, size=s).astype(dtype) if dtype.kind == "i"
              else rng.standard_normal(s).astype(dtype) for s in (a_shape, b_shape)]
    pa, pb = ops.parameter(a_shape, OV_TYPES[et], name="a"), ops.parameter(b_shape, OV_TYPES[et], name="b")
    got, want = run_and_evaluate(tmp_path, ops.matmul(pa, pb, ta, tb), [pa, pb], dict(zip("ab", arrays)))
    if dtype.kind == "i":
        assert_same_bits(got, want, et)
    else:
        matmul_bound(*arrays, ta, tb, got, want)
