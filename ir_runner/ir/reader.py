"""Read an IR .xml into records, with a hardened lxml parser.

No DTD is loaded, no entity is resolved, nothing is fetched from the network; a document that
declares a DOCTYPE or ENTITY is refused before parsing. Versions 10 and 11 are read; others are
refused with the version found.
"""

from __future__ import annotations

import os
from pathlib import Path

from lxml import etree

from ..errors import ModelFormatError, UnsupportedError
from .records import EdgeRecord, LayerRecord, NetRecord, PortRecord
from .weights import Weights

SUPPORTED_VERSIONS = (10, 11)
_PARSER = etree.XMLParser(
    resolve_entities=False,
    no_network=True,
    load_dtd=False,
    dtd_validation=False,
    huge_tree=False,
    remove_comments=True,
    remove_pis=True,
)
_SUBGRAPH_TAGS = ("body", "port_map", "back_edges", "then_body", "else_body")


def read_ir(
    source: str | os.PathLike | bytes | bytearray,
    weights: str | os.PathLike | bytes | bytearray | memoryview | None = None,
) -> NetRecord:
    """Read an IR from a path to its .xml, or from the XML content itself (bytes or str starting with '<').

    ``weights`` defaults, for a path, to the XML's stem + ``.bin``; it is opened only if a Const needs it.
    """
    xml_bytes, xml_path = _xml_content(source)
    if weights is None and xml_path is not None:
        weights = xml_path.with_suffix(".bin")
    root = _parse(xml_bytes, xml_path)
    version = _net_version(root)
    layers = _read_layers(root)
    edges = _read_edges(root)
    rt_info = {
        info.get("name", ""): info.get("value", "")
        for info in root.iterfind("rt_info/info")
        if info.get("value") is not None
    }
    return NetRecord(root.get("name", ""), version, layers, edges, Weights(weights), rt_info)


def _xml_content(source) -> tuple[bytes, Path | None]:
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source.encode("utf-8"), None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None
    path = Path(source)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelFormatError(f"model file '{path}' does not exist") from None
    except IsADirectoryError:
        raise ModelFormatError(f"'{path}' is a directory, not a model .xml") from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read model file '{path}': {exc.strerror}") from None
    return data, path


def _parse(data: bytes, path: Path | None):
    what = f"'{path}'" if path else "the model"
    head = data[:4096].lstrip()
    if not head.startswith(b"<") and not head.startswith(b"\xef\xbb\xbf<"):
        hint = "pass the .xml file; the .bin holds the weights" if path and path.suffix == ".bin" else None
        looks = "a binary weights file" if b"\x00" in data[:4096] else "not XML"
        raise ModelFormatError(f"{what} is {looks}: an IR model is an .xml file", hint=hint)
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ModelFormatError(
            f"{what} declares a DOCTYPE or ENTITY; IR files never do, and ir-run refuses them for safety"
        )
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise ModelFormatError(f"{what} is not well-formed XML: {exc}") from None
    if root is None or root.tag != "net":
        tag = None if root is None else root.tag
        raise ModelFormatError(f"{what} has root element <{tag}>; an IR's root element is <net>")
    return root


def _net_version(root) -> int:
    text = root.get("version")
    if text is None or not text.strip().isdigit() or int(text) not in SUPPORTED_VERSIONS:
        found = "no version attribute" if text is None else f"version={text!r}"
        raise ModelFormatError(
            f"<net> has {found}; ir-run reads IR versions 10 and 11",
            hint="re-save the model with a current OpenVINO (openvino.save_model) to get IR v11",
        )
    if root.find("pre-process") is not None:
        raise UnsupportedError("<pre-process> (legacy IR pre-processing) is not supported")
    return int(text)


def _read_layers(root) -> tuple[LayerRecord, ...]:
    layers_el = root.find("layers")
    if layers_el is None:
        raise ModelFormatError("<net> has no <layers> element")
    return tuple(_read_layer(el) for el in layers_el.iterfind("layer"))


def _read_layer(el) -> LayerRecord:
    attrs = dict(el.attrib)
    missing = [key for key in ("id", "type") if not attrs.get(key, "").strip()]
    if missing:
        raise ModelFormatError(f"<layer> at line {el.sourceline} has no {' or '.join(missing)} attribute")
    for tag in _SUBGRAPH_TAGS:
        if el.find(tag) is not None:
            raise UnsupportedError(
                f"layer '{attrs.get('name', '')}' (type {attrs['type']}, id {attrs['id']}, line {el.sourceline})"
                f" has a sub-graph <{tag}>; sub-graph operations are not supported"
            )
    data_el = el.find("data")
    data = dict(data_el.attrib) if data_el is not None else {}
    rt = el.find("rt_info")
    rt_names = tuple(a.get("name", "") for a in rt.iterfind("attribute")) if rt is not None else ()
    return LayerRecord(
        id=attrs["id"].strip(),
        name=attrs.get("name", ""),
        type=attrs["type"].strip(),
        version=attrs.get("version", "").strip(),
        data=data,
        inputs=_read_ports(el.find("input"), attrs),
        outputs=_read_ports(el.find("output"), attrs),
        line=el.sourceline,
        attrs=attrs,
        rt_info=rt_names,
    )


def _read_ports(group, layer_attrs) -> tuple[PortRecord, ...]:
    if group is None:
        return ()
    ports = []
    for position, port in enumerate(group.iterfind("port")):
        port_id = port.get("id")
        if port_id is None or not port_id.strip():
            raise ModelFormatError(
                f"a <port> of layer '{layer_attrs.get('name', '')}' (id {layer_attrs['id']}) at line"
                f" {port.sourceline} has no id"
            )
        dims = tuple(_dim(d, layer_attrs, port_id) for d in port.iterfind("dim"))
        names = port.get("names")
        ports.append(PortRecord(port_id.strip(), position, port.get("precision"), dims, _split_names(names)))
    return tuple(ports)


def _dim(dim_el, layer_attrs, port_id) -> int:
    text = (dim_el.text or "").strip()
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < -1:
        raise ModelFormatError(
            f"port id {port_id} of layer '{layer_attrs.get('name', '')}' (id {layer_attrs['id']}) has"
            f" <dim>{text}</dim> at line {dim_el.sourceline}; a dim is an integer >= 0, or -1 for dynamic"
        )
    return value


def _split_names(text: str | None) -> tuple[str, ...]:
    """Split ``names="a,b\\,c"`` into ``('a', 'b,c')``."""
    if not text:
        return ()
    names, current, chars = [], [], iter(text)
    for ch in chars:
        if ch == "\\":
            current.append(next(chars, ""))
        elif ch == ",":
            names.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    names.append("".join(current).strip())
    return tuple(n for n in names if n)


def _read_edges(root) -> tuple[EdgeRecord, ...]:
    edges_el = root.find("edges")
    if edges_el is None:
        return ()
    edges = []
    for el in edges_el.iterfind("edge"):
        values = [el.get(key) for key in ("from-layer", "from-port", "to-layer", "to-port")]
        if any(v is None or not v.strip() for v in values):
            raise ModelFormatError(
                f"<edge> at line {el.sourceline} needs from-layer, from-port, to-layer and to-port attributes"
            )
        edges.append(EdgeRecord(*(v.strip() for v in values), line=el.sourceline))
    return tuple(edges)
