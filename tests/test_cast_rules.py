"""``cast=`` levels for the types numpy lacks (bf16, f8, i4, u4): 'safe' means exact, checked exhaustively.

ml_dtypes calls u8 -> f8e4m3 'safe' (255 becomes 256) and f64 -> i4 'same_kind'; ``casting.is_safe``
decides these itself. Every value of each type of at most 16 bits is tried. 'same_kind' checks the values
of the array (tests/test_cast_policy.py); here each edge value of each type is tried against its rule.
"""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest

import ir_runner
from ir_runner.casting import CastRefused, cast_array, is_safe
from ir_runner.types import element_type_of
from tests.helpers.irbuild import IRBuilder

ML_TYPES = [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.int4, ml_dtypes.uint4]
NATIVE_TYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.float16, np.int32, np.uint32, np.float32,
                np.int64, np.uint64, np.float64]
ALL_TYPES = [np.dtype(t) for t in ML_TYPES + NATIVE_TYPES]
PAIRS = [(s, t) for s in ALL_TYPES for t in ALL_TYPES
         if s != t and not (s.type.__module__ == "numpy" and t.type.__module__ == "numpy")]


def every_value(dtype: np.dtype) -> np.ndarray | None:
    """All values of a type of at most 16 bits (every bit pattern), else None."""
    if dtype == np.bool_:
        return np.array([False, True])
    if dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)):
        info = ml_dtypes.iinfo(dtype)
        return np.arange(int(info.min), int(info.max) + 1).astype(dtype)
    if dtype.itemsize > 2:
        return None
    return np.arange(2 ** (8 * dtype.itemsize), dtype=np.uint16 if dtype.itemsize == 2 else np.uint8).view(dtype)


def exact(source: np.ndarray, target: np.dtype) -> bool:
    """Whether every value of ``source`` is, after conversion to ``target``, the same number (NaN stays NaN,
    -0.0 stays -0.0, no wrap-around); a conversion ml_dtypes does not have (int4 <-> uint4) is not exact."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            converted = source.astype(target)
    except TypeError:
        return False
    return all(_same_number(a, b) for a, b in zip(_numbers(source), _numbers(converted)))


def _numbers(array: np.ndarray) -> list:
    """The values as Python ints (integer and bool types) or floats."""
    if _kind(array.dtype) in "biu":
        return [int(v) for v in array.tolist()]
    return [float(v) for v in array.tolist()]


def _same_number(a, b) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def _kind(dtype: np.dtype) -> str:
    if dtype.type.__module__ == "numpy":
        return dtype.kind
    return {"int4": "i", "uint4": "u"}.get(dtype.name, "f")


@pytest.mark.parametrize("source, target", PAIRS, ids=[f"{s.name}->{t.name}" for s, t in PAIRS])
def test_safe_means_exact(source, target):
    values = every_value(source)
    if values is None:  # 32/64-bit sources: no ml_dtypes type holds them all; one value that does not fit
        values = np.array([np.iinfo(source).max if source.kind in "iu" else 1 + np.finfo(source).eps], source)
    assert is_safe(source, target) == exact(values, target)


def edge_values(dtype: np.dtype) -> list[np.ndarray]:
    """Single-element arrays of 0, 1, the extremes and (floats) a fraction, NaN and the infinities."""
    if dtype == np.bool_:
        return [np.array([v]) for v in (False, True)]
    if _kind(dtype) in "iu":
        info = ml_dtypes.iinfo(dtype)
        return [np.array([v]).astype(dtype) for v in (0, 1, int(info.min), int(info.max))]
    info = ml_dtypes.finfo(dtype)
    values = [0.0, 1.0, 0.5, float(info.max), -float(info.max), float("nan"), float("inf")]
    return [np.array([v]).astype(dtype) for v in values]


@pytest.mark.parametrize("source, target", PAIRS, ids=[f"{s.name}->{t.name}" for s, t in PAIRS])
def test_same_kind_keeps_every_value_of_the_array(source, target):
    """same_kind converts a value when the pair is safe, or when the value survives: an integer or boolean
    into an integer or boolean type that holds it; a number into a float type without becoming inf or NaN.
    unsafe converts everything ml_dtypes can; no converts nothing."""
    et = element_type_of(target)
    for value in edge_values(source):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                converted = value.astype(target)
            except TypeError:
                converted = None
        as_float = float(value.astype(np.float64)[0])
        if converted is None:
            expected = False
        elif is_safe(source, target):
            expected = True
        elif _kind(target) == "f":
            expected = not math.isfinite(as_float) or math.isfinite(float(converted.astype(np.float64)[0]))
        else:
            expected = _kind(source) != "f" and exact(value, target)
        try:
            cast_array(value, et, "same_kind")
            allowed = True
        except (CastRefused, TypeError):
            allowed = False
        assert allowed == expected, (value, target)
        with pytest.raises(CastRefused):
            cast_array(value, et, "no")
        if converted is not None:
            assert cast_array(value, et, "unsafe").tobytes() == converted.tobytes()


def test_numpy_types_keep_numpy_safe_rule():
    for source in NATIVE_TYPES:
        for target in NATIVE_TYPES:
            assert is_safe(np.dtype(source), np.dtype(target)) == np.can_cast(source, target, "safe")


def identity_model(element_type: str) -> ir_runner.Model:
    b = IRBuilder()
    b.result(b.parameter("x", element_type, "3"))
    return ir_runner.load(*b.build())


def test_safe_refuses_u8_into_f8e4m3_which_would_round_255():
    model = identity_model("f8e4m3")
    feed = np.array([1, 17, 255], np.uint8)
    with pytest.raises(ir_runner.InputError, match="'x': cannot cast uint8 to float8_e4m3fn under cast='safe'"):
        model.run({"x": feed}, cast="safe")
    with pytest.warns(ir_runner.CastWarning):
        out = model.run({"x": feed}, cast="same_kind")["x"]
    assert out.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert out.astype(np.float32).tolist() == [1.0, 16.0, 256.0]


def test_same_kind_refuses_floats_into_i4_and_allows_u8_into_bf16_as_safe():
    with pytest.raises(ir_runner.InputError, match="cannot cast float64 to int4 under cast='same_kind'") as caught:
        identity_model("i4").run({"x": np.array([1.0, 2.0, 3.0])}, cast="same_kind")
    assert caught.value.hint.startswith("pass cast='unsafe' (floats are truncated toward zero)")
    with pytest.warns(ir_runner.CastWarning):
        out = identity_model("bf16").run({"x": np.array([0, 128, 255], np.uint8)}, cast="safe")["x"]
    assert out.astype(np.float32).tolist() == [0.0, 128.0, 255.0]


def test_int4_and_uint4_have_no_direct_conversion_even_when_unsafe():
    model = identity_model("i4")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ir_runner.InputError, match="'x': numpy cannot convert uint4 to int4") as caught:
            model.run({"x": np.array([1, 2, 3], ml_dtypes.uint4)}, cast="unsafe")
    assert "astype(np.int8)" in str(caught.value)


@pytest.mark.parametrize("feed", [np.zeros(3, ml_dtypes.int2), np.zeros(3, "V4"), np.zeros(3, [("a", "f4")])],
                         ids=["ml_dtypes int2", "void", "structured"])
@pytest.mark.parametrize("cast", [None, "safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("element_type", ["f32", "bf16"])
def test_dtypes_the_ir_lacks_are_refused_whatever_the_cast(feed, cast, element_type):
    with pytest.raises(ir_runner.InputError, match="which is not an IR element type"):
        identity_model(element_type).run({"x": feed}, cast=cast)


def test_the_refusal_of_a_dtype_the_ir_lacks_says_how_to_convert():
    with pytest.raises(ir_runner.InputError) as caught:
        identity_model("bf16").run({"x": np.zeros(3, ml_dtypes.int2)})
    assert caught.value.hint == "convert it first, e.g. array.astype(ml_dtypes.bfloat16)"
