"""The errors ir-run raises, and the one formatter of *where* (layer and port) they happened.

Every problem with a model or with the data fed to it is an :class:`IRError`. Each subclass has an
``exit_code`` that the CLI uses: 3 invalid model, 4 bad input, 5 unsupported operation, 6 resource
limit, 7 internal kernel failure.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class LayerRef(NamedTuple):
    """How an error names a layer: ``layer 'sel' (Select-1, id 4, line 12)``."""

    name: str
    type_version: str
    id: str
    line: int | None = None

    def __str__(self) -> str:
        line = f", line {self.line}" if self.line else ""
        name, kind, layer_id = (clip_text(text, _NAME_LIMIT) for text in (self.name, self.type_version, self.id))
        return f"layer '{name}' ({kind}, id {layer_id}{line})"


_NAME_LIMIT = 300  # real layer names run to ~150 characters (framework scopes); only hostile ones are clipped


MESSAGE_ITEMS = 10  # ports, layers or cycle members a message lists (a hostile IR may have a million)


def clip_text(text: str, limit: int = 40) -> str:
    """``text`` from a model or its input, for a message: cut to ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def human_bytes(nbytes: int) -> str:
    """A byte count for a message: ``512 bytes``, ``1.5 MiB``, ..., ``more than 1 EiB`` (any int: a hostile
    shape can count more bytes than a float holds)."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    for power, unit in enumerate(("KiB", "MiB", "GiB", "TiB", "PiB"), start=1):
        if nbytes < 1024 ** (power + 1):
            return f"{nbytes / 1024**power:.1f} {unit}"
    return "more than 1 EiB"


class IRError(Exception):
    """Base of everything ir-run raises for a bad model or bad input.

    ``detail`` is the message alone; ``layer`` and ``port`` say where; ``hint`` suggests a fix.
    ``str(error)`` joins them into one paragraph.
    """

    exit_code = 3

    def __init__(
        self,
        detail: str,
        *,
        layer: LayerRef | None = None,
        port: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.detail = detail
        self.layer = layer
        self.port = port
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        where = ", ".join(str(part) for part in (self.layer, self.port) if part)
        text = f"{where}: {self.detail}" if where else self.detail
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


def with_layer(error: IRError, layer: LayerRef) -> IRError:
    """``error`` naming ``layer`` when it names no layer yet (kernels raise errors about fed values, such as an
    index out of range, without knowing which layer runs them)."""
    if error.layer is not None:
        return error
    return type(error)(error.detail, layer=layer, port=error.port, hint=error.hint)


class ModelFormatError(IRError):
    """The .xml or .bin is not a well-formed IR (syntax, versions, attributes, Const data)."""


class ModelFileNotFoundError(ModelFormatError, FileNotFoundError):
    """The model's file does not exist: a ``ModelFormatError`` that ``except FileNotFoundError`` catches too."""


class WeightsFileNotFoundError(ModelFormatError, FileNotFoundError):
    """The weights file (.bin) a Const needs does not exist (``weights_path`` names it)."""

    weights_path = ""


class GraphError(IRError):
    """The edges do not form a valid graph (dangling, duplicate, unconnected, cyclic)."""


class InferenceError(IRError):
    """Type or shape inference failed: the inputs of a layer do not fit its operation."""


class DeclaredMismatchError(IRError):
    """A port's declared dims or precision disagree with what inference computed."""


class UnsupportedError(IRError):
    """The model uses an operation, version or element type that ir-run does not implement."""

    exit_code = 5


class BatchError(UnsupportedError):
    """A chunked run cannot be proven to keep rows apart: a layer has no batch rule, or its rule says that
    it mixes the rows of a batch (a reduction over the batch axis, a Gather along it)."""


class InputError(IRError):
    """The data fed to a model does not fit its inputs (names, dtypes, shapes, files)."""

    exit_code = 4


class IndexOutOfRangeError(InputError):
    """Strict mode: an index value lies outside the range the operation's spec allows."""


class ResourceLimitError(IRError):
    """Running would need more memory than the configured ceiling allows."""

    exit_code = 6


class KernelError(IRError):
    """A kernel failed in a way inference should have prevented: a bug in ir-run, reported with the layer."""

    exit_code = 7


class ExtensionError(IRError):
    """An operation declaration that cannot be registered (a clash with another one), or an extension that
    fails to load."""


class ExtensionKernelError(KernelError, ExtensionError):
    """An extension's kernel raised, or returned outputs its own inference contradicts: a bug in that extension
    (named with its package), not in ir-run. Exit code 7, as a kernel failure."""


def error_entry(error: object, kind: str | None = None, *, detail: bool = False) -> dict[str, Any]:
    """An error (or a validation finding, which has the same attributes) as JSON-ready data: its ``type``
    (``kind``, else the IRError's class name, else 'warning'), ``message``, then whichever of ``detail`` (when
    asked), ``layer``, ``port`` and ``hint`` it has. ``validate``/``inspect`` list these; the CLI's ``--json``
    error object is one with ``detail``."""
    if kind is None:
        kind = type(error).__name__ if isinstance(error, IRError) else "warning"
    entry: dict[str, Any] = {"type": kind, "message": str(error)}
    if detail and getattr(error, "detail", None):
        entry["detail"] = error.detail
    layer = getattr(error, "layer", None)
    if layer is not None:
        entry["layer"] = {"name": layer.name, "type": layer.type_version, "id": layer.id, "line": layer.line}
    for key in ("port", "hint"):
        if getattr(error, key, None):
            entry[key] = getattr(error, key)
    return entry
