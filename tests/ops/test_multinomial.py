"""Multinomial-13: shapes as OpenVINO infers them; values bit for bit against a loop written from OpenVINO's
reference (``ov::reference::multinomial``; the wheel has no evaluate for it) whose uniform numbers come from
OpenVINO's own RandomUniform-8 ``Node.evaluate`` with the same seeds, as the reference draws them; f16/bf16/f64
probabilities, log-probabilities, with and without replacement; errors naming the layer. The CPU plugin draws
its numbers otherwise (MT19937 seeded by ``seed_seq{global_seed, op_seed}``): it is not an oracle here."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset1, opset3, opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.ops.generation.multinomial import OPS  # noqa: E402
from tests.helpers.fuzz_misc import multinomial_reference  # noqa: E402
from tests.helpers.irbuild import IRBuilder  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, write_ir  # noqa: E402

D = ov.Dimension
TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64}


def _model(tmp_path, et, shape, count, replacement, log_probs, seeds, out_type="i64", count_type=np.int64):
    p = opset1.parameter(shape, getattr(ov.Type, et), name="probs")
    p.output(0).get_tensor().set_names({"probs"})
    node = opset13.multinomial(p, opset1.constant(np.array([count], count_type)), out_type, replacement, log_probs,
                               *seeds)
    return write_ir(node, [p], tmp_path), node


@pytest.mark.parametrize("et", ["f32", "f16", "bf16", "f64"])
@pytest.mark.parametrize(("replacement", "log_probs"), [(True, False), (False, False), (True, True), (False, True)])
def test_values_equal_the_references_loop(et, replacement, log_probs, tmp_path):
    rng = np.random.default_rng(int(replacement) * 2 + int(log_probs))
    for trial in range(4):
        batch, classes = int(rng.integers(1, 4)), int(rng.integers(1, 9))
        count = int(rng.integers(1, 12 if replacement else classes + 1))
        probs = rng.random((batch, classes)) + 0.01
        probs = (np.log(probs) if log_probs else probs).astype(TYPES[et])
        seeds = (int(rng.integers(1, 2**40)), int(rng.integers(0, 2**40)))
        path, _ = _model(tmp_path, et, [batch, classes], count, replacement, log_probs, seeds)
        (got,) = ir_runner.load(str(path)).run({"probs": probs}).values()
        want = multinomial_reference(probs, count, replacement, log_probs, seeds, et)
        assert got.dtype == np.int64 and got.tolist() == want.tolist(), (trial, seeds)
        if not replacement:
            assert all(len(set(row)) == count for row in got.tolist())


def test_samples_follow_the_distribution_and_output_type(tmp_path):
    probs = np.array([[0.1, 0.0, 0.6, 0.3]], np.float32)
    path, _ = _model(tmp_path, "f32", [1, 4], 20000, True, False, (5, 7), out_type="i32", count_type=np.int32)
    (got,) = ir_runner.load(str(path)).run({"probs": probs}).values()
    assert got.dtype == np.int32 and got.shape == (1, 20000)
    frequencies = np.bincount(got[0], minlength=4) / 20000
    np.testing.assert_allclose(frequencies, probs[0], atol=0.015)
    assert frequencies[1] == 0


@pytest.mark.parametrize(("shape", "count"), [
    ([2, 5], 3), ([-1, 5], 3), ([D(1, 3), -1], 4), (ov.PartialShape.dynamic(), 3), ([2, 5], None),
])
def test_shapes_as_openvino_infers_them(shape, count, tmp_path):
    p = opset1.parameter(ov.PartialShape(shape) if isinstance(shape, list) else shape, ov.Type.f32, name="probs")
    params = [p]
    if count is None:
        n = opset1.parameter([1], ov.Type.i64, name="n")
        params.append(n)
    else:
        n = opset1.constant(np.array([count], np.int64))
    node = opset13.multinomial(p, n, "i32", True, False, 1, 2)
    path = write_ir(node, params, tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


def test_a_count_computed_from_a_shape_keeps_its_bounds(tmp_path):
    p = opset1.parameter([2, 5], ov.Type.f32, name="probs")
    q = opset1.parameter([D(2, 7)], ov.Type.f32, name="q")
    node = opset13.multinomial(p, opset3.shape_of(q), "i32", True, False, 1, 2)
    path = write_ir(node, [p, q], tmp_path)
    check_output_shapes(path, node)
    got = ir_runner.load(str(path)).run({"probs": np.ones((2, 5), np.float32), "q": np.zeros(4, np.float32)})
    assert next(iter(got.values())).shape == (2, 4)


def test_zero_seeds_draw_fresh_numbers_and_a_fed_count_works(tmp_path):
    p = opset1.parameter([1, 50], ov.Type.f32, name="probs")
    n = opset1.parameter([1], ov.Type.i32, name="n")
    path = write_ir(opset13.multinomial(p, n, "i64", True, False, 0, 0), [p, n], tmp_path)
    model = ir_runner.load(str(path))
    feeds = {"probs": np.ones((1, 50), np.float32), "n": np.array([30], np.int32)}
    first, second = (next(iter(model.run(feeds).values())) for _ in range(2))
    assert first.shape == (1, 30) and not np.array_equal(first, second)
    with pytest.raises(ir_runner.IRError, match="num_samples.*negative"):
        model.run({**feeds, "n": np.array([-1], np.int32)})


@pytest.mark.parametrize(("probs", "count", "attrs", "message"), [
    (("f32", "2,5"), ("i64", "1"), {"convert_type": "f32"}, "convert_type='f32' must be i32 or i64"),
    (("i32", "2,5"), ("i64", "1"), {}, "probs must have a floating-point element type"),
    (("f32", "5"), ("i64", "1"), {}, r"probs must be 2-D \[batch, classes\]"),
    (("f32", "2,5"), ("f32", "1"), {}, "num_samples must have an integer element type"),
    (("f32", "2,5"), ("i64", "2"), {}, "num_samples must be a scalar or have one element"),
])
def test_invalid_models_are_refused_naming_the_layer(probs, count, attrs, message):
    b = IRBuilder("multinomial")
    inputs = [b.parameter("probs", *probs), b.parameter("n", *count)]
    data = {"convert_type": "i64", "with_replacement": "true", "log_probs": "false", "global_seed": "1",
            "op_seed": "2", **attrs}
    b.result(b.layer("Multinomial", "opset13", inputs, attrs=data, out_specs=[("I64", [2, -1])], name="draw"))
    with pytest.raises(ir_runner.IRError, match=r"layer 'draw' \(Multinomial-13.*" + message):
        ir_runner.load(*b.build())


def test_no_batch_rule():
    (op,) = OPS
    assert isinstance(op.batch(None, None, None, [0, None]), str)
