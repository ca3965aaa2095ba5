"""Property tests (hypothesis): Select, Gather and Convert through ``ir_runner.load(...).run`` on random
shapes, element types, axes, batch_dims, broadcast modes and index values.

Expected values come from small numpy formulations written here from the semantics (masked assignment
for Select, per-batch ``np.take`` with an out-of-range mask for Gather), or from algebraic properties
(round trips, agreement between versions and between static and dynamic models). Compared bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ir_runner
from ir_runner.ops.api import quiet_f16_nans
from tests.helpers.bits import assert_same_bits
from tests.helpers.irbuild import IRBuilder

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NP = {
    "boolean": np.bool_, "f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16,
    "f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "i4": ml_dtypes.int4, "u4": ml_dtypes.uint4,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
    "u32": np.uint32, "u64": np.uint64,
}
DATA_TYPES = sorted(NP)
INDEX_TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]


def dims(shape) -> str:
    return ",".join(map(str, shape))


def random_bits(draw, et: str, shape) -> np.ndarray:
    """Any bit pattern of ``et`` (floats: NaN payloads, infinities, subnormals, -0.0)."""
    dtype = np.dtype(NP[et])
    count = int(np.prod(shape, dtype=np.int64))
    if et == "boolean":
        return np.array(draw(st.lists(st.booleans(), min_size=count, max_size=count)), bool).reshape(shape)
    if et in ("i4", "u4"):
        low = -8 if et == "i4" else 0
        values = draw(st.lists(st.integers(low, low + 15), min_size=count, max_size=count))
        return np.array(values).astype(dtype).reshape(shape)
    raw = draw(st.binary(min_size=count * dtype.itemsize, max_size=count * dtype.itemsize))
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def run(b: IRBuilder, feeds: dict, **options) -> dict[str, np.ndarray]:
    xml, weights = b.build()
    return ir_runner.load(xml, weights or None, **options).run(feeds)


# ----------------------------------------------------------------------------- Select


def select_model(shapes, et: str, out_shape, attrs) -> IRBuilder:
    b = IRBuilder("select")
    params = [b.parameter(n, t, dims(s)) for n, t, s in zip(("cond", "then", "else"), ("boolean", et, et), shapes)]
    sel = b.layer("Select", "opset1", params, attrs=attrs, out_specs=[(et, list(out_shape))], name="sel")
    b.result(sel, "out")
    return b


def expected_select(cond, then, else_, out_shape) -> np.ndarray:
    """Masked assignment on broadcast views: where cond is false, the else value replaces the then value.
    Signalling f16 NaNs come out quiet, as the reference moves f16 values through float."""
    out = np.array(np.broadcast_to(then, out_shape))
    mask = np.broadcast_to(cond.view(np.uint8) == 0, out_shape)
    out[mask] = np.broadcast_to(else_, out_shape)[mask]
    return quiet_f16_nans(out)


@SETTINGS
@given(data=st.data(), shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=4, max_side=4),
       et=st.sampled_from(DATA_TYPES))
def test_select_numpy_broadcast(data, shapes, et):
    (cond_shape, then_shape, else_shape), out_shape = shapes
    cond = data.draw(hnp.arrays(np.uint8, cond_shape, elements=st.sampled_from([0, 1, 2, 255]))).view(np.bool_)
    then = random_bits(data.draw, et, then_shape)
    else_ = random_bits(data.draw, et, else_shape)
    out = run(select_model((cond_shape, then_shape, else_shape), et, out_shape, {"auto_broadcast": "numpy"}),
              {"cond": cond, "then": then, "else": else_})["out"]
    assert_same_bits(out, expected_select(cond, then, else_, out_shape))


@SETTINGS
@given(data=st.data(), then_shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4),
       et=st.sampled_from(["f32", "i64", "u8", "bf16", "f8e5m2", "boolean"]))
def test_select_pdpd(data, then_shape, et):
    """pdpd: else and cond are each fitted into then's shape from ``axis`` (-1: aligned right)."""
    rank = len(then_shape)
    axis = data.draw(st.integers(-1, rank))
    start = 0 if axis == -1 else axis
    length = data.draw(st.integers(0, rank - start))
    shapes = []
    for _ in range(2):
        own = data.draw(st.integers(0, length)) if axis != -1 else length  # axis -1: same rank (see vs_openvino)
        begin = rank - own if axis == -1 else start
        shapes.append(tuple(1 if data.draw(st.booleans()) else d for d in then_shape[begin:begin + own]))
    cond_shape, else_shape = shapes
    cond = random_bits(data.draw, "boolean", cond_shape)
    then = random_bits(data.draw, et, then_shape)
    else_ = random_bits(data.draw, et, else_shape)
    attrs = {"auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": axis}
    out = run(select_model((cond_shape, then_shape, else_shape), et, then_shape, attrs),
              {"cond": cond, "then": then, "else": else_})["out"]

    def placed(x):
        begin = rank - x.ndim if axis == -1 else start
        return x.reshape((1,) * begin + x.shape + (1,) * (rank - begin - x.ndim))

    assert_same_bits(out, expected_select(placed(cond), then, placed(else_), then_shape))


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
       et=st.sampled_from(DATA_TYPES))
def test_select_swapping_branches_negates_cond(data, shape, et):
    cond = random_bits(data.draw, "boolean", shape)
    a, b = random_bits(data.draw, et, shape), random_bits(data.draw, et, shape)
    model = select_model((shape, shape, shape), et, shape, {"auto_broadcast": "none"})
    xml, weights = model.build()
    loaded = ir_runner.load(xml, weights or None)
    assert_same_bits(loaded.run({"cond": cond, "then": a, "else": b})["out"],
              loaded.run({"cond": ~cond, "then": b, "else": a})["out"])
    # the reference quietens signalling f16 NaNs it moves, so "a" comes back with quiet NaNs
    assert_same_bits(loaded.run({"cond": cond, "then": a, "else": a})["out"], quiet_f16_nans(a.copy()))


# ----------------------------------------------------------------------------- Gather


def gather_model(data_shape, data_et, idx_shape, idx_et, axis, batch_dims, version, out_shape,
                 data_shape_text=None, idx_shape_text=None) -> IRBuilder:
    b = IRBuilder("gather")
    data = b.parameter("data", data_et, data_shape_text or dims(data_shape))
    indices = b.parameter("indices", idx_et, idx_shape_text or dims(idx_shape))
    axis_node = b.const("axis", np.array(axis, np.int64))
    attrs = None if version == "opset1" else {"batch_dims": batch_dims}
    declared = [-1] * len(out_shape) if data_shape_text else list(out_shape)
    g = b.layer("Gather", version, [data, indices, axis_node], attrs=attrs, out_specs=[(data_et, declared)],
                name="g")
    b.result(g, "out")
    return b


def expected_gather(data: np.ndarray, indices: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    """Per batch: ``np.take`` of the wrapped indices, then zeros where an index is still out of range."""
    out_shape = gather_shape(data.shape, indices.shape, axis, batch_dims)
    if batch_dims:
        parts = [expected_gather(d, i, axis - 1, batch_dims - 1) for d, i in zip(data, indices)]
        return np.stack(parts) if parts else np.zeros(out_shape, data.dtype)
    dim = data.shape[axis]
    idx = indices.astype(np.int64)
    idx = np.where(idx < 0, idx + dim, idx)
    valid = (idx >= 0) & (idx < dim)
    if dim == 0:
        return np.zeros(out_shape, data.dtype)
    out = np.take(data, np.where(valid, idx, 0), axis=axis)
    mask = valid.reshape((1,) * axis + valid.shape + (1,) * (data.ndim - axis - 1))
    zeros = np.zeros((), data.dtype)
    return quiet_f16_nans(np.where(np.broadcast_to(mask, out.shape), out, zeros))


def gather_shape(data_shape, idx_shape, axis: int, batch_dims: int) -> tuple[int, ...]:
    return tuple(data_shape[:axis]) + tuple(idx_shape[batch_dims:]) + tuple(data_shape[axis + 1:])


@st.composite
def gather_cases(draw):
    data_shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4))
    rank = len(data_shape)
    version = draw(st.sampled_from(["opset1", "opset7", "opset8"]))
    axis = draw(st.integers(0, rank - 1))
    batch_dims = 0 if version == "opset1" else draw(st.integers(0, axis))
    tail = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    idx_shape = tuple(data_shape[:batch_dims]) + tail
    idx_et = draw(st.sampled_from(INDEX_TYPES))
    info = np.iinfo(NP[idx_et])
    dim = data_shape[axis]
    near = st.integers(max(int(info.min), -dim - 3), min(int(info.max), dim + 3))
    count = int(np.prod(idx_shape, dtype=np.int64))
    values = draw(st.lists(st.one_of(near, near, near, st.integers(int(info.min), int(info.max))),
                           min_size=count, max_size=count))
    indices = np.array(values, dtype=np.uint64 if idx_et == "u64" else np.int64).astype(NP[idx_et])
    data_et = draw(st.sampled_from(DATA_TYPES))
    data = random_bits(draw, data_et, data_shape)
    neg_axis = draw(st.booleans())
    neg_bd = draw(st.booleans()) and version != "opset1" and batch_dims < len(idx_shape)
    return (version, data, data_et, indices.reshape(idx_shape), idx_et, axis - rank if neg_axis else axis,
            batch_dims - len(idx_shape) if neg_bd else batch_dims, axis, batch_dims)


@SETTINGS
@given(case=gather_cases())
def test_gather_matches_take_with_zeros(case):
    version, data, data_et, indices, idx_et, axis_attr, bd_attr, axis, batch_dims = case
    out_shape = gather_shape(data.shape, indices.shape, axis, batch_dims)
    model = gather_model(data.shape, data_et, indices.shape, idx_et, axis_attr, bd_attr, version, out_shape)
    out = run(model, {"data": data, "indices": indices})["out"]
    assert_same_bits(out, expected_gather(data, indices, axis, batch_dims))


@SETTINGS
@given(case=gather_cases())
def test_gather_versions_agree_and_dynamic_equals_static(case):
    """Outside strict mode Gather-7 and Gather-8 compute the same; a dynamic model the same as a static one."""
    _, data, data_et, indices, idx_et, axis_attr, bd_attr, axis, batch_dims = case
    out_shape = gather_shape(data.shape, indices.shape, axis, batch_dims)
    feeds = {"data": data, "indices": indices}
    results = [run(gather_model(data.shape, data_et, indices.shape, idx_et, axis_attr, bd_attr, v, out_shape),
                   feeds)["out"] for v in ("opset7", "opset8")]
    dynamic = gather_model(data.shape, data_et, indices.shape, idx_et, axis_attr, bd_attr, "opset8", out_shape,
                           data_shape_text=",".join("?" * data.ndim), idx_shape_text="...")
    results.append(run(dynamic, feeds)["out"])
    for other in results[1:]:
        assert_same_bits(other, results[0])


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
def test_gather_of_all_positions_is_identity(data, shape):
    axis = data.draw(st.integers(0, len(shape) - 1))
    dim = shape[axis]
    values = random_bits(data.draw, "f32", shape)
    negative = data.draw(st.booleans())
    indices = np.arange(dim, dtype=np.int32) - (dim if negative else 0)
    model = gather_model(shape, "f32", indices.shape, "i32", axis, 0, "opset8", shape)
    assert_same_bits(run(model, {"data": values, "indices": indices})["out"], values)


# ----------------------------------------------------------------------------- Convert


def convert_model(src: str, dst: str, shape, chain: tuple[str, ...] = ()) -> IRBuilder:
    b = IRBuilder("convert")
    node = b.parameter("x", src, dims(shape))
    for et in (dst, *chain):
        node = b.convert(node, et)
    b.result(node, "out")
    return b


INT_TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]


@SETTINGS
@given(data=st.data(), src=st.sampled_from(INT_TYPES), dst=st.sampled_from(INT_TYPES),
       shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6))
def test_integer_conversions_wrap(data, src, dst, shape):
    """integer -> integer keeps the low bits (two's complement); to a wider type and back is the identity."""
    x = random_bits(data.draw, src, shape)
    out = run(convert_model(src, dst, shape), {"x": x})["out"]
    bits = np.dtype(NP[dst]).itemsize * 8
    wrapped = [(int(v) % (1 << bits)) for v in x.reshape(-1).tolist()]
    want = np.array([v - (1 << bits) if dst[0] == "i" and v >= 1 << (bits - 1) else v for v in wrapped],
                    dtype=object).astype(NP[dst]).reshape(shape)
    assert_same_bits(out, want)
    if holds_every_value(dst, src):
        assert_same_bits(run(convert_model(src, dst, shape, (src,)), {"x": x})["out"], x)


def holds_every_value(dst: str, src: str) -> bool:
    wider = np.dtype(NP[dst]).itemsize >= np.dtype(NP[src]).itemsize
    strictly_wider = np.dtype(NP[dst]).itemsize > np.dtype(NP[src]).itemsize
    return wider and src[0] == dst[0] or strictly_wider and dst[0] == "i"


@SETTINGS
@given(data=st.data(), src=st.sampled_from(DATA_TYPES), shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=6))
def test_to_boolean_is_non_zero(data, src, shape):
    x = random_bits(data.draw, src, shape)
    out = run(convert_model(src, "boolean", shape), {"x": x})["out"]
    with np.errstate(invalid="ignore"):  # widening a signalling NaN raises "invalid"; any NaN is non-zero: true
        wide = x.astype(np.float64)
    assert_same_bits(out, np.asarray(wide != 0))


@SETTINGS
@given(data=st.data(), src=st.sampled_from(["f16", "bf16", "f8e4m3", "f8e5m2", "f32"]),
       shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=8))
def test_widening_floats_round_trip(data, src, shape):
    """A float widened to f64 (and f16/bf16/f8 to f32) and narrowed back is unchanged; NaN stays NaN."""
    x = random_bits(data.draw, src, shape)
    for wide in ("f32", "f64") if src != "f32" else ("f64",):
        back = run(convert_model(src, wide, shape, (src,)), {"x": x})["out"]
        nan = np.isnan(x.astype(np.float32))
        assert np.isnan(back[nan].astype(np.float32)).all()
        assert_same_bits(back[~nan], x[~nan])


@SETTINGS
@given(data=st.data(), src=st.sampled_from(["f16", "bf16", "f32", "f64"]),
       dst=st.sampled_from(["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]),
       shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=6))
def test_float_to_integer_truncates_in_range(data, src, dst, shape):
    """In the target's range, float -> integer truncates toward zero (NaN/out of range: see test_convert_values)."""
    info = np.iinfo(NP[dst])
    count = int(np.prod(shape, dtype=np.int64))
    finite = st.floats(float(max(info.min, -(2**31))), float(min(info.max, 2**31 - 1)), allow_nan=False)
    with np.errstate(over="ignore"):  # values beyond f16's range become inf: out of range, masked below
        x = np.array(data.draw(st.lists(finite, min_size=count, max_size=count)), np.float64).astype(NP[src])
    x = x.reshape(shape)
    wide = np.trunc(x.astype(np.float64))
    in_range = (wide >= info.min) & (wide <= info.max)
    out = run(convert_model(src, dst, shape), {"x": x})["out"]
    assert_same_bits(out[in_range], wide[in_range].astype(NP[dst]))
