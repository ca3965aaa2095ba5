"""Which layers OpenVINO's CPU plugin runs in f32 under an f16 or bf16 ``INFERENCE_PRECISION_HINT``, read from
the compiled model rather than emulated.

The model is compiled for the CPU with the hint, and each node of its runtime graph names the IR layers it
computes (rt_info ``originalLayersNames``) and the precision it computes in (``runtimePrecision``): a layer in a
node of ``f32`` runs in f32 (the plugin's tail before the outputs, and whatever else it chose to keep), one in a
node of the hint's type runs lowered, and so does every layer no node names that lies on a path between two
layers of one node (a fused subgraph names some of its layers only: the matrix products inside a CPU
``Subgraph`` go unnamed). Other layers the runtime graph does not name (folded into constants, or fused under
another name) are not known. This reads what the plugin does on this machine: a CPU without the hint's
type applies another (an f16 hint runs in bf16 on a CPU without AVX512-FP16/AMX-FP16, a bf16 hint in f32 on one
without AVX512-BF16), and then nothing is learned (the caller emulates instead, and says why).
"""

from __future__ import annotations

import os

from . import fpenv
from .model import Model
from .record import Record

_F32 = ("f32", "FP32")


class CompiledPrecisions(Record):
    """The names of the IR layers the CPU plugin runs in ``f32`` and in the hint's type (``lowered``), and the
    OpenVINO ``version`` that compiled them."""

    __slots__ = ("f32", "lowered", "version")

    def __init__(self, f32: frozenset[str], lowered: frozenset[str], version: str) -> None:
        self.f32 = f32
        self.lowered = lowered
        self.version = version


def cpu_precisions(model: Model, to: str) -> tuple[CompiledPrecisions | None, str]:
    """What the CPU plugin runs in f32 under the hint ``to`` ('f16' or 'bf16'), and a note saying where that came
    from; ``(None, why)`` when it cannot be learned here (no openvino, no XML to compile, a compilation
    OpenVINO refuses, or a CPU that applies another type)."""
    try:
        import openvino as ov
    except ImportError:
        return None, "openvino is not installed"
    if not isinstance(model.source, (str, os.PathLike, bytes, bytearray)):
        return None, "the model was not loaded from an XML that OpenVINO could compile"
    from .device import _first_line, _read, new_core, runtime_groups

    try:
        core = new_core(ov, model.source)
        with fpenv.preserved():  # (the CPU plugin may set FTZ/DAZ in this thread)
            compiled = core.compile_model(_read(ov, core, model.source, model.weights_source), "CPU",
                                          {"INFERENCE_PRECISION_HINT": to})
        applied = compiled.get_property("INFERENCE_PRECISION_HINT").to_string()
        groups = runtime_groups(compiled)
    except Exception as error:  # OpenVINO raises plain RuntimeErrors
        return None, f"OpenVINO's CPU plugin could not compile the model: {_first_line(error)}"
    if applied != to:
        return None, f"OpenVINO's CPU plugin applies {applied}, not {to}, to an {to} hint on this CPU"
    f32 = _layers_of(model, [group.layers for group in groups if group.runtime_precision in _F32], groups)
    lowered = _layers_of(model, [group.layers for group in groups if group.runtime_precision == to], groups)
    version = ov.get_version().split("-")[0]
    return (CompiledPrecisions(frozenset(f32), frozenset(lowered - f32), version),
            f"learned from OpenVINO {version}'s CPU plugin: the model compiled with the hint on this machine")


def _layers_of(model: Model, nodes: list[tuple[str, ...]], groups) -> set[str]:
    """The names of the IR layers of these runtime nodes: those they name, and the unnamed ones between two
    layers of one node."""
    from .observe import _between

    graph = model.graph
    ids: dict[str, str] = {}
    for layer_id, layer in graph.layers.items():
        ids.setdefault(layer.name, layer_id)
    named = {ids[name] for group in groups for name in group.layers if name in ids}
    found = set()
    for names in nodes:
        members = {ids[name] for name in names if name in ids}
        found |= {graph.layers[layer_id].name for layer_id in members | _between(graph, members, named)}
    return found
