"""FakeQuantize-1 and FakeConvert-13: quantization emulated in floating point (INT8 models from NNCF/POT, FP8).

FakeQuantize-1: element-wise linear quantization of ``data`` into ``levels`` values.

Per element, with the limits broadcast to ``data``'s shape (``lo = min(input_low, input_high)``,
``hi = max(...)`` as ``std::min``/``std::max`` choose: a NaN limit compares false)::

    data <= lo  -> output_low
    data >  hi  -> output_high
    otherwise   -> nearbyint((data - input_low) / (input_high - input_low) * (levels - 1))
                   / (levels - 1) * (output_high - output_low) + output_low

exactly as OpenVINO's reference computes it (``reference/fake_quantize.hpp``; compared bit for bit with
``Node.evaluate``), operation by operation, each rounded to the computing type:

- f32: in f32, ``nearbyint`` rounding half to even. f16 and bf16 inputs are widened to f32 (exactly), computed
  in f32 and rounded once to the data type (f16 to nearest even; bf16 as OpenVINO's ``bfloat16`` class rounds,
  see ``convert_rules.bf16_as_openvino_rounds``).
- i32, i64, u32, u64: ``data - input_low``, ``input_high - input_low`` and the product with ``levels - 1`` in
  the integer type (wrapping; the division truncates toward zero); the rest in double; the result converted
  back as ``static_cast`` does on x86-64 (``convert_rules.float_to_int``).
- Equal bounds: every element is ``<= lo`` or ``> hi``; ``input_low > input_high`` uses the formula with the
  bounds as given (a negative step). A NaN element gives NaN.

Shapes: the output has ``data``'s shape; each limit must broadcast with ``data`` (numpy, the default: both
ways, merged one after the other as OpenVINO does), equal it (none) or fit into it from
``auto_broadcast.auto_broadcast_axis`` (pdpd). A limit with a dim that is neither 1 nor ``data``'s (OpenVINO
accepts ``data`` [1,3,1,1] with a limit [1,3,4,5]) is read as the reference's strides read it: the first
elements of its buffer, as if it had only the dims that match ``data``'s.

Deviations (refused with an IRError where OpenVINO accepts the model): ``levels`` below 2 (the spec's range;
the reference divides by zero), limits whose element type differs from ``data``'s (the reference reads their
bytes as ``data``'s type), and element types the reference has no kernel for (f64, f8, i8, u8, i16, u16,
boolean...). Where the reference differs from the spec: it ignores pdpd's axis (aligning limits right); ir-run
places them from the axis, as the spec says. The CPU plugin computes ``round(x * scale + shift) * scale' + shift'``
(within 3 eps of the limits' magnitude of the reference, never a step away) and runs a FakeQuantize before a
Convolution as an INT8 kernel, which shifts results when the zero point is not an integer. See
``docs/semantics.md`` (Quantization).

FakeConvert-13: ``(to_f8(data * scale - shift) + shift) / scale`` with ``destination_type`` f8e4m3 or f8e5m2,
as OpenVINO's reference computes it (compared bit for bit with ``Node.evaluate``):

- The scale and shift arithmetic is done in ``data``'s type operation by operation (f32; f16 and bf16 as
  OpenVINO's ``float16``/``bfloat16`` classes do: each product, difference, sum and quotient computed in f32
  and rounded to the narrow type), with numpy broadcasting of scale and shift into ``data``.
- The value is converted to f16 (Convert-1's rules), emulated as f8 on the f16 bits, and converted back:
  round to nearest even on the f16 bits; f8e4m3 saturates at ±448 (inf and NaN become 448 with their sign),
  flushes magnitudes below 2**-9 to zero and keeps the reference's subnormal truncation; f8e5m2 saturates
  at ±57344 (inf too) and keeps NaN.

The CPU plugin is within 1 ULP of it (its last division), and turns NaN into a negative saturated value.
Shapes: the output is ``data``'s shape merged with ``scale``'s (numpy, one way: scale must not widen data);
shift's shape must be compatible with scale's. Element types: f32, f16, bf16, the same for all inputs.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelFormatError, UnsupportedError
from ...types import DYNAMIC, TensorSpec, merge_dims
from ..api import (
    LATEST_OPSET,
    Attr,
    Explanation,
    OpContext,
    OpDef,
    broadcast_merge,
    broadcast_read,
    equal_merge,
    numpy_merge,
    pdpd_shape,
)
from ..toolkit.broadcasting import aligned_batch
from ..toolkit.convert_rules import bf16_as_openvino_rounds, convert_values, f32_to_f16_sw, float_to_int

_LIMITS = ("input_low", "input_high", "output_low", "output_high")
_TYPES = ("f32", "f16", "bf16", "i32", "i64", "u32", "u64")


def _infer(ctx: OpContext):
    if ctx.attr("levels") is None:
        raise ModelFormatError("the required attribute 'levels' is missing", layer=ctx.ref,
                               hint='write the number of quantization levels, e.g. levels="256"')
    levels = ctx.attr_int("levels", 0)
    if levels < 2:
        raise ModelFormatError(f"attribute {ctx.attr_shown('levels')} must be at least 2", layer=ctx.ref,
                               hint="INT8 quantization uses 256 (or 255 for symmetric weights)")
    mode, axis = broadcast_read(ctx)
    data = ctx.inputs[0]
    et = data.element_type
    for position in range(1, 5):
        other = ctx.inputs[position].element_type
        if DYNAMIC not in (et, other) and other != et:
            ctx.fail(f"{_LIMITS[position - 1]} must have data's element type {et}, got {other}", position=position,
                     hint="insert a Convert: OpenVINO's reference reads every limit as data's element type")
        if et == DYNAMIC:
            et = other
    if et != DYNAMIC and et.name not in _TYPES:
        raise UnsupportedError(f"FakeQuantize of {et} is not supported (OpenVINO's reference computes "
                               f"{', '.join(_TYPES)})", layer=ctx.ref, port=ctx.input_label(0))
    merged = data.shape
    for position in range(1, 5):
        limit = ctx.inputs[position].shape
        result = broadcast_merge(mode, merged, limit, axis)
        if result is None:
            ctx.fail(f"{_LIMITS[position - 1]} {limit} does not broadcast to data {merged} "
                     f"(auto_broadcast={mode})", position=position)
        merged = result
    return [TensorSpec(data.element_type if data.element_type != DYNAMIC else et, data.shape)], {
        "levels": levels, "mode": mode, "axis": axis}


def _aligned(limit: np.ndarray, shape: tuple[int, ...], mode: str, axis: int) -> np.ndarray:
    """``limit`` shaped to broadcast to ``shape``: pdpd padded from ``axis``, numpy aligned right. A dim that is
    neither 1 nor ``shape``'s (OpenVINO's inference lets a limit be wider than data) is read as the reference's
    strides read it: the leading elements of the flat buffer, as if the limit had only its matching dims."""
    if mode == "pdpd":
        return limit.reshape(pdpd_shape(limit.shape, len(shape), axis))
    offset = len(shape) - limit.ndim
    if offset >= 0 and all(d == 1 or d == shape[offset + i] for i, d in enumerate(limit.shape)):
        return limit
    kept = [d if i + offset >= 0 and d == shape[i + offset] else 1 for i, d in enumerate(limit.shape)]
    kept = kept[max(0, -offset):]
    return np.ascontiguousarray(limit).reshape(-1)[:int(np.prod(kept))].reshape(kept)


def fake_quantize(x: np.ndarray, input_low: np.ndarray, input_high: np.ndarray, output_low: np.ndarray,
                  output_high: np.ndarray, *, levels: int, mode: str, axis: int) -> np.ndarray:
    """FakeQuantize as the reference computes it (see the module docstring); a new array of ``x``'s dtype."""
    limits = [_aligned(np.asarray(a), x.shape, mode, axis) for a in (input_low, input_high, output_low, output_high)]
    with np.errstate(all="ignore"):
        if x.dtype.kind in "iu":
            return _quantize_int(x, *limits, levels)
        return _quantize_float(x, *limits, levels)


def _bounds(il: np.ndarray, ih: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where ``x <= std::min(il, ih)`` and where ``x > std::max(il, ih)`` (std::min(a, b) is ``b < a ? b : a``)."""
    lo = np.where(ih < il, ih, il)
    hi = np.where(il < ih, ih, il)
    return np.less_equal(x, lo), np.greater(x, hi)


def _quantize_float(x, il, ih, ol, oh, levels: int) -> np.ndarray:
    dtype = x.dtype
    if dtype != np.float32:  # f16/bf16: widened exactly, computed in f32, rounded once
        x, il, ih, ol, oh = (a.astype(np.float32) for a in (x, il, ih, ol, oh))
    steps = np.float32(levels - 1)
    t = np.asarray(np.subtract(x, il, dtype=np.float32))  # (0-D: an array, for out=)
    np.divide(t, ih - il, out=t)
    np.multiply(t, steps, out=t)
    np.rint(t, out=t)
    np.divide(t, steps, out=t)
    np.multiply(t, oh - ol, out=t)
    np.add(t, ol, out=t)
    below, above = _bounds(il, ih, x)
    np.copyto(t, oh, where=above)
    np.copyto(t, ol, where=below)  # (checked first by the reference)
    if dtype == np.float32:
        return t
    if dtype == np.float16:
        return convert_values(t, "f32", "f16", dtype)
    return bf16_as_openvino_rounds(t, dtype)


def _quantize_int(x, il, ih, ol, oh, levels: int) -> np.ndarray:
    dtype = x.dtype
    steps = np.asarray(levels - 1).astype(dtype)  # static_cast<T>(levels - 1): wraps
    a = np.subtract(x, il, dtype=dtype)
    b = np.subtract(ih, il, dtype=dtype)
    b = np.where(b == 0, np.ones((), dtype), b)  # (only where the bounds are equal: those elements take a limit)
    q = np.asarray(np.floor_divide(a, b))
    if dtype.kind == "i":  # C++ division truncates toward zero
        q += (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    np.multiply(q, steps, out=q)
    r = q.astype(np.float64)
    r /= np.float64(steps)
    r *= np.subtract(oh, ol, dtype=dtype).astype(np.float64)
    r += ol.astype(np.float64)
    out = float_to_int(r.reshape(-1), {4: "i32", 8: "i64"}[dtype.itemsize] if dtype.kind == "i"
                       else {4: "u32", 8: "u64"}[dtype.itemsize]).astype(dtype).reshape(x.shape)
    below, above = _bounds(il, ih, x)
    np.copyto(out, oh, where=above)
    np.copyto(out, ol, where=below)  # (checked first by the reference)
    return out


SAME_LEVEL_ULP = 8
"""How far apart two computations of one FakeQuantize level may be, in ulp of the output type at
``max(|output_low|, |output_high|)``: each side rounds a product of a level index and the step (at most
``|output_high - output_low| <= 2 max``), a sum with ``output_low`` and the step itself, about 3 ulp of that
magnitude each (the level's own magnitude is no measure: a level near zero is a difference of two large values,
measured up to 9984 of its ulp apart).
Measured: OpenVINO 2026.4.1's CPU plugin against the reference formula, 180 random FakeQuantizes (levels 3 to
65536, per-tensor and per-channel ranges from 1e-3 to 1e2, 8192 elements each): 384,860 elements on the same
level differ, by at most 4 ulp; 8 leaves a margin. A difference larger than that, even below half a step, is
an error, not a formula's rounding."""


def _spacing(magnitude: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The ulp of ``dtype`` (f32, f16, bf16) at ``magnitude`` (float64), as float64; subnormal spacing below the
    smallest normal."""
    import ml_dtypes

    info = ml_dtypes.finfo(dtype)
    exponent = np.floor(np.log2(np.maximum(magnitude, float(info.smallest_normal))))
    return np.exp2(exponent - int(info.nmant))


def _explain(params, inputs: list[np.ndarray], other_inputs: list[np.ndarray | None], output: np.ndarray,
             other: np.ndarray, differ: np.ndarray) -> Explanation | None:
    """How another computation's float output differs at ``differ``: elements on the same level at most
    ``SAME_LEVEL_ULP`` ulp (of the output type, at the output range's magnitude ``max(|output_low|,
    |output_high|)``) apart (the CPU plugin's ``round(x * scale + shift) * scale' + shift'`` gives a level's
    value a few ulp apart) and
    elements one level apart (a rounding tie: the input sits on the boundary between two levels, where one
    ulp of difference, or the other formula, rounds it the other way). Elements further apart, or NaN, are
    left unexplained."""
    x = inputs[0]
    if x.dtype.kind in "iub" or not differ.any():  # (float types only: f32, f16, bf16)
        return None
    il, ih, ol, oh = (np.broadcast_to(_aligned(np.asarray(a), x.shape, params["mode"], params["axis"]), x.shape)
                      [differ].astype(np.float64) for a in inputs[1:5])
    count = params["levels"] - 1
    step = (oh - ol) / count
    ours, theirs = output[differ].astype(np.float64), other[differ].astype(np.float64)
    with np.errstate(all="ignore"):
        levels = np.rint((ours - ol) / step) - np.rint((theirs - ol) / step)
        on_grid = (np.abs(ours - ol - np.rint((ours - ol) / step) * step) <= np.abs(step) / 4) & \
                  (np.abs(theirs - ol - np.rint((theirs - ol) / step) * step) <= np.abs(step) / 4)
        # a tie: the input is on a boundary between two levels (within a thousandth of a level), or the two
        # computations' inputs lie on either side of one
        position = (x[differ].astype(np.float64) - il) / (ih - il) * count
        tie = np.abs(position - np.floor(position) - 0.5) <= 1e-3
        if other_inputs[0] is not None and other_inputs[0].shape == x.shape:
            there = (other_inputs[0][differ].astype(np.float64) - il) / (ih - il) * count
            tie |= np.rint(position) != np.rint(there)
    same = on_grid & (levels == 0) & (np.abs(ours - theirs) <= SAME_LEVEL_ULP * _spacing(np.maximum(
        np.abs(ol), np.abs(oh)), output.dtype))
    flipped = on_grid & (np.abs(levels) == 1) & tie
    parts = []
    if flipped.any():
        steps = np.unique(np.abs(step[flipped]))
        shown = f"step {steps[0]:.3g}" if steps.size == 1 else f"steps {steps.min():.3g} to {steps.max():.3g}"
        parts.append(f"{int(flipped.sum())} of {x.size} values one level apart ({shown}); "
                     + _input_difference(x, other_inputs[0], differ, flipped))
    if same.any():
        apart = np.abs(ours - theirs)[same].max()
        parts.append(f"{int(same.sum())} on the same level differ by at most {apart:.3g} (the device computes a"
                     f" level's value by its own formula)")
    explained = int(same.sum() + flipped.sum())
    return Explanation(explained, "; ".join(parts)) if explained else None


def _input_difference(x: np.ndarray, other: np.ndarray | None, differ: np.ndarray, flipped: np.ndarray) -> str:
    """What the inputs of the flipped elements say: how far apart they are, in ulp of their type."""
    if other is None or other.shape != x.shape:
        return "the device's input is not known here: a rounding tie if it differs by a rounding"
    a, b = x[differ][flipped], other.astype(x.dtype)[differ][flipped]
    wide_a, wide_b = a.astype(np.float32), b.astype(np.float32)
    name = {2: "f16" if x.dtype == np.float16 else "bf16", 4: "f32"}.get(x.dtype.itemsize, str(x.dtype))
    if np.array_equal(wide_a, wide_b):
        return (f"their inputs are equal ({name}): on the boundary between two levels, the device's formula"
                f" rounds them the other way — a rounding tie, not an error")
    spacing = np.spacing(np.minimum(np.abs(wide_a), np.abs(wide_b)))
    if x.dtype != np.float32:  # the narrow type's ulp: f16 and bf16 keep 10 and 7 of f32's 23 mantissa bits
        spacing = spacing * np.float32(2 ** (23 - (10 if x.dtype == np.float16 else 7)))
    with np.errstate(all="ignore"):
        ulps = float(np.nanmax(np.abs(wide_a.astype(np.float64) - wide_b) / spacing))
    return (f"their inputs differ by at most {ulps:.3g} ulp ({name}) — a rounding tie, not an error")


def _batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]):
    """Element-wise over ``data``: the output keeps its batch axis; a limit may carry the same axis (aligned
    as the broadcasting mode aligns it) or be 1 there."""
    if axes[0] is None:
        if any(axis is not None for axis in axes[1:]):
            return "a limit has a batch axis but data has none: the output has data's shape"
        return [None]
    rank = inputs[0].shape.rank
    if rank is None or any(spec.shape.rank is None for spec in inputs):
        return "an operand's rank is not known"
    if params["mode"] == "pdpd":
        offsets = [0] + [rank - spec.shape.rank if params["axis"] == -1 else params["axis"] for spec in inputs[1:]]
    else:
        offsets = [rank - spec.shape.rank for spec in inputs]
    return aligned_batch(inputs, outputs, axes, offsets)


# -- FakeConvert-13 ------------------------------------------------------------------------------------------

_F8_TYPES = ("f8e4m3", "f8e5m2")
_FC_TYPES = ("f32", "f16", "bf16")


def _infer_fake_convert(ctx: OpContext):
    dst = ctx.attr_choice("destination_type", {t: t for t in _F8_TYPES}, None)
    if dst is None:
        raise ModelFormatError("the required attribute 'destination_type' is missing", layer=ctx.ref,
                               hint='write destination_type="f8e4m3" or "f8e5m2"')
    et = ctx.common_element_type(*range(len(ctx.inputs)))
    if et != DYNAMIC and et.name not in _FC_TYPES:
        ctx.fail(f"FakeConvert takes f32, f16 or bf16, got {et}", position=0)
    data, scale = ctx.inputs[0].shape, ctx.inputs[1].shape
    if len(ctx.inputs) == 3:
        shift = ctx.inputs[2].shape
        if equal_merge(scale, shift) is None:
            ctx.fail(f"shift {shift} is not compatible with scale {scale}", position=2,
                     hint="scale and shift have the same shape")
    merged = numpy_merge(data, scale)
    if merged is None:
        ctx.fail(f"scale {scale} does not broadcast to data {data}", position=1)
    widened = merged.dims is not None and data.dims is not None and (
        len(merged.dims) != len(data.dims) or any(merge_dims(a, b) is None for a, b in zip(data.dims, merged.dims)))
    if widened:
        ctx.fail(f"scale {scale} would broadcast data {data} to {merged}: FakeConvert broadcasts one way only",
                 position=1)
    return [TensorSpec(et, merged)], {"dst": dst}


def fake_convert(x: np.ndarray, scale: np.ndarray, shift: np.ndarray | None = None, *, dst: str) -> np.ndarray:
    """FakeConvert as the reference computes it (see the module docstring); a new array of ``x``'s dtype."""
    dtype = x.dtype
    if shift is None:
        shift = np.zeros_like(scale)
    narrow = _narrow_rounding(dtype)
    with np.errstate(all="ignore"):
        x32, s32, o32 = (np.asarray(a, np.float32) for a in (x, scale, shift))
        y = narrow(narrow(x32 * s32) - o32)
        # (f16: y is already an f16 value; f32 and bf16 values go through Convert's f32 -> f16)
        half = y.astype(np.float16) if dtype == np.float16 else convert_values(y, "f32", "f16", np.dtype(np.float16))
        half = np.broadcast_to(half, x.shape)
        bits = np.ascontiguousarray(half).view(np.uint16)
        fake = (_e5m2_bits(bits) if dst == "f8e5m2" else _e4m3_bits(bits, half)).view(np.float16)
        back = fake.astype(np.float32)  # (exact; NaN quietened as the reference's widening does)
        out = narrow(narrow(back + o32) / s32)
    return np.ascontiguousarray(out.astype(dtype, copy=False)) if dtype != np.float32 else np.asarray(out)


def _narrow_rounding(dtype: np.dtype):
    """Rounding of one f32 result to ``dtype`` as OpenVINO's arithmetic classes do (identity for f32)."""
    if dtype == np.float16:
        return lambda v: f32_to_f16_sw(np.asarray(v, np.float32)).astype(np.float32)
    if dtype == np.float32:
        return lambda v: np.asarray(v, np.float32)
    return lambda v: bf16_as_openvino_rounds(np.asarray(v, np.float32), dtype).astype(np.float32)


def _e5m2_bits(bits: np.ndarray) -> np.ndarray:
    """The reference's f8e5m2 emulation on f16 bits: round to nearest even (not inf/NaN, not from the top
    binade), truncate to 2 mantissa bits; ±inf saturates to ±57344, NaN stays NaN."""
    v = bits.astype(np.int32)
    can_round = ((v & 0x7F00) < 0x7B00) & ((v & 0x7C00) != 0x7C00)
    up = ((v & 0xFF) > 0x80) | ((v & 0x180) == 0x180)
    v = (v + ((up & can_round).astype(np.int32) << 8)) & 0xFFFF
    v = np.where((v & 0x7FFF) == 0x7C00, (v & 0x8000) | 0x7B00, v)
    return (v & 0xFF00).astype(np.uint16)


def _e4m3_bits(bits: np.ndarray, half: np.ndarray) -> np.ndarray:
    """The reference's f8e4m3 emulation on f16 bits: |x| < 2**-9 flushed to zero, exponents above 8 (inf, NaN)
    saturated to ±448, round to nearest even on 3 mantissa bits, subnormal exponents (-7..-9) truncated by
    their shift (the f16 implicit bit is not carried: the reference's own rounding)."""
    v = np.where(np.abs(half.astype(np.float32)) < np.float32(2.0 ** -9), 0, bits.astype(np.int32))
    exp = ((v & 0x7C00) >> 10) - 15
    sign = v & 0x8000
    mant = v & 0x3FF
    can_round = (v & 0x7FFF) < 0x5F80
    big = exp > 8
    tiny = ~big & (exp < -9)
    naninf = ((v & 0x7C00) == 0x7C00) | big
    mant = np.where(big, 0x300, np.where(tiny, 0, mant))
    exp = np.where(big, 8, np.where(tiny, -15, exp))
    mant = np.where((exp == 8) & (mant >= 0x300), 0x300, mant)
    up = ((mant & 0x7F) > 0x40) | ((mant & 0xC0) == 0xC0)
    mant = mant + ((up & ~naninf & can_round).astype(np.int32) << 7)
    shift = np.where(exp < -6, -6 - exp, 0)
    mant = ((mant >> shift) & 0xFF80) << shift
    mant = mant + ((exp + 15) << 10)
    return ((mant | sign) & 0xFFFF).astype(np.uint16)


def _fc_batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]):
    """Element-wise over ``data``; scale and shift may carry the same batch axis or be 1 there."""
    if axes[0] is None:
        return "scale or shift has a batch axis but data has none" if any(a is not None for a in axes[1:]) \
            else [None]
    return aligned_batch(inputs, outputs, axes)


OPS = (
    OpDef("FakeQuantize", 1, 1, LATEST_OPSET, ("data",) + _LIMITS, _infer, fake_quantize,
          attrs=(Attr("levels"), Attr("auto_broadcast", "numpy", ("numpy", "none", "explicit", "pdpd"))),
          batch=_batch, explain=_explain),
    OpDef("FakeConvert", 13, 13, LATEST_OPSET, ("data", "scale", "shift"), _infer_fake_convert, fake_convert,
          attrs=(Attr("destination_type", None, _F8_TYPES),), min_inputs=2, batch=_fc_batch),
)
