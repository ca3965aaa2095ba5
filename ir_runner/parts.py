"""``extract``: a part of a model as a standalone IR (its own ``.bin``, Parameters where the cut crosses).

The part runs from the layers named ``from_`` to those named ``to``, both included: every layer that is reached
from a ``from_`` layer and reaches a ``to`` layer. Without ``from_`` it starts at the model's inputs, without
``to`` it ends at its outputs (its Results) that the ``from_`` layers reach. What the part reads from outside
becomes a Parameter, of the tensor's inferred element type and shape, named as the layer that produced it
(``name.PORT`` for a layer of several outputs) and keeping its tensor names; constants (Consts, and layers
computed from constants alone, such as a decompression subgraph of weights) are taken along instead, with their
bytes. A variable read or written in the part keeps its readers and its writer (a writer reaches no Result: the
part would no longer update its state). Each output of a ``to`` layer becomes a Result
(``NAME/sink_port_PORT``); a ``to`` that is a Result stays itself. Layers are named by name, or by id when no
layer has that name. The IR is written by :mod:`ir_runner.ir.writer`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import MESSAGE_ITEMS, InputError, clip_text
from .graph import Graph
from .ir.reader import _split_names
from .ir.writer import Cut, Slot, ir_bytes, write_ir
from .model import Model, load
from .suggest import closest
from .types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec, element_type_of

_WEIGHTS_KEYS = ("offset", "size", "element_type")


def extract(model: Model | str | os.PathLike | bytes, output: str | os.PathLike, *, from_: Sequence[str] = (),
            to: Sequence[str] = (), weights=None) -> Path:
    """Write the part of ``model`` (a loaded Model, or what :func:`ir_runner.load` takes) from the layers
    ``from_`` to the layers ``to`` (names, or ids) to ``output`` (.xml; the .bin next to it); the path written.

    Raises InputError naming what was asked when a layer is unknown, a ``to`` layer is not reached from any
    ``from_`` layer, or a ``from_`` layer reaches no ``to`` layer; without ``to``, the part ends at the model's
    outputs that the ``from_`` layers reach. Refuses (InputError) an ``output`` that is not an ``.xml``, or
    whose files would replace the model's own."""
    sources = [Path(model), Path(weights) if weights else Path(model).with_suffix(".bin")] \
        if isinstance(model, (str, os.PathLike)) else []
    if not isinstance(model, Model):
        model = load(model, weights)
    graph = model.graph
    _check_output(Path(output), sources + [graph.net.weights.path])
    starts = _resolve(graph, from_, "--from")
    stops = _resolve(graph, to, "--to") or _outputs_reached(graph, starts)
    keep = part_between(graph, starts, stops)
    outputs = [(layer_id, position) for layer_id in stops if graph.layers[layer_id] not in graph.results
               for position in range(len(graph.layers[layer_id].outputs))]
    return write_ir(graph.net, output, cut_of(model, keep, outputs))


def extract_summary(model: str, weights: str | None, from_: Sequence[str], to: Sequence[str], output: str
                    ) -> dict[str, Any]:
    """``ir-run extract``: :func:`extract` with names given as the CLI takes them (``A,B``; ``\\,`` inside a
    name), and what was written, loaded back: its files, layer count, inputs and outputs."""
    path = extract(model, output, from_=split_layer_names(from_), to=split_layer_names(to), weights=weights)
    written, data = load(path), path.with_suffix(".bin")
    return {"xml": str(path), "bin": str(data), "bin_bytes": data.stat().st_size, "layers": len(written.graph.layers),
            "inputs": [_tensor(info) for info in written.inputs],
            "outputs": [_tensor(info) for info in written.outputs]}


def _check_output(xml: Path, sources: Sequence[Path | None]) -> None:
    """InputError when ``xml`` is no ``.xml`` path, or it or its ``.bin`` is one of the ``sources`` files."""
    if xml.suffix.lower() != ".xml":
        raise InputError(f"-o '{clip_text(str(xml))}': the part is written as an .xml (and its .bin next to it)",
                         hint="-o names the .xml; its .bin is written next to it")
    source = overwritten((xml, xml.with_suffix(".bin")), sources)
    if source is not None:
        raise InputError(f"-o '{clip_text(str(xml))}' would write over the model's own file"
                         f" '{clip_text(str(source))}'", hint="write the part to another path")


def overwritten(targets: Iterable[Path], sources: Iterable[Path | None]) -> Path | None:
    """The first of ``sources`` (None ones skipped) that writing ``targets`` would replace (the same file, or the
    same path once resolved when one does not exist), else None."""
    sources = [source for source in sources if source is not None]
    for target in targets:
        for source in sources:
            try:
                same = os.path.samefile(target, source)
            except OSError:
                same = target.resolve() == source.resolve()
            if same:
                return source
    return None


def _outputs_reached(graph: Graph, starts: Collection[str]) -> list[str]:
    """The ids of the model's Results that a layer of ``starts`` reaches (every Result when ``starts`` is
    empty); InputError when they reach none."""
    results = [layer.id for layer in graph.results]
    if not starts:
        return results
    below = _below(graph, starts)
    reached = [layer_id for layer_id in results if layer_id in below]
    if not reached:
        raise InputError(f"--from {', '.join(_named(graph, start) for start in starts)} reaches none of the"
                         " model's outputs", hint="name the last layers of the part with --to")
    return reached


def _tensor(info) -> dict[str, str]:
    return {"name": info.name, "spec": f"{info.element_type.name}{info.partial_shape}"}


def split_layer_names(values: Sequence[str]) -> list[str]:
    """The layer names (or ids) of ``--from``/``--to``-style values: each comma-separated, blanks dropped."""
    return [name for value in values for name in _split_names(value)]


def part_between(graph: Graph, starts: Collection[str], stops: Collection[str]) -> set[str]:
    """The layer ids reached from a layer of ``starts`` (from the model's inputs when empty) that reach a layer
    of ``stops``, both included; InputError when a stop is not reached or a start reaches no stop."""
    above = _closure(stops, lambda layer_id: (source for source, _ in graph.sources[layer_id]))
    if not starts:
        return above
    below = _below(graph, starts)
    for layer_id in stops:
        if layer_id not in below:
            raise InputError(f"--to {_named(graph, layer_id)} is not reached from --from"
                             f" {', '.join(_named(graph, start) for start in starts)}",
                             hint="name a --to layer after the --from layers, or a --from layer before it")
    for layer_id in starts:
        if layer_id not in above:
            raise InputError(f"--from {_named(graph, layer_id)} reaches none of --to"
                             f" {', '.join(_named(graph, stop) for stop in stops)}",
                             hint="name --from layers that the --to layers read, directly or not")
    return above & below


def cut_of(model: Model, keep: Collection[str], outputs: Sequence[Slot],
           values: Mapping[Slot, np.ndarray] | None = None, fed: Collection[str] = ()) -> Cut:
    """The :class:`Cut` keeping ``keep`` plus the constants it reads (with their own constant inputs) and the
    readers and writer of every variable one of them reads or writes (a stateful part keeps updating its state), a
    Parameter for every other tensor it reads from outside (of the type and static shape of its array in
    ``values`` when given, else of the inferred spec), and a Result for each of ``outputs``. The outputs of the
    layers ``fed`` are always read as Parameters, never taken along as constants."""
    graph = model.graph
    constant: dict[str, bool] = {}
    kept = set(keep)
    inputs: dict[Slot, TensorSpec] = {}
    pending = [layer_id for layer_id in graph.order if layer_id in kept]
    while pending:
        while pending:
            layer_id = pending.pop()
            for slot in graph.sources[layer_id]:
                if slot[0] in kept or slot in inputs:
                    continue
                if slot[0] not in fed and _constant(graph, slot[0], constant):
                    kept.add(slot[0])
                    pending.append(slot[0])
                else:
                    inputs[slot] = _spec(model, slot, values)
        for variable in model.variables:  # its readers and writer go together (OpenVINO refuses one alone)
            pair = {*variable.readers, *([variable.writer] if variable.writer is not None else [])}
            if pair & kept:
                pending.extend(pair - kept)
                kept |= pair
    inputs = {slot: spec for slot, spec in inputs.items() if slot[0] not in kept}
    place = {layer_id: index for index, layer_id in enumerate(graph.order)}
    ordered = dict(sorted(inputs.items(), key=lambda item: (place[item[0][0]], item[0][1])))
    return Cut(kept, ordered, outputs)


def _spec(model: Model, slot: Slot, values: Mapping[Slot, np.ndarray] | None) -> TensorSpec:
    """The spec of the Parameter replacing ``slot``: its value's type and static shape, else the inferred one. A
    dim of length 0 is declared dynamic: OpenVINO's CPU plugin kills the process (SIGFPE) compiling a Gather of
    static shape with a zero-sized dim, and a stateful model's first step reads its KV cache empty (a part fed
    it, as ``crosscheck --reduce`` makes, would crash it)."""
    value = None if values is None else values.get(slot)
    element_type = None if value is None else element_type_of(np.asarray(value).dtype)
    if element_type is None:
        return model.inference.output_spec(*slot)
    return TensorSpec(element_type, PartialShape(tuple(DYNAMIC_DIM if n == 0 else Dim(n, n)
                                                       for n in map(int, np.shape(value)))))


def sub_ir(model: Model, cut: Cut) -> tuple[bytes, bytes]:
    """The ``(xml, bin)`` of ``cut`` of ``model``."""
    return ir_bytes(model.graph.net, cut)


def _constant(graph: Graph, layer_id: str, known: dict[str, bool]) -> bool:
    """Whether a layer's value comes from weights alone: a layer of no inputs holding weights (a Const), or one
    whose every input is such (iteratively: decompression chains can be long)."""
    stack = [layer_id]
    while stack:
        current = stack[-1]
        if current in known:
            stack.pop()
            continue
        sources = [source for source, _ in graph.sources[current]]
        if not sources:
            known[current] = all(key in graph.layers[current].data for key in _WEIGHTS_KEYS)
            stack.pop()
            continue
        unknown = [source for source in sources if source not in known]
        if unknown:
            stack.extend(unknown)
            continue
        known[current] = all(known[source] for source in sources)
        stack.pop()
    return known[layer_id]


def _below(graph: Graph, starts: Iterable[str]) -> set[str]:
    """The layer ids that a layer of ``starts`` reaches, ``starts`` included."""
    return _closure(starts, lambda layer_id: (user for position in range(len(graph.layers[layer_id].outputs))
                                              for user, _ in graph.consumers.get((layer_id, position), ())))


def _closure(seeds: Iterable[str], step) -> set[str]:
    found, stack = set(), list(seeds)
    while stack:
        layer_id = stack.pop()
        if layer_id not in found:
            found.add(layer_id)
            stack.extend(step(layer_id))
    return found


def _resolve(graph: Graph, names: Sequence[str], option: str) -> list[str]:
    """Layer ids for names (or ids), in the order given; InputError naming the first unknown one."""
    by_name: dict[str, list[str]] = {}
    for layer_id, layer in graph.layers.items():
        by_name.setdefault(layer.name, []).append(layer_id)
    found = []
    for name in names:
        ids = by_name.get(name) or ([name] if name in graph.layers else None)
        if ids is None:
            near = closest(name, by_name)
            raise InputError(f"{option} {clip_text(name)!r}: the model has no layer of that name or id",
                             hint=f"did you mean '{near}'?" if near else
                             "`ir-run inspect MODEL` lists the layers")
        if len(ids) > 1:
            shown = ", ".join(ids[:MESSAGE_ITEMS])
            raise InputError(f"{option} {clip_text(name)!r}: {len(ids)} layers have that name (ids {shown})",
                             hint="name the layer by its id")
        found.extend(layer_id for layer_id in ids if layer_id not in found)
    return found


def _named(graph: Graph, layer_id: str) -> str:
    layer = graph.layers[layer_id]
    return f"'{clip_text(layer.name)}' (id {clip_text(layer_id)})"
