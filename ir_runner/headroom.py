"""``precision``: how a model fares under an f16 or bf16 inference-precision hint, and what fixes it.

The f32 reference (:meth:`Model.trace`) gives every layer's output. The model is then run again with the
lower precision emulated the way OpenVINO's devices apply ``INFERENCE_PRECISION_HINT``, and each float layer
output is reported: its f32 value range against the type's (values that overflow to infinity, non-zero values
that underflow to zero, values that become subnormal), its emulated error, and the first layer whose emulated
output diverges beyond the tolerance. Then two fixes are searched and checked in the same emulation: an
``ACTIVATIONS_SCALE_FACTOR`` when a value overflows, and the smallest set of layers to keep in f32.

What is emulated (``device``):

- Every layer runs its own kernel (computing in f32, so accumulations are f32 as oneDNN's and the GPU plugin's
  convolutions and matrix products accumulate) and a layer that runs in the lower type has its f32 outputs
  rounded to it (to nearest even; f16 overflows to infinity; subnormals kept). Other element types (integers,
  f64, an f16 the IR itself declares) are never touched: the hint converts f32 only.
- ``'GPU'`` (the default for f16): the whole model is converted (``ConvertPrecision``): every f32 input of a
  lowered layer, a Parameter's or a constant's included, is rounded too.
- ``'CPU'`` (the default for bf16; ``Graph::EnforceInferencePrecision``): the operations declared
  ``precision_anchor`` (convolutions, matrix products, recurrent cells, ROIPooling, Interpolate) round their
  inputs, weights included; other layers compute from their inputs as they are (f32 Parameters and constants
  stay f32) and round their outputs; and the layers the plugin keeps in f32 stay in f32. Which those are is
  learned from OpenVINO's CPU plugin when it can be (``learn``, :mod:`ir_runner.cpu_precisions`: the model
  compiled with the hint on this machine, each layer's runtime precision; the plugin keeps more in f32 than its
  tail, a whole fused subgraph before an output for one); otherwise, and for the layers its runtime graph does
  not name, the emulated rule: the graph's tail, every layer reached from a model output going backwards
  without passing an anchor. ``report.f32_from`` says which.
- Layers in ``keep`` stay in f32 (what OpenVINO does with a layer whose rt_info disables the conversion): their
  inputs are used as stored, their outputs are not rounded.
- Not emulated: OpenVINO's automatic marking of precision-sensitive subgraphs (``MarkSugraphsToKeepInMixedPrecision``:
  ``x / (y + eps)`` patterns with an eps below f16's smallest normal, ``Exp`` feeding a ``ReduceSum``, shape
  subgraphs, float ``Range``), fusions that skip a rounding between fused layers, and the bodies of control-flow
  layers (Loop, If, TensorIterator), which run in f32 between rounded inputs and outputs. A problem the report
  names inside such a pattern may be one OpenVINO already avoids: check it on the device.

A float layer output **diverges** when an element's emulated value is NaN or infinite where the reference is
not, or differs by more than ``max(atol + rtol * |ref|, rtol * M)``, ``M`` the largest finite ``|ref|`` of the
output (defaults: ``rtol`` 8 units of the type's epsilon, ``atol`` 0). The report is ``ok`` when no model output
diverges.

Fixes, both checked by emulating them:

- **scale** (``'GPU'`` only: the CPU plugin has no such property): with an overflow, the power of two ``S``
  that brings the largest activation below the type's maximum divided by ``headroom``, for
  ``ACTIVATIONS_SCALE_FACTOR`` (a GPU property: ``ActivationsScaling`` divides the inputs of Convolution and
  MatMul layers by S, and the scale cancels at normalisations). The emulation holds every lowered output as
  ``round(x / S) * S``: the scaled domain of the whole network, an upper bound of what the property can fix (a
  scale that meets no normalisation is taken back earlier on the device).
- **keep**: layers to keep in f32, found by adding the first diverging lowered layer until no model output
  diverges, then dropping every layer the result does not need (each kept layer is necessary: without it an
  output diverges). Applied with the ``precise`` rt_info attribute on the layers in the IR (OpenVINO reads it
  as ``DisablePrecisionConversion``; the CPU plugin keeps such a layer in f32 under a bf16 hint, measured with
  OpenVINO 2026.4; openvino's Python API cannot set it on a node, hence the snippet edits the XML).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from . import fpenv
from .cpu_precisions import CompiledPrecisions, cpu_precisions
from .divergence import Tolerance
from .errors import InputError, IRError, LayerRef, UnsupportedError, clip_text, with_layer
from .model import Model, load
from .plan import kernel_error
from .record import Record
from .state import carried
from .types import element_type_of

DEVICES = ("CPU", "GPU")
DEFAULT_DEVICE = {"f16": "GPU", "bf16": "CPU"}
DEFAULT_HEADROOM = 8.0
SCALE_DEVICES = ("GPU",)  # the plugins with ACTIVATIONS_SCALE_FACTOR (OpenVINO 2026.4's CPU plugin refuses it)
MAX_KEEP_STEPS = 64  # emulated runs the keep-set search may take before it gives up


class LowType(Record):
    """A lower float type: its numpy ``dtype``, largest finite value ``max``, smallest normal ``tiny``, smallest
    subnormal ``smallest`` and machine epsilon ``eps``."""

    __slots__ = ("name", "dtype", "max", "tiny", "smallest", "eps")

    def __init__(self, name: str, dtype: Any) -> None:
        info = ml_dtypes.finfo(dtype)
        self.name = name
        self.dtype = np.dtype(dtype)
        self.max = float(info.max)
        self.tiny = float(info.tiny)
        self.smallest = float(info.smallest_subnormal)
        self.eps = float(info.eps)

    def round(self, value: np.ndarray) -> np.ndarray:
        """``value`` rounded to this type and held as f32 again (any other dtype unchanged)."""
        if value.dtype != np.float32:
            return value
        return value.astype(self.dtype).astype(np.float32)


TYPES = {"f16": LowType("f16", np.float16), "bf16": LowType("bf16", ml_dtypes.bfloat16)}


def default_tolerance(to: str) -> Tolerance:
    """8 units of the type's epsilon, relative (and to the output's largest value), no absolute part."""
    return Tolerance(0.0, 8 * TYPES[to].eps, None)


class LayerPrecision(Record):
    """One float layer output: where (``layer``, ``position``, ``port``), its ``shape``, the precision it runs in
    (``runs``: 'f16' or 'bf16'; 'f32' when kept by the device or by ``keep``; the output's own type, such as
    'f64', when the hint does not convert it), its reference range (``max_abs``: the largest finite ``|value|``,
    ``min_abs``: the smallest non-zero one; None when there is none), the elements that leave the type's range
    (``overflow``: finite values beyond its maximum, ``underflow``: non-zero values that round to zero,
    ``subnormal``: values that round to a subnormal) and ``headroom_bits`` (log2 of the type's maximum over
    ``max_abs``), these four only for an output that runs in the lower type (an output kept in f32, or of
    another type, cannot leave that type's range), and the emulated error
    (``mismatches`` elements beyond the tolerance, the largest absolute error ``max_error`` and the worst element
    ``worst_index`` with the ``reference`` and ``emulated`` values there)."""

    __slots__ = ("layer", "position", "port", "shape", "runs", "max_abs", "min_abs", "overflow", "underflow",
                 "subnormal", "headroom_bits", "mismatches", "max_error", "worst_index", "reference", "emulated")

    def __init__(self, layer: LayerRef, position: int, port: str, shape: tuple[int, ...], runs: str) -> None:
        self.layer = layer
        self.position = position
        self.port = port
        self.shape = shape
        self.runs = runs
        self.max_abs: float | None = None
        self.min_abs: float | None = None
        self.overflow = 0
        self.underflow = 0
        self.subnormal = 0
        self.headroom_bits: float | None = None
        self.mismatches = 0
        self.max_error = 0.0
        self.worst_index: tuple[int, ...] | None = None
        self.reference: float | None = None
        self.emulated: float | None = None

    @property
    def size(self) -> int:
        return int(math.prod(self.shape))

    @property
    def diverges(self) -> bool:
        return self.mismatches > 0

    @property
    def status(self) -> str:
        """'overflow', 'underflow', 'diverges' or 'ok': the first that holds, in that order."""
        if self.overflow:
            return "overflow"
        if self.underflow:
            return "underflow"
        return "diverges" if self.mismatches else "ok"


class PrecisionFix(Record):
    """What to change, checked in the emulation: ``scale`` (a power of two for ``ACTIVATIONS_SCALE_FACTOR``, None
    without an overflow or on the CPU) and ``scale_fixes`` (no model output diverges with it); ``keep`` (the
    layers to keep in f32, in execution order) and ``keep_fixes``; ``snippet``, Python that applies the ``keep``
    set (empty when there is none)."""

    __slots__ = ("scale", "scale_fixes", "keep", "keep_fixes", "snippet")

    def __init__(self, scale: int | None, scale_fixes: bool, keep: list[LayerRef], keep_fixes: bool,
                 snippet: str) -> None:
        self.scale = scale
        self.scale_fixes = scale_fixes
        self.keep = keep
        self.keep_fixes = keep_fixes
        self.snippet = snippet


class PrecisionReport(Record):
    """Every float layer output (``layers``, execution order) under ``to`` as ``device`` applies it, the
    ``first`` diverging one (or None), the model outputs that diverge (``outputs_diverging``, names), the
    ``fix`` (None when nothing diverges) and, on the CPU, where the layers it keeps in f32 come from
    (``f32_from``: learned from OpenVINO's CPU plugin, or emulated and why). ``ok``: no model output diverges."""

    __slots__ = ("to", "device", "tolerance", "headroom", "layers", "first", "outputs_diverging", "fix", "f32_from")

    def __init__(self, to: str, device: str, tolerance: Tolerance, headroom: float, layers: list[LayerPrecision],
                 outputs_diverging: list[str], fix: PrecisionFix | None, f32_from: str | None = None) -> None:
        self.to = to
        self.device = device
        self.tolerance = tolerance
        self.headroom = headroom
        self.layers = layers
        self.first = next((row for row in layers if row.diverges), None)
        self.outputs_diverging = outputs_diverging
        self.fix = fix
        self.f32_from = f32_from

    @property
    def ok(self) -> bool:
        return not self.outputs_diverging

    def __repr__(self) -> str:
        first = f", first divergence {self.first.layer}" if self.first else ""
        return (f"<PrecisionReport {self.to} as {self.device}: {len(self.layers)} float layer outputs,"
                f" {sum(row.overflow > 0 for row in self.layers)} overflow,"
                f" {sum(row.underflow > 0 for row in self.layers)} underflow,"
                f" {sum(row.diverges for row in self.layers)} diverge{first}>")


@fpenv.exact_subnormals()  # kernels run outside a plan's run here too
def precision(model: Model | str | os.PathLike | bytes, feeds: Mapping[str, object] | Sequence | None = None,
              to: str = "f16", *, device: str | None = None, weights=None, tolerance: Tolerance | None = None,
              headroom: float = DEFAULT_HEADROOM, keep: Iterable[str] = (), cast: str | None = None,
              fix: bool = True, learn: bool = True) -> PrecisionReport:
    """Run ``model`` (a loaded Model, or what :func:`ir_runner.load` takes) on ``feeds`` in f32 and with ``to``
    ('f16' or 'bf16') emulated as ``device`` ('CPU' or 'GPU'; default GPU for f16, CPU for bf16) applies it (see
    the module docstring), and report every float layer output. ``keep``: names of layers already kept in f32.
    With ``fix`` and a diverging output, search the fixes (each costs emulated runs). ``learn`` (CPU only): take
    the layers the CPU plugin keeps in f32 from the model compiled with the hint on this machine when possible,
    else (or without it) the emulated rule. Stateful models are not supported."""
    if to not in TYPES:
        raise InputError(f"precision {to!r} is not one of {', '.join(TYPES)}")
    device = DEFAULT_DEVICE[to] if device is None else device.upper()
    if device not in DEVICES:
        raise InputError(f"device {device!r} is not one of {', '.join(DEVICES)} (the emulated ways to apply a hint)")
    if not headroom >= 1:
        raise InputError(f"headroom must be at least 1, got {headroom!r}")
    if not isinstance(model, Model):
        model = load(model, weights)
    require_stateless(model)
    low = TYPES[to]
    bound = tolerance or default_tolerance(to)
    arrays = model.bind(feeds, cast=cast)
    reference = {(r.layer.id, r.position): np.asarray(r.value) for r in model.trace(arrays).layers
                 if r.source == "computed"}
    compiled, f32_from = None, None
    if device == "CPU":
        compiled, f32_from = cpu_precisions(model, to) if learn else (None, "as asked (learn=False, --emulated-tail)")
        if compiled is None:
            f32_from = f"emulated (the tail before the outputs), {f32_from}"
    emulation = Emulation(model, arrays, low, device, bound, compiled)
    kept = emulation.ids_named(keep)
    run = emulation.run(reference, kept, detail=True)
    fixed = None
    if run.diverging and fix:
        fixed = _fixes(emulation, reference, run.rows, kept, headroom)
    return PrecisionReport(to, device, bound, headroom, run.rows, run.diverging, fixed, f32_from)


def require_stateless(model: Model) -> None:
    """Raise an UnsupportedError for a model whose runs carry values to the next (``state.carried``: a KV cache;
    options such as a tokenizer's 'truncation' are not), naming the reader of its first such variable: they
    would need the emulation across steps."""
    variables = carried(model)
    if variables:
        first, more = variables[0], len(variables) - 1
        also = f" (and {more} more variable{'s' if more > 1 else ''})" if more else ""
        raise UnsupportedError(f"precision does not run stateful models: this layer reads the variable"
                               f" '{clip_text(first.id)}'{also}, whose value would need the emulation across steps",
                               layer=model.inference.layers[first.readers[0]].ref,
                               hint="run crosscheck --precision on the device instead")


class Emulation:
    """One model's plan run step by step with a lower precision emulated (see the module docstring)."""

    def __init__(self, model: Model, arrays: list[np.ndarray], low: LowType, device: str, tolerance: Tolerance,
                 compiled: CompiledPrecisions | None = None) -> None:
        self.model = model
        self.arrays = arrays
        self.low = low
        self.device = device
        self.tolerance = tolerance
        self.plan = model.plan_for(arrays)
        layers = model.inference.layers
        self.anchors = {step.layer.id for step in self.plan.steps
                        if getattr(layers[step.layer.id].op, "precision_anchor", False)}
        self.tail = self._tail() if device == "CPU" else set()
        if compiled is not None:  # what the plugin names, as it runs it; the rule for what it does not name
            self.tail = {step.layer.id for step in self.plan.steps if step.layer.name in compiled.f32
                         or step.layer.id in self.tail and step.layer.name not in compiled.lowered}
        graph = model.graph
        self.returned: dict[tuple[str, int], list[str]] = {}  # a layer output -> the model outputs it is
        for result in graph.results:
            self.returned.setdefault(graph.sources[result.id][0], []).append(result.name)

    def ids_named(self, names: Iterable[str]) -> set[str]:
        """The ids of the computed layers named ``names`` (InputError naming an unknown one)."""
        by_name = {step.layer.name: step.layer.id for step in self.plan.steps}
        ids = set()
        for name in names:
            if name not in by_name:
                raise InputError(f"keep: the model computes no layer named {name!r}",
                                 hint="name a layer the model computes at run time (inspect lists them)")
            ids.add(by_name[name])
        return ids

    def _tail(self) -> set[str]:
        """The layers the CPU plugin keeps in f32: reached backwards from a model output without passing an anchor."""
        graph = self.model.graph
        seen: set[str] = set()
        stack = [graph.sources[result.id][0][0] for result in graph.results]
        while stack:
            layer_id = stack.pop()
            if layer_id in seen or layer_id in self.anchors:
                continue
            seen.add(layer_id)
            stack.extend(source for source, _ in graph.sources.get(layer_id, ()))
        return seen

    def lowered(self, layer_id: str, kept: set[str]) -> bool:
        return layer_id not in kept and layer_id not in self.tail

    def run(self, reference: dict, kept: set[str], *, scale: float | None = None, detail: bool = False) -> Run:
        """Run once, ``kept`` layers in f32 and, with ``scale``, lowered values held as ``round(x / scale) *
        scale``; rows for every float output with ``detail``."""
        plan, low = self.plan, self.low
        slots = plan.initial_slots.copy()
        for slot, value in zip(plan.input_slots, self.arrays):
            slots[slot] = value
        rows: list[LayerPrecision] = []
        diverging: list[str] = []
        first: LayerPrecision | None = None
        factor = np.float32(scale or 1)

        def hold(value: np.ndarray) -> np.ndarray:  # a value as the lower type holds it (scaled: x / scale)
            if scale is None or value.dtype != np.float32:
                return low.round(value)
            return low.round(value / factor) * factor
        with np.errstate(all="ignore"):
            for step in plan.steps:
                layer_id = step.layer.id
                lowered = self.lowered(layer_id, kept)
                args = [slots[i] for i in step.inputs]
                if lowered and (self.device == "GPU" or layer_id in self.anchors):
                    args = [hold(a) if isinstance(a, np.ndarray) else a for a in args]
                try:
                    result = step.kernel(*args)
                except IRError as error:
                    raise with_layer(error, step.layer) from None
                except Exception as exc:
                    raise kernel_error(exc, step.layer) from exc
                several = step.outputs is not None
                values = list(result) if several else [result]
                for position, value in enumerate(values):
                    if value is None or not isinstance(value, np.ndarray):
                        continue
                    if lowered:
                        value = values[position] = hold(value)
                    ref = reference.get((layer_id, position))
                    if ref is None or ref.dtype.kind != "f":
                        continue
                    row = LayerPrecision(step.layer, position, _port(self.model, layer_id, position), ref.shape,
                                         low.name if lowered and ref.dtype == np.float32
                                         else element_type_of(ref.dtype).name)
                    _compare(row, ref, value, self.tolerance)
                    if detail:
                        _range(row, ref, low, lowered)
                        rows.append(row)
                    if row.diverges and first is None:
                        first = row
                    if row.diverges:
                        diverging += self.returned.get((layer_id, position), [])
                if several:
                    slots[step.outputs[0]:step.outputs[-1] + 1] = values
                else:
                    slots[step.output] = values[0]
                for slot in step.release:
                    slots[slot] = None
        return Run(rows, diverging, first)


class Run(Record):
    """One emulated run: the ``rows`` asked for, the names of the model outputs ``diverging``, the ``first``
    diverging layer output (None when none does)."""

    __slots__ = ("rows", "diverging", "first")

    def __init__(self, rows: list[LayerPrecision], diverging: list[str], first: LayerPrecision | None) -> None:
        self.rows = rows
        self.diverging = diverging
        self.first = first


def _port(model: Model, layer_id: str, position: int) -> str:
    ports = model.graph.layers[layer_id].outputs
    return ports[position].id if position < len(ports) else str(position)


def _compare(row: LayerPrecision, ref: np.ndarray, value: np.ndarray, tolerance: Tolerance) -> None:
    """The emulated error of one output against the reference (see the module docstring)."""
    if value.shape != ref.shape or ref.size == 0:
        return
    wide, emulated = ref.astype(np.float64), value.astype(np.float64)
    finite = np.abs(wide[np.isfinite(wide)])
    largest = float(finite.max()) if finite.size else 0.0
    error = np.abs(emulated - wide)
    allowed = np.maximum(tolerance.atol + tolerance.rtol * np.abs(wide), tolerance.rtol * largest)
    both_nan = np.isnan(emulated) & np.isnan(wide)
    agree = (error <= allowed) | (emulated == wide) | both_nan
    error = np.where(both_nan | (emulated == wide), 0.0, np.where(np.isfinite(error), error, np.inf))  # inf - inf: NaN
    row.mismatches = int(ref.size - np.count_nonzero(agree))
    row.max_error = float(error.max())
    if row.mismatches:
        index = np.unravel_index(int(np.argmax(np.where(agree, -1.0, error))), ref.shape)
        row.worst_index = tuple(int(i) for i in index)
        row.reference, row.emulated = float(wide[index]), float(emulated[index])


def _range(row: LayerPrecision, ref: np.ndarray, low: LowType, lowered: bool) -> None:
    """The reference's range, and for an f32 output (the only type the hint converts) of a ``lowered`` layer
    against the type's: overflow, underflow to zero, subnormals, headroom."""
    magnitude = np.abs(ref[np.isfinite(ref)].astype(np.float64))
    if magnitude.size == 0:
        return
    row.max_abs = float(magnitude.max())
    nonzero = magnitude[magnitude > 0]
    row.min_abs = float(nonzero.min()) if nonzero.size else None
    if ref.dtype != np.float32 or not lowered:
        return
    rounded = np.abs(nonzero.astype(np.float32).astype(low.dtype).astype(np.float64))
    row.overflow = int(np.count_nonzero(np.isinf(rounded)))
    row.underflow = int(np.count_nonzero(rounded == 0))
    row.subnormal = int(np.count_nonzero((rounded > 0) & (rounded < low.tiny)))
    row.headroom_bits = math.log2(low.max / row.max_abs) if row.max_abs > 0 else None


def _fixes(emulation: Emulation, reference: dict, rows: list[LayerPrecision], kept: set[str],
           headroom: float) -> PrecisionFix:
    low = emulation.low
    scale, scale_fixes = None, False
    largest = max((row.max_abs for row in rows if row.runs == low.name and row.max_abs is not None), default=0.0)
    if emulation.device in SCALE_DEVICES and any(row.overflow for row in rows if row.runs == low.name):
        scale = 2 ** max(0, math.ceil(math.log2(largest * headroom / low.max)))
        scale_fixes = not emulation.run(reference, kept, scale=scale).diverging
    keep, keep_fixes = _keep_set(emulation, reference, kept)
    order = {step.layer.id: index for index, step in enumerate(emulation.plan.steps)}
    refs = [emulation.model.inference.layers[layer_id].ref for layer_id in sorted(keep, key=order.__getitem__)]
    model = emulation.model
    xml = os.fspath(model.source) if isinstance(model.source, (str, os.PathLike)) else "model.xml"
    weights = os.fspath(model.weights_source) if isinstance(model.weights_source, (str, os.PathLike)) else None
    return PrecisionFix(scale, scale_fixes, refs, keep_fixes,
                        keep_snippet(xml, [ref.name for ref in refs], emulation.device, low.name, weights)
                        if refs else "")


def _keep_set(emulation: Emulation, reference: dict, kept: set[str]) -> tuple[set[str], bool]:
    """Grow the set until no model output diverges: add the first diverging layer output's layer when it is lowered,
    or, when it diverges though kept, the lowered layers it reads (its error came in with its inputs); then drop
    each layer the result does not need. Returns the added layers and whether they fix every output."""
    added: list[str] = []
    computed = {step.layer.id for step in emulation.plan.steps}
    fixes = False
    for _ in range(MAX_KEEP_STEPS):
        run = emulation.run(reference, kept | set(added))
        if not run.diverging:
            fixes = True
            break
        if run.first is None:
            break
        layer_id = run.first.layer.id
        if emulation.lowered(layer_id, kept | set(added)):
            added.append(layer_id)
            continue
        producers = _lowered_sources(emulation, layer_id, kept | set(added), computed)
        if not producers:
            break
        added.extend(producers)
    if not fixes:
        return set(added), False
    for layer_id in reversed(list(added)):
        if not emulation.run(reference, kept | (set(added) - {layer_id})).diverging:
            added.remove(layer_id)
    return set(added), True


def _lowered_sources(emulation: Emulation, layer_id: str, kept: set[str], computed: set[str]) -> list[str]:
    """The nearest lowered computed layers ``layer_id`` reads, through the kept ones between."""
    sources = emulation.model.graph.sources
    found: dict[str, None] = {}
    seen, stack = set(), [source for source, _ in sources.get(layer_id, ())]
    while stack:
        source = stack.pop()
        if source in seen or source not in computed:
            continue
        seen.add(source)
        if emulation.lowered(source, kept):
            found[source] = None
        else:
            stack.extend(parent for parent, _ in sources.get(source, ()))
    return list(found)


def keep_snippet(xml: str, names: Sequence[str], device: str, to: str, weights: str | None = None) -> str:
    """Python that writes a copy of the IR with the ``precise`` rt_info attribute on ``names`` (OpenVINO then
    keeps them in f32) and compiles it with the hint; ``weights``: the .bin (default: the one next to ``xml``)."""
    xml_text = str(xml)
    stem = xml_text[:-4] if xml_text.lower().endswith(".xml") else xml_text
    weights = stem + ".bin" if weights is None else str(weights)
    return "\n".join([
        "import xml.etree.ElementTree as ET",
        "import openvino as ov",
        "",
        f"keep = {sorted(set(names))!r}",
        f"tree = ET.parse({xml_text!r})",
        "for layer in tree.getroot().iter('layer'):",
        "    if layer.get('name') in keep:",
        "        rt_info = layer.find('rt_info')",
        "        if rt_info is None:",
        "            rt_info = ET.SubElement(layer, 'rt_info')",
        "        ET.SubElement(rt_info, 'attribute', name='precise', version='0')",
        f"tree.write({stem + '.keep-f32.xml'!r})",
        "core = ov.Core()",
        f"model = core.read_model({stem + '.keep-f32.xml'!r}, {weights!r})",
        f"compiled = core.compile_model(model, {device!r}, {{'INFERENCE_PRECISION_HINT': {to!r}}})",
    ])


def scale_snippet(scale: int, device: str, to: str) -> str:
    """The compile properties that apply an activations scale."""
    return (f"compiled = core.compile_model(model, {device!r}, {{'INFERENCE_PRECISION_HINT': {to!r},"
            f" 'ACTIVATIONS_SCALE_FACTOR': {float(scale)!r}}})")


def report_data(report: PrecisionReport) -> dict[str, Any]:
    """The report as JSON-ready data."""
    fix = report.fix
    return {
        "to": report.to,
        "device": report.device,
        "tolerance": {"atol": report.tolerance.atol, "rtol": report.tolerance.rtol},
        "headroom": report.headroom,
        "f32_from": report.f32_from,
        "agree": report.ok,
        "outputs_diverging": report.outputs_diverging,
        "first_divergence": None if report.first is None else _ref_data(report.first.layer) | {
            "port": report.first.port, "position": report.first.position},
        "counts": {status: sum(row.status == status for row in report.layers)
                   for status in ("overflow", "underflow", "diverges", "ok")},
        "layers": [row_data(row) for row in report.layers],
        "fix": None if fix is None else {
            "scale": fix.scale, "scale_fixes": fix.scale_fixes,
            "scale_snippet": scale_snippet(fix.scale, report.device, report.to) if fix.scale else "",
            "keep": [_ref_data(ref) for ref in fix.keep], "keep_fixes": fix.keep_fixes, "keep_snippet": fix.snippet},
    }


def _ref_data(ref: LayerRef) -> dict[str, Any]:
    return {"layer": ref.name, "id": ref.id, "type": ref.type_version, "line": ref.line}


def row_data(row: LayerPrecision) -> dict[str, Any]:
    return _ref_data(row.layer) | {
        "port": row.port, "position": row.position, "shape": list(row.shape), "runs": row.runs,
        "status": row.status, "max_abs": row.max_abs, "min_abs": row.min_abs, "overflow": row.overflow,
        "underflow": row.underflow, "subnormal": row.subnormal, "headroom_bits": row.headroom_bits,
        "mismatches": row.mismatches, "size": row.size, "max_error": row.max_error,
        "worst_index": None if row.worst_index is None else list(row.worst_index),
        "reference": row.reference, "emulated": row.emulated}
