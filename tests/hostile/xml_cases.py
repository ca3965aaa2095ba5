"""Hostile documents and files: XXE, DTDs, entity bombs, other encodings, non-XML, wrong files."""

from __future__ import annotations

import base64

import numpy as np

from ir_runner import ModelFormatError, UnsupportedError

from .base import FEEDS, base_model, body, edit, layer
from .case import Case

XML, BIN = base_model()
EXPECTED = {"out": np.array([[2, 0], [-5, -3]], dtype=np.float32)}
# A refused DTD must say why: the DOCTYPE/ENTITY itself, or the non-UTF-8 encoding it hid behind.
REFUSED_DTD = r"(?i)DOCTYPE|ENTITY|encoding|UTF-(7|16)"
XXE = '<!DOCTYPE net [<!ENTITY x SYSTEM "@SECRET_URL@">]>'
DTD = "<!DOCTYPE net [<!ELEMENT net ANY>]>"


def _laughs() -> str:
    entities = '<!ENTITY a0 "laugh laugh laugh laugh laugh">'
    entities += "".join(f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 12))
    return f"<!DOCTYPE net [{entities}]>"


def _quadratic() -> tuple[str, str]:
    return f'<!DOCTYPE net [<!ENTITY big "{"A" * 100_000}">]>', "&big;" * 20_000


def _document(doctype: str, *, name: str | None = None, dim: str | None = None) -> str:
    """The base model's body under ``doctype``, with the net name and/or cond's first dim replaced."""
    text = body(XML)
    if name is not None:
        text = text.replace('name="hostile"', f'name="{name}"', 1)
    if dim is not None:
        text = text.replace("<dim>2</dim>", f"<dim>{dim}</dim>", 1)
    return doctype + "\n" + text


def _utf8(doc: str) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + doc).encode()


def _utf16(doc: str, *, bom: bool) -> bytes:
    decl = f'<?xml version="1.0" encoding="{"UTF-16" if bom else "UTF-16LE"}"?>\n'
    return (decl + doc).encode("utf-16" if bom else "utf-16-le")


def _utf7(doc: str) -> bytes:
    """UTF-7 with ``<``, ``!`` and ``&`` always base64-shifted, so no ASCII '<!DOCTYPE' remains."""
    shifted = "".join(
        "+" + base64.b64encode(ch.encode("utf-16-be")).decode().rstrip("=") + "-" if ch in "<!&" else ch
        for ch in doc
    )
    return b'<?xml version="1.0" encoding="UTF-7"?>\n' + shifted.encode("ascii")


def _dtd_cases() -> list[Case]:
    laughs, (quadratic, blowup) = _laughs(), _quadratic()
    docs = {
        "xxe_attribute": _utf8(_document(XXE, name="&x;")),
        "xxe_text": _utf8(_document(XXE, dim="&x;")),
        "xxe_parameter_entity": _utf8(_document('<!DOCTYPE net [<!ENTITY % p SYSTEM "@SECRET_URL@"> %p;]>')),
        "xxe_external_dtd": _utf8(_document('<!DOCTYPE net SYSTEM "@SECRET_URL@">')),
        "xxe_network": _utf8(_document('<!DOCTYPE net [<!ENTITY x SYSTEM "http://127.0.0.1:9/x">]>', name="&x;")),
        "dtd_internal_subset": _utf8(_document(DTD)),
        "billion_laughs": _utf8(_document(laughs, name="&a11;")),
        "quadratic_blowup": _utf8(_document(quadratic, name=blowup)),
        "xxe_utf16_bom": _utf16(_document(XXE, dim="&x;"), bom=True),
        "xxe_utf16le_attribute": _utf16(_document(XXE, name="&x;"), bom=False),
        "xxe_utf16le_text": _utf16(_document(XXE, dim="&x;"), bom=False),
        "dtd_utf16le": _utf16(_document(DTD), bom=False),
        "billion_laughs_utf16le": _utf16(_document(laughs, name="&a11;"), bom=False),
        "quadratic_blowup_utf16le": _utf16(_document(quadratic, name=blowup), bom=False),
        "xxe_utf7_attribute": _utf7(_document(XXE, name="&x;")),
        "dtd_utf7": _utf7(_document(DTD)),
    }
    bombs = {"billion_laughs", "quadratic_blowup", "billion_laughs_utf16le", "quadratic_blowup_utf16le"}
    return [
        Case(name, "dtd", xml, BIN, ModelFormatError, REFUSED_DTD, isolated=name in bombs)
        for name, xml in docs.items()
    ]


def _syntax_cases() -> list[Case]:
    def without(tag: str):
        return lambda root: root.remove(root.find(tag))

    def version(value: str | None):
        def change(root) -> None:
            if value is None:
                del root.attrib["version"]
            else:
                root.set("version", value)

        return change

    def subgraph(root) -> None:
        layer(root, "sel").append(layer(root, "sel").makeelement("body", {}))

    def nested_bodies(root) -> None:
        host = layer(root, "sel")
        for _ in range(20):
            body = host.makeelement("body", {})
            host.append(body)
            layers = body.makeelement("layers", {})
            body.append(layers)
            host = layers.makeelement("layer", {"id": "0", "name": "inner", "type": "TensorIterator",
                                                "version": "opset1"})
            layers.append(host)

    def pre_process(root) -> None:
        root.insert(0, root.makeelement("pre-process", {"reference-layer-name": "cond"}))

    nested = "<a>" * 100_000 + "</a>" * 100_000
    broken = {
        "truncated_xml": (XML[: len(XML) // 2], r"not well-formed"),
        "empty_file": (b"", r"is empty \(0 bytes\)"),
        "whitespace_only": (b"  \n\t \n", r"is empty: 6 bytes of whitespace"),
        "plain_text": (b"this is not a model\n", r"not XML"),
        "binary_garbage": (bytes(range(256)) * 4, r"(?i)binary|not XML"),
        "invalid_utf8": (XML.replace(b'name="hostile"', b'name="\xff\xfe\xfd"'), r"(?i)not well-formed|UTF-8"),
        "nul_byte": (XML.replace(b"<edges>", b"<edges>\x00"), r"not well-formed"),
        "deep_nesting": (XML.replace(b"<edges>", f"<edges>{nested}".encode()), r"(?i)not well-formed.*depth"),
        "wrong_root": (XML.replace(b"<net ", b"<model ").replace(b"</net>", b"</model>"), r"root element <model>"),
        "namespaced_root": (XML.replace(b"<net ", b'<net xmlns="urn:x" '), r"root element <\{urn:x\}net>"),
        "version_missing": (edit(XML, version(None)), r"no version attribute"),
        "version_7": (edit(XML, version("7")), r"version='7'.*10 and 11"),
        "version_12": (edit(XML, version("12")), r"version='12'"),
        "version_text": (edit(XML, version("eleven")), r"version='eleven'"),
        "version_negative": (edit(XML, version("-11")), r"version='-11'"),
        "no_layers": (edit(XML, without("layers")), r"no <layers>"),
    }
    cases = [Case(name, "syntax", xml, BIN, ModelFormatError, match) for name, (xml, match) in broken.items()]
    cases += [
        Case("pre_process", "syntax", edit(XML, pre_process), BIN, UnsupportedError, r"<pre-process>"),
        Case("subgraph_body_without_layers", "syntax", edit(XML, subgraph), BIN, ModelFormatError,
             r"'sel'.*its <body> \(line \d+\) has no <layers>"),
        Case("subgraphs_nested_too_deep", "syntax", edit(XML, nested_bodies), BIN, UnsupportedError,
             r"'inner'.*sub-graphs are nested more than 16 deep"),
    ]
    return cases


def _ignored_cases() -> list[Case]:
    """Harmless foreign content that must be ignored (and never fetched): the model runs."""

    def xinclude(root) -> None:
        root.find("layers").append(root.makeelement(
            "{http://www.w3.org/2001/XInclude}include", {"href": "@SECRET_URL@", "parse": "text"}))

    stylesheet = XML.replace(b"?>\n", b'?>\n<?xml-stylesheet type="text/xsl" href="@SECRET_URL@"?>\n', 1)
    return [
        Case("xinclude_ignored", "ignored", edit(XML, xinclude), BIN, feeds=FEEDS, expected=EXPECTED),
        Case("stylesheet_pi_ignored", "ignored", stylesheet, BIN, feeds=FEEDS, expected=EXPECTED),
        Case("comments_ignored", "ignored", XML.replace(b"<edges>", b"<!-- @SECRET_URL@ --><edges>"), BIN,
             feeds=FEEDS, expected=EXPECTED),
    ]


def _file_cases() -> list[Case]:
    special = r"(?i:regular file|device|fifo|pipe|too large)"
    return [
        Case("model_missing", "files", XML, BIN, ModelFormatError, r"does not exist", xml_kind="missing"),
        Case("bin_passed_as_model", "files", XML, BIN, ModelFormatError, r"(?i)binary.*\.xml", xml_kind="bin"),
        Case("model_is_dev_zero", "files", XML, BIN, ModelFormatError, special, xml_kind="dev_zero", isolated=True),
        Case("model_is_fifo", "files", XML, BIN, ModelFormatError, special, xml_kind="fifo", isolated=True),
        Case("bin_missing", "files", XML, None, ModelFormatError, r"'indices'.*does not exist"),
        Case("bin_is_directory", "files", XML, b"", ModelFormatError, r"'indices'.*(?i:directory)",
             bin_kind="directory"),
        Case("bin_is_fifo", "files", XML, b"", ModelFormatError, r"'indices'.*" + special, bin_kind="fifo",
             isolated=True),
        Case("bin_empty", "files", XML, b"", ModelFormatError, r"'indices'.*outside"),
        Case("bin_truncated", "files", XML, BIN[:6], ModelFormatError, r"'indices'.*outside"),
    ]


def xml_cases() -> list[Case]:
    """Every case about the document and the files, as opposed to the model it describes."""
    return _dtd_cases() + _syntax_cases() + _ignored_cases() + _file_cases()
