"""Measure how quantized and weight-compressed models differ from OpenVINO's CPU plugin (docs/semantics.md,
"Quantization"; docs/crosscheck.md). Builds its models with OpenVINO's opset API in a temporary folder.

    python scripts/measure_quantized.py attention     # int8 attention: FakeQuantize before SDPA-13
    python scripts/measure_quantized.py compressed    # NNCF int8 weight compression (needs: pip install nncf)
    python scripts/measure_quantized.py int8          # NNCF post-training int8 quantization (needs nncf)

attention: crosscheck of an int8 BERT-like attention block (FakeQuantize before the projections' MatMuls and
before ScaledDotProductAttention-13) under three attention masks, then how many SDPA outputs move when one
query element is one level away. compressed: a MobileNet-like network compressed by ``nncf.compress_weights``
(INT8_ASYM, INT8_SYM): ir-run (the IR's f16 decompression) and ir-run on the IR rewritten to decompress in f32,
against the CPU plugin with and without its dynamic quantization, and crosscheck's verdict. int8: the same
network quantized by ``nncf.quantize`` (FakeQuantize layers), ir-run against the CPU plugin and crosscheck.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import openvino as ov
from openvino import opset13 as op

import ir_runner

L, H, D = 16, 4, 16


def _fq(x, low: float, high: float):
    return op.fake_quantize(x, *(op.constant(np.float32(v)) for v in (low, high, low, high)), 256)


def attention(folder: Path, rng: np.random.Generator) -> None:
    x = op.parameter([1, L, H * D], np.float32, name="x")
    mask = op.parameter([1, L], np.int64, name="attention_mask")

    def projection():
        w = op.constant((rng.standard_normal((H * D, H * D)) * 0.2).astype(np.float32))
        y = op.reshape(op.matmul(_fq(x, -3, 3), _fq(w, -0.8, 0.8), False, False),
                       op.constant(np.array([1, L, H, D], np.int64)), False)
        return _fq(op.transpose(y, op.constant(np.array([0, 2, 1, 3], np.int64))), -4, 4)

    q, k, v = projection(), projection(), projection()
    wide = op.convert(op.unsqueeze(mask, op.constant(np.array([1, 2], np.int64))), np.float32)
    bias = op.multiply(op.subtract(op.constant(np.float32(1)), wide), op.constant(np.finfo(np.float32).min))
    path = str(folder / "attention.xml")
    ov.save_model(ov.Model([op.scaled_dot_product_attention(q, k, v, bias, causal=False)], [x, mask]), path,
                  compress_to_fp16=False)
    model = ir_runner.load(path)
    for name, values in (("{0,1}", rng.integers(0, 2, (1, L))), ("[0,9]", rng.integers(0, 10, (1, L))),
                         ("ones", np.ones((1, L), np.int64))):
        feeds = {"x": rng.standard_normal((1, L, H * D)).astype(np.float32), "attention_mask": values}
        report = ir_runner.crosscheck(model, feeds)
        print(f"mask {name}: {report}")
        for row in report.layers:
            if row.status != "agree":
                print(f"  {row.status:9} {row.layer}: {row.mismatches}/{row.size} {row.note or ''}")
    # one query element one level (8/255) away: which SDPA outputs move
    qs, ks, vs = (rng.integers(-127, 128, (1, H, L, D)).astype(np.float32) * np.float32(4 / 127) for _ in "qkv")
    def sdpa(q):  # the specification's formula, in f64
        scores = q.astype(np.float64) @ np.swapaxes(ks, -1, -2) / np.sqrt(D)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        return weights / weights.sum(-1, keepdims=True) @ vs

    moved = qs.copy()
    moved[0, 1, 5, 3] += np.float32(8 / 255)
    changed = np.abs(sdpa(moved) - sdpa(qs)) > 1e-9
    print(f"one query element a level away: {int(changed.sum())} of {changed.size} SDPA outputs move, all in"
          f" query row {sorted(set(np.argwhere(changed)[:, 2].tolist()))} of head"
          f" {sorted(set(np.argwhere(changed)[:, 1].tolist()))}")


def compressed(folder: Path, rng: np.random.Generator) -> None:
    import nncf

    core, plain, image = ov.Core(), _network(folder, rng), rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
    for mode in ("INT8_ASYM", "INT8_SYM"):
        path, wide = folder / f"{mode}.xml", folder / f"{mode}_f32.xml"
        model = nncf.compress_weights(core.read_model(plain), mode=getattr(nncf.CompressWeightsMode, mode))
        ov.save_model(model, str(path), compress_to_fp16=False)
        ov.save_model(_decompress_in_f32(core.read_model(path)), str(wide), compress_to_fp16=False)
        ours, ours_wide = (next(iter(ir_runner.load(p).run([image]).values())) for p in (path, wide))
        cpu = {dq: core.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                         **({} if dq else {"DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})}
                                      )([image])[0] for dq in (True, False)}
        cpu_wide = core.compile_model(str(wide), "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                         "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})([image])[0]
        print(f"{mode}: outputs up to {np.abs(cpu[False]).max():.3g}; max abs difference from the CPU plugin"
              f" (no dynamic quantization): ir-run {np.abs(ours - cpu[False]).max():.3g}, ir-run with f32"
              f" decompression {np.abs(ours_wide - cpu[False]).max():.3g}; the plugin on both IRs"
              f" {np.abs(cpu_wide - cpu[False]).max():.3g}; with its dynamic quantization: ir-run"
              f" {np.abs(ours - cpu[True]).max():.3g}")
        report = ir_runner.crosscheck(str(path), [image])
        print(f"  crosscheck: {report}; explained {report.count('explained')}, inherited {report.count('inherited')}")


def int8(folder: Path, rng: np.random.Generator) -> None:
    import nncf

    core, plain = ov.Core(), _network(folder, rng)
    samples = [rng.standard_normal((1, 3, 64, 64)).astype(np.float32) for _ in range(10)]
    path = folder / "int8.xml"
    ov.save_model(nncf.quantize(core.read_model(plain), nncf.Dataset(samples)), str(path), compress_to_fp16=False)
    image = rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
    ours = next(iter(ir_runner.load(path).run([image]).values()))
    cpu = core.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([image])[0]
    print(f"int8: outputs up to {np.abs(cpu).max():.3g}; ir-run against the CPU plugin {np.abs(ours - cpu).max():.3g}")
    report = ir_runner.crosscheck(str(path), [image])
    print(f"  crosscheck: {report}")
    for row in report.layers:
        if row.status in ("diverges", "explained"):
            print(f"  {row.status} {row.layer}: {row.mismatches}/{row.size} {row.note or ''}")


def _network(folder: Path, rng: np.random.Generator) -> Path:
    """A MobileNet-like f32 network (convolutions, depthwise convolutions, Clamp, a mean and a MatMul)."""
    def conv(x, cin, cout, k=3, stride=1, group=False):
        shape = (cout, 1, 1, k, k) if group else (cout, cin, k, k)
        w = op.constant((rng.standard_normal(shape) * (2 / (k * k * (1 if group else cin))) ** 0.5).astype(np.float32))
        make = op.group_convolution if group else op.convolution
        y = make(x, w, [stride] * 2, [k // 2] * 2, [k // 2] * 2, [1, 1])
        return op.clamp(op.add(y, op.constant((rng.standard_normal((1, cout, 1, 1)) * 0.1).astype(np.float32))),
                        0.0, 6.0)

    x = op.parameter([1, 3, 64, 64], np.float32, name="image")
    y, channels = conv(x, 3, 32, stride=2), 32
    for c in (32, 64, 96):
        y = conv(conv(y, channels, c, k=1), c, c, stride=2, group=True)
        channels = c
    y = op.reduce_mean(y, op.constant(np.array([2, 3], np.int64)), False)
    y = op.matmul(y, op.constant((rng.standard_normal((96, 100)) * 0.1).astype(np.float32)), False, False)
    plain = folder / "f32.xml"
    ov.save_model(ov.Model([y], [x]), str(plain), compress_to_fp16=False)
    return plain


def _decompress_in_f32(model):
    """The model with every Convert to f16 made a Convert to f32, and f16 Consts converted to f32 first."""
    for node in model.get_ordered_ops():
        narrow = node.get_output_element_type(0) == ov.Type.f16
        if narrow and node.get_type_name() == "Convert":
            replacement = op.convert(node.input(0).get_source_output(), np.float32)
        elif narrow and node.get_type_name() == "Constant":
            replacement = op.convert(node.output(0), np.float32)
        else:
            continue
        for target in list(node.output(0).get_target_inputs()):
            if target.get_node().get_friendly_name() != replacement.get_friendly_name():
                target.replace_source_output(replacement.output(0))
    model.validate_nodes_and_infer_types()
    return model


if __name__ == "__main__":
    wanted = sys.argv[1:] or ["attention", "compressed", "int8"]
    with tempfile.TemporaryDirectory() as tmp:
        for what in wanted:
            {"attention": attention, "compressed": compressed, "int8": int8}[what](Path(tmp), np.random.default_rng(0))
