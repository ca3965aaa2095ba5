"""ErfInv-17: the inverse error function, element-wise on floating-point tensors (OpenVINO 2026.4's opset17).

The reference (``ov::reference::erfinv``) evaluates Giles' single-precision rational approximation in double:
``w = -log((1 - x)(1 + x))``, a degree-8 polynomial in ``w - 2.5`` (``w < 5``) or in ``sqrt(w) - 3``, times
``x``; ``erfinv(0) = 0``, ``erfinv(±1) = ±inf``, ``|x| > 1`` and NaN give NaN. f16 and bf16 go through f32 (the
node converts them), f32 is the double result rounded once, f64 keeps the double (so f64 results have the
approximation's error, about 1e-7 relative, as OpenVINO's). ir-run computes that formula with numpy in double:
equal to it but for ``log`` (numpy's against the C library's, which may differ by 1 ULP of a double before the
polynomial), so results are within 1 ULP of the reference's formula at f32, f16 and bf16 (in practice equal:
the double's last bit rarely survives the rounding) and within 1e-15 relative at f64.

The wheel has no ``evaluate`` for it: the tests compare with the formula written from the C++ source and with
the CPU plugin, which uses its own approximation (within ``CPU_ULP`` ULP at f32, see docs/semantics.md).
"""

from __future__ import annotations

import numpy as np

from ...types import TensorSpec
from ..api import NEWEST_OPSET, OpContext, OpDef, keep_batch

CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
           -0.00417768164, 0.246640727, 1.50140941)
TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
        -0.00943887047, 1.00167406, 2.83297682)


def infer_erfinv(ctx: OpContext):
    (x,) = ctx.inputs
    if x.element_type.kind not in ("float", "dynamic"):
        ctx.fail(f"data must have a floating-point element type, got {x.element_type}", position=0)
    return [TensorSpec(x.element_type, x.shape)], {}


def _horner(coefficients: tuple[float, ...], s: np.ndarray) -> np.ndarray:
    r = np.full_like(s, coefficients[0])
    for c in coefficients[1:]:
        r = c + r * s
    return r


def erfinv(x: np.ndarray) -> np.ndarray:
    """ErfInv-17 (see the module docstring)."""
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - wide) * (1.0 + wide))
        r = np.where(w < 5.0, _horner(CENTRAL, w - 2.5), _horner(TAIL, np.sqrt(w) - 3.0)) * wide
    r = np.where(wide == 0, 0.0, r)
    r = np.where(np.abs(wide) == 1, np.copysign(np.inf, wide), r)
    r = np.where(np.abs(wide) > 1, np.nan, r)  # (NaN stays NaN)
    if x.dtype == np.float64:
        return r
    return r.astype(np.float32).astype(x.dtype)


OPS = (
    OpDef("ErfInv", 17, 17, NEWEST_OPSET, ("data",), infer_erfinv, erfinv, batch=keep_batch, exact=False),
)
