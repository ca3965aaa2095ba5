"""MatMul-1.

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
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...blas import matmul_for, pooled_matmul
from ...errors import UnsupportedError
from ...types import DYNAMIC, DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec, broadcast_dims, merge_dims
from ..api import LATEST_OPSET, Attr, KernelFn, OpContext, OpDef
from ..toolkit.numeric import compute_dtype

_FLOATS = frozenset({"f16", "bf16", "f32", "f64"})
_INTEGERS = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})


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
        b = _transposed(b) if b.ndim == 2 else np.swapaxes(b, -1, -2)
    wide = compute_dtype(a.dtype)
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
    ``_narrow_kernel``'s blocks. A small constant ``b`` with ``transpose_b`` (``_TRANSPOSED_MAX``) is
    transposed into a contiguous copy once, used when the kernel is given that constant (another ``b``, as
    ``ir-run precision`` substitutes weights, is copied per call by :func:`_transposed`, as the general kernel
    does). Other cases, and an empty operand (its product is empty, or zeros for an empty contracted dim), the
    general kernel."""
    a_spec, b_spec = inputs
    general = functools.partial(matmul, **params)
    dtype = outputs[0].element_type.dtype
    if a_spec.shape.rank < 2 or b_spec.shape.rank != 2:
        return general
    a_shape, out_shape = a_spec.shape.to_shape(), outputs[0].shape.to_shape()
    if 0 in a_shape or 0 in b_spec.shape.to_shape():  # no rows to block: an empty output, or zeros (K = 0)
        return general
    if dtype != compute_dtype(dtype):
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
    constant = consts[1] if len(consts) > 1 else None
    fixed = _transposed_constant(constant, transpose_b, dtype)

    def kernel(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        a = a.T if transpose_a else a.reshape(flat_a)
        b = fixed if fixed is not None and b is constant else _transposed(b) if transpose_b else b
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


_TRANSPOSED_MAX = 1 << 18  # bytes: a copy this small costs nothing next to the time it saves


def _transposed_constant(b: np.ndarray | None, transpose_b: bool, dtype: np.dtype) -> np.ndarray | None:
    """A constant ``b`` to be transposed, of at most ``_TRANSPOSED_MAX`` bytes, as a C-contiguous ``b.T``; else
    None. OpenBLAS multiplies by a transposed operand more slowly, the more so the fewer rows ``a`` has (one
    thread, idle: [16,64] x [64,256] 14 us against 6 us, [16,32] x [32,32] 1.6 against 1.3 us; a linear layer of
    the small transformers). Larger weights keep the view: their copy would add to the model's memory (7% of
    ConvNeXt-T's MatMul time, docs/performance.md)."""
    if b is None or not transpose_b or b.ndim != 2 or b.dtype != dtype or b.nbytes > _TRANSPOSED_MAX:
        return None
    return np.ascontiguousarray(b.T)


def _transposed(b: np.ndarray) -> np.ndarray:
    """``b.T`` of a 2-D ``b`` as every MatMul kernel multiplies by it: a C-contiguous copy when ``b`` is small
    (``_TRANSPOSED_MAX``; what a prepared kernel keeps for its constant), else the view. The same operand layout
    on every path (prepared or not, the constant or a substituted weight), so that OpenBLAS, which sums a
    transposed operand in another order, gives the same bits whichever kernel a plan uses."""
    if b.nbytes > _TRANSPOSED_MAX or b.dtype != compute_dtype(b.dtype):
        return b.T
    return np.ascontiguousarray(b.T)


def _narrow_kernel(a_shape: tuple[int, ...], b_size: int, out_shape: tuple[int, ...], dtype: np.dtype,
                   params) -> KernelFn | None:
    """f16/bf16: one matrix ``a`` (its leading dims all 1) of more rows than one block (``_row_blocks``) times a
    2-D ``b``: ``b`` widened once per call, then a's rows widened, multiplied and rounded into the output a block
    at a time, instead of f32 copies of the whole ``a`` and result (5x the output). Within the bound of one
    widened ``np.matmul`` (as :func:`_row_blocks` says). Blocks go down to 1024 rows (memory first: up to a
    third slower than 2048 for [8192,1024] x [1024,1024]). None for other shapes."""
    transpose_a, transpose_b = params["transpose_a"], params["transpose_b"]
    wide = compute_dtype(dtype)
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


OPS = (
    OpDef("MatMul", 1, 1, LATEST_OPSET, ("a", "b"), _infer_matmul, matmul, roles=("data", "data"),
          attrs=(Attr("transpose_a", "false"), Attr("transpose_b", "false")), batch=_batch_matmul, exact=False,
          prepare=_prepare_matmul, precision_anchor=True),
)
