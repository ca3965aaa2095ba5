"""Weights compressed as NNCF (optimum-intel's ``--weight-format``) writes them, decompressed as OpenVINO's reference
computes the subgraph, bit for bit: ``Convert -> Subtract -> Multiply`` in the IR's types (f16 scales: each product
rounded to f16), then ``Reshape`` of the ``[out, groups, group_size]`` groups and ``Convert`` to f32.

The reference is each layer's ``Node.evaluate`` in order (``tests/helpers/llm.reference_folded``). OpenVINO's CPU
plugin (and its ConstantFolding pass) computes these subgraphs in f32 instead, without the f16 roundings: the last
test pins that down (docs/semantics.md, compressed weights).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

import ir_runner
from tests.helpers.bits import assert_same_bits
from tests.helpers.llm import OPENVINO_CONFIG, reference_folded

OUT, IN, GROUP = 24, 64, 32


def _packed(et: str, shape: list[int], rng) -> ov.op.Constant:
    """A Constant of ``et`` holding random bytes (every code possible)."""
    tensor = ov.Tensor(getattr(ov.Type, et), ov.Shape(shape))
    raw = tensor.data.view(np.uint8).reshape(-1)
    raw[...] = rng.integers(0, 256, raw.size, dtype=np.uint8)
    if et == "f8e8m0":  # scales as NNCF writes them: near 2**0, no NaN
        raw[...] = rng.integers(120, 131, raw.size, dtype=np.uint8)
    return ov.op.Constant(tensor)


def _scale(shape: list[int], rng) -> ov.Node:
    return ops.constant((rng.random(shape) * 0.05 + 0.001).astype(np.float16))


def _decompression(fmt: str, rng) -> ov.Node:
    """The f32 weight [OUT, IN] of one MatMul in format ``fmt``, as NNCF builds it."""
    grouped = [OUT, IN // GROUP, GROUP]
    if fmt == "int8_asym":  # per output channel, u8 zero points
        w = ops.subtract(ops.convert(_packed("u8", [OUT, IN], rng), "f16"),
                         ops.convert(_packed("u8", [OUT, 1], rng), "f16"))
        return ops.convert(ops.multiply(w, _scale([OUT, 1], rng)), "f32")
    if fmt == "int8_sym":
        return ops.convert(ops.multiply(ops.convert(_packed("i8", [OUT, IN], rng), "f16"), _scale([OUT, 1], rng)),
                           "f32")
    if fmt == "int4_asym":  # groups, u4 zero points
        w = ops.subtract(ops.convert(_packed("u4", grouped, rng), "f16"),
                         ops.convert(_packed("u4", [OUT, IN // GROUP, 1], rng), "f16"))
        w = ops.multiply(w, _scale([OUT, IN // GROUP, 1], rng))
    elif fmt == "int4_sym":
        w = ops.multiply(ops.convert(_packed("i4", grouped, rng), "f16"), _scale([OUT, IN // GROUP, 1], rng))
    elif fmt == "int4_channel":  # group size -1: one scale per output channel, no Reshape
        w = ops.multiply(ops.convert(_packed("i4", [OUT, IN], rng), "f16"), _scale([OUT, 1], rng))
        return ops.convert(w, "f32")
    elif fmt == "nf4":
        w = ops.multiply(ops.convert(_packed("nf4", grouped, rng), "f16"), _scale([OUT, IN // GROUP, 1], rng))
    elif fmt == "mxfp4":
        w = ops.multiply(ops.convert(_packed("f4e2m1", grouped, rng), "f16"),
                         ops.convert(_packed("f8e8m0", [OUT, IN // GROUP, 1], rng), "f16"))
    else:
        raise ValueError(fmt)
    return ops.convert(ops.reshape(w, ops.constant(np.array([OUT, IN], np.int64)), False), "f32")


FORMATS = ("int8_asym", "int8_sym", "int4_asym", "int4_sym", "int4_channel", "nf4", "mxfp4")


def _model(fmt: str, seed: int) -> ov.Model:
    rng = np.random.default_rng(seed)
    x = ops.parameter([2, IN], ov.Type.f32, name="x")
    weight = _decompression(fmt, rng)
    return ov.Model([weight.output(0), ops.matmul(x, weight, False, True).output(0)], [x], fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", [0, 1])
def test_decompression_is_the_references(fmt, seed, tmp_path):
    path = tmp_path / "model.xml"
    ov.save_model(_model(fmt, seed), str(path), compress_to_fp16=False)
    model = ir_runner.load(str(path))
    assert ir_runner.validate(str(path)).ok
    x = np.random.default_rng(seed + 7).standard_normal((2, IN)).astype(np.float32)
    weight, product = model.run({"x": x}).values()
    folded = reference_folded(ov.Core().read_model(str(path)))
    want = np.array(folded.output(0).get_node().input_value(0).get_node().data)
    assert_same_bits(weight, want)
    # the MatMul on the reference's weights, in the CPU plugin: within MatMul's bound (sums of IN products)
    cpu = ov.Core().compile_model(folded, "CPU", OPENVINO_CONFIG)({"x": x})[1]
    np.testing.assert_allclose(product, cpu, rtol=1e-5, atol=1e-5 * np.abs(cpu).max())


def test_decompression_is_folded_when_the_run_is_planned(tmp_path):
    """The decompression layers compute nothing per run: they are folded once, when the run is planned."""
    path = tmp_path / "model.xml"
    ov.save_model(_model("int4_asym", 3), str(path), compress_to_fp16=False)
    model = ir_runner.load(str(path))
    trace = model.trace({"x": np.ones((2, IN), np.float32)})
    sources = {layer.layer.type_version: layer.source for layer in trace.layers}
    assert sources["Multiply-1"] == "folded" and sources["Convert-1"] == "folded"


@pytest.mark.parametrize("fmt", ["int8_asym", "int4_asym", "nf4"])
def test_cpu_plugin_skips_the_f16_rounding(fmt, tmp_path):
    """Measured fact (docs/semantics.md): OpenVINO's CPU plugin gives each weight the f32 product of the f16
    factors, not the product rounded to f16 that the IR's Multiply (and the reference) gives."""
    model = _model(fmt, 5)
    cpu = np.array(ov.Core().compile_model(model, "CPU", OPENVINO_CONFIG)({"x": np.zeros((2, IN), np.float32)})[0])
    reference = np.array(reference_folded(model).output(0).get_node().input_value(0).get_node().data)
    assert not np.array_equal(cpu, reference)
    assert np.array_equal(cpu.astype(np.float16).astype(np.float32), reference)  # the same value, before rounding
