"""The public entry points: ``load`` a model, ``validate`` one, ``run`` one, and the ``Model`` class."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import threading
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from . import lengths
from .errors import InputError, IRError, LayerRef, ResourceLimitError, UnsupportedError
from .graph import Graph, read_graph
from .infer import Inference, infer_graph
from .plan import DEFAULT_MEMORY_LIMIT, Footprint, Plan, PlanCache, Step, build_plan, check_memory
from .record import Record
from .runtime import TensorInfo, bind_feeds, bind_outputs, execute
from .signature import input_infos, output_infos
from .state import (
    Session,
    State,
    Variable,
    computed_specs,
    fed_specs,
    find_variables,
    initial_values,
    stored_sources,
)
from .subgraph import body_provider, infer_for_inputs
from .types import PartialShape, TensorSpec, element_type_of

Source = str | os.PathLike | bytes | bytearray


class Model:
    """A loaded, checked model, ready to run. Safe to run from several threads at once."""

    def __init__(self, graph: Graph, inference: Inference, *, strict: bool, memory_limit: int | None,
                 unsupported: IRError | None = None) -> None:
        self.graph = graph
        self.unsupported = unsupported  # set by load(allow_unsupported=True): what running would raise
        self.inference = inference
        self.strict = strict
        self.memory_limit = memory_limit
        self.inputs: tuple[TensorInfo, ...] = input_infos(graph, inference)
        self.outputs: tuple[TensorInfo, ...] = output_infos(graph, inference)
        self._value_inputs = inference.value_inputs
        self.variables: tuple[Variable, ...] = find_variables(inference) if unsupported is None else ()
        # the variables whose values decide shapes (a MoE router's choice computed from the KV cache), by position
        self._value_variables = tuple(i for i, v in enumerate(self.variables)
                                      if inference.value_readers.intersection(v.readers))
        static_inputs = unsupported is None and all(info.partial_shape.is_static and info.dtype is not None
                                                    for info in self.inputs)
        self._static = static_inputs and not self._value_inputs and not self.variables  # one plan for every run
        if self._static:
            check_memory(inference, memory_limit)  # refuse now; the plan itself is built on the first run
        self._static_plan: Plan | None = None
        self._plans = PlanCache()
        self._kernels: dict[int, tuple] = {}  # see build_plan's kernels
        self._last_inference: tuple[tuple[TensorSpec, ...], Inference] | None = None  # see inference_for
        self._families: list[lengths.Family] = []  # generic plans of decoding steps (see plan_for)
        self._callers = threading.local()  # per thread: the signature of its last run without a state (plan_for)
        self._lock = threading.Lock()
        # per input: name, dtype, and the static shape (a tuple) or the partial shape the feed must fit
        self._fast_inputs = tuple((i.name, i.dtype, i.shape if i.partial_shape.is_static else i.partial_shape)
                                  for i in self.inputs)
        # u1..u6 and nf4 inputs need a value check that the fast path skips
        self._fast_bind_ok = unsupported is None and all(
            i.dtype is not None and i.element_type.code_limit is None and i.element_type.kind != "string"
            for i in self.inputs)  # a string input's object array must be checked element by element
        self._output_names = tuple(o.name for o in self.outputs)
        self.source: Source | None = None  # what load() read: a path or the XML bytes (for crosscheck)
        self.weights_source: Source | memoryview | None = None

    @property
    def name(self) -> str:
        return self.graph.net.name

    def new_state(self) -> State:
        """A new state of this model's variables, all unset (see :class:`ir_runner.state.State`)."""
        return State(self)

    def run(self, feeds: Mapping[str, object] | Sequence | None = None, /, *, cast: str | None = None,
            out: Mapping[str, np.ndarray | None] | Sequence[np.ndarray | None] | None = None,
            state: State | None = None, **named: object) -> dict[str, np.ndarray]:
        """Run on ``feeds`` (by name, or a sequence in ``inputs`` order); outputs by name, in ``outputs`` order.

        Feeds must have the inputs' element types unless ``cast`` ('safe', 'same_kind', 'unsafe'; None or
        'no' allows none; see ir_runner.casting) allows a conversion, which is reported as a ``CastWarning``
        at the caller's line. ``out`` (by output name, or a
        sequence in ``outputs`` order; None entries allowed) gives preallocated arrays to write the
        outputs into, each of exactly the output's dtype and shape, C-contiguous, writeable and sharing
        no memory with a feed or another ``out`` array; the result then holds those same arrays, reused
        as given on every call (the caller owns them). Inputs named ``cast``, ``out`` or ``state`` are fed
        through the mapping, not as keywords.

        A stateful model (``variables`` not empty) reads its variables from ``state`` and stores their new
        values in it; without one, the run starts from the initial values and keeps nothing (unlike
        OpenVINO's ``compiled_model(inputs)``, which keeps its state between calls; see docs/stateful.md).
        """
        arrays = self._fast_bind(feeds) if self._fast_bind_ok and not named else None
        if arrays is None:
            arrays = bind_feeds(self.inputs, feeds, named, cast)
        if self.variables or state is not None:
            with Session(self, state) as session:
                if out is None:
                    return dict(zip(self._output_names, session.finish(self._run_stateful(arrays, session))))
                plan = self.plan_for(arrays, session.current, state=session.state)
                fed = session.feeds(arrays)
                targets = [*bind_outputs(self.inputs, self.outputs, plan, out, fed),
                           *[None] * (len(plan.output_slots) - len(self.outputs))]
                return dict(zip(self._output_names, session.finish(execute(plan, fed, out=targets))))
        if out is None:
            if self._static_plan is not None:
                return dict(zip(self._output_names, execute(self._static_plan, arrays)))
            return dict(zip(self._output_names, self._execute(
                self.plan_for(arrays, generic=True), arrays, lambda: self.plan_for(arrays))))
        plan = self._static_plan or self.plan_for(arrays)
        targets = bind_outputs(self.inputs, self.outputs, plan, out, arrays)
        return dict(zip(self._output_names, execute(plan, arrays, out=targets)))

    def _run_stateful(self, arrays: list[np.ndarray], session: Session) -> list[np.ndarray]:
        """A run on a state: on the generic plan of its family when there is one (see plan_for)."""
        return self._execute(self.plan_for(arrays, session.current, generic=True, state=session.state),
                             session.feeds(arrays), lambda: self.plan_for(arrays, session.current, state=session.state))

    def _execute(self, plan: Plan, fed: list[np.ndarray], exact: Callable[[], Plan]) -> list[np.ndarray]:
        """Run ``plan`` on ``fed``; when it is a generic plan that fails, drop its family and run the plan
        ``exact()`` gives, which gives the error the model's inference gives, if any."""
        if not plan.generic:
            return execute(plan, fed)
        try:
            return execute(plan, fed)
        except IRError:
            with self._lock:  # (a family whose pins do not hold would fail every run: made again when it fits)
                self._families = [family for family in self._families if family.plan is not plan]
        return execute(exact(), fed)

    def bind(self, feeds: Mapping[str, object] | Sequence | None = None, /, *, cast: str | None = None,
             **named: object) -> list[np.ndarray]:
        """The feeds checked as :meth:`run` checks them (names, element types, shapes, ``cast``), as arrays
        in ``inputs`` order; raise InputError for anything that does not fit."""
        return bind_feeds(self.inputs, feeds, named, cast)

    def trace(self, feeds: Mapping[str, object] | Sequence | None = None, /, *, cast: str | None = None,
              callback: Callable[[LayerTrace], None] | None = None, state: State | None = None,
              **named: object) -> Trace:
        """Run on ``feeds`` (as :meth:`run`) and observe every layer's output, in execution order.

        Each Parameter, Const and computed layer gives one :class:`LayerTrace` per output port: its value
        and the seconds its kernel took. Layers the plan computed once at plan time (all inputs constant)
        are reported too, with their value and ``source='folded'``, 0 seconds. Result layers are not
        reported (their value is the producer's), nor an output of several that no layer reads when the plan
        does not compute it (MaxPool's indices). With ``callback``, each record is passed to it as soon as
        it is known and not kept (``Trace.layers`` is then empty): for large models, whose intermediates
        would not fit in memory together. The values are the run's own arrays: do not write into them.
        A stateful model's run reads and updates ``state`` as :meth:`run` does; the variables' values read
        from it are reported with ``source='state'``.
        """
        with Session(self, state) if self.variables or state is not None else contextlib.nullcontext() as session:
            return self._trace(bind_feeds(self.inputs, feeds, named, cast), callback, session)

    def _trace(self, arrays: list[np.ndarray], callback: Callable[[LayerTrace], None] | None,
               session: Session | None) -> Trace:
        plan = (self.plan_for(arrays, session.current, state=session.state) if session is not None
                else self.plan_for(arrays))
        if session is not None:
            arrays = session.feeds(arrays)
        kept: list[LayerTrace] = []
        emit = callback if callback is not None else kept.append
        schedule = _schedule(self, plan, arrays)  # every reported layer in order; None where a step computes it
        position = 0

        def observe(step: Step, value: np.ndarray, seconds: float) -> None:
            nonlocal position
            while schedule[position][1] is not None:  # what is known before the run, up to this step
                emit(schedule[position][1])
                position += 1
            position += 1
            values = value if step.outputs is not None else (value,)  # a step of several outputs gives a tuple
            for port, output in enumerate(values):
                if output is None:  # an output no layer reads, which the plan did not compute (see plan.py)
                    continue
                emit(LayerTrace(step.layer, port, _port_id(self.graph, step.layer.id, port), output,
                                seconds if port == 0 else 0.0, "computed"))

        values = execute(plan, arrays, observe)
        for _, record in schedule[position:]:
            emit(record)
        if session is not None:
            values = session.finish(values)
        return Trace(kept, dict(zip(self._output_names, values)))

    def _fast_bind(self, feeds) -> list[np.ndarray] | None:
        """The feeds in input order when they are exactly right (names or positions, ndarray, dtype, shape),
        else None (the general binder then checks them and explains what is wrong)."""
        if type(feeds) is dict:
            if len(feeds) != len(self._fast_inputs):
                return None
            arrays = []
            for name, dtype, shape in self._fast_inputs:
                array = feeds.get(name)
                if not _fits(array, dtype, shape):
                    return None
                arrays.append(array)
            return arrays
        if type(feeds) in (list, tuple) and len(feeds) == len(self._fast_inputs):
            for array, (_, dtype, shape) in zip(feeds, self._fast_inputs):
                if not _fits(array, dtype, shape):
                    return None
            return list(feeds)
        return None

    def __call__(self, *arrays: object, cast: str | None = None,
                 out: Mapping[str, np.ndarray | None] | Sequence[np.ndarray | None] | None = None,
                 state: State | None = None, **named: object) -> dict[str, np.ndarray]:
        """``model(a, b, c)`` or ``model(x=a)``: the same as :meth:`run` (``cast=``, ``out=`` and ``state=`` too)."""
        feeds = list(arrays) if arrays else None
        if out is None and state is None:  # fewer keywords to pass on the common path
            return self.run(feeds, cast=cast, **named)
        return self.run(feeds, cast=cast, out=out, state=state, **named)

    def plan_for(self, arrays: Sequence[np.ndarray], variables: Sequence[np.ndarray | None] | None = None, *,
                 generic: bool = False, state: State | None = None) -> Plan:
        """The plan for these checked input arrays: for a static model, one plan built on the first run;
        else one inferred for the arrays' shapes (and, for dynamic element types, dtypes; and the values of
        the inputs that decide shapes or kernel parameters, such as an axis fed at run time), cached per
        signature. For a stateful model, ``variables`` are the values its run reads (a ``Session``'s
        ``current``; None: the initial state): their shapes are part of the signature (and the values of
        those that decide shapes, as an input's), and the plan takes the set ones as inputs after ``arrays``
        and returns the written ones after the outputs.

        Shapes that do not fit the model (e.g. two dynamic dims that must be equal) raise InputError.

        ``generic``: the plan may be the generic plan of a family of signatures (a decoder's steps, see
        :mod:`ir_runner.lengths`; ``plan.generic``), whose output shapes are known only when it runs and whose
        errors are not the model's: a run that fails on it is planned again without. A family is learned from
        two consecutive runs of one sequence, whatever other sequences do meanwhile: ``state``, the State the
        run advances, keeps the signature of its last run; without a state (a model whose KV cache is inputs
        and outputs, ``--disable-stateful``), a ``generic`` call's thread keeps it (each thread is a caller).
        """
        if self.unsupported is not None:  # (a new error each time: re-raising one would keep every caller's frames)
            error = self.unsupported
            raise type(error)(error.detail, layer=error.layer, port=error.port, hint=error.hint)
        if self._static:
            if self._static_plan is None:
                with self._lock, _gc_paused():
                    if self._static_plan is None:
                        # check_memory ran at load, for these very shapes
                        self._static_plan = build_plan(self.inference, checked=True, strict=self.strict)
            return self._static_plan
        signature = tuple((a.dtype, a.shape) for a in arrays)
        if self.variables:
            if variables is None:
                variables = initial_values(self)
            signature += tuple(None if v is None else (v.dtype, v.shape) for v in variables)
        shapes, previous = signature, None
        if state is not None:
            previous, state._signature = state._signature, shapes
        elif generic:
            previous, self._callers.signature = getattr(self._callers, "signature", None), shapes
        if generic and self._families:
            found = self._plans.get(signature) or lengths.find(self._families, signature)
            if found is not None:
                return found
        values = None
        if self._value_inputs:
            values = {self.graph.parameters[i].id: arrays[i] for i in self._value_inputs}
            signature += tuple(arrays[i].tobytes() for i in self._value_inputs)
        if self._value_variables:  # their readers' values count as known, as a deciding input's
            values = {**(values or {}), **{reader: variables[i] for i in self._value_variables
                                           if variables[i] is not None for reader in self.variables[i].readers}}
            signature += tuple(None if variables[i] is None else variables[i].tobytes() for i in self._value_variables)
        plan = self._plans.get(signature)
        if plan is not None:
            return plan
        what = "shapes and values" if values else "shapes"  # (values: of the inputs that decide shapes)
        specs = [info.spec_for(array) for info, array in zip(self.inputs, arrays)]
        context = f"the inputs' {what} do not fit the model"
        fed = fed_specs(self, variables) if self.variables else {}
        fed_readers = tuple(fed)  # (before the computed readers join: the plan feeds these)
        computed = bool(self.variables) and len(fed) < sum(len(v.readers) for v in self.variables)
        earlier = self._last_inference[1] if self._last_inference is not None else None
        inference = self.inference_for(specs, values=values, context=context, fed=fed, decide=not computed)
        if computed:
            # a reader the run computes outputs its init input's spec (and value), which only the first
            # inference knows
            fed.update(computed_specs(self, inference, fed))
            if self._value_variables:
                values.update((reader, value) for i in self._value_variables if variables[i] is None
                              for reader in self.variables[i].readers
                              if (value := inference.folder.input_value(reader, 0)) is not None)
            inference = self.inference_for(specs, values=values, context=context, fed=fed)
        if len(self._kernels) > 4 * len(self.graph.layers):
            self._kernels = {}
        footprint = check_memory(inference, self.memory_limit)  # (kept: a family's memory check reads it)
        with _gc_paused():
            plan = build_plan(inference, checked=True, fed=fed_readers,
                              stored=stored_sources(self), kernels=self._kernels, strict=self.strict)
        self._plans.put(signature, plan)
        if not computed and not self.strict and previous is not None:
            self._learn_family(previous, shapes, specs, fed, inference, earlier, footprint)
        return plan

    def _learn_family(self, previous: lengths.Signature, signature: lengths.Signature, specs: list[TensorSpec],
                      fed: dict[str, TensorSpec], exact: Inference, earlier: Inference | None,
                      footprint: Footprint | None) -> None:
        """Make the family of ``signature`` (see :mod:`ir_runner.lengths`) when it differs from ``previous``
        only in dims that grow together and its tensors fit the memory limit (``footprint``: ``exact``'s, from
        :func:`check_memory`); a model its generic inference refuses gets none. ``earlier``: an exact inference
        of another signature, for the pins."""
        varying = lengths.varying_dims(previous, signature)
        if varying is None or not lengths.fits_memory(footprint, self.memory_limit):
            return
        unknown = {}  # per tensor (inputs, then variables): the axes that vary
        for tensor, axis in varying:
            unknown.setdefault(tensor, set()).add(axis)
        given = {layer.id: lengths.with_unknown_dims(spec, unknown.get(i, ())) for i, (layer, spec)
                 in enumerate(zip(self.graph.parameters, specs))}
        count = len(self.inputs)
        for i, variable in enumerate(self.variables):
            for reader in variable.readers:
                given[reader] = lengths.with_unknown_dims(fed[reader], unknown.get(count + i, ()))
        try:
            with _gc_paused():
                # (reusing the exact inference: the layers no varying dim reaches, and their folded weights and
                # kernels, are shared with the exact plans instead of copied)
                generic = infer_for_inputs(self.graph, False, given, None, decide=False,
                                           memory_limit=self.memory_limit, reuse=exact)
                pinned = lengths.pins(generic, exact, earlier)
                if pinned:
                    generic = infer_for_inputs(self.graph, False, given, None, decide=False,
                                               memory_limit=self.memory_limit, reuse=exact, pinned=pinned)
                plan = lengths.generic_plan(generic, exact, tuple(fed), stored_sources(self), self._kernels)
        except IRError:
            return
        with self._lock:
            if len(self._families) >= lengths.MAX_FAMILIES:
                self._families = []
            self._families = [*self._families, lengths.Family(signature, varying, plan)]

    def inference_for(self, specs: Sequence[TensorSpec], *, values: dict[str, np.ndarray] | None = None,
                      context: str = "the inputs' shapes do not fit the model",
                      fed: Mapping[str, TensorSpec] | None = None, decide: bool = True) -> Inference:
        """The graph inferred with these input specs (in ``inputs`` order) and, for the Parameters that decide
        shapes, these values (by layer id), declared ports unchecked: the model's own inference when they
        are its inputs' specs and no value is given. ``fed``: the output specs of other layers, by layer id
        (a stateful model's readers of variables; with a value in ``values``, the reader's output counts as
        known, as a Parameter's). ``decide=False``: shapes that only values decide may stay unknown (a first
        inference that only learns specs; see :func:`infer_for_inputs`).

        Specs the graph cannot take raise InputError ``'<context>: <what is wrong>'`` with its layer and port
        (an InputError subclass, e.g. a strict-mode IndexOutOfRangeError, keeps its class).
        """
        if not values and not fed and all(spec.element_type == info.element_type and spec.shape == info.partial_shape
                                          for spec, info in zip(specs, self.inputs)):
            return self.inference
        key = (tuple(specs), tuple((k, v.dtype.str, v.tobytes()) for k, v in (values or {}).items()),
               tuple((fed or {}).items()), decide)
        last = self._last_inference  # the CLI asks twice for generated inputs: their value ranges, then the plan
        if last is not None and last[0] == key:
            return last[1]
        input_specs = {layer.id: spec for layer, spec in zip(self.graph.parameters, specs)}
        input_specs.update(fed or {})
        try:
            with _gc_paused():
                # the last inference's layers are reused where no spec differs (a decoding step changes few)
                inference = infer_for_inputs(self.graph, self.strict, input_specs, values, decide=decide,
                                             memory_limit=self.memory_limit,
                                             reuse=last[1] if last is not None else None)
        except IRError as error:
            kind = type(error) if isinstance(error, (InputError, ResourceLimitError)) else InputError
            raise kind(f"{context}: {error.detail}", layer=error.layer, port=error.port, hint=error.hint) from None
        self._last_inference = (key, inference)
        return inference

    def __repr__(self) -> str:
        ins = ", ".join(str(i) for i in self.inputs)
        outs = ", ".join(str(o) for o in self.outputs)
        return f"<Model {self.name!r} ({ins}) -> ({outs})>"


def _fits(array: object, dtype: np.dtype, shape: tuple[int, ...] | PartialShape) -> bool:
    """Whether ``array`` is an ndarray of exactly ``dtype`` whose shape is ``shape`` (or fits it)."""
    return type(array) is np.ndarray and array.dtype == dtype and (
        array.shape == shape if type(shape) is tuple else shape.accepts(array.shape))


class LayerTrace(Record):
    """One output of one layer in a traced run (see :meth:`Model.trace`).

    ``layer`` names it (name, type-version, id, XML line); ``position`` is the output's position among the
    layer's outputs and ``port`` its port id in the XML; ``source`` is 'input' (a Parameter), 'constant'
    (a Const), 'folded' (computed once when the run was planned, since all its inputs are constant),
    'state' (a variable's value, read from the run's state) or 'computed'; ``seconds`` is the time its
    kernel took (0 unless computed).
    """

    __slots__ = ("layer", "position", "port", "value", "seconds", "source")

    def __init__(self, layer: LayerRef, position: int, port: str, value: np.ndarray, seconds: float,
                 source: str) -> None:
        self.layer = layer
        self.position = position
        self.port = port
        self.value = value
        self.seconds = seconds
        self.source = source

    def __repr__(self) -> str:
        """One line: where, how it was obtained, and the value's type, shape and statistics (never the values,
        which may be millions)."""
        timing = f" in {self.seconds * 1e3:.3g} ms" if self.source == "computed" else ""
        return (f"<LayerTrace {self.layer}, output {self.position} (port {self.port}), {self.source}{timing}:"
                f" {value_summary(self.value)}>")


def value_summary(value: np.ndarray) -> str:
    """``f32[2,3] min -1.5 max 4 mean 0.75`` (NaNs and infinities counted; booleans: how many are true; one
    element: ``i64[] value 3``)."""
    value = np.asarray(value)
    et = element_type_of(value.dtype)
    text = f"{et.name if et is not None else value.dtype}[{','.join(map(str, value.shape))}]"
    if value.size == 0 or et is None or et.kind not in ("float", "int", "uint", "bool"):
        return text
    if value.size == 1:
        return f"{text} value {value.reshape(-1)[0].item()!r}"
    if et.kind == "bool":
        return f"{text} {int(np.count_nonzero(value))} true"
    if et.kind != "float":
        return f"{text} min {value.min()} max {value.max()} mean {value.mean(dtype=np.float64):.6g}"
    wide = value.astype(np.float64)
    finite = wide[np.isfinite(wide)]
    text += (f" min {finite.min():.6g} max {finite.max():.6g} mean {finite.mean():.6g}" if finite.size
             else " no finite value")
    nan, inf = int(np.isnan(wide).sum()), int(np.isinf(wide).sum())
    return text + (f" nan {nan}" if nan else "") + (f" inf {inf}" if inf else "")


class Trace(Record):
    """What :meth:`Model.trace` saw: ``layers`` (LayerTrace records in execution order, empty when a
    callback took them) and ``outputs`` (by output name, as :meth:`Model.run` returns them)."""

    __slots__ = ("layers", "outputs")

    def __init__(self, layers: list[LayerTrace], outputs: dict[str, np.ndarray]) -> None:
        self.layers = layers
        self.outputs = outputs

    def __repr__(self) -> str:
        outputs = ", ".join(f"{name}: {value_summary(value)}" for name, value in self.outputs.items())
        return f"<Trace of {len(self.layers)} layer outputs; outputs {outputs}>"


def _schedule(model: Model, plan: Plan, arrays: Sequence[np.ndarray]) -> list[tuple[str, LayerTrace | None]]:
    """(layer id, record) for every layer a trace reports, in execution order; the record is None for the
    layers a step of ``plan`` computes, which are reported when they run.

    Slots are numbered as ``plan.build_plan`` numbers them: one per output of each non-Result layer, in
    ``graph.order``; the plan's own steps are checked against that numbering.
    """
    graph, inference = model.graph, model.inference
    computed = {step.layer.id: step.output for step in plan.steps}
    constants = dict(plan.constants)
    fed = dict(zip(plan.input_slots, arrays))
    kinds = {"Parameter": "input", "Const": "constant"}
    schedule: list[tuple[str, LayerTrace | None]] = []
    slot = 0
    for layer_id in graph.order:
        info = inference.layers[layer_id]
        if info.op is not None and info.op.type == "Result":
            continue
        if layer_id in computed:
            if computed[layer_id] != slot:
                raise AssertionError(f"the plan numbers the slots of {info.ref} differently from Model.trace")
            schedule.append((layer_id, None))
            slot += len(info.outputs)
            continue
        kind = info.op.type if info.op is not None else None
        source = kinds.get(kind, "state" if slot in fed else "folded")
        for position in range(len(info.outputs)):
            value = constants.get(slot) if source in ("constant", "folded") else fed.get(slot)
            if value is None:
                raise AssertionError(f"the plan holds no value for {info.ref} where Model.trace expects one")
            schedule.append((layer_id, LayerTrace(info.ref, position, _port_id(graph, layer_id, position), value,
                                                  0.0, source)))
            slot += 1
    return schedule


def _port_id(graph: Graph, layer_id: str, position: int) -> str:
    ports = graph.layers[layer_id].outputs
    return ports[position].id if position < len(ports) else str(position)


def load(
    source: Source,
    weights: Source | memoryview | None = None,
    *,
    strict: bool = False,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    allow_unsupported: bool = False,
) -> Model:
    """Read, check and prepare a model; raise one IRError (subclass) for anything wrong with it.

    ``source`` is a path to the .xml, or the XML itself as bytes. ``weights`` is a path or bytes; for a
    path it defaults to the XML's stem + ``.bin``. ``strict=True`` makes index values outside the
    operations' spec ranges errors. ``memory_limit`` (bytes, None for no limit) caps the tensors a run
    may allocate; models above it are refused before anything is allocated. ``allow_unsupported=True``
    loads a model that uses operations ir-run does not implement, when nothing else is wrong with it, for
    its inputs and outputs (to make data for it); running it raises the UnsupportedError load would.
    """
    with _gc_paused():
        graph = read_graph(source, weights)
        inference = infer_graph(graph, strict=strict,
                                body_provider=functools.partial(body_provider, memory_limit=memory_limit))
        unsupported = None
        try:
            inference.raise_first()
        except UnsupportedError as error:
            if not allow_unsupported or not any(info.op is None for info in inference.layers.values()):
                raise
            from .report import checked_errors

            remaining = checked_errors(graph, inference)
            if remaining:
                raise remaining[0] from None
            unsupported = error
        model = Model(graph, inference, strict=strict, memory_limit=memory_limit, unsupported=unsupported)
        model.source, model.weights_source = source, weights
        return model


def input_names(source: Source) -> list[str]:
    """Every name a model's inputs go by (tensor names, then layer names), read from the XML alone, without
    inference (for shell completion); an IRError when it cannot be read."""
    from .ir.reader import read_ir

    names: list[str] = []
    for layer in read_ir(source).layers:
        if layer.type.lower() == "parameter":
            for name in (*(layer.outputs[0].names if layer.outputs else ()), layer.name):
                if name not in names:
                    names.append(name)
    return names


def array_from_bytes(model: Model, position: int, raw: bytes | memoryview, shape: tuple[int, ...]) -> np.ndarray:
    """The values of input ``position`` (of this shape) from raw bytes laid out as the IR lays out a Const's:
    C order, packed types (u1..u6, i4, nf4, f4e2m1) several to a byte. A new array; errors name the input's layer."""
    from .ir.weights import Weights, const_array, const_value
    from .ops.registry import layer_ref

    info, layer = model.inputs[position], model.graph.parameters[position]
    spec_shape = PartialShape.of(shape)
    return np.array(const_value(const_array(layer_ref(layer), info.element_type, spec_shape, 0, len(raw),
                                            Weights(raw))))


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
