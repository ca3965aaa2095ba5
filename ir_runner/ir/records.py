"""Plain records: what an IR file says, before any interpretation, and the base class of every record.

The reader fills the IR records; everything after reading (graph, inference, plan) works on them and never
changes them. They are small classes with ``__slots__``: a large IR has hundreds of thousands of them,
and these are built faster than named tuples (and, unlike ``typing.NamedTuple``, cost next to nothing
to define at import, which counts for the CLI's start-up time). :class:`Record` is also the base of the
graph, plan, registry and CLI records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import clip_text
from ..record import Record

if TYPE_CHECKING:
    from .weights import Weights


class PortRecord(Record):
    """One ``<port>``: its id (as written), position inside ``<input>``/``<output>``, declared spec, and its
    ``<rt_info>`` element as written (bytes; None when it has none), which only the writer reads."""

    __slots__ = ("id", "position", "precision", "dims", "names", "rt_info")

    def __init__(self, id: str, position: int, precision: str | None, dims: tuple[int, ...],
                 names: tuple[str, ...] = (), rt_info: bytes | None = None) -> None:
        self.id = id
        self.position = position
        self.precision = precision
        self.dims = dims
        self.names = names
        self.rt_info = rt_info

    @property
    def label(self) -> str:
        return f"port {self.position} (id {clip_text(self.id)})"


class LayerRecord(Record):
    """One ``<layer>`` with its ``<data>`` attributes and ports; for layers with sub-graphs, ``bodies`` maps each
    body's tag (``body``, ``then_body``, ``else_body``) to its NetRecord and ``maps`` each mapping element's tag
    (``port_map``, ``then_port_map``, ``else_port_map``, ``back_edges``) to its children, as (tag, attributes).
    ``rt_info`` is its ``<rt_info>`` element as written (bytes, or None), which only the writer reads."""

    __slots__ = ("id", "name", "type", "version", "data", "inputs", "outputs", "line", "attrs", "bodies", "maps",
                 "rt_info")

    def __init__(self, id: str, name: str, type: str, version: str, data: dict[str, str],
                 inputs: tuple[PortRecord, ...], outputs: tuple[PortRecord, ...], line: int | None,
                 attrs: dict[str, str], bodies: dict[str, NetRecord] | None = None,
                 maps: dict[str, tuple[tuple[str, dict[str, str]], ...]] | None = None,
                 rt_info: bytes | None = None) -> None:
        self.id = id
        self.name = name
        self.type = type
        self.version = version
        self.data = data
        self.inputs = inputs
        self.outputs = outputs
        self.line = line
        self.attrs = attrs
        self.bodies = bodies
        self.maps = maps
        self.rt_info = rt_info


class EdgeRecord(Record):
    """One ``<edge>``: an output port of one layer to an input port of another (ids as written)."""

    __slots__ = ("from_layer", "from_port", "to_layer", "to_port", "line")

    def __init__(self, from_layer: str, from_port: str, to_layer: str, to_port: str, line: int | None = None) -> None:
        self.from_layer = from_layer
        self.from_port = from_port
        self.to_layer = to_layer
        self.to_port = to_port
        self.line = line


class NetRecord(Record):
    """The whole ``<net>``: layers in document order, edges, the weights they may reference, and the net's
    ``<rt_info>`` as written (bytes, or None: the model's runtime options, which only the writer reads)."""

    __slots__ = ("name", "version", "layers", "edges", "weights", "rt_info")

    def __init__(self, name: str, version: int, layers: tuple[LayerRecord, ...], edges: tuple[EdgeRecord, ...],
                 weights: Weights, rt_info: bytes | None = None) -> None:
        self.name = name
        self.version = version
        self.layers = layers
        self.edges = edges
        self.weights = weights
        self.rt_info = rt_info
