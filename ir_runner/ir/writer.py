"""Write an IR (v11 ``.xml`` + its own ``.bin``) from the reader's records: a whole net, or a cut of it.

What is written is what was read: layers with every attribute of ``<layer>`` and ``<data>`` as written, ports
(id, precision, tensor names, dims), ``<rt_info>`` elements (layer, port, net), edges, and sub-graph bodies
with their port maps and back edges, recursively. Only a Const's ``offset`` changes: each Const's bytes
(``offset``/``size`` in the source weights, packed sub-byte and string layouts included) are copied as they
are into the new ``.bin``, which holds only the bytes the written layers read (a range two Consts share is
written once).

A cut (:class:`Cut`) keeps a subset of the top-level layers: the tensors it reads from layers left out become
Parameters (of the element type and shape given for each), and the tensors it exposes become Results. Nothing
is parsed but the ``<rt_info>`` elements the reader kept (with its hardened parser: no entity is resolved);
lxml escapes every name and value written.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from lxml import etree

from ..errors import LayerRef, ModelFormatError
from ..types import TensorSpec
from .reader import _PARSER
from .records import LayerRecord, NetRecord, PortRecord

Slot = tuple[str, int]  # (layer id, output position)
_WEIGHTS_KEYS = ("offset", "size")


class Cut:
    """The part of a net to write: the top-level layer ids to ``keep`` (every layer when None), the tensors read
    from outside them, each with the spec of the Parameter that replaces it (``inputs``: slot -> TensorSpec, in
    the order the Parameters are written), and the tensors to return (``outputs``, slots of kept layers: a
    Result each)."""

    __slots__ = ("keep", "inputs", "outputs")

    def __init__(self, keep: Collection[str] | None = None, inputs: Mapping[Slot, TensorSpec] | None = None,
                 outputs: Sequence[Slot] = ()) -> None:
        self.keep = None if keep is None else frozenset(keep)
        self.inputs = dict(inputs or {})
        self.outputs = tuple(outputs)


def ir_bytes(net: NetRecord, cut: Cut | None = None) -> tuple[bytes, bytes]:
    """The ``(xml, bin)`` of ``net`` (or of ``cut`` of it). Raises ModelFormatError when a Const's bytes are
    not in the source weights."""
    blob = _Blob(net)
    root = etree.Element("net", name=net.name, version="11")
    if cut is None or cut.keep is None:
        _write_body(root, net, blob)
    else:
        _write_cut(root, net, cut, blob)
    if net.rt_info is not None:
        root.append(etree.fromstring(net.rt_info, _PARSER))
    xml = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return xml, bytes(blob.data)


def write_ir(net: NetRecord, xml_path: str | os.PathLike, cut: Cut | None = None) -> Path:
    """Write ``net`` (or ``cut`` of it) to ``xml_path`` and the ``.bin`` of the same stem next to it; the path.
    Both files are written to temporary files in the same folder, then renamed over the targets; OSError when
    that fails, the targets then as they were (the folder is created if missing)."""
    path = Path(xml_path)
    xml, data = ir_bytes(net, cut)
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = path.with_suffix(".bin")
    temporary = {target: target.with_name(f".{target.name}.{os.getpid()}.tmp") for target in (weights, path)}
    backup = weights.with_name(f".{weights.name}.{os.getpid()}.old")
    try:
        temporary[weights].write_bytes(data)
        temporary[path].write_bytes(xml)
        kept = weights.is_file()
        if kept:
            os.replace(weights, backup)
        try:
            os.replace(temporary[weights], weights)
            os.replace(temporary[path], path)
        except OSError:
            if kept:
                os.replace(backup, weights)
            else:
                weights.unlink(missing_ok=True)
            raise
    finally:
        for name in (*temporary.values(), backup):
            name.unlink(missing_ok=True)
    return path


class _Blob:
    """The new weights: each source range copied once, in the order Consts are written."""

    def __init__(self, net: NetRecord) -> None:
        self.source = net.weights
        self.data = bytearray()
        self.placed: dict[tuple[int, int], int] = {}

    def place(self, layer: LayerRecord, offset: int, size: int) -> int:
        key = (offset, size)
        found = self.placed.get(key)
        if found is None:
            if size == 0 and self.source.missing:
                return 0
            ref = LayerRef(layer.name, f"{layer.type} {layer.version}".strip(), layer.id, layer.line)
            buffer = self.source.buffer(ref)
            if offset + size > len(buffer):
                raise ModelFormatError(f"offset={offset} + {size} bytes lies outside {self.source.description}"
                                       f" ({len(buffer)} bytes)", layer=ref)
            found = self.placed[key] = len(self.data)
            self.data += buffer[offset:offset + size]
        return found


def _write_body(parent, net: NetRecord, blob: _Blob) -> None:
    layers = etree.SubElement(parent, "layers")
    for layer in net.layers:
        _write_layer(layers, layer, blob)
    edges = etree.SubElement(parent, "edges")
    for edge in net.edges:
        _edge(edges, edge.from_layer, edge.from_port, edge.to_layer, edge.to_port)


def _write_cut(root, net: NetRecord, cut: Cut, blob: _Blob) -> None:
    by_id = {layer.id: layer for layer in net.layers}
    keep = cut.keep or frozenset()
    fresh = _fresh_ids(by_id)
    layers_el = etree.SubElement(root, "layers")
    names = {by_id[layer_id].name for layer_id in keep}
    parameters: dict[tuple[str, str], str] = {}  # (producer id, output port id) -> its Parameter's id
    for slot, spec in cut.inputs.items():
        producer = by_id[slot[0]]
        port = producer.outputs[slot[1]]
        layer_id = next(fresh)
        name = _unique(producer.name if len(producer.outputs) == 1 else f"{producer.name}.{port.id}", layer_id, names)
        parameters[(producer.id, port.id)] = layer_id
        _parameter(layers_el, layer_id, name, spec, port)
    for layer in net.layers:
        if layer.id in keep:
            _write_layer(layers_el, layer, blob)
    results = []
    for slot in cut.outputs:
        producer = by_id[slot[0]]
        port = producer.outputs[slot[1]]
        layer_id = next(fresh)
        name = _unique(f"{producer.name}/sink_port_{port.id}", layer_id, names)
        results.append((layer_id, producer.id, port.id))
        _result(layers_el, layer_id, name, port)
    edges_el = etree.SubElement(root, "edges")
    for edge in net.edges:
        if edge.to_layer not in keep:
            continue
        if edge.from_layer in keep:
            _edge(edges_el, edge.from_layer, edge.from_port, edge.to_layer, edge.to_port)
        elif (edge.from_layer, edge.from_port) in parameters:
            _edge(edges_el, parameters[(edge.from_layer, edge.from_port)], "0", edge.to_layer, edge.to_port)
    for layer_id, producer_id, port_id in results:
        _edge(edges_el, producer_id, port_id, layer_id, "0")


def _fresh_ids(by_id: Mapping[str, LayerRecord]):
    """New layer ids: integers above every numeric id of the net (OpenVINO reads ids as integers)."""
    numbers = [int(layer_id) for layer_id in by_id if layer_id.isdigit()]
    start = max(numbers, default=-1) + 1
    while True:
        yield str(start)
        start += 1


def _unique(name: str, layer_id: str, names: set[str]) -> str:
    """``name``, or ``name.ID`` (the new layer's id, unique) when a kept layer already has it."""
    found = name if name not in names else f"{name}.{layer_id}"
    names.add(found)
    return found


def _parameter(parent, layer_id: str, name: str, spec: TensorSpec, source: PortRecord) -> None:
    el = etree.SubElement(parent, "layer", id=layer_id, name=name, type="Parameter", version="opset1")
    etree.SubElement(el, "data", shape=_shape_text(spec), element_type=spec.element_type.name)
    output = etree.SubElement(el, "output")
    dims = spec.shape.port_dims
    port = PortRecord("0", 0, spec.element_type.precision, () if dims is None else tuple(
        -1 if d is None else d for d in dims), source.names, source.rt_info)
    _port(output, port)


def _result(parent, layer_id: str, name: str, source: PortRecord) -> None:
    el = etree.SubElement(parent, "layer", id=layer_id, name=name, type="Result", version="opset1")
    _port(etree.SubElement(el, "input"), PortRecord("0", 0, source.precision, source.dims))


def _shape_text(spec: TensorSpec) -> str:
    """A Parameter's ``shape`` attribute in OpenVINO's syntax: ``1,?,3``, ``2..5``, ``...`` for a dynamic rank."""
    return "..." if spec.shape.dims is None else ",".join(str(dim) for dim in spec.shape.dims)


def _write_layer(parent, layer: LayerRecord, blob: _Blob) -> None:
    el = etree.SubElement(parent, "layer", layer.attrs)
    data = dict(layer.data)
    if all(key in data for key in _WEIGHTS_KEYS) and "element_type" in data:
        offset, size = (int(data[key].strip()) for key in _WEIGHTS_KEYS)
        data["offset"] = str(blob.place(layer, offset, size))
    if layer.data:
        etree.SubElement(el, "data", data)
    for tag, ports in (("input", layer.inputs), ("output", layer.outputs)):
        if ports:
            group = etree.SubElement(el, tag)
            for port in ports:
                _port(group, port)
    for tag, items in (layer.maps or {}).items():
        group = etree.SubElement(el, tag)
        for item_tag, attributes in items:
            etree.SubElement(group, item_tag, attributes)
    for tag, body in (layer.bodies or {}).items():
        _write_body(etree.SubElement(el, tag), body, blob)
    if layer.rt_info is not None:
        el.append(etree.fromstring(layer.rt_info, _PARSER))


def _port(parent, port: PortRecord) -> None:
    el = etree.SubElement(parent, "port", id=port.id)
    if port.precision is not None:
        el.set("precision", port.precision)
    if port.names:
        el.set("names", ",".join(name.replace("\\", "\\\\").replace(",", "\\,") for name in port.names))
    for dim in port.dims:
        etree.SubElement(el, "dim").text = str(dim)
    if port.rt_info is not None:
        el.append(etree.fromstring(port.rt_info, _PARSER))


def _edge(parent, from_layer: str, from_port: str, to_layer: str, to_port: str) -> None:
    etree.SubElement(parent, "edge", {"from-layer": from_layer, "from-port": from_port, "to-layer": to_layer,
                                      "to-port": to_port})
