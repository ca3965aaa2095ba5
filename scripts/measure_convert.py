"""Measure what OpenVINO's core reference Convert-1 computes for every element-type pair.

For each (src, dst) pair of the 18 element types below, the script builds an
``opset1.convert`` node, runs ``node.evaluate()`` (OpenVINO's core reference
kernel, the same code that constant-folding runs) on corner values plus random
values, and compares it bit for bit with:

* ``astype``  - plain numpy / ml_dtypes ``src.astype(dst)``,
* ``rule``    - the deterministic numpy formulation written down in
  ``docs/convert-semantics.md`` (function ``rule`` below),
* ``cpu``     - the CPU plugin (``INFERENCE_PRECISION_HINT=f32``), on the small set only.

It prints one line per pair (counts of differing elements and a few examples) and,
with ``--npz``, writes the small case file used by the tests.

Run from the repository root::

    python scripts/measure_convert.py                      # full measurement, prints the table
    python scripts/measure_convert.py --quick              # small sets only (a few seconds)
    python scripts/measure_convert.py --npz tests/data/convert_reference.npz

Exit status is 1 if ``rule`` differs from the reference anywhere.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import ml_dtypes
import numpy as np
import openvino as ov
from openvino import opset1

from ir_runner.ops.toolkit import convert_rules as rules

# ----------------------------------------------------------------------------- types

TYPES: dict[str, tuple[ov.Type, np.dtype]] = {
    "boolean": (ov.Type.boolean, np.dtype(np.bool_)),
    "u1": (ov.Type.u1, np.dtype(np.uint8)),
    "u4": (ov.Type.u4, np.dtype(np.uint8)),
    "i4": (ov.Type.i4, np.dtype(np.int8)),
    "u8": (ov.Type.u8, np.dtype(np.uint8)),
    "i8": (ov.Type.i8, np.dtype(np.int8)),
    "u16": (ov.Type.u16, np.dtype(np.uint16)),
    "i16": (ov.Type.i16, np.dtype(np.int16)),
    "u32": (ov.Type.u32, np.dtype(np.uint32)),
    "i32": (ov.Type.i32, np.dtype(np.int32)),
    "u64": (ov.Type.u64, np.dtype(np.uint64)),
    "i64": (ov.Type.i64, np.dtype(np.int64)),
    "f16": (ov.Type.f16, np.dtype(np.float16)),
    "bf16": (ov.Type.bf16, np.dtype(ml_dtypes.bfloat16)),
    "f32": (ov.Type.f32, np.dtype(np.float32)),
    "f64": (ov.Type.f64, np.dtype(np.float64)),
    "f8e4m3": (ov.Type.f8e4m3, np.dtype(ml_dtypes.float8_e4m3fn)),
    "f8e5m2": (ov.Type.f8e5m2, np.dtype(ml_dtypes.float8_e5m2)),
}
PACKED = {"u1": 1, "u4": 4, "i4": 4}  # sub-byte types; values kept unpacked in uint8/int8
INT_BITS = {
    "u1": 1,
    "u4": 4,
    "i4": 4,
    "u8": 8,
    "i8": 8,
    "u16": 16,
    "i16": 16,
    "u32": 32,
    "i32": 32,
    "u64": 64,
    "i64": 64,
}
SIGNED = {"i4", "i8", "i16", "i32", "i64"}
FLOATS = ("f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2")
NARROW_FLOATS = ("f16", "bf16", "f8e4m3", "f8e5m2")  # no native numpy arithmetic: widen to f32
BITS_STORED = ("bf16", "f8e4m3", "f8e5m2")  # stored in the npz as uint16/uint8 bit patterns


def is_int(t: str) -> bool:
    return t in INT_BITS


# ----------------------------------------------------------------------------- OpenVINO side


def _pack(x: np.ndarray, t: str) -> np.ndarray:
    """Pack sub-byte values: u4/i4 element 0 in the low nibble, u1 element 0 in the MSB."""
    b = PACKED[t]
    per = 8 // b
    u = (x.astype(np.int64) & ((1 << b) - 1)).astype(np.uint8)
    u = np.concatenate([u, np.zeros((-len(u)) % per, np.uint8)]).reshape(-1, per)
    shifts = np.arange(7, -1, -1, dtype=np.uint8) if t == "u1" else np.array([0, 4], np.uint8)
    return np.bitwise_or.reduce(u << shifts, axis=1).astype(np.uint8)


def _unpack(raw: np.ndarray, t: str, n: int) -> np.ndarray:
    b = PACKED[t]
    shifts = np.arange(7, -1, -1, dtype=np.uint8) if t == "u1" else np.array([0, 4], np.uint8)
    v = ((raw[:, None] >> shifts) & ((1 << b) - 1)).reshape(-1)[:n]
    if t == "i4":
        return ((v.astype(np.int16) ^ 8) - 8).astype(np.int8)
    return v.astype(np.uint8)


def to_tensor(x: np.ndarray, t: str) -> ov.Tensor:
    ovt, dt = TYPES[t]
    tensor = ov.Tensor(ovt, [len(x)])
    raw = _pack(x, t) if t in PACKED else np.ascontiguousarray(x.astype(dt, copy=False)).view(np.uint8)
    tensor.data.reshape(-1).view(np.uint8)[:] = raw.reshape(-1)
    return tensor


def from_tensor(tensor: ov.Tensor, t: str, n: int) -> np.ndarray:
    return from_raw(np.array(tensor.data).reshape(-1).view(np.uint8).copy(), t, n)


def from_raw(raw: np.ndarray, t: str, n: int) -> np.ndarray:
    if t in PACKED:
        return _unpack(raw, t, n)
    return raw.view(TYPES[t][1]).copy()


def ov_reference(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """OpenVINO core reference: Convert node's evaluate() on the whole array at once."""
    p = opset1.parameter([len(x)], TYPES[src][0])
    node = opset1.convert(p, TYPES[dst][0])
    out = ov.Tensor(TYPES[dst][0], [len(x)])
    if not node.evaluate([out], [to_tensor(x, src)]):
        raise RuntimeError(f"evaluate returned False for {src}->{dst}")
    return from_tensor(out, dst, len(x))


def ov_reference_scalar(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Reference evaluated one element at a time (only the kernels' scalar tail loop runs)."""
    return np.concatenate([ov_reference(x[i : i + 1], src, dst) for i in range(len(x))])


def ov_constant_folded(x: np.ndarray, src: str, dst: str) -> np.ndarray | None:
    """Const -> Convert -> Result, folded by the ConstantFolding pass (None if not folded)."""
    from openvino.passes import ConstantFolding, Manager

    const = ov.op.Constant(to_tensor(x, src))
    model = ov.Model([opset1.convert(const, TYPES[dst][0])], [])
    manager = Manager()
    manager.register_pass(ConstantFolding())
    manager.run_passes(model)
    ops = [op for op in model.get_ordered_ops() if op.get_type_name() == "Constant"]
    if len(ops) != 1 or ops[0].get_element_type() != TYPES[dst][0]:
        return None
    return from_raw(np.array(ops[0].get_data()).reshape(-1).view(np.uint8).copy(), dst, len(x))


_CORE: list[ov.Core] = []


def ov_cpu(x: np.ndarray, src: str, dst: str) -> np.ndarray | str:
    if not _CORE:
        _CORE.append(ov.Core())
    try:
        p = opset1.parameter([len(x)], TYPES[src][0])
        model = ov.Model([opset1.convert(p, TYPES[dst][0])], [p])
        compiled = _CORE[0].compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        request = compiled.create_infer_request()
        request.set_input_tensor(to_tensor(x, src))
        request.infer()
        return from_tensor(request.get_output_tensor(), dst, len(x))
    except Exception as e:  # noqa: BLE001 - the plugin rejects some types; record why
        return f"error: {str(e).splitlines()[0][:60]}"


# ----------------------------------------------------------------------------- plain numpy


def plain_astype(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """What a naive kernel would do: ``x.astype(dst)``; packed dst: astype to (u)int8 then mask."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if dst in PACKED:
            v = x.astype(TYPES[dst][1]).astype(np.int64) & ((1 << PACKED[dst]) - 1)
            return rules.convert_values(v, "i64", dst, TYPES[dst][1])
        return x.astype(TYPES[dst][1])


# ----------------------------------------------------------------------------- the rule


def _f32_to_bf16_ov(x32: np.ndarray) -> np.ndarray:
    """The reference's bf16 rounding, ``(u + ((u & 0x10000) >> 1)) >> 16`` on the f32 bits: it truncates
    when bit 16 is 0 and the dropped half exceeds 0x8000 (ir-run rounds to nearest even instead)."""
    u = np.ascontiguousarray(x32, dtype=np.float32).view(np.uint32)
    return ((u + ((u & np.uint32(0x10000)) >> np.uint32(1))) >> np.uint32(16)).astype(np.uint16).view(
        ml_dtypes.bfloat16
    )


def _vector_f32_to_u32(x: np.ndarray) -> np.ndarray:
    """The reference's vectorised f32 -> u32 loop (index < 4*(n//4)): ``x >= 2**31 ? cvtt32(x - 2**31) ^ 2**31
    : cvtt32(x)``; it differs from ir-run's rule only outside ``[-2**31, 2**32)``."""
    wide = x.astype(np.float64)
    high = wide >= 2.0**31
    low_part = rules.cvtt(np.where(high, 0.0, wide), 32)
    high_part = rules.cvtt(np.where(high, wide - 2.0**31, 0.0), 32) ^ np.int64(-(2**31))
    return np.where(high, high_part, low_part).astype(np.uint32)


def rule(x: np.ndarray, src: str, dst: str, vector_u32: bool = True) -> np.ndarray:
    """OpenVINO's reference Convert as ir-run computes it, plus the two places where ir-run deliberately
    differs, emulated here so that the comparison with the reference is exact: bf16 rounding, and f32 ->
    u32 out of range in the vectorised loop (``vector_u32``; False is the scalar tail, ir-run's rule)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if dst == "bf16":
            if src == "boolean":
                return _f32_to_bf16_ov(x.view(np.int8).astype(np.float32))
            if src in NARROW_FLOATS:
                return _f32_to_bf16_ov(rules.to_f32_value(x, src))
            return _f32_to_bf16_ov(x.astype(np.float32))
        if src == "f32" and dst == "u32" and vector_u32:
            return _vector_f32_to_u32(x)
        return rules.convert_values(x, src, dst, TYPES[dst][1])


# ----------------------------------------------------------------------------- test values

FLOAT_CORNERS = [
    0.0,
    -0.0,
    0.1,
    -0.1,
    0.5,
    -0.5,
    1.0,
    -1.0,
    1.5,
    -1.5,
    2.5,
    -2.5,
    2.7,
    -2.7,
    3.5,
    7.9,
    -8.5,
    15.5,
    16.0,
    127.0,
    127.9,
    128.0,
    -128.0,
    -128.5,
    -129.0,
    255.0,
    255.5,
    256.0,
    -256.0,
    300.0,
    -300.0,
    32767.0,
    32767.5,
    32768.0,
    -32768.0,
    -32769.0,
    57344.0,
    60000.0,
    61439.0,
    61440.0,
    62000.0,
    65504.0,
    65505.0,
    65519.0,
    65519.99,
    65520.0,
    65535.0,
    65536.0,
    70000.0,
    1e5,
    -65504.0,
    -65520.0,
    -70000.0,
    448.0,
    464.0,
    465.0,
    480.0,
    500.0,
    -500.0,
    240.0,
    232.0,
    248.0,
    2.0**24 + 1,
    2.0**31 - 1,
    2.0**31 - 128,
    2.0**31,
    -(2.0**31),
    -(2.0**31) - 1,
    -(2.0**31) - 256,
    2.0**32 - 1,
    2.0**32 - 256,
    2.0**32,
    2.0**32 + 512,
    -(2.0**32),
    2.0**53 + 1,
    2.0**63 - 1024,
    2.0**63 - 2.0**39,
    2.0**63,
    -(2.0**63),
    -(2.0**63) - 2.0**40,
    2.0**64 - 2048,
    2.0**64 - 2.0**40,
    2.0**64,
    1e10,
    -1e10,
    1e20,
    -1e20,
    3.4e38,
    -3.4e38,
    3.4028234663852886e38,
    3.4028235677973366e38,
    1e300,
    -1e300,
    float("nan"),
    float("-nan"),
    float("inf"),
    float("-inf"),
    1e-40,
    -1e-40,
    1e-45,
    2.0**-149,
    2.0**-126,
    2.0**-24,
    2.0**-25,
    1.5 * 2.0**-25,
    2.0**-14,
    2.0**-9,
    2.0**-10,
    1.5 * 2.0**-10,
    2.0**-16,
    2.0**-17,
    2.0**-40,
    2.0**-100,
    1e-310,
    1 + 2.0**-8,
    1 + 3 * 2.0**-8,
    1 + 2.0**-8 + 2.0**-20,
    1 + 2.0**-11,
    1 + 2.0**-11 + 2.0**-40,
    1 + 3 * 2.0**-11,
    1 + 2.0**-4,
    1 + 3 * 2.0**-4,
    1 + 2.0**-3,
    1 + 3 * 2.0**-3,
    1 + 2.0**-24,
    1 + 2.0**-24 + 2.0**-50,
    9.49908924,
    -0.0976853892,
    367.877655,
    61439.0,
] + [float(np.nextafter(np.float32(2.0**-k), np.float32(0))) for k in range(14, 27)]
F32_BIT_CORNERS = [
    0x7F800001,
    0x7FC00001,
    0xFF800001,
    0x7FBFFFFF,
    0xFFFFFFFF,
    0x7F802000,
    0x7FFFE000,
    0x7F810000,
    0x3EF0CCCC,
    0x3F808000,
    0x3F818000,
    0x3F80FFFF,
    0x7F7F8000,
    0x7F7FFFFF,
    0x7F7EFFFF,
    0x00000001,
    0x807FFFFF,
    0x3F7FFFFF,
]
F64_BIT_CORNERS = [
    0x7FF0000000000001,
    0x7FF8000000000001,
    0x7FF0000020000000,
    0xFFF8000000000001,
    0x7FF4000000000000,
    0x0000000000000001,
    0x3FF0000010000000,
    0x3FF0000010000001,
]
INT_CORNERS = [
    0,
    1,
    -1,
    2,
    3,
    7,
    8,
    -8,
    -9,
    15,
    16,
    127,
    128,
    -128,
    -129,
    255,
    256,
    257,
    300,
    -300,
    2049,
    2051,
    4097,
    4098,
    4099,
    32767,
    32768,
    -32768,
    -32769,
    57344,
    61440,
    65504,
    65505,
    65519,
    65520,
    65535,
    65536,
    70000,
    -65504,
    -65520,
    -70000,
    0x10080,
    0x10180,
    0x10081,
    0x101FF,
    2**24 + 1,
    2**24 + 3,
    2**31 - 1,
    2**31,
    -(2**31),
    -(2**31) - 1,
    2**32 - 1,
    2**32,
    2**53 + 1,
    2**53 + 3,
    2**63 - 1,
    -(2**63),
    -(2**63) + 1,
    2**63,
    2**64 - 1,
    2**63 + 2**39,
    2**63 + 2**40 + 1,
    0x1234567887654321,
    0xFFFFFF7FFFFFFFFF,
    2**62 + 2**38 + 1,
    2**62 + 2**38,
    -(2**62 + 2**38 + 1),
    2**53 + 2**29 + 1,
    2**63 + 2**39 + 1,
    2**63 + 2**40 + 2**39 + 1,
]


def corner_values(src: str) -> np.ndarray:
    dt = TYPES[src][1]
    if src == "boolean":
        return np.array([False, True])
    if is_int(src) and INT_BITS[src] <= 8:
        return big_values(src, np.random.default_rng(0), 0)  # exhaustive
    if is_int(src):
        b = INT_BITS[src]
        lo, hi = (-(2 ** (b - 1)), 2 ** (b - 1) - 1) if src in SIGNED else (0, 2**b - 1)
        vals = sorted({v for v in INT_CORNERS + [lo, hi, lo + 1, hi - 1] if lo <= v <= hi})
        return np.array(vals, dtype=np.int64 if src != "u64" else np.uint64).astype(dt)
    if src in ("f8e4m3", "f8e5m2"):
        return np.arange(256, dtype=np.uint8).view(dt)  # exhaustive
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        v = np.array(FLOAT_CORNERS, dtype=np.float64)
        if src == "f64":
            v = np.concatenate([v, np.array(F64_BIT_CORNERS, np.uint64).view(np.float64)])
        elif src == "f32":
            v = np.concatenate([v.astype(np.float32), np.array(F32_BIT_CORNERS, np.uint32).view(np.float32)])
        elif src == "f16":
            v = np.concatenate(
                [
                    v.astype(np.float16),
                    np.array(
                        [0x7C01, 0x7D00, 0x7E00, 0xFE00, 0x7FFF, 0xFC01, 0x0001, 0x8001, 0x03FF, 0x7BFF], np.uint16
                    ).view(np.float16),
                ]
            )
        else:  # bf16
            v = np.concatenate(
                [
                    v.astype(dt),
                    np.array(
                        [0x7F81, 0x7FC0, 0xFFC0, 0x7FFF, 0xFF81, 0x0001, 0x7F7F, 0x477F, 0x4780, 0x3F81], np.uint16
                    ).view(dt),
                ]
            )
    v = v.astype(dt)
    _, idx = np.unique(
        np.ascontiguousarray(v).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]), return_index=True
    )
    return v[np.sort(idx)]


def random_values(src: str, n: int, rng: np.random.Generator) -> np.ndarray:
    dt = TYPES[src][1]
    if src == "boolean":
        return rng.integers(0, 2, n).astype(bool)
    if src in PACKED or src in ("u8", "i8"):
        b = INT_BITS[src]
        lo = -(2 ** (b - 1)) if src in SIGNED else 0
        return rng.integers(lo, lo + 2**b, n).astype(dt)
    if is_int(src):
        raw = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
        shift = rng.integers(0, INT_BITS[src], n).astype(np.uint64)  # log-uniform magnitudes
        raw = raw >> shift
        return raw.astype(np.int64 if src in SIGNED else np.uint64).astype(dt)
    width = dt.itemsize * 8
    if width <= 16:
        return rng.integers(0, 2**width, n).astype(np.uint16 if width == 16 else np.uint8).view(dt)
    if src == "f32":
        parts = [rng.integers(0, 2**32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)]
        # exponents that matter (|x| in [2**-30, 2**70]) + ties for bf16/f16 rounding
        e = rng.integers(97, 197, n - n // 2).astype(np.uint32)
        m = rng.integers(0, 2**23, n - n // 2).astype(np.uint32)
        kind = rng.integers(0, 4, n - n // 2)
        m = np.where(kind == 1, (m & ~np.uint32(0xFFFF)) | 0x8000, m)
        m = np.where(kind == 2, (m & ~np.uint32(0x1FFF)) | 0x1000, m)
        s = rng.integers(0, 2, n - n // 2).astype(np.uint32) << np.uint32(31)
        parts.append((s | (e << np.uint32(23)) | m).view(np.float32))
        return np.concatenate(parts)
    parts = [rng.integers(0, 2**63, n // 2, dtype=np.uint64).view(np.float64) * rng.choice([-1.0, 1.0], n // 2)]
    e = rng.integers(1023 - 40, 1023 + 70, n - n // 2).astype(np.uint64)
    m = rng.integers(0, 2**52, n - n // 2, dtype=np.uint64)
    kind = rng.integers(0, 3, n - n // 2)
    m = np.where(kind == 1, (m & ~np.uint64(0x1FFFFFFF)) | np.uint64(0x10000000), m)
    parts.append(((e << np.uint64(52)) | m).view(np.float64))
    return np.concatenate(parts)


def big_values(src: str, rng: np.random.Generator, n_random: int) -> np.ndarray:
    """Large measurement set: exhaustive for <= 16-bit types, random otherwise."""
    dt = TYPES[src][1]
    if src == "boolean":
        return np.array([False, True])
    if src in PACKED:
        b = INT_BITS[src]
        lo = -(2 ** (b - 1)) if src in SIGNED else 0
        return np.arange(lo, lo + 2**b).astype(dt)
    if dt.itemsize == 1:
        return np.arange(256, dtype=np.uint8).view(dt)
    if dt.itemsize == 2:
        return np.arange(65536, dtype=np.uint16).view(dt)
    return np.concatenate([corner_values(src), random_values(src, n_random, rng)])


# ----------------------------------------------------------------------------- comparison


def bitview(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def fmt(v, t: str) -> str:
    if t == "boolean":
        return str(int(bool(v)))
    if is_int(t):
        return str(int(v))
    b = int(bitview(np.array([v], TYPES[t][1]))[0])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        f = float(np.array([v], TYPES[t][1]).astype(np.float64)[0])
    return f"{f:.9g}" if np.isfinite(f) else f"{f}(0x{b:x})"


def diff_idx(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.bool_:
        return np.nonzero(a.view(np.uint8) != b.view(np.uint8))[0]
    return np.nonzero(bitview(a) != bitview(b))[0]


def pad8(x: np.ndarray) -> np.ndarray:
    """Pad to a multiple of 8 elements so every element goes through the vectorised loops."""
    return np.concatenate([x, np.zeros((-len(x)) % 8, x.dtype)])


def examples(x, ref, other, src, dst, k=3):
    d = diff_idx(ref, other)
    return ", ".join(f"{fmt(x[i], src)}->{fmt(ref[i], dst)}/{fmt(other[i], dst)}" for i in d[:k])


def check_boolean_bytes() -> None:
    """A boolean tensor holding bytes other than 0/1 (possible in a raw IR Const)."""
    x = np.array([0, 1, 2, 127, 128, 255], np.uint8).view(np.bool_)
    print("\nboolean tensor with raw bytes [0, 1, 2, 127, 128, 255]:")
    for dst in TYPES:
        r = ov_reference(x, "boolean", dst)
        ok = len(diff_idx(r, rule(x, "boolean", dst))) == 0
        shown = r.view(np.uint8) if dst == "boolean" else r.astype(np.float64) if dst in NARROW_FLOATS else r
        print(f"  ->{dst:<7} {shown.tolist()} rule={'ok' if ok else 'MISMATCH'}")


def _md_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def print_tables() -> None:
    """The evidence tables of docs/convert-semantics.md (reference values, x86-64)."""
    ints = ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "u4", "i4", "u1"]
    vals = [
        2.7,
        -2.7,
        127.9,
        128.0,
        255.5,
        256.0,
        -129.0,
        300.0,
        -300.0,
        70000.0,
        2.0**31,
        -(2.0**31) - 256,
        2.0**32,
        1e10,
        -1e10,
        2.0**63,
        -(2.0**63) - 2.0**40,
        2.0**64,
        1e20,
        float("nan"),
        float("inf"),
        float("-inf"),
    ]
    for src in ("f32", "f64"):
        x = pad8(np.array(vals, TYPES[src][1]))
        cols = {d: ov_reference(x, src, d) for d in ints}
        cols_s = ov_reference_scalar(x[: len(vals)], src, "u32")
        header = ["x"] + ints + (["u32 (scalar tail)"] if src == "f32" else [])
        rows = []
        for i in range(len(vals)):
            row = [fmt(x[i], src)] + [str(int(cols[d][i])) for d in ints]
            if src == "f32":
                row.append(str(int(cols_s[i])))
            rows.append(row)
        _md_table(f"{src} -> integers (reference)", header, rows)

    srcs16 = ["f32", "f64", "bf16", "i32", "i64", "u16"]
    vals = [
        2049.0,
        2051.0,
        4098.0,
        65504.0,
        65505.0,
        65519.0,
        65520.0,
        65535.0,
        70000.0,
        1e5,
        -70000.0,
        float("inf"),
        2.0**-25,
        1.5 * 2.0**-25,
        float(np.nextafter(np.float32(2.0**-15), np.float32(0))),
    ]
    rows = []
    for v in vals:
        row = [f"{v:.9g}"]
        for src in srcs16:
            dt = TYPES[src][1]
            if is_int(src):
                if not np.isfinite(v) or v != int(v) or not (np.iinfo(dt).min <= v <= np.iinfo(dt).max):
                    row.append("")
                    continue
            with np.errstate(all="ignore"):
                x = np.array([v], dtype=dt)
            row.append(fmt(ov_reference(x, src, "f16")[0], "f16"))
        with np.errstate(all="ignore"):
            row.append(fmt(np.array([v]).astype(np.float16)[0], "f16"))
        rows.append(row)
    _md_table(
        "to f16 (reference; first column is the value before conversion to the source type)",
        ["x"] + [f"from {s}" for s in srcs16] + ["numpy f64->f16"],
        rows,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sets only, skip the big random sets")
    ap.add_argument("--npz", help="write the case file here")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU plugin column")
    ap.add_argument("--only", help="comma-separated src types to run")
    ap.add_argument("--tables", action="store_true", help="print the markdown tables of the doc and exit")
    ap.add_argument("--random", type=int, default=200_000, help="random values per wide source type")
    args = ap.parse_args()

    if args.tables:
        print_tables()
        return 0
    rng = np.random.default_rng(20260401)
    names = list(TYPES)
    srcs = args.only.split(",") if args.only else names
    npz: dict[str, np.ndarray] = {}
    matrix: dict[tuple[str, str], int] = {}
    bad = 0
    print(f"openvino {ov.__version__}, numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}")
    print("columns: n | astype!=ref | rule!=ref (vector, scalar) | cpu!=ref | examples src->ref/astype ; src->ref/cpu")
    for src in srcs:
        small = corner_values(src)
        if src in FLOATS or is_int(src) and INT_BITS[src] >= 8 and src != "u8" and src != "i8":
            small = np.concatenate([small, random_values(src, 64, rng)])
        small = pad8(small)  # a multiple of 8 elements: whole-array evaluation takes the vector loops
        big = small if args.quick else big_values(src, rng, args.random)
        for dst in names:
            if dst == src:
                continue
            # vectorised path (whole array, padded to a multiple of 8) on the big set
            xb = pad8(big)
            rb = ov_reference(xb, src, dst)
            n_rule = len(diff_idx(rb, rule(xb, src, dst, vector_u32=True)))
            n_ast = len(diff_idx(rb, plain_astype(xb, src, dst)))
            ast_ex = examples(xb, rb, plain_astype(xb, src, dst), src, dst)
            # scalar path: one element at a time on the small set
            rs = ov_reference_scalar(small, src, dst)
            n_rule_s = len(diff_idx(rs, rule(small, src, dst, vector_u32=False)))
            n_ast_s = len(diff_idx(rs, plain_astype(small, src, dst)))
            matrix[src, dst] = n_ast + n_ast_s
            # the stored case: small set evaluated as one array (exactly what the npz holds)
            r_small = ov_reference(small, src, dst)
            n_pos = len(diff_idx(r_small, rs))  # vectorised loop vs scalar loop disagree
            cf = ov_constant_folded(small, src, dst)
            n_cf = "-" if cf is None else len(diff_idx(r_small, cf))
            cpu_txt = "-"
            if not args.no_cpu:
                c = ov_cpu(small, src, dst)
                if isinstance(c, str):
                    cpu_txt = c
                else:
                    cpu_txt = f"{len(diff_idx(r_small, c))} [{examples(small, r_small, c, src, dst, 2)}]"
            if n_rule or n_rule_s:
                bad += 1
                print(
                    "  RULE MISMATCH",
                    examples(xb, rb, rule(xb, src, dst, True), src, dst, 5),
                    "|",
                    examples(small, rs, rule(small, src, dst, False), src, dst, 5),
                )
            print(
                f"{src:>7}->{dst:<7} n={len(xb):>6} astype={n_ast},{n_ast_s} rule={n_rule},{n_rule_s} "
                f"vec!=scalar={n_pos} constfold={n_cf} cpu={cpu_txt} | {ast_ex}"
            )
            sys.stdout.flush()
            if args.npz:
                key = f"{src}__{dst}"
                npz[key + "__src" + ("_bits" if src in BITS_STORED else "")] = (
                    bitview(small) if src in BITS_STORED else small
                )
                npz[key + "__ref" + ("_bits" if dst in BITS_STORED else "")] = (
                    bitview(r_small) if dst in BITS_STORED else r_small
                )
                if src == "f32" and dst == "u32":
                    npz[key + "__ref_scalar"] = rs
    print("\nplain astype vs reference: number of differing elements (vector set + scalar set); . = none")
    short = {"boolean": "bool", "f8e4m3": "e4m3", "f8e5m2": "e5m2"}
    print("src\\dst " + " ".join(f"{short.get(d, d):>6}" for d in names))
    for src in srcs:
        cells = ["     -" if src == d else f"{matrix[src, d] or '.':>6}" for d in names]
        print(f"{short.get(src, src):>8} " + " ".join(cells))
    check_boolean_bytes()
    if args.npz:
        np.savez_compressed(args.npz, **npz)
        print(f"wrote {args.npz}: {len(npz)} arrays")
    print("rule mismatches in", bad, "pairs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
