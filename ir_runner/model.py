"""The public entry points: ``load`` a model, ``validate`` one, ``run`` one, and the ``Model`` class."""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .errors import InputError, IRError
from .graph import Graph, build_graph
from .infer import Inference, LayerInference, infer_graph
from .ir.reader import read_ir
from .plan import DEFAULT_MEMORY_LIMIT, Plan, build_plan, check_memory
from .runtime import TensorInfo, bind_feeds, bind_outputs, execute
from .types import DYNAMIC, DYNAMIC_SHAPE, PartialShape, TensorSpec, element_type_of

if TYPE_CHECKING:
    from .report import Finding

Source = str | os.PathLike | bytes | bytearray
_PLAN_CACHE_SIZE = 64


class Model:
    """A loaded, checked model, ready to run. Safe to run from several threads at once."""

    def __init__(self, graph: Graph, inference: Inference, *, strict: bool, memory_limit: int | None) -> None:
        self.graph = graph
        self.inference = inference
        self.strict = strict
        self.memory_limit = memory_limit
        self.inputs: tuple[TensorInfo, ...] = input_infos(graph, inference)
        self.outputs: tuple[TensorInfo, ...] = output_infos(graph, inference)
        self._static = all(info.partial_shape.is_static and info.dtype is not None for info in self.inputs)
        if self._static:
            check_memory(inference, memory_limit)  # refuse now; the plan itself is built on the first run
        self._static_plan: Plan | None = None
        self._plans: dict[tuple, Plan] = {}
        self._last_inference: tuple[tuple[TensorSpec, ...], Inference] | None = None  # see inference_for
        self._lock = threading.Lock()
        self._fast_inputs = tuple((i.name, i.dtype, i.shape) for i in self.inputs)
        # u1 inputs need a value check that the fast path skips
        self._fast_bind_ok = self._static and all(i.element_type != "u1" for i in self.inputs)
        self._output_names = tuple(o.name for o in self.outputs)

    @property
    def name(self) -> str:
        return self.graph.net.name

    def run(self, feeds: Mapping[str, object] | Sequence | None = None, /, *, cast: str | None = None,
            out: Mapping[str, np.ndarray | None] | Sequence[np.ndarray | None] | None = None,
            **named: object) -> dict[str, np.ndarray]:
        """Run on ``feeds`` (by name, or a sequence in ``inputs`` order); outputs by name, in ``outputs`` order.

        Feeds must have the inputs' element types unless ``cast`` ('safe', 'same_kind', 'unsafe'; None or
        'no' allows none; see ir_runner.casting) allows a conversion, which is reported as a ``CastWarning``
        at the caller's line. ``out`` (by output name, or a
        sequence in ``outputs`` order; None entries allowed) gives preallocated arrays to write the
        outputs into, each of exactly the output's dtype and shape, C-contiguous, writeable and sharing
        no memory with a feed or another ``out`` array; the result then holds those same arrays, reused
        as given on every call (the caller owns them). Inputs named ``cast`` or ``out`` are fed through
        the mapping, not as keywords.
        """
        arrays = self._fast_bind(feeds) if self._fast_bind_ok and not named else None
        if arrays is None:
            arrays = bind_feeds(self.inputs, feeds, named, cast)
        plan = self._static_plan or self.plan_for(arrays)
        if out is None:
            return dict(zip(self._output_names, execute(plan, arrays)))
        targets = bind_outputs(self.inputs, self.outputs, plan, out, arrays)
        return dict(zip(self._output_names, execute(plan, arrays, out=targets)))

    def _fast_bind(self, feeds) -> list[np.ndarray] | None:
        """The feeds in input order when they are exactly right (names or positions, ndarray, dtype, shape),
        else None (the general binder then checks them and explains what is wrong)."""
        if type(feeds) is dict:
            if len(feeds) != len(self._fast_inputs):
                return None
            arrays = []
            for name, dtype, shape in self._fast_inputs:
                array = feeds.get(name)
                if type(array) is not np.ndarray or array.dtype != dtype or array.shape != shape:
                    return None
                arrays.append(array)
            return arrays
        if type(feeds) in (list, tuple) and len(feeds) == len(self._fast_inputs):
            for array, (_, dtype, shape) in zip(feeds, self._fast_inputs):
                if type(array) is not np.ndarray or array.dtype != dtype or array.shape != shape:
                    return None
            return list(feeds)
        return None

    def __call__(self, *arrays: object, cast: str | None = None,
                 out: Mapping[str, np.ndarray | None] | Sequence[np.ndarray | None] | None = None,
                 **named: object) -> dict[str, np.ndarray]:
        """``model(a, b, c)`` or ``model(x=a)``: the same as :meth:`run` (``cast=`` and ``out=`` too)."""
        feeds = list(arrays) if arrays else None
        if out is None:  # one keyword less to pass on the common path
            return self.run(feeds, cast=cast, **named)
        return self.run(feeds, cast=cast, out=out, **named)

    def plan_for(self, arrays: Sequence[np.ndarray]) -> Plan:
        """The plan for these checked input arrays: for a static model, one plan built on the first run;
        else one inferred for the arrays' shapes (and, for dynamic element types, dtypes), cached per
        signature.

        Shapes that do not fit the model (e.g. two dynamic dims that must be equal) raise InputError.
        """
        if self._static:
            if self._static_plan is None:
                with self._lock, _gc_paused():
                    if self._static_plan is None:
                        # check_memory ran at load, for these very shapes
                        self._static_plan = build_plan(self.inference, checked=True)
            return self._static_plan
        signature = tuple((a.dtype, a.shape) for a in arrays)
        plan = self._plans.get(signature)
        if plan is not None:
            return plan
        inference = self.inference_for([fed_spec(info, array) for info, array in zip(self.inputs, arrays)])
        with _gc_paused():
            plan = build_plan(inference, self.memory_limit)
        with self._lock:
            if len(self._plans) >= _PLAN_CACHE_SIZE:
                self._plans.clear()
            self._plans[signature] = plan
        return plan

    def inference_for(self, specs: Sequence[TensorSpec], *,
                      context: str = "the inputs' shapes do not fit the model") -> Inference:
        """The graph inferred with these input specs (in ``inputs`` order), declared ports unchecked: the
        model's own inference when they are its inputs' specs.

        Specs the graph cannot take raise InputError ``'<context>: <what is wrong>'`` with its layer and port
        (an InputError subclass, e.g. a strict-mode IndexOutOfRangeError, keeps its class).
        """
        if all(spec.element_type == info.element_type and spec.shape == info.partial_shape
               for spec, info in zip(specs, self.inputs)):
            return self.inference
        key = tuple(specs)
        last = self._last_inference  # the CLI asks twice for generated inputs: their value ranges, then the plan
        if last is not None and last[0] == key:
            return last[1]
        input_specs = {layer.id: spec for layer, spec in zip(self.graph.parameters, specs)}
        with _gc_paused():
            inference = infer_graph(self.graph, strict=self.strict, input_specs=input_specs, check_declared=False)
        try:
            inference.raise_first()
        except IRError as error:
            kind = type(error) if isinstance(error, InputError) else InputError
            raise kind(f"{context}: {error.detail}", layer=error.layer, port=error.port, hint=error.hint) from None
        self._last_inference = (key, inference)
        return inference

    def __repr__(self) -> str:
        ins = ", ".join(str(i) for i in self.inputs)
        outs = ", ".join(str(o) for o in self.outputs)
        return f"<Model {self.name!r} ({ins}) -> ({outs})>"


def fed_spec(info: TensorInfo, array: np.ndarray) -> TensorSpec:
    """The spec of ``array`` fed to input ``info``: its shape, and the input's element type (the array's when
    the input's is dynamic)."""
    element_type = info.element_type if info.dtype is not None else element_type_of(array.dtype)
    return TensorSpec(element_type, PartialShape.of(array.shape))


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


def load(
    source: Source,
    weights: Source | memoryview | None = None,
    *,
    strict: bool = False,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> Model:
    """Read, check and prepare a model; raise one IRError (subclass) for anything wrong with it.

    ``source`` is a path to the .xml, or the XML itself as bytes. ``weights`` is a path or bytes; for a
    path it defaults to the XML's stem + ``.bin``. ``strict=True`` makes index values outside the
    operations' spec ranges errors. ``memory_limit`` (bytes, None for no limit) caps the tensors a run
    may allocate; models above it are refused before anything is allocated.
    """
    with _gc_paused():
        graph = build_graph(read_ir(source, weights))
        inference = infer_graph(graph, strict=strict)
        inference.raise_first()
        return Model(graph, inference, strict=strict, memory_limit=memory_limit)


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextlib.contextmanager
def _gc_paused():
    """Pause the cyclic garbage collector while building many small records (large IRs load 2x faster).

    Nested and concurrent uses share one count: the first in records whether GC was on, the last out
    restores it, so concurrent loads can never leave it off."""
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


def run(source: Source, feeds=None, weights: Source | None = None, *, cast: str | None = None,
        **options) -> dict[str, np.ndarray]:
    """Load and run in one call: ``ir_runner.run('model.xml', {'x': x})``; ``cast`` as in :meth:`Model.run`,
    the other options as in :func:`load`."""
    return load(source, weights, **options).run(feeds, cast=cast)


class ValidationReport:
    """Every finding for a model: errors, warnings (constant indices outside the spec's range), and the
    declared-vs-inferred table of all ports."""

    def __init__(self, source: str, errors: list[IRError] | None = None,
                 layers: list[LayerInference] | None = None, warnings: list[Finding] | None = None,
                 unsupported: list[LayerInference] | None = None, unchecked: set[str] | None = None) -> None:
        self.source = source
        self.errors: list[IRError] = errors if errors is not None else []
        self.layers: list[LayerInference] = layers if layers is not None else []
        self.warnings: list[Finding] = warnings if warnings is not None else []
        self.unsupported: list[LayerInference] = unsupported if unsupported is not None else []
        # ids of layers whose outputs could not be inferred (unsupported, or needing missing weights)
        self.unchecked: set[str] = unchecked if unchecked is not None else {i.layer.id for i in self.unsupported}

    def __repr__(self) -> str:
        return (f"<ValidationReport {self.source!r}: {len(self.errors)} error(s), {len(self.warnings)} warning(s),"
                f" {len(self.layers)} layer(s)>")

    @property
    def ok(self) -> bool:
        """No problem was found in what was checked (layers of unsupported operations are not checked)."""
        return not self.errors

    @property
    def complete(self) -> bool:
        """Every layer was checked: none uses an operation ir-run does not implement yet."""
        return not self.unsupported

    @property
    def valid(self) -> bool:
        """Checked completely, and no problem found."""
        return self.ok and self.complete

    def __str__(self) -> str:
        from .report import format_validation

        return format_validation(self)


def validate(source: Source, weights: Source | memoryview | None = None, *, strict: bool = False) -> ValidationReport:
    """Check a model completely and return every finding, as ``ir-run validate`` does (does not stop at the
    first, does not raise for problems of the model; only an unreadable file or broken graph ends the
    report early)."""
    from .report import analyse, not_inferred

    analysis = analyse(source, weights, strict=strict)
    return ValidationReport(analysis.source, analysis.errors, analysis.layers, analysis.findings, analysis.unsupported,
                            not_inferred(analysis))
