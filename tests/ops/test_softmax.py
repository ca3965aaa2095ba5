"""Softmax-1/8 and LogSoftmax-5: values against ``Node.evaluate`` within the bound stated in
``ir_runner/ops/normalization/softmax.py``, LogSoftmax against float64 (OpenVINO has no reference for it),
and seeded differential graphs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402
from openvino import opset13 as ops  # noqa: E402

import ir_runner  # noqa: E402
from tests.helpers.bits import assert_same_bits  # noqa: E402
from tests.helpers.bounds import F32_EPS, out_eps_of, softmax_bound  # noqa: E402
from tests.helpers.node_eval import BF16, NP_TYPES, OV_TYPES  # noqa: E402
from tests.helpers.optest import check_inference, run_and_evaluate, write_ir  # noqa: E402

# -- Softmax and LogSoftmax ----------------------------------------------------------------------------------

@pytest.mark.parametrize("et", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(("shape", "axis", "version"), [
    ([4, 50], 1, 1), ([4, 50], 0, 1), ([3, 5, 7], -1, 8), ([3, 5, 7], -3, 8), ([2, 3, 4], 1, 8), ([5], 0, 8)])
def test_softmax_values(et, shape, axis, version, tmp_path):
    rng = np.random.default_rng(len(shape) + axis + 7)
    x = (rng.standard_normal(shape) * 5).astype(NP_TYPES[et])
    data = ops.parameter(shape, OV_TYPES[et], name="x")
    node = opset1.softmax(data, axis) if version == 1 else ops.softmax(data, axis)
    got, want = run_and_evaluate(tmp_path, node, [data], {"x": x})
    softmax_bound(x, axis, got, want)


@pytest.mark.parametrize(("et", "low"), [("f32", -104.0), ("bf16", -104.0), ("f16", -17.5)])
def test_softmax_subnormal_outputs_within_two_subnormal_units(et, low, tmp_path):
    """Outputs below the smallest normal are kept (no flush to zero on either side) and differ from the
    reference's by at most 2 units of the smallest subnormal (numpy's exp is not correctly rounded there)."""
    x = np.random.default_rng(5).uniform(low, 0, (3000, 6)).astype(NP_TYPES[et])
    data = ops.parameter(list(x.shape), OV_TYPES[et], name="x")
    got, want = run_and_evaluate(tmp_path, ops.softmax(data, 1), [data], {"x": x})
    softmax_bound(x, 1, got, want)
    g = np.abs(got.astype(np.float64))
    assert ((g > 0) & (g < float(ml_dtypes.finfo(x.dtype).smallest_normal))).sum() > 500


def test_softmax_nan_and_infinite_rows(tmp_path):
    x = np.array([[1, 2, 3], [np.nan, 0, 1], [np.inf, 0, 1], [-np.inf] * 3, [-np.inf, 0, 1]], np.float32)
    data = ops.parameter([5, 3], ov.Type.f32, name="x")
    got, want = run_and_evaluate(tmp_path, ops.softmax(data, 1), [data], {"x": x})
    softmax_bound(x, 1, got, want)
    assert np.isnan(got[1:4]).all() and got[4, 0] == 0


def test_softmax_empty_and_axis_refused(tmp_path):
    data = ops.parameter([2, 0], ov.Type.f32, name="x")
    got, want = run_and_evaluate(tmp_path, ops.softmax(data, 1), [data], {"x": np.zeros((2, 0), np.float32)})
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
    got, want = run_and_evaluate(tmp_path, ops.softmax(data, 1), [data], {"x": x})
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


def traced_peak(call) -> int:
    """The peak bytes numpy allocated during ``call()`` (numpy reports its buffers to tracemalloc)."""
    import tracemalloc

    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize(("shape", "axis", "dtype"), [
    ((40, 300, 50), 1, np.float32), ((9000, 40, 3), 1, np.float32), ((700, 900), 0, np.float16),
    ((600, 1000), 1, np.float16), ((70000,), 0, BF16)])
def test_softmax_of_another_axis_or_a_narrow_type_in_parts(shape, axis, dtype, log):
    """Another axis than the last followed by fewer than 64 elements, or f16/bf16, go in parts of rows copied
    to the compute type (threads, no temporary of the whole size: numpy reports its buffers to tracemalloc):
    the bits of the last-axis f32 path on a contiguous copy with that axis last, rounded once."""
    from ir_runner.ops.normalization.softmax import softmax

    x = (np.random.default_rng(len(shape) + axis).standard_normal(shape) * 4).astype(dtype)
    moved = np.ascontiguousarray(np.moveaxis(x, axis, -1), np.float32)
    want = np.moveaxis(softmax(moved, axis=moved.ndim - 1, log=log), -1, axis).astype(dtype)
    out = np.empty_like(x)
    peak = traced_peak(lambda: softmax(x, axis=axis, log=log, out=out))
    assert_same_bits(out, want, "softmax")
    assert peak < max(out.nbytes // 2, 2 << 20)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize(("shape", "axis", "layout"), [
    ((1, 16, 4, 8400), 1, "inner"), ((1, 16, 8400, 4), 1, "inner"), ((6, 5, 16, 300), 2, "outer"),
    ((700, 900), 0, "C"), ((3, 200000), 0, "C"), ((5, 3000, 64), 1, "C"), ((2, 7, 64), 1, "C")])
def test_softmax_along_a_middle_axis_in_place(shape, axis, layout, log, monkeypatch, tmp_path):
    """f32 along an axis followed by 64 or more elements (YOLO's DFL softmax: [1, 16, 4, 8400] along 16, a
    Transpose's view) is computed in place, in blocks over threads, no temporary of the whole size (but a
    copy of a view whose dims before the axis do not merge): within the bound of the reference (LogSoftmax:
    of float64), NaN and infinite columns as the reference, the bits the same in any block (alone, in a slice
    of the inner dims) and on one thread or two."""
    from ir_runner import parallel
    from ir_runner.ops.normalization.softmax import softmax

    rng = np.random.default_rng(len(shape) + axis)
    swap = {"inner": (0, 2, 1, 3), "outer": (1, 0, 2, 3)}.get(layout)
    if swap:  # a Transpose's view: its dims after the axis (the DFL head's) or before it do not merge
        x = (rng.standard_normal([shape[i] for i in swap]) * 4).astype(np.float32).transpose(swap)
    else:
        x = (rng.standard_normal(shape) * 4).astype(np.float32)
    lead = (0,) * (x.ndim - 2)
    moved = np.moveaxis(x, axis, -1)  # (a view: the writes reach x) a NaN, a +inf and a column of -inf
    moved[lead + (0, 0)], moved[lead + (1, 1)], moved[lead + (2,)] = np.nan, np.inf, -np.inf
    out = np.empty(x.shape, np.float32)
    peak = traced_peak(lambda: softmax(x, axis=axis, log=log, out=out))
    assert peak < max(out.nbytes // 2, 3 << 20)  # (LogSoftmax: an exp temporary of 1 MiB a thread)
    columns = np.moveaxis(out, axis, -1).reshape(-1, x.shape[axis])
    bad = np.moveaxis(np.isnan(x) | np.isinf(x), axis, -1).reshape(-1, x.shape[axis]).any(axis=1)
    assert np.isnan(columns[bad]).all() and not np.isnan(columns[~bad]).any()
    if log:  # (OpenVINO has no LogSoftmax reference)
        exact = log_softmax_exact(x, axis)
        finite = ~np.isnan(exact)
        assert (np.abs(out - exact) <= log_softmax_limit(x, axis, exact))[finite].all()
    else:
        data = ops.parameter(list(x.shape), ov.Type.f32, name="x")
        got, want = run_and_evaluate(tmp_path, ops.softmax(data, axis), [data], {"x": np.ascontiguousarray(x)})
        softmax_bound(x, axis, out, want)
        assert_same_bits(got, out, "softmax")  # (a whole run: the same path on a contiguous input)
    pieces = (np.s_[..., :70], np.s_[..., -66:]) if x.shape[-1] >= 140 else (np.s_[1:], np.s_[:1])
    for piece in pieces:  # (other blocks of columns, or of outer slices)
        assert_same_bits(softmax(x[piece], axis=axis, log=log), out[piece], "softmax")
    monkeypatch.setattr(parallel, "_WORKERS", 2)
    assert_same_bits(softmax(x, axis=axis, log=log), out, "softmax")
    monkeypatch.setattr(parallel, "_WORKERS", 1)
    assert_same_bits(softmax(x, axis=axis, log=log), out, "softmax")


@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (0, 2, 1, 3), (0, 1, 3, 2)])
def test_softmax_along_a_middle_axis_of_a_view_takes_parts_of_a_block(perm, monkeypatch):
    """A Transpose's view whose dims after the axis do not merge (``[1, 16, 8400, 4]`` along 16): its short
    columns are taken several rows at a time, in parts of about a block (_BLOCK elements), never one part a
    row (8400 numpy passes of 64 elements: 80 ms against 1.4 ms); the bits those of the contiguous copy."""
    from ir_runner.ops.normalization import softmax as module

    base = (np.random.default_rng(5).standard_normal((1, 4, 16, 8400)) * 4).astype(np.float32)
    x = base.transpose(perm)
    parts = []

    def spy(total, per_unit, work, **kwargs):
        parts.append(total)
        work(0, total)

    monkeypatch.setattr(module, "run_chunked", spy)
    got = module.softmax(x, axis=1)
    assert parts and parts[0] <= -(-x.size // (module._BLOCK // 2))
    monkeypatch.undo()
    assert_same_bits(got, module.softmax(np.ascontiguousarray(x), axis=1), "softmax")

def log_softmax_exact(x: np.ndarray, axis: int) -> np.ndarray:
    wide = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        shifted = wide - wide.max(axis=axis, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def log_softmax_limit(x: np.ndarray, axis: int, exact: np.ndarray) -> np.ndarray:
    """LogSoftmax's bound (ir_runner/ops/normalization/softmax.py): 2 eps (|x - max| + |log sum|) + K eps
    + eps(out) |exact|."""
    wide = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        shifted = np.abs(wide - wide.max(axis=axis, keepdims=True))
        log_sum = np.abs(np.log(np.exp(wide - wide.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True)))
    return 2 * F32_EPS * (shifted + log_sum) + x.shape[axis] * F32_EPS + out_eps_of(x.dtype) * np.abs(exact)


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
    assert (np.abs(got - exact) <= log_softmax_limit(x, axis, exact)).all()


# -- differential: a random axis -----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(0, 20, 2))
def test_softmax_differential(seed, tmp_path):
    rng = np.random.default_rng(2000 + seed)
    et = str(rng.choice(["f32", "f16", "bf16", "i32", "i64"]))
    dtype = np.dtype(NP_TYPES[et])
    if dtype.kind == "i":
        dtype, et = np.dtype(np.float32), "f32"
    shape = [int(v) for v in rng.integers(1, 9, size=int(rng.integers(1, 5)))]
    axis = int(rng.integers(-len(shape), len(shape)))
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    data = ops.parameter(shape, OV_TYPES[et], name="x")
    got, want = run_and_evaluate(tmp_path, ops.softmax(data, axis), [data], {"x": x})
    softmax_bound(x, axis, got, want)
