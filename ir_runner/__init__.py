"""ir-run: load, check and run OpenVINO IR models (model.xml + model.bin) with numpy kernels.

The errors are imported eagerly (they are light); everything that needs numpy or lxml is imported on
first use, so that ``ir-run --help`` and shell completion start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .errors import (
    BatchError,
    DeclaredMismatchError,
    ExtensionError,
    ExtensionKernelError,
    GraphError,
    IndexOutOfRangeError,
    InferenceError,
    InputError,
    IRError,
    KernelError,
    ModelFileNotFoundError,
    ModelFormatError,
    ResourceLimitError,
    UnsupportedError,
    WeightsFileNotFoundError,
)

if TYPE_CHECKING:
    from .divergence import CrosscheckReport, crosscheck
    from .extension import OpDef, register_op
    from .headroom import PrecisionReport, precision
    from .model import DEFAULT_MEMORY_LIMIT, LayerTrace, Model, Trace, load, run
    from .parts import extract
    from .report import ValidationReport, validate
    from .runtime import CastWarning, TensorInfo
    from .sensitivity import CompressionReport, compression
    from .types import Dim, ElementType, PartialShape

__version__ = "0.1.0"

_LAZY = {
    "OpDef": "extension",
    "register_op": "extension",
    "extract": "parts",
    "CrosscheckReport": "divergence",
    "crosscheck": "divergence",
    "PrecisionReport": "headroom",
    "precision": "headroom",
    "CompressionReport": "sensitivity",
    "compression": "sensitivity",
    "DEFAULT_MEMORY_LIMIT": "model",
    "LayerTrace": "model",
    "Model": "model",
    "Trace": "model",
    "ValidationReport": "report",
    "load": "model",
    "run": "model",
    "validate": "report",
    "CastWarning": "runtime",
    "TensorInfo": "runtime",
    "Dim": "types",
    "ElementType": "types",
    "PartialShape": "types",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ir_runner' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BatchError",
    "DEFAULT_MEMORY_LIMIT",
    "CastWarning",
    "CompressionReport",
    "CrosscheckReport",
    "DeclaredMismatchError",
    "ExtensionError",
    "ExtensionKernelError",
    "Dim",
    "ElementType",
    "GraphError",
    "IRError",
    "IndexOutOfRangeError",
    "InferenceError",
    "InputError",
    "KernelError",
    "LayerTrace",
    "Model",
    "ModelFileNotFoundError",
    "ModelFormatError",
    "OpDef",
    "PartialShape",
    "PrecisionReport",
    "ResourceLimitError",
    "TensorInfo",
    "Trace",
    "UnsupportedError",
    "ValidationReport",
    "WeightsFileNotFoundError",
    "__version__",
    "compression",
    "crosscheck",
    "extract",
    "load",
    "precision",
    "register_op",
    "run",
    "validate",
]
