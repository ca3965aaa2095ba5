"""Read an IR .xml into records, with a hardened lxml parser.

No DTD is loaded, no entity is resolved, nothing is fetched from the network; a document that
declares a DOCTYPE or ENTITY is refused before parsing. Versions 10 and 11 are read; others are
refused with the version found.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from lxml import etree

from ..errors import MESSAGE_ITEMS, LayerRef, ModelFileNotFoundError, ModelFormatError, UnsupportedError, clip_text
from ..types import MAX_DIM, decimal_int
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
    remove_blank_text=True,  # the indentation between elements: a third of the nodes, never read (parse -15%)
)
_DECLARED_ENCODING = re.compile(rb"""\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']*)["']""")
_EDGE_KEYS = ("from-layer", "from-port", "to-layer", "to-port")
_BODY_TAGS = ("body", "then_body", "else_body")
_MAP_TAGS = ("port_map", "then_port_map", "else_port_map", "back_edges")
_MANY_ATTRIBUTES = 32  # more than this on one element: read in one XPath pass (see _attributes)
MAX_NESTING = 16  # bodies inside bodies: deeper is refused (a hostile IR could nest them until the stack ends)


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
    weights_record = Weights(weights)
    layers = _read_layers(root, weights_record, version, 0)
    edges = _read_edges(root)
    return NetRecord(root.get("name", ""), version, layers, edges, weights_record, _rt_info(root.find("rt_info")))


def _xml_content(source) -> tuple[bytes, Path | None]:
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source.encode("utf-8"), None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None
    path = Path(source)
    try:
        if path.exists() and not path.is_dir() and not stat.S_ISREG(path.stat().st_mode):
            raise ModelFormatError(f"'{path}' is not a regular file (a device, FIFO or socket); pass the model's .xml")
        data = path.read_bytes()
    except FileNotFoundError:
        named = Path(f"{path}.xml")
        hint = f"did you mean '{named}'?" if path.suffix.lower() != ".xml" and named.is_file() else None
        raise ModelFileNotFoundError(f"model file '{path}' does not exist", hint=hint) from None
    except IsADirectoryError:
        raise ModelFormatError(f"'{path}' is a directory, not a model .xml", hint=_xml_in(path)) from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read model file '{path}': {exc.strerror}") from None
    except ValueError as exc:  # e.g. a NUL byte in the path
        raise ModelFormatError(f"cannot read model file {str(path)!r}: {exc}") from None
    return data, path


def _xml_in(folder: Path) -> str | None:
    """A hint naming the .xml files directly in ``folder`` (None when it holds none)."""
    try:
        found = sorted(str(p) for p in folder.iterdir() if p.suffix.lower() == ".xml" and p.is_file())
    except OSError:
        return None
    if len(found) == 1:
        return f"did you mean '{found[0]}'?"
    if found:
        shown = ", ".join(f"'{name}'" for name in found[:MESSAGE_ITEMS])
        more = f" and {len(found) - MESSAGE_ITEMS} more" if len(found) > MESSAGE_ITEMS else ""
        return f"it holds {len(found)} .xml files: {shown}{more}; pass one of them"
    return None


def _parse(data: bytes, path: Path | None):
    what = f"'{path}'" if path else "the model"
    if not data.strip():
        content = "empty (0 bytes)" if not data else f"empty: {len(data)} bytes of whitespace"
        raise ModelFormatError(f"{what} is {content}; an IR model is an .xml file with a <net> element",
                               hint="the file was not written completely, or is not the model; save it again")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise ModelFormatError(f"{what} is encoded as UTF-16; IR files are UTF-8", hint="re-save the file as UTF-8")
    head = data[:4096].lstrip()
    if not head.startswith(b"<") and not head.startswith(b"\xef\xbb\xbf<"):
        other = _other_format(data, path)
        if other is not None:
            raise ModelFormatError(f"{what} is {other[0]}, not an OpenVINO IR (.xml)", hint=other[1])
        hint = "pass the .xml file; the .bin holds the weights" if path and path.suffix == ".bin" else None
        looks = "a binary weights file" if b"\x00" in data[:4096] else "not XML"
        raise ModelFormatError(f"{what} is {looks}: an IR model is an .xml file", hint=hint)
    declared = _DECLARED_ENCODING.match(data[:256])
    if declared and declared.group(1).lower() not in (b"utf-8", b"utf8", b"us-ascii", b"ascii"):
        raise ModelFormatError(
            f"{what} declares encoding {declared.group(1).decode('ascii', 'replace')!r}; IR files are UTF-8",
            hint="re-save the file as UTF-8",
        )
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise _doctype_refused(what)
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise ModelFormatError(f"{what} is not well-formed XML: {exc}") from None
    if root is not None and root.getroottree().docinfo.doctype:
        raise _doctype_refused(what)
    if root is None or root.tag != "net":
        tag = None if root is None else clip_text(str(root.tag))
        raise ModelFormatError(f"{what} has root element <{tag}>; an IR's root element is <net>")
    return root


_CONVERT = ("convert it to an IR first: `ovc {name}` writes {stem}.xml and {stem}.bin (ovc comes with"
            " `pip install openvino`), or in Python: openvino.save_model(openvino.convert_model('{name}'),"
            " '{stem}.xml')")
_DATA = "it holds arrays, not a model: pass it with --input (or --ref), and give the model's .xml as MODEL"


def _other_format(data: bytes, path: Path | None) -> tuple[str, str] | None:
    """(what the file is, what to do) for the files people pass by mistake: models of other frameworks
    (ONNX, TensorFlow, TensorFlow Lite, PaddlePaddle) and numpy's array files. By bytes, then by suffix."""
    name = path.name if path else "model.onnx"
    stem = path.stem if path else "model"
    suffix = path.suffix.lower() if path else ""
    if data.startswith(b"\x93NUMPY"):
        return "a numpy array file (.npy)", _DATA
    if data.startswith(b"PK\x03\x04") and suffix in (".npz", ".zip", ""):
        return "a zip archive (numpy's .npz of arrays)", _DATA
    onnx_bytes = data[:1] == b"\x08" and any(word in data[:512].lower() for word in (b"onnx", b"pytorch"))
    kinds = {".onnx": "an ONNX model", ".pb": "a TensorFlow protobuf model (.pb)",
             ".tflite": "a TensorFlow Lite model", ".pdmodel": "a PaddlePaddle model"}
    kind = kinds.get(suffix) or ("an ONNX model" if onnx_bytes else None)
    if kind is None:
        return None
    return kind, _CONVERT.format(name=name, stem=stem)


def _doctype_refused(what: str) -> ModelFormatError:
    return ModelFormatError(
        f"{what} declares a DOCTYPE or ENTITY; IR files never do, and ir-run refuses them for safety"
    )


def _net_version(root) -> int:
    text = root.get("version")
    version = None if text is None else decimal_int(text.strip(), 4)
    if version not in SUPPORTED_VERSIONS:
        found = "no version attribute" if text is None else f"version={clip_text(text)!r}"
        raise ModelFormatError(
            f"<net> has {found}; ir-run reads IR versions 10 and 11",
            hint="re-save the model with a current OpenVINO (openvino.save_model) to get IR v11",
        )
    if root.find("pre-process") is not None:
        raise UnsupportedError("<pre-process> (legacy IR pre-processing) is not supported")
    return version


def _read_layers(root, weights: Weights, version: int, depth: int) -> tuple[LayerRecord, ...]:
    layers_el = root.find("layers")
    if layers_el is None:
        raise ModelFormatError("<net> has no <layers> element")
    checked: set[tuple[int, ...]] = set()  # the dims tuples already found valid: large IRs repeat a few
    return tuple(_read_layer(el, checked, weights, version, depth) for el in layers_el.iterfind("layer"))


def _read_layer(el, checked: set[tuple[int, ...]], weights: Weights, version: int, depth: int) -> LayerRecord:
    attrs = _attributes(el)
    layer_id, layer_type = attrs.get("id", "").strip(), attrs.get("type", "").strip()
    if not layer_id or not layer_type:
        missing = " or ".join(key for key, value in (("id", layer_id), ("type", layer_type)) if not value)
        raise ModelFormatError(f"<layer> at line {el.sourceline} has no {missing} attribute")
    data: dict[str, str] = {}
    inputs: tuple[PortRecord, ...] = ()
    outputs: tuple[PortRecord, ...] = ()
    bodies = maps = rt_info = None
    for child in el:
        tag = child.tag
        if tag == "data":
            data = _attributes(child)
        elif tag == "input":
            inputs = _read_ports(child, attrs, checked)
        elif tag == "output":
            outputs = _read_ports(child, attrs, checked)
        elif tag in _BODY_TAGS:
            if depth + 1 > MAX_NESTING:
                raise UnsupportedError(f"sub-graphs are nested more than {MAX_NESTING} deep",
                                       layer=_layer_ref(attrs, el.sourceline))
            if child.find("layers") is None:
                raise ModelFormatError(f"its <{tag}> (line {child.sourceline}) has no <layers> element",
                                       layer=_layer_ref(attrs, el.sourceline))
            bodies = bodies or {}
            bodies[tag] = NetRecord(f"{attrs.get('name', '')}/{tag}", version,
                                    _read_layers(child, weights, version, depth + 1), _read_edges(child), weights)
        elif tag in _MAP_TAGS:
            maps = maps or {}
            maps[tag] = tuple((str(item.tag), _attributes(item)) for item in child if isinstance(item.tag, str))
        elif tag == "rt_info":
            rt_info = _rt_info(child)
    # positional: a large IR has tens of thousands of layers, and keywords cost a third more here
    return LayerRecord(layer_id, attrs.get("name", ""), layer_type, attrs.get("version", "").strip(), data, inputs,
                       outputs, el.sourceline, attrs, bodies, maps, rt_info)


def _rt_info(el) -> bytes | None:
    """An ``<rt_info>`` element as written (for the writer: OpenVINO reads it, e.g. the marks that keep a
    decompression subgraph from being folded), or None."""
    return None if el is None else etree.tostring(el, with_tail=False)


def _attributes(el) -> dict[str, str]:
    """An element's attributes by name. lxml's ``attrib`` finds each value by a search from the first attribute
    (time quadratic in their number: 50,000 on one <data> took 10 s), so an element with many is read in one
    XPath pass, linear; the few of an ordinary element are faster through ``attrib``."""
    if len(el.attrib) <= _MANY_ATTRIBUTES:
        return dict(el.attrib)
    return {value.attrname: str(value) for value in el.xpath("@*")}


def _read_ports(group, layer_attrs, checked: set[tuple[int, ...]]) -> tuple[PortRecord, ...]:
    ports = []
    for port in group:
        if port.tag != "port":
            continue
        get = port.get  # (not port.attrib: that builds a proxy per port)
        port_id = (get("id") or "").strip()
        if not port_id:
            raise ModelFormatError(f"a <port> at line {port.sourceline} has no id", layer=_layer_ref(layer_attrs))
        try:
            dims = tuple([int(child.text) for child in port if child.tag == "dim"])
        except (TypeError, ValueError):
            raise _bad_dim(port, layer_attrs, port_id) from None
        if dims not in checked:  # (a set lookup is 5x faster than min and max)
            if dims and (min(dims) < -1 or max(dims) > MAX_DIM):
                raise _bad_dim(port, layer_attrs, port_id)
            checked.add(dims)
        names = get("names")
        rt_info = _rt_info(port.find("rt_info")) if len(port) > len(dims) else None
        ports.append(PortRecord(port_id, len(ports), get("precision"), dims, _split_names(names) if names else (),
                                rt_info))
    return tuple(ports)


def _bad_dim(port, layer_attrs, port_id) -> ModelFormatError:
    """The error for the first <dim> of ``port`` that is not an integer in -1..MAX_DIM."""
    bad = next(d for d in port.iterchildren("dim") if not _is_dim(d.text))
    return ModelFormatError(
        f"<dim>{clip_text((bad.text or '').strip())}</dim> at line {bad.sourceline}; a dim is an integer in"
        f" 0..{MAX_DIM} (an int64), or -1 for dynamic",
        layer=_layer_ref(layer_attrs),
        port=f"port id {clip_text(port_id)}",
    )


def _layer_ref(attrs: dict[str, str], line: int | None = None) -> LayerRef:
    """The layer as errors name it, before its record exists: type and opset as written (the reader knows no
    operation, so not yet the ``Type-version`` that later messages show)."""
    return LayerRef(attrs.get("name", ""), f"{attrs['type']} {attrs.get('version', '')}".strip(), attrs["id"], line)


def _is_dim(text: str | None) -> bool:
    try:
        return -1 <= int(text or "") <= MAX_DIM
    except ValueError:
        return False


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
        get = el.get
        from_layer, from_port, to_layer, to_port = (
            (get(key) or "").strip() for key in _EDGE_KEYS
        )
        if not (from_layer and from_port and to_layer and to_port):
            raise ModelFormatError(
                f"<edge> at line {el.sourceline} needs from-layer, from-port, to-layer and to-port attributes"
            )
        edges.append(EdgeRecord(from_layer, from_port, to_layer, to_port, el.sourceline))
    return tuple(edges)
