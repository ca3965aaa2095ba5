"""The elementwise unary operations, from one table: LogicalNot, BitwiseNot-13, Abs, Negative, Sign, Floor,
Ceiling, Sqrt, Exp, Log, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh-3, Acosh-3, Atanh-3, Erf,
Sigmoid, Relu, Clamp, Elu, Selu, PRelu, Round-5, Gelu-2, Gelu-7, Swish-4, HSwish-4, HSigmoid-5, Mish-4,
SoftPlus-4, SoftSign-9, HardSigmoid-1 and Identity-16. The output has the input's element type and shape
(PRelu, Selu and HardSigmoid: the data's).

Values, as OpenVINO's core reference computes them (measured on OpenVINO 2026.4, docs/semantics.md,
"Elementwise operations"):

- Exact: LogicalNot (``x == 0`` in the input's own type), BitwiseNot, Abs, Negative (integers wrap), Sign
  (NaN stays NaN, zeros give +0), Floor, Ceiling, Sqrt (correctly rounded), Relu (``x < 0 ? 0 : x``: NaN
  and -0 kept), Clamp (``x < min ? min : x > max ? max : x``; integers: ``ceil(min)``, ``floor(max)``
  saturated to the type), Round (half to even, or half away from zero), HSwish, HSigmoid, SoftSign, PRelu
  (``x < 0 ? x * slope : x``), every integer input.
- Integers in the transcendental functions: the double result cast as x86 does (out of range and NaN: the
  lowest value), truncated for Exp, Log, Sin and Asin, rounded half away from zero (``std::round``) for the
  others; Atanh
  gives the type's largest value for x >= 1, the lowest for x <= -1; Sigmoid is ``1 / (1 + exp(-x))`` in
  integers.
- Floats, within bounds (``exact=False``; the largest errors against the reference measured by
  tests/ops/test_unary.py over random f32 bit patterns of the whole range, see ``ULP_BOUNDS``): the plain
  functions use numpy's own (f16 through f32, bf16 computed in f32 and rounded); Erf and Gelu compute in
  double (``special``; Gelu's ``1 + erf`` rounded as the reference rounds it), f32 Gelu erf by a polynomial
  in double (``special.gelu_erf_f32``, within 1 ULP over all 2^32 inputs);
  Sigmoid, Swish, Elu, Selu, SoftPlus and Mish call ``expf`` bit for bit (``toolkit.libm.map_expf``, which at
  f32 also runs the formula's own passes in its blocks) and then compute as the reference's C++ does
  (docs/semantics.md, the activation table): Sigmoid, Selu, SoftPlus and Mish in f32 (SoftPlus and Mish round
  ``expf(x) + 1`` to f32, which would turn any 1-ULP difference of ``expf`` into up to 31 ULP of the result;
  ``logf`` and ``tanhf`` in double rounded to f32), Elu's ``alpha * (e - 1.0)`` in double rounded once.
  Deviation: the reference's Swish adds and divides in double (``1.0 + e``); ir-run in f32, within 1 ULP (the
  double finish costs a quarter of Swish: docs/performance.md).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import InputError, UnsupportedError
from ...parallel import PARALLEL_MIN_ELEMENTS, run_chunked
from ...types import DYNAMIC, PartialShape, TensorSpec, element_type_of
from ..api import LATEST_OPSET, Attr, OpContext, OpDef, keep_batch, numpy_merge, quiet_f16_nans
from ..toolkit.broadcasting import BLOCK, UNCOMPUTED_TYPES, aligned_batch, run_elementwise
from ..toolkit.convert_rules import bf16_as_openvino_rounds, float_to_int
from ..toolkit.libm import libm, map_expf
from ..toolkit.rounding import round_half_away
from ..toolkit.special import erf, gelu_erf_double, gelu_erf_f32

F32 = np.float32
F64 = np.float64

ULP_BOUNDS = {
    "Exp": 2, "Log": 3, "Sin": 1, "Cos": 1, "Tan": 3, "Asin": 3, "Acos": 2, "Atan": 2, "Sinh": 2, "Cosh": 2,
    "Tanh": 3, "Asinh": 2, "Acosh": 2, "Atanh": 2, "Erf": 1, "Sigmoid": 0, "Gelu": 1, "Swish": 1,
    "Elu": 0, "Selu": 0, "SoftPlus": 1, "Mish": 4,
}
"""The largest distance from the reference at f32, in ULPs, measured over 3e5..3e6 random f32 bit patterns
and normal values (tests/ops/test_unary.py checks them on a smaller sample). Gelu erf at f32 (a polynomial in
double, ``special.gelu_erf_f32``) within 1 ULP (all 2^32 inputs), Gelu tanh within 1 ULP (numpy's ``tanh``);
Swish 1: its sum and division in f32, the reference's in double; Elu and Selu have no reference evaluate:
bit-exact against its C++ transcribed with the C library's ``expf`` (tests/ops/test_activation_formulas.py)."""


# -- float computations: fn(x, out=...) with x f32 or f64 (narrow floats are computed in f32) ---------------------


def _ufunc(ufunc: np.ufunc) -> Callable[..., None]:
    def compute(x: np.ndarray, out: np.ndarray) -> None:
        ufunc(x, out=out)

    return compute


_QUIET_BIT = {2: 0x0200, 4: 0x00400000, 8: 1 << 51}
_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _nan_kept(ufunc: np.ufunc) -> Callable[..., None]:
    """``ufunc`` leaving NaN inputs bit for bit (the reference's Floor and Ceiling never touch them)."""
    def compute(x: np.ndarray, out: np.ndarray) -> None:
        ufunc(x, out=out)
        if np.isnan(x.max()):  # (a reduction without a temporary: cheaper than isnan().any())
            np.copyto(out, x, where=np.isnan(x))

    return compute


def _nan_quieted(ufunc: Callable[..., None]) -> Callable[..., None]:
    """``ufunc`` whose NaN results are the input NaNs quietened, sign and payload kept, as the C library's
    functions return them (numpy's f32 SIMD functions return the default NaN instead)."""
    def compute(x: np.ndarray, out: np.ndarray) -> None:
        ufunc(x, out=out)
        if np.isnan(x.max()):  # (a reduction without a temporary: cheaper than isnan().any())
            nan = np.isnan(x)
            bits = _BITS[x.dtype.itemsize]
            out[nan] = (x[nan].view(bits) | bits(_QUIET_BIT[x.dtype.itemsize])).view(x.dtype)

    return compute


def _sign(x: np.ndarray, out: np.ndarray) -> None:
    _int_sign(x, out)
    np.copyto(out, x, where=np.isnan(x))


def _relu(x: np.ndarray, out: np.ndarray) -> None:
    """``0 if x < 0 else x``: NaNs and -0.0 pass unchanged, as in the reference. One ``np.maximum`` with the
    operand order that keeps -0.0 for this type on this numpy (its SIMD loops pick a side on ties; probed
    once per type), else a masked store, ten times slower."""
    order = _relu_maximum_order(x.dtype)
    if order is None:
        np.copyto(out, x)
        out[x < 0] = 0
    elif order:
        np.maximum(np.zeros((), x.dtype), x, out=out)
    else:
        np.maximum(x, np.zeros((), x.dtype), out=out)


@functools.cache
def _relu_maximum_order(dtype: np.dtype) -> bool | None:
    """True: ``np.maximum(0, x)`` is Relu bit for bit for ``dtype``; False: ``np.maximum(x, 0)`` is; None:
    neither. Probed on signed zeros, NaNs with sign and payload, infinities, subnormals, at every length up
    to a few SIMD widths, unaligned and strided."""
    if dtype.itemsize not in _BITS:
        return None
    bits = _BITS[dtype.itemsize]
    sign = bits(1) << bits(8 * dtype.itemsize - 1)
    with np.errstate(all="ignore"):
        specials = np.array([-0.0, 0.0, -1.0, 1.0, np.inf, -np.inf, np.nan, -np.nan], dtype)
    nan_bits = specials[6:7].view(bits)
    odd = np.array([1, sign | 1, nan_bits[0] | 1, sign | nan_bits[0] | 1], bits).view(dtype)  # subnormals, payloads
    values = np.concatenate([specials, odd])
    probes = [np.resize(np.roll(values, n), n + offset)[offset:] for n in range(1, 80) for offset in (0, 1)]
    probes += [np.resize(values, 200)[::3], np.full(67, -0.0, dtype)]
    zero = np.zeros((), dtype)
    for order in (True, False):
        with np.errstate(all="ignore"):
            if all(_bits_equal(np.maximum(zero, p) if order else np.maximum(p, zero), np.where(p < 0, zero, p))
                   for p in probes):
                return order
    return None


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    bits = _BITS[a.dtype.itemsize]
    return np.array_equal(np.ascontiguousarray(a).view(bits), np.ascontiguousarray(b).view(bits))


def _round_even(x: np.ndarray, out: np.ndarray) -> None:
    np.rint(x, out=out)


def _erf(x: np.ndarray, out: np.ndarray) -> None:
    out[...] = erf(x)


# The activations on ``expf``: at f32, ``map_expf`` runs the whole tensor (its own blocks and threads, the
# near-tie fix-ups at the end, then ``finish`` again on those elements alone); ``_dispatch`` hands it over whole.


def _blocks_itself(fn: Callable[..., None]) -> Callable[..., None]:
    fn.blocks_itself = True
    return fn


def _sigmoid_finish(x: np.ndarray, e: np.ndarray, out: np.ndarray) -> None:
    np.add(e, F32(1), out=e)
    np.divide(F32(1), e, out=out)


@_blocks_itself
def _sigmoid(x: np.ndarray, out: np.ndarray) -> None:
    if x.dtype == F64:
        np.divide(1.0, 1.0 + np.exp(-x), out=out)
        return
    map_expf(x, out, _sigmoid_finish, negate=True)


def _swish_finish(x: np.ndarray, e: np.ndarray, out: np.ndarray) -> None:
    np.add(e, F32(1), out=e)  # in place: the same f32 sum, no second temporary
    np.divide(x, e, out=out)


def _swish_beta(x: np.ndarray, beta: np.ndarray | None, out: np.ndarray) -> None:
    """``x / (1 + exp(-(x * beta)))``; beta None: 1, no multiplication (the same values)."""
    if x.dtype == F64:
        scaled = x if beta is None else x * beta
        np.divide(x, 1.0 + np.exp(-scaled), out=out)
        return
    map_expf(x, out, _swish_finish, negate=True, scale=beta)


def _relu6_shifted(x: np.ndarray) -> np.ndarray:
    """``min(max(x + 3, 0), 6)`` in one new array (the clamps in place: one temporary, not three)."""
    t = np.add(x, 3)
    np.maximum(t, 0, out=t)
    return np.minimum(t, 6, out=t)


def _hswish(x: np.ndarray, out: np.ndarray) -> None:
    np.multiply(x, _relu6_shifted(x), out=out)
    np.divide(out, 6, out=out)


def _hsigmoid(x: np.ndarray, out: np.ndarray) -> None:
    np.divide(_relu6_shifted(x), 6, out=out)


def _softsign(x: np.ndarray, out: np.ndarray) -> None:
    np.divide(x, 1 + np.abs(x), out=out)


_SOFTPLUS_F32_LIMIT = F32(math.log(np.finfo(F32).max))  # from it on SoftPlus is x itself


def _softplus_finish(x: np.ndarray, e: np.ndarray, out: np.ndarray) -> None:
    np.add(e, F32(1), out=e)
    value = libm(np.log, e)
    np.copyto(value, x, where=~(x < _SOFTPLUS_F32_LIMIT))  # (before ``out``, which may be ``x``, is written)
    np.copyto(out, value)


@_blocks_itself
def _softplus(x: np.ndarray, out: np.ndarray) -> None:
    if x.dtype == F64:
        np.copyto(out, np.log(np.exp(x) + 1))
        np.copyto(out, x, where=~(x < math.log(np.finfo(F64).max)))
        return
    map_expf(x, out, _softplus_finish)


def _mish_finish(x: np.ndarray, e: np.ndarray, out: np.ndarray) -> None:
    np.add(e, F32(1), out=e)
    np.multiply(x, libm(np.tanh, libm(np.log, e)), out=out)


@_blocks_itself
def _mish(x: np.ndarray, out: np.ndarray) -> None:
    if x.dtype == F64:
        np.multiply(x, np.tanh(np.log(np.exp(x) + 1.0)), out=out)
        return
    map_expf(x, out, _mish_finish)


def _blend(v: np.ndarray, a: np.ndarray, mask: np.ndarray) -> None:
    """``v = mask ? a : v`` over f32 arrays, with ``mask`` int32 0 or -1 (all bits), by bits:
    ``v ^= (v ^ a) & mask`` (a masked copy, or ``np.where``, costs ten times more on a mask of random values)."""
    bits = v.view(np.int32)
    flips = np.bitwise_xor(bits, a.view(np.int32))
    np.bitwise_and(flips, mask, out=flips)
    np.bitwise_xor(bits, flips, out=bits)


def _elu_finish(alpha: float) -> Callable[..., None]:
    """``finish`` of f32 Elu, the reference's ``x < 0 ? T(alpha * (expf(x) - 1.0)) : x``: the subtraction and
    the product with the double ``alpha`` in double, rounded once to f32; -0 and NaN are ``x``."""
    def finish(x: np.ndarray, e: np.ndarray, out: np.ndarray) -> None:
        wide = e.astype(F64)
        np.subtract(wide, 1.0, out=wide)
        np.multiply(wide, alpha, out=wide)
        np.copyto(e, wide, casting="same_kind")
        kept = np.subtract(np.less(x, 0), np.int32(1))  # 0 where x < 0, -1 elsewhere (NaN, zeros: kept)
        _blend(e, x, kept)
        np.copyto(out, e)

    return finish


def _selu_finish(alpha_lambda: np.float32, lam: np.float32) -> Callable[..., None]:
    """``finish`` of f32 Selu, the reference's ``x > 0 ? lambda * x : alpha * lambda * (expf(x) - 1)`` in f32
    (``alpha * lambda`` rounded first, as C++ associates it)."""
    def finish(x: np.ndarray, e: np.ndarray, out: np.ndarray) -> None:
        np.subtract(e, F32(1), out=e)
        np.multiply(e, alpha_lambda, out=e)
        _blend(e, np.multiply(x, lam), np.subtract(np.int32(0), np.greater(x, 0)))
        np.copyto(out, e)

    return finish


_TANH_TAIL = -9.0  # below it, 1 + tanh(z) in double loses the f32 result: the C library's tanh decides
_SQRT_2_PI = math.sqrt(2 / math.pi)


def _gelu_tanh(x: np.ndarray, out: np.ndarray) -> None:
    wide = x.astype(F64)
    z = _SQRT_2_PI * (wide + 0.044715 * wide * wide * wide)
    t = np.tanh(z)
    tail = z < _TANH_TAIL
    if tail.any():
        t[tail] = [math.tanh(v) for v in z[tail].tolist()]
    out[...] = 0.5 * wide * (1.0 + t)


# -- integer computations ----------------------------------------------------------------------------------------


def _int_via_double(fn: np.ufunc, rounding: str) -> Callable[..., None]:
    def compute(x: np.ndarray, out: np.ndarray) -> None:
        wide = fn(x.astype(F64))
        if rounding == "round":
            round_half_away(wide, out=wide)
        out[...] = float_to_int(wide, element_type_of(x.dtype).name)

    return compute


def _int_atanh(x: np.ndarray, out: np.ndarray) -> None:
    info = np.iinfo(x.dtype)
    out[...] = 0
    out[x > 0] = info.max
    out[x < 0] = info.min


def _int_sigmoid(x: np.ndarray, out: np.ndarray) -> None:
    e = float_to_int(np.exp(np.negative(x).astype(F64)), element_type_of(x.dtype).name).astype(x.dtype)
    d = (e + x.dtype.type(1)).astype(np.int64) if x.dtype.kind == "i" else (e + x.dtype.type(1))
    out[...] = np.where(d == 1, 1, np.where(d == -1, -1, 0)).astype(x.dtype)


def _int_identity(x: np.ndarray, out: np.ndarray) -> None:
    np.copyto(out, x)


def _int_relu(x: np.ndarray, out: np.ndarray) -> None:
    np.maximum(x, 0, out=out) if x.dtype.kind == "i" else np.copyto(out, x)


def _int_sign(x: np.ndarray, out: np.ndarray) -> None:
    np.subtract((x > 0).view(np.int8), (x < 0).view(np.int8), out=out, casting="unsafe")


# -- the table ----------------------------------------------------------------------------------------------------


class Unary:
    """One unary operation: type, version, which element types it takes (``numeric``: not boolean;
    ``real``: floats; ``any``; ``integral``: integers and boolean; ``numeric_float``: floats, integers being
    valid but not computed), its float and integer computations
    (None: not defined there), whether the float one is exact, whether it makes several passes, and whether
    its f16 NaNs come out quiet (the reference's f16 values pass through f32 for most operations; not for
    Ceiling and Round). ``first`` is the version and, unless ``first_opset`` says otherwise, the first opset
    that holds it (Asinh-3's class is in OpenVINO's tables from opset4). ``in_place``: its computations read
    ``x`` no more once they write ``out`` (OpDef's ``in_place``)."""

    __slots__ = ("type", "first", "types", "on_float", "on_int", "exact", "passes", "quiet_f16", "first_opset",
                 "in_place")

    def __init__(self, type: str, first: int, types: str, on_float: Callable[..., None] | None,
                 on_int: Callable[..., None] | None, *, exact: bool = True, passes: bool = True,
                 quiet_f16: bool = False, first_opset: int | None = None, in_place: bool = False) -> None:
        self.type, self.first, self.types, self.on_float, self.on_int = type, first, types, on_float, on_int
        self.exact, self.passes, self.quiet_f16, self.in_place = exact, passes, quiet_f16, in_place
        self.first_opset = first if first_opset is None else first_opset


def _transcendental(name: str, first: int, ufunc: np.ufunc, rounding: str, first_opset: int | None = None) -> Unary:
    return Unary(name, first, "numeric", _nan_quieted(ufunc), _int_via_double(ufunc, rounding), exact=False,
                 passes=False, first_opset=first_opset)


TABLE = (
    Unary("Abs", 1, "numeric", _ufunc(np.abs), _ufunc(np.abs), passes=False, quiet_f16=True, in_place=True),
    Unary("Negative", 1, "numeric", _ufunc(np.negative), _ufunc(np.negative), passes=False,
          quiet_f16=True, in_place=True),
    Unary("Sign", 1, "numeric", _sign, _int_sign, passes=False, quiet_f16=True),
    Unary("Floor", 1, "numeric", _nan_kept(np.floor), _int_identity, passes=False, quiet_f16=True),
    Unary("Ceiling", 1, "numeric", _nan_kept(np.ceil), _int_identity, passes=False),
    Unary("Sqrt", 1, "numeric", _ufunc(np.sqrt), _int_via_double(np.sqrt, "round"), passes=False, in_place=True),
    _transcendental("Exp", 1, np.exp, "trunc"),
    _transcendental("Log", 1, np.log, "trunc"),
    _transcendental("Sin", 1, np.sin, "trunc"),
    _transcendental("Cos", 1, np.cos, "round"),
    _transcendental("Tan", 1, np.tan, "round"),
    _transcendental("Asin", 1, np.arcsin, "trunc"),
    _transcendental("Acos", 1, np.arccos, "round"),
    _transcendental("Atan", 1, np.arctan, "round"),
    _transcendental("Sinh", 1, np.sinh, "round"),
    _transcendental("Cosh", 1, np.cosh, "round"),
    _transcendental("Tanh", 1, np.tanh, "round"),
    _transcendental("Asinh", 3, np.arcsinh, "round", first_opset=4),
    _transcendental("Acosh", 3, np.arccosh, "round", first_opset=4),
    Unary("Atanh", 3, "numeric", _ufunc(np.arctanh), _int_atanh, exact=False, passes=False, first_opset=4),
    Unary("Erf", 1, "numeric", _nan_quieted(_erf), _int_via_double(erf, "round"), exact=False),
    Unary("Sigmoid", 1, "numeric", _sigmoid, _int_sigmoid, exact=False, in_place=True),
    Unary("Relu", 1, "numeric", _relu, _int_relu, passes=False, quiet_f16=True, in_place=True),
    Unary("HSwish", 4, "numeric_float", _hswish, None, in_place=True),
    Unary("HSigmoid", 5, "numeric_float", _hsigmoid, None, in_place=True),
    Unary("Mish", 4, "real", _mish, None, exact=False, in_place=True),
    Unary("SoftPlus", 4, "real", _softplus, None, exact=False, quiet_f16=True),
    Unary("SoftSign", 9, "real", _softsign, None, in_place=True),
)


# -- inference and kernels -----------------------------------------------------------------------------------------


def _check_type(ctx: OpContext, name: str, types: str, spec: TensorSpec) -> None:
    """Refuse what OpenVINO's type check refuses (``types``: see :class:`Unary`); ``numeric_float``: OpenVINO takes
    integers too, which its reference does not compute (unsupported here)."""
    kind = spec.element_type.kind
    allowed = {"numeric": ("float", "int", "uint"), "real": ("float",), "integral": ("int", "uint", "bool"),
               "any": ("float", "int", "uint", "bool"), "numeric_float": ("float", "int", "uint")}[types]
    if kind != "dynamic" and (kind not in allowed or spec.element_type.dtype is None):
        ctx.fail(f"{name} does not take element type {spec.element_type}", position=0)
    if types == "numeric_float" and kind in ("int", "uint"):
        raise UnsupportedError(f"{name} of element type {spec.element_type} is not implemented (OpenVINO takes it,"
                               " its reference does not compute it)", layer=ctx.ref,
                               hint="insert a Convert to a floating-point type")
    if spec.element_type.name in UNCOMPUTED_TYPES:
        raise UnsupportedError(f"{name} on {spec.element_type} is not implemented (OpenVINO's reference has none"
                               " either)", layer=ctx.ref, hint="insert a Convert to a wider type")


def _same_infer(types: str, name: str):
    def infer(ctx: OpContext):
        _check_type(ctx, name, types, ctx.inputs[0])
        return [ctx.inputs[0]], {}

    return infer


def _dispatch(x: np.ndarray, on_float, on_int, passes: bool, out: np.ndarray | None, *extra: np.ndarray,
              params: dict[str, Any] | None = None) -> np.ndarray:
    """Run a computation on ``x`` (and broadcast ``extra`` operands) into ``out``: integers with ``on_int``,
    f16/f32/f64 with ``on_float`` in their own type (or through f32 for several passes), bf16 in f32."""
    if out is None:
        shape = np.broadcast_shapes(x.shape, *(e.shape for e in extra)) if extra else x.shape
        out = np.empty(shape, dtype=x.dtype)
    params = params or {}
    with np.errstate(all="ignore"):
        if x.dtype.kind in "iub":
            return run_elementwise(lambda *a, out: on_int(*a, out=out, **params), (x, *extra), out, blocked=passes)
        if x.dtype == F32 and not extra and getattr(on_float, "blocks_itself", False):
            on_float(x, out=out, **params)  # (its own blocks and threads: see map_expf)
            return out
        if x.dtype in (F32, F64) or x.dtype == np.float16 and not passes:
            return run_elementwise(lambda *a, out: on_float(*a, out=out, **params), (x, *extra), out, blocked=passes)

        def narrow(*arrays: np.ndarray, out: np.ndarray) -> None:
            wide = np.empty(out.shape, dtype=F32)
            on_float(*(a.astype(F32) for a in arrays), out=wide, **params)
            _store_narrow(out, wide)

        return run_elementwise(narrow, (x, *extra), out, blocked=True)


def _store_narrow(out: np.ndarray, wide: np.ndarray) -> None:
    """An f32 result into f16 (rounded to nearest even) or bf16 (converted as the reference's ``bfloat16``
    class converts: :func:`bf16_as_openvino_rounds`)."""
    out[...] = bf16_as_openvino_rounds(wide, out.dtype) if out.dtype.kind == "V" else wide


def _unary_kernel(entry: Unary):
    def kernel(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        result = _dispatch(x, entry.on_float, entry.on_int, entry.passes, out)
        return quiet_f16_nans(result) if entry.quiet_f16 else result

    kernel.accepts_out = True
    kernel.__doc__ = f"{entry.type}, elementwise (see the unary module docstring for its values and bound)."
    return kernel


def _direct_kernel(inputs, limit: int, general, compute):
    """For f32/f64 data: a kernel calling ``compute(x, *rest, out=)`` directly, without :func:`_dispatch`'s
    per-call work (an errstate, a closure, the blocking decision; 5-12 us a call, most of a small tensor's time),
    for inputs of at most ``limit`` elements, which ``run_elementwise`` would compute in one call anyway: the
    same computation, so the same bits. Larger inputs take ``general``. None for other types, 0-D (numpy would
    give scalars) and empty data. The run loop ignores floating-point errors for the whole run
    (runtime.execute)."""
    dtype, shape = inputs[0].element_type.dtype, inputs[0].shape.to_shape()
    if dtype not in (F32, F64) or not shape or 0 in shape:
        return None

    def kernel(x: np.ndarray, *rest: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if x.size > limit:
            return general(x, *rest, out=out)
        if out is None:
            out = np.empty(x.shape, dtype)
        compute(x, *rest, out=out)
        return out

    kernel.accepts_out = True
    kernel.__doc__ = general.__doc__
    return kernel


def _prepare_unary(entry: Unary):
    """The kernel of :func:`_direct_kernel` for an elementwise unary operation."""
    general = _unary_kernel(entry)

    def prepare(params, inputs, outputs, consts):
        limit = BLOCK if entry.passes else PARALLEL_MIN_ELEMENTS - 1
        return _direct_kernel(inputs, limit, general, entry.on_float) or general

    return prepare


# -- operations with attributes or more inputs ---------------------------------------------------------------------


def logical_not(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """LogicalNot-1: ``x == 0`` as the input's own type (1 or 0; NaN gives 0)."""
    if out is None:
        out = np.empty(x.shape, dtype=x.dtype)
    if x.dtype.kind == "V":  # bf16
        out[...] = (x.astype(F32) == 0).astype(F32)
        return out
    return run_elementwise(lambda a, out: np.equal(a, 0, out=out, casting="unsafe"), (x,), out)


logical_not.accepts_out = True


def bitwise_not(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """BitwiseNot-13: every bit flipped (boolean: logical not)."""
    if out is None:
        out = np.empty(x.shape, dtype=x.dtype)
    return run_elementwise(lambda a, out: np.invert(a, out=out), (x,), out)


bitwise_not.accepts_out = True


def _infer_clamp(ctx: OpContext):
    _check_type(ctx, "Clamp", "numeric", ctx.inputs[0])
    low, high = ctx.attr_float("min"), ctx.attr_float("max")
    if not low <= high:
        ctx.fail(f"min={low} must not be greater than max={high}")
    return [ctx.inputs[0]], {"low": low, "high": high}


def clamp(x: np.ndarray, *, low: float, high: float, out: np.ndarray | None = None) -> np.ndarray:
    """Clamp-1: ``x < min ? min : (x > max ? max : x)`` (NaN kept); the bounds are the attributes in the
    type: integers take ``ceil(min)`` and ``floor(max)`` saturated to the type's range, floats round them
    (bf16 as OpenVINO's ``bfloat16`` class: ``-3.7`` is ``-3.6875``, not the nearest ``-3.703125``)."""
    if out is None:
        out = np.empty(x.shape, dtype=x.dtype)
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        lo_t = x.dtype.type(min(max(math.ceil(low), info.min), info.max)) if math.isfinite(low) else \
            x.dtype.type(info.min if low < 0 else info.max)
        hi_t = x.dtype.type(min(max(math.floor(high), info.min), info.max)) if math.isfinite(high) else \
            x.dtype.type(info.max if high > 0 else info.min)
    elif x.dtype.kind == "V":  # bf16: the bounds converted as OpenVINO's bfloat16 class does (not to nearest)
        lo_t, hi_t = (bf16_as_openvino_rounds(np.array(v, np.float32), x.dtype)[()] for v in (low, high))
    else:
        lo_t, hi_t = np.array(low).astype(x.dtype), np.array(high).astype(x.dtype)

    def compute(a: np.ndarray, out: np.ndarray) -> None:  # (min first: ceil(min) may pass floor(max))
        above, below = a > hi_t, a < lo_t  # (before ``out`` is written: it may be ``a``)
        np.copyto(out, a)
        np.copyto(out, hi_t, where=above)
        np.copyto(out, lo_t, where=below)
        if out.dtype == np.float16:  # (its f16 values pass through f32: NaNs come out quiet)
            quiet_f16_nans(out)

    return run_elementwise(compute, (x,), out, blocked=True)


clamp.accepts_out = True


def _infer_elu(ctx: OpContext):
    _check_type(ctx, "Elu", "numeric", ctx.inputs[0])
    return [ctx.inputs[0]], {"alpha": ctx.attr_float("alpha")}


def elu(x: np.ndarray, *, alpha: float, out: np.ndarray | None = None) -> np.ndarray:
    """Elu-1: ``x < 0 ? alpha * (exp(x) - 1) : x`` as the reference computes it, ``alpha`` a double: f32 (and
    f16, bf16 through f32) ``expf``, then the subtraction of 1.0 and the product in double rounded once (-0 and
    NaN kept); f64 in double; integers: ``exp`` of the value in double, the rest in double, truncated to the
    type (unsigned types: a copy)."""
    @_blocks_itself
    def on_float(a: np.ndarray, out: np.ndarray) -> None:
        if a.dtype == F64:
            np.copyto(out, np.where(a < 0, alpha * (np.exp(a) - 1.0), a))
        else:
            map_expf(a, out, _elu_finish(alpha))

    def on_int(a: np.ndarray, out: np.ndarray) -> None:
        negative = float_to_int(alpha * (np.exp(a.astype(F64)) - 1.0), element_type_of(a.dtype).name)
        np.copyto(out, np.where(a < 0, negative.astype(a.dtype), a))

    return _dispatch(x, on_float, on_int, True, out)


elu.accepts_out = True


def _infer_selu(ctx: OpContext):
    data, alpha, lam = ctx.inputs
    _check_type(ctx, "Selu", "real", data)  # (OpenVINO: "Input element types must be floating-point")
    for position, spec in ((1, alpha), (2, lam)):
        if DYNAMIC not in (spec.element_type, data.element_type) and spec.element_type != data.element_type:
            ctx.fail(f"input {position} must have the data's element type {data.element_type},"
                     f" got {spec.element_type}", position=position)
        if spec.shape.rank is not None and spec.shape.is_static and math.prod(spec.shape.to_shape()) != 1:
            ctx.fail(f"input {position} must have one element, got shape {spec.shape.brief()}", position=position)
    return [data], {}


def selu(x: np.ndarray, alpha: np.ndarray, lam: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Selu-1: ``x > 0 ? lambda * x : alpha * lambda * (exp(x) - 1)`` as the reference computes it: floats in
    the type (f16 and bf16 in f32), ``alpha * lambda`` first, f32 ``exp`` the C library's ``expf``. Integers
    are refused by inference, as OpenVINO refuses them."""
    a_value, l_value = alpha.reshape(-1)[0], lam.reshape(-1)[0]

    @_blocks_itself
    def on_float(a: np.ndarray, out: np.ndarray) -> None:
        ty = a.dtype.type
        if a.dtype == F64:
            np.copyto(out, np.where(a > 0, ty(l_value) * a, ty(a_value) * ty(l_value) * (np.exp(a) - 1)))
        else:
            map_expf(a, out, _selu_finish(ty(a_value) * ty(l_value), ty(l_value)))

    return _dispatch(x, on_float, None, True, out)


selu.accepts_out = True


def _infer_hard_sigmoid(ctx: OpContext):
    data = ctx.inputs[0]
    _check_type(ctx, "HardSigmoid", "numeric", data)
    for position in (1, 2):
        spec = ctx.inputs[position]
        if DYNAMIC not in (spec.element_type, data.element_type) and spec.element_type != data.element_type:
            ctx.fail(f"input {position} must have the data's element type {data.element_type},"
                     f" got {spec.element_type}", position=position)
        if spec.shape.rank not in (None, 0):
            ctx.fail(f"input {position} must be a scalar, got shape {spec.shape.brief()}", position=position)
    return [data], {}


def hard_sigmoid(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """HardSigmoid-1: ``max(0, min(1, alpha * x + beta))`` as the CPU plugin computes it (the reference has no
    evaluate): the product and the sum each rounded to f32 (no fused multiply-add), f16 and bf16 computed in
    f32 and rounded once at the end (the reference's loop in ``float16`` would round after each operation);
    ``std::min(1, v)`` then ``std::max(0, m)``: NaN gives 1, -0 gives +0. Integers wrap (the CPU plugin
    computes them in f32 instead: docs/semantics.md). Bit-exact against the CPU plugin at f16/f32."""
    a_value, b_value = alpha.reshape(-1)[0], beta.reshape(-1)[0]
    wide_type = np.dtype(F32) if x.dtype.kind == "V" or x.dtype == np.float16 else x.dtype

    def compute(v: np.ndarray, out: np.ndarray) -> None:
        wide = out if wide_type == out.dtype else np.empty(out.shape, wide_type)
        np.multiply(v.astype(wide_type, copy=False), a_value.astype(wide_type), out=wide)
        np.add(wide, b_value.astype(wide_type), out=wide)
        one, zero = wide_type.type(1), wide_type.type(0)
        np.copyto(wide, one, where=~(wide < one))
        np.copyto(wide, zero, where=~(wide > zero))
        if wide is not out:
            _store_narrow(out, wide)

    if out is None:
        out = np.empty(x.shape, dtype=x.dtype)
    with np.errstate(all="ignore"):
        return run_elementwise(compute, (x,), out, blocked=True)


hard_sigmoid.accepts_out = True


def identity(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Identity-16: a copy of the input, bit for bit (f16 signalling NaNs kept)."""
    if out is None:
        return x.copy()
    np.copyto(out, x)
    return out


identity.accepts_out = True


def _infer_prelu(ctx: OpContext):
    data, slope = ctx.inputs
    _check_type(ctx, "PRelu", "numeric", data)
    channel = _channel_wise(data.shape.to_tuple(), slope.shape.to_tuple())
    if channel is False:
        slope_shape = _without_leading_ones(slope.shape, data.shape.rank)
        merged = numpy_merge(data.shape, slope_shape)
        too_long = data.shape.rank is not None and slope_shape.rank is not None and slope_shape.rank > data.shape.rank
        if merged is None or too_long or merged.is_static and data.shape.is_static and merged != data.shape:
            ctx.fail(f"slope {slope.shape.brief()} neither broadcasts to data {data.shape.brief()} nor fits its"
                     " channel axis 1 (OpenVINO accepts some such shapes and reads past the slope)", position=1)
    return [data], {"channel": channel}


def _without_leading_ones(shape: PartialShape, rank: int | None) -> PartialShape:
    """``shape`` without the leading dims of 1 beyond ``rank``: the output keeps the data's shape, so a slope
    of one element fits scalar data (OpenVINO's reference multiplies by it; ``[1]`` against ``[]``)."""
    if shape.dims is None or rank is None or len(shape.dims) <= rank:
        return shape
    extra = shape.dims[:len(shape.dims) - rank]
    return PartialShape(shape.dims[len(extra):]) if all(d.is_static and d.lo == 1 for d in extra) else shape


def _channel_wise(data: tuple | None, slope: tuple | None) -> bool | None:
    """PRelu's special case: a 1-D slope as long as the data's axis 1 applies along axis 1 (also when the last
    axis has that length too, as in the reference). None: not known before the shapes are (a dynamic dim
    decides)."""
    if data is None or slope is None or len(slope) != 1 or len(data) < 2:
        return False if data is not None and slope is not None else None
    if None in (slope[0], data[1]):
        return None
    return slope[0] == data[1]


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    return all(s in (1, t) for s, t in zip(shape[::-1], target[::-1]))


def prelu(x: np.ndarray, slope: np.ndarray, *, channel: bool | None, out: np.ndarray | None = None) -> np.ndarray:
    """PRelu-1: ``x < 0 ? x * slope : x`` (in the data's type; a slope of another type is converted); a 1-D
    slope as long as the data's axis 1 applies along axis 1 (even if the last axis is as long), any other
    broadcasts numpy-style to the data's shape (leading dims of 1 beyond the data's rank left out: the output has
    the data's shape, also for scalar data and a slope ``[1]``)."""
    extra = slope.ndim - x.ndim
    if extra > 0 and not channel and all(n == 1 for n in slope.shape[:extra]):
        slope = slope.reshape(slope.shape[extra:])
    if channel is None:  # decided by dims only known now
        channel = _channel_wise(x.shape, slope.shape)
        if not channel and (slope.ndim > x.ndim or not _broadcasts_to(slope.shape, x.shape)):
            raise InputError(f"PRelu: slope {list(slope.shape)} neither broadcasts to data {list(x.shape)} nor fits"
                             " its channel axis 1")
    if channel:
        slope = slope.reshape((slope.shape[0],) + (1,) * (x.ndim - 2))
    if out is None:
        out = np.empty(x.shape, dtype=x.dtype)
    if slope.dtype != x.dtype:
        slope = slope.astype(x.dtype)

    def compute(a: np.ndarray, s: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, a)
        np.multiply(a, s, out=out, where=a < 0)

    def narrow(a: np.ndarray, s: np.ndarray, out: np.ndarray) -> None:
        wide = np.empty(out.shape, dtype=F32)
        compute(a.astype(F32), s.astype(F32), wide)
        _store_narrow(out, wide)

    with np.errstate(all="ignore"):
        return run_elementwise(narrow if x.dtype.kind == "V" else compute, (x, slope), out, blocked=True)


prelu.accepts_out = True


def _infer_round(ctx: OpContext):
    _check_type(ctx, "Round", "any", ctx.inputs[0])
    mode = ctx.attr_choice("mode", {"half_to_even": "even", "half_away_from_zero": "away"}, None)
    if mode is None:
        ctx.fail("the attribute 'mode' is required (half_to_even or half_away_from_zero)")
    return [ctx.inputs[0]], {"mode": mode}


def round_(x: np.ndarray, *, mode: str, out: np.ndarray | None = None) -> np.ndarray:
    """Round-5: to the nearest integer, ties to even or away from zero (integers and booleans unchanged)."""
    compute = _round_even if mode == "even" else round_half_away
    if x.dtype.kind == "b":
        return np.copyto(out, x) or out if out is not None else x.copy()
    return _dispatch(x, compute, _int_identity, mode != "even", out)


round_.accepts_out = True


def _infer_gelu(version: int):
    def infer(ctx: OpContext):
        _check_type(ctx, "Gelu", "real", ctx.inputs[0])
        mode = "erf" if version == 2 else ctx.attr_choice("approximation_mode", {"erf": "erf", "tanh": "tanh"},
                                                            "erf")
        return [ctx.inputs[0]], {"mode": mode}

    return infer


_GELU_ERF_F32 = _nan_quieted(gelu_erf_f32)
_GELU_STEP = 1 << 14  # elements per block (its temporaries stay in cache)
_GELU_PARALLEL = 1 << 15  # two blocks or more: over threads (Gelu costs ~40 additions an element)


def _gelu_erf_f32_blocks(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """f32 Gelu erf of C-contiguous ``x`` into C-contiguous ``out``, in blocks over threads from 32K elements."""
    flat_x, flat_out, size = x.reshape(-1), out.reshape(-1), x.size  # (1-D: numpy gives 0-D results as scalars)
    if 0 < size <= _GELU_STEP:  # (one block: no slicing, no threads)
        with np.errstate(all="ignore"):
            _GELU_ERF_F32(flat_x, flat_out)
        return out

    def work(start: int, stop: int) -> None:
        with np.errstate(all="ignore"):  # (per thread: errstate does not cross threads)
            for lo in range(start * _GELU_STEP, min(stop * _GELU_STEP, size), _GELU_STEP):
                hi = min(lo + _GELU_STEP, size)
                _GELU_ERF_F32(flat_x[lo:hi], out=flat_out[lo:hi])

    run_chunked(-(-size // _GELU_STEP), _GELU_STEP, work, min_elements=_GELU_PARALLEL)
    return out


def gelu(x: np.ndarray, *, mode: str, out: np.ndarray | None = None) -> np.ndarray:
    """Gelu-2/7: ``0.5 * x * (1 + erf(x / sqrt(2)))`` or ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 *
    x**3)))``. f32 erf: :func:`special.gelu_erf_f32` (a polynomial in double, within 1 ULP of the reference); f16, bf16
    and f64 erf, and tanh: computed in double and rounded to the type once, as the reference does (tanh within
    1 ULP at f32: the far negative tail takes the C library's tanh element by element, as the reference)."""
    if mode == "tanh":
        return _dispatch(x, _gelu_tanh, None, True, out)
    if x.dtype == F32 and x.flags.c_contiguous and (out is None or out.flags.c_contiguous):
        return _gelu_erf_f32_blocks(x, np.empty(x.shape, F32) if out is None else out)
    return _dispatch(x, _GELU_ERF_F32 if x.dtype == F32 else gelu_erf_double, None, True, out)


gelu.accepts_out = True


def prepare_gelu(params, inputs, outputs, consts):
    """Gelu erf of f32 data up to one block: :func:`special.gelu_erf_f32` called directly
    (:func:`_direct_kernel`: the same bits, without the dispatch's 3-4 us a call); other cases :func:`gelu`."""
    general = functools.partial(gelu, **params)
    general.accepts_out = True
    if params["mode"] != "erf" or inputs[0].element_type.dtype != F32:
        return general
    return _direct_kernel(inputs, _GELU_STEP, general, _GELU_ERF_F32) or general


def _infer_swish(ctx: OpContext):
    data = ctx.inputs[0]
    _check_type(ctx, "Swish", "real", data)
    if len(ctx.inputs) > 1:
        beta = ctx.inputs[1]
        if DYNAMIC not in (beta.element_type, data.element_type) and beta.element_type != data.element_type:
            ctx.fail(f"beta must have the data's element type {data.element_type}, got {beta.element_type}",
                     position=1)
        if beta.shape.rank not in (None, 0, 1) or beta.shape.is_static and math.prod(beta.shape.to_shape()) != 1:
            ctx.fail(f"beta must be a scalar or have one element, got shape {beta.shape.brief()}", position=1)
    return [data], {}


def swish(x: np.ndarray, beta: np.ndarray | None = None, *, out: np.ndarray | None = None) -> np.ndarray:
    """Swish-4: ``x / (1 + exp(-beta * x))`` (beta 1 when absent). f32: ``-(x * beta)`` in f32, the C library's
    ``expf``, the sum and the division in f32, within 1 ULP of the reference, which does them in double
    (``1.0 + e``): bit-exactness would cost a quarter of Swish's time; f64 in double."""
    b = None if beta is None else np.asarray(beta.reshape(-1)[0].astype(F32 if x.dtype != F64 else F64))

    @_blocks_itself
    def on_float(a: np.ndarray, out: np.ndarray) -> None:
        _swish_beta(a, None if b is None else b.astype(a.dtype), out)

    return _dispatch(x, on_float, None, True, out)


swish.accepts_out = True


def prepare_swish(params, inputs, outputs, consts):
    """Swish-4 of f32/f64 data up to one block: the computation called directly (:func:`_direct_kernel`); a
    constant beta read once."""
    dtype = inputs[0].element_type.dtype

    def as_beta(beta: np.ndarray | None) -> np.ndarray | None:
        return None if beta is None else np.asarray(beta.reshape(-1)[0].astype(dtype))

    fixed = len(consts) > 1 and consts[1] is not None
    constant = as_beta(consts[1]) if fixed and dtype in (F32, F64) else None

    def compute(x: np.ndarray, beta: np.ndarray | None = None, *, out: np.ndarray) -> None:
        _swish_beta(x, constant if fixed else as_beta(beta), out)

    return _direct_kernel(inputs, BLOCK, swish, compute) or swish

def _batch_first(params, inputs, outputs, axes):
    if any(axis is not None for axis in axes[1:]):
        return "a parameter input has a batch axis"
    return [axes[0]]


def _batch_prelu(params, inputs, outputs, axes):
    if params.get("channel"):
        if axes[1] is not None:
            return "the slope has a batch axis"
        return [axes[0]] if axes[0] != 1 else "the slope applies along the batch axis"
    return aligned_batch(inputs, outputs, axes)


def _declare(entry: Unary) -> OpDef:
    return OpDef(entry.type, entry.first, entry.first_opset, LATEST_OPSET, ("data",),
                 _same_infer(entry.types, entry.type), _unary_kernel(entry), _prepare_unary(entry), batch=keep_batch,
                 exact=entry.exact, in_place=(0,) if entry.in_place else ())


OPS = tuple(_declare(entry) for entry in TABLE) + (
    OpDef("LogicalNot", 1, 1, LATEST_OPSET, ("data",), _same_infer("any", "LogicalNot"), logical_not, batch=keep_batch,
          in_place=(0,)),
    OpDef("BitwiseNot", 13, 13, LATEST_OPSET, ("data",), _same_infer("integral", "BitwiseNot"), bitwise_not,
          batch=keep_batch, in_place=(0,)),
    OpDef("Clamp", 1, 1, LATEST_OPSET, ("data",), _infer_clamp, clamp, attrs=(Attr("min"), Attr("max")),
          batch=keep_batch, in_place=(0,)),
    OpDef("Elu", 1, 1, LATEST_OPSET, ("data",), _infer_elu, elu, attrs=(Attr("alpha"),), batch=keep_batch,
          exact=False, in_place=(0,)),
    OpDef("Selu", 1, 1, LATEST_OPSET, ("data", "alpha", "lambda"), _infer_selu, selu,
          roles=("data", "data", "data"), batch=_batch_first, exact=False, in_place=(0,)),
    OpDef("HardSigmoid", 1, 1, LATEST_OPSET, ("data", "alpha", "beta"), _infer_hard_sigmoid, hard_sigmoid,
          roles=("data", "data", "data"), batch=_batch_first, in_place=(0,)),
    OpDef("Identity", 16, 16, LATEST_OPSET, ("data",), _same_infer("any", "Identity"), identity, batch=keep_batch,
          in_place=(0,)),
    OpDef("PRelu", 1, 1, LATEST_OPSET, ("data", "slope"), _infer_prelu, prelu, roles=("data", "data"),
          batch=_batch_prelu, in_place=(0,)),
    OpDef("Round", 5, 5, LATEST_OPSET, ("data",), _infer_round, round_,
          attrs=(Attr("mode", None, ("half_to_even", "half_away_from_zero")),), batch=keep_batch),
    OpDef("Gelu", 2, 2, 6, ("data",), _infer_gelu(2), gelu, prepare_gelu, batch=keep_batch, exact=False),
    OpDef("Gelu", 7, 7, LATEST_OPSET, ("data",), _infer_gelu(7), gelu, prepare_gelu,
          attrs=(Attr("approximation_mode", "ERF", ("erf", "tanh")),), batch=keep_batch, exact=False),
    OpDef("Swish", 4, 4, LATEST_OPSET, ("data", "beta"), _infer_swish, swish, prepare_swish, roles=("data", "data"),
          batch=_batch_first, exact=False, min_inputs=1, in_place=(0,)),
)
