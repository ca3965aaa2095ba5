"""ConvertLike-1 and ConvertPromoteTypes-14: types and shapes as OpenVINO infers them (the whole promotion table),
values bit for bit against the reference's Convert (neither has an ``evaluate`` of its own) and the CPU plugin,
IRErrors, value propagation through a PyTorch-style shape subgraph, batch rules, a seeded differential test."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import ir_runner
from ir_runner.errors import InferenceError
from ir_runner.ops.conversion.convert_like import PromotionError, promoted_type
from ir_runner.types import ELEMENT_TYPES, PartialShape
from tests.helpers.irbuild import IRBuilder

ov = pytest.importorskip("openvino")
from openvino import opset13, opset14  # noqa: E402

from tests.helpers.optest import (  # noqa: E402
    check_inference,
    check_output_shapes,
    check_run,
    reference_outputs,
    write_ir,
)

TYPES = ["boolean", "f16", "f32", "f64", "i4", "i8", "i16", "i32", "i64", "u1", "u4", "u8", "u16", "u32", "u64",
         "f8e4m3", "f8e5m2", "bf16"]
RUNNABLE = ["boolean", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bf16"]


def _ov_type(name: str) -> ov.Type:
    return getattr(ov.Type, name)


def _values(rng, name: str, shape, tame: bool = False) -> np.ndarray:
    """Random values of type ``name`` (extremes, NaN, inf); ``tame``: small integers, for the conversions where
    ir-run's Convert deviates from the reference by design (to bf16, float to u32: docs/convert-semantics.md)."""
    dtype = ELEMENT_TYPES[name].dtype
    if tame:
        return rng.integers(0 if name == "boolean" else -100, 100, shape).astype(np.float32).astype(dtype)
    if name == "boolean":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    v = rng.standard_normal(shape) * rng.choice([1, 100, 1e5, 1e10])
    v.reshape(-1)[:3] = [np.nan, np.inf, -0.0][: v.size]
    with np.errstate(over="ignore"):
        return v.astype(np.float32).astype(dtype) if name != "f64" else v


def _via_converts(build):
    """An oracle: the same graph with each op replaced by Converts (``build(convert=True)``), run node by node by
    the reference."""
    def oracle(xml, feeds):
        path = build(True)
        return reference_outputs(path, feeds)
    return oracle


# -- ConvertLike ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [[2, 3], ov.PartialShape("[?,3]"), ov.PartialShape("[1..5,2..]"),
                                   ov.PartialShape.dynamic(), []])
def test_convert_like_shapes(tmp_path, shape):
    data = opset13.parameter(shape, ov.Type.f32, name="data")
    like = opset13.parameter([7], ov.Type.i8, name="like")
    node = opset13.convert_like(data, like)
    path = write_ir(node, [data, like], tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


@pytest.mark.parametrize(("src", "dst"), [(s, d) for s in RUNNABLE for d in RUNNABLE if s != d][::3] +
                         [("f32", "bf16"), ("bf16", "f16"), ("f64", "f16"), ("f32", "u8"), ("i64", "i8")])
def test_convert_like_values_equal_reference_convert(tmp_path, src, dst):
    rng = np.random.default_rng(hash((src, dst)) % 1000)

    def build(as_convert: bool):
        data = opset13.parameter([4, 5], _ov_type(src), name="data")
        like = opset13.parameter([1], _ov_type(dst), name="like")
        out = opset13.convert(data, _ov_type(dst)) if as_convert else opset13.convert_like(data, like)
        return write_ir(out, [data, like], tmp_path, "convert" if as_convert else "model")

    path = build(False)
    check_inference(path)
    tame = dst == "bf16" or (dst == "u32" and src[0] in "fb")
    feeds = {"data": _values(rng, src, (4, 5), tame), "like": _values(rng, dst, (1,))}
    check_run(path, feeds, oracle=_via_converts(build))


def test_convert_like_cpu_plugin(tmp_path):
    data = opset13.parameter([3, 4], ov.Type.f32, name="data")
    like = opset13.parameter([2], ov.Type.i32, name="like")
    path = write_ir(opset13.convert_like(data, like), [data, like], tmp_path)
    feeds = {"data": np.linspace(-9.7, 9.7, 12, dtype=np.float32).reshape(3, 4), "like": np.zeros(2, np.int32)}
    check_run(path, feeds, oracle="cpu")


def test_convert_like_in_a_shape_subgraph(tmp_path):
    """PyTorch's pattern: ShapeOf -> ConvertLike(to an i32 constant) -> Reshape's target shape. OpenVINO propagates
    no bounds through ConvertLike: the Reshape's dims are all dynamic in the IR, and so they are inferred; the
    run reshapes to the real values."""
    x = opset13.parameter(ov.PartialShape("[?,4,6]"), ov.Type.f32, name="x")
    shape = opset13.convert_like(opset13.shape_of(x, "i64"), opset13.constant(np.int32(0)))
    flat = opset13.reshape(x, opset13.concat([opset13.gather(shape, opset13.constant([0, 1]), opset13.constant(0)),
                                              opset13.constant(np.array([2, 3], np.int32))], 0), False)
    path = write_ir(flat, [x], tmp_path)
    check_inference(path)
    check_output_shapes(path, flat)
    check_run(path, {"x": np.arange(48, dtype=np.float32).reshape(2, 4, 6)}, oracle="cpu")


def test_convert_like_of_constants_folds(tmp_path):
    """A ConvertLike of constants computing a Reshape's target: OpenVINO's inference cannot evaluate it, so the IR
    declares dynamic dims; ir-run folds it (as OpenVINO does once compiling has made it a Convert) and infers the
    static dims, which the declared ones accept."""
    x = opset13.parameter([2, 6], ov.Type.f32, name="x")
    target = opset13.convert_like(opset13.constant(np.array([3.0, 4.0], np.float32)), opset13.constant(np.int64(0)))
    node = opset13.reshape(x, target, False)
    path = write_ir(node, [x], tmp_path)
    report = ir_runner.validate(str(path))
    assert report.ok and report.complete
    assert str(ir_runner.load(path).outputs[0].partial_shape) == "[3,4]"
    got = next(iter(ir_runner.load(path).run({"x": np.ones((2, 6), np.float32)}).values()))
    assert got.shape == (3, 4)


def test_convert_like_batch_rule():
    op = ir_runner.ops.registry.lookup("ConvertLike", "opset1")
    assert op.batch({}, [None, None], [None], [0, None]) == [0]


# -- ConvertPromoteTypes ---------------------------------------------------------------------------------------

def _ov_promoted(a, b, a_scalar, b_scalar, unsafe, torch, target="f32"):
    pa = opset13.parameter([] if a_scalar else [2], _ov_type(a))
    pb = opset13.parameter([] if b_scalar else [2], _ov_type(b))
    try:
        node = opset14.convert_promote_types(pa, pb, unsafe, torch, target)
    except RuntimeError:
        return None
    return node.get_output_element_type(0).get_type_name()


def test_promotion_table_equals_openvino():
    """Every pair of supported types, both attribute flags, scalars or not: the same common type (or the same
    refusal) as OpenVINO's inference."""
    differing = []
    for a, b in itertools.product(TYPES, TYPES):
        for unsafe, torch, a_scalar, b_scalar in itertools.product((False, True), (False, True), (False, True),
                                                                   (False, True)):
            if not torch and (a_scalar or b_scalar):
                continue
            want = _ov_promoted(a, b, a_scalar, b_scalar, unsafe, torch)
            try:
                got = promoted_type(ELEMENT_TYPES[a], PartialShape.of(() if a_scalar else (2,)), ELEMENT_TYPES[b],
                                    PartialShape.of(() if b_scalar else (2,)), unsafe=unsafe, pytorch_scalars=torch,
                                    u64_target=ELEMENT_TYPES["f32"]).name
            except PromotionError:
                got = None
            if got != want:
                differing.append((a, b, unsafe, torch, a_scalar, b_scalar, got, want))
    assert not differing, differing[:10]


@pytest.mark.parametrize("target", ["f32", "f64", "i64", "u64", "bf16"])
def test_u64_promotion_target(tmp_path, target):
    a = opset13.parameter([3], ov.Type.u64, name="a")
    b = opset13.parameter([3], ov.Type.i8, name="b")
    node = opset14.convert_promote_types(a, b, True, False, target)
    path = write_ir(node, [a, b], tmp_path)
    check_inference(path)
    assert [o.element_type.name for o in ir_runner.load(path).outputs] == [target, target]


@pytest.mark.parametrize("seed", range(20))
def test_promote_differential(tmp_path, seed):
    rng = np.random.default_rng(seed)
    while True:
        a, b = (str(t) for t in rng.choice(RUNNABLE, 2))
        unsafe, torch = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        a_shape = [] if rng.random() < 0.3 else [int(n) for n in rng.integers(0, 4, rng.integers(1, 3))]
        b_shape = [] if rng.random() < 0.3 else [3, 2]
        common = _ov_promoted(a, b, not a_shape, not b_shape, unsafe, torch)
        if common is not None:
            break

    def build(as_convert: bool):
        pa = opset13.parameter(a_shape, _ov_type(a), name="a")
        pb = opset13.parameter(b_shape, _ov_type(b), name="b")
        if as_convert:
            outs = [opset13.convert(pa, _ov_type(common)).output(0), opset13.convert(pb, _ov_type(common)).output(0)]
        else:
            node = opset14.convert_promote_types(pa, pb, unsafe, torch)
            outs = [node.output(0), node.output(1)]
        return write_ir(outs, [pa, pb], tmp_path, "convert" if as_convert else "model")

    path = build(False)
    check_inference(path)
    feeds = {name: _values(rng, t, tuple(shape), common == "bf16" or (common == "u32" and t[0] in "fb"))
             for name, t, shape in (("a", a, a_shape), ("b", b, b_shape))}
    got = check_run(path, feeds, oracle=_via_converts(build))
    assert {v.dtype for v in got.values()} == {ELEMENT_TYPES[common].dtype}


def test_promote_dynamic_shapes_and_cpu(tmp_path):
    a = opset13.parameter(ov.PartialShape("[?,2..4]"), ov.Type.i32, name="a")
    b = opset13.parameter(ov.PartialShape.dynamic(), ov.Type.f64, name="b")
    node = opset14.convert_promote_types(a, b)
    path = write_ir([node.output(0), node.output(1)], [a, b], tmp_path)
    check_inference(path)
    model = ir_runner.load(path)
    assert [str(o.partial_shape) for o in model.outputs] == ["[?,2..4]", "[...]"]
    # the CPU plugin needs a known rank, and computes f64 in f32: i16 with f32
    a = opset13.parameter(ov.PartialShape("[?,2..4]"), ov.Type.i16, name="a")
    b = opset13.parameter(ov.PartialShape("[?]"), ov.Type.f32, name="b")
    node = opset14.convert_promote_types(a, b)
    path = write_ir([node.output(0), node.output(1)], [a, b], tmp_path)
    feeds = {"a": np.array([[1, -7, 2**15 - 1]], np.int16), "b": np.array([0.5, -2.25], np.float32)}
    check_run(path, feeds, oracle="cpu")


def _promote_ir(a: str, b: str, attrs: dict) -> bytes:
    builder = IRBuilder()
    pa, pb = builder.parameter("a", a, "2"), builder.parameter("b", b, "2")
    layer = builder.layer("ConvertPromoteTypes", "opset14", [pa, pb], attrs=attrs, name="promote",
                          out_specs=[("FP32", [2]), ("FP32", [2])])
    builder.result((layer, 0))
    builder.result((layer, 1))
    return builder.build()[0]


@pytest.mark.parametrize(("a", "b", "attrs", "match"), [
    ("i32", "f32", {}, "Integer input cannot be safely promoted"),
    ("u64", "i64", {}, "Unsigned integer input cannot be safely promoted"),
    ("f16", "bf16", {}, "Unsupported input element types"),
    ("f16", "bf16", {"promote_unsafe": "maybe"}, "promote_unsafe"),
])
def test_promote_errors_name_the_layer(a, b, attrs, match):
    with pytest.raises(ir_runner.IRError, match=match) as info:
        ir_runner.load(_promote_ir(a, b, attrs))
    assert "promote" in str(info.value) and "ConvertPromoteTypes-14" in str(info.value)


def test_promote_unsafe_ir_attribute_is_read():
    model = ir_runner.load(_promote_ir("f16", "bf16", {"promote_unsafe": "true"}))
    b = np.array([3, 4], np.float32).astype(ml_dtypes.bfloat16)
    got = model.run({"a": np.array([1.5, -2], np.float16), "b": b})
    assert [v.dtype for v in got.values()] == [np.float32, np.float32]


def test_promote_batch_rule():
    op = ir_runner.ops.registry.lookup("ConvertPromoteTypes", "opset14")
    assert op.batch({}, [None, None], [None, None], [0, None]) == [0, None]


def test_promote_error_type_is_inference_error():
    with pytest.raises(InferenceError):
        ir_runner.load(_promote_ir("i32", "f32", {}))
