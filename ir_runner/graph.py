"""The graph of an IR: edges resolved to port positions, checked, and put in topological order.

Port ids are not positions: an edge names port ids, which are mapped to positions by their order
inside the layer's ``<input>`` / ``<output>`` (ids are resolved per direction). Execution order is a
topological order of the edges (ties broken by document order), never document order itself.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .errors import GraphError
from .ir.records import EdgeRecord, LayerRecord, NetRecord
from .ops.registry import layer_ref

Slot = tuple[str, int]  # (layer id, output position)


@dataclass(frozen=True)
class Graph:
    """Layers by id, each input's producer, and a topological order."""

    net: NetRecord
    layers: dict[str, LayerRecord]
    sources: dict[str, tuple[Slot, ...]]
    consumers: dict[Slot, tuple[tuple[str, int], ...]]
    order: tuple[str, ...]

    def of_type(self, type_name: str) -> list[LayerRecord]:
        """Layers of a type in document order (Parameters and Results define input/output order)."""
        wanted = type_name.lower()
        return [layer for layer in self.net.layers if layer.type.lower() == wanted]


def build_graph(net: NetRecord) -> Graph:
    """Resolve and check the edges of ``net``; raise GraphError naming the layers involved."""
    layers = _index_layers(net)
    inputs: dict[str, list[Slot | None]] = {lid: [None] * len(layer.inputs) for lid, layer in layers.items()}
    consumers: dict[Slot, list[tuple[str, int]]] = {}
    in_positions = {lid: _port_positions(layer, "input") for lid, layer in layers.items()}
    out_positions = {lid: _port_positions(layer, "output") for lid, layer in layers.items()}
    for edge in net.edges:
        src, dst = _endpoint(edge, layers, out_positions, "from"), _endpoint(edge, layers, in_positions, "to")
        previous = inputs[edge.to_layer][dst]
        if previous is not None:
            producer = layers[previous[0]]
            raise GraphError(
                f"input port id {edge.to_port} has two producers: {layer_ref(producer)} and"
                f" {layer_ref(layers[edge.from_layer])} (edge at line {edge.line})",
                layer=layer_ref(layers[edge.to_layer]),
                hint="remove one of the two <edge>s",
            )
        inputs[edge.to_layer][dst] = (edge.from_layer, src)
        consumers.setdefault((edge.from_layer, src), []).append((edge.to_layer, dst))
    for lid, slots in inputs.items():
        for position, slot in enumerate(slots):
            if slot is None:
                port = layers[lid].inputs[position]
                raise GraphError(
                    "this input is not connected: no <edge> ends at it",
                    layer=layer_ref(layers[lid]),
                    port=f"input {port.label}",
                    hint=f'add <edge from-layer=".." from-port=".." to-layer="{lid}" to-port="{port.id}"/>',
                )
    sources = {lid: tuple(slots) for lid, slots in inputs.items()}  # type: ignore[arg-type]
    order = _topological_order(net, layers, sources, consumers)
    return Graph(net, layers, sources, {k: tuple(v) for k, v in consumers.items()}, order)


def _index_layers(net: NetRecord) -> dict[str, LayerRecord]:
    layers: dict[str, LayerRecord] = {}
    for layer in net.layers:
        if layer.id in layers:
            first = layers[layer.id]
            raise GraphError(
                f"two layers have id {layer.id}: {layer_ref(first)} and {layer_ref(layer)}",
                hint="layer ids must be unique",
            )
        layers[layer.id] = layer
    return layers


def _port_positions(layer: LayerRecord, direction: str) -> dict[str, int]:
    ports = layer.inputs if direction == "input" else layer.outputs
    positions: dict[str, int] = {}
    for port in ports:
        if port.id in positions:
            raise GraphError(f"two {direction} ports have id {port.id}", layer=layer_ref(layer))
        positions[port.id] = port.position
    return positions


def _endpoint(edge: EdgeRecord, layers, positions, side: str) -> int:
    """The port position an edge's ``side`` ('from' or 'to') names; a GraphError if there is none."""
    layer_id, port_id = (edge.from_layer, edge.from_port) if side == "from" else (edge.to_layer, edge.to_port)
    position = positions.get(layer_id, {}).get(port_id)
    if position is None:
        raise _endpoint_error(edge, layers, layer_id, port_id, side)
    return position


def _endpoint_error(edge: EdgeRecord, layers, layer_id: str, port_id: str, side: str) -> GraphError:
    direction = "output" if side == "from" else "input"
    where = (f"<edge from-layer={edge.from_layer} from-port={edge.from_port} to-layer={edge.to_layer}"
             f" to-port={edge.to_port}> at line {edge.line}")
    if layer_id not in layers:
        return GraphError(f"{where} names layer id {layer_id}, which does not exist")
    layer = layers[layer_id]
    ports = layer.inputs if side == "to" else layer.outputs
    known = ", ".join(p.id for p in ports) or "none"
    return GraphError(
        f"{where} names {direction} port id {port_id}, which this layer does not have"
        f" ({direction} port ids: {known})",
        layer=layer_ref(layer),
    )


def _topological_order(net, layers, sources, consumers) -> tuple[str, ...]:
    pending = {lid: len(slots) for lid, slots in sources.items()}
    ready = deque(layer.id for layer in net.layers if pending[layer.id] == 0)
    order: list[str] = []
    while ready:
        lid = ready.popleft()
        order.append(lid)
        for position in range(len(layers[lid].outputs)):
            for consumer, _ in consumers.get((lid, position), ()):
                pending[consumer] -= 1
                if pending[consumer] == 0:
                    ready.append(consumer)
    if len(order) != len(layers):
        cycle = _find_cycle({lid for lid, n in pending.items() if n > 0}, sources)
        names = " -> ".join(str(layer_ref(layers[lid])) for lid in cycle)
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
