"""The accuracy bounds of the bounded (accumulating) operations, shared by their tests and the differential
fuzzer ``scripts/fuzz_ops.py``: each asserts that ``got`` (ir-run) is within the bound of ``want`` (OpenVINO's
reference), stated in its docstring; NaN matches NaN."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tests.helpers.node_eval import BF16

F32_EPS = float(np.finfo(np.float32).eps)


def out_eps_of(dtype) -> float:
    """The machine epsilon of the output type; two of them for bf16 (its conversion rounds twice)."""
    return float(ml_dtypes.finfo(dtype).eps) * (2 if dtype == BF16 else 1)


def reduce_bound(kind: str, x: np.ndarray, axes, got: np.ndarray, want: np.ndarray) -> None:
    """The stated bound: sums ``2 K eps(acc) sum|x| + eps(out) |ref|`` (bf16: two ulps), products and L2
    ``(2 K eps(acc) + eps(out)) |ref|``."""
    axes_t = tuple(sorted({a % x.ndim for a in axes}))
    k = int(np.prod([x.shape[a] for a in axes_t])) if axes_t else 1
    acc = F32_EPS
    out_eps = out_eps_of(x.dtype)
    wide = np.abs(x.astype(np.float64))
    mass = np.add.reduce(wide ** 2 if kind == "l2" else wide, axis=axes_t, keepdims=True) if axes_t else wide
    g, w = got.astype(np.float64).reshape(-1), want.astype(np.float64).reshape(-1)
    mass = mass.reshape(-1)
    if kind in ("prod", "l2"):
        limit = (2 * k * acc + out_eps) * np.abs(w)
    else:
        limit = 2 * k * acc * mass / (k if kind == "mean" else 1) + out_eps * np.abs(w)
    with np.errstate(invalid="ignore"):
        ok = (np.abs(g - w) <= limit) | (g == w) | (np.isnan(g) & np.isnan(w))
    assert ok.all(), (kind, x.dtype, g[~ok][:5], w[~ok][:5], limit[~ok][:5])


def matmul_bound(a, b, ta, tb, got, want) -> None:
    """``|got - ref| <= 2 K eps(acc) sum_k |a_ik b_kj| + eps(out) |ref|``, acc f64 for f64 and f32 otherwise
    (bf16: two ulps)."""
    wa, wb = np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64))
    if ta and a.ndim > 1:
        wa = np.swapaxes(wa, -1, -2)
    if tb and b.ndim > 1:
        wb = np.swapaxes(wb, -1, -2)
    k = wa.shape[-1]
    mass = np.matmul(wa, wb)
    g, w = got.astype(np.float64), want.astype(np.float64)
    acc_eps = float(np.finfo(np.float64).eps) if a.dtype == np.float64 else F32_EPS
    limit = 2 * k * acc_eps * mass + out_eps_of(a.dtype) * np.abs(w)
    with np.errstate(invalid="ignore"):
        ok = (np.abs(g - w) <= limit) | (g == w) | (np.isnan(g) & np.isnan(w))
    assert ok.all(), (g[~ok][:5], w[~ok][:5])


def softmax_bound(x, axis, got, want) -> None:
    """``|got - ref| <= (K + 4) eps(f32) |ref| + eps(out) |ref|`` (bf16: two ulps)."""
    k = x.shape[axis]
    g, w = got.astype(np.float64), want.astype(np.float64)
    limit = ((k + 4) * F32_EPS + out_eps_of(x.dtype)) * np.abs(w)
    if x.dtype != np.float32:  # the reference computes f16/bf16 in their own type: its own error counts too
        limit += (k + 4) * out_eps_of(x.dtype) * np.abs(w)
    info = ml_dtypes.finfo(x.dtype)  # below the smallest normal: 2 units of the smallest subnormal (semantics.md)
    limit += np.where(np.abs(w) < float(info.smallest_normal), 2 * float(info.smallest_subnormal), 0)
    ok = (np.abs(g - w) <= limit) | (np.isnan(g) & np.isnan(w))
    assert ok.all(), (g[~ok][:5], w[~ok][:5])
