"""MatMul-1, Softmax-1/8 and LogSoftmax-5: OpenVINO's type_prop shapes (transposes, 1-D operands, broadcast
batch dims, dynamic dims and ranks), values against ``Node.evaluate`` within the bounds stated in
``ir_runner/ops/linalg/matmul.py`` and ``ir_runner/ops/normalization/softmax.py`` (integers bit for bit,
wrapping), LogSoftmax against float64 (OpenVINO has no reference for it), and seeded differential graphs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402
from openvino import opset13 as ops  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.bits import assert_same_bits  # noqa: E402
from tests.helpers.bounds import F32_EPS, matmul_bound, out_eps_of, softmax_bound  # noqa: E402
from tests.helpers.node_eval import BF16, NP_TYPES, OV_TYPES, evaluate  # noqa: E402
from tests.helpers.optest import check_inference, write_ir  # noqa: E402


def _run(tmp_path, node, params, feeds):
    path = write_ir(node, params, tmp_path)
    check_inference(path)
    got = next(iter(ir_runner.load(str(path)).run(feeds).values()))
    return got, evaluate(node, list(feeds.values()))


# -- MatMul shapes -----------------------------------------------------------------------------------------

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


# -- MatMul values -----------------------------------------------------------------------------------------

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
    got, want = _run(tmp_path, ops.matmul(pa, pb, ta, tb), [pa, pb], {"a": a, "b": b})
    assert got.shape == want.shape and got.dtype == want.dtype
    if dtype.kind in "iu":
        assert_same_bits(got, want, et)
    else:
        matmul_bound(a, b, ta, tb, got, want)


def test_matmul_f16_accumulates_wider(tmp_path):
    a = np.array([[2048, 1, 1, 1, 1]], np.float16)
    pa, pb = ops.parameter([1, 5], ov.Type.f16, name="a"), ops.parameter([5, 1], ov.Type.f16, name="b")
    got, want = _run(tmp_path, ops.matmul(pa, pb, False, False), [pa, pb], {"a": a, "b": np.ones((5, 1), np.float16)})
    assert got.tolist() == want.tolist() == [[2052.0]]


@pytest.mark.parametrize("a_shape", [(0, 64), (1, 0, 64)], ids=str)
def test_matmul_of_no_rows(a_shape, tmp_path):
    """A mixture-of-experts layer's expert that no token was routed to multiplies an empty [0, K] activation
    by its weight: an empty product (it divided by zero planning its row blocks)."""
    pa, pb = ops.parameter([-1] * len(a_shape), ov.Type.f32, name="a"), ops.parameter([24, 64], ov.Type.f32, name="b")
    got, want = _run(tmp_path, ops.matmul(pa, pb, False, True), [pa, pb],
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
    ``out=``, equal to numpy's matmul of the flattened rows."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 32) if tb else (32, 4)).astype(np.float32)
    x = ops.parameter([2, 5, 32], ov.Type.f32, name="x")
    path = write_ir(ops.matmul(x, ops.constant(w), False, tb), [x], tmp_path)
    feeds = {"x": rng.standard_normal((2, 5, 32)).astype(np.float32)}
    want = np.matmul(feeds["x"].reshape(10, 32), w.T if tb else w).reshape(2, 5, 4)
    model = ir_runner.load(str(path))
    name, got = next(iter(model.run(feeds).items()))
    out = np.empty((2, 5, 4), np.float32)
    model.run(feeds, out={name: out})
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out, want)


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
    got, want = _run(tmp_path, ops.matmul(pa, pb, False, False), [pa, pb], feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_same_bits(got, want, et)


# -- Softmax and LogSoftmax ----------------------------------------------------------------------------------

@pytest.mark.parametrize("et", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(("shape", "axis", "version"), [
    ([4, 50], 1, 1), ([4, 50], 0, 1), ([3, 5, 7], -1, 8), ([3, 5, 7], -3, 8), ([2, 3, 4], 1, 8), ([5], 0, 8)])
def test_softmax_values(et, shape, axis, version, tmp_path):
    rng = np.random.default_rng(len(shape) + axis + 7)
    x = (rng.standard_normal(shape) * 5).astype(NP_TYPES[et])
    data = ops.parameter(shape, OV_TYPES[et], name="x")
    node = opset1.softmax(data, axis) if version == 1 else ops.softmax(data, axis)
    got, want = _run(tmp_path, node, [data], {"x": x})
    softmax_bound(x, axis, got, want)


@pytest.mark.parametrize(("et", "low"), [("f32", -104.0), ("bf16", -104.0), ("f16", -17.5)])
def test_softmax_subnormal_outputs_within_two_subnormal_units(et, low, tmp_path):
    """Outputs below the smallest normal are kept (no flush to zero on either side) and differ from the
    reference's by at most 2 units of the smallest subnormal (numpy's exp is not correctly rounded there)."""
    x = np.random.default_rng(5).uniform(low, 0, (3000, 6)).astype(NP_TYPES[et])
    data = ops.parameter(list(x.shape), OV_TYPES[et], name="x")
    got, want = _run(tmp_path, ops.softmax(data, 1), [data], {"x": x})
    softmax_bound(x, 1, got, want)
    g = np.abs(got.astype(np.float64))
    assert ((g > 0) & (g < float(ml_dtypes.finfo(x.dtype).smallest_normal))).sum() > 500


def test_softmax_nan_and_infinite_rows(tmp_path):
    x = np.array([[1, 2, 3], [np.nan, 0, 1], [np.inf, 0, 1], [-np.inf] * 3, [-np.inf, 0, 1]], np.float32)
    data = ops.parameter([5, 3], ov.Type.f32, name="x")
    got, want = _run(tmp_path, ops.softmax(data, 1), [data], {"x": x})
    softmax_bound(x, 1, got, want)
    assert np.isnan(got[1:4]).all() and got[4, 0] == 0


def test_softmax_empty_and_axis_refused(tmp_path):
    data = ops.parameter([2, 0], ov.Type.f32, name="x")
    got, want = _run(tmp_path, ops.softmax(data, 1), [data], {"x": np.zeros((2, 0), np.float32)})
    assert got.shape == want.shape == (2, 0)
    data = ops.parameter([2, 3], ov.Type.f32, name="x")
    path = write_ir(ops.softmax(data, 1), [data], tmp_path)
    path.write_text(path.read_text().replace('axis="1"', 'axis="2"'))
    with pytest.raises(ir_runner.IRError, match="Softmax-8.*out of the range"):
        ir_runner.load(str(path))



@pytest.mark.parametrize("length", [1, 2, 16, 17, 64, 300])
def test_row_maximum_paths_agree_with_numpy(length):
    """Softmax's row maximum (column by column for many short rows, reduceat over contiguous rows, a reduce
    otherwise) equals ``np.maximum.reduce`` bit for bit, NaN and infinities included, on contiguous and
    strided rows."""
    from ir_runner.ops.normalization.softmax import _row_max

    rng = np.random.default_rng(length)
    x = rng.standard_normal((600, length)).astype(np.float32)  # (600 rows: by columns up to 16 a row)
    x[3, -1], x[4, 0], x[5, :] = np.nan, np.inf, -np.inf
    x[6, length // 2] = -np.inf
    for rows in (x, x[::2], np.asfortranarray(x), x[:7]):
        assert_same_bits(_row_max(rows), np.maximum.reduce(rows, axis=-1, keepdims=True), "f32")


def test_softmax_rows_do_not_depend_on_their_block():
    """A row's bits are the same alone, in a block of rows, or as the last block's single row (rows of 9,000:
    numpy's einsum adds a single long row in pieces of its buffer unless numeric.row_sums prevents it)."""
    from ir_runner.ops.normalization.softmax import _BLOCK, softmax

    rows = _BLOCK // 9000 + 1  # the last block holds one row
    x = (np.random.default_rng(4).standard_normal((rows, 9000)) * 3).astype(np.float32)
    for log in (False, True):
        whole = softmax(x, axis=1, log=log)
        for i in (1, rows - 2, rows - 1):
            assert_same_bits(softmax(x[i:i + 1], axis=1, log=log), whole[i:i + 1], "f32")
            assert_same_bits(softmax(x[i - 1:i + 1], axis=1, log=log)[1:], whole[i:i + 1], "f32")


@pytest.mark.parametrize("length", [1, 5, 17, 64])
def test_softmax_of_short_rows_against_the_reference(length, tmp_path):
    x = (np.random.default_rng(length).standard_normal((300, length)) * 6).astype(np.float32)
    x[7, 0], x[8, -1] = np.nan, np.inf
    data = ops.parameter([300, length], ov.Type.f32, name="x")
    got, want = _run(tmp_path, ops.softmax(data, 1), [data], {"x": x})
    softmax_bound(x, 1, got, want)
    assert np.isnan(got[7:9]).all() and not np.isnan(np.delete(got, [7, 8], axis=0)).any()

@pytest.mark.parametrize("shape", [(300, 1000), (8000, 37), (5, 200, 300)])  # (over the threads' threshold)
def test_softmax_threads_compute_each_row_once(shape, monkeypatch):
    """The last-axis path splits rows over threads in blocks that end where the thread's rows end: a block
    running past them made the first thread also compute the second thread's rows, racing on the same
    output in place (an exp applied twice, or an ulp off, in some rows of the second half, from run to
    run). Every row is computed exactly once, and the bits equal those of one thread."""
    import threading

    from ir_runner import parallel
    from ir_runner.ops.normalization import softmax as module

    monkeypatch.setattr(parallel, "_WORKERS", 2)
    x = (np.random.default_rng(7).standard_normal(shape) * 4).astype(np.float32)
    out = np.empty_like(x)
    seen, lock, rows_of = [], threading.Lock(), module._softmax_rows
    row_bytes = shape[-1] * 4

    def recorded(rows, result, log):
        first = (result.ctypes.data - out.ctypes.data) // row_bytes
        with lock:
            seen.extend(range(first, first + result.shape[0]))
        rows_of(rows, result, log)

    monkeypatch.setattr(module, "_softmax_rows", recorded)
    module.softmax(x, axis=x.ndim - 1, out=out)
    assert sorted(seen) == list(range(x.size // shape[-1]))
    monkeypatch.setattr(parallel, "_WORKERS", 1)
    assert_same_bits(out, module.softmax(x, axis=x.ndim - 1), "f32")


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize(("shape", "axis", "dtype"), [
    ((700, 900), 0, np.float32), ((40, 300, 50), 1, np.float32), ((3, 200000), 0, np.float32),
    ((600, 1000), 1, np.float16), ((70000,), 0, BF16)])
def test_softmax_of_another_axis_or_a_narrow_type_in_parts(shape, axis, dtype, log):
    """Another axis than the last, or f16/bf16, go in parts of rows copied to the compute type (threads, no
    temporary of the whole size: numpy reports its buffers to tracemalloc): the bits of the last-axis f32
    path on a contiguous copy with that axis last, rounded once."""
    import tracemalloc

    from ir_runner.ops.normalization.softmax import softmax

    x = (np.random.default_rng(len(shape) + axis).standard_normal(shape) * 4).astype(dtype)
    moved = np.ascontiguousarray(np.moveaxis(x, axis, -1), np.float32)
    want = np.moveaxis(softmax(moved, axis=moved.ndim - 1, log=log), -1, axis).astype(dtype)
    out = np.empty_like(x)
    tracemalloc.start()
    try:
        softmax(x, axis=axis, log=log, out=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_same_bits(out, want, "softmax")
    assert peak < max(out.nbytes // 2, 2 << 20)


def log_softmax_exact(x: np.ndarray, axis: int) -> np.ndarray:
    wide = x.astype(np.float64)
    shifted = wide - wide.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("et", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(("shape", "axis"), [([4, 50], 1), ([4, 50], -2), ([3, 5, 7], 1), ([6], 0)])
def test_log_softmax_against_float64(et, shape, axis, tmp_path):
    rng = np.random.default_rng(len(shape) * 3 + axis)
    x = (rng.standard_normal(shape) * 5).astype(NP_TYPES[et])
    data = ops.parameter(shape, OV_TYPES[et], name="x")
    path = write_ir(ops.log_softmax(data, axis), [data], tmp_path)
    check_inference(path)
    got = next(iter(ir_runner.load(str(path)).run({"x": x}).values())).astype(np.float64)
    exact = log_softmax_exact(x, axis)
    wide = x.astype(np.float64)
    shifted = np.abs(wide - wide.max(axis=axis, keepdims=True))
    log_sum = np.abs(np.log(np.exp(wide - wide.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True)))
    k = x.shape[axis]
    limit = 2 * F32_EPS * (shifted + log_sum) + k * F32_EPS + out_eps_of(x.dtype) * np.abs(exact)
    assert (np.abs(got - exact) <= limit).all()


# -- differential ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(20))
def test_differential(seed, tmp_path):
    rng = np.random.default_rng(2000 + seed)
    et = str(rng.choice(["f32", "f16", "bf16", "i32", "i64"]))
    dtype = np.dtype(NP_TYPES[et])
    if seed % 2:  # MatMul with random ranks, transposes and broadcast batch dims
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
        got, want = _run(tmp_path, ops.matmul(pa, pb, ta, tb), [pa, pb], dict(zip("ab", arrays)))
        if dtype.kind == "i":
            assert_same_bits(got, want, et)
        else:
            matmul_bound(*arrays, ta, tb, got, want)
    else:  # Softmax with a random axis
        if dtype.kind == "i":
            dtype, et = np.dtype(np.float32), "f32"
        shape = [int(v) for v in rng.integers(1, 9, size=int(rng.integers(1, 5)))]
        axis = int(rng.integers(-len(shape), len(shape)))
        x = (rng.standard_normal(shape) * 3).astype(dtype)
        data = ops.parameter(shape, OV_TYPES[et], name="x")
        got, want = _run(tmp_path, ops.softmax(data, axis), [data], {"x": x})
        softmax_bound(x, axis, got, want)
