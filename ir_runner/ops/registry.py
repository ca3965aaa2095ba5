"""The operation registry: (type, opset range) -> operation declaration.

An IR layer says ``type="Gather" version="opset8"``. Each operation version is defined in some opset
and stays in later ones until a new version replaces it, so Gather-1 covers opset1..opset6, Gather-7
only opset7 and Gather-8 opset8 onwards. Types match case-insensitively. Operations of a custom opset
(``version="my_opset"``, or ``"extension"``) are registered by extensions with that ``domain``.

The built-in declarations are the ``OPS`` of the modules in ``BUILTIN_MODULES``; extensions add theirs
with :func:`register_op` or through the entry-point group ``ir_runner.ops`` (callables run once, on the
first use of the registry). Everything is loaded on first use, so importing the reader or the graph
imports no kernel.
"""

from __future__ import annotations

import functools
import importlib
import threading
from typing import TYPE_CHECKING

from ..errors import ExtensionError, LayerRef
from ..types import decimal_int
from .api import OpDef

if TYPE_CHECKING:
    from ..ir.records import LayerRecord

ENTRY_POINT_GROUP = "ir_runner.ops"
BUILTIN_MODULES = ("io", "convert", "select", "gather", "binary", "unary")

_REGISTRY: dict[str, list[OpDef]] = {}
_loaded = False
_loading = False
_lock = threading.RLock()


def _load() -> None:
    """Register the built-in operations, then every extension's, on first use of the registry."""
    global _loaded, _loading
    if _loaded:
        return
    with _lock:  # another thread must not see a half-filled registry
        if _loaded or _loading:  # (_loading: an extension's callable uses the registry while it registers)
            return
        _loading = True
        try:
            for module in BUILTIN_MODULES:
                for op in importlib.import_module(f"{__package__}.{module}").OPS:
                    _add(op)
            _load_entry_points()
            _loaded = True
        finally:
            _loading = False


def _load_entry_points() -> None:
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            hook = entry.load()
            hook()
        except ExtensionError:
            raise
        except Exception as exc:
            raise ExtensionError(
                f"the extension entry point '{entry.name} = {entry.value}' ({ENTRY_POINT_GROUP}) failed to load:"
                f" {type(exc).__name__}: {exc}",
                hint="fix or uninstall the package that provides it",
            ) from exc


def register_op(op: OpDef) -> OpDef:
    """Add an operation version (a built-in declaration or an extension's); returns it, so it can decorate
    a module-level ``OPS`` entry. An opset range overlapping a registered version of the same type (or the
    same custom opset) is an ExtensionError naming both."""
    with _lock:
        _load()
        _add(op)
    return op


def _add(op: OpDef) -> None:
    versions = _REGISTRY.setdefault(op.type.lower(), [])
    for other in versions:
        clash = (other.domain == op.domain if op.domain or other.domain
                 else other.first_opset <= op.last_opset and op.first_opset <= other.last_opset)
        if clash:
            raise ExtensionError(
                f"{op.label} ({op.opsets}) from {op.origin} clashes with {other.label} ({other.opsets}) from"
                f" {other.origin}: both would serve the same layers",
                hint="give the extension's operation its own opset name (OpDef(..., domain='my_opset'))",
            )
    versions.append(op)
    lookup.cache_clear()
    type_version.cache_clear()


def opset_number(version: str) -> int | None:
    """``'opset7'`` -> 7; anything else (``experimental``, ``extension``, empty) -> None."""
    text = version.strip().lower()
    return decimal_int(text[5:], 9) if text.startswith("opset") else None


def find_op(layer: LayerRecord) -> OpDef | None:
    """The operation version a layer's type and opset select, or None."""
    return lookup(layer.type, layer.version)


@functools.lru_cache(maxsize=256)
def lookup(type_name: str, version: str) -> OpDef | None:
    """The operation version ``type="..." version="..."`` selects, or None (cached; cleared on registering)."""
    _load()
    candidates = _REGISTRY.get(type_name.lower(), ())
    opset = opset_number(version)
    if opset is None:
        domain = version.strip().lower()
        return next((op for op in candidates if op.domain == domain), None)
    return next((op for op in candidates if op.covers(opset)), None)


def is_known_type(type_name: str) -> bool:
    _load()
    return type_name.lower() in _REGISTRY


def supported_ops() -> list[OpDef]:
    """Every registered operation version, sorted by type and version."""
    _load()
    return sorted((op for ops in _REGISTRY.values() for op in ops), key=lambda op: (op.type, op.version))


SUMMARY_MAX_CHARS = 400


def supported_summary() -> str:
    """The supported operation versions for a message; past SUMMARY_MAX_CHARS, their types only, clipped."""
    ops = supported_ops()
    full = ", ".join(f"{op.label} ({op.opsets})" for op in ops)
    if len(full) <= SUMMARY_MAX_CHARS:
        return full
    types = sorted({op.type for op in ops})
    shown = ", ".join(types)
    if len(shown) > SUMMARY_MAX_CHARS:
        shown = shown[:SUMMARY_MAX_CHARS].rpartition(", ")[0] + ", ..."
    return f"{len(types)} operation types ({shown}; ir_runner.ops.registry.supported_ops() lists the versions)"


def layer_ref(layer: LayerRecord) -> LayerRef:
    """How errors name a layer: with the registry's ``Type-version`` when known, else type and version."""
    return LayerRef(layer.name, type_version(layer.type, layer.version), layer.id, layer.line)


@functools.lru_cache(maxsize=1024)
def type_version(type_name: str, version: str) -> str:
    """``Gather-7`` for a known operation version, else the type and opset as written."""
    op = lookup(type_name, version)
    if op is not None:
        return op.label
    return f"{type_name} {version}".strip()
