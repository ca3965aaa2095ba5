"""The graph of an IR: edges resolved to port positions, checked, and put in topological order.

Port ids are not positions: an edge names port ids, which are mapped to positions by their order
inside the layer's ``<input>`` / ``<output>`` (ids are resolved per direction). Execution order is the
topological order of the edges that stays closest to document order: document order itself when every
edge points forward (as OpenVINO writes IRs), else each step takes the earliest layer in the document
whose inputs are ready.
"""

from __future__ import annotations

from .errors import MESSAGE_ITEMS, GraphError, IRError, clip_text
from .ir.records import EdgeRecord, LayerRecord, NetRecord, Record
from .ops.registry import layer_ref, type_version

Slot = tuple[str, int]  # (layer id, output position)


class Graph(Record):
    """Layers by id, each input's producer and consumers, the execution order, the Parameters and Results
    (both in document order: the model's inputs and outputs)."""

    __slots__ = ("net", "layers", "sources", "consumers", "order", "parameters", "results", "subgraphs")

    def __init__(self, net: NetRecord, layers: dict[str, LayerRecord], sources: dict[str, tuple[Slot, ...]],
                 consumers: dict[Slot, tuple[tuple[str, int], ...]], order: tuple[str, ...],
                 parameters: tuple[LayerRecord, ...], results: tuple[LayerRecord, ...]) -> None:
        self.net = net
        self.layers = layers
        self.sources = sources
        self.consumers = consumers
        self.order = order
        self.parameters = parameters
        self.results = results
        self.subgraphs: dict[tuple[str, str], object] = {}  # (layer id, body tag) -> subgraph.Subgraph, built on use


def read_graph(source, weights=None) -> Graph:
    """Read an IR (``ir.reader.read_ir``) and build its graph. The reader knows no operation, so its errors
    name a layer by type and opset as written; here they get the ``Type-version`` every other message shows."""
    from .ir.reader import read_ir

    try:
        net = read_ir(source, weights)
    except IRError as error:
        if error.layer is not None:
            type_name, _, version = error.layer.type_version.partition(" ")
            error.layer = error.layer._replace(type_version=type_version(type_name, version))
            error.args = (error._format(),)
        raise
    return build_graph(net)


def build_graph(net: NetRecord) -> Graph:
    """Resolve and check the edges of ``net``; raise GraphError naming the layers involved."""
    layers = _index_layers(net)
    place = {layer_id: index for index, layer_id in enumerate(layers)}  # document position
    forward = True  # every edge so far goes to a later layer in the document
    inputs: dict[str, list[Slot | None]] = {lid: [None] * len(layer.inputs) for lid, layer in layers.items()}
    consumers: dict[Slot, list[tuple[str, int]]] = {}
    # (layer id, port id) -> position, for all layers at once (port ids are resolved per direction)
    in_positions = {(lid, port.id): port.position for lid, layer in layers.items() for port in layer.inputs}
    out_positions = {(lid, port.id): port.position for lid, layer in layers.items() for port in layer.outputs}
    if len(in_positions) + len(out_positions) != sum(len(layer.inputs) + len(layer.outputs) for layer in net.layers):
        _refuse_duplicate_port_ids(layers)
    for edge in net.edges:
        from_layer, to_layer = edge.from_layer, edge.to_layer
        try:
            src = out_positions[from_layer, edge.from_port]
        except KeyError:
            raise _endpoint_error(edge, layers, from_layer, edge.from_port, "from") from None
        try:
            dst = in_positions[to_layer, edge.to_port]
        except KeyError:
            raise _endpoint_error(edge, layers, to_layer, edge.to_port, "to") from None
        slots = inputs[to_layer]
        if slots[dst] is not None:
            raise GraphError(
                f"input port id {clip_text(edge.to_port)} has two producers: {layer_ref(layers[slots[dst][0]])} and"
                f" {layer_ref(layers[from_layer])} (edge at line {edge.line})",
                layer=layer_ref(layers[to_layer]),
                hint="remove one of the two <edge>s",
            )
        slot = (from_layer, src)
        slots[dst] = slot
        if forward and place[from_layer] >= place[to_layer]:
            forward = False
        users = consumers.get(slot)
        if users is None:
            consumers[slot] = [(to_layer, dst)]
        else:
            users.append((to_layer, dst))
    for lid, slots in inputs.items():
        if None in slots:
            port = layers[lid].inputs[slots.index(None)]
            raise GraphError(
                "this input is not connected: no <edge> ends at it",
                layer=layer_ref(layers[lid]),
                port=f"input {port.label}",
                hint=f'add <edge from-layer=".." from-port=".." to-layer="{clip_text(lid)}"'
                     f' to-port="{clip_text(port.id)}"/>',
            )
    sources = {lid: tuple(slots) for lid, slots in inputs.items()}  # type: ignore[arg-type]
    order = tuple(layers) if forward else _topological_order(layers, place, sources, consumers)
    kinds = [layer.type.lower() for layer in net.layers]
    parameters = tuple(layer for layer, kind in zip(net.layers, kinds) if kind == "parameter")
    results = tuple(layer for layer, kind in zip(net.layers, kinds) if kind == "result")
    return Graph(net, layers, sources, {k: tuple(v) for k, v in consumers.items()}, order, parameters, results)


def _index_layers(net: NetRecord) -> dict[str, LayerRecord]:
    layers = {layer.id: layer for layer in net.layers}
    if len(layers) != len(net.layers):
        seen: dict[str, LayerRecord] = {}
        for layer in net.layers:
            first = seen.setdefault(layer.id, layer)
            if first is not layer:
                raise GraphError(
                    f"two layers have id {clip_text(layer.id)}: {layer_ref(first)} and {layer_ref(layer)}",
                    hint="layer ids must be unique",
                )
    return layers


def _refuse_duplicate_port_ids(layers: dict[str, LayerRecord]) -> None:
    """Raise for the first layer with two input (or two output) ports of the same id: edges could not tell
    them apart."""
    for layer in layers.values():
        for direction, ports in (("input", layer.inputs), ("output", layer.outputs)):
            seen: set[str] = set()
            duplicate = next((port.id for port in ports if port.id in seen or seen.add(port.id)), None)
            if duplicate is not None:
                raise GraphError(f"two {direction} ports have id {clip_text(duplicate)}", layer=layer_ref(layer))


def _endpoint_error(edge: EdgeRecord, layers, layer_id: str, port_id: str, side: str) -> GraphError:
    direction = "output" if side == "from" else "input"
    attributes = {"from-layer": edge.from_layer, "from-port": edge.from_port, "to-layer": edge.to_layer,
                  "to-port": edge.to_port}
    where = f"<edge {' '.join(f'{k}={clip_text(v)}' for k, v in attributes.items())}> at line {edge.line}"
    if layer_id not in layers:
        return GraphError(f"{where} names layer id {clip_text(layer_id)}, which does not exist")
    layer = layers[layer_id]
    ports = layer.inputs if side == "to" else layer.outputs
    known = ", ".join(clip_text(p.id) for p in ports[:MESSAGE_ITEMS])
    if len(ports) > MESSAGE_ITEMS:
        known += f", ... ({len(ports)} ports)"
    return GraphError(
        f"{where} names {direction} port id {clip_text(port_id)}, which this layer does not have"
        f" ({direction} port ids: {known or 'none'})",
        layer=layer_ref(layer),
    )


def _topological_order(layers, place, sources, consumers) -> tuple[str, ...]:
    """Kahn's algorithm taking, at each step, the ready layer that comes first in the document."""
    import heapq  # only IRs with an edge pointing backwards get here

    pending = {lid: len(slots) for lid, slots in sources.items()}
    ready = [place[lid] for lid, count in pending.items() if not count]
    heapq.heapify(ready)
    ids = list(layers)
    order: list[str] = []
    while ready:
        lid = ids[heapq.heappop(ready)]
        order.append(lid)
        for position in range(len(layers[lid].outputs)):
            for consumer, _ in consumers.get((lid, position), ()):
                pending[consumer] -= 1
                if not pending[consumer]:
                    heapq.heappush(ready, place[consumer])
    if len(order) != len(layers):
        cycle = _find_cycle({lid for lid, n in pending.items() if n > 0}, sources)
        names = " -> ".join(str(layer_ref(layers[lid])) for lid in cycle[:MESSAGE_ITEMS])
        if len(cycle) > MESSAGE_ITEMS:
            names += f" -> ... ({len(cycle) - 1} layers in the cycle)"  # (the first one closes it)
        raise GraphError(f"the edges form a cycle: {names}", hint="an IR graph must be acyclic")
    return tuple(order)


def _find_cycle(stuck: set[str], sources) -> list[str]:
    """Follow producers among the layers that never became ready until one repeats."""
    start = min(stuck)
    seen: dict[str, int] = {}
    path: list[str] = []
    node = start
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = next(src for src, _ in sources[node] if src in stuck)
    cycle = path[seen[node]:]
    cycle.reverse()
    return cycle + [cycle[0]]
