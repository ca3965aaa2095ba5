"""Convert-1 values: OpenVINO's op_reference cases, the measured reference for all 306 type pairs, corners.

Every case is a one-layer IR built with ``tests/helpers/irbuild.py`` and run with ``ir_runner.load(...).run``, once
with the source as a Parameter and once as a Const (whose Convert ir-run folds at load). Packed types
(u1, u4, i4) enter as the bytes OpenVINO's tests use, through a packed Const, and as unpacked arrays
(``uint8`` 0/1, ``ml_dtypes.uint4``/``int4``) through a Parameter.

``tests/data/convert_reference.npz`` holds OpenVINO's reference output (``node.evaluate``) for every pair,
measured by ``scripts/measure_convert.py`` (rules in ``docs/convert-semantics.md``). ir-run matches it bit for
bit except in its two documented deviations: -> bf16 rounds to nearest even, and f32 -> u32 outside
``[-2**31, 2**32)`` always takes the reference's scalar rule (``f32__u32__ref_scalar``).

Float -> integer around the 32- and 64-bit truncation limits is also built with the ``openvino`` API and run
every way (strided feeds, out= buffers) against ``Node.evaluate`` (``tests/helpers/reference_runs.py``).
"""

from __future__ import annotations

import random
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from openvino import opset1

import ir_runner
from ir_runner.types import ELEMENT_TYPES
from tests.helpers import ov_random as tv
from tests.helpers.bits import assert_same_bits
from tests.helpers.irbuild import PRECISION, IRBuilder
from tests.helpers.reference_runs import check_every_way

NP = {name: et.dtype.type for name, et in ELEMENT_TYPES.items() if et.dtype is not None}  # IR name -> numpy type
PACKED_BITS = {"u1": 1, "u4": 4, "i4": 4}
BIT_STORED = {"bf16": np.uint16, "f8e4m3": np.uint8, "f8e5m2": np.uint8}
NPZ_PATH = Path(__file__).resolve().parents[1] / "data" / "convert_reference.npz"


def pack(values, et: str) -> bytes:
    """OpenVINO's packing: u4/i4 element 0 in the low nibble, u1 element 0 in the most significant bit."""
    bits = PACKED_BITS[et]
    low = [int(v) & ((1 << bits) - 1) for v in values]
    per = 8 // bits
    low += [0] * (-len(low) % per)
    out = bytearray()
    for start in range(0, len(low), per):
        group = low[start:start + per]
        out.append(sum(v << (7 - i) for i, v in enumerate(group)) if bits == 1 else group[0] | group[1] << 4)
    return bytes(out)


def unpack(raw: bytes, et: str, count: int) -> np.ndarray:
    """The values of ``count`` packed elements, as ir-run holds them (uint8 0/1, ml_dtypes.uint4/int4)."""
    values = []
    for byte in raw:
        if PACKED_BITS[et] == 1:
            values += [(byte >> (7 - i)) & 1 for i in range(8)]
        else:
            values += [byte & 0xF, byte >> 4]
    values = values[:count]
    if et == "i4":
        values = [v - 16 if v >= 8 else v for v in values]
    return np.array(values).astype(NP[et])


def build(src: str, dst: str, shape, raw: bytes | None = None):
    """IR bytes of ``x`` -> Convert ``dst`` -> Result ``out``; ``x`` is a Parameter, or a Const of bytes ``raw``."""
    b = IRBuilder("convert")
    dims = ",".join(map(str, shape))
    if raw is None:
        node = b.parameter("x", src, dims)
    else:
        node = b.const("x", np.frombuffer(raw, np.uint8))
        node.attrs.update(element_type=src, shape=dims)
        node.out_specs = [(PRECISION[src], list(shape))]
    b.result(b.convert(node, dst, name="cvt"), "out")
    return b.build()


def const_bytes(x: np.ndarray, et: str) -> bytes:
    """What a Const of ``x`` stores in the .bin (packed for u1/u4/i4)."""
    if et in PACKED_BITS:
        return pack(x.reshape(-1).astype(np.int64).tolist(), et)
    return np.ascontiguousarray(x).reshape(-1).view(np.uint8).tobytes()


def run_convert(x: np.ndarray, src: str, dst: str, *, as_const: bool = False, raw: bytes | None = None) -> np.ndarray:
    """Convert ``x`` from ``src`` to ``dst`` in a model; as a Const of ``raw`` bytes (default: ``x``'s)."""
    if as_const and raw is None:
        raw = const_bytes(x, src)
    xml, weights = build(src, dst, x.shape, raw if as_const else None)
    model = ir_runner.load(xml, weights or None)
    (out,) = model.run({} if as_const else {"x": x}).values()
    return out


# ----------------------------------------------------------------------------- op_reference/convert.cpp

FLT_MAX = float(np.finfo(np.float32).max)
FLT_MIN = float(np.finfo(np.float32).tiny)
INF = float("inf")
F8E5M2_IN = [0.017578125, 0.021484375, 0.025390625, 0.029296875, 0.03515625, 0.0703125, 0.140625, 0.28125, 0.5625,
             1.125, 1.625, 1.875, 2.25, 3.75, 4.5, 9.0, 18.0, 36.0, 72.0, 144.0, 288.0]
F8E5M2_OUT = [0.015625, 0.0234375, 0.0234375, 0.03125, 0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0, 1.5, 2.0, 2.0, 4.0,
              4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
HALVES = [0.5, 1.5, 0.5, 2.5, 1.5, 0.5, 3.5, 2.5, 0.5, 0.5, 2.5, 0.5, 0.5, 0.5, 1.5]
SMALL_INTS = [0, 10, 15, 20, 43, 56, 78, 99, 102, 130, 142]

# (src, dst, shape, input, expected); packed types as bytes (OpenVINO's layout), everything else as values
SPECIAL_CASES = [
    ("u8", "boolean", (2, 3), [0, 12, 23, 0, 0, 255], [0, 1, 1, 0, 0, 1]),
    ("i32", "boolean", (2, 3), [0, -12, 23, 0, -(2**31), 2**31 - 1], [0, 1, 1, 0, 1, 1]),
    ("f32", "boolean", (3, 3), [0.0, 1.5745, 0.12352, 0.0, -FLT_MAX, FLT_MAX, FLT_MIN, INF, -INF],
     [0, 1, 1, 0, 1, 1, 1, 1, 1]),
    ("f32", "f8e5m2", (1, 1, 3, 7), F8E5M2_IN, F8E5M2_OUT),
    ("f8e5m2", "f32", (1, 1, 3, 7), F8E5M2_OUT, F8E5M2_OUT),
    ("f16", "f8e5m2", (1, 1, 7), [0.0, -0.0, 0.5, 1.5, 2.5, 1.5, 3.5], [0.0, -0.0, 0.5, 1.5, 2.5, 1.5, 3.5]),
    ("f8e5m2", "f16", (1, 1, 7), [0.0, -0.0, 0.5, 1.5, 2.5, 1.5, 3.5], [0.0, -0.0, 0.5, 1.5, 2.5, 1.5, 3.5]),
    ("f16", "f8e4m3", (1, 3, 5), [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.5, 2.5, 1.5, 3.5],
     [0.0, 0.1015625, 0.203125, 0.3125, 0.40625, 0.5, 0.625, 0.6875, 0.8125, 0.875, 1.0, 1.5, 2.5, 1.5, 3.5]),
    ("f8e4m3", "f16", (1, 1, 3), [0.5, 1.5, 0.0], [0.5, 1.5, 0.0]),
    ("f8e4m3", "f8e4m3", (1, 1, 3), [0.5, 1.5, 0.0], [0.5, 1.5, 0.0]),
    ("f8e5m2", "f8e5m2", (1, 1, 2), [0.5, 1.5], [0.5, 1.5]),
    ("f32", "f32", (1, 1, 2), [0.5, 1.5], [0.5, 1.5]),
    ("f8e4m3", "f32", (1, 1, 2), [0.5, 1.5], [0.5, 1.5]),
    ("f8e4m3", "f16", (1, 1, 2), [0.5, 1.5], [0.5, 1.5]),
    ("f8e4m3", "f32", (1, 1, 3, 2), [0.5, 1.5, 0.5, 2.5, 1.5, 3.5], [0.5, 1.5, 0.5, 2.5, 1.5, 3.5]),
    ("f32", "f8e4m3", (1, 1, 3, 5), HALVES, HALVES),
    ("f32", "bf16", (1, 1, 3, 5), HALVES, HALVES),
    ("u8", "bf16", (11,), SMALL_INTS, SMALL_INTS),
    ("f32", "f16", (1, 1, 3, 5), HALVES, HALVES),
    ("u8", "f16", (11,), SMALL_INTS, SMALL_INTS),
    ("u1", "f32", (2, 2), b"\xa0", [1.0, 0.0, 1.0, 0.0]),
    ("u4", "f32", (2, 2), b"\xbf\xa0", [15.0, 11.0, 0.0, 10.0]),
    ("u8", "f32", (2, 2), [255, 128, 32, 0], [255.0, 128.0, 32.0, 0.0]),
    ("u16", "f32", (2, 2), [64000, 32000, 128, 0], [64000.0, 32000.0, 128.0, 0.0]),
    ("u32", "f32", (2, 2), [4000000, 2000000, 128, 0], [4000000.0, 2000000.0, 128.0, 0.0]),
    ("u64", "f32", (2, 2), [4000000, 2000000, 128, 0], [4000000.0, 2000000.0, 128.0, 0.0]),
    ("i4", "f32", (2, 2), b"\xef\x2f", [-1.0, -2.0, -1.0, 2.0]),
    ("i8", "f32", (2, 2), [-127, 0, 0, 127], [-127.0, 0.0, 0.0, 127.0]),
    ("i16", "f32", (2, 2), [-32000, 0, 0, 32000], [-32000.0, 0.0, 0.0, 32000.0]),
    ("i32", "f32", (2, 2), [-64000, 0, 0, 64000], [-64000.0, 0.0, 0.0, 64000.0]),
    ("i64", "f32", (2, 2), [-64000, 0, 0, 64000], [-64000.0, 0.0, 0.0, 64000.0]),
    ("bf16", "f32", (1, 1, 3, 5), HALVES, HALVES),
    ("f16", "f32", (1, 1, 3, 5), HALVES, HALVES),
    ("f32", "f32", (1, 1, 3, 5), HALVES, HALVES),
]


def integer_destination_cases():
    """The 'destination i4 .. u64' blocks: the same sources for every integer destination."""
    cases = []
    for dst in ("i4", "i8", "i16", "i32", "i64", "u1", "u4", "u8", "u16", "u32", "u64"):
        signed_out = dst.startswith("i") or dst == "u4"
        if dst == "u1":
            ones = [1, 0, 1, 0, 0, 0, 0, 1]
            cases += [("u1", dst, (8,), b"\xa0", b"\xa0"), ("u4", dst, (8,), b"\x01\x10\x00\x00", b"\x90"),
                      ("i4", dst, (8,), b"\x01\x10\x00\x00", b"\x90")]
            cases += [(src, dst, (8,), ones, b"\xa1")
                      for src in ("u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16", "bf16", "f32")]
            continue
        if dst in ("i4", "u4"):
            cases += [("u1", dst, (4,), b"\xa0", b"\x01\x01"), ("u4", dst, (4,), b"\x12\x03", b"\x12\x03"),
                      ("i4", dst, (4,), b"\xfe\x03", b"\xfe\x03")]
            cases += [(src, dst, (4,), [1, 2, 0, 3], b"\x21\x30") for src in ("u8", "u16", "u32", "u64")]
            cases += [(src, dst, (4,), [-1, -2, 2, 3], b"\xef\x32") for src in ("i8", "i16", "i32", "i64")]
            cases += [(src, dst, (4,), [-1, -2, 0, 3], b"\xef\x30") for src in ("f16", "bf16")]
            cases.append(("f32", dst, (4,), [-1, -2, 2, 3], b"\xef\x32"))
            continue
        cases += [("u1", dst, (8,), b"\x81", [1, 0, 0, 0, 0, 0, 0, 1]), ("u4", dst, (4,), b"\x12\x34", [2, 1, 4, 3]),
                  ("i4", dst, (4,), b"\x12\x34", [2, 1, 4, 3])]
        cases += [(src, dst, (4,), [1, 2, 0, 3], [1, 2, 0, 3]) for src in ("u8", "u16", "u32", "u64")]
        signed_in = [-1, -2, 2, 3] if signed_out else [1, 2, 2, 3]
        cases += [(src, dst, (4,), signed_in, signed_in) for src in ("i8", "i16", "i32", "i64")]
        half_in = [-1, -2, 0, 3] if signed_out else [1, 2, 0, 3]
        cases += [(src, dst, (4,), half_in, half_in) for src in ("f16", "bf16")]
        float_in = [-1, -2, 2.2, 3.8] if signed_out else [1, 2, 2.2, 3.8]
        cases.append(("f32", dst, (4,), float_in, [int(v) for v in float_in]))
    return cases


OP_REFERENCE = SPECIAL_CASES + integer_destination_cases()


def as_values(spec, et: str, count: int) -> np.ndarray:
    """A case's input or expected output as ir-run holds it."""
    if isinstance(spec, bytes):
        return unpack(spec, et, count)
    return np.array(spec, np.float64).astype(NP[et])


@pytest.mark.parametrize("as_const", [False, True], ids=["param", "const"])
@pytest.mark.parametrize("src, dst, shape, given, want", OP_REFERENCE,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(OP_REFERENCE)])
def test_op_reference(src, dst, shape, given, want, as_const):
    count = int(np.prod(shape))
    x = as_values(given, src, count).reshape(shape)
    expected = as_values(want, dst, count).reshape(shape)
    raw = given if isinstance(given, bytes) else None
    assert_same_bits(run_convert(x, src, dst, as_const=as_const, raw=raw), expected)


# ----------------------------------------------------------------------------- the measured reference


def _npz():
    with np.load(NPZ_PATH) as archive:
        return {key: archive[key] for key in archive.files}


REFERENCE = _npz() if NPZ_PATH.is_file() else {}
PAIRS = sorted({tuple(key.split("__")[:2]) for key in REFERENCE})


def decode(key_base: str, et: str) -> np.ndarray:
    if et in BIT_STORED:
        return REFERENCE[key_base + "_bits"].view(NP[et])
    value = REFERENCE[key_base]
    return value.astype(NP[et]) if et in ("u4", "i4") else value


def expected_output(src: str, dst: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The reference output, with ir-run's two documented deviations applied; and a mask of elements
    that only need to be NaN (a NaN rounded to bf16 keeps no specified payload)."""
    ref = decode(f"{src}__{dst}__ref", dst)
    if src == "f32" and dst == "u32":
        return REFERENCE["f32__u32__ref_scalar"], None
    if dst != "bf16":
        return ref, None
    with np.errstate(over="ignore", invalid="ignore"):
        f32 = x.astype(np.float32)
    nan = np.isnan(f32)
    rne = np.where(nan, np.float32(0), f32).astype(ml_dtypes.bfloat16)
    return rne, nan


def test_reference_file_has_every_pair():
    assert len(PAIRS) == 18 * 17


@pytest.mark.parametrize("as_const", [False, True], ids=["param", "const"])
@pytest.mark.parametrize("src, dst", PAIRS, ids=[f"{s}-{d}" for s, d in PAIRS])
def test_measured_reference(src, dst, as_const):
    x = decode(f"{src}__{dst}__src", src)
    want, nan_only = expected_output(src, dst, x)
    out = run_convert(x, src, dst, as_const=as_const)
    if nan_only is not None:
        assert np.isnan(out[nan_only].astype(np.float32)).all(), "a NaN must stay a NaN"
        out, want = out[~nan_only], want[~nan_only]
    assert_same_bits(out, want)


# ----------------------------------------------------------------------------- documented rules, one by one


def literal(values, et: str) -> np.ndarray:
    """Python numbers as an array of ``et`` (exact for u64/i64 extremes)."""
    wide = np.float64 if et[0] in "fb" else (np.uint64 if et == "u64" else np.int64)
    return np.array(values, wide).astype(NP[et])


@pytest.mark.parametrize("src, dst, given, want", [
    ("f32", "i32", [2.7, -2.7, 2.5, -0.5, 0.0], [2, -2, 2, 0, 0]),  # truncation toward zero
    ("f32", "u8", [-2.7, 300.0, 255.5, 256.0], [254, 44, 255, 0]),  # then wrap
    ("f32", "i8", [128.0, -129.0, 127.9], [-128, 127, 127]),
    ("i32", "u8", [256, -1, 511], [0, 255, 255]),
    ("i32", "i8", [-129, 128, 255], [127, -128, -1]),
    ("i64", "u64", [-1, -(2**63)], [2**64 - 1, 2**63]),
    ("u64", "i64", [2**64 - 1, 2**63], [-1, -(2**63)]),
    ("f32", "u1", [2.5, 3.9, -1.0, 0.0], [0, 1, 1, 0]),  # u1 keeps the low bit
    ("i32", "u1", [2, 3, -1, 4], [0, 1, 1, 0]),
    ("i32", "i4", [8, -9, 15, 16], [-8, 7, -1, 0]),
    ("i32", "u4", [16, -1, 17], [0, 15, 1]),
    ("f32", "i64", [1e10, -1e10], [10**10, -(10**10)]),
    ("i32", "f16", [70000, -70000, 65504], [65504.0, -65504.0, 65504.0]),  # the one clamping pair
    ("i64", "f16", [70000, -70000], [INF, -INF]),
    ("f32", "f16", [70000.0, 2.7], [INF, 2.69921875]),
    ("f32", "f64", [INF, -INF, -0.0], [INF, -INF, -0.0]),
    ("f64", "f32", [1e300, -1e300], [INF, -INF]),
    ("f32", "boolean", [float("nan"), -0.0, 1e-45, 0.1], [1, 0, 1, 1]),
    ("i64", "f32", [2**62 + 2**38 + 1], [float(2**62 + 2**39)]),  # one rounding
    ("u64", "f32", [2**64 - 1], [float(2**64)]),
])
def test_documented_rule(src, dst, given, want):
    x = literal(given, src)
    expected = literal(want, dst)
    assert_same_bits(run_convert(x, src, dst), expected)


def test_bf16_rounds_to_nearest_even():
    """ir-run's documented deviation: 0x3EF0CCCC -> 0x3EF1 (the reference truncates to 0x3EF0)."""
    x = np.array([0x3EF0CCCC, 0x3F808000, 0x3F818000, 0x3F808001], np.uint32).view(np.float32)
    out = run_convert(x, "f32", "bf16")
    assert_same_bits(out.view(np.uint16), np.array([0x3EF1, 0x3F80, 0x3F82, 0x3F81], np.uint16))


def test_f32_to_u32_does_not_depend_on_position():
    """OpenVINO's vector loop gives other values for the first 4*(n//4) elements; ir-run never does."""
    values = [float("nan"), 1e10, -1e10, INF, -INF, 5e9, 3.5]
    outs = [run_convert(np.array(values[:n] + values, np.float32), "f32", "u32")[n:] for n in range(4)]
    for out in outs[1:]:
        assert_same_bits(out, outs[0])
    assert_same_bits(outs[0], np.array([0, 1410065408, 2884901888, 0, 0, 705032704, 3], np.uint32))


@pytest.mark.parametrize("dst, want", [
    ("boolean", [0, 1, 1, 1, 1, 1]), ("u8", [0, 1, 2, 127, 128, 255]), ("i8", [0, 1, 2, 127, -128, -1]),
    ("f32", [0.0, 1.0, 2.0, 127.0, -128.0, -1.0]), ("u64", [0, 1, 2, 127, 2**64 - 128, 2**64 - 1]),
    ("u1", [0, 1, 0, 1, 0, 1]), ("i4", [0, 1, 2, -1, 0, -1]),
])
def test_boolean_bytes_are_signed_chars(dst, want):
    """A boolean input whose bytes are not 0/1 (numpy lets them through) converts like the reference."""
    x = np.array([0, 1, 2, 127, 128, 255], np.uint8).view(np.bool_)
    expected = literal(want, dst)
    assert_same_bits(run_convert(x, "boolean", dst), expected)


@pytest.mark.parametrize("as_const", [False, True], ids=["param", "const"])
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1, 1, 1)], ids=str)
@pytest.mark.parametrize("src, dst", [("f32", "i8"), ("i64", "bf16"), ("u4", "f16"), ("boolean", "f8e4m3"),
                                      ("f64", "u1"), ("i4", "u64"), ("f16", "f32"), ("f16", "i32")])
def test_scalar_and_empty_shapes(shape, src, dst, as_const):
    """A 0-d or empty input converts like the same values in one dimension (a Const is folded at load)."""
    x = np.asarray((np.arange(int(np.prod(shape))) % 5 - 2).reshape(shape))
    x = np.asarray((x != 0) if src == "boolean" else (x % 16 if src == "u4" else x).astype(NP[src]))
    out = run_convert(x, src, dst, as_const=as_const)
    assert out.shape == shape and out.dtype == np.dtype(NP[dst])
    assert_same_bits(out, run_convert(x.reshape(-1), src, dst).reshape(shape))


def test_output_is_a_new_array_even_for_the_same_type():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = run_convert(x, "i32", "i32")
    assert_same_bits(out, x)
    assert not np.shares_memory(out, x)
    out[...] = 7
    assert x[0, 1] == 1


@pytest.mark.parametrize("src", ["f16", "f32", "i32"])
def test_decompression_pattern(src):
    """Const f16 -> Convert f32, as compress_to_fp16 writes it: folded at load, same bits as the Parameter path."""
    x = np.array([0.1, -2.5, 65504, 6e-8, -0.0], np.float64).astype(NP[src])
    via_const = run_convert(x, src, "f32", as_const=True)
    assert_same_bits(via_const, run_convert(x, src, "f32"))
    assert_same_bits(via_const, x.astype(np.float32))


# ----------------------------------------------------------------------------- Convert float -> integer limits


def limits(wide: type) -> np.ndarray:
    """Values at and around the 32- and 64-bit truncation limits, NaNs and infinities, in ``wide``."""
    values = [0.0, -0.0, 0.5, -0.99, 2.5, -2.5, 255.5, -129.0, 65535.9, np.nan, -np.nan, np.inf, -np.inf]
    for edge in (2.0**31, 2.0**32, 2.0**63, 2.0**64):
        for sign in (1, -1):
            base = wide(sign * edge)
            values += [base, np.nextafter(base, wide(0)), np.nextafter(base, wide(sign * np.inf))]
    values += [-2147483648.5, -2147483649.0, 2147483647.99, 4294967295.5] if wide is np.float64 else []
    return np.array(values, wide)


@pytest.mark.parametrize("src", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("dst", ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "u1", "u4", "i4"])
def test_float_to_integer_at_the_truncation_limits(src, dst, tmp_path):
    """Float -> integer truncates, and a value whose truncation is outside the signed 32-bit (i32 and narrower)
    or 64-bit (i64, u64, u32) range, NaN and ±inf give the reference's 'integer indefinite' (then wrapped), as
    OpenVINO's reference computes, around every limit. f32 -> u32 follows the reference's scalar rule (the
    documented deviation: tv.reference_outputs evaluates it one element at a time)."""
    values = limits(np.float64 if src == "f64" else np.float32)
    with np.errstate(over="ignore"):  # f16 and bf16 overflow to inf
        values = np.concatenate([values, -values]).astype(NP[src])
    inputs = tv.Inputs(random.Random(0))
    node = opset1.convert(inputs.add("x", src, values, p_const=0.0), dst)
    check_every_way(tv.single(node, inputs, "convert"), inputs.feeds, tmp_path)
