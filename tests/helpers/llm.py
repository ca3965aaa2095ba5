"""The LLM corpus (tests/data/llm/, made by scripts/make_llm_corpus.py): its models, their recorded steps, and the
OpenVINO side of the comparisons.

OpenVINO's CPU plugin computes a weight's decompression (``Convert -> Subtract -> Multiply`` on f16 scales) in
f32, without the rounding to f16 the IR's types (and OpenVINO's reference) give each product; ir-run computes as
the reference. :func:`reference_folded` evaluates those subgraphs with ``Node.evaluate`` (the reference) into
Constants, so that the CPU plugin then runs the weights the reference computes.
"""

from __future__ import annotations

from pathlib import Path

LLM_DIR = Path(__file__).resolve().parents[1] / "data" / "llm"
OPENVINO_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
                   "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
"""The CPU plugin as the corpus's logits were computed: f32, the KV cache in f32 (the default is u8), and no
dynamic quantization of the activations of compressed MatMuls (the default quantizes them to int8 in groups of 32)."""


def corpus_models() -> list[str]:
    """The names (``ARCH-FORMAT``) of the corpus's models: its folders holding an IR."""
    return sorted(path.parent.name for path in LLM_DIR.glob("*/openvino_model.xml"))


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


STEP_INPUTS = ("input_ids", "attention_mask", "position_ids", "beam_idx")
"""The inputs a decoding step of optimum's exports changes (a seq2seq decoder's ``encoder_hidden_states`` stay)."""


def step_feeds(names, tokens: list[int], past: int) -> dict:
    """The STEP_INPUTS optimum's exports take for ``tokens`` after ``past`` cached ones (batch 1), those of
    ``names``."""
    import numpy as np

    feeds = {"input_ids": np.array([tokens], np.int64),
             "attention_mask": np.ones((1, past + len(tokens)), np.int64),
             "position_ids": np.arange(past, past + len(tokens), dtype=np.int64)[None],
             "beam_idx": np.zeros(1, np.int32)}
    return {k: v for k, v in feeds.items() if k in names}


def recorded_steps(name: str) -> list[dict]:
    """The recorded steps of corpus model ``name``: per step, its inputs by name and ``logits`` and
    ``reference_logits`` (see scripts/make_llm_corpus.py)."""
    import numpy as np

    with np.load(LLM_DIR / name / "steps.npz") as data:
        arrays = {key: data[key] for key in data.files}
    steps: list[dict] = []
    for key, value in arrays.items():
        index, _, field = key.removeprefix("step").partition("_")
        while len(steps) <= int(index):
            steps.append({})
        steps[int(index)][field] = value
    return steps


def stateless_copy(xml: Path, directory: Path) -> Path:
    """``xml`` with its KV cache as inputs ``past_key_values.*`` and outputs ``present.*`` (OpenVINO's
    stateful-to-stateless transformation; ``beam_idx`` goes away), saved into ``directory``."""
    import openvino as ov
    from openvino._offline_transformations import stateful_to_stateless_transformation

    model = ov.Core().read_model(xml)
    stateful_to_stateless_transformation(model)
    path = directory / "stateless.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _cache_input(name: str) -> str | None:
    """The input of a stateless copy that the output ``name`` feeds at the next step: ``present.*`` (optimum's
    ``--disable-stateful`` names) feeds ``past_key_values.*``, ``output_restored.*`` (the transformation's names
    for a variable it restores) ``input_restored.*``; None for another output (the logits)."""
    for output, cache in (("present", "past_key_values"), ("output_restored.", "input_restored.")):
        if name.startswith(output):
            return cache + name[len(output):]
    return None


def empty_cache(model) -> dict:
    """The KV cache inputs of an ir-run Model of a stateless copy before the prefill: batch 1, length 0."""
    import numpy as np

    return {info.name: np.zeros([1 if axis == 0 else dim.lo if dim.is_static else 0
                                 for axis, dim in enumerate(info.partial_shape.dims)], info.dtype)
            for info in model.inputs if info.name.startswith(("past_key_values", "input_restored."))}


def next_cache(outputs: dict) -> dict:
    """The KV cache inputs of the next step, from a step's outputs by name."""
    return {_cache_input(name): value for name, value in outputs.items() if _cache_input(name) is not None}
