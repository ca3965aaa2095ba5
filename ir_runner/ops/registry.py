"""The operation registry: (type, opset range) -> operation definition.

An IR layer says ``type="Gather" version="opset8"``. Each operation version is defined in some opset
and stays in later ones until a new version replaces it, so Gather-1 covers opset1..opset6, Gather-7
only opset7 and Gather-8 opset8 onwards. Types match case-insensitively.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import LayerRef
from ..ir.records import Record
from ..types import decimal_int

if TYPE_CHECKING:
    import numpy as np

    from ..infer import OpContext
    from ..ir.records import LayerRecord
    from ..types import TensorSpec

LATEST_OPSET = 17

InferFn = Callable[["OpContext"], "tuple[list[TensorSpec], dict[str, Any]]"]
KernelFn = Callable[..., "np.ndarray"]
PrepareFn = Callable[["dict[str, Any]", "list[TensorSpec]", "list[TensorSpec]", "list[np.ndarray | None]"], KernelFn]


class OpDef(Record):
    """One operation version: its inference and its kernel.

    ``infer`` checks the inputs and attributes and returns the output specs and the resolved kernel
    parameters; ``kernel(*inputs, **params)`` computes the single output (None for the layers the
    plan handles itself: Parameter, Const, Result). A kernel always returns a new array that aliases
    none of its inputs: the plan relies on it to hand outputs to callers without copying. A kernel with
    the attribute ``accepts_out = True`` (for a ``functools.partial``, its function) also takes ``out=``,
    a C-contiguous writeable array of the output's dtype and shape overlapping none of its inputs, and
    writes the result there (see plan.py). ``infer`` must depend only on the layer's ``<data>``, its
    input specs and the constant inputs it reads: inference reuses its result for equal layers (see
    ``infer._InferenceMemo``; Parameter and Const are exempt).
    ``prepare(params, input_specs, output_specs, constant_inputs)``, when given, returns a kernel
    specialised for static shapes (and for inputs that are constant), called as ``fn(*inputs)``;
    plans use it instead of ``kernel``.
    ``exact``: whether the kernel's results are bit-exact against OpenVINO's reference (integer, boolean,
    data-movement and correctly rounded float ops); False for ops whose float results are only within a
    bound (transcendental, accumulating), which ``crosscheck`` then compares within a tolerance.
    """

    __slots__ = ("type", "version", "first_opset", "last_opset", "input_names", "infer", "kernel", "prepare",
                 "exact")

    def __init__(self, type: str, version: int, first_opset: int, last_opset: int, input_names: tuple[str, ...],
                 infer: InferFn, kernel: KernelFn | None = None, prepare: PrepareFn | None = None, *,
                 exact: bool = True) -> None:
        self.type = type
        self.version = version
        self.first_opset = first_opset
        self.last_opset = last_opset
        self.input_names = input_names
        self.infer = infer
        self.kernel = kernel
        self.prepare = prepare
        self.exact = exact

    @property
    def label(self) -> str:
        return f"{self.type}-{self.version}"

    def covers(self, opset: int) -> bool:
        return self.first_opset <= opset <= self.last_opset

    @property
    def opsets(self) -> str:
        if self.first_opset == self.last_opset:
            return f"opset{self.first_opset}"
        return f"opset{self.first_opset}..opset{self.last_opset}"


_REGISTRY: dict[str, list[OpDef]] = {}
_BUILTIN_MODULES = ("io", "convert", "select", "gather")
_builtins_loaded = False
_builtins_lock = threading.RLock()


def _load_builtins() -> None:
    """Import the operation modules (each registers its operations) on first use of the registry.

    Deferred so that importing the graph or reader does not import the kernels (no import cycles).
    """
    global _builtins_loaded
    if _builtins_loaded:
        return
    with _builtins_lock:  # another thread must not see a half-filled registry
        if not _builtins_loaded:
            for module in _BUILTIN_MODULES:
                importlib.import_module(f"{__package__}.{module}")
            _builtins_loaded = True


def register(op: OpDef) -> OpDef:
    """Add an operation version; overlapping opset ranges for one type are a programming error."""
    versions = _REGISTRY.setdefault(op.type.lower(), [])
    if any(o.first_opset <= op.last_opset and op.first_opset <= o.last_opset for o in versions):
        raise ValueError(f"{op.label} overlaps an already registered version of {op.type}")
    versions.append(op)
    lookup.cache_clear()
    type_version.cache_clear()
    return op


def opset_number(version: str) -> int | None:
    """``'opset7'`` -> 7; anything else (``experimental``, ``extension``, empty) -> None."""
    text = version.strip().lower()
    return decimal_int(text[5:], 9) if text.startswith("opset") else None


def find_op(layer: LayerRecord) -> OpDef | None:
    """The operation version a layer's type and opset select, or None."""
    return lookup(layer.type, layer.version)


@functools.lru_cache(maxsize=256)
def lookup(type_name: str, version: str) -> OpDef | None:
    """The operation version ``type="..." version="opsetN"`` selects, or None (cached: call after registering)."""
    opset = opset_number(version)
    if opset is None:
        return None
    _load_builtins()
    for op in _REGISTRY.get(type_name.lower(), ()):
        if op.covers(opset):
            return op
    return None


def is_known_type(type_name: str) -> bool:
    _load_builtins()
    return type_name.lower() in _REGISTRY


def supported_ops() -> list[OpDef]:
    """Every registered operation version, sorted by type and version."""
    _load_builtins()
    return sorted((op for ops in _REGISTRY.values() for op in ops), key=lambda op: (op.type, op.version))


def supported_summary() -> str:
    return ", ".join(f"{op.label} ({op.opsets})" for op in supported_ops())


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
