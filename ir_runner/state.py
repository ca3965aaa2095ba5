"""Stateful models: their variables, the checks that take two layers, and the :class:`State` a run reads
and updates.

A variable is read by layers whose operation declares ``state='read'`` (ReadValue) and written by one
whose operation declares ``state='write'`` (Assign, a sink). A run with a state feeds each set variable's
value to its readers as if they were inputs (the plan has no step for them) and, when it ends, stores
what each writer received. An unset variable (a new state, or after ``reset``) starts from its initial
value: the reader's init input when it has one (computed by the run), else what the reader's kernel gives
without inputs (zeros of the declared shape, dynamic dims 0). The plan of a run depends on the shapes of
the variables' values as it depends on the inputs' (a KV cache grows by a step each run).

``Model.run(feeds)`` without a state runs on a new state and drops it: every run starts from the initial
values. OpenVINO's ``compiled_model(inputs)`` instead keeps one state in the compiled model's implicit
infer request, so its successive calls continue from each other.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .errors import InferenceError, InputError, IRError, clip_text, with_layer
from .record import Record
from .types import DYNAMIC, ElementType, PartialShape, TensorSpec, element_type_of, merge_dims

if TYPE_CHECKING:
    from .infer import Inference
    from .model import Model


class Variable(Record):
    """One variable of a stateful model: ``id``, and the ``element_type`` and ``partial_shape`` its reader
    declares (dynamic when it declares none). ``readers`` and ``writer`` are layer ids (``writer`` None: no
    layer writes it, its value stays the initial one); ``initialised``: its reader has an init input.

    ``option``: no run changes the variable's value, so that runs never depend on earlier runs through it: no
    layer writes it, or its writer stores what its reader read and its initial value is a constant (the init
    input's value is known without inputs, or it has none). openvino-tokenizers writes such variables for
    options ('truncation', read by ReadValue from a constant and stored back as read): a caller may set one on
    a state (``state['truncation'] = ...``), a run does not. The other variables (a KV cache) carry a run's
    results to the next: :func:`carried`."""

    __slots__ = ("id", "element_type", "partial_shape", "readers", "writer", "initialised", "option")

    def __init__(self, id: str, element_type: ElementType, partial_shape: PartialShape, readers: tuple[str, ...],
                 writer: str | None, initialised: bool, option: bool) -> None:
        self.id = id
        self.element_type = element_type
        self.partial_shape = partial_shape
        self.readers = readers
        self.writer = writer
        self.initialised = initialised
        self.option = option

    def __repr__(self) -> str:
        return f"<Variable {self.id!r} {self.element_type.name}{self.partial_shape}>"


def _layers_by_role(inference: Inference, role: str) -> list[str]:
    return [lid for lid, info in inference.layers.items()
            if info.op is not None and info.op.state == role and "variable_id" in info.params]


def find_variables(inference: Inference) -> tuple[Variable, ...]:
    """The variables of an error-free inference, in the document order of their first reader."""
    readers: dict[str, list[str]] = {}
    for lid in _layers_by_role(inference, "read"):
        readers.setdefault(inference.layers[lid].params["variable_id"], []).append(lid)
    writers = {inference.layers[lid].params["variable_id"]: lid for lid in _layers_by_role(inference, "write")}
    variables = []
    for variable_id, ids in readers.items():
        declared = inference.layers[ids[0]].params["declared"]
        initialised = any(inference.graph.sources[lid] for lid in ids)
        writer = writers.get(variable_id)
        variables.append(Variable(variable_id, declared.element_type, declared.shape, tuple(ids), writer,
                                  initialised, _unchanged(inference, ids, writer)))
    return tuple(variables)


def _unchanged(inference: Inference, readers: Sequence[str], writer: str | None) -> bool:
    """Whether no run changes a variable (see ``Variable.option``): nothing writes it, or its writer stores one of
    its readers' output and each reader's init input, if any, is constant (a value computed from the inputs
    would be stored by the first run and read instead of computed by the next ones)."""
    if writer is None:
        return True
    sources = inference.graph.sources
    return sources[writer][0][0] in readers and all(
        not sources[reader] or inference.folder.input_value(reader, 0) is not None for reader in readers)


def carried(model: Model) -> tuple[Variable, ...]:
    """The variables whose values a run carries to the next run on its state (a KV cache): all but the options
    (``Variable.option``). A model without any runs alike whatever runs came before: what the commands that
    need a model without state (precision, crosscheck --reduce) take; ``generate`` needs one."""
    return tuple(variable for variable in model.variables if not variable.option)


def check_variables(inference: Inference) -> None:
    """The checks of variables that take two layers, each an InferenceError of the later layer naming the
    other one: readers of one variable that declare it differently, a writer with no reader, two writers,
    and a writer whose input does not fit the variable's declaration (OpenVINO's Assign-6 check)."""
    readers: dict[str, str] = {}
    for lid in _layers_by_role(inference, "read"):
        info = inference.layers[lid]
        variable_id, declared = info.params["variable_id"], info.params["declared"]
        first = readers.setdefault(variable_id, lid)
        other = inference.layers[first].params["declared"]
        if first != lid and other != declared:
            info.errors.append(InferenceError(
                f"declares the variable '{clip_text(variable_id)}' as {declared.brief()}, {inference.layers[first].ref}"
                f" as {other.brief()}", layer=info.ref, hint="every reader of a variable must declare it alike"))
    writers: dict[str, str] = {}
    for lid in _layers_by_role(inference, "write"):
        info = inference.layers[lid]
        variable_id = info.params["variable_id"]
        shown = clip_text(variable_id)
        reader = readers.get(variable_id)
        if reader is None:
            info.errors.append(InferenceError(
                f"writes the variable '{shown}', which no layer reads (no ReadValue has variable_id '{shown}')",
                layer=info.ref, hint="a variable is declared by its ReadValue: add one, or fix variable_id"))
            continue
        first = writers.setdefault(variable_id, lid)
        if first != lid:
            info.errors.append(InferenceError(
                f"writes the variable '{shown}', which {inference.layers[first].ref} writes too",
                layer=info.ref, hint="a variable has one Assign"))
            continue
        reading = inference.layers[reader]
        declared, value = reading.params["declared"], info.inputs[0]
        problem = _misfit(declared, value)
        if problem:
            info.errors.append(InferenceError(
                f"stores {value.brief()} in the variable '{shown}', which {reading.ref} declares as"
                f" {declared.brief()}: {problem}", layer=info.ref, port="input 0 (value)"))


def _misfit(declared: TensorSpec, value: TensorSpec) -> str | None:
    """Why ``value`` is not compatible with ``declared`` (OpenVINO's ``compatible``), or None."""
    if DYNAMIC not in (declared.element_type, value.element_type) and declared.element_type != value.element_type:
        return "the element types differ"
    wide, narrow = declared.shape.dims, value.shape.dims
    if wide is None or narrow is None:
        return None
    if len(wide) != len(narrow):
        return "the ranks differ"
    for axis, (a, b) in enumerate(zip(wide, narrow)):
        if merge_dims(a, b) is None:
            return f"dim {axis} differs"
    return None


class State:
    """The variables' values for one sequence of runs of one model (``model.new_state()``).

    ``state[id]`` is a copy of a variable's value (its initial value when unset; None when that is
    computed from the run's inputs, by an init input), ``state[id] = array`` sets one (of exactly the
    declared element type, a shape that fits the declaration; it is copied), ``state.reset()`` unsets all
    (or ``reset(id)`` one). States are independent: several states of one model may be advanced in
    several threads at once; one state serves one run at a time (a second concurrent run on it raises)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._variables = {variable.id: variable for variable in model.variables}
        self._values: dict[str, np.ndarray | None] = dict.fromkeys(self._variables)
        self._busy = threading.Lock()
        self._signature: tuple | None = None  # the signature the last run on this state was planned for

    def __repr__(self) -> str:
        shown = ", ".join(f"{vid}: {'unset' if value is None else f'{value.dtype}{list(value.shape)}'}"
                          for vid, value in self._values.items())
        return f"<State of {self.model.name!r}: {shown}>"

    @property
    def variables(self) -> tuple[Variable, ...]:
        return tuple(self._variables.values())

    def __iter__(self) -> Iterator[str]:
        return iter(self._variables)

    def __len__(self) -> int:
        return len(self._variables)

    def _variable(self, variable_id: str) -> Variable:
        found = self._variables.get(variable_id)
        if found is None:
            known = ", ".join(repr(clip_text(v)) for v in list(self._variables)[:10])
            raise InputError(f"the model has no variable {clip_text(str(variable_id))!r}",
                             hint=f"its variables: {known}")
        return found

    def reset(self, variable_id: str | None = None) -> None:
        """Unset every variable (or one): the next run starts it from its initial value."""
        if variable_id is None:
            self._values = dict.fromkeys(self._variables)
        else:
            self._values[self._variable(variable_id).id] = None

    def values(self) -> dict[str, np.ndarray | None]:
        """Every variable's value by id, None when unset (the arrays themselves, read-only, not copies)."""
        return dict(self._values)

    def is_set(self, variable_id: str) -> bool:
        """Whether a run (or ``state[id] = ...``) has set the variable since the state was made or reset."""
        return self._values[self._variable(variable_id).id] is not None

    def __getitem__(self, variable_id: str) -> np.ndarray | None:
        variable = self._variable(variable_id)
        value = self._values[variable.id]
        if value is None:
            return None if variable.initialised else _initial_value(self.model, variable)
        return np.array(value)

    def __setitem__(self, variable_id: str, value: object) -> None:
        variable = self._variable(variable_id)
        array = np.array(value, copy=True)
        expected = variable.element_type.dtype
        if (expected is not None and array.dtype != expected) or element_type_of(array.dtype) is None:
            raise InputError(f"variable '{clip_text(variable.id)}' is {variable.element_type.name}, got {array.dtype}",
                             hint=f"pass an array of dtype {expected}" if expected is not None else None)
        if not variable.partial_shape.accepts(array.shape):
            raise InputError(f"variable '{clip_text(variable.id)}' has shape {variable.partial_shape.brief()},"
                             f" got {list(array.shape)}")
        array.flags.writeable = False
        self._values[variable.id] = array


def _initial_value(model: Model, variable: Variable) -> np.ndarray:
    """The initial value of a variable without init input: its reader's kernel, given no input."""
    info = model.inference.layers[variable.readers[0]]
    try:
        return info.op.kernel(**info.params)
    except IRError as error:
        raise with_layer(error, info.ref) from None


def initial_values(model: Model) -> list[np.ndarray | None]:
    """What a run on a new state reads: each variable's initial value, None where the run computes it."""
    return [None if v.initialised else _initial_value(model, v) for v in model.variables]


def fed_specs(model: Model, current: Sequence[np.ndarray | None]) -> dict[str, TensorSpec]:
    """The spec each reader of a variable with a value is fed with, by reader layer id (feeding order)."""
    fed = {}
    for variable, value in zip(model.variables, current):
        if value is not None:
            spec = TensorSpec(element_type_of(value.dtype) if variable.element_type == DYNAMIC
                              else variable.element_type, PartialShape.of(value.shape))
            for reader in variable.readers:
                fed[reader] = spec
    return fed


def computed_specs(model: Model, inference: Inference, fed: Mapping[str, TensorSpec]) -> dict[str, TensorSpec]:
    """The spec of each reader the run computes (an unset variable with an init input): its init input's, as
    ``inference`` (made with the others fed) found it; the reader's declared spec may be dynamic."""
    return {lid: inference.layers[lid].inputs[0] for v in model.variables for lid in v.readers
            if lid not in fed and inference.layers[lid].inputs}


def stored_sources(model: Model) -> tuple[tuple[str, int], ...]:
    """The slots a run returns after the outputs: what each written variable's writer receives."""
    return tuple(model.graph.sources[v.writer][0] for v in model.variables if v.writer is not None)


class Session:
    """One run on a state: the variables' current values (None: computed by the run, from an init input),
    the feeds with them, and the outputs once the new values are stored."""

    def __init__(self, model: Model, state: State | None) -> None:
        if state is None:
            state = State(model)
        elif not isinstance(state, State) or state.model is not model:
            raise InputError("state= must be a State of this model" if isinstance(state, State)
                             else f"state= must be a State (model.new_state()), got {type(state).__name__}",
                             hint="make one with model.new_state()")
        self.state = state
        self.model = model
        if not state._busy.acquire(blocking=False):
            raise InputError("this state is being used by another run", hint="one state serves one run at a time:"
                             " give each thread its own model.new_state()")
        try:
            self.current = [state._values[v.id] if state._values[v.id] is not None or v.initialised
                            else _initial_value(model, v) for v in model.variables]
        except BaseException:
            state._busy.release()
            raise

    def feeds(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The model's inputs, then each set variable's value once per reader (as ``fed_specs`` orders them)."""
        return [*arrays, *(value for variable, value in zip(self.model.variables, self.current) if value is not None
                           for _ in variable.readers)]

    def finish(self, values: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Store what the writers received (the values after the outputs) and return the outputs."""
        count = len(self.model.outputs)
        written = (v for v in self.model.variables if v.writer is not None)
        for variable, value in zip(written, values[count:]):
            if value.flags.writeable and value.base is None:
                value.flags.writeable = False  # the state's own array (a view's base may be the caller's)
            self.state._values[variable.id] = value
        return list(values[:count])

    def close(self) -> None:
        self.state._busy.release()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
