"""The LLM corpus (tests/data/llm/, made by scripts/make_llm_corpus.py): its models, their recorded steps, and the
OpenVINO side of the comparisons.

OpenVINO's CPU plugin computes a weight's decompression (``Convert -> Subtract -> Multiply`` on f16 scales) in
f32, without the rounding to f16 the IR's types (and OpenVINO's reference) give each product; ir-run computes as
the reference. :func:`reference_folded` evaluates those subgraphs with ``Node.evaluate`` (the reference) into
Constants, so that the CPU plugin then runs the weights the reference computes.
"""

from __future__ import annotations

import json
from pathlib import Path

LLM_DIR = Path(__file__).resolve().parents[1] / "data" / "llm"
OPENVINO_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
                   "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
"""The CPU plugin as the corpus's logits were computed: f32, the KV cache in f32 (the default is u8), and no
dynamic quantization of the activations of compressed MatMuls (the default quantizes them to int8 in groups of 32)."""


def corpus_models() -> list[str]:
    """The names (``ARCH-FORMAT``) of the corpus's models, from its manifest."""
    manifest = LLM_DIR / "manifest.json"
    return sorted(json.loads(manifest.read_text())["models"]) if manifest.exists() else []


def reference_folded(model):
    """``model`` (an ``ov.Model``, changed in place and returned) with every layer whose inputs are all Constants
    replaced by the Constant its ``Node.evaluate`` gives (OpenVINO's reference), in order: the weights'
    decompression subgraphs become the values the reference computes."""
    import openvino as ov

    skip = {"Constant", "Parameter", "Result", "ReadValue", "Assign", "ShapeOf"}
    for node in model.get_ordered_ops():
        sources = [value.get_node() for value in node.input_values()]
        if node.get_type_name() in skip or not sources or node.get_output_size() != 1:
            continue
        if not all(source.get_type_name() == "Constant" for source in sources):
            continue
        out = ov.Tensor(node.get_output_element_type(0), ov.Shape([0]))
        if node.evaluate([out], [source.get_tensor_view() for source in sources]):
            node.output(0).replace(ov.op.Constant(out, shared_memory=False).output(0))
    return model
