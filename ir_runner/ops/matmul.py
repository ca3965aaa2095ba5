"""MatMul-1, Softmax-1, Softmax-8 and LogSoftmax-5.

MatMul: shapes follow OpenVINO's ``shape_infer``: ``transpose_a``/``transpose_b`` swap the last two dims
(ignored for 1-D operands); a 1-D ``a`` is a row ``[1,K]``, a 1-D ``b`` a column ``[K,1]``, and those
temporary axes are removed from the output; batch dims broadcast numpy-style; scalars are refused.
Values: floats through BLAS (``np.matmul``). f16 and bf16 multiply in f32 and round each output once,
as OpenVINO's reference does today (2026.4: an f16 sum of 4096 ones is 4096, so it does not
accumulate in f16; should it ever, ir-run stays wider and more accurate). Bound:
``|got - ref| <= 2 K eps(f32 or f64) sum_k |a_ik b_kj| + eps(out) |ref|``, K the contracted length
(bf16: one more bf16 ulp, the reference's rounding to bf16 is not round-to-nearest). Integers
(i8..u64) multiply and add in their own type, wrapping: bit-exact (the reference evaluates only
i32, i64, u32, u64). Boolean MatMul is refused.

Softmax-1 (``axis`` in ``[0, rank)``), Softmax-8 (``axis`` in ``[-rank, rank)``), LogSoftmax-5 (same as
Softmax-8): ``exp(x - max) / sum(exp(x - max))`` and ``(x - max) - log(sum(exp(x - max)))`` along
``axis``, for float types, computed in f32 for f16/bf16 (f64 for f64) and rounded once; the sums are
:func:`reduce.row_sums`' (a row's bits do not depend on its block of rows). A NaN, or an
infinity that makes ``x - max`` NaN, turns its whole row into NaN, as in the reference. Bounds (K the
length of ``axis``): Softmax ``|got - ref| <= (K + 4) eps(acc) |ref| + eps(out) |ref|`` (the division is a
product with the rounded reciprocal of the sum: one more rounding, inside the K + 4), plus, for outputs below
the smallest normal, 2 units of the smallest subnormal (neither side flushes subnormals to zero, but numpy's
vectorised exp is not correctly rounded there, where the reference's C library exp is, and both round twice at
the subnormal spacing: measured at most 2 units at f32, 1 at bf16, 0 at f16); LogSoftmax
``|got - exact| <= 2 eps(acc) (|x - max| + |log sum|) + K eps(acc) + eps(out) |exact|``. OpenVINO has no
reference evaluate for LogSoftmax: tests compare it with float64 arithmetic.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..blas import matmul_for, pooled_matmul
from ..errors import UnsupportedError
from ..parallel import run_chunked
from ..types import DYNAMIC, DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec, broadcast_dims, merge_dims
from .api import LATEST_OPSET, Attr, KernelFn, OpContext, OpDef
from .reduce import row_sums

_FLOATS = frozenset({"f16", "bf16", "f32", "f64"})
_INTEGERS = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})


def _wide(dtype: np.dtype) -> np.dtype:
    """The type a float computes in: f32 for f16/bf16, else itself."""
    return np.dtype(np.float32) if dtype.itemsize < 4 and dtype.kind not in "iub" else dtype


# -- MatMul -------------------------------------------------------------------------------------------------

def _infer_matmul(ctx: OpContext):
    a, b = ctx.inputs
    et = a.element_type
    if DYNAMIC not in (a.element_type, b.element_type) and a.element_type != b.element_type:
        ctx.fail(f"a and b must have the same element type, got {a.element_type} and {b.element_type}", position=1)
    if et == DYNAMIC:
        et = b.element_type
    if et.kind != "dynamic" and et.name not in _FLOATS | _INTEGERS:
        raise UnsupportedError(f"MatMul of element type {et} is not supported", layer=ctx.ref)
    ta, tb = ctx.attr_bool("transpose_a", False), ctx.attr_bool("transpose_b", False)
    params = {"transpose_a": ta, "transpose_b": tb}
    if a.shape.rank is None or b.shape.rank is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], params
    if a.shape.rank == 0 or b.shape.rank == 0:
        ctx.fail("scalars are not supported as MatMul inputs")
    da, db = list(a.shape.dims), list(b.shape.dims)
    if ta and len(da) > 1:
        da[-2], da[-1] = da[-1], da[-2]
    if tb and len(db) > 1:
        db[-2], db[-1] = db[-1], db[-2]
    one = Dim(1, 1)
    da = [one] + da if len(da) == 1 else da
    db = db + [one] if len(db) == 1 else db
    k_a, k_b = da[-1], db[-2]
    if merge_dims(k_a, k_b) is None and k_a.is_static and k_b.is_static:
        ctx.fail(f"a's columns ({k_a}) do not match b's rows ({k_b})", position=1,
                 hint="check transpose_a/transpose_b")
    rank = max(len(da), len(db))
    da = [one] * (rank - len(da)) + da
    db = [one] * (rank - len(db)) + db
    dims = []
    for i in range(rank - 2):
        merged = broadcast_dims(da[i], db[i])
        if merged is None:
            if da[i].is_static and db[i].is_static:
                ctx.fail(f"batch dims {da[i]} and {db[i]} at index {i} do not broadcast")
            merged = DYNAMIC_DIM
        dims.append(merged)
    dims += [da[-2], db[-1]]
    if a.shape.rank == 1:
        del dims[-2]
    if b.shape.rank == 1:
        del dims[-1]
    return [TensorSpec(et, PartialShape(tuple(dims)))], params


def matmul(a: np.ndarray, b: np.ndarray, *, transpose_a: bool, transpose_b: bool,
           out: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` after the transposes (see the module docstring for types and the float bound); writes
    into ``out`` when given."""
    if transpose_a and a.ndim > 1:
        a = np.swapaxes(a, -1, -2)
    if transpose_b and b.ndim > 1:
        b = np.swapaxes(b, -1, -2)
    wide = _wide(a.dtype)
    if wide != a.dtype:
        result = np.matmul(a.astype(wide), b.astype(wide))
        if out is None:
            return result.astype(a.dtype)
        np.copyto(out, result, casting="unsafe")
        return out
    if out is not None and out.ndim:
        return pooled_matmul(a, b, out=out)
    result = pooled_matmul(a, b)
    if out is not None:
        np.copyto(out, result)
        return out
    return np.asarray(result)


matmul.accepts_out = True


_PACKED_K = 512  # about the longest row segment OpenBLAS packs at once (its K block)


def _row_blocks(rows: int, row_bytes: int, needed: int, least: int) -> list[tuple[int, int]]:
    """Equal blocks of a's rows for one BLAS call each, ``row_bytes`` of temporary memory per row (what BLAS
    packs, and a widened copy), at most a quarter of the product's ``needed`` bytes (a + b + output) or 4 MiB
    a block, and never fewer than ``least`` rows: fewer cost time, and the rows of a matrix-vector product
    would go another way. Multithreaded OpenBLAS packs about ``min(K, 512)`` elements of every row it is given
    at once (18 MB for [10000,1000] x [1000,100] f32, 40% of a), which the peak-memory target of 1.3x
    (inputs + outputs) cannot afford. The blocks depend only on the shapes (a run is deterministic); a row's
    bits may differ from one call on the whole, within the bound, as OpenBLAS sums a row by the call's size,
    the row's place and the CPU's kernels (docs/scale.md, "BLAS and the bits of a row")."""
    per_block = max(least, max(1 << 22, needed // 4) // row_bytes)
    count = -(-rows // per_block)
    size = -(-rows // count)
    return [(lo, min(lo + size, rows)) for lo in range(0, rows, size)]


def _needed(a_shape: tuple[int, ...], b_size: int, out_shape: tuple[int, ...], itemsize: int) -> int:
    return (math.prod(a_shape) + b_size + math.prod(out_shape)) * itemsize


def _prepare_matmul(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts) -> KernelFn:
    """Static shapes of a type BLAS computes in (f32, f64; integers): the transposes resolved once, and an
    ``a`` of rank > 2 times a 2-D ``b`` is one 2-D product over all of a's rows (one BLAS call instead of one
    per matrix; within the same bound). Floats go to BLAS in blocks of rows (``_row_blocks``); f16/bf16 in
    ``_narrow_kernel``'s blocks. Other cases, and an empty operand (its product is empty, or zeros for an
    empty contracted dim), the general kernel."""
    a_spec, b_spec = inputs
    general = functools.partial(matmul, **params)
    dtype = outputs[0].element_type.dtype
    if a_spec.shape.rank < 2 or b_spec.shape.rank != 2:
        return general
    a_shape, out_shape = a_spec.shape.to_shape(), outputs[0].shape.to_shape()
    if 0 in a_shape or 0 in b_spec.shape.to_shape():  # no rows to block: an empty output, or zeros (K = 0)
        return general
    if dtype != _wide(dtype):
        return _narrow_kernel(a_shape, math.prod(b_spec.shape.to_shape()), out_shape, dtype, params) or general
    rows = math.prod(out_shape[:-1])
    k = a_shape[-2] if params["transpose_a"] else a_shape[-1]
    if params["transpose_a"] and len(a_shape) > 2:
        return general
    flat_a = (rows, k) if not params["transpose_a"] else a_shape
    transpose_a, transpose_b = params["transpose_a"], params["transpose_b"]
    blocks = [(0, rows)]
    if dtype.kind == "f":
        needed = _needed(a_shape, math.prod(b_spec.shape.to_shape()), out_shape, dtype.itemsize)
        blocks = _row_blocks(rows, min(k, _PACKED_K) * dtype.itemsize, needed, 2048)
    whole = len(blocks) == 1
    product = matmul_for(rows * k * out_shape[-1])

    def kernel(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        a = a.T if transpose_a else a.reshape(flat_a)
        b = b.T if transpose_b else b
        if out is None:
            if whole:
                return product(a, b).reshape(out_shape)
            out = np.empty(out_shape, dtype)
        flat = out.reshape(rows, out_shape[-1])
        if whole:
            product(a, b, out=flat)
        else:
            for lo, hi in blocks:
                np.matmul(a[lo:hi], b, out=flat[lo:hi])
        return out

    kernel.accepts_out = True
    return kernel


def _narrow_kernel(a_shape: tuple[int, ...], b_size: int, out_shape: tuple[int, ...], dtype: np.dtype,
                   params) -> KernelFn | None:
    """f16/bf16: one matrix ``a`` (its leading dims all 1) of more rows than one block (``_row_blocks``) times a
    2-D ``b``: ``b`` widened once per call, then a's rows widened, multiplied and rounded into the output a block
    at a time, instead of f32 copies of the whole ``a`` and result (5x the output). Within the bound of one
    widened ``np.matmul`` (as :func:`_row_blocks` says). Blocks go down to 1024 rows (memory first: up to a
    third slower than 2048 for [8192,1024] x [1024,1024]). None for other shapes."""
    transpose_a, transpose_b = params["transpose_a"], params["transpose_b"]
    wide = _wide(dtype)
    rows, cols = out_shape[-2], out_shape[-1]
    k = a_shape[-2] if transpose_a else a_shape[-1]
    needed = _needed(a_shape, b_size, out_shape, dtype.itemsize)
    blocks = _row_blocks(rows, (k + min(k, _PACKED_K)) * wide.itemsize, needed, 1024)
    if math.prod(a_shape[:-2]) != 1 or len(blocks) == 1:
        return None

    def kernel(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        a = a.reshape(a_shape[-2:])
        a = a.T if transpose_a else a
        b = (b.T if transpose_b else b).astype(wide)
        if out is None:
            out = np.empty(out_shape, dtype)
        flat = out.reshape(rows, cols)
        for lo, hi in blocks:
            np.copyto(flat[lo:hi], np.matmul(a[lo:hi].astype(wide), b), casting="unsafe")
        return out

    kernel.accepts_out = True
    return kernel


def _batch_matmul(params, inputs, outputs, axes) -> list | str:
    """A batch axis of a batch dim maps to the output's (the other operand must have 1 or nothing there, or
    its batch axis there too); the rows of ``a`` and the columns of ``b`` map to the output's matrix dims;
    a contracted dim (or a 1-D operand) refuses."""
    ranks = [spec.shape.rank for spec in inputs]
    if None in ranks or outputs[0].shape.rank is None:
        return "the operands' ranks are not known"
    full = [max(r, 2) for r in ranks]
    width = max(full)
    targets = set()
    for pos, axis in enumerate(axes):
        if axis is None:
            continue
        rank = ranks[pos]
        transposed = params["transpose_a" if pos == 0 else "transpose_b"]
        contracted = rank - 1 if (pos == 0) != transposed else rank - 2
        if rank == 1 or axis == contracted:
            return "contracts the batch axis"
        if axis >= rank - 2:
            targets.add(outputs[0].shape.rank - (2 if pos == 0 and ranks[1] > 1 else 1))
            continue
        target = axis + width - full[pos]
        other = 1 - pos
        j = target - (width - full[other])
        other_dims = inputs[other].shape.dims
        if axes[other] is None and j >= 0 and other_dims[j] != Dim(1, 1):
            return "the other operand is not broadcast along the batch axis"
        targets.add(target)
    if len(targets) > 1:
        return "the operands' batch axes meet in different output axes"
    return [targets.pop() if targets else None]


# -- Softmax and LogSoftmax ---------------------------------------------------------------------------------

def _infer_softmax(ctx: OpContext, version: int):
    data = ctx.inputs[0]
    et = data.element_type
    if et.kind not in ("float", "dynamic") or (et.kind == "float" and et.name not in _FLOATS):
        raise UnsupportedError(f"{ctx.op.type if ctx.op else 'Softmax'} of element type {et} is not supported",
                               layer=ctx.ref)
    axis = ctx.attr_int("axis", 1)
    rank = data.shape.rank
    if rank is not None:
        low = 0 if version == 1 else -rank
        if not low <= axis < rank:
            ctx.fail(f"axis={axis} is out of the range [{low}, {rank - 1}] for data of rank {rank}")
        axis = axis + rank if axis < 0 else axis
    return [TensorSpec(et, data.shape)], {"axis": axis}


_BLOCK = 1 << 18  # elements per block of rows (measured: 64K and 128K blocks were 5-15% slower, 1e5 to 1e7)
_PART = 1 << 16  # elements per part copied to the compute type (another axis, or f16/bf16): its temporary
_PARALLEL = 1 << 18  # from here over threads (handing a block to the other thread costs 20-50 us here)
_COLUMNS = 16  # rows this short, and many: their maximum column by column (numpy reduces a row in ~50 ns)


def _row_max(x: np.ndarray) -> np.ndarray:
    """The maximum of each row of 2-D ``x`` as ``[rows, 1]`` (a NaN propagates): short rows column by column,
    contiguous ones by ``reduceat`` over the flat array (up to 2x faster than a reduce along the last axis)."""
    length = x.shape[1]
    if length <= _COLUMNS and x.shape[0] >= 32 * length:  # (a numpy call a column: for many rows only)
        peak = x[:, :1].copy()
        for column in range(1, length):
            np.maximum(peak, x[:, column:column + 1], out=peak)
        return peak
    if x.flags.c_contiguous and x.shape[0] >= 16:  # (a few rows: reduce's fixed cost is lower)
        return np.maximum.reduceat(x.reshape(-1), np.arange(0, x.size, length))[:, None]
    return np.maximum.reduce(x, axis=-1, keepdims=True)


def _softmax_rows(x: np.ndarray, out: np.ndarray, log: bool) -> None:
    """(Log)softmax along the last axis of 2-D ``x`` into ``out`` (the compute type; C-contiguous: a block of
    the output array, or of a part's copy); the sums by :func:`reduce.row_sums`."""
    peak = _row_max(x)
    np.subtract(x, peak, out=out)
    if log:
        total = row_sums(np.exp(out))[:, None]
        np.subtract(out, np.log(total, out=total), out=out)
    else:
        np.exp(out, out=out)
        row_sums(out, peak.reshape(-1))  # (peak is contiguous: a view)
        np.multiply(out, np.divide(1, peak, out=peak), out=out)  # (a product: cheaper than a division per element)


def softmax(data: np.ndarray, *, axis: int, log: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """Softmax (``log``: LogSoftmax) along ``axis``, in blocks of rows over threads; see the module
    docstring for the bounds. Writes into ``out`` when given."""
    wide = _wide(data.dtype)
    if out is None:
        out = np.empty(data.shape, data.dtype)
    if not data.size:
        return out
    length = data.shape[axis]
    if axis == data.ndim - 1 and wide == data.dtype:
        block = max(1, _BLOCK // length)
        rows, result = data.reshape(-1, length), out.reshape(-1, length)

        def work(start: int, stop: int) -> None:
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                for lo in range(start, stop, block):  # (blocks end at ``stop``: the next thread's rows are its own)
                    hi = min(lo + block, stop)
                    _softmax_rows(rows[lo:hi], result[lo:hi], log)

        run_chunked(rows.shape[0], length, work, min_elements=_PARALLEL)
        return out
    moved, target = np.moveaxis(data, axis, -1), np.moveaxis(out, axis, -1)
    if data.ndim == 1:
        moved, target = moved[None], target[None]
    _softmax_parts(moved, target, wide, max(1, _PART // length), log)
    return out


def _softmax_parts(moved: np.ndarray, target: np.ndarray, wide: np.dtype, block: int, log: bool) -> None:
    """Softmax along the last axis of the view ``moved`` (another axis moved last, or a narrow type) into the
    view ``target``: parts of about ``block`` rows (slices along one leading axis, the axes before it
    iterated), each copied into a contiguous array of the compute type, computed, and written back; no
    temporary of the whole size."""
    lead, length = moved.shape[:-1], moved.shape[-1]
    axis, row = 0, math.prod(lead[1:])
    while row > block:  # slices along ``axis`` (``row`` rows each) fit a block; the axes before are iterated
        axis += 1
        row //= lead[axis]
    count, per = lead[axis], max(1, block // max(row, 1))
    parts = [(*where, slice(lo, min(lo + per, count))) for where in np.ndindex(lead[:axis])
             for lo in range(0, count, per)]

    def work(start: int, stop: int) -> None:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            for part in parts[start:stop]:
                src = np.array(moved[part], dtype=wide, order="C")
                rows = src.reshape(-1, length)
                _softmax_rows(rows, rows, log)
                np.copyto(target[part], src, casting="unsafe")

    run_chunked(len(parts), per * row * length, work, min_elements=_PARALLEL)


softmax.accepts_out = True


def _log_softmax(data: np.ndarray, *, axis: int, out: np.ndarray | None = None) -> np.ndarray:
    return softmax(data, axis=axis, log=True, out=out)


_log_softmax.accepts_out = True


def _batch_softmax(params, inputs, outputs, axes) -> list | str:
    if axes[0] is not None and axes[0] == params["axis"]:
        return "normalises along the batch axis"
    return [axes[0]]


def _softmax_op(type_name: str, version: int, last: int, kernel: KernelFn) -> OpDef:
    return OpDef(type_name, version, version, last, ("data",), lambda ctx: _infer_softmax(ctx, version), kernel,
                 attrs=(Attr("axis", "1"),), batch=_batch_softmax, exact=False)


OPS = (
    OpDef("MatMul", 1, 1, LATEST_OPSET, ("a", "b"), _infer_matmul, matmul, roles=("data", "data"),
          attrs=(Attr("transpose_a", "false"), Attr("transpose_b", "false")), batch=_batch_matmul, exact=False,
          prepare=_prepare_matmul),
    _softmax_op("Softmax", 1, 7, softmax),
    _softmax_op("Softmax", 8, LATEST_OPSET, softmax),
    _softmax_op("LogSoftmax", 5, LATEST_OPSET, _log_softmax),
)
