"""Plain immutable records of what an IR file says, before any interpretation.

The reader fills them; everything after reading (graph, inference, plan) works on them. Ports, layers
and edges are named tuples: a large IR has hundreds of thousands of them, and tuples are built several
times faster than frozen dataclasses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .weights import Weights


class PortRecord(NamedTuple):
    """One ``<port>``: its id (as written), position inside ``<input>``/``<output>``, declared spec."""

    id: str
    position: int
    precision: str | None
    dims: tuple[int, ...]
    names: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"port {self.position} (id {self.id})"


class LayerRecord(NamedTuple):
    """One ``<layer>`` with its ``<data>`` attributes and ports."""

    id: str
    name: str
    type: str
    version: str
    data: dict[str, str]
    inputs: tuple[PortRecord, ...]
    outputs: tuple[PortRecord, ...]
    line: int | None
    attrs: dict[str, str]


class EdgeRecord(NamedTuple):
    """One ``<edge>``: an output port of one layer to an input port of another (ids as written)."""

    from_layer: str
    from_port: str
    to_layer: str
    to_port: str
    line: int | None = None


class NetRecord(NamedTuple):
    """The whole ``<net>``: layers in document order, edges, and the weights they may reference."""

    name: str
    version: int
    layers: tuple[LayerRecord, ...]
    edges: tuple[EdgeRecord, ...]
    weights: Weights
