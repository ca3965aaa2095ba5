"""Plain immutable records of what an IR file says, before any interpretation.

The reader fills them; everything after reading (graph, inference, plan) works on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .weights import Weights


@dataclass(frozen=True)
class PortRecord:
    """One ``<port>``: its id (as written), position inside ``<input>``/``<output>``, declared spec."""

    id: str
    position: int
    precision: str | None
    dims: tuple[int, ...]
    names: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"port {self.position} (id {self.id})"


@dataclass(frozen=True)
class LayerRecord:
    """One ``<layer>`` with its ``<data>`` attributes and ports."""

    id: str
    name: str
    type: str
    version: str
    data: dict[str, str]
    inputs: tuple[PortRecord, ...]
    outputs: tuple[PortRecord, ...]
    line: int | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    rt_info: tuple[str, ...] = ()


@dataclass(frozen=True)
class EdgeRecord:
    """One ``<edge>``: an output port of one layer to an input port of another (ids as written)."""

    from_layer: str
    from_port: str
    to_layer: str
    to_port: str
    line: int | None = None


@dataclass(frozen=True)
class NetRecord:
    """The whole ``<net>``: layers in document order, edges, and the weights they may reference."""

    name: str
    version: int
    layers: tuple[LayerRecord, ...]
    edges: tuple[EdgeRecord, ...]
    weights: Weights
    rt_info: dict[str, str] = field(default_factory=dict)
