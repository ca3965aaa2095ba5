"""Regenerate the real-network corpus in models/real/ (transformers, recurrent nets, a ResNet block).

Needs the optional group ``pip install -e '.[models]'`` (torch, transformers, onnx) besides ``openvino``:

    python -m scripts.make_real_models                  # every network
    python -m scripts.make_real_models gpt2 lstm        # some of them
    python -m scripts.make_real_models --zoo resnet50   # convert (and cache) one ONNX model-zoo CNN

Each network is built from a small config with seeded random weights (every weight matrix drawn with
std 1/sqrt(fan-in), norms' scales near 1, biases and BatchNorm statistics small), traced by OpenVINO's
PyTorch frontend (``openvino.convert_model(module, example_input=...)``; the ``*_onnx`` networks through
``torch.onnx.export`` and OpenVINO's ONNX frontend instead) and written to ``models/real/NAME/``:

- ``model.xml`` / ``model.bin``: ``openvino.save_model(..., compress_to_fp16=False)``; token inputs are
  dynamic ``[?,?]`` ids (i64) with an attention mask (i64, right padding: a fully masked row is NaN in torch);
- ``inputs.npz``: the inputs, keyed by input name;
- ``expected_openvino.npz``: OpenVINO CPU's outputs (``INFERENCE_PRECISION_HINT=f32``) on the saved IR,
  keyed by output name (the names this script gives the outputs);
- ``expected_source.npz``: torch's outputs for the same inputs.

``models/real/manifest.json`` lists every network: its description, config, vocabulary (for token inputs),
inputs, outputs, file sizes and the largest difference between OpenVINO and torch. Seeds and the .npz
timestamps are fixed; the IR bytes depend on the torch/transformers/openvino versions (recorded in the manifest)
and the names OpenVINO makes up for some layers on what the same process converted before.

The ONNX model-zoo CNNs are not committed (VGG-19's IR is 0.5 GB): ``tests/helpers/zoo.py`` converts
them on demand into a cache; ``--zoo NAME`` does it from here and prints the timings.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "models" / "real"
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
NPZ_TIMESTAMP = (1980, 1, 1, 0, 0, 0)
SEED = 13
BATCH, SEQ = 2, 8
PAD = 3  # the second row's last PAD tokens are padding


@dataclass
class Net:
    """A torch module to convert, its inputs, the names of its outputs, and what the manifest says of it."""

    module: object
    inputs: dict[str, np.ndarray]
    outputs: tuple[str, ...]
    description: str
    config: dict = field(default_factory=dict)
    vocab: int | None = None
    shapes: dict[str, list[int]] | None = None  # input shapes for convert_model (-1 dynamic); default all dynamic
    frontend: str = "pytorch"  # or "onnx": torch.onnx.export, then OpenVINO's ONNX frontend


# ---------------------------------------------------------------- weights and inputs


def randomise(module, seed: int) -> None:
    """Seeded random weights: std 1/sqrt(fan-in) for matrices and kernels, norms' scales 1 +- 0.1, biases
    +- 0.1, BatchNorm running means +- 0.1 and variances in [0.5, 1.5]."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() >= 2:
                fan_in = int(np.prod(p.shape[1:]))
                p.copy_(torch.randn(p.shape, generator=gen) / fan_in ** 0.5)
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
        for name, b in module.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(0.1 * torch.randn(b.shape, generator=gen))
            elif name.endswith("running_var"):
                b.copy_(0.5 + torch.rand(b.shape, generator=gen))
    module.eval()


def token_inputs(vocab: int, seed: int, mask: bool = True) -> dict[str, np.ndarray]:
    """``input_ids`` [BATCH, SEQ] in [0, vocab) and an ``attention_mask`` with the second row right-padded."""
    rng = np.random.default_rng(seed)
    feeds = {"input_ids": rng.integers(0, vocab, (BATCH, SEQ), dtype=np.int64)}
    if mask:
        attention = np.ones((BATCH, SEQ), np.int64)
        attention[1, SEQ - PAD:] = 0
        feeds["attention_mask"] = attention
    return feeds


def _wrap(forward: Callable, module):
    """A torch.nn.Module whose forward(*inputs) is ``forward(module, *inputs)`` (a tensor or a tuple); traced
    with positional example inputs, named by ``convert_model(input=...)``."""
    import torch

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = module

        def forward(self, *args):
            return forward(self.inner, *args)

    return Wrapper().eval()


# ---------------------------------------------------------------- the networks


def _config_dict(config) -> dict:
    keep = {}
    for key, value in config.to_diff_dict().items():
        if isinstance(value, (int, float, str, bool)) and not key.startswith(("_", "transformers_version")):
            keep[key] = value
    return keep


def gpt2() -> Net:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=300, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=0,
                        eos_token_id=0)
    model = GPT2LMHeadModel(config)
    randomise(model, SEED)
    module = _wrap(lambda m, input_ids, attention_mask: m(input_ids=input_ids, attention_mask=attention_mask,
                                                          use_cache=False).logits, model)
    return Net(module, token_inputs(300, 1), ("logits",), "GPT-2 LM head: 2 layers, hidden 32, 2 heads",
               _config_dict(config), 300)


def bert() -> Net:
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    model = BertModel(config)
    randomise(model, SEED)
    module = _wrap(lambda m, input_ids, attention_mask: tuple(m(input_ids=input_ids,
                                                                attention_mask=attention_mask)[:2]), model)
    return Net(module, token_inputs(200, 2), ("last_hidden_state", "pooler_output"),
               "BERT encoder with pooler: 2 layers, hidden 32, 2 heads", _config_dict(config), 200)


def distilbert() -> Net:
    from transformers import DistilBertConfig, DistilBertModel

    config = DistilBertConfig(vocab_size=200, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                              max_position_embeddings=64)
    model = DistilBertModel(config)
    randomise(model, SEED)
    module = _wrap(lambda m, input_ids, attention_mask: m(input_ids=input_ids,
                                                          attention_mask=attention_mask).last_hidden_state, model)
    return Net(module, token_inputs(200, 3), ("last_hidden_state",), "DistilBERT encoder: 2 layers, hidden 32",
               _config_dict(config), 200)


def _causal_lm(config_class, model_class, name: str, description: str, seed: int, **extra) -> Net:
    config = config_class(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                          bos_token_id=0, eos_token_id=0, pad_token_id=0, **extra)
    model = model_class(config)
    randomise(model, SEED)
    module = _wrap(lambda m, input_ids, attention_mask: m(input_ids=input_ids, attention_mask=attention_mask,
                                                          use_cache=False).logits, model)
    return Net(module, token_inputs(256, seed), ("logits",), description, _config_dict(config), 256)


def llama() -> Net:
    from transformers import LlamaConfig, LlamaForCausalLM

    return _causal_lm(LlamaConfig, LlamaForCausalLM, "llama",
                      "Llama causal LM: 2 layers, hidden 64, 4 query heads over 2 key/value heads (GQA), RoPE,"
                      " RMSNorm, SwiGLU", 4)


def qwen2() -> Net:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return _causal_lm(Qwen2Config, Qwen2ForCausalLM, "qwen2",
                      "Qwen2 causal LM: 2 layers, hidden 64, GQA 4/2 with q/k/v biases, RoPE, RMSNorm", 5)


def t5_encoder() -> Net:
    from transformers import T5Config, T5EncoderModel

    config = T5Config(vocab_size=200, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2,
                      relative_attention_num_buckets=8, relative_attention_max_distance=16)
    model = T5EncoderModel(config)
    randomise(model, SEED)
    module = _wrap(lambda m, input_ids, attention_mask: m(input_ids=input_ids,
                                                          attention_mask=attention_mask).last_hidden_state, model)
    return Net(module, token_inputs(200, 6), ("last_hidden_state",),
               "T5 encoder: 2 layers, d_model 32, relative position buckets", _config_dict(config), 200)


def vit() -> Net:
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                       num_attention_heads=2, intermediate_size=64)
    model = ViTModel(config, add_pooling_layer=True)
    randomise(model, SEED)
    module = _wrap(lambda m, pixel_values: tuple(m(pixel_values=pixel_values)[:2]), model)
    pixels = np.random.default_rng(7).standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    return Net(module, {"pixel_values": pixels}, ("last_hidden_state", "pooler_output"),
               "ViT: 32x32 images, 8x8 patches, 2 layers, hidden 32", _config_dict(config),
               shapes={"pixel_values": [-1, 3, 32, 32]})


def whisper_encoder() -> Net:
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    config = WhisperConfig(vocab_size=100, num_mel_bins=16, d_model=32, encoder_layers=2, encoder_attention_heads=2,
                           decoder_layers=1, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                           max_source_positions=16, max_target_positions=16, pad_token_id=0, bos_token_id=0,
                           eos_token_id=0, decoder_start_token_id=0)
    model = WhisperEncoder(config)
    randomise(model, SEED)
    module = _wrap(lambda m, input_features: m(input_features=input_features).last_hidden_state, model)
    features = np.random.default_rng(8).standard_normal((BATCH, 16, 32)).astype(np.float32)
    return Net(module, {"input_features": features}, ("last_hidden_state",),
               "Whisper encoder: 16 mel bins x 32 frames, two Conv1d + GELU, 2 layers, d_model 32",
               _config_dict(config), shapes={"input_features": [-1, 16, 32]})


def bert_onnx() -> Net:
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=150, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=48, max_position_embeddings=64, position_embedding_type="relative_key")
    model = BertModel(config)
    randomise(model, SEED)
    module = _wrap(lambda m, input_ids, attention_mask, token_type_ids: tuple(
        m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[:2]), model)
    feeds = token_inputs(150, 12)
    types = np.zeros((BATCH, SEQ), np.int64)
    types[:, SEQ // 2:] = 1
    feeds["token_type_ids"] = types
    return Net(module, feeds, ("last_hidden_state", "pooler_output"),
               "BERT through ONNX: token types, relative_key positions, 4 heads; the exported attention's IsNaN",
               _config_dict(config), 150, frontend="onnx")


def cnn_onnx() -> Net:
    import torch

    class Block(torch.nn.Module):
        """reflect-padded conv, GroupNorm, SiLU, MaxPool and AvgPool in ceil mode (exclude pad), bilinear
        upsampling, a strided transposed conv, adaptive average pool."""

        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1, padding_mode="reflect")
            self.norm = torch.nn.GroupNorm(4, 8)
            self.max = torch.nn.MaxPool2d(3, 2, ceil_mode=True)
            self.avg = torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False)
            self.up = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.deconv = torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
            self.pool = torch.nn.AdaptiveAvgPool2d(1)

        def forward(self, x):
            y = torch.nn.functional.silu(self.norm(self.conv(x)))
            y = self.up(self.avg(self.max(y)))
            y = self.deconv(y)
            return y, self.pool(y).flatten(1)

    module = Block()
    randomise(module, SEED)
    x = np.random.default_rng(14).standard_normal((BATCH, 3, 15, 13)).astype(np.float32)
    return Net(module, {"x": x}, ("features", "pooled"),
               "CNN block through ONNX: reflect-padded conv, GroupNorm, ceil-mode Max/AvgPool (AvgPool-16),"
               " bilinear upsampling, transposed conv", shapes={"x": [-1, 3, 15, 13]}, frontend="onnx")


def resnet_block() -> Net:
    import torch

    class Block(torch.nn.Module):
        """conv3x3-BN-ReLU, grouped conv3x3 (4 groups, stride 2)-BN, 1x1 strided projection shortcut, ReLU,
        global average pool."""

        def __init__(self) -> None:
            super().__init__()
            self.conv1 = torch.nn.Conv2d(8, 16, 3, padding=1, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(16)
            self.conv2 = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=4, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(16)
            self.proj = torch.nn.Conv2d(8, 16, 1, stride=2, bias=False)
            self.bn3 = torch.nn.BatchNorm2d(16)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            y = torch.relu(y + self.bn3(self.proj(x)))
            return y, y.mean(dim=(2, 3))

    module = Block()
    randomise(module, SEED)
    x = np.random.default_rng(9).standard_normal((BATCH, 8, 16, 16)).astype(np.float32)
    return Net(module, {"x": x}, ("features", "pooled"),
               "ResNet block: conv-BN-ReLU, grouped strided conv-BN, projection shortcut, mean pool",
               shapes={"x": [-1, 8, -1, -1]})


def _recurrent(kind: str, seed: int) -> Net:
    import torch

    vocab = 120

    class Recurrent(torch.nn.Module):
        """Embedding -> 2-layer bidirectional LSTM/GRU (batch first) -> Linear to the vocabulary; padded
        steps zeroed by the attention mask before the head."""

        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, 24)
            cell = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
            self.rnn = cell(24, 32, num_layers=2, batch_first=True, bidirectional=True)
            self.head = torch.nn.Linear(64, vocab)

        def forward(self, input_ids, attention_mask):
            y, _ = self.rnn(self.embed(input_ids))
            return self.head(y * attention_mask.unsqueeze(-1).to(y.dtype))

    module = Recurrent()
    randomise(module, SEED)
    name = "LSTM" if kind == "lstm" else "GRU"
    return Net(module, token_inputs(vocab, seed), ("logits",),
               f"{name} over embeddings: 2 bidirectional layers of 32, batch first, linear head", {}, vocab)


NETWORKS: dict[str, Callable[[], Net]] = {
    "gpt2": gpt2,
    "bert": bert,
    "distilbert": distilbert,
    "llama": llama,
    "qwen2": qwen2,
    "t5_encoder": t5_encoder,
    "vit": vit,
    "whisper_encoder": whisper_encoder,
    "resnet_block": resnet_block,
    "bert_onnx": bert_onnx,
    "cnn_onnx": cnn_onnx,
    "lstm": lambda: _recurrent("lstm", 10),
    "gru": lambda: _recurrent("gru", 11),
}


# ---------------------------------------------------------------- conversion and files


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """An .npz with fixed timestamps (reruns give the same bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            entry = io.BytesIO()
            np.lib.format.write_array(entry, np.ascontiguousarray(array), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(f"{name}.npy", NPZ_TIMESTAMP), entry.getvalue())
    path.write_bytes(buffer.getvalue())


def _onnx_model(net: Net, example: dict, shapes: dict, directory: Path):
    """``torch.onnx.export`` (the TorchScript exporter, opset 17) into ``directory``, read by OpenVINO's ONNX
    frontend; the ONNX file is deleted. Dims that ``shapes`` says are dynamic (-1) get symbolic names."""
    import openvino as ov
    import torch

    path = directory / "source.onnx"
    dynamic = {k: {i: f"{k}_{i}" for i, d in enumerate(shapes[k]) if d == -1} for k in net.inputs}
    torch.onnx.export(net.module, tuple(example.values()), str(path), input_names=list(net.inputs),
                      output_names=list(net.outputs), dynamic_axes=dynamic, opset_version=17, dynamo=False)
    try:
        return ov.convert_model(str(path))
    finally:
        path.unlink()


def build(name: str, out: Path = OUT) -> dict:
    """Convert one network, write its directory, and return its manifest entry."""
    import openvino as ov
    import torch

    torch.manual_seed(SEED)
    net = NETWORKS[name]()
    example = {k: torch.from_numpy(v) for k, v in net.inputs.items()}
    with torch.no_grad():
        source = net.module(*example.values())
    source = source if isinstance(source, tuple) else (source,)
    shapes = net.shapes or {k: [-1] * v.ndim for k, v in net.inputs.items()}
    directory = out / name
    directory.mkdir(parents=True, exist_ok=True)
    if net.frontend == "onnx":
        model = _onnx_model(net, example, shapes, directory)
    else:
        inputs = [(shapes[k], ov.Type.i64 if v.dtype == np.int64 else ov.Type.f32) for k, v in net.inputs.items()]
        model = ov.convert_model(net.module, example_input=tuple(example.values()), input=inputs)
    for parameter, input_name in zip(model.get_parameters(), net.inputs, strict=True):
        parameter.set_friendly_name(input_name)
        parameter.output(0).get_tensor().set_names({input_name})
    for output, output_name in zip(model.outputs, net.outputs, strict=True):
        output.get_tensor().set_names({output_name})
    xml = directory / "model.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    compiled = ov.Core().compile_model(str(xml), "CPU", CPU_CONFIG)
    result = compiled(net.inputs)
    expected = {o.get_any_name(): np.array(result[o], copy=True) for o in compiled.outputs}
    source_outputs = {n: t.detach().numpy() for n, t in zip(net.outputs, source, strict=True)}
    save_npz(directory / "inputs.npz", net.inputs)
    save_npz(directory / "expected_openvino.npz", expected)
    save_npz(directory / "expected_source.npz", source_outputs)
    differences = {n: float(np.max(np.abs(expected[n] - source_outputs[n]))) for n in net.outputs}
    kinds = sorted({f"{op.get_type_name()}-{op.get_type_info().version_id}" for op in model.get_ordered_ops()})
    return {
        "description": net.description,
        "config": net.config,
        "vocab": net.vocab,
        "inputs": {k: {"dtype": str(v.dtype), "shape": list(v.shape), "declared": str(p.get_partial_shape())}
                   for (k, v), p in zip(net.inputs.items(), model.inputs, strict=True)},
        "outputs": {n: {"dtype": str(expected[n].dtype), "shape": list(expected[n].shape)} for n in net.outputs},
        "xml_bytes": xml.stat().st_size,
        "bin_bytes": (directory / "model.bin").stat().st_size,
        "max_abs_openvino_vs_torch": differences,
        "operations": kinds,
    }


def read_manifest(path: Path, key: str) -> dict:
    """The manifest at ``path``, or an empty one (no entries under ``key``)."""
    return json.loads(path.read_text()) if path.exists() else {key: {}}


def write_manifest(path: Path, manifest: dict, key: str, versions: dict[str, str]) -> None:
    """``manifest`` as JSON, its entries under ``key`` sorted by name, with the versions that made them."""
    manifest["versions"] = versions
    manifest[key] = dict(sorted(manifest[key].items()))
    path.write_text(json.dumps(manifest, indent=1) + "\n")


def _versions() -> dict[str, str]:
    import openvino
    import torch
    import transformers

    return {"openvino": openvino.__version__, "torch": torch.__version__, "transformers": transformers.__version__}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"networks to build (default: all): {', '.join(NETWORKS)}")
    parser.add_argument("--out", type=Path, default=OUT, help="corpus directory (default: models/real)")
    parser.add_argument("--zoo", nargs="*", metavar="NAME", help="convert ONNX model-zoo CNNs into the cache instead")
    args = parser.parse_args(argv)
    if args.zoo is not None:
        from tests.helpers import zoo

        for name in args.zoo or zoo.ZOO:
            start = time.perf_counter()
            xml = zoo.zoo_ir(name)
            print(f"{name}: {xml} ({time.perf_counter() - start:.1f} s)")
        return 0
    unknown = [n for n in args.names if n not in NETWORKS]
    if unknown:
        parser.error(f"unknown network(s) {unknown}; known: {', '.join(NETWORKS)}")
    manifest_path = args.out / "manifest.json"
    manifest = read_manifest(manifest_path, "networks")
    for name in args.names or NETWORKS:
        start = time.perf_counter()
        entry = build(name, args.out)
        manifest["networks"][name] = entry
        size = (entry["xml_bytes"] + entry["bin_bytes"]) / 1024
        print(f"{name}: {size:.0f} KiB, OpenVINO vs torch {entry['max_abs_openvino_vs_torch']}"
              f" ({time.perf_counter() - start:.1f} s)")
    write_manifest(manifest_path, manifest, "networks", _versions())
    return 0


if __name__ == "__main__":
    sys.exit(main())
