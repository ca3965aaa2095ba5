"""The operation registry: (type, opset range) -> operation declaration.

An IR layer says ``type="Gather" version="opset8"``. Each operation version is defined in some opset
and stays in later ones until a new version replaces it, so Gather-1 covers opset1..opset6, Gather-7
only opset7 and Gather-8 opset8 onwards. Types match case-insensitively. Operations of a custom opset
(``version="my_opset"``, or ``"extension"``) are registered by extensions with that ``domain``.

The built-in declarations are the ``OPS`` of the operation modules of the family packages of
``ir_runner.ops`` (every sub-package but ``toolkit``; every module whose name does not begin with ``_``),
found by reading the package's folders (:func:`builtin_modules`); extensions add theirs with :func:`register_op` or
through the entry-point group ``ir_runner.ops`` (callables run once, on the first use of the registry).
Everything is loaded on first use, so importing the reader or the graph imports no kernel.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import threading
from typing import TYPE_CHECKING

from ..errors import ExtensionError, LayerRef
from ..types import decimal_int
from .api import NEWEST_OPSET, OpDef

if TYPE_CHECKING:
    from ..ir.records import LayerRecord

ENTRY_POINT_GROUP = "ir_runner.ops"
TOOLKIT = "toolkit"  # the sub-package of helpers: no operation lives there

_REGISTRY: dict[str, list[OpDef]] = {}
_loaded = False
_loading = False
_lock = threading.RLock()
BUILTIN_ORIGIN = "ir-run "  # how the origin of every built-in declaration begins
_origin: str | None = None  # the entry point being loaded, named in clash messages


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
            for module in builtin_modules():
                for op in importlib.import_module(module).OPS:
                    op.origin = op.origin or f"{BUILTIN_ORIGIN}({module})"
                    _add(op)
            _load_entry_points()
            _loaded = True
        finally:
            _loading = False


def builtin_modules() -> list[str]:
    """The absolute names of the built-in operation modules, sorted: every module of every family package of
    ``ir_runner.ops`` (not ``toolkit``) whose name does not begin with ``_`` (a family's private kernel
    modules do). Read from the folders (``os.scandir``: a tenth of ``pkgutil.iter_modules``' time)."""
    found = []
    for root in sys.modules[__package__].__path__:
        for family in os.scandir(root):
            if (family.name == TOOLKIT or family.name.startswith(("_", ".")) or not family.is_dir()
                    or not os.path.isfile(os.path.join(family.path, "__init__.py"))):
                continue
            found.extend(f"{__package__}.{family.name}.{entry.name[:-3]}" for entry in os.scandir(family.path)
                         if entry.name.endswith(".py") and not entry.name.startswith("_") and entry.is_file())
    return sorted(found)


def _load_entry_points() -> None:
    global _origin
    for dist, name, target in entry_points():
        module_name, _, attribute = target.partition(":")
        _origin = f"{dist} (entry point {ENTRY_POINT_GROUP}: {name})"
        try:
            hook = importlib.import_module(module_name.strip())
            for part in attribute.strip().split(".") if attribute.strip() else ():
                hook = getattr(hook, part)
            hook()
        except ExtensionError:
            raise
        except Exception as exc:
            raise ExtensionError(
                f"the extension entry point '{name} = {target}' of {dist} ({ENTRY_POINT_GROUP}) failed:"
                f" {type(exc).__name__}: {exc}",
                hint="fix or uninstall the package that provides it",
            ) from exc
        finally:
            _origin = None


def entry_points() -> list[tuple[str, str, str]]:
    """(distribution, name, ``module:attribute``) of every ``ir_runner.ops`` entry point of the distributions on
    ``sys.path`` (the first of each name, as importlib.metadata finds them). Read from the ``*.dist-info``
    folders' ``entry_points.txt`` directly: importing importlib.metadata would add about 25 ms to every start."""
    found, seen = [], set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if not folder.endswith((".dist-info", ".egg-info")):
                continue
            dist = folder.rsplit(".", 1)[0].split("-")[0].replace("_", "-").lower()
            if dist in seen:
                continue
            seen.add(dist)
            try:
                with open(os.path.join(entry or ".", folder, "entry_points.txt"), encoding="utf-8") as file:
                    text = file.read()
            except OSError:
                continue
            if f"[{ENTRY_POINT_GROUP}]" in text:
                found.extend((dist, name, target) for name, target in _section(text, ENTRY_POINT_GROUP))
    return found


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = target`` lines of one ``[group]`` of an entry_points.txt."""
    entries, inside = [], False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            inside = line == f"[{group}]"
        elif inside and "=" in line and not line.startswith(("#", ";")):
            name, _, target = line.partition("=")
            entries.append((name.strip(), target.strip()))
    return entries


def register_op(op: OpDef) -> OpDef:
    """Add an extension's operation version, declared like the built-ins (:class:`~ir_runner.ops.api.OpDef`).

    An opset range overlapping a registered version of the same type (or the same custom opset, ``domain``)
    is an ExtensionError naming both. Returns ``op``."""
    if op.origin is None:
        op.origin = _origin or f"register_op() in {sys._getframe(1).f_globals.get('__name__', '?')}"
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


def openvino_refusal(type_name: str, version: str) -> str | None:
    """Why OpenVINO itself refuses a layer ``type="T" version="opsetN"`` of a built-in type ir-run serves in
    other opsets, or None (it may hold it: then ir-run lacks that version). Built-in declarations cover exactly
    the opsets OpenVINO's tables hold them in (tests/test_opset_ranges.py), so: an opset OpenVINO does not
    define, or NEWEST_OPSET when no declaration of the type reaches it (that opset holds, of the earlier
    operations, only those ir-run serves in it). Below NEWEST_OPSET ir-run cannot tell (it may lack an older
    class of the type)."""
    _load()
    number = opset_number(version)
    ops = sorted((op for op in _REGISTRY.get(type_name.lower(), ()) if op.domain is None), key=lambda op: op.version)
    if number is None or not ops or any(op.covers(number) for op in ops):
        return None
    held = f"{type_name} is in {', '.join(op.opsets for op in ops)}"
    if not 1 <= number <= NEWEST_OPSET:
        return f"OpenVINO has no opset{number} (it defines opset1..opset{NEWEST_OPSET}); {held}"
    if number == NEWEST_OPSET:
        kept = sorted({op.type for found in _REGISTRY.values() for op in found
                       if op.covers(NEWEST_OPSET) and op.first_opset < NEWEST_OPSET})
        return (f"opset{number} has no {type_name} (OpenVINO's opset{number} holds, of the operations of earlier"
                f" opsets, only {', '.join(kept)}); {held}")
    return None


def is_known_type(type_name: str) -> bool:
    _load()
    return type_name.lower() in _REGISTRY


def supported_ops() -> list[OpDef]:
    """Every registered operation version, sorted by type and version."""
    _load()
    return sorted((op for ops in _REGISTRY.values() for op in ops), key=lambda op: (op.type, op.version))




def supported_summary() -> str:
    """One short sentence for messages: how many operation types ir-run implements, and where to look."""
    _load()
    return (f"ir-run implements {len(_REGISTRY)} operation types ({sum(map(len, _REGISTRY.values()))} versions);"
            " 'ir-run inspect MODEL.xml' marks each layer supported or not")


def versions_of(type_name: str) -> str:
    """The registered versions of one type with their opsets, e.g. ``Gather-7 (opset7), Gather-8 (opset8..)``."""
    _load()
    return ", ".join(f"{op.label} ({op.opsets})" for op in sorted(_REGISTRY.get(type_name.lower(), ()),
                                                                   key=lambda op: op.version))


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
