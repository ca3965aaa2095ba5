"""The valid model most hostile cases start from, and helpers to break it.

``cond`` (boolean [2,3]), ``then`` and ``else`` (f32 [2,3]) -> Select-1 ``sel`` (ports 0,1,2 -> 3)
-> Gather-7 ``gather`` with Const ``indices`` [2, 0] (i32) and Const ``axis`` 1 (i64 scalar)
-> Result ``out`` [2,2]. Layer ids in that order: cond 0, then 1, else 2, sel 3, indices 4, axis 5,
gather 6, out 7.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from lxml import etree

from tests.helpers.irbuild import IRBuilder

FEEDS = {
    "cond": np.array([[True, False, True], [False, True, False]]),
    "then": np.arange(6, dtype=np.float32).reshape(2, 3),
    "else": -np.arange(6, dtype=np.float32).reshape(2, 3),
}


def base_model() -> tuple[bytes, bytes]:
    """The valid base model's (xml, bin)."""
    b = IRBuilder("hostile")
    cond = b.parameter("cond", "boolean", "2,3")
    then = b.parameter("then", "f32", "2,3")
    other = b.parameter("else", "f32", "2,3")
    sel = b.layer("Select", "opset1", [cond, then, other], attrs={"auto_broadcast": "numpy"},
                  out_specs=[("FP32", "2,3")], name="sel")
    indices = b.const("indices", np.array([2, 0], np.int32))
    axis = b.const("axis", np.array(1, np.int64))
    gather = b.layer("Gather", "opset7", [sel, indices, axis], attrs={"batch_dims": 0},
                     out_specs=[("FP32", "2,2")], name="gather")
    b.result(gather, "out")
    return b.build()


def edit(xml: bytes, change: Callable[[etree._Element], object]) -> bytes:
    """Parse ``xml``, apply ``change(root)``, serialise again."""
    root = etree.fromstring(xml)
    change(root)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def layer(root: etree._Element, name: str) -> etree._Element:
    found = root.find(f"layers/layer[@name='{name}']")
    assert found is not None, name
    return found


def data(root: etree._Element, name: str) -> etree._Element:
    found = layer(root, name).find("data")
    assert found is not None, name
    return found


def port(root: etree._Element, name: str, port_id: str) -> etree._Element:
    found = layer(root, name).find(f".//port[@id='{port_id}']")
    assert found is not None, (name, port_id)
    return found


def edge_to(root: etree._Element, to_layer: str, to_port: str) -> etree._Element:
    found = root.find(f"edges/edge[@to-layer='{to_layer}'][@to-port='{to_port}']")
    assert found is not None, (to_layer, to_port)
    return found


def add_edge(root: etree._Element, from_layer: str, from_port: str, to_layer: str, to_port: str) -> None:
    attrs = {"from-layer": from_layer, "from-port": from_port, "to-layer": to_layer, "to-port": to_port}
    etree.SubElement(root.find("edges"), "edge", attrs)


def set_attr(name: str, key: str, value: str, *, on_data: bool = True) -> Callable[[etree._Element], None]:
    """A change that sets one attribute of a layer's ``<data>`` (or of the ``<layer>`` itself)."""

    def change(root: etree._Element) -> None:
        (data(root, name) if on_data else layer(root, name)).set(key, value)

    return change


def body(xml: bytes) -> str:
    """The document without its XML declaration, as text."""
    text = xml.decode()
    return text.split("?>", 1)[1].lstrip() if text.startswith("<?xml") else text
