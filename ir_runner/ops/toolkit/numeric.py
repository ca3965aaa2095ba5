"""Numeric policy shared by the operations, in one place: the type a kernel computes in (:func:`compute_dtype`:
narrow floats in f32, rounded once to the output type; f32, f64 and integers in their own type), the type a
convolution accumulates in (:func:`accumulation_dtype`), the reference's arithmetic in a narrow float type
step by step where ir-run follows it (:class:`Arith`), and the order-stable float row sums every summing
kernel uses (:func:`row_sums`)."""

from __future__ import annotations

import numpy as np

try:  # numpy's C einsum without its Python wrapper (a microsecond less a call)
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # pragma: no cover (numpy moved it once; np.einsum computes the same)
    _einsum = np.einsum



def is_narrow_float(dtype: np.dtype) -> bool:
    """A float narrower than f32: f16, bf16 and ml_dtypes' 8-bit floats."""
    return dtype.itemsize < 4 and dtype.kind not in "iub"


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The type a kernel computes in: f32 for the floats narrower than f32 (f16, bf16, the 8-bit floats), else
    the type itself (f32, f64, integers and booleans)."""
    return np.dtype(np.float32) if is_narrow_float(dtype) else dtype


def as_compute(x: np.ndarray) -> np.ndarray:
    """``x`` in its :func:`compute_dtype` (itself, not a copy, when that is its type)."""
    return x.astype(compute_dtype(x.dtype), copy=False)


def accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """What a convolution sums in: int64 for integers and booleans (wrapped to the output type at the end, as
    the reference's wrapping sums give), f64 for f64, else f32."""
    if dtype.kind in "iub":
        return np.dtype(np.int64)
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


class Arith:
    """The reference's arithmetic in T: f32/f64 as they are; f16/bf16 computed in f32 and rounded to T."""

    def __init__(self, dtype: np.dtype) -> None:
        self.t = dtype
        self.narrow = dtype.itemsize < 4
        self.w = np.dtype(np.float32) if self.narrow else dtype

    def of(self, value) -> np.ndarray:
        """A number or array converted to T (``static_cast<T>``)."""
        return self._round(np.asarray(value).astype(self.w))

    def add(self, a, b):
        return self._round(np.add(self._wide(a), self._wide(b)))

    def sub(self, a, b):
        return self._round(np.subtract(self._wide(a), self._wide(b)))

    def mul(self, a, b):
        return self._round(np.multiply(self._wide(a), self._wide(b)))

    def div(self, a, b):
        return self._round(np.divide(self._wide(a), self._wide(b)))

    def _wide(self, a):
        return np.asarray(a).astype(self.w, copy=False) if self.narrow else np.asarray(a, dtype=self.t)

    def _round(self, a):
        if self.t.name != "bfloat16":
            return a.astype(self.t)
        # ov::bfloat16's "round_to_nearest_even": adds half an ULP only when the kept last bit is 1 (an odd
        # value rounds to nearest, ties up; an even one is truncated)
        bits = np.require(a, np.float32, "C").view(np.uint32)
        return ((bits + ((bits & 0x10000) >> 1)) >> 16).astype(np.uint16).view(self.t)


def row_sums(rows: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The sum of each row of C-contiguous 2-D f32/f64 ``rows`` (into 1-D ``out`` of the same type when given),
    by numpy's einsum: each row is added in one vector of partial sums (four vectors added first, then into
    it; the lanes summed at the end), in an order set by the row's length alone, not by the row's position,
    alignment or block: threads and Dask blocks agree with a whole run. (Given a single row, einsum adds it in
    pieces of its 8192-element buffer, another order: a single long row is summed as a block of two copies of
    itself, twice the work for that row only.) Strided rows would take another einsum loop, another order:
    callers copy them. Error at most ``(K / lanes + 2 + log2 lanes) u sum|x|``, inside ``K eps sum|x|``.
    About twice as fast as ``np.add.reduce`` (pairwise) on long rows, 2.5x on short ones."""
    if rows.shape[0] == 1 and rows.shape[1] > _ALONE:
        total = _einsum("ij->i", np.broadcast_to(rows, (2, rows.shape[1])))[:1]
        if out is None:
            return total
        out[...] = total
        return out
    return _einsum("ij->i", rows) if out is None else _einsum("ij->i", rows, out=out)


_ALONE = 1024  # a single row longer than this is summed as two rows (einsum's buffering starts above 8192)


def round_from_f64(y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float64 -> ``dtype`` rounded once to nearest even (bf16: through f32 rounded to odd, since ml_dtypes
    converts float64 through f32 and would round twice)."""
    if dtype.name != "bfloat16":
        return y.astype(dtype)
    with np.errstate(over="ignore"):
        wide = y.astype(np.float32)
    inexact = np.isfinite(y) & (wide.astype(np.float64) != y)
    if inexact.any():
        toward_zero = np.where(np.abs(wide.astype(np.float64)) > np.abs(y), np.nextafter(wide, np.float32(0)), wide)
        bits = toward_zero.view(np.uint32)
        wide = np.where(inexact, (bits | np.uint32(1)).view(np.float32), wide)
    return wide.astype(dtype)
