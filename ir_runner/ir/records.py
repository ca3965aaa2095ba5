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
    """One ``<port>``: its id (as written), position inside ``<input>``/``<output>``, declared spec."""

    __slots__ = ("id", "position", "precision", "dims", "names")

    def __init__(self, id: str, position: int, precision: str | None, dims: tuple[int, ...],
                 names: tuple[str, ...] = ()) -> None:
        self.id = id
        self.position = position
        self.precision = precision
        self.dims = dims
        self.names = names

    @property
    def label(self) -> str:
        return f"port {self.position} (id {clip_text(self.id)})"


class LayerRecord(Record):
    """One ``<layer>`` with its ``<data>`` attributes and ports; for layers with sub-graphs, ``bodies`` maps each
    body's tag (``body``, ``then_body``, ``else_body``) to its NetRecord and ``maps`` each mapping element's tag
    (``port_map``, ``then_port_map``, ``else_port_map``, ``back_edges``) to its children, as (tag, attributes)."""

    __slots__ = ("id", "name", "type", "version", "data", "inputs", "outputs", "line", "attrs", "bodies", "maps")

    def __init__(self, id: str, name: str, type: str, version: str, data: dict[str, str],
                 inputs: tuple[PortRecord, ...], outputs: tuple[PortRecord, ...], line: int | None,
                 attrs: dict[str, str], bodies: dict[str, NetRecord] | None = None,
                 maps: dict[str, tuple[tuple[str, dict[str, str]], ...]] | None = None) -> None:
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
    """The whole ``<net>``: layers in document order, edges, and the weights they may reference."""

    __slots__ = ("name", "version", "layers", "edges", "weights")

    def __init__(self, name: str, version: int, layers: tuple[LayerRecord, ...], edges: tuple[EdgeRecord, ...],
                 weights: Weights) -> None:
        self.name = name
        self.version = version
        self.layers = layers
        self.edges = edges
        self.weights = weights
