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
    from .model import DEFAULT_MEMORY_LIMIT, LayerTrace, Model, Trace, load, run
    from .report import ValidationReport, validate
    from .runtime import CastWarning, TensorInfo
    from .types import Dim, ElementType, PartialShape

__version__ = "0.1.0"

_LAZY = {
    "OpDef": "extension",
    "register_op": "extension",
    "CrosscheckReport": "divergence",
    "crosscheck": "divergence",
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
    "ResourceLimitError",
    "TensorInfo",
    "Trace",
    "UnsupportedError",
    "ValidationReport",
    "WeightsFileNotFoundError",
    "__version__",
    "crosscheck",
    "load",
    "register_op",
    "run",
    "validate",
]
