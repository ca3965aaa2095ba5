"""Type and shape inference over the graph, and the declared-vs-inferred comparison.

One pass in topological order infers each layer's output specs from its inputs (partial shapes with
dynamic dims and intervals) and compares them with the ports' declared ``<dim>``s and ``precision``.
It collects every finding instead of stopping at the first; :meth:`Inference.raise_first` turns them
into the one error ``load`` raises. A layer whose inference fails, or whose type is unknown, passes
its *declared* output specs downstream so that later layers are still checked.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

import numpy as np

from .errors import (
    DeclaredMismatchError,
    InferenceError,
    IRError,
    LayerRef,
    ModelFormatError,
    UnsupportedError,
    clip_text,
)
from .graph import Graph
from .ir.records import LayerRecord, PortRecord, Record
from .ops.registry import OpDef, find_op, is_known_type, layer_ref, supported_summary
from .types import (
    DYNAMIC,
    DYNAMIC_SHAPE,
    MESSAGE_DIMS,
    NUMPY_MAX_RANK,
    ElementType,
    PartialShape,
    TensorSpec,
    dims_text,
    element_type,
)


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

    __slots__ = ("layer", "ref", "op", "inputs", "outputs", "params", "errors")

    def __init__(self, layer: LayerRecord, ref: LayerRef, op: OpDef | None, inputs: list[TensorSpec]) -> None:
        self.layer = layer
        self.ref = ref
        self.op = op
        self.inputs = inputs
        self.outputs: list[TensorSpec] = []
        self.params: dict[str, Any] = {}
        self.errors: list[IRError] = []

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


class OpContext:
    """What an operation's ``infer`` sees: its layer, input specs, constant inputs and attributes."""

    def __init__(self, info: LayerInference, const_value, strict: bool, weights) -> None:
        self.layer = info.layer
        self.weights = weights
        self.ref = info.ref
        self.op = info.op
        self.inputs = info.inputs
        self.strict = strict
        self._const_value = const_value

    def const_value(self, position: int) -> np.ndarray | None:
        """The value of input ``position`` when it is constant (a Const, or foldable from Consts)."""
        return self._const_value(self.layer.id, position)

    def input_label(self, position: int) -> str:
        names = self.op.input_names if self.op else ()
        name = f" ({names[position]})" if position < len(names) else ""
        port = self.layer.inputs[position].label if position < len(self.layer.inputs) else f"port {position}"
        return f"input {port}{name}"

    def fail(self, detail: str, *, position: int | None = None, hint: str | None = None) -> NoReturn:
        """Raise an InferenceError for this layer, listing its input specs."""
        raise InferenceError(
            f"{detail} (inputs: {self.describe_inputs()})",
            layer=self.ref,
            port=None if position is None else self.input_label(position),
            hint=hint,
        )

    def describe_inputs(self) -> str:
        names = self.op.input_names if self.op else ()
        return ", ".join(
            f"{names[i] if i < len(names) else i}={spec.brief()}" for i, spec in enumerate(self.inputs)
        )

    def attr(self, name: str) -> str | None:
        return self.layer.data.get(name)

    def attr_shown(self, name: str) -> str:
        """``name='value'`` for a message, the value clipped (an attribute may be megabytes long)."""
        text = self.attr(name)
        return f"{name}={text!r}" if text is None else f"{name}={clip_text(text)!r}"

    def attr_int(self, name: str, default: int) -> int:
        """An integer attribute: an optional sign and ASCII digits, within int64 (as OpenVINO reads it)."""
        text = self.attr(name)
        if text is None:
            return default
        if len(text) <= 18 and text.isdigit() and text.isascii():  # the common case, always below 2**63
            return int(text)
        stripped = text.strip()
        digits = stripped[1:] if stripped[:1] in ("+", "-") else stripped
        if not (digits.isascii() and digits.isdigit()):
            raise ModelFormatError(f"attribute {self.attr_shown(name)} is not an integer", layer=self.ref,
                                   hint=f"write e.g. {name}=\"0\"")
        significant = digits.lstrip("0")
        if len(significant) <= 19:  # the digits of 2**63; never near int()'s 4300-digit limit
            value = -int(significant or "0") if stripped[0] == "-" else int(significant or "0")
            if -(2**63) <= value < 2**63:
                return value
        raise ModelFormatError(f"attribute {self.attr_shown(name)} is outside the int64 range", layer=self.ref)

    def attr_choice(self, name: str, choices: dict[str, str], default: str) -> str:
        """An enumerated attribute, case-insensitive; ``choices`` maps accepted spellings to meanings."""
        text = self.attr(name)
        if text is None:
            return default
        value = choices.get(text.strip().lower())
        if value is None:
            raise ModelFormatError(
                f"attribute {self.attr_shown(name)} is not one of {', '.join(sorted(choices))}", layer=self.ref
            )
        return value

    def attr_element_type(self, name: str) -> ElementType:
        text = self.attr(name)
        if text is None:
            raise ModelFormatError(f"the required attribute '{name}' is missing", layer=self.ref)
        et = element_type(text)
        if et is None:
            raise UnsupportedError(f"attribute {self.attr_shown(name)} is not a known element type", layer=self.ref)
        return et


class Inference:
    """The result of inference over a whole graph."""

    def __init__(self, graph: Graph, layers: dict[str, LayerInference], folder: _ConstantFolder) -> None:
        self.graph = graph
        self.layers = layers
        self._folder = folder

    def constant_input(self, layer_id: str, position: int) -> np.ndarray | None:
        """The value of a layer's input when it is constant (a Const, or computable from small Consts)."""
        return self._folder.input_value(layer_id, position)

    @property
    def errors(self) -> list[IRError]:
        return [e for info in self.layers.values() for e in info.errors]

    def output_spec(self, layer_id: str, position: int) -> TensorSpec:
        return self.layers[layer_id].outputs[position]

    def raise_first(self) -> None:
        """Raise the error ``load`` reports: all unknown operations at once, else the first finding."""
        errors = self.errors
        unsupported = [e for e in errors if isinstance(e, UnsupportedError)]
        unknown = [info.ref for info in self.layers.values() if info.op is None]
        if unknown:
            from .unsupported import unsupported_error

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
    check_declared: bool = True,
) -> Inference:
    """Infer every layer's outputs in topological order, collecting all findings.

    ``input_specs`` overrides Parameter specs by layer id (re-inference for concrete inputs);
    ``check_declared`` compares port dims and precisions with what was inferred.
    """
    layers: dict[str, LayerInference] = {}
    folder = _ConstantFolder(graph, layers)
    memo = None if strict else _InferenceMemo(folder.input_value, graph.net.weights)

    for layer_id in graph.order:
        layer = graph.layers[layer_id]
        inputs = [layers[src].outputs[pos] for src, pos in graph.sources[layer_id]]
        info = LayerInference(layer, layer_ref(layer), find_op(layer), inputs)
        layers[layer_id] = info
        if check_declared:
            _compare_ports(info, "in", layer.inputs, inputs)
        if input_specs is not None and layer_id in input_specs:
            info.outputs = [input_specs[layer_id]]
            info.params = {}
        else:
            _infer_layer(info, folder.input_value, strict, graph.net.weights, memo)
        for spec in info.outputs:  # one cheap check per layer: an output of a rank numpy cannot hold
            dims = spec.shape.dims
            if dims is not None and len(dims) > NUMPY_MAX_RANK:
                _check_ranks(info)
                break
        if check_declared:
            _compare_ports(info, "out", layer.outputs, info.outputs)
    return Inference(graph, layers, folder)


class _InferenceMemo:
    """Results of ``op.infer`` reused for layers that repeat an earlier one: the same operation, ``<data>``
    attributes and input specs, and equal values of the constant inputs it read (Gather's axis).

    Large IRs repeat the same blocks thousands of times; this makes their inference a dictionary
    lookup per layer. Only successful inferences are kept (errors name their own layer); Parameter and
    Const are never memoised (they read their ports and the weights), nor strict inference (its
    params name the layer).
    """

    _SKIP = ("Parameter", "Const")
    _MAX_CONST_BYTES = 64  # constant inputs compared by value; larger ones make a layer not memoisable

    def __init__(self, const_value, weights) -> None:
        self._const_value = const_value
        self._weights = weights
        self._entries: dict[tuple, list[tuple[tuple, list[TensorSpec], dict[str, Any]]]] = {}

    def infer(self, info: LayerInference) -> tuple[list[TensorSpec], dict[str, Any]]:
        """``info.op.infer`` for this layer, or an earlier layer's equal result."""
        op, layer = info.op, info.layer
        if op.type in self._SKIP:
            return op.infer(OpContext(info, self._const_value, False, self._weights))
        key = (op.type, op.version, tuple(layer.data.items()), tuple(info.inputs))
        candidates = self._entries.get(key)
        if candidates is not None:
            for reads, outputs, params in candidates:
                if all(_fingerprint(self._const_value(layer.id, position)) == seen for position, seen in reads):
                    return list(outputs), dict(params)
        reads = []

        def recording_const_value(layer_id: str, position: int) -> np.ndarray | None:
            value = self._const_value(layer_id, position)
            reads.append((position, _fingerprint(value)))
            return value

        outputs, params = op.infer(OpContext(info, recording_const_value, False, self._weights))
        if all(seen is not False for _, seen in reads):
            self._entries.setdefault(key, []).append((tuple(reads), list(outputs), dict(params)))
        return outputs, params


def _fingerprint(value: np.ndarray | None):
    return constant_fingerprint(value, _InferenceMemo._MAX_CONST_BYTES)


def constant_fingerprint(value: np.ndarray | None, max_bytes: int):
    """What identifies a constant's value when comparing layers (dtype, shape and bytes); None when there
    is no constant, False when it is larger than ``max_bytes`` (too large to compare cheaply)."""
    if value is None:
        return None
    if value.nbytes > max_bytes:
        return False
    return value.dtype.str, value.shape, value.tobytes()


def _infer_layer(info: LayerInference, const_value, strict: bool, weights, memo: _InferenceMemo | None) -> None:
    layer = info.layer
    if info.op is None:
        info.errors.append(_unknown_op_error(info))
        info.outputs = [_declared_spec(p, info) for p in layer.outputs]
        return
    expected = len(info.op.input_names)
    if len(info.inputs) != expected:
        info.errors.append(
            InferenceError(
                f"{info.op.label} takes {expected} input(s) ({', '.join(info.op.input_names)}),"
                f" the layer has {len(info.inputs)}",
                layer=info.ref,
            )
        )
        info.outputs = [_declared_spec(p, info) for p in layer.outputs]
        return
    try:
        if memo is not None:
            outputs, params = memo.infer(info)
        else:
            outputs, params = info.op.infer(OpContext(info, const_value, strict, weights))
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


def _unknown_reason(layer: LayerRecord) -> str:
    if is_known_type(layer.type):
        return f"version '{clip_text(layer.version)}' of {layer.type} is not implemented"
    return f"operation type '{clip_text(layer.type)}' is not implemented"


def _unknown_op_error(info: LayerInference) -> UnsupportedError:
    return UnsupportedError(f"{_unknown_reason(info.layer)}. Supported: {supported_summary()}", layer=info.ref)


FOLD_MAX_BYTES = 1 << 20  # the largest layer output evaluated at load (here and when building plans)


def static_nbytes(spec: TensorSpec) -> int:
    """The bytes a tensor of this static spec (with a numpy dtype) takes."""
    return math.prod(spec.shape.to_shape()) * spec.element_type.dtype.itemsize


class _ConstantFolder:
    """Values of layers computable from Consts alone, evaluated on demand (for inputs that must be
    constant, such as Gather's axis). Walks producers without recursion, so chains of any length fold;
    a layer whose output is above FOLD_MAX_BYTES is not folded, so its value and everything computed
    from it count as not constant (a small axis never needs them)."""

    def __init__(self, graph: Graph, layers: dict[str, LayerInference]) -> None:
        self.graph, self.layers = graph, layers
        self.values: dict[str, np.ndarray | None] = {}
        self._position: dict[str, int] | None = None  # topological position, built on the first fold

    def input_value(self, layer_id: str, position: int) -> np.ndarray | None:
        producer = self.graph.sources[layer_id][position][0]
        order, queued, stack = [], set(), [producer]
        while stack:
            current = stack.pop()
            if current in self.values or current in queued:
                continue
            info = self.layers[current]
            if "value" in info.params:
                self.values[current] = info.params["value"]
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
        for current in order:
            self.values[current] = self._evaluate(self.layers[current])
        return self.values[producer]

    @staticmethod
    def _foldable(info: LayerInference) -> bool:
        """Whether to evaluate this layer: a kernel, one static output, at most FOLD_MAX_BYTES."""
        if info.op is None or info.op.kernel is None or info.errors or len(info.outputs) != 1:
            return False
        spec = info.outputs[0]
        if not spec.shape.is_static or spec.element_type.dtype is None:
            return False
        return static_nbytes(spec) <= FOLD_MAX_BYTES

    def _evaluate(self, info: LayerInference) -> np.ndarray | None:
        values = [self.values.get(src) for src, _ in self.graph.sources[info.layer.id]]
        if any(v is None for v in values):
            return None
        try:
            return info.op.kernel(*values, **info.params)
        except IRError:
            raise
        except Exception:  # folding is an optimisation of inference: a failure means "not constant"
            return None


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
