"""If-8, TensorIterator-1 and Loop-5: layers that run their sub-graphs (``ops.api.Body``).

Port maps are read as written: an ``external_port_id`` is one of the layer's own port ids (an input port for
``<input>``, an output port for ``<output>``), an ``internal_layer_id`` a body Parameter or Result; a body
Parameter that is the target of a ``<back_edges>`` edge is *merged* (its first value comes from outside, the
next ones from the edge's Result), one whose ``<input>`` has an ``axis`` is *sliced*, any other *invariant*.
An ``<output>`` with an ``axis`` concatenates the Result's value of every iteration, one without gives the
last iteration's value.

If-8 (as OpenVINO's ``If::validate_and_infer_types`` and reference): a constant ``cond`` infers the chosen
branch only; otherwise both, each output merged: the same element type, equal static dims kept, differing
static dims as the interval ``[min, max]``, a dynamic dim dynamic, ranks differing: ``[?]`` when both are at
most 1, else a dynamic rank (a scalar branch then gives ``[1]``, as the CPU plugin; If has no evaluate in
OpenVINO's Python API). ``cond`` must be boolean with one element; the kernel runs the branch it picks.

TensorIterator-1 (as ``TensorIterator::validate_and_infer_types`` of OpenVINO 2024+ and
``reference::tensor_iterator``): a sliced input's body Parameter is the input with ``part_size`` on the axis;
the iteration count is ``(|end - start| + 1) / part_size`` after adding the dim to a negative start/end (the
last sliced input whose axis dim is static decides), else, with no sliced input, ``|end - start| / part_size``
of the first concatenated output. The reference splits a sliced input's whole axis into that many parts
(reversed when ``stride < 0``) and concatenates outputs in iteration order (reversed when ``stride < 0``);
ir-run refuses a slicing that does not cover the whole axis (``count * part_size != dim``: the reference
then writes past its buffers) and a layer whose iteration count is undefined. Concatenated outputs are
``count * part_size`` long on their axis when the count is known, else dynamic there (a dynamic rank for a
body Result of dynamic rank); a scalar Result concatenates as ``[1]`` slices. Negative axes are normalised (OpenVINO
indexes with them unchecked).

Loop-5 (as ``Loop::validate_and_infer_types`` and ``reference::loop``): input 0 is the trip count (negative:
no limit), input 1 the execution condition; the body's ``purpose="current_iteration"`` Parameter gets the
iteration number (i32 or i64; ``[1]`` when its shape is dynamic) and its ``purpose="execution_condition"``
Result stops the loop when false (checked after each iteration, whose values count). The iteration count
inference uses: the trip count when the body condition is constantly true (also through an invariant
Parameter fed a constant), 1 when it is constantly false, else unknown: concatenated outputs are then
dynamic on their axis. Sliced inputs are cut into ``part_size`` slices along the axis (the reference cuts
slices of 1 and ignores start/end), reversed when ``stride < 0``; past the last slice the last one is fed
again (as the reference). Back edges whose Result's shape differs from the Parameter's relax the Parameter's
dims to dynamic, for every back edge (OpenVINO does it only for Results that are also last-value outputs).
The reference refuses zero iterations (trip count 0 or execution condition false) and so does ir-run (an
InputError; OpenVINO's CPU plugin returns stale outputs). A loop that never ends, the body condition
constantly true and the trip count negative or above LOOP_MAX_ITERATIONS, is refused when inferred, rather
than hang (OpenVINO's CPU plugin hangs); a loop whose computed body condition never turns false still runs
until it does, as in OpenVINO.

Results are bit-exact given bit-exact bodies: the kernels move and concatenate what the bodies compute.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, KernelError, ModelFormatError
from ...types import (
    DYNAMIC,
    DYNAMIC_DIM,
    DYNAMIC_SHAPE,
    Dim,
    PartialShape,
    TensorSpec,
    element_type,
    parse_partial_shape,
)
from ..api import LATEST_OPSET, Body, InputFit, OpContext, OpDef
from ..toolkit.axes import normalise_axis

LOOP_MAX_ITERATIONS = 2**31 - 1
"""The most iterations ir-run runs a Loop whose body condition is constantly true (its trip count decides)."""


class MapEntry:
    """One ``<input>``/``<output>`` of a port map: the outer port's position (None for a Loop's special ports),
    the body Parameter/Result id, slicing attributes (``axis`` None: not sliced/concatenated) and purpose."""

    __slots__ = ("position", "internal", "axis", "start", "end", "stride", "part_size", "purpose")

    def __init__(self, position: int | None, internal: str, axis: int | None, start: int, end: int, stride: int,
                 part_size: int, purpose: str | None) -> None:
        self.position = position
        self.internal = internal
        self.axis = axis
        self.start = start
        self.end = end
        self.stride = stride
        self.part_size = part_size
        self.purpose = purpose


def _int(ctx: OpContext, tag: str, attrs: dict[str, str], name: str, default: int) -> int:
    text = attrs.get(name)
    if text is None:
        return default
    try:
        value = int(text.strip()) if len(text) < 24 else None
    except ValueError:
        value = None
    if value is None or not -(2**63) <= value < 2**63:
        raise ModelFormatError(f"<{tag}> has {name}={text[:40]!r}, which is not an int64", layer=ctx.ref)
    return value


def read_map(ctx: OpContext, tag: str, body: Body, body_tag: str) -> tuple[list[MapEntry], list[MapEntry]]:
    """The ``<input>`` and ``<output>`` entries of the port map ``tag`` of ``body``, checked."""
    ports = {"input": {p.id: p.position for p in ctx.layer.inputs},
             "output": {p.id: p.position for p in ctx.layer.outputs}}
    found: dict[str, list[MapEntry]] = {"input": [], "output": []}
    for kind, attrs in ctx.port_map(tag):
        if kind not in found:
            raise ModelFormatError(f"<{tag}> has an element <{kind[:40]}>; only <input> and <output> are known",
                                   layer=ctx.ref)
        internal = attrs.get("internal_layer_id")
        inner = body.parameters if kind == "input" else body.results
        if internal not in inner:
            what = "Parameter" if kind == "input" else "Result"
            raise ModelFormatError(f"<{tag}> <{kind}> names internal_layer_id={str(internal)[:40]!r}, which is no"
                                   f" {what} of <{body_tag}>", layer=ctx.ref)
        purpose = attrs.get("purpose")
        if purpose is not None:
            position = None
            expected = "current_iteration" if kind == "input" else "execution_condition"
            if purpose != expected or ctx.layer.type.lower() != "loop":
                raise ModelFormatError(f"<{tag}> <{kind}> has purpose={purpose[:40]!r}; only a Loop's {kind} may"
                                       f" have purpose={expected!r}", layer=ctx.ref)
        else:
            external = attrs.get("external_port_id")
            position = ports[kind].get(external)
            if position is None:
                raise ModelFormatError(f"<{tag}> <{kind}> names external_port_id={str(external)[:40]!r}, which is"
                                       f" no {kind} port of the layer", layer=ctx.ref)
        axis = _int(ctx, tag, attrs, "axis", 0) if "axis" in attrs else None
        part_size = _int(ctx, tag, attrs, "part_size", 1)
        if axis is not None and part_size <= 0:
            raise ModelFormatError(f"<{tag}> <{kind}> has part_size={part_size}; it must be positive", layer=ctx.ref)
        found[kind].append(MapEntry(position, internal, axis, _int(ctx, tag, attrs, "start", 0),
                                    _int(ctx, tag, attrs, "end", -1), _int(ctx, tag, attrs, "stride", 1), part_size,
                                    purpose))
    return found["input"], found["output"]


def read_back_edges(ctx: OpContext, body: Body) -> dict[str, str]:
    """``<back_edges>``: body Parameter id -> the Result id whose value it takes in the next iteration."""
    edges: dict[str, str] = {}
    for kind, attrs in ctx.port_map("back_edges"):
        source, target = attrs.get("from-layer"), attrs.get("to-layer")
        if kind != "edge" or source not in body.results or target not in body.parameters:
            raise ModelFormatError(f"<back_edges> has <{kind[:40]} from-layer={str(source)[:40]!r}"
                                   f" to-layer={str(target)[:40]!r}>: an edge must go from a body Result to a body"
                                   " Parameter", layer=ctx.ref)
        if target in edges:
            raise ModelFormatError(f"<back_edges> feeds body Parameter {target!r} twice", layer=ctx.ref)
        edges[target] = source
    return edges


def check_back_edge_types(ctx: OpContext, edges: dict[str, str], specs: dict[str, TensorSpec],
                          inner: dict[str, TensorSpec]) -> None:
    """Each back edge carries its Result's value into a Parameter of the same element type."""
    for pid, rid in edges.items():
        want, got = specs[pid].element_type if pid in specs else None, inner[rid].element_type
        if want is not None and want != got and "dynamic" not in (want.kind, got.kind):
            ctx.fail(f"<back_edges> feeds body Result {rid!r} ({got}) into body Parameter {pid!r} ({want}): their"
                     " element types differ")


def _require_fed(ctx: OpContext, body: Body, fed: set[str], body_tag: str) -> None:
    missing = [pid for pid in body.parameters if pid not in fed]
    if missing:
        raise ModelFormatError(f"the Parameter with id {missing[0]!r} of <{body_tag}> is fed by no port map <input>",
                               layer=ctx.ref)


def _output_positions(ctx: OpContext, outputs: list[MapEntry], tag: str) -> None:
    seen = [entry.position for entry in outputs if entry.position is not None]
    if len(set(seen)) != len(seen):
        raise ModelFormatError(f"<{tag}> maps two Results to one output port", layer=ctx.ref)
    if sorted(seen) != list(range(len(ctx.layer.outputs))):
        missing = sorted(set(range(len(ctx.layer.outputs))) - set(seen))
        raise ModelFormatError(f"output port {ctx.layer.outputs[missing[0]].label} is produced by no <{tag}> <output>",
                               layer=ctx.ref)


def _flag(ctx: OpContext, position: int, name: str) -> None:
    """A condition input: boolean, rank 0 or 1 (one element)."""
    spec = ctx.inputs[position]
    if spec.element_type not in (element_type("boolean"), DYNAMIC):
        ctx.fail(f"{name} must be boolean, got {spec.element_type}", position=position)
    if spec.shape.rank is not None and spec.shape.rank > 1:
        ctx.fail(f"{name} must have rank 0 or 1, got {spec.shape.brief()}", position=position)


def _one_value(ctx: OpContext, value: np.ndarray, position: int, name: str):
    if value.size != 1:
        ctx.fail(f"{name} must have one element, it has {value.size}", position=position)
    return value.reshape(-1)[0]


def _outer_values(ctx: OpContext, inputs: list[MapEntry]) -> dict[str, np.ndarray]:
    """Constant values of the outer inputs that feed body Parameters unchanged through every iteration."""
    values = {}
    for entry in inputs:
        value = ctx.const_value(entry.position)
        if value is not None:
            values[entry.internal] = value
    return values


def _collect(results: dict[str, np.ndarray], pairs, count: int) -> list[np.ndarray]:
    """The outer outputs from the body's Results, by position; a Result given twice is copied."""
    outputs: list = [None] * count
    seen: set[int] = set()
    for position, rid in pairs:
        value = results[rid]
        if id(value) in seen:
            value = value.copy()
        seen.add(id(value))
        outputs[position] = value
    return outputs


def _finish(outputs: list[np.ndarray], shapes: tuple[PartialShape, ...], layer):
    """The kernel's return value, after checking each output against the inferred shape (a body whose Results
    change shape between iterations, which inference did not foresee, is an error, never a wrong shape)."""
    for position, (value, shape) in enumerate(zip(outputs, shapes)):
        if not shape.accepts(value.shape):
            raise KernelError(f"output {position} has shape {list(value.shape)}, inference found {shape.brief()}:"
                              " the body's Results change shape between iterations", layer=layer)
    return tuple(outputs) if len(outputs) > 1 else outputs[0]


# -- If-8 ---------------------------------------------------------------------------------------------------

def merge_branches(ctx: OpContext, position: int, then: TensorSpec, else_: TensorSpec) -> TensorSpec:
    """One output of an If whose branch is not known at load (OpenVINO's ``resolve_shape``)."""
    et = then.element_type
    if DYNAMIC not in (then.element_type, else_.element_type) and then.element_type != else_.element_type:
        ctx.fail(f"output {position}: then_body gives {then.element_type}, else_body {else_.element_type}")
    if et == DYNAMIC:
        et = else_.element_type
    a, b = then.shape.dims, else_.shape.dims
    if a is None or b is None:
        return TensorSpec(et, DYNAMIC_SHAPE)
    if len(a) != len(b):
        return TensorSpec(et, PartialShape((DYNAMIC_DIM,)) if len(a) <= 1 and len(b) <= 1 else DYNAMIC_SHAPE)
    dims = []
    for x, y in zip(a, b):
        if not (x.is_static and y.is_static):
            dims.append(DYNAMIC_DIM)
        elif x == y:
            dims.append(x)
        else:
            dims.append(Dim(min(x.lo, y.lo), max(x.lo, y.lo)))
    return TensorSpec(et, PartialShape(tuple(dims)))


def infer_if(ctx: OpContext):
    _flag(ctx, 0, "cond")
    branches, specs = [], []
    chosen = None
    value = ctx.const_value(0)
    if value is not None:
        chosen = 0 if bool(_one_value(ctx, value, 0, "cond")) else 1
    for index, (tag, map_tag) in enumerate((("then_body", "then_port_map"), ("else_body", "else_port_map"))):
        body = ctx.body(tag)
        inputs, outputs = read_map(ctx, map_tag, body, tag)
        _require_fed(ctx, body, {entry.internal for entry in inputs}, tag)
        _output_positions(ctx, outputs, map_tag)
        branches.append((body, tuple((e.position, e.internal) for e in inputs),
                         tuple((e.position, e.internal) for e in outputs)))
        if chosen is None or chosen == index:
            inner = body.infer({e.internal: ctx.inputs[e.position] for e in inputs}, _outer_values(ctx, inputs))
            by_position = {e.position: inner[e.internal] for e in outputs}
            specs.append([by_position[i] for i in range(len(ctx.layer.outputs))])
    if chosen is not None:
        result = specs[0]
    else:
        result = [merge_branches(ctx, i, t, e) for i, (t, e) in enumerate(zip(*specs))]
    return result, {"branches": tuple(branches), "count": len(result), "shapes": tuple(s.shape for s in result),
                    "layer": ctx.ref}


def run_if(cond: np.ndarray, *inputs: np.ndarray, branches, count: int, shapes, layer):
    """Run the branch ``cond`` picks (its first element, as the reference reads it)."""
    if cond.size != 1:
        raise InputError(f"cond must have one element, it has {cond.size}", layer=layer)
    body, feeds, outputs = branches[0 if bool(cond.reshape(-1)[0]) else 1]
    arrays = (cond, *inputs)
    results = _collect(body.run({pid: arrays[position] for position, pid in feeds}), outputs, count)
    for position, shape in enumerate(shapes):  # a scalar branch merged with a 1-D one is [1] (as the CPU plugin)
        if shape.rank == 1 and results[position].ndim == 0:
            results[position] = results[position].reshape(1)
    return _finish(results, shapes, layer)


# -- TensorIterator-1 and Loop-5: shared parts ---------------------------------------------------------------

def _sliced_spec(ctx: OpContext, entry: MapEntry, spec: TensorSpec) -> TensorSpec:
    """A sliced input's body Parameter: the input with ``part_size`` on the axis."""
    dims = spec.shape.dims
    if dims is None:
        return TensorSpec(spec.element_type, DYNAMIC_SHAPE)
    axis = normalise_axis(ctx, entry.axis, len(dims), what=f"the sliced input {entry.position}: axis")
    new = list(dims)
    new[axis] = Dim(entry.part_size, entry.part_size)
    return TensorSpec(spec.element_type, PartialShape(tuple(new)))


def _concat_axis(ctx: OpContext, entry: MapEntry, rank: int) -> int:
    return normalise_axis(ctx, entry.axis, max(rank, 1), what=f"the concatenated output {entry.position}: axis")


def _slices(array: np.ndarray, axis: int, count: int, reverse: bool) -> list[np.ndarray]:
    """``count`` equal views of ``array`` along ``axis`` (np.split's, without its cost per part)."""
    size = array.shape[axis] // count if count else 0
    if size and size * count == array.shape[axis]:
        index = [slice(None)] * array.ndim
        parts = []
        for start in range(0, size * count, size):
            index[axis] = slice(start, start + size)
            parts.append(array[tuple(index)])
    else:  # (an unequal division raises, as it did)
        parts = np.split(array, count, axis=axis) if count else []
    return parts[::-1] if reverse else parts


def _concatenate(values: list[np.ndarray], axis: int) -> np.ndarray:
    if values and values[0].ndim == 0:
        values = [v.reshape(1) for v in values]
    return np.concatenate(values, axis=axis)


# -- TensorIterator-1 ----------------------------------------------------------------------------------------

def ti_iterations(sliced: list[MapEntry], concats: list[MapEntry], shapes: list[PartialShape]) -> int:
    """The iteration count OpenVINO finds: from the last sliced input with a static axis, else from the first
    concatenated output when there is no sliced input; -1 when unknown."""
    count = -1
    for entry, shape in zip(sliced, shapes):
        if shape.dims is None or not shape.dims[entry.axis].is_static:
            continue
        dim = shape.dims[entry.axis].lo
        start = entry.start + dim if entry.start < 0 else entry.start
        end = entry.end + dim if entry.end < 0 else entry.end
        count = (abs(end - start) + 1) // entry.part_size
    if count == -1 and not sliced and concats:
        count = abs(concats[0].end - concats[0].start) // concats[0].part_size
    return count


def infer_tensor_iterator(ctx: OpContext):
    body = ctx.body("body")
    inputs, outputs = read_map(ctx, "port_map", body, "body")
    edges = read_back_edges(ctx, body)
    _require_fed(ctx, body, {e.internal for e in inputs}, "body")
    _output_positions(ctx, outputs, "port_map")
    sliced = [e for e in inputs if e.axis is not None]
    concats = [e for e in outputs if e.axis is not None]
    if not sliced and not concats:
        ctx.fail("the number of iterations is undefined: the TensorIterator has no sliced input and no"
                 " concatenated output")
    specs = {}
    for entry in inputs:
        spec = ctx.inputs[entry.position]
        specs[entry.internal] = _sliced_spec(ctx, entry, spec) if entry.axis is not None else spec
    shapes = []
    for entry in sliced:  # normalised axes (the kernel needs them)
        shape = ctx.inputs[entry.position].shape
        if shape.dims is not None:
            entry.axis = normalise_axis(ctx, entry.axis, len(shape.dims),
                                        what=f"the sliced input {entry.position}: axis")
        shapes.append(shape)
    count = ti_iterations(sliced, concats, shapes)
    if count >= 0:
        _check_slices(ctx, sliced, shapes, count)
    values = {e.internal: v for e in inputs if e.axis is None and e.internal not in edges
              for v in [ctx.const_value(e.position)] if v is not None}
    inner = body.infer(specs, values)
    check_back_edge_types(ctx, edges, specs, inner)
    result: list = [None] * len(ctx.layer.outputs)
    for entry in outputs:
        spec = inner[entry.internal]
        dims = spec.shape.dims
        if entry.axis is None or dims is None:
            result[entry.position] = spec if entry.axis is None else TensorSpec(spec.element_type, DYNAMIC_SHAPE)
            continue
        if not dims and entry.axis != 0:
            ctx.fail(f"the concatenated output {entry.position} has scalar slices: its axis must be 0, not"
                     f" {entry.axis}")
        entry.axis = _concat_axis(ctx, entry, len(dims))
        new = list(dims) or [DYNAMIC_DIM]
        new[entry.axis] = Dim(count * entry.part_size, count * entry.part_size) if count >= 0 else DYNAMIC_DIM
        result[entry.position] = TensorSpec(spec.element_type, PartialShape(tuple(new)))
    params = {"body": body, "sliced": tuple((e.position, e.internal, e.axis, e.start, e.end, e.stride, e.part_size)
                                            for e in sliced),
              "fixed": tuple((e.position, e.internal) for e in inputs if e.axis is None),
              "edges": tuple(edges.items()),
              "last": tuple((e.position, e.internal) for e in outputs if e.axis is None),
              "concat": tuple((e.position, e.internal, e.axis, e.stride, e.start, e.end, e.part_size)
                              for e in concats),
              "count": len(result), "shapes": tuple(s.shape for s in result), "layer": ctx.ref}
    return result, params


def _check_slices(ctx: OpContext, sliced: list[MapEntry], shapes: list[PartialShape], count: int) -> None:
    for entry, shape in zip(sliced, shapes):
        if shape.dims is None or not shape.dims[entry.axis].is_static:
            continue
        dim = shape.dims[entry.axis].lo
        if count * entry.part_size != dim:
            ctx.fail(
                f"the sliced input {entry.position} has {dim} elements on axis {entry.axis}, but {count} iterations"
                f" of part_size={entry.part_size} take {count * entry.part_size} (start={entry.start},"
                f" end={entry.end}): OpenVINO's reference splits the whole axis, ir-run refuses slices that do not"
                " cover it", position=entry.position)


def run_tensor_iterator(*inputs: np.ndarray, body: Body, sliced, fixed, edges, last, concat, count: int, shapes,
                        layer):
    """The reference's loop: slices fed in order (reversed for a negative stride), back edges after each
    iteration, the last values and the concatenations (reversed for a negative stride) as outputs."""
    entries = [MapEntry(p, i, a, s, e, st, ps, None) for p, i, a, s, e, st, ps in sliced]
    concats = [MapEntry(p, i, a, s, e, st, ps, None) for p, i, a, st, s, e, ps in concat]
    iterations = ti_iterations(entries, concats, [PartialShape.of(inputs[e.position].shape) for e in entries])
    if iterations <= 0:
        raise InputError("the TensorIterator runs no iteration with these inputs (the reference's outputs would"
                         " have no value)", layer=layer)
    parts = []
    for entry in entries:
        array = inputs[entry.position]
        if iterations * entry.part_size != array.shape[entry.axis]:
            raise InputError(f"input {entry.position} has {array.shape[entry.axis]} elements on axis {entry.axis},"
                             f" {iterations} iterations of part_size={entry.part_size} take"
                             f" {iterations * entry.part_size}", layer=layer)
        parts.append(_slices(array, entry.axis, iterations, entry.stride < 0))
    feeds = {pid: inputs[position] for position, pid in fixed}
    collected: list[list[np.ndarray]] = [[] for _ in concat]
    results: dict[str, np.ndarray] = {}
    for iteration in range(iterations):
        for entry, pieces in zip(entries, parts):
            feeds[entry.internal] = pieces[iteration]
        results = body.run(feeds)
        for values, (_, rid, *_rest) in zip(collected, concat):
            values.append(results[rid])
        for pid, rid in edges:
            feeds[pid] = results[rid]
    outputs = _collect(results, last, count)
    for values, (position, _, axis, stride, *_rest) in zip(collected, concat):
        outputs[position] = _concatenate(values[::-1] if stride < 0 else values, axis)
    return _finish(outputs, shapes, layer)


# -- Loop-5 --------------------------------------------------------------------------------------------------

def _declared_parameter(ctx: OpContext, pid: str) -> TensorSpec:
    """The current-iteration Parameter as its body declares it (i32 or i64, rank 0 or 1; dynamic: [1])."""
    record = next(layer for layer in ctx.layer.bodies["body"].layers if layer.id == pid)
    et = element_type(record.data.get("element_type", ""))
    if et is None or et.name not in ("i32", "i64"):
        ctx.fail(f"the current_iteration Parameter {pid!r} must be i32 or i64, it is {et or 'unknown'}")
    try:
        shape = parse_partial_shape(record.data.get("shape", ""))
    except ValueError:
        shape = DYNAMIC_SHAPE
    if shape.rank is not None and shape.rank > 1:
        ctx.fail(f"the current_iteration Parameter {pid!r} must have rank 0 or 1, it has {shape.brief()}")
    return TensorSpec(et, shape if shape.is_static else PartialShape.of((1,)))


def _relax(param: TensorSpec, result: TensorSpec) -> TensorSpec | None:
    """The Parameter of a back edge made dynamic where its Result differs (None: no change)."""
    if result.shape.dims is None:
        return None if param.shape.dims is None else TensorSpec(param.element_type, DYNAMIC_SHAPE)
    if param.shape.dims is None:
        return None
    if len(param.shape.dims) != len(result.shape.dims):
        return TensorSpec(param.element_type, DYNAMIC_SHAPE)
    dims, changed = [], False
    for p, r in zip(param.shape.dims, result.shape.dims):
        compatible = not (p.is_static and r.is_static) or p == r
        dims.append(r if compatible else DYNAMIC_DIM)
        changed |= not compatible
    return TensorSpec(param.element_type, PartialShape(tuple(dims))) if changed else None


def infer_loop(ctx: OpContext):
    trip_spec = ctx.inputs[0]
    if trip_spec.element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"trip_count must be an integer, got {trip_spec.element_type}", position=0)
    if trip_spec.shape.rank is not None and trip_spec.shape.rank > 1:
        ctx.fail(f"trip_count must have rank 0 or 1, got {trip_spec.shape.brief()}", position=0)
    _flag(ctx, 1, "execution_condition")
    body = ctx.body("body")
    inputs, outputs = read_map(ctx, "port_map", body, "body")
    edges = read_back_edges(ctx, body)
    current = next((e.internal for e in inputs if e.purpose), None)
    condition = next((e.internal for e in outputs if e.purpose), None)
    inputs = [e for e in inputs if not e.purpose]
    outputs = [e for e in outputs if not e.purpose]
    if condition is None:
        raise ModelFormatError('the port map has no <output purpose="execution_condition">', layer=ctx.ref)
    fed = {e.internal for e in inputs} | ({current} if current else set())
    _require_fed(ctx, body, fed, "body")
    _output_positions(ctx, outputs, "port_map")

    zero = False
    start = ctx.const_value(1)
    if start is not None:
        zero = not bool(_one_value(ctx, start, 1, "execution_condition"))
    specs: dict[str, TensorSpec] = {}
    for entry in inputs:
        spec = ctx.inputs[entry.position]
        specs[entry.internal] = _sliced_spec(ctx, entry, spec) if entry.axis is not None else spec
    start_value = None  # the current_iteration Parameter's first value, when no input feeds it
    if current is not None and not any(e.internal == current for e in inputs):
        specs[current] = start_value = _declared_parameter(ctx, current)
    invariant = {e.internal: v for e in inputs if e.axis is None and e.internal not in edges
                 for v in [ctx.const_value(e.position)] if v is not None}
    inner = body.infer(specs, invariant)
    check_back_edge_types(ctx, edges, specs, inner)
    for _ in range(len(edges) * 64 + 1):  # each pass makes dims dynamic: a fixpoint comes within rank + 1 passes
        changed = False
        for pid, rid in edges.items():
            relaxed = _relax(specs[pid], inner[rid]) if pid in specs else None
            if relaxed is not None:
                specs[pid], changed = relaxed, True
        if not changed:
            break
        inner = body.infer(specs, invariant)

    iterations = -1
    constant = body.constants(specs, invariant).get(condition)
    if constant is None:  # a condition fed back to its own Parameter from a constant that the body keeps
        for entry in inputs:
            initial = ctx.const_value(entry.position)
            if edges.get(entry.internal) == condition and initial is not None and initial.size == 1:
                kept = body.constants(specs, {**invariant, entry.internal: initial}).get(condition)
                if kept is not None and kept.size == 1 and bool(kept.reshape(-1)[0]) == bool(initial.reshape(-1)[0]):
                    constant = kept
    if constant is not None:
        always = bool(_one_value(ctx, constant, 1, "the body's execution_condition"))
        iterations = -1 if always else 1
        trip = ctx.const_value(0)
        if always and trip is not None:
            iterations = int(_one_value(ctx, trip, 0, "trip_count"))
            if (iterations < 0 or iterations > LOOP_MAX_ITERATIONS) and not zero:
                ctx.fail(f"the Loop never ends: its body's execution_condition is always true and its trip_count is"
                         f" {iterations} (ir-run runs at most {LOOP_MAX_ITERATIONS} iterations of such a loop)",
                         position=0, hint="give the Loop a finite trip_count, or a body condition that turns false")
    result: list = [None] * len(ctx.layer.outputs)
    for entry in outputs:
        spec = inner[entry.internal]
        dims = spec.shape.dims
        if entry.axis is None:
            if zero and spec.shape.is_static:
                if not dims:
                    ctx.fail(f"output {entry.position} is a scalar and the Loop runs no iteration")
                spec = TensorSpec(spec.element_type, PartialShape((Dim(0, 0),) + dims[1:]))
            result[entry.position] = spec
            continue
        if zero:
            result[entry.position] = TensorSpec(spec.element_type, PartialShape.of((0,)))
            continue
        if dims is None:
            result[entry.position] = spec
            continue
        entry.axis = _concat_axis(ctx, entry, len(dims))
        new = list(dims) or [Dim(1, 1)]
        size = new[entry.axis]
        new[entry.axis] = Dim(size.lo * iterations, size.lo * iterations) if (
            size.is_static and iterations >= 0) else DYNAMIC_DIM
        result[entry.position] = TensorSpec(spec.element_type, PartialShape(tuple(new)))
    params = {"body": body,
              "sliced": tuple((e.position, e.internal, e.axis, e.stride, e.part_size) for e in inputs
                              if e.axis is not None),
              "fixed": tuple((e.position, e.internal) for e in inputs if e.axis is None),
              "edges": tuple(edges.items()), "current": current,
              "current_spec": None if start_value is None else (start_value.element_type.dtype,
                                                                start_value.shape.to_shape()),
              "condition": condition,
              "last": tuple((e.position, e.internal) for e in outputs if e.axis is None),
              "concat": tuple((e.position, e.internal, e.axis) for e in outputs if e.axis is not None),
              "count": len(result), "shapes": tuple(s.shape for s in result), "layer": ctx.ref}
    return result, params


def run_loop(trip: np.ndarray, start: np.ndarray, *inputs: np.ndarray, body: Body, sliced, fixed, edges, current,
             current_spec, condition, last, concat, count: int, shapes, layer):
    """The reference's loop (see the module's docstring); zero iterations are refused as the reference does."""
    if trip.size != 1 or start.size != 1:
        raise InputError("trip_count and execution_condition must have one element each", layer=layer)
    limit = int(trip.reshape(-1)[0])
    if limit == 0 or not bool(start.reshape(-1)[0]):
        raise InputError(f"the Loop runs no iteration (trip_count {limit}, execution_condition"
                         f" {bool(start.reshape(-1)[0])}): OpenVINO's reference refuses it", layer=layer)
    arrays = (trip, start, *inputs)
    feeds = {pid: arrays[position] for position, pid in fixed}
    parts = [(pid, _slices(arrays[position], axis, arrays[position].shape[axis] // part_size, stride < 0))
             for position, pid, axis, stride, part_size in sliced]
    for pid, pieces in parts:
        if not pieces:
            raise InputError(f"the sliced input feeding body Parameter {pid!r} is empty", layer=layer)
    counter = dict(edges).get(current) is None and current is not None
    if current_spec is not None:
        feeds[current] = np.zeros(current_spec[1], dtype=current_spec[0])
    collected: list[list[np.ndarray]] = [[] for _ in concat]
    iteration = 0
    while limit < 0 or iteration < limit:
        for pid, pieces in parts:
            feeds[pid] = pieces[min(iteration, len(pieces) - 1)]
        results = body.run(feeds)
        for values, (_, rid, _axis) in zip(collected, concat):
            values.append(results[rid])
        flag = results[condition]
        if not (flag.size and bool(flag.reshape(-1)[0])):
            break
        iteration += 1
        if counter:
            feeds[current] = np.full_like(feeds[current], iteration)
        for pid, rid in edges:
            feeds[pid] = results[rid]
    outputs = _collect(results, last, count)
    for values, (position, _, axis) in zip(collected, concat):
        outputs[position] = _concatenate(values, axis)
    return _finish(outputs, shapes, layer)


def _fit_loop(params, inputs, position: int) -> InputFit | None:
    return InputFit("cond", 0, 1) if position == 1 else None


OPS = (
    OpDef("If", 8, 8, LATEST_OPSET, ("cond", "input"), infer_if, run_if, roles=("condition", "data"),
          min_inputs=1, variadic=True),
    OpDef("TensorIterator", 1, 1, LATEST_OPSET, ("input",), infer_tensor_iterator, run_tensor_iterator,
          roles=("data",), min_inputs=0, variadic=True),
    OpDef("Loop", 5, 5, LATEST_OPSET, ("trip_count", "execution_condition", "input"), infer_loop, run_loop,
          roles=("trip_count", "execution_condition", "data"), min_inputs=2, variadic=True, fit=_fit_loop),
)
