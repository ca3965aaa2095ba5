"""The operation API: what an operation declaration is made of, and everything an operation sees.

An operation version is one :class:`OpDef`. Everything specific to it lives there: its type, version and
opset range, its inputs (names and roles), its attribute schema, its type and shape inference, value
inference for shape subgraphs, validation findings of its own, input value ranges for generated data,
how a batch axis passes through it, and its kernel (plus a static-shape specialisation). Op modules
(``ir_runner/ops/*.py``) import only this module, ``types``, ``errors``, ``parallel`` and ``ir.weights``;
inference, plan and validation import the ops, never the reverse (``tests/test_layering.py`` checks it).

A module lists its declarations in ``OPS``; the registry collects them. Third-party operations use the
same declaration through :func:`ir_runner.register_op` or the ``ir_runner.ops`` entry-point group
(see ``docs/extending.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from ..errors import InferenceError, LayerRef, ModelFormatError, UnsupportedError, clip_text
from ..parallel import run_chunked
from ..record import Record
from ..types import (
    DYNAMIC,
    DYNAMIC_SHAPE,
    Dim,
    ElementType,
    PartialShape,
    TensorSpec,
    broadcast_dims,
    element_type,
    merge_dims,
)

if TYPE_CHECKING:
    from ..ir.records import LayerRecord
    from ..ir.weights import Weights

LATEST_OPSET = 16  # the newest opset that holds every operation of the one before it
NEWEST_OPSET = 17
"""The newest opset OpenVINO defines. OpenVINO 2026.4's opset17 is still being filled: of the earlier
operations it holds only Parameter, Convert and ShapeOf (``opset17_tbl.hpp``), and reading an IR with
``type="Add" version="opset17"`` fails there. Those three declarations reach it; the others stop at
LATEST_OPSET, as OpenVINO's tables do (tests/test_opset_ranges.py compares every opset's table)."""
FOLD_MAX_BYTES = 1 << 20  # the largest layer output evaluated at load (inference, plan and validation)

DECIDING_ROLES = frozenset({"axis", "axes", "shape", "target_shape", "begin", "end", "stride", "start", "stop",
                            "step", "pads", "k", "depth", "repeats", "split_lengths", "sizes", "scales", "order",
                            "counted", "trip_count", "execution_condition", "frame_size"})
"""Input roles whose values decide an operation's output shape or kernel parameters: when such an input is
computed at run time, the plan is made per value of the inputs it comes from. ``counted``: an input whose
values decide an output's length (NonZero's data); ``trip_count`` and ``execution_condition``: a Loop's
iteration count (the length of its concatenated outputs)."""

InferFn = Callable[["OpContext"], "tuple[list[TensorSpec], dict[str, Any]]"]
KernelFn = Callable[..., Any]
PrepareFn = Callable[["dict[str, Any]", "list[TensorSpec]", "list[TensorSpec]", "list[np.ndarray | None]"], KernelFn]
PartialValue = tuple[Dim, ...]
"""The known part of a small integer tensor's value (a shape being computed): one Dim per element, each
an interval (``Dim(3, 3)`` a known 3, ``Dim(0, None)`` unknown). Scalars are 1-tuples."""
ValueFn = Callable[["OpContext"], "list[PartialValue | None]"]


class Attr(Record):
    """One ``<data>`` attribute of an operation: its default as written in an IR (None: required, or no
    default) and, for enumerations, the accepted spellings (lower case)."""

    __slots__ = ("name", "default", "choices")

    def __init__(self, name: str, default: str | None = None, choices: Sequence[str] | None = None) -> None:
        self.name = name
        self.default = default
        self.choices = tuple(choices) if choices is not None else None


class InputFit(Record):
    """What values fit an input (for generated data): integers in ``[low, high]`` (``kind='index'``), 0/1
    (``kind='cond'``), or whatever fits the layer's own output (``kind='through'``, an elementwise op such
    as Convert: look at what the output feeds). ``why`` explains it to the user."""

    __slots__ = ("kind", "low", "high", "why")

    def __init__(self, kind: str, low: int = 0, high: int = 0, why: str = "") -> None:
        self.kind = kind
        self.low = low
        self.high = high
        self.why = why


class Finding(Record):
    """A validation warning that is not an error of inference (``strict`` loading refuses what it warns
    about)."""

    __slots__ = ("layer", "port", "message", "hint")

    def __init__(self, layer: LayerRef, port: str, message: str, hint: str | None = None) -> None:
        self.layer = layer
        self.port = port
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.layer}, {self.port}: {self.message}"
        return text + (f"\n  hint: {self.hint}" if self.hint else "")


class Explanation(Record):
    """An operation's account of how two computations of its output differ (``OpDef.explain``): ``count`` of
    the differing elements it accounts for and ``text``, one sentence saying how (e.g. "3 of 4096 values one
    level apart ..."). Every differing element accounted for: the difference follows from the inputs' (or
    from a formula of the device the operation documents), and what is computed from it inherits it."""

    __slots__ = ("count", "text")

    def __init__(self, count: int, text: str) -> None:
        self.count = count
        self.text = text


class OpDef(Record):
    """One operation version: everything ir-run knows of it.

    - ``type``, ``version``, ``first_opset``..``last_opset``: which layers it serves (``type="Gather"
      version="opset8"``); types match case-insensitively. ``absent``: opsets of that range whose OpenVINO
      table leaves the type out (opset2 has no RNNCell or ShuffleChannels; opset3 has them again).
      ``domain`` names a custom opset instead (``version="my_opset"`` or ``"extension"`` in the IR) for
      operations registered by extensions.
    - ``inputs``: input names; ``roles`` the role of each (``data``, ``indices``, ``condition``, ``shape``,
      ``axis``...; by default each name is its role). ``min_inputs``: how many a layer must have when the
      last ones are optional (Squeeze's axes); the kernel then receives only the inputs the layer has.
    - ``attrs``: the ``<data>`` attribute schema (defaults, allowed values) that inspect and validate show.
    - ``infer(ctx)`` checks inputs and attributes and returns the output specs and the kernel parameters;
      it must depend only on the layer's ``<data>``, its input specs and the constant inputs it reads
      (inference reuses results of equal layers). When a value it needs (an axis, a target shape) is not
      constant it infers what it can (rank, dynamic dims) and leaves the parameter None: the plan is
      then made per value of the inputs that decide it.
    - ``value(ctx)``: partial values of small integer outputs (shape subgraphs) from the inputs' partial
      values (``ctx.partial_value``), as OpenVINO's bounds and value propagation.
    - ``findings(ctx, params)``: validation warnings of its own (e.g. constant indices out of range).
    - ``fit(params, inputs, position)``: an :class:`InputFit` for generated data fed to ``position``.
    - ``kernel(*inputs, **params)`` computes the outputs (one array; a tuple for several outputs). None for
      the layers the plan handles itself (Parameter, Const, Result). ``prepare(params, input_specs,
      output_specs, constant_inputs)`` returns a kernel specialised for static shapes, called as
      ``fn(*inputs)``; for a layer of several outputs, an output that no layer reads has None as its spec,
      and the kernel may return None for it. A kernel with ``accepts_out = True`` also takes ``out=`` (see plan.py).
    - ``views``: the kernel may return views of its inputs (Reshape, Transpose...); the plan then copies
      an output that must be owned by the caller. Without it, a kernel returns new arrays.
    - ``in_place``: the input positions whose buffer the kernel may write its output into: element i of the
      output depends only on element i of each input, and ``kernel(*inputs, out=inputs[p])`` (the kernel
      accepting ``out=``, that input of the output's dtype and shape) gives the values of ``kernel(*inputs)``:
      it reads no input after writing ``out``. The plan uses it for inputs no later layer reads
      (:mod:`ir_runner.inplace`). Empty: never.
    - ``batch(params, inputs, outputs, axes)``: how a batch axis moves through the layer, for chunked runs
      (``axes``: per input, the batch axis or None); returns per output the batch axis (or None), or a
      string saying why the layer mixes rows. None: the op has no rule and such runs are refused.
    - ``explain(params, inputs, other_inputs, output, other, differ)``: an :class:`Explanation` of how the
      layer's output differs from another computation of it (``other``, a device's; ``other_inputs`` its
      inputs there, None where unknown) at the elements ``differ``, for crosscheck; None: nothing to say.
    - ``min_inputs``: fewer inputs a layer may have (the trailing ones are optional; Pad's ``pad_value``);
      ``variadic``: the last input may repeat (Einsum, Concat, If, Loop). By default every input is required,
      once.
    - ``shape_only``: the outputs depend only on the inputs' shapes and types, never on their values
      (ShapeOf): a shape computed from it does not make the model's plan depend on input values.
    - ``exact``: results are bit-exact against OpenVINO's reference (False: within the bound stated in
      the kernel's docstring).
    - ``origin``: who declared it (set by the registry: ir-run's module, an extension's distribution).
    - ``state``: the layer reads or writes a model variable (a stateful model's memory, see ``ir_runner.state``):
      ``'read'``, its output is the variable's value (``params['variable_id']``, ``params['declared']`` the
      variable's declared TensorSpec), which a run feeds from its state once the variable is set, else the
      kernel computes the initial value; ``'write'``, a sink that stores its input in the variable
      ``params['variable_id']`` when the run ends. Such layers are never folded into constants.
    - ``precision_anchor``: under a bf16/f16 inference-precision hint, OpenVINO's CPU plugin always runs this
      operation in the hinted type, and keeps in f32 the layers after the last such one on every path to an
      output (``Graph::EnforceInferencePrecision``'s "significant" nodes: convolutions, matrix products,
      recurrent cells, ROIPooling, Interpolate). Read by ``ir_runner.precision``'s emulation.
    - ``at_run(ctx, arrays)``: the kernel parameters ``infer`` gives when every input is known, ``arrays`` (a
      generic plan's layer whose parameters follow the lengths, a Reshape's target from a KV cache's shape:
      :mod:`ir_runner.lengths`), computed without inference in the plain cases; None in any other (inference
      then runs). Where it returns parameters, inference of those arrays succeeds with the same ones.
      ``ctx`` is the layer's context for the generic inference's input specs (read its attributes only).
    """

    __slots__ = ("type", "version", "first_opset", "last_opset", "input_names", "infer", "kernel", "prepare",
                 "roles", "attrs", "value", "findings", "fit", "views", "batch", "shape_only", "exact", "domain",
                 "origin", "deciding", "min_inputs", "variadic", "absent", "explain", "state", "precision_anchor",
                 "at_run", "in_place")

    def __init__(self, type: str, version: int, first_opset: int, last_opset: int, input_names: tuple[str, ...],
                 infer: InferFn, kernel: KernelFn | None = None, prepare: PrepareFn | None = None, *,
                 roles: Sequence[str] | None = None, attrs: Sequence[Attr] = (), value: ValueFn | None = None,
                 findings: Callable | None = None, fit: Callable | None = None, views: bool = False,
                 batch: Callable | None = None, shape_only: bool = False, exact: bool = True, domain: str | None = None,
                 origin: str | None = None, min_inputs: int | None = None, variadic: bool = False,
                 absent: Sequence[int] = (),
                 explain: Callable[..., Explanation | None] | None = None,
                 state: str | None = None, precision_anchor: bool = False,
                 at_run: Callable[[OpContext, tuple[np.ndarray, ...]], dict | None] | None = None,
                 in_place: tuple[int, ...] = ()) -> None:
        self.type = type
        self.version = version
        self.first_opset = first_opset
        self.last_opset = last_opset
        self.input_names = tuple(input_names)
        self.infer = infer
        self.kernel = kernel
        self.prepare = prepare
        self.roles = tuple(roles) if roles is not None else self.input_names
        self.attrs = tuple(attrs)
        self.value = value
        self.findings = findings
        self.fit = fit
        self.views = views
        self.batch = batch
        self.shape_only = shape_only
        self.exact = exact
        self.domain = domain.lower() if domain else None
        self.origin = origin
        self.deciding = tuple(i for i, role in enumerate(self.roles) if role in DECIDING_ROLES)
        self.min_inputs = len(self.input_names) if min_inputs is None else min_inputs
        self.variadic = variadic
        self.absent = frozenset(absent)
        self.explain = explain
        if state not in (None, "read", "write"):
            raise ValueError(f"state must be None, 'read' or 'write', got {state!r}")
        self.state = state
        self.precision_anchor = precision_anchor
        self.at_run = at_run
        self.in_place = tuple(in_place)

    def takes_inputs(self, count: int) -> bool:
        """Whether a layer with ``count`` inputs fits this operation (optional and repeated inputs)."""
        return self.min_inputs <= count and (self.variadic or count <= len(self.input_names))

    @property
    def label(self) -> str:
        return f"{self.type}-{self.version}"

    def covers(self, opset: int) -> bool:
        return self.domain is None and self.first_opset <= opset <= self.last_opset and opset not in self.absent

    @property
    def opsets(self) -> str:
        """``opset3``, ``opset1..opset16``, ``opset1, opset3..opset16`` (with an absent opset), or the domain."""
        if self.domain is not None:
            return self.domain
        runs: list[list[int]] = []
        for opset in range(self.first_opset, self.last_opset + 1):
            if opset in self.absent:
                continue
            if runs and runs[-1][1] == opset - 1:
                runs[-1][1] = opset
            else:
                runs.append([opset, opset])
        return ", ".join(f"opset{a}" if a == b else f"opset{a}..opset{b}" for a, b in runs)

    def defaults(self) -> dict[str, str]:
        """The attributes with a default, as written in an IR."""
        return {a.name: a.default for a in self.attrs if a.default is not None}


class Body:
    """A layer's sub-graph (``<body>``, ``<then_body>``, ``<else_body>``) as operations with bodies use it
    (TensorIterator, Loop, If): implemented by ``ir_runner.subgraph``, handed out by :meth:`OpContext.body`.

    ``parameters`` and ``results`` are the internal layer ids of its Parameters and Results (the ids port maps
    name), in document order."""

    parameters: tuple[str, ...]
    results: tuple[str, ...]

    def infer(self, specs: dict[str, TensorSpec], values: dict[str, np.ndarray] | None = None
              ) -> dict[str, TensorSpec]:
        """The Results' specs for these Parameter specs (and constant values), by internal layer id; an
        IRError naming the outer layer and the inner one when the body cannot take them."""
        raise NotImplementedError

    def constants(self, specs: dict[str, TensorSpec], values: dict[str, np.ndarray] | None = None
                  ) -> dict[str, np.ndarray]:
        """The values of the Results that are constant for these Parameter specs (and constant values), by
        internal layer id (a Loop's body condition that is always true)."""
        raise NotImplementedError

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The Results' values for these Parameter values (planned once per input signature)."""
        raise NotImplementedError


class OpContext:
    """What an operation's ``infer`` (and ``value``, ``findings``) sees: its layer, input specs, the values of
    constant inputs, the partial values of shape-like inputs, its sub-graphs, and typed attribute readers."""

    __slots__ = ("layer", "ref", "op", "inputs", "strict", "weights", "_const_value", "_partial_value", "_bodies")

    def __init__(self, layer: LayerRecord, ref: LayerRef, op: OpDef | None, inputs: list[TensorSpec],
                 const_value: Callable[[str, int], np.ndarray | None], strict: bool, weights: Weights | None,
                 partial_value: Callable[[str, int], PartialValue | None] | None = None,
                 bodies: Callable[[LayerRecord, str], Body] | None = None) -> None:
        self.layer = layer
        self.ref = ref
        self.op = op
        self.inputs = inputs
        self.strict = strict
        self.weights = weights
        self._const_value = const_value
        self._partial_value = partial_value
        self._bodies = bodies

    def body(self, tag: str = "body") -> Body:
        """The layer's sub-graph ``<tag>`` (a ModelFormatError when the layer has none)."""
        if not self.layer.bodies or tag not in self.layer.bodies or self._bodies is None:
            raise ModelFormatError(f"the layer has no <{tag}> sub-graph", layer=self.ref)
        return self._bodies(self.layer, tag)

    def port_map(self, tag: str = "port_map") -> tuple[tuple[str, dict[str, str]], ...]:
        """The children of the layer's ``<tag>`` mapping element (``port_map``, ``back_edges``...) as
        (tag, attributes); empty when absent."""
        return (self.layer.maps or {}).get(tag, ())

    def const_value(self, position: int) -> np.ndarray | None:
        """The value of input ``position`` when it is constant (a Const, or foldable from Consts)."""
        return self._const_value(self.layer.id, position)

    def partial_value(self, position: int) -> PartialValue | None:
        """What is known of input ``position``'s value, element by element (a constant's exact values, or the
        bounds value inference found), for 0-D/1-D integer inputs; None when nothing is known."""
        value = self.const_value(position)
        if value is not None:
            return partial_of(value)
        return self._partial_value(self.layer.id, position) if self._partial_value is not None else None

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
        return self._int64(name, text)

    def _int64(self, name: str, text: str) -> int:
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

    def attr_ints(self, name: str, default: Sequence[int] | None = None) -> list[int]:
        """A comma-separated list of integers (``'1,2,3'``; empty text: an empty list)."""
        text = self.attr(name)
        if text is None:
            if default is None:
                raise ModelFormatError(f"the required attribute '{name}' is missing", layer=self.ref)
            return list(default)
        parts = [p for p in text.split(",") if p.strip()]
        return [self._int64(name, p) if not p.isdigit() else int(p) for p in parts]

    def attr_float(self, name: str, default: float | None = None) -> float:
        """A floating-point attribute (``'1e-05'``, ``'inf'``)."""
        text = self.attr(name)
        if text is None:
            if default is None:
                raise ModelFormatError(f"the required attribute '{name}' is missing", layer=self.ref)
            return default
        try:
            return float(text)
        except ValueError:
            raise ModelFormatError(f"attribute {self.attr_shown(name)} is not a number", layer=self.ref) from None

    def attr_floats(self, name: str, default: Sequence[float] | None = None) -> list[float]:
        """A comma-separated list of floats."""
        text = self.attr(name)
        if text is None:
            if default is None:
                raise ModelFormatError(f"the required attribute '{name}' is missing", layer=self.ref)
            return list(default)
        try:
            return [float(p) for p in text.split(",") if p.strip()]
        except ValueError:
            raise ModelFormatError(f"attribute {self.attr_shown(name)} is not a list of numbers",
                                   layer=self.ref) from None

    def attr_bool(self, name: str, default: bool) -> bool:
        """A boolean attribute: ``true``/``false`` (also ``1``/``0``), case-insensitive."""
        return self.attr_choice(name, {"true": True, "1": True, "false": False, "0": False}, default)

    def attr_choice(self, name: str, choices: dict[str, Any], default: Any) -> Any:
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

    def common_element_type(self, *positions: int) -> ElementType:
        """The element type the inputs at ``positions`` share (a dynamic one takes the others'); an
        InferenceError at the first input that differs."""
        et = self.inputs[positions[0]].element_type
        for position in positions[1:]:
            other = self.inputs[position].element_type
            if et == DYNAMIC:
                et = other
            elif other != DYNAMIC and other != et:
                names = ", ".join(self.op.input_names[p] for p in positions if p < len(self.op.input_names))
                self.fail(f"element types of {names} must be equal, got {et} and {other}", position=position)
        return et

    def attr_element_type(self, name: str) -> ElementType:
        text = self.attr(name)
        if text is None:
            raise ModelFormatError(f"the required attribute '{name}' is missing", layer=self.ref)
        et = element_type(text)
        if et is None:
            raise UnsupportedError(f"attribute {self.attr_shown(name)} is not a known element type", layer=self.ref)
        return et


def partial_of(value: np.ndarray) -> PartialValue | None:
    """The partial value of a constant: each element as an exact Dim (integers only, at most 1-D, at most
    64 elements; a negative element is kept as the Dim of its value, for Reshape's -1)."""
    if value.ndim > 1 or value.size > 64 or value.dtype.kind not in "iub":
        return None
    return tuple(Dim(int(v), int(v)) for v in value.reshape(-1))


# -- broadcasting, shared by Select and the elementwise operations ------------------------------------------

BROADCAST_MODES = {"numpy": "numpy", "none": "none", "explicit": "none", "pdpd": "pdpd"}


def numpy_merge(a: PartialShape, b: PartialShape) -> PartialShape | None:
    """Both-ways numpy broadcast of two partial shapes, or None when impossible."""
    if a.dims is None or b.dims is None:
        return DYNAMIC_SHAPE
    if a.dims == b.dims and a.is_static:
        return a
    rank = max(len(a.dims), len(b.dims))
    one = PartialShape.of((1,) * rank).dims
    da = one[: rank - len(a.dims)] + a.dims
    db = one[: rank - len(b.dims)] + b.dims
    dims = [broadcast_dims(x, y) for x, y in zip(da, db)]
    return None if None in dims else PartialShape(tuple(dims))


def equal_merge(a: PartialShape, b: PartialShape) -> PartialShape | None:
    """The intersection of two partial shapes that must be equal, or None."""
    if a.dims is None:
        return b
    if b.dims is None:
        return a
    if len(a.dims) != len(b.dims):
        return None
    dims = [merge_dims(x, y) for x, y in zip(a.dims, b.dims)]
    return None if None in dims else PartialShape(tuple(dims))


def pdpd_merge(dst: PartialShape, src: PartialShape, axis: int) -> PartialShape | None:
    """Fit ``src`` into ``dst`` one way from ``axis`` (-1: aligned right), as OpenVINO's PDPD rule."""
    if dst.dims is None or src.dims is None:
        return DYNAMIC_SHAPE
    if len(src.dims) > len(dst.dims) or axis < -1:
        return None
    start = len(dst.dims) - len(src.dims) if axis == -1 else axis
    if start + len(src.dims) > len(dst.dims):
        return None
    dims = list(dst.dims)
    for i, s in enumerate(src.dims):
        d = dims[start + i]
        if d.is_static and s.is_static and s.lo > d.lo:
            return None
        merged = broadcast_dims(d, s)
        if merged is None:
            return None
        dims[start + i] = merged
    return PartialShape(tuple(dims))


def broadcast_merge(mode: str, a: PartialShape, b: PartialShape, axis: int = -1) -> PartialShape | None:
    """``a`` and ``b`` merged by an ``auto_broadcast`` mode (as :func:`broadcast_read` gives it): numpy both
    ways, pdpd ``b`` fitted into ``a`` from ``axis``, none equal shapes; None when they do not broadcast."""
    if mode == "pdpd":
        return pdpd_merge(a, b, axis)
    return (numpy_merge if mode == "numpy" else equal_merge)(a, b)


def pdpd_shape(shape: tuple[int, ...], rank: int, axis: int) -> tuple[int, ...]:
    """A pdpd-broadcast operand's shape padded with 1s to ``rank`` (placed at ``axis``; -1: aligned right),
    so that numpy broadcasting then does the rest."""
    start = rank - len(shape) if axis == -1 else axis
    return (1,) * start + tuple(shape) + (1,) * (rank - start - len(shape))


def broadcast_read(ctx: OpContext) -> tuple[str, int]:
    """The ``auto_broadcast`` mode of a layer (numpy by default) and, for pdpd, its axis."""
    mode = ctx.attr_choice("auto_broadcast", BROADCAST_MODES, "numpy")
    axis = ctx.attr_int("auto_broadcast.auto_broadcast_axis", 0) if mode == "pdpd" else 0
    return mode, axis


# -- batch axes, shared by the operations' ``batch`` rules ---------------------------------------------------

def no_batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]) -> list[None]:
    """No batch axis reaches the outputs (Parameter, Const: they have no inputs; the chunked run places the
    batch axis of a model input itself)."""
    return [None] * len(outputs)


def keep_batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]) -> list[int | None]:
    """Every output keeps the first input's batch axis at the same position (element-wise on one input:
    Convert, Result)."""
    return [axes[0]] * len(outputs)


class BatchAxis(int):
    """A batch axis as the chunked run's proof hands it to the ``batch`` rules: an int (the axis) that also
    knows the block's ``rows`` (the axis's dim is a whole multiple of them: a reshape may have merged a
    row's elements into it, ``[r,8,32] -> [8r,32]``)."""

    rows: int

    def __new__(cls, axis: int, rows: int) -> BatchAxis:
        made = super().__new__(cls, axis)
        made.rows = rows
        return made


class Sized:
    """The batch kind of a value computed from the block's shape, not from its rows (ir_runner.batching)."""

    def __repr__(self) -> str:
        return "SIZED"


SIZED = Sized()
"""In a ``batch`` rule's ``axes``: the input is computed from the block's shape (ShapeOf of rows)."""


class RowOffsets(Sized):
    """In a ``batch`` rule's ``axes``: integer values computed from the block's shape that index a row's own
    elements in a tensor holding ``stride`` elements per row: along ``axis`` (one entry per row), row ``i``
    holds ``stride * i + base`` with ``0 <= base < stride`` the same for every row and block size (the
    ``x[arange(batch), ...]`` of PyTorch exports, flattened into a Gather). Only rules marked with
    :func:`takes_row_offsets` receive them."""

    def __init__(self, axis: int, stride: int) -> None:
        self.axis, self.stride = axis, stride

    def __repr__(self) -> str:
        return f"RowOffsets(axis={self.axis}, stride={self.stride})"


def takes_row_offsets(*positions: int) -> Callable[[Callable], Callable]:
    """Mark a ``batch`` rule as taking :class:`RowOffsets` at these input positions (other rules never see
    them: such inputs are refused there as values computed from the block's shape)."""
    def mark(rule: Callable) -> Callable:
        rule.row_offsets = positions
        return rule
    return mark


REPLICATES = "replicates"
"""What a ``batch`` rule returns for an output that copies shared data along the axes its shape-deciding
inputs give it (Broadcast): called with ``SIZED`` for those inputs (computed from a block's shape) and None
for the data, the rule says that each row of the output is the same copy in every block."""


def reshaped_batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec],
                   axes: list[int | None]) -> list[int | None] | str:
    """Reshape, Squeeze, Unsqueeze: the elements keep their C order, so the rows stay apart when the output
    has an axis holding whole rows whose dims before it multiply to the same count as the input's before
    the batch axis (each row is then the same contiguous run of elements in both: ``[r,8,32] -> [8r,32]``
    and back). A reshape that merges rows (``[r,4] -> [r/2,8]``) or spreads them over two axes is refused.
    Evaluated per block size (the target may be computed from the block's shape); of several such axes
    (dims of 1 next to a block of one row) the first is taken, as models keep the batch outermost."""
    axis = axes[0]
    if axis is None:
        return [None]
    source, target = inputs[0].shape, outputs[0].shape
    if not (source.is_static and target.is_static):
        return "a dynamic dim hides where the rows go"
    shape, dims = source.to_shape(), target.to_shape()
    rows = getattr(axis, "rows", shape[axis]) or 1
    before, slab = math.prod(shape[:axis]), math.prod(shape[axis:]) // rows
    places = [place for place in range(len(dims)) if dims[place] % rows == 0 and math.prod(dims[:place]) == before
              and math.prod(dims[place:]) // rows == slab]
    if not places:
        return (f"it reshapes {list(shape)} into {list(dims)}: the {rows} rows on dim {axis} do not stay on one"
                " axis of the output, so rows would be merged or split")
    return [places[0]]


# -- float bits ------------------------------------------------------------------------------------------

_QUIET_CHUNK = 1 << 16


def quiet_f16_nans(out: np.ndarray) -> np.ndarray:
    """Set the quiet bit of signalling f16 NaNs in place, as OpenVINO's reference does whenever it moves
    f16 values (Select, Gather: 0x7C01 -> 0x7E01). Other types keep their NaN bits unchanged.

    Scans in cache-sized chunks over threads; a chunk without an all-ones exponent costs one pass."""
    if out.dtype != np.float16 or not out.size:
        return out
    if not out.flags.c_contiguous:  # (reshape(-1) would copy: set the bits through a view of the same strides)
        bits = out.view(np.uint16)
        bits[((bits & 0x7E00) == 0x7C00) & ((bits & 0x01FF) != 0)] |= 0x0200
        return out
    bits = out.reshape(-1).view(np.uint16)

    def work(start: int, stop: int) -> None:
        scratch = np.empty(_QUIET_CHUNK, dtype=np.uint16)
        for lo in range(start * _QUIET_CHUNK, min(stop * _QUIET_CHUNK, bits.size), _QUIET_CHUNK):
            chunk = bits[lo:lo + _QUIET_CHUNK]
            masked = np.bitwise_and(chunk, 0x7E00, out=scratch[:chunk.size])
            candidates = masked == 0x7C00  # all-ones exponent, quiet bit clear: infinities and signalling NaNs
            if candidates.any():
                chunk[candidates & ((chunk & 0x01FF) != 0)] |= 0x0200

    run_chunked(-(-bits.size // _QUIET_CHUNK), _QUIET_CHUNK, work)
    return out
