"""Where crosscheck observes the device: only at tensors its compiled graph materialises anyway (the default), or
at every layer output (``every_layer``), and what a diverging fused group does alone.

Adding a model output can change what a device compiles (a fusion breaks, a precision changes) and so what it
computes. By default the model is compiled as it is first; its runtime graph (``get_runtime_model()``) names,
per computing node, the IR layers fused into it (rt_info ``originalLayersNames``), the kernel (``layerType``,
``primitiveType``) and precisions (``runtimePrecision``, ``outputPrecisions``). Outputs are added only at the
groups' boundaries (a group member's output read outside the group), and the instrumented compilation must
prove it changed nothing: the same groups with the same kernels and precisions, and final outputs equal to the
uninstrumented run's bit for bit. When the proof fails, the report says what changed, and the boundaries are
bisected instead: one added output per compilation, binary search for the first that diverges (each probe's
own changes noted). Layer outputs inside a group, or folded away, are not observable ("not materialised").

A diverging group is then run alone (written by :mod:`ir_runner.ir.writer` with its constants, fed ir-run's
values of what it reads): when it diverges alone the error is its own, otherwise it is inherited (its inputs on
the device differ where nothing materialises them, or the error needs its context).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np

from . import device as devices
from .device import Key, RuntimeGroup
from .model import Model
from .record import Record

EVERY_LAYER, GROUPS, BISECTION = "every layer", "group boundaries", "bisection"


class Observation(Record):
    """How the device was observed: ``run`` (a device.DeviceRun), the ``mode`` (EVERY_LAYER, GROUPS or
    BISECTION), the ``groups`` of the uninstrumented compilation (none in EVERY_LAYER mode), the proof of
    non-intrusion (``proven``; ``difference`` says what the instrumentation changed) and ``probes`` (bisection:
    the layer outputs probed, each with what its instrumentation changed, or None)."""

    __slots__ = ("run", "mode", "groups", "proven", "difference", "probes")

    def __init__(self, run, mode: str, groups: list[RuntimeGroup], proven: bool | None = None,
                 difference: str | None = None, probes: list[tuple[Key, str | None]] | None = None) -> None:
        self.run = run
        self.mode = mode
        self.groups = groups
        self.proven = proven
        self.difference = difference
        self.probes = probes or []


def observe(model: Model, keys: list[Key], fed: dict[str, np.ndarray], device: str, precision: str,
            variables, every_layer: bool, diverges, constant: set[str]) -> Observation:
    """Run the model on the device and observe ``keys`` (layer name, output position; in execution order) where
    the mode allows; ``diverges(key, value)`` tells a bisection whether a probed value differs from ir-run's;
    ``constant``: the ids of the layers whose value ir-run knows before running (never instrumented)."""
    source, weights = model.source, model.weights_source
    if every_layer:
        run = devices.run_on_device(source, weights, keys, fed, device, precision, variables)
        return Observation(run, EVERY_LAYER, [])
    wanted: list[Key] = []

    def boundaries(groups: list[RuntimeGroup], disturbed: list[RuntimeGroup]) -> list[Key]:
        wanted[:] = group_boundaries(model, keys, groups, constant, disturbed)
        return wanted

    names = {layer.name for layer in model.graph.layers.values()}
    boundary_run = devices.run_at_boundaries(source, weights, boundaries, fed, device, precision, variables, names)
    run, groups = boundary_run.run, boundary_run.groups
    if boundary_run.proven:
        _mark_unmaterialised(model, keys, run, groups, device)
        return Observation(run, GROUPS, groups, True)
    probes: list[tuple[Key, str | None]] = []
    values: dict[Key, np.ndarray] = {}

    def probe(index: int) -> bool:
        key = wanted[index]
        value, changed = devices.probe_one(source, weights, key, groups, fed, device, precision, variables, names)
        probes.append((key, changed))
        if value is None:
            return False
        values[key] = value
        return diverges(key, value)

    low, high = 0, len(wanted) - 1
    if wanted and probe(high):
        while low < high:  # the first boundary that diverges: wanted[high] does, none before wanted[low] does
            middle = (low + high) // 2
            if probe(middle):
                high = middle
            else:
                low = middle + 1
        if wanted[high] not in values:
            probe(high)
    run.values = values
    run.unobservable = {key: "not probed: the bisection compiles one added output at a time, and probed only"
                        " the boundaries it needed" for key in keys if key not in values}
    return Observation(run, BISECTION, groups, False, boundary_run.difference, probes)


def group_boundaries(model: Model, keys: list[Key], groups: list[RuntimeGroup], constant: set[str],
                     disturbed: list[RuntimeGroup] = ()) -> list[Key]:
    """The layer outputs (of ``keys``, in their order) that the device materialises: an output of a group's IR
    layer read by a layer outside that group, and every output the model returns. Not the ``constant`` layers' (ids):
    made an output, a constant can no longer be fused into the layer reading it (weights reordered for a
    convolution), and its value is the IR's. Nor the outputs of ``disturbed`` groups or the outputs they read
    (an earlier instrumentation changed them), unless a Result returns them anyway."""
    graph = model.graph
    ids = _ids_by_name(model)
    member_of: dict[str, int] = {}
    for index, group in enumerate(groups):
        for name in group.layers:
            if name in ids and ids[name] not in constant:
                member_of.setdefault(ids[name], index)
    results = {layer.id for layer in graph.results}
    returned = {graph.sources[result][0] for result in results}
    touched = _neighbourhood(graph, ids, disturbed)
    found = {(graph.layers[layer_id].name, position) for layer_id, position in returned}  # the model's outputs
    for layer_id, index in member_of.items():
        for position in range(len(graph.layers[layer_id].outputs)):
            if (layer_id, position) in returned or (
                    layer_id not in touched and _read_outside(graph, (layer_id, position), index, member_of, results)):
                found.add((graph.layers[layer_id].name, position))
    return [key for key in keys if key in found]


def _neighbourhood(graph, ids: dict[str, str], disturbed: list[RuntimeGroup]) -> set[str]:
    """The layers of the disturbed groups and those around them: as many layers away, up and down, as times the
    group was disturbed."""
    found: set[str] = set()
    for group in {id(group): group for group in disturbed}.values():
        layers = {ids[name] for name in group.layers if name in ids}
        for _ in range(sum(other is group for other in disturbed)):
            layers |= {source for layer_id in layers for source, _ in graph.sources[layer_id]}
            layers |= {user for layer_id in layers for position in range(len(graph.layers[layer_id].outputs))
                       for user, _ in graph.consumers.get((layer_id, position), ())}
        found |= layers
    return found


def _read_outside(graph, slot: tuple[str, int], index: int, member_of: dict[str, int], results: set[str]) -> bool:
    """Whether a Result, or a layer of another group, reads ``slot``, directly or through layers in no group
    (folded, removed, or fused under another name: the device holds no tensor between)."""
    stack, seen = [slot], set()
    while stack:
        current = stack.pop()
        for user, _ in graph.consumers.get(current, ()):
            if user in results or member_of.get(user, index) != index:
                return True
            if user not in member_of and user not in seen:
                seen.add(user)
                stack.extend((user, position) for position in range(len(graph.layers[user].outputs)))
    return False


def group_of(model: Model, groups: list[RuntimeGroup], layer_name: str) -> RuntimeGroup | None:
    """The runtime group an IR layer was fused into (None when it is in none: folded or removed)."""
    return next((group for group in groups if layer_name in group.layers), None)


class GroupVerdict(Record):
    """A diverging group: its IR ``layers`` (names, in execution order), the device's ``kernel`` and
    ``primitive``, ``runtime_precision`` and ``output_precisions``, the ``boundary`` row's layer (a LayerRef),
    and whether the error is its ``own`` (it diverges alone, fed ir-run's values: ``alone`` mismatches of
    ``size``) or inherited (False), None when it could not be run alone (``note`` says why); ``upstream``: the
    layers it reads whose outputs the device did not show (constants too), where an inherited error comes from."""

    __slots__ = ("layers", "kernel", "primitive", "runtime_precision", "output_precisions", "boundary", "own",
                 "alone", "size", "note", "upstream")

    def __init__(self, layers: list[str], group: RuntimeGroup | None, boundary) -> None:
        self.layers = layers
        self.kernel = group.kernel if group else None
        self.primitive = group.primitive if group else None
        self.runtime_precision = group.runtime_precision if group else None
        self.output_precisions = group.output_precisions if group else None
        self.boundary = boundary
        self.own: bool | None = None
        self.alone: int | None = None
        self.size: int | None = None
        self.note: str | None = None
        self.upstream: list[str] = []


def isolate(model: Model, row, groups: list[RuntimeGroup], ours: Mapping[tuple[str, int], np.ndarray],
            observed: Collection[Key], device: str, precision: str, compare) -> GroupVerdict:
    """Run the group holding ``row``'s layer alone on ir-run's values of what it reads and say whether it
    diverges (``compare(ours, device_value)`` gives the elements that differ and the size); name the layers
    upstream of it that nothing ``observed`` (layer name, output position) shows, where an inherited error comes
    from."""
    from .errors import IRError
    from .model import load
    from .parts import cut_of, sub_ir

    graph = model.graph
    group = group_of(model, groups, row.layer.name)
    ids = _ids_by_name(model)
    grouped = {ids[name] for other in groups for name in other.layers if name in ids}
    members = {ids[name] for name in (group.layers if group else (row.layer.name,)) if name in ids}
    members.add(row.layer.id)
    members |= _between(graph, members, grouped)  # layers fused without their names (an identity Gather)
    order = [layer_id for layer_id in graph.order if layer_id in members]
    verdict = GroupVerdict([graph.layers[layer_id].name for layer_id in order], group, row.layer)
    verdict.upstream = _unseen_upstream(graph, members, observed)
    try:
        cut = cut_of(model, members, [(row.layer.id, row.position)], ours)
        xml, weights = sub_ir(model, cut)
        part = load(xml, weights)
        feeds = {info.layer_name: np.asarray(ours[slot]) for info, slot in zip(part.inputs, cut.inputs)}
        result = part.graph.results[0]
        key = (part.graph.layers[part.graph.sources[result.id][0][0]].name, part.graph.sources[result.id][0][1])
        alone = devices.run_on_device(xml, weights, [key], feeds, device, precision)
    except IRError as error:
        verdict.note = f"it could not be run alone: {error}"
        return verdict
    value = alone.values.get(key)
    if value is None:
        verdict.note = f"it could not be run alone: {alone.unobservable.get(key)}"
        return verdict
    verdict.alone, verdict.size = compare(np.asarray(ours[(row.layer.id, row.position)]), value)
    verdict.own = verdict.alone > 0
    return verdict


def _between(graph, members: set[str], grouped: set[str]) -> set[str]:
    """The layers of no group on a path from one member to another."""
    def closure(step) -> set[str]:
        found, stack = set(), list(members)
        while stack:
            for other in step(stack.pop()):
                if other not in grouped and other not in members and other not in found:
                    found.add(other)
                    stack.append(other)
        return found

    down = closure(lambda layer_id: (user for position in range(len(graph.layers[layer_id].outputs))
                                     for user, _ in graph.consumers.get((layer_id, position), ())))
    up = closure(lambda layer_id: (source for source, _ in graph.sources[layer_id]))
    return down & up


def _unseen_upstream(graph, members: set[str], observed: Collection[Key]) -> list[str]:
    """The layers the members read, directly or through others, whose outputs nothing observed (not the
    model's inputs), in execution order."""
    parameters = {layer.id for layer in graph.parameters}
    found, stack = set(), [source for layer_id in members for source in graph.sources[layer_id]]
    while stack:
        layer_id, position = stack.pop()
        if layer_id in members or layer_id in found or layer_id in parameters \
                or (graph.layers[layer_id].name, position) in observed:
            continue
        found.add(layer_id)
        stack.extend(graph.sources[layer_id])
    return [graph.layers[layer_id].name for layer_id in graph.order if layer_id in found]


def _ids_by_name(model: Model) -> dict[str, str]:
    """Layer ids by name, for the names only one layer has (OpenVINO matches layers by name)."""
    ids: dict[str, str] = {}
    repeated = set()
    for layer_id, layer in model.graph.layers.items():
        if layer.name in ids:
            repeated.add(layer.name)
        ids[layer.name] = layer_id
    return {name: layer_id for name, layer_id in ids.items() if name not in repeated}


def mark_overwritten(model: Model, run, ours: Mapping[Key, np.ndarray], device: str) -> None:
    """Make not observable each layer output the device overwrote after computing it: its device value differs
    from ir-run's but equals, bit for bit, the value of an output of a layer reading it, on the device and in
    ir-run alike (that later output agrees). That layer was computed in place, in this tensor, which read after
    the inference holds the later values (openvino-tokenizers' Truncate on the ragged rows of the tokenizer
    before it, on the CPU plugin); the later layer's own row compares them."""
    graph = model.graph
    ids = _ids_by_name(model)
    for key, value in list(run.values.items()):
        layer_id = ids.get(key[0])
        if layer_id is None or key not in ours or devices.same_bits(np.asarray(ours[key]), value):
            continue  # (only an output that differs is looked at)
        later = [(graph.layers[user], position) for user, _ in graph.consumers.get((layer_id, key[1]), ())
                 for position in range(len(graph.layers[user].outputs))]
        for layer, position in later:
            other = (layer.name, position)
            if other in run.values and other in ours and devices.same_bits(value, run.values[other]) \
                    and devices.same_bits(np.asarray(ours[other]), value):
                del run.values[key]
                run.unobservable[key] = (f"overwritten: {device} computes '{layer.name}' ({layer.type}) in place in"
                                         f" this tensor, which after the inference holds that layer's output"
                                         f" {position}")
                break


def _mark_unmaterialised(model: Model, keys: list[Key], run, groups: list[RuntimeGroup], device: str) -> None:
    """Say, for each layer output not observed, why: inside a fused group, or not in the runtime graph."""
    for key in keys:
        if key in run.values or key in run.unobservable:
            continue
        group = group_of(model, groups, key[0])
        run.unobservable[key] = (
            f"not materialised by {device}: inside the fused group {', '.join(group.layers)} ({group.kernel})"
            if group else f"not materialised by {device}: not in its runtime graph (folded, or fused without its"
            " name)")
