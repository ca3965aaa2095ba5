"""Models for the viewer's tests: a planted declared-vs-inferred mismatch, a transformer of 1,000+ layers named
as torch exports name them, a TensorIterator-free model with a Loop body, and a decompression subgraph."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.helpers.irbuild import IRBuilder

MISMATCH_LAYER = "__module.block/aten::add/Add"


def planted_mismatch(directory: Path) -> Path:
    """``x + 1`` then ReLU, where the Add's output port declares [5] instead of the inferred [4]."""
    b = IRBuilder("planted_mismatch")
    x = b.parameter("x", "f32", "4")
    one = b.const("__module.block/aten::add/Constant", np.ones(4, np.float32))
    add = b.layer("Add", "opset1", [x, one], attrs={"auto_broadcast": "numpy"}, out_specs=[("FP32", [5])],
                  name=MISMATCH_LAYER)
    relu = b.layer("Relu", "opset1", [add], in_specs=[("FP32", [4])], out_specs=[("FP32", [4])],
                   name="__module.block/aten::relu/Relu")
    b.result(relu, "out")
    return b.write(directory, "mismatch")


def transformer(directory: Path, blocks: int = 48, hidden: int = 8) -> Path:
    """An encoder of ``blocks`` attention blocks (25 layers each, Consts included) named like a torch export
    (``__module.encoder.layer.N.attention.self.query/aten::linear/MatMul``), written with openvino."""
    import openvino as ov
    from openvino import opset13 as ops

    rng = np.random.default_rng(0)

    def named(node, name: str):
        node.set_friendly_name(name)
        return node

    def linear(x, prefix: str):
        weight = named(ops.constant(rng.standard_normal((hidden, hidden)).astype(np.float32)), f"{prefix}.weight")
        bias = named(ops.constant(rng.standard_normal(hidden).astype(np.float32)), f"{prefix}.bias")
        product = named(ops.matmul(x, weight, False, True), f"__module.{prefix}/aten::linear/MatMul")
        return named(ops.add(product, bias), f"__module.{prefix}/aten::linear/Add")

    x = ops.parameter([1, 4, hidden], np.float32, name="hidden_states")
    h = x
    for i in range(blocks):
        base = f"encoder.layer.{i}"
        q = linear(h, f"{base}.attention.self.query")
        k = linear(h, f"{base}.attention.self.key")
        v = linear(h, f"{base}.attention.self.value")
        scores = named(ops.matmul(q, k, False, True), f"__module.{base}.attention.self/aten::matmul/MatMul")
        probs = named(ops.softmax(scores, -1), f"__module.{base}.attention.self/aten::softmax/Softmax")
        context = named(ops.matmul(probs, v, False, False), f"__module.{base}.attention.self/aten::matmul/MatMul_1")
        out = linear(context, f"{base}.output.dense")
        residual = named(ops.add(out, h), f"__module.{base}.output/aten::add/Add")
        axes = named(ops.constant(np.array([-1], np.int64)), f"__module.{base}.output.LayerNorm/Constant")
        h = named(ops.mvn(residual, axes, True, 1e-5, "inside_sqrt"),
                  f"__module.{base}.output.LayerNorm/aten::layer_norm/MVN")
    path = Path(directory) / "transformer.xml"
    ov.save_model(ov.Model([ops.result(h)], [x], "transformer"), str(path), compress_to_fp16=False)
    return path


def compressed_matmul(directory: Path) -> Path:
    """``x @ W`` with W stored as u8 and decompressed as NNCF writes it: u8 Const -> Convert f16 -> Subtract
    (zero point) -> Multiply (scale) -> Convert f32."""
    b = IRBuilder("compressed")
    x = b.parameter("x", "f32", "2,4")
    weight = b.const("w/u8", np.arange(12, dtype=np.uint8).reshape(4, 3))
    wide = b.convert(weight, "f16", name="w/convert")
    zero = b.const("w/zero_point", np.full((1, 3), 3, np.float16))
    centred = b.layer("Subtract", "opset1", [wide, zero], attrs={"auto_broadcast": "numpy"},
                      out_specs=[("FP16", [4, 3])], name="w/subtract")
    scale = b.const("w/scale", np.full((1, 3), 0.5, np.float16))
    scaled = b.layer("Multiply", "opset1", [centred, scale], attrs={"auto_broadcast": "numpy"},
                     out_specs=[("FP16", [4, 3])], name="w/multiply")
    weights = b.convert(scaled, "f32", name="w/to_f32")
    product = b.layer("MatMul", "opset1", [x, weights], attrs={"transpose_a": "false", "transpose_b": "false"},
                      out_specs=[("FP32", [2, 3])], name="__module.head/aten::linear/MatMul")
    b.result(product, "out")
    return b.write(directory, "compressed")


def declare_wrong_dim(path: Path, layer_name: str) -> None:
    """Rewrite the IR at ``path`` so that the first output port of ``layer_name`` declares its last dim one
    larger than it is."""
    from lxml import etree

    tree = etree.parse(str(path))
    layer = next(layer for layer in tree.iter("layer") if layer.get("name") == layer_name)
    dim = layer.find("output/port").findall("dim")[-1]
    dim.text = str(int(dim.text) + 1)
    tree.write(str(path))
