"""An IR as Model Explorer's graph JSON (the ``{"graphs": [...]}`` an adapter returns), knowing no operation.

Every layer is a node (id: the layer id; label: its type; attributes: name, ``Type-version``, id, XML line, the
``<data>`` attributes as written, the defaults and resolved values its declaration adds, errors) except
Const-like layers (no input, a constant value: what ``inspect`` lists as constants), which are folded into each
consumer (an attribute, and its input metadata) with their type, shape, range and first values. Every input and
output port has metadata: port id, declared and inferred spec, the check. Layers are grouped by their names'
module prefixes (``__module.encoder.layer.0/aten::linear/MatMul`` lies in ``encoder/layer.0/aten::linear``), so
a large model opens as a few collapsed groups. The layers of a decompression subgraph (what
``divergence.decompression_results`` finds: ``u4 Const -> Convert -> Subtract -> Multiply``) share a group of
their own, one collapsed unit. Bodies (``<body>``, ``<then_body>``...) are graphs of their own, listed in the
owner's ``subgraphIds`` and inferred for the owner's inputs (declared specs only when ir-run could not infer
them). Layers reading and writing one variable name each other (``node_ids`` attributes) and are linked by an
edge overlay.

Nothing is lost: the layers, edges and ports of the IR can be read back from the JSON (``tests/test_view.py``
does), folded Consts included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..graph import build_graph
from ..infer import _declared_text
from ..ops.registry import type_version
from ..report import FIRST_VALUES, Analysis, inspect_data

if TYPE_CHECKING:
    from ..graph import Graph
    from ..ir.records import LayerRecord

VALUES_SHOWN = FIRST_VALUES
MAIN_GRAPH = "main"
_GROUP = "___group___"  # Model Explorer's suffix of a group node's id


def model_graphs(analysis: Analysis) -> dict[str, Any]:
    """The graphs of an analysed model (``report.analyse``): the main graph first, then every body."""
    graph, inference = analysis.graph, analysis.inference
    assert graph is not None and inference is not None
    data = inspect_data(analysis)
    units = decompression_units(analysis)
    graphs: list[dict[str, Any]] = []
    main = _graph(MAIN_GRAPH, analysis, data, units, graphs)
    main["groupNodeAttributes"][""] = {
        "model": str(data["model"]), "net": str(data["name"]), "IR version": str(data["ir_version"]),
        "opsets": ", ".join(data["opsets"]), "layers": str(data["layer_count"]),
        "constants folded": str(len(_constants(graph, data))),
        "decompression subgraphs": str(len(set(units.values())))}
    _link_variables(main, data.get("variables", ()), graph)
    return {"graphs": [main, *graphs]}


def node_namespace(name: str) -> str:
    """The group path of a layer named ``name``: its ``/``-separated components but the last; a leading
    ``__module.a.b.0`` becomes ``a/b.0`` (a numeric component stays with the one before it)."""
    parts = name.split("/")[:-1]
    if parts and parts[0].startswith("__module."):
        module: list[str] = []
        for piece in parts[0][len("__module."):].split("."):
            if piece.isdigit() and module:
                module[-1] += "." + piece
            elif piece:
                module.append(piece)
        parts = module + parts[1:]
    return "/".join(part for part in parts if part)


def group_node_id(namespace: str) -> str:
    """Model Explorer's id of the group node of ``namespace``."""
    return namespace + _GROUP


def decompression_units(analysis: Analysis) -> dict[str, str]:
    """Layer id -> the id of the decompression subgraph result it computes (Consts excluded: they are folded),
    for every decompression subgraph ``divergence.decompression_results`` finds."""
    from ..divergence import decompression_results

    graph, inference = analysis.graph, analysis.inference
    assert graph is not None and inference is not None
    units: dict[str, str] = {}
    for found in decompression_results(graph, inference):
        stack = [found.layer.id]
        while stack:
            layer_id = stack.pop()
            if layer_id in units or not graph.sources[layer_id]:
                continue
            units[layer_id] = found.layer.id
            stack.extend(source for source, _ in graph.sources[layer_id])
    return units


def _graph(graph_id: str, analysis: Analysis, data: dict[str, Any] | None, units: dict[str, str],
           bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """The graph of ``analysis`` (``data``: its inspect_data; None for a body ir-run could not infer: declared
    specs only, Consts not folded), appending its bodies' graphs to ``bodies``."""
    graph = analysis.graph
    assert graph is not None
    entries = {entry["id"]: entry for entry in data["layers"]} if data else {}
    constants = _constants(graph, data) if data else {}
    nodes = []
    groups: dict[str, dict[str, str]] = {}
    unit_spaces = {}
    for result in set(units.values()):
        layer = graph.layers[result]
        space = "/".join(p for p in (node_namespace(layer.name), f"decompression {_short(layer.name)}") if p)
        unit_spaces[result] = space
        entry = entries.get(result)
        groups[space] = {"decompression subgraph": f"computes {_output_text(entry, layer)} from constants",
                         "result layer": f"{layer.name} (id {layer.id})"}
    for layer_id in graph.order:
        if layer_id in constants:
            continue
        layer = graph.layers[layer_id]
        namespace = unit_spaces[units[layer_id]] if layer_id in units else node_namespace(layer.name)
        node = _node(layer, graph, entries.get(layer_id), constants, namespace)
        if layer.bodies:
            for tag, net in layer.bodies.items():
                body_id = _body_id(graph_id, layer, tag)
                node["subgraphIds"].append(body_id)
                bodies.append({})  # keeps the order: a body before the bodies nested in it
                index = len(bodies) - 1
                bodies[index] = _body(body_id, analysis.source, graph, layer, tag, net, bodies)
                bodies[index]["groupNodeAttributes"][""] = {"body of": f"{layer.name} (id {layer.id})", "tag": tag}
        nodes.append(node)
    return {"id": graph_id, "nodes": nodes, "groupNodeAttributes": groups}


def _constants(graph: Graph, data: dict[str, Any]) -> dict[str, dict]:
    """The layers folded into their consumers: constants (inspect's) that read no input."""
    return {const["id"]: const for const in data["constants"] if not graph.sources[const["id"]]}


def _body(body_id: str, source: str, owner_graph: Graph, layer: LayerRecord, tag: str, net,
          bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """A body's graph: as inferred for its owner's inputs when the owner was inferred (ir-run keeps the body's
    latest inference), else its layers with their declared specs."""
    subgraph = owner_graph.subgraphs.get((layer.id, tag))
    inference = subgraph.latest_inference() if subgraph is not None else None
    if inference is None:
        return _graph(body_id, Analysis(source, build_graph(net)), None, {}, bodies)
    body = Analysis(source, subgraph.graph, inference)
    return _graph(body_id, body, inspect_data(body), {}, bodies)


def _body_id(parent: str, layer: LayerRecord, tag: str) -> str:
    prefix = "" if parent == MAIN_GRAPH else parent + " > "
    return f"{prefix}{layer.name} (id {layer.id}) {tag}"


def _node(layer: LayerRecord, graph: Graph, entry: dict | None, constants: dict[str, dict],
          namespace: str) -> dict[str, Any]:
    attrs = [("layer name", layer.name), ("layer type", entry["type"] if entry else type_version(layer.type,
                                                                                                   layer.version)),
             ("layer id", layer.id)]
    if layer.line is not None:
        attrs.append(("xml line", str(layer.line)))
    attrs += [(key, value) for key, value in layer.data.items()]
    if entry is not None:
        attrs += [(key, f"{value} (default)") for key, value in entry["defaults"].items()]
        attrs += [(f"resolved {key}", str(value)) for key, value in entry["resolved"].items()]
        if not entry["supported"]:
            attrs.append(("supported", "no: ir-run does not implement it, its outputs are not checked"))
        attrs += [("error" if i == 0 else f"error {i + 1}", text) for i, text in enumerate(entry["errors"])]
    edges, inputs = [], []
    for position, (source, source_position) in enumerate(graph.sources[layer.id]):
        port = layer.inputs[position]
        meta = [("__tensor_tag", f"port {port.id}"), ("port id", port.id),
                ("from", f"{graph.layers[source].name} (id {source}) output {source_position}")]
        meta += _port_specs(entry["inputs"][position] if entry else None, port)
        const = constants.get(source)
        if const is not None:  # (the viewer lists only connected inputs: the value is an attribute too)
            meta += _folded(const, graph.layers[source])
            attrs.append((f"input {position}: constant", f"{_const_value(const)} ({graph.layers[source].name},"
                                                         f" id {source})"))
        else:
            edges.append({"sourceNodeId": source, "sourceNodeOutputId": str(source_position),
                          "targetNodeInputId": str(position)})
        inputs.append(_metadata(position, meta))
    outputs = []
    for position, port in enumerate(layer.outputs):
        spec = entry["outputs"][position] if entry else None
        meta = [("__tensor_tag", ", ".join(port.names) or f"port {port.id}"), ("port id", port.id)]
        meta += _port_specs(spec, port)
        if port.names:
            meta.append(("tensor names", ", ".join(port.names)))
        outputs.append(_metadata(position, meta))
    return {"id": layer.id, "label": layer.type, "namespace": namespace, "subgraphIds": [],
            "attrs": [{"key": key, "value": value} for key, value in attrs], "incomingEdges": edges,
            "inputsMetadata": inputs, "outputsMetadata": outputs}


def _port_specs(entry: dict | None, port) -> list[tuple[str, str]]:
    """Declared and inferred spec of a port (a body's ports: declared only) and the check."""
    declared = _declared_text(port)
    if entry is None or entry["inferred"] is None:
        return [("declared", declared), ("tensor_shape", declared)]
    return [("declared", declared), ("inferred", entry["inferred"]), ("tensor_shape", entry["inferred"]),
            ("check", "ok" if entry["ok"] else "MISMATCH")]


def _folded(const: dict, layer: LayerRecord) -> list[tuple[str, str]]:
    """A folded Const, as its consumer's input metadata."""
    meta = [("constant", f"{layer.name} (id {layer.id})"), ("constant layer id", layer.id),
            ("constant port id", layer.outputs[0].id), ("constant type", type_version(layer.type, layer.version)),
            ("constant value", _const_value(const))]
    if const["min"] is not None:
        meta.append(("constant range", f"{_value_text(const['min'])} .. {_value_text(const['max'])}"))
    meta += [(f"constant {key}", str(layer.data[key])) for key in layer.data]
    return meta


def _const_value(const: dict) -> str:
    """``f32[2,3]: [0.5, 1, ...]``: type, shape and the first values."""
    count = 1
    for dim in const["shape"]:
        count *= dim
    values = ", ".join(_value_text(v) for v in const["values"][:VALUES_SHOWN])
    shape = ",".join(map(str, const["shape"]))
    return f"{const['element_type']}[{shape}]: [{values}{', ...' if count > VALUES_SHOWN else ''}]"


def _link_variables(main: dict[str, Any], variables, graph: Graph) -> None:
    """Readers and the writer of each variable name each other; an edge overlay joins writer to readers."""
    if not variables:
        return
    by_name = {layer.name: layer.id for layer in graph.layers.values()}
    nodes = {node["id"]: node for node in main["nodes"]}
    overlays = []
    for variable in variables:
        readers = [by_name[name] for name in variable["readers"]]
        writer = by_name.get(variable["writer"]) if variable["writer"] else None
        ends = readers + ([writer] if writer else [])
        for layer_id in ends:
            nodes[layer_id]["attrs"].append({"key": "variable", "value": variable["id"]})
            nodes[layer_id]["attrs"].append({"key": "variable layers", "value": {
                "type": "node_ids", "nodeIds": [other for other in ends if other != layer_id]}})
        if writer:
            overlays.append({"name": f"variable {variable['id']}", "edgeColor": "#7b1fa2", "edgeWidth": 2,
                             "edges": [{"sourceNodeId": writer, "targetNodeId": reader, "label": variable["id"]}
                                       for reader in readers]})
    if overlays:
        main["tasksData"] = {"edgeOverlaysDataListLeftPane": [
            {"name": "variables: writer -> readers", "type": "edge_overlays", "overlays": overlays}]}


def _metadata(position: int, attrs: list[tuple[str, str]]) -> dict[str, Any]:
    return {"id": str(position), "attrs": [{"key": key, "value": value} for key, value in attrs]}


def _output_text(entry: dict | None, layer: LayerRecord) -> str:
    if entry and entry["outputs"] and entry["outputs"][0]["inferred"]:
        return entry["outputs"][0]["inferred"]
    return _declared_text(layer.outputs[0]) if layer.outputs else "?"


def _short(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _value_text(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)
