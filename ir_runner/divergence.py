"""``crosscheck``: run a model in ir-run and on an OpenVINO device, compare every layer, find the first divergence.

ir-run computes OpenVINO's reference semantics; a device (the CPU plugin, a GPU) may not. Every layer output
is compared in execution order, by one of two rules:

- **bits**: integer and boolean outputs always; float outputs of ops declared exact (``OpDef.exact``, the
  default) when the precision hint is f32, or when the output type is no wider than the hinted type.
  ``-0.0`` differs from ``+0.0``, and NaNs differ when their bits do.
- **tolerance**: other float outputs (ops declared ``exact=False``, or a float output wider than the hint,
  which the device may hold in the hinted precision). An element agrees when both are NaN, or they are equal
  (infinities included), or ``|device - ours| <= atol + rtol * |ours|``, or ``|device - ours| <= rtol * M``
  where ``M`` is the largest finite ``|ours|`` of the output (rounding of an accumulated sum scales with its
  operands, not with the element: a LayerNorm's output near zero differs by the rounding of values near one),
  or they are at most ``ulp`` units in the last place of the output type apart. Defaults follow the hint
  (``DEFAULT_TOLERANCES``): f32 atol 1e-6, rtol 1e-5, 4 ULP; f16 atol 1e-3, rtol 2e-3 (twice f16's epsilon);
  bf16 atol 1e-2, rtol 1.6e-2 (twice bf16's).

A layer output **diverges** when an element disagrees. It is the cause (``diverges``) when every layer output
it reads agrees; it is ``inherited`` when one of them diverged (or was not observable and itself read a
diverging output), and ``cause`` names the cause it comes from. A cause whose operation accounts for every
differing element (``OpDef.explain``: a quantization level flipped by a rounding tie, its input one ulp
apart) is ``explained``, with the account in ``note``: it and what inherits from it are no fault of either
side. So is a **decompression subgraph**: a float output computed from constants alone (``source`` 'folded')
through a float type narrower than the precision hint (NNCF's ``u8 -> Convert f16 -> Subtract -> Multiply f16
-> Convert f32`` weights), which ir-run computes in the IR's types as OpenVINO's reference does, while
OpenVINO's devices compute such subgraphs in the inference precision: it is explained when every element is
within half an ulp of the narrow type. The first divergence is the first unexplained cause in execution order;
the report is ``ok`` when there is none. Layer outputs the device cannot show are ``not observable`` (with the
reason), never skipped silently.

A 64-bit integer output whose device values are ours narrowed to 32 bits (saturated or wrapped: the CPU plugin
holds i64/u64 in 32 bits) is a known **device representation** (status ``device representation``, with the
narrowing in ``note``) when it does not come from a computation on agreeing inputs: it is a constant (a Const,
such as the INT64_MAX slice ends of torch exports, or folded from constants), or every input it reads that
differs is itself a representation (a Concat of two INT64_MAX Consts). It does not fail the check while it
stays invisible: every layer output computed from it agrees (or is itself a representation), and it is not a
model output's value (what a Result returns is what the user sees). Otherwise it is a divergence: a model
output holding it ``diverges``; a representation that a later differing output reads becomes the cause
(``diverges``, unless that output also reads an unexplained divergence, which then accounts for it), the output
``inherited``. A computed output that overflows 32
bits from agreeing inputs (an i64 Add the device computes in 32 bits) ``diverges``: the device computed
other values. With ``strict_representations`` every representation is a divergence.

An output reading several diverged outputs inherits from all of them, whatever their order: representations
among them become causes as above, and its ``cause`` is the earliest (in execution order) that diverges, or
the earliest explained one when all are explained.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import fpenv, strings
from .errors import InputError, LayerRef
from .model import Model, load
from .record import Record
from .state import State, carried
from .types import element_type_of

if TYPE_CHECKING:
    from .graph import Graph
    from .infer import Inference

AGREE, DIVERGES, INHERITED, UNOBSERVABLE = "agree", "diverges", "inherited", "not observable"
EXPLAINED = "explained"
REPRESENTED = "device representation"
_NARROWED = ("the device holds this 64-bit output in 32 bits: values outside its range saturate",
             "the device holds this 64-bit output in 32 bits: values outside its range wrap")


class Tolerance(Record):
    """The bound for float outputs compared by tolerance (see the module docstring); ``ulp`` None: none."""

    __slots__ = ("atol", "rtol", "ulp")

    def __init__(self, atol: float, rtol: float, ulp: int | None) -> None:
        self.atol = atol
        self.rtol = rtol
        self.ulp = ulp


DEFAULT_TOLERANCES = {"f32": Tolerance(1e-6, 1e-5, 4), "f16": Tolerance(1e-3, 2e-3, None),
                      "bf16": Tolerance(1e-2, 1.6e-2, None)}
_HINT_MANTISSA = {"f32": 23, "f16": 10, "bf16": 7}


class LayerComparison(Record):
    """One compared layer output: where (``layer``, output ``position``, XML ``port`` id), how (``rule``: 'bits'
    or 'tolerance'), the verdict (``status``: agree, diverges, inherited, not observable) and, when both sides
    have the output, the errors: ``mismatches`` of ``size`` elements, ``max_abs``, ``max_rel``, ``max_ulp``
    (None for non-float types) and the ``worst_index`` with both values there (``ours``, ``device``).
    ``note`` says why a layer is not observable, or what else differs (shape, element type, a 64-bit output
    held in 32 bits), or how an ``explained`` one differs; ``cause`` is the diverging layer an inherited
    output comes from (the row's own layer for a cause)."""

    __slots__ = ("layer", "position", "port", "source", "element_type", "shape", "rule", "status", "mismatches",
                 "size", "max_abs", "max_rel", "max_ulp", "worst_index", "ours", "device", "note", "cause")

    def __init__(self, layer: LayerRef, position: int, port: str, source: str, element_type: str,
                 shape: tuple[int, ...], rule: str) -> None:
        self.layer = layer
        self.position = position
        self.port = port
        self.source = source
        self.element_type = element_type
        self.shape = shape
        self.rule = rule
        self.status = AGREE
        self.mismatches = 0
        self.size = int(math.prod(shape))
        self.max_abs: float | None = None
        self.max_rel: float | None = None
        self.max_ulp: float | None = None
        self.worst_index: tuple[int, ...] | None = None
        self.ours: Any = None
        self.device: Any = None
        self.note: str | None = None
        self.cause: LayerRef | None = None

    @property
    def diverged(self) -> bool:
        return self.status in (DIVERGES, INHERITED, EXPLAINED, REPRESENTED)


class CrosscheckReport(Record):
    """Every layer output compared (``layers``, in execution order), the ``first_divergence`` (a LayerRef, or
    None; ``first`` is its row) and ``ok`` (nothing diverged, or only what an operation explains)."""

    __slots__ = ("device", "precision", "tolerance", "openvino_version", "layers", "first", "reduction",
                 "observation", "groups")

    def __init__(self, device: str, precision: str, tolerance: Tolerance, openvino_version: str,
                 layers: list[LayerComparison]) -> None:
        self.device = device
        self.precision = precision
        self.tolerance = tolerance
        self.openvino_version = openvino_version
        self.layers = layers
        self.first = next((row for row in layers if row.status == DIVERGES), None)
        self.reduction = None  # a reduce.Reduction when asked for (crosscheck(..., reduce=True))
        self.observation = None  # an observe.Observation: where the device was observed, and the proof
        self.groups: list = []  # observe.GroupVerdict of each diverging fused group (not in every-layer mode)

    @property
    def first_divergence(self) -> LayerRef | None:
        return self.first.layer if self.first is not None else None

    @property
    def ok(self) -> bool:
        return self.first is None

    def count(self, status: str) -> int:
        return sum(row.status == status for row in self.layers)

    def __repr__(self) -> str:
        where = f", first divergence {self.first.layer}" if self.first else ""
        explained = f" ({self.count(EXPLAINED)} explained)" if self.count(EXPLAINED) else ""
        return (f"<CrosscheckReport {self.device} {self.precision}: {len(self.layers)} layer outputs, "
                f"{self.count(DIVERGES) + self.count(INHERITED) + self.count(EXPLAINED)} diverge{explained}{where}>")


@fpenv.exact_subnormals()
def crosscheck(model: Model | str | os.PathLike | bytes, feeds: Mapping[str, object] | Sequence | None = None,
               device: str = "CPU", precision: str = "f32", *, weights=None, tolerance: Tolerance | None = None,
               cast: str | None = None, strict_representations: bool = False, state: State | None = None,
               reduce: bool = False, output: str | os.PathLike = "repro", every_layer: bool = False
               ) -> CrosscheckReport:
    """Run ``model`` (a loaded Model, or what :func:`ir_runner.load` takes) on ``feeds`` in ir-run and in
    OpenVINO on ``device`` with ``INFERENCE_PRECISION_HINT=precision``, and compare the layer outputs the
    device materialises (the boundaries of its fused groups, proven not to change what it compiles; a bisection
    when that proof fails: :mod:`ir_runner.observe`), or every layer output with ``every_layer``. Each diverging
    fused group is run alone on ir-run's values to tell its own error from an inherited one (``report.groups``).

    Needs the optional ``openvino`` package (UnsupportedError with how to install it otherwise). ``tolerance``
    replaces the precision's default bound for outputs compared by tolerance. ``strict_representations``: a
    device representation (see the module docstring) is a divergence (the model's own ``strict``, given to
    :func:`ir_runner.load`, is about index values, as everywhere). A stateful model runs on ``state`` (a new one
    when None), which the run updates; OpenVINO's infer request starts from the same variable values.
    ``reduce``: on a divergence, write the smallest part of the model that still diverges to the directory
    ``output`` (:mod:`ir_runner.reduce`; ``report.reduction`` says what was written). Runs with FTZ/DAZ cleared
    (:mod:`ir_runner.fpenv`), the thread's own mode restored after; the device calls leave it unchanged.
    """
    from .device import PRECISIONS
    from .observe import EVERY_LAYER, isolate, mark_overwritten, observe

    if precision not in PRECISIONS:
        raise InputError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if not isinstance(model, Model):
        model = load(model, weights)
    elif model.source is None:
        raise InputError("crosscheck needs the model's XML: pass the path (or bytes) given to load()")
    if reduce:
        from .reduce import check_directory

        check_directory(output, [path for path in (model.source, model.weights_source, model.graph.net.weights.path)
                                 if isinstance(path, (str, os.PathLike))])
    bound = tolerance or DEFAULT_TOLERANCES[precision]
    arrays = model.bind(feeds, cast=cast)
    variables = None
    if model.variables:
        state = state if state is not None else model.new_state()
        variables = state.values()  # before the run updates them
    trace = model.trace(arrays, state=state)
    keys = [(record.layer.name, record.position) for record in trace.layers]
    fed = {info.layer_name: array for info, array in zip(model.inputs, arrays)}
    ours_by_key = {(record.layer.id, record.position): record.value for record in trace.layers}
    ours_by_name = {(record.layer.name, record.position): record.value for record in trace.layers}
    constant = {record.layer.id for record in trace.layers if record.source in ("constant", "folded")}
    observation = observe(model, keys, fed, device, precision, variables, every_layer,
                          lambda key, value: differing(np.asarray(ours_by_name[key]), value, bound, precision)[0] > 0,
                          constant)
    mark_overwritten(model, observation.run, ours_by_name, device)
    device_run = observation.run
    rows: list[LayerComparison] = []
    narrowest: dict[tuple[str, int], int] = {}  # constant float outputs: the fewest mantissa bits on their path
    unseen: set[tuple[str, int]] = set()  # outputs not observable on the device
    tainted: dict[tuple[str, int], LayerRef] = {}  # outputs that diverged (or are unobservable and read one
    # that did), with the cause they come from
    represented: dict[str, int] = {}  # layers whose output differs as the device represents it -> their row
    causes_at: dict[str, int] = {}  # cause layers -> their row
    returned = {model.graph.sources[result.id][0] for result in model.graph.results}  # the model's outputs
    inexact: set[tuple[str, int]] = set()  # outputs that agree within the tolerance but not bit for bit
    for record in trace.layers:
        info = model.inference.layers[record.layer.id]
        value = np.asarray(record.value)
        exact = getattr(info.op, "exact", True)
        sources = model.graph.sources.get(record.layer.id, ())
        # an exact operation on inputs that agree only within the tolerance can agree only within it too, and so
        # can everything computed from it, even where a rounding happened to agree (a device may fuse the
        # layers and compute from its own unrounded values)
        reads_inexact = any(source in inexact for source in sources)
        exact = exact and not reads_inexact
        row = LayerComparison(record.layer, record.position, record.port, record.source, _type_name(value.dtype),
                              value.shape, _rule(value.dtype, exact, precision))
        key = (record.layer.name, record.position)
        _note_constant_path(narrowest, record, sources, value)
        causes = sorted({tainted[source].id: tainted[source] for source in sources if source in tainted}.values(),
                        key=lambda ref: causes_at[ref.id])
        if key in device_run.values:
            device_value = device_run.values[key]
            _compare(row, value, device_value, bound)
            if not row.mismatches and _is_float(value.dtype) and (
                    reads_inexact or device_value.shape != value.shape or device_value.dtype != value.dtype
                    or not np.array_equal(_bits(value), _bits(device_value))):
                inexact.add((record.layer.id, record.position))
            representation = row.mismatches and row.note in _NARROWED and (
                all(cause.id in represented for cause in causes)
                if causes else record.source in ("constant", "folded"))
            if representation and not strict_representations \
                    and (record.layer.id, record.position) not in returned:
                row.status, row.cause = REPRESENTED, record.layer
                represented[record.layer.id] = len(rows)
            elif representation or (row.mismatches and not causes):
                row.status, row.cause = DIVERGES, record.layer
                if representation and not strict_representations:
                    row.note += "; it is a model output, which the user sees as the device holds it"
                elif row.note in _NARROWED and not representation:
                    row.note += ", computed from inputs that agree: the device computes other values"
                else:
                    _explain(row, info, model, ours_by_key, device_run.values, value, device_value)
                if row.status == DIVERGES:
                    _explain_decompression(row, narrowest.get((record.layer.id, record.position)), value,
                                           device_value, device, precision)
                if row.status == DIVERGES:
                    _unseen_ties(row, model, sources, unseen, ours_by_key, device)
            elif row.mismatches:
                # a representation that made a later output differ is a cause, unless a divergence it also reads
                # accounts for the difference (that one already fails the check, and is the one to look at)
                if not any(rows[causes_at[cause.id]].status == DIVERGES for cause in causes
                           if cause.id not in represented):
                    for cause in causes:
                        if cause.id in represented:
                            rows[represented.pop(cause.id)].status = DIVERGES
                row.status, row.cause = INHERITED, _first_cause(causes, rows, causes_at)
        else:
            row.status = UNOBSERVABLE
            row.note = device_run.unobservable.get(key, "not returned by the device")
            row.cause = _first_cause(causes, rows, causes_at) if causes else None
            unseen.add((record.layer.id, record.position))
            if not exact and _is_float(value.dtype):  # unseen, it may differ within the bound: what reads it too
                inexact.add((record.layer.id, record.position))
        if row.cause == record.layer:
            causes_at[record.layer.id] = len(rows)
        if row.diverged or (row.status == UNOBSERVABLE and row.cause is not None):
            tainted[(record.layer.id, record.position)] = row.cause
        rows.append(row)
    report = CrosscheckReport(device, precision, bound, device_run.version, rows)
    report.observation = observation
    if observation.mode != EVERY_LAYER:
        report.groups = [isolate(model, row, observation.groups, ours_by_key, device_run.values, device, precision,
                                 lambda ours, theirs, rule=row.rule: differing(ours, theirs, bound, precision, rule))
                         for row in rows if row.status == DIVERGES][:MAX_ISOLATED]
    if reduce and report.first is not None:
        report.reduction = _reduce(model, report, trace, output, device=device, precision=precision,
                                   tolerance=tolerance, strict_representations=strict_representations)
    return report


def _reduce(model: Model, report: CrosscheckReport, trace, output, **check):
    from .reduce import reduce_divergence

    if carried(model):
        raise InputError("--reduce works on models without state (variables a run writes): a part would lose the"
                         " values the model's Assign/ReadValue pairs carry")
    values = {(record.layer.id, record.position): record.value for record in trace.layers}
    ids = {layer.name: layer_id for layer_id, layer in model.graph.layers.items()}
    group = report.groups[0] if report.groups else None
    named = set(group.upstream + group.layers) if group is not None else set()
    suspects = [layer_id for layer_id in model.graph.order if model.graph.layers[layer_id].name in named
                and ids.get(model.graph.layers[layer_id].name) == layer_id]
    return reduce_divergence(model, report, values, output, suspects, crosscheck,
                             default_tolerance=DEFAULT_TOLERANCES[check["precision"]], **check)


MAX_ISOLATED = 8  # diverging groups run alone, at most


def differing(ours: np.ndarray, theirs: np.ndarray, bound: Tolerance, precision: str, rule: str | None = None
              ) -> tuple[int, int]:
    """(elements that differ, elements) between two values of a layer output, by ``rule`` ('bits' or
    'tolerance'; default: bits for integer and boolean outputs, the tolerance for float ones)."""
    ours = np.asarray(ours)
    row = LayerComparison(LayerRef("", "", ""), 0, "", "computed", _type_name(ours.dtype), ours.shape,
                          rule or _rule(ours.dtype, False, precision))
    _compare(row, ours, np.asarray(theirs), bound)
    return row.mismatches, row.size


def _first_cause(causes: list[LayerRef], rows: list[LayerComparison], causes_at: dict[str, int]) -> LayerRef:
    """Of the causes an output inherits from (in execution order), the first that diverges; the first (an
    explained one) when none does."""
    return next((cause for cause in causes if rows[causes_at[cause.id]].status == DIVERGES), causes[0])


def _explain(row: LayerComparison, info, model: Model, ours: dict, theirs: dict, value: np.ndarray,
             device_value: np.ndarray) -> None:
    """Ask the row's operation (``OpDef.explain``) how its output differs; an account of every differing
    element makes the row ``explained``."""
    explain = getattr(info.op, "explain", None)
    if explain is None or row.position != 0 or device_value.shape != value.shape:
        return
    sources = model.graph.sources[info.layer.id]
    inputs = [ours.get(source) for source in sources]
    if any(array is None for array in inputs):
        return
    names = [model.graph.layers[layer_id].name for layer_id, _ in sources]
    other_inputs = [theirs.get((name, port)) for name, (_, port) in zip(names, sources)]
    differ = _bits(value) != _bits(device_value.astype(value.dtype))  # (as the bits rule counts them)
    account = explain(info.params, [np.asarray(a) for a in inputs], other_inputs, value,
                      device_value.astype(value.dtype), differ)
    if account is None:
        return
    if account.count >= int(np.count_nonzero(differ)):
        row.status, row.note = EXPLAINED, account.text
    else:
        row.note = f"{account.text}; {int(np.count_nonzero(differ)) - account.count} other(s) unexplained"


class RoundingTie(Record):
    """A layer whose output moves when its input moves by one ulp (``OpDef.explain`` says how): ``layer``,
    ``count`` of ``size`` elements, and the operation's ``text``."""

    __slots__ = ("layer", "count", "size", "text")

    def __init__(self, layer: LayerRef, count: int, size: int, text: str) -> None:
        self.layer = layer
        self.count = count
        self.size = size
        self.text = text


@fpenv.exact_subnormals()  # kernels run outside a plan's run here too
def rounding_ties(model: Model, feeds: Mapping[str, object] | Sequence | None = None, *,
                  cast: str | None = None) -> list[RoundingTie]:
    """Run ``model`` on ``feeds`` and find, in execution order, the layers whose operation explains differences
    (``OpDef.explain``: a quantization) and whose output moves when their first input moves by one ulp up or
    down: values on a rounding boundary, where any computation of the input one ulp apart (another device,
    another summation order) gives an output a level away, and everything after it differs. What ``run
    --ref`` says when outputs differ."""
    inference = model.inference
    explaining = {layer_id for layer_id, info in inference.layers.items()
                  if getattr(info.op, "explain", None) is not None and info.op.kernel is not None}
    needed = {source for layer_id in explaining for source in model.graph.sources[layer_id]}
    needed |= {(layer_id, 0) for layer_id in explaining}
    values: dict[tuple[str, int], np.ndarray] = {}
    order: list[LayerRef] = []

    def keep(record) -> None:
        key = (record.layer.id, record.position)
        if key in needed:
            values[key] = np.asarray(record.value)
        if record.layer.id in explaining and record.position == 0:
            order.append(record.layer)

    model.trace(feeds, cast=cast, callback=keep)
    found = []
    for ref in order:
        info = inference.layers[ref.id]
        inputs = [values[source] for source in model.graph.sources[ref.id]]
        tie = _one_ulp_apart(info, inputs, values[(ref.id, 0)])
        if tie is not None:
            found.append(RoundingTie(ref, tie.count, values[(ref.id, 0)].size, tie.text))
    return found


class Decompression(Record):
    """A constant float output (``layer``, ``spec``) computed through a narrower float type (``narrow``) and read
    by a computed layer: a decompression subgraph's result, which devices compute in their precision."""

    __slots__ = ("layer", "spec", "narrow")

    def __init__(self, layer: LayerRef, spec: str, narrow: str) -> None:
        self.layer = layer
        self.spec = spec
        self.narrow = narrow


def decompressions(model: Model) -> list[Decompression]:
    """The results of the model's decompression subgraphs, in execution order: float outputs computed from
    constants alone through layers computing in a float type narrower than their own (NNCF's ``u8 -> f16 ->
    Subtract -> Multiply -> Convert f32`` weights) and read by a computed layer. ir-run computes them in the
    IR's types, OpenVINO's devices in their inference precision. What ``run --ref`` says when outputs
    differ."""
    return decompression_results(model.graph, model.inference)


def decompression_results(graph: Graph, inference: Inference) -> list[Decompression]:
    """:func:`decompressions` of a graph and its inference (the viewer groups these subgraphs)."""
    narrowest: dict[str, int | None] = {}  # constant layers: the fewest float mantissa bits on their path
    found = []
    for layer_id in graph.order:
        info = inference.layers[layer_id]
        sources = graph.sources.get(layer_id, ())
        constant = bool(info.outputs) and ("value" in info.params or (
            sources and all(source in narrowest for source, _ in sources)
            and inference.folder.layer_values(layer_id) is not None))
        if constant:
            bits = [narrowest[source] for source, _ in sources if narrowest[source] is not None]
            dtype = info.outputs[0].element_type.dtype
            if sources and dtype is not None and _is_float(dtype):  # (a Const's values are exact in any type)
                bits.append(_mantissa(dtype))
            narrowest[layer_id] = min(bits) if bits else None
            continue
        for source, _ in sources:
            spec = inference.output_spec(source, 0)
            narrow, dtype = narrowest.get(source), spec.element_type.dtype
            if narrow is not None and dtype is not None and _is_float(dtype) and _mantissa(dtype) > narrow \
                    and all(d.layer.id != source for d in found):
                name = {10: "f16", 7: "bf16"}.get(narrow, f"{narrow} mantissa bits")
                found.append(Decompression(inference.layers[source].ref, str(spec), name))
    return found


def _one_ulp_apart(info, inputs: list[np.ndarray], output: np.ndarray):
    """The operation's account of its output with the first input one ulp up (or, where that changes nothing,
    down); None when nothing moves or the input is not of a float type nextafter steps through."""
    x = inputs[0]
    if x.dtype.kind != "f" or output.shape != x.shape:
        return None
    moved_inputs, moved_outputs = [], []
    with np.errstate(all="ignore"):
        for direction in (np.inf, -np.inf):
            moved = np.nextafter(x, x.dtype.type(direction))
            moved_inputs.append(moved)
            moved_outputs.append(np.asarray(info.op.kernel(moved, *inputs[1:], **info.params)))
    up = _bits(moved_outputs[0]) != _bits(output)
    down = _bits(moved_outputs[1]) != _bits(output)
    differ = up | down
    if not differ.any():
        return None
    other = np.where(up, moved_outputs[0], moved_outputs[1])
    other_x = np.where(up, moved_inputs[0], moved_inputs[1])
    return info.op.explain(info.params, inputs, [other_x, *inputs[1:]], output, other, differ)


def _unseen_ties(row: LayerComparison, model: Model, sources, unseen: set, ours: dict, device: str) -> None:
    """A cause that reads outputs the device cannot show (fused away): name those among them (and the unseen
    outputs they read) whose values sit on a rounding boundary, where a flip would first show in this row."""
    found, stack, seen = [], [source for source in sources if source in unseen], set()
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        info = model.inference.layers[key[0]]
        above = model.graph.sources.get(key[0], ())
        stack.extend(source for source in above if source in unseen)
        inputs = [ours.get(source) for source in above]
        if key[1] == 0 and getattr(info.op, "explain", None) is not None and info.op.kernel is not None \
                and inputs and all(array is not None for array in inputs) and key in ours:
            tie = _one_ulp_apart(info, [np.asarray(a) for a in inputs], np.asarray(ours[key]))
            if tie is not None:
                found.append(f"'{info.ref.name}' ({info.ref.type_version}, id {info.ref.id}): {tie.text}")
    if found:
        row.note = (f"it reads layer output(s) {device} cannot show that hold values on a rounding boundary, where"
                    f" a level flipped there would first show here: {'; '.join(found)}")


def _note_constant_path(narrowest: dict, record, sources, value: np.ndarray) -> None:
    """For a constant output (a Const, or folded from constants), the fewest float mantissa bits its path
    computed in (a Const's values are exact in any type)."""
    if record.source not in ("constant", "folded"):
        return
    bits = [narrowest[source] for source in sources if source in narrowest]
    if record.source == "folded" and _is_float(value.dtype):
        bits.append(_mantissa(value.dtype))
    if bits:
        narrowest[(record.layer.id, record.position)] = min(bits)


def _explain_decompression(row: LayerComparison, narrow: int | None, value: np.ndarray, device_value: np.ndarray,
                           device: str, precision: str) -> None:
    """A constant float output computed through a type narrower than the hint (a decompression subgraph), every
    element within half an ulp of that type of the device's: the device computed it in the hint's precision."""
    if (narrow is None or row.source != "folded" or narrow >= _HINT_MANTISSA[precision] or not _is_float(value.dtype)
            or device_value.shape != value.shape or _mantissa(value.dtype) <= narrow):
        return
    ours, theirs = value.astype(np.float64), device_value.astype(np.float64)
    half_ulp = 2.0 ** -(narrow + 1)
    with np.errstate(all="ignore"):
        within = (ours == theirs) | (np.abs(ours - theirs) <= half_ulp * np.abs(theirs))
    if not within.all():
        return
    narrow_name = {10: "f16", 7: "bf16"}.get(narrow, f"a type of {narrow} mantissa bits")
    row.status = EXPLAINED
    row.note = (f"{row.mismatches} of {row.size} values within half an ulp of {narrow_name} (at most"
                f" {row.max_abs:.3g}): a decompression subgraph, computed from constants in {narrow_name} as the IR"
                f" says (OpenVINO's reference too); {device} computes it in {precision}, its inference precision")


def _type_name(dtype: np.dtype) -> str:
    et = element_type_of(dtype)
    return et.name if et is not None else str(dtype)


def _is_float(dtype: np.dtype) -> bool:
    et = element_type_of(dtype)
    return et is not None and et.kind == "float"


def _rule(dtype: np.dtype, exact: bool, precision: str) -> str:
    if not _is_float(dtype):
        return "bits"
    narrow = precision == "f32" or _mantissa(dtype) <= _HINT_MANTISSA[precision]
    return "bits" if exact and narrow else "tolerance"


def _mantissa(dtype: np.dtype) -> int:
    import ml_dtypes

    return int(ml_dtypes.finfo(dtype).nmant)


def _compare(row: LayerComparison, ours: np.ndarray, device: np.ndarray, bound: Tolerance) -> None:
    """Fill ``row`` with the errors between ``ours`` and ``device``; a different shape is a divergence."""
    if device.shape != ours.shape:
        row.note = f"the device gives shape {list(device.shape)}, ir-run {list(ours.shape)}"
        row.mismatches = max(row.size, 1)
        return
    if ours.dtype == object or device.dtype == object:
        _compare_strings(row, ours, device)
        return
    if device.dtype != ours.dtype:
        row.note = f"the device gives {_type_name(device.dtype)}"
        with np.errstate(all="ignore"):
            device = device.astype(ours.dtype)
    if row.size == 0:
        return
    a, b = ours.astype(np.float64), device.astype(np.float64)  # errors are reported as floats
    with np.errstate(all="ignore"):
        both_nan = np.isnan(a) & np.isnan(b)
        equal = (a == b) | both_nan
        abs_err = np.where(equal, 0.0, np.abs(a - b))
        abs_err = np.where(np.isnan(abs_err), math.inf, abs_err)  # one side NaN, or inf against -inf
        rel_err = np.where(abs_err == 0, 0.0, abs_err / np.abs(a))
        rel_err = np.where(np.isnan(rel_err), math.inf, rel_err)
    ulp = _ulp_distance(ours, device) if _is_float(ours.dtype) else None
    if row.rule == "bits":
        mismatch = _bits(ours) != _bits(device)
    else:
        close = equal | (abs_err <= bound.atol + bound.rtol * np.abs(a)) | (abs_err <= bound.rtol * _scale(a))
        if bound.ulp is not None and ulp is not None:
            close |= ulp <= bound.ulp
        mismatch = ~close
    row.mismatches = int(np.count_nonzero(mismatch))
    row.max_abs = float(abs_err.max())
    row.max_rel = float(rel_err.max())
    row.max_ulp = None if ulp is None else float(ulp.max())
    score = np.where(mismatch, abs_err, -1.0) if row.mismatches else abs_err
    flat = int(np.argmax(score))
    index = np.unravel_index(flat, ours.shape) if ours.ndim else ()
    row.worst_index = tuple(int(i) for i in index)
    row.ours, row.device = _plain(ours[index]), _plain(device[index])
    if row.mismatches and row.note is None:
        row.note = _narrowing_note(ours, device)


def _compare_strings(row: LayerComparison, ours: np.ndarray, device: np.ndarray) -> None:
    """Fill ``row`` for a string output: elements equal as Python strings (bytes that are not UTF-8 held as
    surrogates on both sides), the first differing one shown (invalid UTF-8 bytes written as ``\\xff``).
    OpenVINO's Python API drops an element's trailing NUL bytes, so they are dropped from ours too before
    comparing."""
    if ours.dtype != object or device.dtype != object:
        row.note = f"the device gives {_type_name(device.dtype)}, ir-run {_type_name(ours.dtype)}"
        row.mismatches = max(row.size, 1)
        return
    mine = [item.rstrip("\0") for item in ours.ravel().tolist()]
    theirs = device.ravel().tolist()
    differ = [index for index, (a, b) in enumerate(zip(mine, theirs)) if a != b]
    row.mismatches = len(differ)
    if row.size == 0:
        return
    flat = differ[0] if differ else 0
    row.worst_index = tuple(int(i) for i in np.unravel_index(flat, ours.shape)) if ours.ndim else ()
    row.ours, row.device = (strings.encode(side).decode("utf-8", "backslashreplace")  # (invalid UTF-8 as \xff)
                            for side in (ours.ravel()[flat], theirs[flat]))


def _narrowing_note(ours: np.ndarray, device: np.ndarray) -> str | None:
    """Why a 64-bit integer output differs, when the device's values are ours narrowed to 32 bits (OpenVINO's
    CPU plugin computes i64/u64 in 32 bits: values outside the range saturate or wrap)."""
    if ours.dtype.kind not in "iu" or ours.dtype.itemsize != 8:
        return None
    narrow = np.iinfo(np.int32 if ours.dtype.kind == "i" else np.uint32)
    if np.array_equal(device, np.clip(ours, narrow.min, narrow.max)):
        return "the device holds this 64-bit output in 32 bits: values outside its range saturate"
    if np.array_equal(device, ours.astype(narrow.dtype).astype(ours.dtype)):
        return "the device holds this 64-bit output in 32 bits: values outside its range wrap"
    return None


def _scale(values: np.ndarray) -> float:
    """The largest finite magnitude of ``values`` (0.0 when none is finite)."""
    finite = np.abs(values[np.isfinite(values)])
    return float(finite.max()) if finite.size else 0.0


def _plain(value) -> Any:
    """A numpy scalar as a Python bool, int or float (ml_dtypes floats too)."""
    array = np.asarray(value)
    if array.dtype.kind in "biu":
        return array.item()
    return float(array.astype(np.float64))


def _bits(array: np.ndarray) -> np.ndarray:
    if array.dtype == np.bool_:
        return array
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[array.dtype.itemsize]
    return np.ascontiguousarray(array).view(unsigned)


def _ulp_distance(ours: np.ndarray, device: np.ndarray) -> np.ndarray:
    """How many representable values of the type lie between the two (0 for equal, NaN pairs count as equal;
    inf when one side is NaN)."""
    bits_a, bits_b = _bits(ours).astype(np.int64), _bits(device).astype(np.int64)
    width = ours.dtype.itemsize * 8
    sign = np.int64(1) << np.int64(width - 1) if width < 64 else None
    if sign is None:  # f64: reinterpret as signed, then order
        ordered_a = _ordered64(ours.view(np.int64))
        ordered_b = _ordered64(device.view(np.int64))
    else:
        ordered_a = np.where(bits_a & sign, -(bits_a & (sign - 1)), bits_a)
        ordered_b = np.where(bits_b & sign, -(bits_b & (sign - 1)), bits_b)
    distance = np.abs(ordered_a.astype(np.float64) - ordered_b.astype(np.float64))
    a, b = ours.astype(np.float64), device.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    return np.where(nan_a & nan_b, 0.0, np.where(nan_a | nan_b, math.inf, distance))


def _ordered64(signed: np.ndarray) -> np.ndarray:
    magnitude = signed & np.int64(0x7FFFFFFFFFFFFFFF)
    return np.where(signed < 0, -magnitude, magnitude)


def report_data(report: CrosscheckReport) -> dict[str, Any]:
    """The report as JSON-ready data (non-finite floats are left for the CLI's JSON writer to spell)."""
    first = report.first
    return {
        "device": report.device,
        "precision": report.precision,
        "openvino_version": report.openvino_version,
        "tolerance": {"atol": report.tolerance.atol, "rtol": report.tolerance.rtol, "ulp": report.tolerance.ulp},
        "agree": report.ok,
        "first_divergence": None if first is None else {
            "layer": first.layer.name, "id": first.layer.id, "type": first.layer.type_version,
            "line": first.layer.line, "port": first.port, "position": first.position},
        "counts": {status: report.count(status) for status in (AGREE, DIVERGES, EXPLAINED, INHERITED, UNOBSERVABLE,
                                                                   REPRESENTED)},
        "layers": [row_data(row) for row in report.layers],
        **_observation_data(report),
        **({} if report.reduction is None else {"reduction": _reduction_data(report.reduction)}),
    }


def _observation_data(report: CrosscheckReport) -> dict[str, Any]:
    """Where the device was observed, the proof of non-intrusion, and each diverging group run alone."""
    observation = report.observation
    if observation is None:
        return {}
    return {
        "mode": observation.mode,
        "runtime_groups": len(observation.groups),
        "non_intrusion": None if observation.proven is None else {
            "proven": observation.proven, "difference": observation.difference},
        "probes": [{"layer": name, "position": position, "changed": changed}
                   for (name, position), changed in observation.probes],
        "groups": [{"boundary": {"layer": verdict.boundary.name, "id": verdict.boundary.id,
                                 "type": verdict.boundary.type_version},
                    "layers": verdict.layers, "kernel": verdict.kernel, "primitive": verdict.primitive,
                    "runtime_precision": verdict.runtime_precision, "output_precisions": verdict.output_precisions,
                    "own": verdict.own, "alone_mismatches": verdict.alone, "size": verdict.size,
                    "upstream": verdict.upstream, "note": verdict.note} for verdict in report.groups],
    }


def _reduction_data(reduction) -> dict[str, Any]:
    found = reduction.directory is not None
    return {"directory": str(reduction.directory) if found else None, "layers": reduction.layers,
            "command": reduction.command, "probes": reduction.probes, "reason": reduction.reason,
            "first_divergence": None if not found else {
                "layer": reduction.report.first.layer.name, "type": reduction.report.first.layer.type_version,
                "mismatches": reduction.report.first.mismatches, "size": reduction.report.first.size}}


def row_data(row: LayerComparison) -> dict[str, Any]:
    return {"layer": row.layer.name, "id": row.layer.id, "type": row.layer.type_version, "line": row.layer.line,
            "port": row.port, "position": row.position, "source": row.source, "element_type": row.element_type,
            "shape": list(row.shape), "rule": row.rule, "status": row.status, "mismatches": row.mismatches,
            "size": row.size, "max_abs": row.max_abs, "max_rel": row.max_rel, "max_ulp": row.max_ulp,
            "worst_index": None if row.worst_index is None else list(row.worst_index), "ours": row.ours,
            "device": row.device, "note": row.note,
            "cause": None if row.cause is None else {"layer": row.cause.name, "id": row.cause.id,
                                                     "type": row.cause.type_version}}
