"""GroupedMatMul-17: shapes as the installed OpenVINO infers them (2-D x 3-D with offsets, 3-D x 3-D, intervals,
dynamic ranks, its errors), values against a direct computation (the wheel has no evaluate and the CPU plugin
no kernel): integers exact, floats within the stated bound, empty groups, rows past the last offset; bad
offsets refused naming the layer; the batch rule."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset17  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.linalg.grouped_matmul import OPS  # noqa: E402
from ir_runner.types import ELEMENT_TYPES, PartialShape, TensorSpec  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, write_ir  # noqa: E402

D = ov.Dimension
UNIT = {"f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8, "f64": 2.0**-53}
TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64, "i32": np.int32,
         "i64": np.int64, "i8": np.int8}


def _param(name, shape, et):
    p = opset1.parameter(ov.PartialShape.dynamic() if shape is None else shape, getattr(ov.Type, et), name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def _model(tmp_path, a_shape, b_shape, et="f32", offsets=None, offsets_type="i32"):
    a, b = _param("a", a_shape, et), _param("b", b_shape, et)
    params = [a, b]
    if offsets == "fed":
        params.append(_param("offsets", [b_shape[0] if b_shape else -1], offsets_type))
        node = opset17.grouped_matmul(a, b, params[-1])
    elif offsets is not None:
        node = opset17.grouped_matmul(a, b, opset1.constant(np.array(offsets, TYPES[offsets_type])))
    else:
        node = opset17.grouped_matmul(a, b)
    return write_ir(node, params, tmp_path), node


@pytest.mark.parametrize(("a_shape", "b_shape", "offsets"), [
    ([6, 4], [3, 5, 4], [2, 2, 6]), ([-1, 4], [3, -1, -1], "fed"), ([3, 2, 4], [3, 5, 4], None),
    ([-1, 2, 4], [3, 5, -1], None), ([D(2, 4), 2, 4], [D(3, 6), 5, 4], None), (None, [3, 5, 4], "fed"),
    ([6, 4], None, [1, 2, 3]), ([3, 2, 4], [3, 5, 4], [1, 1, 2]),
])
def test_shapes_as_openvino_infers_them(a_shape, b_shape, offsets, tmp_path):
    path, node = _model(tmp_path, a_shape, b_shape, offsets=offsets)
    check_inference(path)
    check_output_shapes(path, node)


def _direct(a, b, ends):
    """float64 (or Python-int) products, group by group."""
    if a.ndim == 3:
        return np.einsum("gmk,gnk->gmn", a.astype(np.float64), b.astype(np.float64))
    out = np.zeros((a.shape[0], b.shape[1]))
    start = 0
    for g, end in enumerate(ends):
        out[start:end] = a[start:end].astype(np.float64) @ b[g].astype(np.float64).T
        start = end
    return out


@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "f64"])
@pytest.mark.parametrize("case", ["3x3", "2x3"])
def test_float_values_within_the_bound(et, case, tmp_path):
    rng = np.random.default_rng(len(et))
    k = 40
    if case == "3x3":
        a, b, ends = rng.standard_normal((3, 5, k)), rng.standard_normal((3, 6, k)), None
        path, _ = _model(tmp_path, [3, 5, k], [3, 6, k], et)
        feeds = {"a": a.astype(TYPES[et]), "b": b.astype(TYPES[et])}
    else:
        a, b, ends = rng.standard_normal((9, k)), rng.standard_normal((4, 6, k)), [2, 2, 7, 8]
        path, _ = _model(tmp_path, [9, k], [4, 6, k], et, offsets="fed")
        feeds = {"a": a.astype(TYPES[et]), "b": b.astype(TYPES[et]), "offsets": np.array(ends, np.int32)}
    (got,) = ir_runner.load(str(path)).run(feeds).values()
    assert got.dtype == TYPES[et]
    want = _direct(feeds["a"], feeds["b"], ends)
    magnitude = _direct(np.abs(feeds["a"].astype(np.float64)), np.abs(feeds["b"].astype(np.float64)), ends)
    assert (np.abs(got.astype(np.float64) - want) <= k * UNIT[et] * magnitude + 1e-300).all()
    if case == "2x3":
        assert not got[8:].astype(np.float64).any() and not got[2:2].size  # (rows past the last offset: 0)


@pytest.mark.parametrize("et", ["i32", "i64", "i8"])
def test_integers_exact_and_wrapping(et, tmp_path):
    rng = np.random.default_rng(2)
    info = np.iinfo(TYPES[et])
    a = rng.integers(info.min // 2, info.max // 2, (7, 5)).astype(TYPES[et])
    b = rng.integers(info.min // 2, info.max // 2, (2, 3, 5)).astype(TYPES[et])
    path, _ = _model(tmp_path, [7, 5], [2, 3, 5], et, offsets=[3, 7], offsets_type="i64")
    (got,) = ir_runner.load(str(path)).run({"a": a, "b": b}).values()
    want = np.zeros((7, 3), object)
    for g, (start, end) in enumerate(((0, 3), (3, 7))):
        want[start:end] = a[start:end].astype(object) @ b[g].astype(object).T
    bits = info.bits
    wrapped = [[(int(v) + 2**(bits - 1)) % 2**bits - 2**(bits - 1) for v in row] for row in want]
    assert got.tolist() == wrapped


@pytest.mark.parametrize(("offsets", "message"), [
    ([3, 2], r"offsets\[1\] = 2 must lie in \[3, 7\]"), ([3, 9], r"offsets\[1\] = 9 must lie in \[3, 7\]"),
    ([-1, 2], r"offsets\[0\] = -1 must lie in \[0, 7\]"),
])
def test_bad_offsets_are_refused_naming_the_layer(offsets, message, tmp_path):
    path, _ = _model(tmp_path, [7, 5], [2, 3, 5], offsets="fed")
    feeds = {"a": np.ones((7, 5), np.float32), "b": np.ones((2, 3, 5), np.float32),
             "offsets": np.array(offsets, np.int32)}
    with pytest.raises(ir_runner.InputError, match=r"GroupedMatMul-17.*" + message):
        ir_runner.load(str(path)).run(feeds)


@pytest.mark.parametrize(("shapes", "types", "message"), [
    (("6,4", "3,5,4"), ("f32", "f32"), "the 2-D x 3-D case needs the offsets input"),
    (("6,4", "3,5,3", "3"), ("f32", "f32", "i32"), r"the inner dim K .* mismatch: mat_a has 4, mat_b 3"),
    (("3,2,4", "4,5,4"), ("f32", "f32"), r"the group dim \(0\) mismatch: mat_a has 3, mat_b 4"),
    (("6,4,1,1", "3,5,4", "3"), ("f32", "f32", "i32"), "OpenVINO supports 2-D x 3-D and 3-D x 3-D"),
    (("6,4", "3,5,4", "3,1"), ("f32", "f32", "i32"), "offsets must be 1-D"),
    (("6,4", "3,5,4", "3"), ("f32", "f32", "f32"), "offsets must be i32 or i64"),
    (("6,4", "3,5,4", "3"), ("f32", "f16", "i32"), "element types of mat_a, mat_b must be equal"),
])
def test_invalid_models_are_refused_naming_the_layer(shapes, types, message):
    b = IRBuilder("gmm")
    inputs = [b.parameter(n, t, s) for n, t, s in zip(("a", "b", "offsets"), types, shapes)]
    b.result(b.layer("GroupedMatMul", "opset17", inputs, attrs={}, out_specs=[("FP32", [6, 5])], name="experts"))
    with pytest.raises(ir_runner.InferenceError, match=r"layer 'experts' \(GroupedMatMul-17.*" + message):
        ir_runner.load(*b.build())


def test_batch_rule():
    (op,) = OPS
    three, two = (TensorSpec(ELEMENT_TYPES["f32"], PartialShape.of((2,) * rank)) for rank in (3, 2))
    assert op.batch({}, [three, three], None, [0, 0]) == [0]
    assert isinstance(op.batch({}, [two, three, TensorSpec(ELEMENT_TYPES["i32"], PartialShape.of((2,)))], None,
                               [0, None, None]), str)
