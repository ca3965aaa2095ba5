"""RandomUniform-8: a tensor of ``output_shape`` filled with uniform random numbers in ``[min, max)``, drawn as
OpenVINO's reference draws them, bit for bit for given seeds (``ov::reference::random_uniform``).

- ``alignment="tensorflow"`` (the default): Philox-4x32-10 with key ``global_seed`` and counter
  ``(block, op_seed)``; each block of four 32-bit words gives four values (two for f64 and i64, which take two
  words each). A float is made from the word's low mantissa bits as ``1.m - 1`` (f32: 23 bits, f16: 10,
  bf16: 7, f64: 52 from two words), then ``r * (max - min) + min`` in the output type (f16 and bf16: each
  operation in f32, rounded, as ``ov::float16``/``ov::bfloat16``); integers are ``word % (max - min) + min`` in
  unsigned arithmetic (i64: the two words ``high << 32 | low``).
- ``alignment="pytorch"``: the 32-bit outputs of MT19937 seeded with the low 32 bits of ``global_seed``
  (``op_seed`` unused); floats ``(word & (2**d - 1)) / 2**d`` (f32: d = 24, f16: 11, bf16: 8, f64: 53 from
  two words) then ``r * (max - min) + min`` computed in f32 (f64 for f64) and rounded once; integers as above
  (i64 from one word when min and max are below 2**32, as PyTorch does).

Deviations: OpenVINO's node continues its random sequence on every evaluation (the next run draws the next
numbers); ir-run draws every run from the initial state, as a fresh model's first inference. Both seeds 0 mean a
non-deterministic sequence in OpenVINO (a seed from the clock): ir-run then draws a fresh seed from the operating
system each time the kernel runs: on every run, or once at load when every input is constant (the layer is then
evaluated at load, as constant layers are).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, ModelFormatError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.numeric import Arith
from ..toolkit.partial import unknown_dims, value_dims

NAMES = ("output_shape", "min", "max")
OUTPUT_TYPES = ("f16", "bf16", "f32", "f64", "i32", "i64")
ALIGNMENTS = {"tensorflow": "tensorflow", "pytorch": "pytorch"}
MASK32 = np.uint64(0xFFFFFFFF)
PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
PHILOX_W = (np.uint64(0x9E3779B9), np.uint64(0xBB67AE85))


def _seed(ctx: OpContext, name: str) -> int:
    """A seed attribute: read as an int64, as OpenVINO's IR reader does (it refuses larger values), used as the
    uint64 it holds (a negative seed wraps)."""
    return ctx.attr_int(name, 0) % 2**64


def infer_random_uniform(ctx: OpContext):
    et = ctx.attr_element_type("output_type")
    if et.name not in OUTPUT_TYPES:
        raise ModelFormatError(f"attribute output_type={et.name!r} must be one of {', '.join(OUTPUT_TYPES)}",
                               layer=ctx.ref)
    shape_spec = ctx.inputs[0]
    if shape_spec.element_type.kind not in ("int", "dynamic") or shape_spec.element_type.bits not in (32, 64, 0):
        ctx.fail(f"output_shape must be i32 or i64, got {shape_spec.element_type}", position=0)
    if shape_spec.shape.rank is not None and shape_spec.shape.rank != 1:
        ctx.fail(f"output_shape must be 1-D, got {shape_spec.shape.brief()}", position=0)
    for position in (1, 2):
        spec = ctx.inputs[position]
        if spec.element_type.kind != "dynamic" and spec.element_type != et:
            ctx.fail(f"{NAMES[position]} must have the output type {et}, got {spec.element_type}", position=position)
        rank = spec.shape.rank
        if rank is not None and not (rank == 0 or (rank == 1 and spec.shape.dims[0].contains(1))):
            ctx.fail(f"{NAMES[position]} must be a scalar or have one element, got {spec.shape.brief()}",
                     position=position)
    low, high = ctx.const_value(1), ctx.const_value(2)
    if low is not None and high is not None and low.size == high.size == 1:
        if not low.reshape(-1)[0] < high.reshape(-1)[0]:
            ctx.fail(f"min must be less than max, got {low.reshape(-1)[0]} and {high.reshape(-1)[0]}", position=1)
    params = {"dtype": et.dtype, "global_seed": _seed(ctx, "global_seed"), "op_seed": _seed(ctx, "op_seed"),
              "alignment": ctx.attr_choice("alignment", ALIGNMENTS, "tensorflow")}
    value = ctx.partial_value(0)
    if value is not None:
        return [TensorSpec(et, PartialShape(value_dims(ctx, value, 0)))], params
    length = shape_spec.shape.dims[0] if shape_spec.shape.rank == 1 else DYNAMIC_DIM
    shape = PartialShape(unknown_dims(ctx, length.lo, 0)) if length.is_static else DYNAMIC_SHAPE
    return [TensorSpec(et, shape)], params


def philox(blocks: int, key: int, counter: int) -> np.ndarray:
    """Philox-4x32-10 words of ``blocks`` consecutive blocks (block ``i``: counter ``(i, counter)`` as four 32-bit
    words, low first), as OpenVINO's TensorFlow-aligned generator -> (blocks, 4) uint32."""
    n = np.arange(blocks, dtype=np.uint64)
    c = [n & MASK32, n >> np.uint64(32), np.full(blocks, counter & 0xFFFFFFFF, np.uint64),
         np.full(blocks, counter >> 32, np.uint64)]
    k = [np.uint64(key & 0xFFFFFFFF), np.uint64(key >> 32)]
    for round_ in range(10):
        p0, p1 = PHILOX_M[0] * c[0], PHILOX_M[1] * c[2]  # (32 x 32 bits: exact in 64)
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & MASK32, (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & MASK32]
        if round_ < 9:
            k = [(k[0] + PHILOX_W[0]) & MASK32, (k[1] + PHILOX_W[1]) & MASK32]
    return np.stack(c, axis=1).astype(np.uint32)


def mt19937(count: int, seed: int) -> np.ndarray:
    """The first ``count`` 32-bit outputs of MT19937 seeded (``init_genrand``) with the low 32 bits of ``seed``."""
    generator = np.random.MT19937(0)
    generator._legacy_seeding(seed & 0xFFFFFFFF)
    return generator.random_raw(count).astype(np.uint32)


def random_uniform(output_shape: np.ndarray, min: np.ndarray, max: np.ndarray, *, dtype: np.dtype,  # noqa: A002
                   global_seed: int, op_seed: int, alignment: str) -> np.ndarray:
    """RandomUniform-8 (see the module docstring)."""
    shape = tuple(int(d) for d in np.asarray(output_shape).reshape(-1))
    if any(d < 0 for d in shape):
        raise InputError(f"output_shape {list(shape)} has a negative dim", port="input 0 (output_shape)")
    count = int(np.prod(shape, dtype=np.int64))
    low, high = np.asarray(min).reshape(-1)[0], np.asarray(max).reshape(-1)[0]
    if global_seed == 0 and op_seed == 0:
        global_seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    dtype = np.dtype(dtype)
    wide = dtype.itemsize == 8
    if alignment == "tensorflow":
        words = philox(-(-count // (2 if wide else 4)), global_seed, op_seed).reshape(-1)
        values = _tensorflow(words, dtype, low, high)
    else:
        pairs = wide and not (dtype == np.int64 and low <= 0xFFFFFFFF and high <= 0xFFFFFFFF)
        values = _pytorch(mt19937(-(-count // (2 if pairs else 4)) * 4, global_seed), dtype, low, high, pairs)
    return np.ascontiguousarray(values[:count]).reshape(shape)


def _pairs(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return words[0::2].astype(np.uint64), words[1::2].astype(np.uint64)


def _tensorflow(words: np.ndarray, dtype: np.dtype, low, high) -> np.ndarray:
    if dtype.kind == "i":
        span = np.uint64((int(high) - int(low)) % 2**64)
        if dtype == np.int32:
            span32 = np.uint32(int(span) % 2**32)
            return (words % span32 + np.uint32(int(low) % 2**32)).view(np.int32)
        first, second = _pairs(words)
        return (((second << np.uint64(32)) + first) % span + np.uint64(int(low) % 2**64)).view(np.int64)
    if dtype == np.float64:
        first, second = _pairs(words)
        bits = (np.uint64(1023) << np.uint64(52)) | ((first & np.uint64(0xFFFFF)) << np.uint64(32)) | second
        return _scale(bits.view(np.float64) - 1.0, dtype, low, high)
    if dtype == np.float32:
        unit = (np.uint32(0x3F800000) | (words & np.uint32(0x7FFFFF))).view(np.float32) - np.float32(1)
    elif dtype == np.float16:
        unit = (np.uint16(0x3C00) | (words.astype(np.uint16) & np.uint16(0x3FF))).view(np.float16) - np.float16(1)
    else:
        unit = (np.uint16(0x3F80) | (words.astype(np.uint16) & np.uint16(0x7F))).view(dtype).astype(np.float32) - 1
        unit = unit.astype(dtype)  # (exact: a multiple of 2**-7 below 1)
    return _scale(unit, dtype, low, high)


def _scale(unit: np.ndarray, dtype: np.dtype, low, high) -> np.ndarray:
    """``unit * (high - low) + low`` in the output type's arithmetic."""
    ar = Arith(dtype)
    return ar.add(ar.mul(unit, ar.sub(ar.of(high), ar.of(low))), ar.of(low))


def _pytorch(words: np.ndarray, dtype: np.dtype, low, high, pairs: bool) -> np.ndarray:
    if dtype.kind == "i":
        span = (int(high) - int(low)) % 2**64
        if dtype == np.int32:
            return (words % np.uint32(span % 2**32) + np.uint32(int(low) % 2**32)).view(np.int32)
        if not pairs:
            return (words.astype(np.int64) % np.int64(span) + np.int64(low)).astype(np.int64)
        first, second = _pairs(words)
        return (((first << np.uint64(32)) + second) % np.uint64(span)).view(np.int64) + np.int64(low)
    if dtype == np.float64:
        first, second = _pairs(words)
        unit = (((first << np.uint64(32)) + second) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
        return unit * (np.float64(high) - np.float64(low)) + np.float64(low)
    digits = {np.dtype(np.float32): 24, np.dtype(np.float16): 11}.get(dtype, 8)
    unit = (words & np.uint32(2**digits - 1)).astype(np.float32) * np.float32(2.0**-digits)
    if dtype == np.float32:
        return unit * (np.float32(high) - np.float32(low)) + np.float32(low)
    span = Arith(dtype).sub(Arith(dtype).of(high), Arith(dtype).of(low)).astype(np.float32)
    return Arith(dtype).of(unit * span + np.float32(low))


def _batch(params, inputs, outputs, axes):
    return "a generator: its values depend on every element's position in the whole tensor"


OPS = (
    OpDef("RandomUniform", 8, 8, LATEST_OPSET, NAMES, infer_random_uniform, random_uniform,
          roles=("shape", "data", "data"), batch=_batch,
          attrs=(Attr("output_type", None, OUTPUT_TYPES), Attr("global_seed", "0"), Attr("op_seed", "0"),
                 Attr("alignment", "tensorflow", tuple(ALIGNMENTS)))),
)
