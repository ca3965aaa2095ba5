"""Dims: the one interval arithmetic of the operations (OpenVINO's ``Dimension``/``Interval``).

A :class:`~ir_runner.types.Dim` is the interval ``[lo, hi]``, ``hi is None`` unbounded (OpenVINO's ``s_max``,
the largest int64). Sums and products follow ``Interval``'s clipped arithmetic: a product with 0 is 0 even
when the other factor is unbounded, an unbounded factor leaves it unbounded, and a product above the largest
int64 is clipped to it. Division comes in the variants OpenVINO's shape inferences use, each named for its rule:

- :func:`dim_div`: ``Dimension::operator/``, the whole quotients in the interval ``[ceil(lo/k), floor(hi/k)]``
  (None when there is none); a fully dynamic dim stays dynamic, an otherwise unbounded top becomes
  ``floor(double(int64 max) / k)`` as OpenVINO computes it in double;
- :func:`dim_div_bounds`: the same quotients where the top stays unbounded (rules written on bounds:
  partial values, the space/batch rearrangements, ReorgYolo);
- :func:`floor_div` and :func:`ceil_div`: both ends rounded alike (``split_shape_infer``, pooling and
  convolution windows, STFT frames).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...types import DYNAMIC_DIM, MAX_DIM, Dim, merge_dims

ONE = Dim(1, 1)


def _times(a: int | None, b: int | None, top: int | None) -> int | None:
    """OpenVINO's ``clip_times`` on interval ends (None: unbounded); above the largest int64: ``top``."""
    if a == 0 or b == 0:
        return 0
    if a is None or b is None:
        return None
    return a * b if a * b <= MAX_DIM else top


def _dim(k: Dim | int) -> Dim:
    return k if isinstance(k, Dim) else Dim(k, k)


def compatible(a: Dim, b: Dim | int) -> bool:
    """Whether ``a`` and ``b`` (a dim or a size) can be equal: their intervals meet."""
    return merge_dims(a, _dim(b)) is not None


def dim_add(a: Dim, b: Dim | int) -> Dim:
    """``a + b``."""
    b = _dim(b)
    return Dim(a.lo + b.lo, None if a.hi is None or b.hi is None else a.hi + b.hi)


def dim_sub(a: Dim, b: Dim) -> Dim | None:
    """``a - b``, clipped at 0 (OpenVINO's ``Interval`` subtraction); None when the interval is empty."""
    lo = 0 if b.hi is None or a.lo <= b.hi else a.lo - b.hi
    hi = None if a.hi is None else 0 if a.hi <= b.lo else a.hi - b.lo
    return None if hi is not None and hi < lo else Dim(lo, hi)


def dim_mul(a: Dim, b: Dim | int) -> Dim:
    """``a * b`` (a dim or an integer factor), clipped as OpenVINO's ``Interval`` multiplies."""
    b = _dim(b)
    return Dim(_times(a.lo, b.lo, MAX_DIM), _times(a.hi, b.hi, None))


def dim_product(dims: Iterable[Dim]) -> Dim:
    """The product of dims (1 for none), by :func:`dim_mul`."""
    total = ONE
    for d in dims:
        total = dim_mul(total, d)
    return total


def dim_div(d: Dim, k: int) -> Dim | None:
    """``Dimension::operator/``: the whole quotients ``[ceil(lo/k), floor(hi/k)]``, None when there is none; a
    fully dynamic dim stays dynamic; an unbounded top becomes ``floor(double(int64 max) / k)``."""
    if k == 1 or d == DYNAMIC_DIM:
        return d
    hi = int(float(MAX_DIM) / k) if d.hi is None else d.hi // k
    lo = -(-d.lo // k)
    return None if lo > hi else Dim(lo, hi)


def dim_div_bounds(d: Dim, k: int) -> Dim | None:
    """The whole quotients ``[ceil(lo/k), floor(hi/k)]`` with an unbounded top kept unbounded; None when there
    is none."""
    lo, hi = -(-d.lo // k), None if d.hi is None else d.hi // k
    return None if hi is not None and lo > hi else Dim(lo, hi)


def floor_div(d: Dim, k: int) -> Dim:
    """Both ends divided rounding down."""
    return Dim(d.lo // k, None if d.hi is None else d.hi // k)


def ceil_div(d: Dim, k: int) -> Dim:
    """Both ends divided rounding up."""
    return Dim(-(-d.lo // k), None if d.hi is None else -(-d.hi // k))
