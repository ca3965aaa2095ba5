"""Type and shape inference over the graph, and the declared-vs-inferred comparison.

One pass in topological order infers each layer's output specs from its inputs (partial shapes with
dynamic dims and intervals) and compares them with the ports' declared ``<dim>``s and ``precision``.
It collects every finding instead of stopping at the first; :meth:`Inference.raise_first` turns them
into the one error ``load`` raises. A layer whose inference fails, or whose type is unknown, passes
its *declared* output specs downstream so that later layers are still checked.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from . import fpenv
from .errors import (
    DeclaredMismatchError,
    InferenceError,
    InputError,
    IRError,
    LayerRef,
    ModelFormatError,
    UnsupportedError,
    clip_text,
    with_layer,
)
from .extension import checked_kernel
from .graph import Graph
from .ir.records import LayerRecord, PortRecord, Record
from .ir.weights import const_value
from .ops.api import FOLD_MAX_BYTES, OpContext, OpDef, PartialValue
from .ops.registry import BUILTIN_ORIGIN, find_op, layer_ref, openvino_refusal, supported_summary
from .state import check_variables
from .types import (
    DYNAMIC,
    DYNAMIC_SHAPE,
    MESSAGE_DIMS,
    NUMPY_MAX_RANK,
    PartialShape,
    TensorSpec,
    dims_text,
    element_type,
    element_type_of,
)
from .unsupported import not_implemented, unsupported_error
from .unsupported import reason as unsupported_reason


class PortCheck(Record):
    """One row of the validation table: a port's declared spec next to the inferred one; ``direction`` is
    'in' or 'out'."""

    __slots__ = ("direction", "port", "spec", "ok")

    def __init__(self, direction: str, port: PortRecord, spec: TensorSpec, ok: bool) -> None:
        self.direction = direction
        self.port = port
        self.spec = spec
        self.ok = ok

    @property
    def declared(self) -> str:
        return _declared_text(self.port)

    @property
    def inferred(self) -> str:
        return str(self.spec)


class LayerInference:
    """What inference found for one layer: its output specs, the kernel parameters, and every finding."""

    __slots__ = ("layer", "ref", "op", "inputs", "outputs", "params", "errors", "values")

    def __init__(self, layer: LayerRecord, ref: LayerRef, op: OpDef | None, inputs: list[TensorSpec]) -> None:
        self.layer = layer
        self.ref = ref
        self.op = op
        self.inputs = inputs
        self.outputs: list[TensorSpec] = []
        self.params: dict[str, Any] = {}
        self.errors: list[IRError] = []
        self.values: list[PartialValue | None] | None = None  # partial values of the outputs (shape subgraphs)

    def __repr__(self) -> str:
        return f"<LayerInference {self.ref}: {', '.join(map(str, self.outputs))}>"

    @property
    def checks(self) -> list[PortCheck]:
        """Each port's declared spec next to the inferred one (inputs, then outputs)."""
        return [
            PortCheck(direction, port, spec, not _port_problems(port, spec))
            for direction, ports, specs in (("in", self.layer.inputs, self.inputs),
                                            ("out", self.layer.outputs, self.outputs))
            for port, spec in zip(ports, specs)
        ]


class Inference:
    """The result of inference over a whole graph."""

    def __init__(self, graph: Graph, layers: dict[str, LayerInference], folder: ConstantFolder, bodies=None) -> None:
        self.graph = graph
        self.layers = layers
        self.folder = folder
        self.bodies = bodies
        self.value_inputs: tuple[int, ...] = ()  # see _find_value_inputs
        self.value_readers: frozenset[str] = frozenset()  # see _find_value_inputs
        self.overridden: frozenset[str] | None = None  # the layers given specs (None: not inferred for inputs)
        self.valued: frozenset[str] = frozenset()  # the layers given values (input_values)
        self.pinned: frozenset[str] = frozenset()  # the layers given output specs (infer_graph's pinned)

    def constant_input(self, layer_id: str, position: int) -> np.ndarray | None:
        """The value of a layer's input when it is constant (a Const, or computable from small Consts)."""
        return self.folder.input_value(layer_id, position)

    def context(self, layer_id: str) -> OpContext:
        """The context an operation's ``infer`` saw, for its ``findings`` (validation)."""
        info = self.layers[layer_id]
        return OpContext(info.layer, info.ref, info.op, info.inputs, self.folder.input_value, False,
                         self.graph.net.weights, _partial_values(self.graph, self.layers), self.bodies)

    def deciding_inputs(self) -> list[tuple[str, int]]:
        """The inputs whose values decide shapes or kernel parameters (role in ``DECIDING_ROLES``) and are
        not constant: the plan is made per value of the Parameters they come from."""
        found = []
        for layer_id, info in self.layers.items():
            op = info.op
            if op is None or info.errors or not op.deciding:
                continue
            for position in op.deciding:
                if position < len(info.inputs) and self.folder.input_value(layer_id, position) is None:
                    found.append((layer_id, position))
        return found

    def refuse_unknown_deciding(self) -> None:
        """An InputError for an input that decides a shape and is still unknown with the values the model's
        inputs were given (computed through a layer output above the folding limit, or, with no limit, through
        a layer that cannot be evaluated)."""
        for layer_id, port in self.deciding_inputs():
            info = self.layers[layer_id]
            limit = self.folder.limit
            why = ("a layer it comes from cannot be evaluated" if limit is None
                   else f"it goes through a layer output above the folding limit of {limit} bytes")
            raise InputError(f"{info.op.roles[port]} cannot be computed before the run: {why}", layer=info.ref,
                             port=f"input {port} ({info.op.input_names[port]})")

    def _find_value_inputs(self) -> None:
        """Which model inputs (Parameter positions) decide a shape or kernel parameter through their values
        (not through their shapes alone: the walk stops at ``shape_only`` layers such as ShapeOf), and which
        readers of variables (ReadValue, ``value_readers``: a MoE router's choice computed from the KV cache).
        A deciding input that comes from neither (constants above the folding limit) is an error of its layer."""
        graph = self.graph
        position = {layer.id: i for i, layer in enumerate(graph.parameters)}
        found: set[int] = set()
        readers: set[str] = set()
        for layer_id, port in self.deciding_inputs():
            reached, stack, seen = set(), [graph.sources[layer_id][port][0]], set()
            reached_shape = False
            while stack:
                current = stack.pop()
                if current in seen:
                    continue
                seen.add(current)
                if current in position:
                    reached.add(position[current])
                    continue
                op = self.layers[current].op
                if op is not None and op.shape_only:
                    reached_shape = True  # decided by input shapes: known once they are
                elif op is not None:
                    if op.state == "read":
                        readers.add(current)  # (and its init input, which a run on an unset variable reads)
                    stack.extend(source for source, _ in graph.sources[current])
            if not reached and not reached_shape and not readers & seen:
                info = self.layers[layer_id]
                info.errors.append(InferenceError(
                    f"{info.op.roles[port]} is not constant: it is computed from constants through a layer output"
                    f" above the folding limit of {FOLD_MAX_BYTES} bytes",
                    layer=info.ref, port=f"input {port} ({info.op.input_names[port]})",
                    hint="make it a Const layer, or compute it from smaller tensors"))
            found |= reached
        self.value_inputs = tuple(sorted(found))
        self.value_readers = frozenset(readers)

    @property
    def errors(self) -> list[IRError]:
        return [e for info in self.layers.values() for e in info.errors]

    def output_spec(self, layer_id: str, position: int) -> TensorSpec:
        return self.layers[layer_id].outputs[position]

    def raise_first(self) -> None:
        """Raise the error ``load`` reports: all unknown operations at once, else the first finding."""
        errors = self.errors
        unsupported = [e for e in errors if isinstance(e, UnsupportedError)]
        unknown = [info.ref for info in self.layers.values() if not_implemented(info)]
        if unknown:
            raise unsupported_error([self.layers[ref.id] for ref in unknown], _unknown_hint(self.layers, unknown))
        if unsupported:
            raise unsupported[0]
        if errors:
            raise errors[0]


def _unknown_hint(layers: dict[str, LayerInference], unknown: list[LayerRef]) -> str | None:
    types = {layers[ref.id].layer.type for ref in unknown}
    if "Constant" in types:
        return "the IR name of a constant is 'Const', not 'Constant'"
    return None


def infer_graph(
    graph: Graph,
    *,
    strict: bool = False,
    input_specs: dict[str, TensorSpec] | None = None,
    input_values: dict[str, np.ndarray] | None = None,
    check_declared: bool = True,
    body_provider=None,
    fold_limit: int | None = FOLD_MAX_BYTES,
    reuse: Inference | None = None,
    pinned: dict[str, list[TensorSpec]] | None = None,
) -> Inference:
    """Infer every layer's outputs in topological order, collecting all findings.

    ``input_specs`` overrides Parameter specs by layer id (re-inference for concrete inputs), and
    ``input_values`` gives Parameters values that count as constant (those that decide shapes);
    ``check_declared`` compares port dims and precisions with what was inferred. ``body_provider(graph, strict,
    layer_ref)`` gives the layers with sub-graphs their bodies (``subgraph.body_provider``; without it, a layer
    with a body cannot be inferred). ``fold_limit`` bounds the outputs the constant folder evaluates (None: any
    size, when given values decide shapes that only the computation itself can, as NonMaxSuppression's count).
    ``reuse``: an earlier error-free inference of the same graph whose results
    are taken for every layer that depends on no spec or given value that differs (a step of a stateful model
    changes the layers downstream of its growing KV cache and mask, not the rest), given values for the same
    layers and the same ``fold_limit``. ``pinned``: output specs taken instead of the inferred ones for these
    layers (by id) when those are not static (a generic plan's, which checks them at run: :mod:`ir_runner.lengths`);
    ``Inference.pinned`` says which were taken.
    """
    layers: dict[str, LayerInference] = {}
    folder = ConstantFolder(graph, layers, input_values, fold_limit)
    partial = _partial_values(graph, layers)
    bodies = body_provider(graph, strict, layer_ref) if body_provider is not None else None
    failed = False  # a layer before failed (only then can a shape-deciding value depend on a failure)
    memo = _InferenceMemo(folder.input_value, graph.net.weights, partial, strict)
    if reuse is not None and (reuse.overridden is None or reuse.valued != frozenset(input_values or ())
                              or reuse.folder.limit != fold_limit):
        reuse = None
    changed: set[str] = set()  # (with reuse) the layers inferred anew
    applied: set[str] = set()  # the layers given their pinned specs

    for layer_id in graph.order:
        layer = graph.layers[layer_id]
        if reuse is not None and _reusable(reuse, layer_id, input_specs, changed, input_values):
            layers[layer_id] = reuse.layers[layer_id]
            if layer_id in reuse.folder.values:
                folder.values[layer_id] = reuse.folder.values[layer_id]
            continue
        changed.add(layer_id)
        inputs = [layers[src].outputs[pos] for src, pos in graph.sources[layer_id]]
        info = LayerInference(layer, layer_ref(layer), find_op(layer), inputs)
        layers[layer_id] = info
        if check_declared:
            _compare_ports(info, "in", layer.inputs, inputs)
        if input_specs is not None and layer_id in input_specs:
            info.outputs = [input_specs[layer_id]]
            info.params = {}
        else:
            _infer_layer(info, folder.input_value, strict, graph.net.weights, memo, partial, bodies)
            if failed and info.op is not None and info.op.deciding and not info.errors:
                _refuse_failed_deciding(graph, layers, info, folder.input_value)
            failed = failed or any(not isinstance(e, DeclaredMismatchError) for e in info.errors)
            if pinned is not None and layer_id in pinned and not info.errors and not static_specs(info.outputs):
                info.outputs = list(pinned[layer_id])
                applied.add(layer_id)
        for spec in info.outputs:  # one cheap check per layer: an output of a rank numpy cannot hold
            dims = spec.shape.dims
            if dims is not None and len(dims) > NUMPY_MAX_RANK:
                _check_ranks(info)
                break
        if check_declared:
            _compare_ports(info, "out", layer.outputs, info.outputs)
        if reuse is not None and _same_as_before(reuse, info, input_specs) and folder.layer_values(layer_id) is None \
                and reuse.folder.layer_values(layer_id) is None:
            # computed at run time, as before: what reads it is unchanged (the layer itself keeps its new inference
            # when its inputs changed: a ReduceMean's count of elements comes from them, not from its output). Not
            # when ``reuse`` folded it (a generic inference reusing an exact one: its readers' folded values there
            # are that signature's)
            if reuse.layers[layer_id].inputs == info.inputs:
                layers[layer_id] = reuse.layers[layer_id]
            changed.discard(layer_id)
    inference = Inference(graph, layers, folder, bodies)
    inference.overridden = frozenset(input_specs or ())
    inference.valued = frozenset(input_values or ())
    inference.pinned = frozenset(applied)
    if check_declared:
        check_variables(inference)
    if input_values is None:
        inference._find_value_inputs()
    return inference


def static_specs(specs) -> bool:
    """Whether these specs are all static: a kernel is prepared for static shapes only; a tensor whose shape
    is known only when run (a Loop's output) gets the plain kernel."""
    return all(spec.shape.is_static for spec in specs)


def _reusable(reuse: Inference, layer_id: str, input_specs: dict[str, TensorSpec] | None, changed: set[str],
              input_values: dict[str, np.ndarray] | None) -> bool:
    """Whether ``reuse``'s result for this layer holds here: error-free, no input inferred anew, given the same
    spec (or, like it, none) and the same value (or, like it, none)."""
    previous = reuse.layers.get(layer_id)
    if previous is None or previous.errors or any(src in changed for src, _ in reuse.graph.sources[layer_id]):
        return False
    if input_values and layer_id in input_values:
        before, now = reuse.folder.values[layer_id][0], input_values[layer_id]
        if before.dtype != now.dtype or before.shape != now.shape or before.tobytes() != now.tobytes():
            return False
    given = input_specs is not None and layer_id in input_specs
    if given != (layer_id in reuse.overridden):
        return False
    return not given or previous.outputs == [input_specs[layer_id]]


def _same_as_before(reuse: Inference, info: LayerInference, input_specs: dict[str, TensorSpec] | None) -> bool:
    """Whether a layer inferred anew came out as in ``reuse``: outputs, params, partial values, no error."""
    previous = reuse.layers.get(info.layer.id)
    if previous is None or previous.errors or info.errors or previous.outputs != info.outputs:
        return False
    if (input_specs is not None and info.layer.id in input_specs) != (info.layer.id in reuse.overridden):
        return False
    try:
        return bool(previous.params == info.params) and previous.values == info.values
    except (ValueError, TypeError):  # a parameter holding an array: not compared
        return False


class _InferenceMemo:
    """Results of ``op.infer`` reused for layers that repeat an earlier one: the same operation, ``<data>``
    attributes and input specs, and equal values of the constant inputs and partial values it read (Gather's
    axis, Reshape's target).

    Large IRs repeat the same blocks thousands of times; this makes their inference a dictionary
    lookup per layer. Only successful inferences are kept (errors name their own layer); Parameter and
    Const are never memoised (they read their ports and the weights), nor layers with bodies (equal
    attributes do not make equal bodies). Parameters never name their layer (a kernel's or ``prepare``'s error
    is given its layer where it is called, ``errors.with_layer``), so strict inference is memoised too.
    """

    _SKIP = ("Parameter", "Const")
    _MAX_CONST_BYTES = 64  # constant inputs compared by value; larger ones make a layer not memoisable

    def __init__(self, const_value, weights, partial_value, strict: bool) -> None:
        self._const_value = const_value
        self._strict = strict
        self._weights = weights
        self._partial_value = partial_value
        self._entries: dict[tuple, list[tuple[tuple, list[TensorSpec], dict[str, Any]]]] = {}

    def infer(self, info: LayerInference) -> tuple[list[TensorSpec], dict[str, Any]]:
        """``info.op.infer`` for this layer, or an earlier layer's equal result."""
        op, layer = info.op, info.layer
        if op.type in self._SKIP:
            return op.infer(_context(info, self._const_value, self._strict, self._weights, self._partial_value))
        key = (op.type, op.version, tuple(layer.data.items()), tuple(info.inputs))
        candidates = self._entries.get(key)
        if candidates is not None:
            for reads, partial_reads, outputs, params in candidates:
                if all(_fingerprint(self._const_value(layer.id, position)) == seen for position, seen in reads) and all(
                        self._partial_value(layer.id, position) == seen for position, seen in partial_reads):
                    return list(outputs), dict(params)
        reads, partial_reads = [], []

        def recording_const_value(layer_id: str, position: int) -> np.ndarray | None:
            value = self._const_value(layer_id, position)
            reads.append((position, _fingerprint(value)))
            return value

        def recording_partial_value(layer_id: str, position: int) -> PartialValue | None:
            value = self._partial_value(layer_id, position)
            partial_reads.append((position, value))
            return value

        outputs, params = op.infer(_context(info, recording_const_value, self._strict, self._weights,
                                            recording_partial_value))
        if all(seen is not False for _, seen in reads):
            self._entries.setdefault(key, []).append((tuple(reads), tuple(partial_reads), list(outputs), dict(params)))
        return outputs, params


def _fingerprint(value: np.ndarray | None):
    return constant_fingerprint(value, _InferenceMemo._MAX_CONST_BYTES)


def constant_fingerprint(value: np.ndarray | None, max_bytes: int):
    """What identifies a constant's value when comparing layers (dtype, shape and bytes); None when there
    is no constant, False when it is larger than ``max_bytes`` (too large to compare cheaply)."""
    if value is None:
        return None
    if value.dtype.hasobject:  # strings: compared by their text (an object array's bytes are addresses)
        items = tuple(value.ravel().tolist())
        return False if sum(map(len, items)) + value.nbytes > max_bytes else (value.dtype.str, value.shape, items)
    if value.nbytes > max_bytes:
        return False
    return value.dtype.str, value.shape, value.tobytes()


def _context(info: LayerInference, const_value, strict: bool, weights, partial_value, bodies=None) -> OpContext:
    return OpContext(info.layer, info.ref, info.op, info.inputs, const_value, strict, weights, partial_value, bodies)


_RUN_TIME_KERNELS = 16  # kernels a run-time-shape layer keeps, one per input signature (then started anew)
_RUN_TIME_KEY_MAX_BYTES = 4096  # input values inference read, compared by value; a larger one is not kept


def run_time_kernel(info: LayerInference, strict: bool, weights, bodies, shared: dict | None = None):
    """The kernel of a layer whose input shapes only the run decides (after an If whose branches differ, a Loop
    stopped by its body's condition, a NonMaxSuppression in a body): the layer is inferred again from the
    arrays it is given, every input counting as constant (``strict`` as the model's), and its kernel called
    with those parameters (a Squeeze's output shape, a Reshape's target), its results checked as every
    extension's are (:func:`checked_kernel`). The errors are those inference would give.

    Inference runs once per signature: the inputs' dtypes and shapes, and the values of the inputs it read
    (a Reshape's target, a Gather's indices under ``strict``); the kernels of the last ``_RUN_TIME_KERNELS``
    signatures are kept (a signature whose read values exceed ``_RUN_TIME_KEY_MAX_BYTES`` is inferred at every
    call). ``shared``: a cache that the run-time layers of one generic plan share (:mod:`ir_runner.lengths`,
    whose errors are never reported): a layer then reuses the kernel of an equal one (same operation,
    ``<data>`` and input specs, as inference's memo has it; a layer with a body never) given the same
    signature, such as the key and value heads' repeats of every block of a decoding step, which infer equal
    parameters from arrays of new shapes at each step. Its size is bounded as one layer's. In a generic plan,
    a built-in operation's ``at_run`` gives the parameters of the plain cases without inference."""
    layer_key = _shared_key(info, shared)
    known: dict[tuple, list[tuple[tuple, Any]]] = shared if layer_key is not None else {}
    op = info.op
    at_run = op.at_run if shared is not None and (op.origin is None or op.origin.startswith(BUILTIN_ORIGIN)) else None
    if at_run is not None:
        attributes = OpContext(info.layer, info.ref, op, list(info.inputs), _no_value, strict, weights, None, bodies)

    def kernel(*arrays: np.ndarray):
        if at_run is not None:
            params = at_run(attributes, arrays)
            if params is not None:
                return op.kernel(*arrays, **params)
        shapes = tuple((array.dtype.str, array.shape) for array in arrays)
        if layer_key is not None:
            shapes = (layer_key, shapes)
        for reads, prepared in known.get(shapes, ()):
            if all(constant_fingerprint(arrays[position], _RUN_TIME_KEY_MAX_BYTES) == seen
                   for position, seen in reads):
                return prepared(*arrays)
        reads: list[tuple[int, Any]] = []

        def const_value(_layer, position: int) -> np.ndarray:
            reads.append((position, constant_fingerprint(arrays[position], _RUN_TIME_KEY_MAX_BYTES)))
            return arrays[position]

        specs = _specs_of(info, arrays)
        ctx = OpContext(info.layer, info.ref, info.op, specs, const_value, strict, weights, None, bodies)
        outputs, params = info.op.infer(ctx)
        prepared = checked_kernel(info.op, functools.partial(info.op.kernel, **params), outputs)
        if all(seen is not False for _, seen in reads):
            if len(known) >= _RUN_TIME_KERNELS * (4 if layer_key is not None else 1):
                known.clear()
            known.setdefault(shapes, []).append((tuple(reads), prepared))
        return prepared(*arrays)

    return kernel


def _no_value(_layer, _position: int) -> None:
    return None


def _shared_key(info: LayerInference, shared: dict | None) -> tuple | None:
    """What identifies a layer's run-time inference among the layers sharing ``shared`` (see
    :func:`run_time_kernel`): None when it shares nothing."""
    if shared is None or info.layer.bodies:  # (equal attributes do not make equal bodies)
        return None
    try:
        key = (info.op.type, info.op.version, tuple(info.layer.data.items()), tuple(info.inputs))
        hash(key)
    except TypeError:
        return None
    return key


def _specs_of(info: LayerInference, arrays: tuple[np.ndarray, ...]) -> list[TensorSpec]:
    """The specs of the arrays a layer is given at run: their shapes, and the element types inference gave its
    inputs (the arrays' for a dynamic one)."""
    return [TensorSpec(spec.element_type if spec.element_type != DYNAMIC else element_type_of(array.dtype),
                       PartialShape.of(array.shape)) for spec, array in zip(info.inputs, arrays)]


def prepared_per_shape(info: LayerInference, consts: list[np.ndarray | None], weights, bodies,
                       shared: dict | None = None):
    """The kernel of a layer of a generic plan (:mod:`ir_runner.lengths`) whose shapes vary from run to run and
    whose operation prepares kernels that are not bit-exact (a MatMul's blocks of rows): prepared per input
    shapes with the layer's own parameters and ``consts`` (its constant inputs), as a plan made for those
    shapes prepares it; the output specs come from inference of those shapes (with only ``consts`` known,
    which gave the same parameters). The last ``_RUN_TIME_KERNELS`` shapes' kernels are kept; with ``shared``
    (as :func:`run_time_kernel`'s), in one cache with the equal layers that have equal small ``consts`` (every
    block's attention of a decoding step)."""
    op, general = info.op, functools.partial(info.op.kernel, **info.params)
    layer_key = _shared_key(info, shared)
    if layer_key is not None:
        fingerprints = tuple(constant_fingerprint(value, _RUN_TIME_KEY_MAX_BYTES) for value in consts)
        layer_key = None if False in fingerprints else (layer_key, fingerprints)
    known: dict[tuple, Any] = shared if layer_key is not None else {}

    def kernel(*arrays: np.ndarray):
        shapes = tuple(array.shape for array in arrays)
        if layer_key is not None:
            shapes = (layer_key, shapes)
        prepared = known.get(shapes)
        if prepared is None:
            specs = _specs_of(info, arrays)
            ctx = OpContext(info.layer, info.ref, op, specs, lambda _layer, position: consts[position], False,
                            weights, None, bodies)
            outputs, _ = op.infer(ctx)
            if all(spec.shape.is_static for spec in outputs):
                prepared = checked_kernel(op, op.prepare(info.params, specs, outputs, consts), outputs)
            else:
                prepared = checked_kernel(op, general, outputs)
            if len(known) >= _RUN_TIME_KERNELS * (4 if layer_key is not None else 1):
                known.clear()
            known[shapes] = prepared
        return prepared(*arrays)

    return kernel


def _partial_values(graph: Graph, layers: dict[str, LayerInference]):
    """``partial_value(layer_id, position)``: what value inference found for a layer's input (None: nothing)."""
    def partial_value(layer_id: str, position: int) -> PartialValue | None:
        source, port = graph.sources[layer_id][position]
        values = layers[source].values
        return values[port] if values is not None and port < len(values) else None

    return partial_value


def _infer_layer(info: LayerInference, const_value, strict: bool, weights, memo: _InferenceMemo,
                 partial_value, bodies) -> None:
    layer = info.layer
    if info.op is None:
        refusal = openvino_refusal(layer.type, layer.version)
        info.errors.append(ModelFormatError(f"OpenVINO refuses this file: {refusal}", layer=info.ref,
                                            hint="write the version of the opset that holds the operation")
                           if refusal is not None else _unknown_op_error(info))
        info.outputs = [_declared_spec(p, info) for p in layer.outputs]
        return
    if not info.op.takes_inputs(len(info.inputs)):
        op = info.op
        count = f"{op.min_inputs} or more" if op.variadic else f"{op.min_inputs}..{len(op.input_names)}" if (
            op.min_inputs < len(op.input_names)) else str(op.min_inputs)
        info.errors.append(
            InferenceError(
                f"{info.op.label} takes {count} input(s) ({', '.join(info.op.input_names)}),"
                f" the layer has {len(info.inputs)}",
                layer=info.ref,
            )
        )
        info.outputs = [_declared_spec(p, info) for p in layer.outputs]
        return
    try:
        if not layer.bodies:  # (equal attributes do not make equal bodies)
            outputs, params = memo.infer(info)
        else:
            outputs, params = info.op.infer(_context(info, const_value, strict, weights, partial_value, bodies))
    except IRError as exc:
        info.errors.append(exc)
        info.outputs = [_declared_spec(p, info) for p in layer.outputs]
        return
    if len(layer.outputs) != len(outputs) and (layer.outputs or info.op.type != "Result"):
        info.errors.append(
            ModelFormatError(
                f"{info.op.label} has {len(outputs)} output(s), the layer declares {len(layer.outputs)}",
                layer=info.ref,
            )
        )
        outputs = outputs + [_declared_spec(p, info) for p in layer.outputs[len(outputs):]]
    info.outputs, info.params = outputs, params
    if info.op.value is not None and (info.op.shape_only or any(
            partial_value(layer.id, i) is not None for i in range(len(info.inputs)))):
        # (with no partial value coming in, what is known comes from constants, which the folder evaluates)
        try:
            info.values = info.op.value(_context(info, const_value, strict, weights, partial_value, bodies))
        except IRError as exc:
            info.errors.append(exc)


def _refuse_failed_deciding(graph: Graph, layers: dict[str, LayerInference], info: LayerInference,
                            const_value) -> None:
    """A layer whose shape-deciding input (an axis, a target shape) is not constant because a layer it comes
    from failed (e.g. a Const whose weights cannot be read) fails too, and passes its declared specs on: what
    it inferred without that value would hide problems downstream."""
    for position in info.op.deciding:
        if position >= len(info.inputs) or const_value(info.layer.id, position) is not None:
            continue
        stack, seen = [graph.sources[info.layer.id][position][0]], set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            producer = layers[current]
            if producer.errors and not all(isinstance(e, DeclaredMismatchError) for e in producer.errors):
                info.errors.append(InferenceError(
                    f"its {info.op.roles[position]} cannot be known: it comes from {producer.ref}, which failed",
                    layer=info.ref, port=f"input {position} ({info.op.input_names[position]})"))
                info.outputs = [_declared_spec(p, info) for p in info.layer.outputs]
                info.params = {}
                return
            if producer.op is not None and not producer.op.shape_only:
                stack.extend(source for source, _ in graph.sources[current])


def _check_ranks(info: LayerInference) -> None:
    """An UnsupportedError for the first output of a rank numpy cannot hold (OpenVINO has no limit), unless the
    layer failed (its declared specs stand in) or an input has such a rank: only where the rank starts."""
    failed = any(not isinstance(error, DeclaredMismatchError) for error in info.errors)
    if failed or any((spec.shape.rank or 0) > NUMPY_MAX_RANK for spec in info.inputs):
        return
    position, rank = next((i, spec.shape.rank) for i, spec in enumerate(info.outputs)
                          if (spec.shape.rank or 0) > NUMPY_MAX_RANK)
    ports = info.layer.outputs
    info.errors.append(UnsupportedError(
        f"rank {rank} is above numpy's limit of {NUMPY_MAX_RANK} dims: ir-run cannot hold this tensor",
        layer=info.ref,
        port="output " + (ports[position].label if position < len(ports) else str(position)),
    ))


def _unknown_op_error(info: LayerInference) -> UnsupportedError:
    return UnsupportedError(f"{unsupported_reason(info)}. {supported_summary()}", layer=info.ref)


def static_nbytes(spec: TensorSpec) -> int:
    """The bytes a tensor of this static spec (with a numpy dtype) takes."""
    return math.prod(spec.shape.to_shape()) * spec.element_type.dtype.itemsize


class ConstantFolder:
    """The one constant folder (inference, plan and validation use it): values of layers computable from
    Consts alone (and from Parameters given a value), evaluated on demand and kept. Walks producers without
    recursion, so chains of any length fold; a layer whose outputs take more than FOLD_MAX_BYTES is not
    folded, so its value and everything computed from it count as not constant (a small axis never needs
    them). A kernel that fails while folding makes its layer not constant (the run then reports it)."""

    def __init__(self, graph: Graph, layers: dict[str, LayerInference],
                 given: dict[str, np.ndarray] | None = None, limit: int | None = FOLD_MAX_BYTES) -> None:
        self.graph, self.layers = graph, layers
        self.limit = limit  # the largest outputs folded (None: any size, for values only a run decides)
        self.values: dict[str, list[np.ndarray] | None] = {lid: [v] for lid, v in (given or {}).items()}
        self._position: dict[str, int] | None = None  # topological position, built on the first fold

    def input_value(self, layer_id: str, position: int) -> np.ndarray | None:
        """The value of a layer's input, when constant."""
        source, port = self.graph.sources[layer_id][position]
        values = self.layer_values(source)
        return values[port] if values is not None else None

    def layer_values(self, producer: str) -> list[np.ndarray] | None:
        """A layer's output values, when constant."""
        order, queued, stack = [], set(), [producer]
        while stack:
            current = stack.pop()
            if current in self.values or current in queued:
                continue
            info = self.layers[current]
            if "value" in info.params:
                self.values[current] = [const_value(info.params["value"])]
                continue
            known = _known_values(info)
            if known is not None:
                self.values[current] = known
                continue
            if not self._foldable(info):
                self.values[current] = None
                continue
            order.append(current)
            queued.add(current)
            stack.extend(src for src, _ in self.graph.sources[current])
        if len(order) > 1:
            if self._position is None:
                self._position = {lid: i for i, lid in enumerate(self.graph.order)}
            order.sort(key=self._position.__getitem__)
        if order:
            flushing = fpenv.enter()  # kernels fold as they run: with FTZ/DAZ cleared (see fpenv)
            try:
                for current in order:
                    self.values[current] = self._evaluate(self.layers[current])
            finally:
                fpenv.leave(flushing)
        return self.values[producer]

    def _foldable(self, info: LayerInference) -> bool:
        """Whether to evaluate this layer: a kernel, static outputs of at most ``limit`` bytes in all, no variable
        read or written (a variable's value changes from run to run)."""
        if info.op is None or info.op.kernel is None or info.errors or not info.outputs or info.op.state:
            return False
        total = 0
        for spec in info.outputs:
            if not spec.shape.is_static or spec.element_type.dtype is None:
                return False
            total += static_nbytes(spec)
        return self.limit is None or total <= self.limit

    def _evaluate(self, info: LayerInference) -> list[np.ndarray] | None:
        values = []
        for source, port in self.graph.sources[info.layer.id]:
            produced = self.values.get(source)
            if produced is None:
                return None
            values.append(produced[port])
        try:
            result = checked_kernel(info.op, functools.partial(info.op.kernel, **info.params), info.outputs)(*values)
        except IRError as error:
            raise with_layer(error, info.ref) from None
        except Exception:  # folding is an optimisation: a failure means "not constant"
            return None
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        for value in results:
            if value.flags.writeable:
                value.flags.writeable = False  # shared by every run of every plan
        return results


def _known_values(info: LayerInference) -> list[np.ndarray] | None:
    """A layer's outputs when value inference knows every element exactly (ShapeOf of a static shape, and
    what is computed from it), as read-only arrays."""
    if info.values is None or info.errors or len(info.values) != len(info.outputs):
        return None
    arrays = []
    for value, spec in zip(info.values, info.outputs):
        dtype = spec.element_type.dtype
        if value is None or not spec.shape.is_static or dtype is None or any(d.lo != d.hi for d in value):
            return None
        array = np.array([d.lo for d in value], dtype=dtype).reshape(spec.shape.to_shape())
        array.flags.writeable = False
        arrays.append(array)
    return arrays


def _declared_spec(port: PortRecord, info: LayerInference) -> TensorSpec:
    """The spec a port declares, passed downstream when inference could not compute one. A port with no
    dims is taken as 'rank unknown' here (OpenVINO writes no dims for both scalars and dynamic ranks), so
    that downstream checks do not report mismatches that only this layer's failure caused."""
    et = element_type(port.precision) if port.precision else DYNAMIC
    shape = PartialShape.from_port_dims(port.dims) if port.dims else DYNAMIC_SHAPE
    return TensorSpec(et or DYNAMIC, shape)


def _declared_text(port: PortRecord) -> str:
    return f"{port.precision or '?'}[{','.join(str(d) for d in port.dims)}]"


def _declared_brief(port: PortRecord) -> str:
    """:func:`_declared_text` for a message: the precision clipped, at most MESSAGE_DIMS dims."""
    return f"{clip_text(port.precision or '?')}[{dims_text(port.dims)}]"


def _compare_ports(info: LayerInference, direction: str, ports, specs: list[TensorSpec]) -> None:
    for port, spec in zip(ports, specs):
        if _agrees_exactly(port, spec):
            continue
        problems = _port_problems(port, spec)
        if problems:
            where = ("input " if direction == "in" else "output ") + port.label
            info.errors.append(
                DeclaredMismatchError(
                    f"declared {_declared_brief(port)} but inferred {spec.brief()}: {'; '.join(problems)}",
                    layer=info.ref,
                    port=where,
                    hint=_fix_hint(spec),
                )
            )


def _agrees_exactly(port: PortRecord, spec: TensorSpec) -> bool:
    """The common case, decided fast: a static spec whose dims and precision are exactly those declared."""
    return port.precision == spec.element_type.precision and port.dims == spec.shape.port_dims


def _port_problems(port: PortRecord, spec: TensorSpec) -> list[str]:
    problems = []
    if port.precision:
        declared_et = element_type(port.precision)
        if declared_et is None:
            problems.append(f"precision {clip_text(port.precision)!r} is not a known element type")
        elif DYNAMIC not in (declared_et, spec.element_type) and declared_et != spec.element_type:
            problems.append(f"precision {port.precision} is {declared_et.name}, inferred {spec.element_type.name}")
    dims = spec.shape.dims
    if dims is None:
        return problems
    if not port.dims:
        if dims:
            problems.append(f"no <dim> declared (a scalar) but the inferred rank is {len(dims)}")
        return problems
    if len(port.dims) != len(dims):
        problems.append(f"{len(port.dims)} dims declared, inferred rank is {len(dims)}")
        return problems
    differ = [axis for axis, (declared, inferred) in enumerate(zip(port.dims, dims))
              if declared != -1 and not inferred.contains(declared)]
    problems.extend(f"dim {i} is declared {port.dims[i]}, inferred {dims[i]}" for i in differ[:MESSAGE_DIMS])
    if len(differ) > MESSAGE_DIMS:
        problems.append(f"{len(differ) - MESSAGE_DIMS} more dims differ")
    return problems


def _fix_hint(spec: TensorSpec) -> str | None:
    dims = spec.shape.dims
    if dims is None:
        return None
    written = dims_text([str(d.lo) if d.is_static else "-1" for d in dims], ", ")
    return f"declare <dim>s {written or '(none: a scalar)'} and precision {spec.element_type.precision}"
