"""``compression``: how much each compressed weight costs its layer's output, ranked, with an NNCF fix.

A **compressed input** is a float input of a layer computed from constants alone (a decompression subgraph,
folded) where one of those constants has 8 bits or fewer per element (NNCF's u8/i8/u4/i4/nf4 weights, with their
scales and zero points): whatever operations the subgraph uses. Its **codes** are the largest such constant.

The model runs once (:meth:`Model.trace`; a stateful model one step from its initial state) and each layer with a
compressed input is computed again on the same inputs with other weights in its place, by its own kernel:

- ``reference`` given (the same model exported without compression, e.g. optimum's default export): the layer
  of the same name there, its input at the same position (constant too). The error is the **compression error**
  of that layer: its output with the dequantised weights against its output with the original ones, on the
  inputs the compressed model gives it. What to act on: exclude the worst layers from compression.
- no reference: the original weights are gone, so the actual error is unknown. Instead, the **step
  sensitivity**: each code moved by a random fraction of one quantisation step in [-1/2, 1/2] (the step: the
  decompression subgraph evaluated again on the codes plus one, or minus one at the top of the range), which is
  the size of the rounding error quantisation leaves. It ranks the layers whose output suffers most from
  their quantisation grid (large group scales, large activations), not the actual error of each. 4-bit float
  (f4e2m1) and 8-bit float codes have no neighbouring code by adding one: such layers need a reference.

Each row gives the relative error ``||out - ref_out|| / ||ref_out||`` (``relative``), the largest absolute one
(``max_error``) and the reference output's largest magnitude; rows are ranked by ``relative``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import fpenv
from .errors import InputError, LayerRef
from .infer import ConstantFolder
from .model import Model, load
from .record import Record

CODE_BITS = 8  # constants of at most this many bits per element count as compressed weights
STEP_SEED = 25


class CompressedLayer(Record):
    """One layer with a compressed input: ``layer``, the input ``position``, the ``codes`` element type and the
    weight ``shape``, ``against`` ('reference' or 'step'), the errors (``relative``, ``max_error``) and
    ``output_max`` (the largest ``|value|`` of the output it is compared with); ``note`` says why a layer could
    not be measured (then the errors are None)."""

    __slots__ = ("layer", "position", "codes", "shape", "against", "relative", "max_error", "output_max", "note")

    def __init__(self, layer: LayerRef, position: int, codes: str, shape: tuple[int, ...], against: str) -> None:
        self.layer = layer
        self.position = position
        self.codes = codes
        self.shape = shape
        self.against = against
        self.relative: float | None = None
        self.max_error: float | None = None
        self.output_max: float | None = None
        self.note: str | None = None


class CompressionReport(Record):
    """The compressed layers, worst first (``layers``; unmeasured ones last), what they were measured
    ``against``, and the ``worst`` (names of the ``top`` measured layers) for ``nncf.IgnoredScope``."""

    __slots__ = ("against", "layers", "top")

    def __init__(self, against: str, layers: list[CompressedLayer], top: int) -> None:
        self.against = against
        self.layers = layers
        self.top = top

    @property
    def worst(self) -> list[str]:
        return [row.layer.name for row in self.layers if row.relative is not None][:self.top]

    def snippet(self) -> str:
        """Python that compresses the original model again, leaving the worst layers uncompressed."""
        if not self.worst:
            return ""
        names = "".join(f"\n    {name!r}," for name in self.worst)
        return (f"import nncf\n\nignored = nncf.IgnoredScope(names=[{names}\n])\n"
                "compressed = nncf.compress_weights(original_model, ..., ignored_scope=ignored)"
                "  # your other arguments as before")

    def __repr__(self) -> str:
        worst = f", worst {self.layers[0].layer} ({self.layers[0].relative:.3g})" if self.worst else ""
        return f"<CompressionReport against {self.against}: {len(self.layers)} compressed layers{worst}>"


@fpenv.exact_subnormals()  # kernels run outside a plan's run here too
def compression(model: Model | str | os.PathLike | bytes, feeds: Mapping[str, object] | Sequence | None = None, *,
                reference: Model | str | os.PathLike | bytes | None = None, weights=None, top: int = 3,
                cast: str | None = None) -> CompressionReport:
    """Measure every compressed input of ``model`` (a loaded Model, or what :func:`ir_runner.load` takes) on
    ``feeds``: against the same layer of ``reference`` (the uncompressed model) when given, else by the step
    sensitivity (see the module docstring). ``top``: how many of the worst the report's snippet names."""
    if not isinstance(model, Model):
        model = load(model, weights)
    if reference is not None and not isinstance(reference, Model):
        reference = load(reference)
    if top < 1:
        raise InputError(f"top must be at least 1, got {top}")
    arrays = model.bind(feeds, cast=cast)
    plan = model.plan_for(arrays)
    graph, layers = model.graph, model.inference.layers
    folder = ConstantFolder(graph, layers, limit=None)
    found = _compressed_inputs(model, plan, folder)
    against = "reference" if reference is not None else "step"
    rows: list[CompressedLayer] = []
    if not found:
        return CompressionReport(against, rows, top)
    needed = {source for layer_id, _, _ in found for source in graph.sources[layer_id]}
    values: dict[tuple[str, int], np.ndarray] = {}

    def keep(record) -> None:
        if (record.layer.id, record.position) in needed:
            values[(record.layer.id, record.position)] = np.asarray(record.value)

    model.trace(arrays, callback=keep, state=model.new_state() if model.variables else None)
    kernels = {step.layer.id: step.kernel for step in plan.steps}
    other = None if reference is None else _ReferenceWeights(reference)
    rng = np.random.default_rng(STEP_SEED)
    for layer_id, position, codes in found:
        weight = folder.input_value(layer_id, position)
        info = layers[layer_id]
        row = CompressedLayer(info.ref, position, layers[codes].outputs[0].element_type.name, weight.shape, against)
        rows.append(row)
        inputs = [values.get(source) for source in graph.sources[layer_id]]
        inputs[position] = weight
        if other is not None:
            replacement, row.note = other.weight(info.ref.name, position, weight)
        else:
            replacement, row.note = _step_weight(graph, layers, folder, layer_id, position, codes, weight, rng)
        if replacement is None:
            continue
        if any(value is None for value in inputs):
            row.note = "an input of the layer was not observed in the run"
            continue
        with np.errstate(all="ignore"):
            ours = np.asarray(kernels[layer_id](*inputs), dtype=np.float64)
            inputs[position] = replacement
            theirs = np.asarray(kernels[layer_id](*inputs), dtype=np.float64)
        norm = float(np.linalg.norm(theirs))
        row.max_error = float(np.max(np.abs(ours - theirs))) if ours.size else 0.0
        row.relative = float(np.linalg.norm(ours - theirs)) / norm if norm > 0 else (0.0 if not row.max_error
                                                                                       else float("inf"))
        row.output_max = float(np.max(np.abs(theirs))) if theirs.size else 0.0
    rows.sort(key=lambda row: (row.relative is None, -(row.relative or 0.0)))
    return CompressionReport(against, rows, top)


def _compressed_inputs(model: Model, plan, folder: ConstantFolder) -> list[tuple[str, int, str]]:
    """(layer id, input position, codes Const id) of every computed layer's compressed input, execution order."""
    graph, layers = model.graph, model.inference.layers
    found = []
    for step in plan.steps:
        layer_id = step.layer.id
        for position, (source, _) in enumerate(graph.sources.get(layer_id, ())):
            spec = layers[source].outputs[0] if layers[source].outputs else None
            if spec is None or spec.element_type.kind != "float" or "value" in layers[source].params:
                continue
            codes = _codes(graph, layers, source)
            if codes is not None and folder.input_value(layer_id, position) is not None:
                found.append((layer_id, position, codes))
    return found


def _codes(graph, layers, source: str) -> str | None:
    """The largest constant of at most CODE_BITS bits among the constants ``source`` is computed from (None when
    ``source`` reads anything else)."""
    best, size = None, -1
    seen, stack = set(), [source]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        info = layers[current]
        if info.op is None or info.op.state or (info.op.kernel is None and "value" not in info.params):
            return None  # (a Parameter, a variable)
        if "value" in info.params:
            spec = info.outputs[0]
            et = spec.element_type
            count = int(np.prod(spec.shape.to_shape())) if spec.shape.is_static else 0
            if et.bits <= CODE_BITS and et.kind in ("int", "uint", "float") and count > size:
                best, size = current, count
            continue
        stack.extend(parent for parent, _ in graph.sources[current])
    return best


def _step_weight(graph, layers, folder: ConstantFolder, layer_id: str, position: int, codes: str,
                 weight: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray | None, str | None]:
    """The weight with every code moved by a random fraction of its quantisation step (see the module docstring)."""
    et = layers[codes].outputs[0].element_type
    if et.kind == "float" and et.table is None:
        return None, f"{et.name} codes have no neighbouring code by adding one: give the uncompressed model"
    value = np.asarray(folder.layer_values(codes)[0])
    high = (1 << (et.bits - 1)) - 1 if et.kind == "int" else (1 << et.bits) - 1
    wide = value.astype(np.int64)
    moved = np.where(wide < high, wide + 1, wide - 1).astype(value.dtype)
    shifted = ConstantFolder(graph, layers, given={codes: moved}, limit=None).input_value(layer_id, position)
    if shifted is None or shifted.shape != weight.shape:
        return None, "the decompression subgraph could not be evaluated again"
    step = shifted.astype(np.float64) - weight.astype(np.float64)
    noise = rng.uniform(-0.5, 0.5, weight.shape)
    return (weight.astype(np.float64) + step * noise).astype(weight.dtype), None


class _ReferenceWeights:
    """The uncompressed model's constant inputs, by layer name."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.by_name = {info.ref.name: layer_id for layer_id, info in model.inference.layers.items()}
        self.folder = ConstantFolder(model.graph, model.inference.layers, limit=None)

    def weight(self, name: str, position: int, weight: np.ndarray) -> tuple[np.ndarray | None, str | None]:
        layer_id = self.by_name.get(name)
        if layer_id is None:
            return None, "the reference model has no layer of this name"
        if position >= len(self.model.graph.sources.get(layer_id, ())):
            return None, "the reference model's layer of this name has no such input"
        value = self.folder.input_value(layer_id, position)
        if value is None:
            return None, "the reference model's input is not constant"
        if value.shape != weight.shape:
            return None, f"the reference model's weight has shape {list(value.shape)}, not {list(weight.shape)}"
        return value.astype(weight.dtype), None


def report_data(report: CompressionReport) -> dict[str, Any]:
    """The report as JSON-ready data."""
    return {"against": report.against, "worst": report.worst, "snippet": report.snippet(),
            "layers": [{"layer": row.layer.name, "id": row.layer.id, "type": row.layer.type_version,
                        "line": row.layer.line, "position": row.position, "codes": row.codes,
                        "shape": list(row.shape), "against": row.against, "relative": row.relative,
                        "max_error": row.max_error, "output_max": row.output_max, "note": row.note}
                       for row in report.layers]}
