"""Regenerate the LLM corpus in tests/data/llm/: tiny causal LMs (and a Whisper decoder with past) exported by
optimum-intel, as people export them.

Needs torch, transformers, optimum-intel and nncf (``pip install -e '.[llm]'``; never the tests'), besides
``openvino``:

    python -m scripts.make_llm_corpus                    # every architecture, every format
    python -m scripts.make_llm_corpus llama gpt2         # some architectures
    python -m scripts.make_llm_corpus --formats int4 nf4 # some formats

Each architecture is a small config (hidden size 64, 2 layers, vocabulary 256) with seeded random weights
(``make_real_models.randomise``: std 1/sqrt(fan-in), so that the logits spread and greedy choices are not
near-ties), saved with ``save_pretrained`` into a temporary folder and exported from there by
``OVModelForCausalLM.from_pretrained(folder, export=True)`` (no hub download): stateful, the KV cache in
ReadValue/Assign variables, inputs ``input_ids``, ``attention_mask``, ``position_ids`` (when the model takes
them) and ``beam_idx``. Formats (``quantization_config``, i.e. NNCF's weight compression):

- ``default``: what the export writes without options for a model this small (f32 weights);
- ``int8``: ``bits=8`` (asymmetric, per output channel);
- ``int4``: ``bits=4, group_size=32, ratio=0.8`` (asymmetric int4 groups of 32, the rest int8: the backup);
- ``int4_sym``: ``bits=4, sym=True, group_size=-1`` (symmetric int4 per output channel);
- ``nf4``: ``dtype="nf4", group_size=32`` (NormalFloat-4 groups with f16 scales);
- ``mxfp4``: ``dtype="mxfp4", group_size=32`` (f4e2m1 values with f8e8m0 scales).

Whisper is exported by ``OVModelForSpeechSeq2Seq`` (default and int8); the corpus keeps its decoder with past
(stateful: self- and cross-attention caches in variables), fed seeded ``encoder_hidden_states``.

Each model is written to ``tests/data/llm/ARCH-FORMAT/`` as ``openvino_model.xml``/``.bin`` and
``steps.npz``: a prefill of PROMPT tokens and DECODE greedy decode steps run by OpenVINO's CPU plugin
(``tests.helpers.llm.OPENVINO_CONFIG``: f32, KV cache in f32, no dynamic quantization) on one infer request:
``step{i}_{input}`` for every input of step i, ``step{i}_logits`` (f32 [1, tokens, vocab]) of the IR as
exported, and ``step{i}_reference_logits`` of the IR whose decompression subgraphs OpenVINO's reference
evaluated (``tests.helpers.llm.reference_folded``: the CPU plugin computes them in f32, skipping the f16
rounding of the IR's types), fed the same tokens. ``tests/data/llm/manifest.json`` lists every model: its
config, sizes, element types and layer types, and the versions that made it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from scripts.make_real_models import randomise, read_manifest, save_npz, write_manifest

ROOT = Path(__file__).resolve().parent.parent
from tests.helpers.llm import OPENVINO_CONFIG, reference_folded, step_feeds  # noqa: E402

OUT = ROOT / "tests" / "data" / "llm"
SEED = 22
VOCAB = 256
PROMPT = 6
DECODE = 3

COMMON = {"vocab_size": VOCAB, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
          "num_attention_heads": 4, "max_position_embeddings": 256}


def _config(class_name: str, **values) -> Callable[[], object]:
    def make():
        import transformers

        return getattr(transformers, class_name)(**values)

    return make


ARCHITECTURES: dict[str, Callable[[], object]] = {
    "llama": _config("LlamaConfig", **COMMON, num_key_value_heads=2),
    "qwen2": _config("Qwen2Config", **COMMON, num_key_value_heads=2),
    "phi3": _config("Phi3Config", **COMMON, num_key_value_heads=4, pad_token_id=0),
    "gemma": _config("GemmaConfig", **COMMON, num_key_value_heads=1, head_dim=16),
    "mistral": _config("MistralConfig", **COMMON, num_key_value_heads=2, sliding_window=None),
    "gpt2": _config("GPT2Config", vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=256),
    "mixtral": _config("MixtralConfig", **{**COMMON, "intermediate_size": 64}, num_key_value_heads=2,
                       num_local_experts=4, num_experts_per_tok=2),
    "gpt_neox": _config("GPTNeoXConfig", **COMMON, rotary_pct=0.5),
    "gpt_oss": _config("GptOssConfig", **{**COMMON, "intermediate_size": 64}, num_key_value_heads=2, head_dim=16,
                       num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                       layer_types=["sliding_attention", "full_attention"]),
    # the export traces 3000 mel frames, so the encoder needs 1500 positions; only the decoder is kept
    "whisper": _config("WhisperConfig", vocab_size=VOCAB, d_model=64, encoder_layers=2, decoder_layers=2,
                       encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=96, decoder_ffn_dim=96,
                       num_mel_bins=16, max_source_positions=1500, max_target_positions=64,
                       decoder_start_token_id=1, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                       suppress_tokens=None, begin_suppress_tokens=None),
}
SEQ2SEQ = {"whisper"}  # exported by OVModelForSpeechSeq2Seq; the corpus keeps the decoder (with past, stateful)
ENCODER_FRAMES = 10
"""The decoder's ``encoder_hidden_states`` are seeded random [1, ENCODER_FRAMES, d_model] (the encoder is not
part of the corpus)."""


def _quantization(name: str):
    from optimum.intel import OVWeightQuantizationConfig

    return {
        "default": None,
        "int8": OVWeightQuantizationConfig(bits=8),
        "int4": OVWeightQuantizationConfig(bits=4, group_size=32, ratio=0.8),
        "int4_sym": OVWeightQuantizationConfig(bits=4, sym=True, group_size=-1),
        "nf4": OVWeightQuantizationConfig(bits=4, dtype="nf4", group_size=32),
        "mxfp4": OVWeightQuantizationConfig(bits=4, dtype="mxfp4", group_size=32),
    }[name]


FORMATS = ("default", "int8", "int4", "int4_sym", "nf4", "mxfp4")
EVERY_FORMAT = ("llama", "gpt_oss")  # the others get CORE_FORMATS (the corpus stays a few MB)
CORE_FORMATS = ("default", "int8", "int4", "nf4")
SEQ2SEQ_FORMATS = ("default", "int8")


def export(arch: str, fmt: str, source: Path, out: Path) -> dict:
    """Export ``source`` (a saved transformers model) in format ``fmt`` into ``out``; run and save its steps."""
    from optimum.intel import OVModelForCausalLM, OVModelForSpeechSeq2Seq

    exporter, stem = (OVModelForSpeechSeq2Seq, "openvino_decoder_model") if arch in SEQ2SEQ else \
        (OVModelForCausalLM, "openvino_model")
    model = exporter.from_pretrained(source, export=True, compile=False, quantization_config=_quantization(fmt))
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        out.mkdir(parents=True, exist_ok=True)
        for suffix in ("xml", "bin"):
            (out / f"openvino_model.{suffix}").write_bytes((Path(folder) / f"{stem}.{suffix}").read_bytes())
    save_npz(out / "steps.npz", openvino_steps(out / "openvino_model.xml"))
    return describe(out)


def openvino_steps(xml: Path) -> dict[str, np.ndarray]:
    """A prefill of PROMPT seeded tokens and DECODE greedy steps on one OpenVINO CPU infer request per model
    (OPENVINO_CONFIG): the IR as exported, and as :func:`reference_folded` (its logits ``*_reference_logits``)."""
    import openvino as ov

    core = ov.Core()
    requests = {"logits": core.compile_model(xml, "CPU", OPENVINO_CONFIG).create_infer_request(),
                "reference_logits": core.compile_model(reference_folded(core.read_model(xml)), "CPU",
                                                       OPENVINO_CONFIG).create_infer_request()}
    names = {i.get_any_name() for i in requests["logits"].model_inputs}
    extra = {}
    for port in requests["logits"].model_inputs:
        if port.get_any_name() == "encoder_hidden_states":  # a seq2seq decoder: [batch, frames, d_model]
            extra["encoder_hidden_states"] = np.random.default_rng(SEED).standard_normal(
                (1, ENCODER_FRAMES, port.get_partial_shape()[2].get_length())).astype(np.float32)
    arrays: dict[str, np.ndarray] = {}
    tokens, past = [int(t) for t in np.random.default_rng(SEED).integers(0, VOCAB, PROMPT)], 0
    for step in range(DECODE + 1):
        feeds = {**step_feeds(names, tokens, past), **extra}
        arrays.update({f"step{step}_{k}": v for k, v in feeds.items()})
        for key, request in requests.items():
            arrays[f"step{step}_{key}"] = np.array(request.infer(feeds)["logits"], np.float32)
        past += len(tokens)
        tokens = [int(np.argmax(arrays[f"step{step}_logits"][0, -1]))]
    return arrays


def describe(out: Path) -> dict:
    """Sizes, element types and layer types of the exported IR."""
    from lxml import etree

    tree = etree.parse(str(out / "openvino_model.xml"))
    layers = tree.findall("./layers/layer")
    return {
        "xml_bytes": (out / "openvino_model.xml").stat().st_size,
        "bin_bytes": (out / "openvino_model.bin").stat().st_size,
        "element_types": dict(sorted(Counter(d.get("element_type") for d in tree.findall("./layers/layer/data")
                                             if d.get("element_type")).items())),
        "layer_types": dict(sorted(Counter(f"{la.get('type')}-{la.get('version')}" for la in layers).items())),
    }


def build_source(arch: str, folder: Path) -> dict:
    """The seeded random-weight transformers model of ``arch``, saved into ``folder``; its config as a dict."""
    import torch
    import transformers

    torch.manual_seed(SEED)
    config = ARCHITECTURES[arch]()
    model = (transformers.WhisperForConditionalGeneration(config) if arch in SEQ2SEQ else
             transformers.AutoModelForCausalLM.from_config(config))
    randomise(model, SEED)
    model.save_pretrained(folder)
    return {k: v for k, v in config.to_diff_dict().items() if not k.startswith("_")}


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("openvino", "torch", "transformers", "optimum-intel", "nncf")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"architectures (default: all): {', '.join(ARCHITECTURES)}")
    parser.add_argument("--formats", nargs="*", choices=FORMATS,
                        help=f"formats (default: all for {', '.join(EVERY_FORMAT)}, else {', '.join(CORE_FORMATS)})")
    parser.add_argument("--out", type=Path, default=OUT, help="corpus directory (default: tests/data/llm)")
    parser.add_argument("--steps-only", action="store_true",
                        help="only recompute every model's steps.npz with the installed OpenVINO (no torch needed)")
    args = parser.parse_args(argv)
    if args.steps_only:
        for xml in sorted(args.out.glob("*/openvino_model.xml")):
            save_npz(xml.parent / "steps.npz", openvino_steps(xml))
            print(f"{xml.parent.name}: steps recomputed", flush=True)
        return 0
    unknown = [n for n in args.names if n not in ARCHITECTURES]
    if unknown:
        parser.error(f"unknown architecture(s) {unknown}; known: {', '.join(ARCHITECTURES)}")
    manifest_path = args.out / "manifest.json"
    manifest = read_manifest(manifest_path, "models")
    for arch in args.names or ARCHITECTURES:
        with tempfile.TemporaryDirectory() as folder:
            config = build_source(arch, Path(folder))
            for fmt in args.formats or (FORMATS if arch in EVERY_FORMAT else SEQ2SEQ_FORMATS if arch in SEQ2SEQ else
                                        CORE_FORMATS):
                start = time.perf_counter()
                entry = {"architecture": arch, "format": fmt, "config": config,
                         **export(arch, fmt, Path(folder), args.out / f"{arch}-{fmt}")}
                manifest["models"][f"{arch}-{fmt}"] = entry
                print(f"{arch}-{fmt}: {(entry['xml_bytes'] + entry['bin_bytes']) / 1024:.0f} KiB,"
                      f" {entry['element_types']} ({time.perf_counter() - start:.1f} s)", flush=True)
    write_manifest(manifest_path, manifest, "models", _versions())
    return 0


if __name__ == "__main__":
    sys.exit(main())
