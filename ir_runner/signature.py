"""A model's signature: its inputs (Parameters) and outputs (Results) as TensorInfo, with their names."""

from __future__ import annotations

from .graph import Graph
from .infer import Inference
from .runtime import TensorInfo
from .types import DYNAMIC, DYNAMIC_SHAPE, TensorSpec


def input_infos(graph: Graph, inference: Inference) -> tuple[TensorInfo, ...]:
    """The model's inputs: Parameter layers in document order, named by their first tensor name."""
    infos, used = [], set()
    for layer in graph.parameters:
        outputs = inference.layers[layer.id].outputs  # none when its inference failed and it declares no port
        spec = outputs[0] if outputs else TensorSpec(DYNAMIC, DYNAMIC_SHAPE)
        names = layer.outputs[0].names if layer.outputs else ()
        name = _unique(names[0] if names else layer.name, used)
        infos.append(TensorInfo(name, names, spec.element_type, spec.shape, layer.name))
    return tuple(infos)


def _unique(name: str, used: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``... when already taken (OpenVINO's spelling for duplicates)."""
    candidate, count = name, 0
    while candidate in used:
        count += 1
        candidate = f"{name}_{count}"
    used.add(candidate)
    return candidate


def output_infos(graph: Graph, inference: Inference) -> tuple[TensorInfo, ...]:
    """The model's outputs: Result layers in document order, named by their tensor's first name (unique)."""
    infos, used = [], set()
    for layer in graph.results:
        producer, position = graph.sources[layer.id][0]
        names = graph.layers[producer].outputs[position].names
        if not names and layer.attrs.get("output_names"):
            names = tuple(n for n in layer.attrs["output_names"].split(",") if n)
        name = names[0] if names else layer.name
        if name in used and layer.name not in used:
            name = layer.name
        name = _unique(name, used)
        spec = inference.output_spec(producer, position)
        infos.append(TensorInfo(name, names, spec.element_type, spec.shape, layer.name))
    return tuple(infos)
