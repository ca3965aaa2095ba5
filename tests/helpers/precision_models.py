"""Small networks with a planted precision fault, for ``ir_runner.precision`` (built with IRBuilder; each returns
``(xml, bin, feeds)`` and the name of the planted layer is a module constant)."""

from __future__ import annotations

import numpy as np

from .irbuild import IRBuilder

OVERFLOW_LAYER = "amplify"  # its f32 output reaches ~1e5, beyond f16's 65504
UNDERFLOW_LAYER = "square"  # squares of ~1e-4: 1e-8 underflows f16 to zero, the variance becomes 0
CANCEL_LAYER = "mean_of_squares"  # E[x^2] of values near 1000: bf16 keeps 8 bits, E[x^2] - E[x]^2 cancels


def _matmul(b: IRBuilder, name: str, data, weights: np.ndarray, rows: int):
    w = b.const(f"{name}/weights", weights.astype(np.float32))
    return b.layer("MatMul", "opset1", [data, w], attrs={"transpose_a": "false", "transpose_b": "false"},
                   out_specs=[("FP32", [rows, weights.shape[1]])], name=name)


def _binary(b: IRBuilder, kind: str, name: str, left, right, dims):
    return b.layer(kind, "opset1", [left, right], attrs={"auto_broadcast": "numpy"}, out_specs=[("FP32", dims)],
                   name=name)


def overflow_model() -> tuple[bytes, bytes, dict[str, np.ndarray]]:
    """x[4,32] -> MatMul -> Multiply by 4e4 ('amplify': ~1e5) -> MatMul by 1e-4-sized weights -> Relu -> out."""
    rng = np.random.default_rng(25)
    b = IRBuilder("overflow")
    x = b.parameter("x", "f32", "4,32")
    first = _matmul(b, "project", x, rng.uniform(-1, 1, (32, 64)), 4)
    gain = b.const("amplify/gain", np.array([[4e4]], np.float32))
    hot = _binary(b, "Multiply", OVERFLOW_LAYER, first, gain, [4, 64])
    back = _matmul(b, "reduce", hot, rng.uniform(-1, 1, (64, 16)) * 1e-4, 4)
    relu = b.layer("Relu", "opset1", [back], out_specs=[("FP32", [4, 16])], name="relu")
    b.result(relu, "out")
    xml, weights = b.build()
    return xml, weights, {"x": rng.uniform(-1, 1, (4, 32)).astype(np.float32)}


def underflow_model() -> tuple[bytes, bytes, dict[str, np.ndarray]]:
    """A hand-written normalisation without eps of values ~1e-4: d = x - mean(x); d / sqrt(mean(d * d)), then a
    MatMul. In f16, d * d ('square', ~1e-8) underflows to zero, the variance is 0 and the output infinite."""
    rng = np.random.default_rng(26)
    b = IRBuilder("underflow")
    x = b.parameter("x", "f32", "2,64")
    axes = b.const("axes", np.array([1], np.int64))

    def mean(name, data):
        return b.layer("ReduceMean", "opset1", [data, axes], attrs={"keep_dims": "true"},
                       out_specs=[("FP32", [2, 1])], name=name)

    centred = _binary(b, "Subtract", "centre", x, mean("mean", x), [2, 64])
    square = _binary(b, "Multiply", UNDERFLOW_LAYER, centred, centred, [2, 64])
    std = b.layer("Sqrt", "opset1", [mean("variance", square)], out_specs=[("FP32", [2, 1])], name="std")
    normal = _binary(b, "Divide", "normalise", centred, std, [2, 64])
    out = _matmul(b, "head", normal, rng.uniform(-1, 1, (64, 8)), 2)
    b.result(out, "out")
    xml, weights = b.build()
    return xml, weights, {"x": (rng.standard_normal((2, 64)) * 1e-4).astype(np.float32)}


def cancellation_model() -> tuple[bytes, bytes, dict[str, np.ndarray]]:
    """x[8,64] -> MatMul (values ~1000 +- 1) -> variance as E[h^2] - E[h]^2 -> (h - E[h]) / sqrt(var + 1) -> MatMul.
    In bf16, E[h^2] ('mean_of_squares', ~1e6) keeps 8 bits: the variance cancels to 0 or to thousands."""
    rng = np.random.default_rng(27)
    b = IRBuilder("cancellation")
    x = b.parameter("x", "f32", "8,64")
    hidden = _matmul(b, "embed", x, np.eye(64) + rng.uniform(-0.01, 0.01, (64, 64)), 8)
    axes = b.const("axes", np.array([1], np.int64))

    def mean(name, data):
        return b.layer("ReduceMean", "opset1", [data, axes], attrs={"keep_dims": "true"},
                       out_specs=[("FP32", [8, 1])], name=name)

    mu = mean("mean", hidden)
    squares = _binary(b, "Multiply", "squares", hidden, hidden, [8, 64])
    mean_sq = mean(CANCEL_LAYER, squares)
    mu_sq = _binary(b, "Multiply", "mean_squared", mu, mu, [8, 1])
    variance = _binary(b, "Subtract", "variance", mean_sq, mu_sq, [8, 1])
    one = b.const("one", np.array([[1.0]], np.float32))
    std = b.layer("Sqrt", "opset1", [_binary(b, "Add", "variance_eps", variance, one, [8, 1])],
                  out_specs=[("FP32", [8, 1])], name="std")
    normal = _binary(b, "Divide", "normalise", _binary(b, "Subtract", "centre", hidden, mu, [8, 64]), std, [8, 64])
    out = _matmul(b, "head", normal, rng.uniform(-1, 1, (64, 8)), 8)
    b.result(out, "out")
    xml, weights = b.build()
    feeds = (1000 + 3 * rng.standard_normal((8, 64))).astype(np.float32)
    return xml, weights, {"x": feeds}


BADLY_QUANTISED_LAYER = "fc2"  # per-tensor u8 scale stretched by one outlier weight: most weights land on 0 or +-1


def _compressed_weight(b: IRBuilder, name: str, weights: np.ndarray, per_tensor: bool):
    """u8 codes -> Convert f32 -> Subtract zero point -> Multiply scale: NNCF's int8 asymmetric decompression."""
    low = weights.min() if per_tensor else weights.min(axis=1, keepdims=True)
    high = weights.max() if per_tensor else weights.max(axis=1, keepdims=True)
    scale = np.broadcast_to((high - low) / 255, (weights.shape[0], 1)).astype(np.float32)
    zero = np.broadcast_to(np.round(-low / scale), (weights.shape[0], 1)).astype(np.float32)
    codes = np.clip(np.round(weights / scale + zero), 0, 255).astype(np.uint8)
    dims = list(weights.shape)
    wide = b.convert(b.const(f"{name}/codes", codes), "f32", name=f"{name}/decompress")
    centred = _binary(b, "Subtract", f"{name}/zero_point", wide, b.const(f"{name}/zp", zero), dims)
    return _binary(b, "Multiply", f"{name}/scale", centred, b.const(f"{name}/scale_value", scale), dims)


def compressed_mlp(compressed: bool = True) -> tuple[bytes, bytes, dict[str, np.ndarray]]:
    """x[4,64] -> fc1 -> Relu -> fc2 -> Relu -> fc3 (MatMuls with transposed [out, in] weights). Compressed: every
    weight int8 per output channel except fc2's, int8 per tensor with one outlier weight of 50 (the others are
    within +-0.2): its grid steps 0.2. Uncompressed: the same weights (the outlier included) as f32 Consts, the
    layers named alike."""
    rng = np.random.default_rng(28)
    b = IRBuilder("compressed_mlp" if compressed else "original_mlp")
    x = b.parameter("x", "f32", "4,64")
    shapes = {"fc1": (96, 64), "fc2": (96, 96), "fc3": (16, 96)}
    data = x
    for name, shape in shapes.items():
        weights = rng.uniform(-0.2, 0.2, shape).astype(np.float32)
        if name == BADLY_QUANTISED_LAYER:
            weights[0, 0] = 50.0
        w = (_compressed_weight(b, name, weights, per_tensor=name == BADLY_QUANTISED_LAYER) if compressed
             else b.const(f"{name}/weights", weights))
        data = b.layer("MatMul", "opset1", [data, w], attrs={"transpose_a": "false", "transpose_b": "true"},
                       out_specs=[("FP32", [4, shape[0]])], name=name)
        if name != "fc3":
            data = b.layer("Relu", "opset1", [data], out_specs=[("FP32", [4, shape[0]])], name=f"{name}/relu")
    b.result(data, "out")
    xml, weights = b.build()
    return xml, weights, {"x": rng.uniform(-1, 1, (4, 64)).astype(np.float32)}


EXAMPLES = {"overflow": overflow_model, "underflow": underflow_model, "cancellation": cancellation_model,
            "mlp_int8": compressed_mlp, "mlp_f32": lambda: compressed_mlp(compressed=False)}
"""The models of docs/precision.md's examples, committed in examples/precision/ (``NAME.xml``, ``NAME.bin``,
``NAME.npz`` the inputs); ``python -m tests.helpers.precision_models FOLDER`` writes them again."""


def write_examples(folder) -> None:
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in EXAMPLES.items():
        xml, weights, feeds = make()
        (folder / f"{name}.xml").write_bytes(xml)
        (folder / f"{name}.bin").write_bytes(weights)
        np.savez(folder / f"{name}.npz", **feeds)


if __name__ == "__main__":
    import sys

    write_examples(sys.argv[1])
