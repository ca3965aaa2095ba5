"""StringToHashBucket (openvino-tokenizers, ``extension`` opset): each string's 64-bit FarmHash (the
``farmhashna::Hash64`` that TensorFlow's Fingerprint64 is) modulo ``num_buckets``, as i64. Written from
``string_to_hash_bucket.cpp`` (2026.4); all arithmetic is unsigned 64-bit, bytes read little-endian.
"""

from __future__ import annotations

import numpy as np

from ...types import ELEMENT_TYPES, TensorSpec
from ..api import Attr, OpContext, OpDef
from ._ragged import expect_string, items

_MASK = (1 << 64) - 1
K0, K1, K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F


def _fetch(s: bytes, at: int) -> int:
    return int.from_bytes(s[at:at + 8], "little")


def _fetch32(s: bytes, at: int) -> int:
    return int.from_bytes(s[at:at + 4], "little")


def _rotate(value: int, shift: int) -> int:
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _len0_to_16(s: bytes) -> int:
    n = len(s)
    if n >= 8:
        mul = (K2 + n * 2) & _MASK
        a = (_fetch(s, 0) + K2) & _MASK
        b = _fetch(s, n - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _len16(c, d, mul)
    if n >= 4:
        mul = (K2 + n * 2) & _MASK
        return _len16((n + (_fetch32(s, 0) << 3)) & _MASK, _fetch32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * K2) & _MASK) ^ ((z * K0) & _MASK)) * K2) & _MASK
    return K2


def _mix_ends(s: bytes, first: int) -> tuple[int, int, int, int, int, int, int]:
    """(mul, a, b, c, d, y, y's partner) of the first and last 16 bytes: the start of 17..64 byte hashing
    (``first`` multiplies the first 8 bytes)."""
    n = len(s)
    mul = (K2 + n * 2) & _MASK
    a = (_fetch(s, 0) * first) & _MASK
    b = _fetch(s, 8)
    c = (_fetch(s, n - 8) * mul) & _MASK
    d = (_fetch(s, n - 16) * K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    return mul, a, b, c, d, y, (a + _rotate((b + K2) & _MASK, 18) + c) & _MASK


def _len17_to_32(s: bytes) -> int:
    mul, *_, y, partner = _mix_ends(s, K1)
    return _len16(y, partner, mul)


def _len33_to_64(s: bytes) -> int:
    n = len(s)
    mul, a, _, _, _, y, partner = _mix_ends(s, K2)
    z = _len16(y, partner, mul)
    e = (_fetch(s, 16) * mul) & _MASK
    f = _fetch(s, 24)
    g = ((y + _fetch(s, n - 32)) * mul) & _MASK
    h = ((z + _fetch(s, n - 24)) * mul) & _MASK
    return _len16((_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
                  (e + _rotate((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak32(s: bytes, at: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = _fetch(s, at), _fetch(s, at + 8), _fetch(s, at + 16), _fetch(s, at + 24)
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def hash64(s: bytes) -> int:
    """farmhashna::Hash64 of ``s`` (an unsigned 64-bit int)."""
    n = len(s)
    if n <= 16:
        return _len0_to_16(s)
    if n <= 32:
        return _len17_to_32(s)
    if n <= 64:
        return _len33_to_64(s)
    seed = 81
    x = seed
    y = (seed * K1 + 113) & _MASK
    z = (_shift_mix((y * K2 + 113) & _MASK) * K2) & _MASK
    v = (0, 0)
    w = (0, 0)
    x = (x * K2 + _fetch(s, 0)) & _MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    at = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch(s, at + 8)) & _MASK, 37) * K1) & _MASK
        y = (_rotate((y + v[1] + _fetch(s, at + 48)) & _MASK, 42) * K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _fetch(s, at + 40)) & _MASK
        z = (_rotate((z + w[0]) & _MASK, 33) * K1) & _MASK
        v = _weak32(s, at, (v[1] * K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak32(s, at + 32, (z + w[1]) & _MASK, (y + _fetch(s, at + 16)) & _MASK)
        z, x = x, z
        at += 64
        if at == end:
            break
    mul = (K1 + ((z & 0xFF) << 1)) & _MASK
    at = last64
    w = ((w[0] + ((n - 1) & 63)) & _MASK, w[1])
    v = ((v[0] + w[0]) & _MASK, v[1])
    w = ((w[0] + v[0]) & _MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch(s, at + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v[1] + _fetch(s, at + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _fetch(s, at + 40)) & _MASK
    z = (_rotate((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak32(s, at, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak32(s, at + 32, (z + w[1]) & _MASK, (y + _fetch(s, at + 16)) & _MASK)
    z, x = x, z
    return _len16((_len16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & _MASK,
                  (_len16(v[1], w[1], mul) + x) & _MASK, mul)


def infer_string_to_hash_bucket(ctx: OpContext):
    if len(ctx.inputs) != 3:
        ctx.fail(f"takes 3 inputs (a string tensor), got {len(ctx.inputs)}")
    expect_string(ctx, 0)
    buckets = ctx.attr_int("num_buckets", 1)
    if buckets <= 0:
        ctx.fail(f"num_buckets must be positive, got {buckets}")
    return [TensorSpec(ELEMENT_TYPES["i64"], ctx.inputs[0].shape)], {"buckets": buckets}


def string_to_hash_bucket(begins: np.ndarray, ends: np.ndarray, symbols: np.ndarray, *, buckets: int) -> np.ndarray:
    """StringToHashBucket: each string's hash64 modulo ``num_buckets`` (i64)."""
    values = [hash64(s) % buckets for s in items(begins, ends, symbols)]
    return np.array(values, np.uint64).astype(np.int64).reshape(begins.shape)


OPS = (
    OpDef("StringToHashBucket", 1, 0, 0, ("begins", "ends", "symbols"), infer_string_to_hash_bucket,
          string_to_hash_bucket, domain="extension", attrs=(Attr("num_buckets"),)),
)
