"""The base of every record of ir-run (IR, graph, plan, registry and CLI records)."""

from __future__ import annotations


class Record:
    """Base of ir-run's records: a readable ``repr`` from the ``__slots__`` of the class. Records compare by
    identity (they are not tuples); the values users compare (``LayerRef``, ``TensorSpec``, ``Dim``,
    ``TensorInfo``) stay named tuples."""

    __slots__ = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"
