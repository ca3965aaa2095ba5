"""The elementwise binary operations, from one table: arithmetic (Add, Subtract, Multiply, Divide, Power,
Maximum, Minimum, SquaredDifference, Mod, FloorMod), comparison (Equal ... GreaterEqual), logical (LogicalAnd,
LogicalOr, LogicalXor), bitwise (BitwiseAnd, BitwiseOr, BitwiseXor; opset13) and shifts (BitwiseLeftShift,
BitwiseRightShift; opset15: integers only, see :func:`_shift`).

Inference (OpenVINO's ``BinaryElementwise*`` rules): both inputs have one element type (a dynamic one takes
the other's); arithmetic refuses boolean, logical needs boolean, bitwise needs an integer or boolean type;
comparison and logical outputs are boolean, the others keep the input type. Shapes follow
``auto_broadcast`` (numpy by default, none, pdpd: the second input fitted into the first), as for Select.

Values, as the core reference (``Node.evaluate``) computes them (measured on OpenVINO 2026.4; see
docs/semantics.md, "Elementwise operations"):

- Integers wrap on overflow. Divide: floor division (``m_pythondiv``, the default) or truncation; Mod: the
  remainder of truncating division (sign of the dividend); FloorMod: the remainder of floor division (sign
  of the divisor), exact for unsigned types; signed FloorMod is ``a - b * floor(a / b)`` computed in double
  and cast to the type as x86 does, as the reference does (so i64 beyond 2**53 loses low bits, and a zero
  divisor gives the cast of NaN: i32/i64 the lowest value, i8/i16 0). Any other integer division by zero is
  an InputError naming the layer (the reference throws for Divide, and crashes for Mod and unsigned
  FloorMod). ``INT_MIN / -1`` wraps to INT_MIN (the reference traps).
- Integer Power is ``pow`` in double cast to the type as x86 does (``1/x`` is 0 for ``|x| > 1``, ``0**-1``
  and values past the range give the lowest value).
- Floats: Add, Subtract, Multiply, Divide, SquaredDifference (``(a-b)*(a-b)``, two roundings), Maximum
  (``a < b ? b : a``) and Minimum (``b < a ? b : a``; NaN and signed-zero order as the reference) are
  bit-exact, f16 and bf16 included (computed in f32 and rounded once: correctly rounded, since f32 has more
  than twice their precision). FloorMod: ``a - b * floor(a / b)`` in double, rounded to the type (bit-exact).
  Mod on floats (the reference has no float evaluate): ``fmod``, exact. Power on floats: ``pow`` in double,
  rounded to the type: at most 1 ULP from the reference's ``powf`` at f32 (bit-exact at f16).

Xor-1: opset1's logical exclusive or (``ov::op::v0::Xor``), the operation opset2 onwards call LogicalXor-1,
declared from LogicalXor's entry: boolean inputs, numpy broadcasting (or none, or pdpd), a boolean output;
bit-exact against OpenVINO's reference (``Node.evaluate``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import InputError, UnsupportedError
from ...types import BOOLEAN, DYNAMIC, Dim, TensorSpec, element_type_of
from ..api import (
    LATEST_OPSET,
    Attr,
    InputFit,
    OpContext,
    OpDef,
    broadcast_merge,
    broadcast_read,
    pdpd_shape,
    quiet_f16_nans,
)
from ..toolkit.broadcasting import (
    UNCOMPUTED_TYPES,
    aligned_batch,
    broadcast_values,
    interval,
    one_call,
    run_elementwise,
)
from ..toolkit.convert_rules import bf16_as_openvino_rounds, float_to_int

# -- computations: fn(a, b, out=...) writes ``out`` (a and b broadcast to it) ----------------------------------


def _is_int(x: np.ndarray) -> bool:
    return x.dtype.kind in "iu"


def _plain(ufunc: np.ufunc) -> Callable[..., None]:
    def compute(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
        ufunc(a, b, out=out)

    compute.ufunc = ufunc  # (a prepared kernel may call it directly)
    return compute


def _extremum(ufunc, b_wins):
    """Maximum/Minimum: ``ufunc`` for integers; for floats ``a`` unless ``b_wins(a, b)`` (a NaN ``a`` stays, as
    the reference's comparison keeps it), f16 NaNs quietened as the reference's f32 pass leaves them."""
    def compute(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
        if a.dtype.kind != "f" and not _is_ml(a):
            ufunc(a, b, out=out)
            return
        np.copyto(out, np.broadcast_to(a, out.shape))
        np.copyto(out, np.broadcast_to(b, out.shape), where=b_wins(a, b))
        quiet_f16_nans(out)

    return compute


def _is_ml(x: np.ndarray) -> bool:
    """An ml_dtypes float (bf16...), whose kind is 'V'."""
    return x.dtype.kind == "V"


def _squared_difference(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    np.subtract(a, b, out=out)
    np.multiply(out, out, out=out)


def _divide(a: np.ndarray, b: np.ndarray, out: np.ndarray, pythondiv: bool = True) -> None:
    if not _is_int(a):
        np.divide(a, b, out=out)
        return
    if pythondiv or a.dtype.kind != "i":
        np.floor_divide(a, b, out=out)
        return
    # truncation: floor + 1 where the division was inexact and negative (found before ``out``, which may be ``a``)
    inexact = np.not_equal(np.remainder(a, b), 0)
    inexact &= np.less(a, 0) != np.less(b, 0)
    np.floor_divide(a, b, out=out)
    np.add(out, inexact, out=out, casting="unsafe")


def _power(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    if a.dtype == np.float64:
        np.power(a, b, out=out)
        return
    wide = np.power(a.astype(np.float64), b.astype(np.float64))
    if _is_int(a):
        _round_integer_powers(a, b, wide)
        out[...] = float_to_int(wide, element_type_of(a.dtype).name)
    elif _is_ml(a):
        out[...] = wide.astype(np.float32)
    else:
        np.copyto(out, wide, casting="unsafe")
        _power_nans(a, b, out)


def _round_integer_powers(a: np.ndarray, b: np.ndarray, wide: np.ndarray) -> None:
    """Integer powers (exponent >= 2) of magnitude in [2**53, 2**64] as the reference gives them: the C
    library's double ``pow``, called element by element (numpy's vectorised pow can be an ulp off there, and
    the C library's is not always the nearest either, ties included; the cast to the integer type keeps
    that ulp). Elsewhere every double is exact or the cast saturates alike."""
    big = (np.abs(wide) >= 2.0**53) & (np.abs(wide) <= 2.0**64) & (np.broadcast_to(b, wide.shape) >= 2)
    if big.any():
        base = np.broadcast_to(a, wide.shape)[big].astype(np.float64)
        exponent = np.broadcast_to(b, wide.shape)[big].astype(np.float64)
        wide[big] = _LIBM_POW(base, exponent).astype(np.float64)


_LIBM_POW = np.frompyfunc(math.pow, 2, 1)  # (Python's math.pow is the C library's pow)


_NAN_BITS = {2: (np.uint16, 0x0200, 0x7FFF), 4: (np.uint32, 0x00400000, 0x7FFFFFFF)}


def _power_nans(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """NaN results of f16/f32 Power as the reference gives them (its ``powf``; double pow sees every NaN quiet,
    f16 operands reach powf quiet): the NaN operand quietened, the base before the exponent, with its sign,
    cleared when the exponent is an odd integer; a quiet NaN to the power 0, or 1 to a quiet NaN, is 1 (at
    f32 a signalling NaN there gives the NaN)."""
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not (nan_a.any() or nan_b.any()):
        return
    unsigned, quiet, magnitude = _NAN_BITS[a.dtype.itemsize]
    shape = out.shape
    a_bits, b_bits = np.broadcast_to(a, shape).view(unsigned), np.broadcast_to(b, shape).view(unsigned)
    nan_a, nan_b = np.broadcast_to(nan_a, shape), np.broadcast_to(nan_b, shape)
    out_bits = out.view(unsigned)
    one = a.dtype.type(1)
    if a.dtype == np.float32:  # signalling NaNs stay NaN against 0 and 1
        keep_a = nan_a & ((np.broadcast_to(b, shape) != 0) | (a_bits & quiet == 0))
        keep_b = nan_b & ~nan_a & ((np.broadcast_to(a, shape) != one) | (b_bits & quiet == 0))
    else:
        keep_a = nan_a & (np.broadcast_to(b, shape) != 0)
        keep_b = nan_b & ~nan_a & (np.broadcast_to(a, shape) != one)
    exponent = np.broadcast_to(b, shape).astype(np.float64)
    odd = np.abs(np.fmod(exponent, 2.0)) == 1.0
    out_bits[keep_a] = np.where(odd[keep_a], (a_bits[keep_a] | quiet) & magnitude, a_bits[keep_a] | quiet)
    out_bits[keep_b] = b_bits[keep_b] | quiet
    # the NaNs that give 1, set here: numpy's double pow of a signalling NaN (an f16 one widened in software,
    # without AVX-512) can be NaN
    out[(nan_a & ~keep_a) | (nan_b & ~nan_a & ~keep_b)] = one


def _mod(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    np.fmod(a, b, out=out)


def _floor_mod(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    if a.dtype.kind == "u":
        np.remainder(a, b, out=out)
        return
    x, y = a.astype(np.float64), b.astype(np.float64)
    wide = x - y * np.floor(x / y)
    if a.dtype.kind == "i":
        out[...] = float_to_int(wide, element_type_of(a.dtype).name)
    elif _is_ml(a):
        out[...] = wide.astype(np.float32)
    else:
        np.copyto(out, wide, casting="unsafe")


def _shift(ufunc: np.ufunc) -> Callable[..., None]:
    """BitwiseLeftShift/BitwiseRightShift-15 as the reference's ``a << b`` / ``a >> b`` in C++ on x86: types
    narrower than 32 bits promoted to int32 and the result truncated back; the shift count taken modulo the
    width of that computation (32, or 64 for i64/u64), as x86's shift instructions do (C++ leaves counts outside
    [0, width) undefined); right shifts of signed values are arithmetic."""
    def compute(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
        wide = np.dtype(np.int32) if a.dtype.itemsize < 4 else a.dtype
        count = (b.astype(wide) & wide.type(8 * wide.itemsize - 1))
        if wide == a.dtype:
            ufunc(a, count, out=out)
        else:
            out[...] = ufunc(a.astype(wide), count).astype(out.dtype)

    return compute


# -- the table ------------------------------------------------------------------------------------------------


class Binary:
    """One binary operation: its type, first opset, kind (``arith``, ``compare``, ``logical``, ``bitwise``),
    its computation, whether that makes several passes (computed in blocks), the interval rule of its
    value inference (``elementwise.interval`` names, or ``compare:<op>``), whether integer zero
    divisors are refused, and the inputs ``out`` may be (OpDef's ``in_place``: the computation reads no
    operand after writing ``out``)."""

    __slots__ = ("type", "first", "kind", "compute", "passes", "value", "divides", "in_place")

    def __init__(self, type: str, first: int, kind: str, compute: Callable[..., None], passes: bool = False, *,
                 value: str | None = None, divides: bool = False, in_place: tuple[int, ...] = (0, 1)) -> None:
        self.type, self.first, self.kind, self.compute = type, first, kind, compute
        self.passes, self.value, self.divides, self.in_place = passes, value, divides, in_place


TABLE = (
    Binary("Add", 1, "arith", _plain(np.add), value="add"),
    Binary("Subtract", 1, "arith", _plain(np.subtract), value="subtract"),
    Binary("Multiply", 1, "arith", _plain(np.multiply), value="multiply"),
    Binary("Divide", 1, "arith", _divide, True, value="divide", divides=True),
    Binary("Power", 1, "arith", _power, True, in_place=()),  # (its NaN pass reads the operands again)
    # (a copy of ``a`` into ``out`` comes first)
    Binary("Maximum", 1, "arith", _extremum(np.maximum, np.less), True, value="maximum", in_place=(0,)),
    Binary("Minimum", 1, "arith", _extremum(np.minimum, np.greater), True, value="minimum", in_place=(0,)),
    Binary("SquaredDifference", 1, "arith", _squared_difference, True),
    Binary("Mod", 1, "arith", _mod, divides=True),
    Binary("FloorMod", 1, "arith", _floor_mod, True, divides=True),
    Binary("Equal", 1, "compare", _plain(np.equal), value="compare:eq"),
    Binary("NotEqual", 1, "compare", _plain(np.not_equal), value="compare:ne"),
    Binary("Less", 1, "compare", _plain(np.less), value="compare:lt"),
    Binary("LessEqual", 1, "compare", _plain(np.less_equal), value="compare:le"),
    Binary("Greater", 1, "compare", _plain(np.greater), value="compare:gt"),
    Binary("GreaterEqual", 1, "compare", _plain(np.greater_equal), value="compare:ge"),
    Binary("LogicalAnd", 1, "logical", _plain(np.logical_and)),
    Binary("LogicalOr", 1, "logical", _plain(np.logical_or)),
    Binary("LogicalXor", 1, "logical", _plain(np.logical_xor)),
    Binary("BitwiseAnd", 13, "bitwise", _plain(np.bitwise_and)),
    Binary("BitwiseOr", 13, "bitwise", _plain(np.bitwise_or)),
    Binary("BitwiseXor", 13, "bitwise", _plain(np.bitwise_xor)),
    Binary("BitwiseLeftShift", 15, "shift", _shift(np.left_shift), True),
    Binary("BitwiseRightShift", 15, "shift", _shift(np.right_shift), True),
)


# -- inference ---------------------------------------------------------------------------------------------------


def _infer(entry: Binary):
    def infer(ctx: OpContext):
        a, b = ctx.inputs
        et = a.element_type if a.element_type != DYNAMIC else b.element_type
        if DYNAMIC not in (a.element_type, b.element_type) and a.element_type != b.element_type:
            ctx.fail(f"both inputs must have one element type, got {a.element_type} and {b.element_type}",
                     position=1, hint="insert a Convert so that the element types agree")
        kind = et.kind
        if kind == "string" or entry.kind == "arith" and kind == "bool":
            ctx.fail(f"{entry.type} does not take element type {et}", position=0)
        if entry.kind == "logical" and kind not in ("bool", "dynamic"):
            ctx.fail(f"{entry.type} needs boolean inputs, got {et}", position=0)
        if entry.kind == "bitwise" and kind not in ("bool", "int", "uint", "dynamic"):
            ctx.fail(f"{entry.type} needs integer or boolean inputs, got {et}", position=0)
        if entry.kind == "shift" and kind not in ("int", "uint", "dynamic"):
            ctx.fail(f"{entry.type} needs integer inputs, got {et}", position=0)
        if et.dtype is None and kind not in ("dynamic",):
            ctx.fail(f"{entry.type} does not take element type {et}", position=0)
        if et.name in UNCOMPUTED_TYPES:
            raise UnsupportedError(f"{entry.type} on {et} is not implemented (OpenVINO's reference has none either)",
                                   layer=ctx.ref, hint="insert a Convert to a wider type")
        mode, axis = broadcast_read(ctx)
        shape = broadcast_merge(mode, a.shape, b.shape, axis)
        if shape is None:
            ctx.fail(f"input shapes {a.shape.brief()} and {b.shape.brief()} do not broadcast"
                     f" (auto_broadcast={mode})")
        out_et = BOOLEAN if entry.kind in ("compare", "logical") else et
        params: dict[str, Any] = {"mode": mode, "axis": axis}
        if entry.type == "Divide":
            params["pythondiv"] = ctx.attr_bool("m_pythondiv", True)
        if entry.divides and kind in ("int", "uint"):
            params["check_zero"] = True
        return [TensorSpec(out_et, shape)], params

    return infer


# -- kernels -----------------------------------------------------------------------------------------------------


def _truncating_divide(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    _divide(x, y, out, pythondiv=False)


def _kernel(entry: Binary):
    out_bool = entry.kind in ("compare", "logical")

    def kernel(a: np.ndarray, b: np.ndarray, *, mode: str, axis: int, pythondiv: bool = True,
               check_zero: bool = False, out: np.ndarray | None = None) -> np.ndarray:
        if mode == "pdpd":
            b = b.reshape(pdpd_shape(b.shape, a.ndim, axis))
        if check_zero:
            _check_divisor(entry, a, b)
        if out is None:
            out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.bool_ if out_bool else a.dtype)
        compute = entry.compute if pythondiv or entry.type != "Divide" else _truncating_divide
        with np.errstate(all="ignore"):
            if _is_ml(a) and not out_bool and entry.type not in _SELECTING:
                return _bf16_as_reference(compute, a, b, out, entry.passes)
            return run_elementwise(compute, (a, b), out, blocked=entry.passes)

    kernel.accepts_out = True
    kernel.__doc__ = f"{entry.type} of two broadcast arrays (see the module docstring for the values)."
    return kernel


_SELECTING = ("Maximum", "Minimum")  # (pick an operand: nothing to round)


def _bf16_as_reference(compute, a: np.ndarray, b: np.ndarray, out: np.ndarray, passes: bool) -> np.ndarray:
    """bf16 as the reference computes it: in f32, each result converted as OpenVINO's ``bfloat16`` does
    (:func:`bf16_as_openvino_rounds`; not round-to-nearest-even)."""
    wide = np.empty(out.shape, np.float32)
    run_elementwise(compute, (a.astype(np.float32), b.astype(np.float32)), wide, blocked=passes)
    out[...] = bf16_as_openvino_rounds(wide, out.dtype)
    return out


def _prepare(entry: Binary):
    """A kernel for static shapes: the output shape, dtype and computation resolved once. An output small
    enough for one pass on the calling thread is computed without ``run_elementwise`` and without an
    ``errstate`` of its own (the run ignores floating-point warnings around its loop, see runtime.execute):
    a plain ufunc of the output's dtype is the kernel itself; larger outputs keep the general kernel."""
    general = _kernel(entry)

    def prepare(params, inputs: list[TensorSpec], outputs: list[TensorSpec], consts):
        shape = outputs[0].shape.to_shape()
        dtype = outputs[0].element_type.dtype
        size = math.prod(shape)
        pythondiv = params.get("pythondiv", True)
        threaded = not one_call(size, entry.passes)
        in_dtype = inputs[0].element_type.dtype
        if params.get("check_zero") or not shape or threaded or in_dtype.kind == "V":  # (V: ml_dtypes' types)
            return functools.partial(general, **params)
        compute = entry.compute if pythondiv or entry.type != "Divide" else _truncating_divide
        if entry.type == "Divide" and in_dtype.kind == "f":
            compute = _plain(np.divide)
        b_shape = None
        if params["mode"] == "pdpd":
            b_shape = pdpd_shape(inputs[1].shape.to_shape(), len(inputs[0].shape.to_shape()), params["axis"])
        if entry.type == "Power" and _squares(inputs, outputs, consts):
            return _square
        ufunc = getattr(compute, "ufunc", None)
        if ufunc is not None and b_shape is None and _resolves_to(ufunc, in_dtype, dtype):
            return ufunc

        def kernel(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
            if b_shape is not None:
                b = b.reshape(b_shape)
            if out is None:
                out = np.empty(shape, dtype)
            compute(a, b, out=out)
            return out

        kernel.accepts_out = True
        return kernel

    return prepare


def _squares(inputs: list[TensorSpec], outputs: list[TensorSpec], consts) -> bool:
    """Whether a Power is ``x ** 2`` on f32 by a constant exponent that does not broadcast ``x``: the square in
    double is exact, so its one rounding to f32 is the f32 product ``x * x`` (NaN operands too: x86 keeps the
    quietened NaN of ``x`` either way)."""
    exponent = consts[1]
    return (inputs[0].element_type == "f32" and exponent is not None and exponent.size > 0
            and bool(np.all(exponent == 2)) and outputs[0].shape == inputs[0].shape)


def _square(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.multiply(a, a)


def _resolves_to(ufunc: np.ufunc, in_dtype: np.dtype, out_dtype: np.dtype) -> bool:
    """Whether ``ufunc`` on two ``in_dtype`` arrays makes ``out_dtype`` arrays by itself."""
    try:
        return ufunc.resolve_dtypes((in_dtype, in_dtype, None))[2] == out_dtype
    except (TypeError, ValueError):  # (ml_dtypes' types, or a loop numpy lacks)
        return False


def _check_divisor(entry: Binary, a: np.ndarray, b: np.ndarray) -> None:
    """An integer zero divisor: an InputError (the run names the layer; signed FloorMod keeps the reference's
    value instead)."""
    if entry.type == "FloorMod" and b.dtype.kind == "i" or a.size == 0 or b.all():
        return
    zero = int(np.flatnonzero(b.reshape(-1) == 0)[0])
    raise InputError(
        f"integer division by zero: the divisor (input 1) has 0 at flat position {zero}"
        " (OpenVINO's reference " + ("throws" if entry.type == "Divide" else "crashes") + " here)",
        port="input 1", hint="make sure the divisor has no zero, or compute in a float type",
    )


# -- value inference ---------------------------------------------------------------------------------------------

_COMPARE = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
            "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
_UNKNOWN = Dim(0, None)


def _exact_dim(v: int) -> Dim:
    return Dim(v, v)


def _apart(x: Dim, y: Dim) -> bool:
    """Whether two intervals have no value in common (an unbounded ``hi`` is None)."""
    return (x.hi is not None and x.hi < y.lo) or (y.hi is not None and y.hi < x.lo)


def _value(entry: Binary):
    rule = entry.value

    def value(ctx: OpContext):
        a, b = ctx.partial_value(0), ctx.partial_value(1)
        if a is None or b is None or ctx.inputs[0].element_type.kind not in ("int", "uint"):
            return [None]
        pairs = broadcast_values(a, b)
        if pairs is None:
            return [None]
        if rule == "compare:eq":  # OpenVINO's Equal bounds: false where the intervals do not meet
            return [tuple(_exact_dim(int(x.lo == y.lo)) if x.is_static and y.is_static else
                          _exact_dim(0) if _apart(x, y) else Dim(0, 1) for x, y in pairs)]
        if rule.startswith("compare:"):
            test = _COMPARE[rule[8:]]
            return [tuple(_exact_dim(int(test(x.lo, y.lo))) if x.is_static and y.is_static else Dim(0, 1)
                          for x, y in pairs)]
        if entry.type == "Divide" and not ctx.attr_bool("m_pythondiv", True):
            if any(x.lo < 0 or y.lo < 0 for x, y in pairs):
                return [None]
        result = tuple(interval(rule, x, y) or _UNKNOWN for x, y in pairs)
        return [result]

    return value


def _fit(entry: Binary):
    def fit(params, inputs: list[TensorSpec], position: int) -> InputFit | None:
        if position == 1 and entry.divides and inputs[1].element_type.kind in ("int", "uint"):
            return InputFit("index", 1, 100, why=f"{entry.type}: an integer divisor of 0 is an error")
        return None

    return fit


def _batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes):
    offsets = None
    if params.get("mode") == "pdpd" and all(spec.shape.rank is not None for spec in inputs):
        rank_a, rank_b = inputs[0].shape.rank, inputs[1].shape.rank
        offsets = [0, rank_a - rank_b if params["axis"] == -1 else params["axis"]]
    return aligned_batch(inputs, outputs, axes, offsets)


def _declare(entry: Binary) -> OpDef:
    attrs = [Attr("auto_broadcast", "numpy", ("numpy", "none", "pdpd"))]
    if entry.type == "Divide":
        attrs.append(Attr("m_pythondiv", "true", ("true", "false")))
    return OpDef(entry.type, entry.first, entry.first, LATEST_OPSET, ("a", "b"),
                 _infer(entry), _kernel(entry), _prepare(entry), roles=("data", "data"), attrs=attrs,
                 value=_value(entry) if entry.value else None, fit=_fit(entry) if entry.divides else None,
                 batch=_batch, exact=entry.type != "Power", in_place=entry.in_place)


def _xor() -> OpDef:
    (logical_xor,) = (entry for entry in TABLE if entry.type == "LogicalXor")
    op = _declare(logical_xor)
    op.type, op.last_opset = "Xor", 1
    return op


OPS = tuple(_declare(entry) for entry in TABLE) + (_xor(),)
