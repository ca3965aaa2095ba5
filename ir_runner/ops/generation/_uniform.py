"""RandomUniform-8's generators and kernel (``random_uniform.py`` has the semantics), shared with Multinomial-13,
which draws its numbers the same way: a private module of the family."""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ..toolkit.numeric import Arith

MASK32 = np.uint64(0xFFFFFFFF)
PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
PHILOX_W = (np.uint64(0x9E3779B9), np.uint64(0xBB67AE85))


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
