"""ir-run: load, check and run OpenVINO IR models (model.xml + model.bin) with numpy kernels."""

from .errors import (
    DeclaredMismatchError,
    GraphError,
    IndexOutOfRangeError,
    InferenceError,
    InputError,
    IRError,
    ModelFormatError,
    ResourceLimitError,
    UnsupportedError,
)
from .model import Model, ValidationReport, load, run, validate
from .runtime import CastWarning, TensorInfo
from .types import Dim, ElementType, PartialShape

__version__ = "0.1.0"

__all__ = [
    "CastWarning",
    "DeclaredMismatchError",
    "Dim",
    "ElementType",
    "GraphError",
    "IRError",
    "IndexOutOfRangeError",
    "InferenceError",
    "InputError",
    "Model",
    "ModelFormatError",
    "PartialShape",
    "ResourceLimitError",
    "TensorInfo",
    "UnsupportedError",
    "ValidationReport",
    "__version__",
    "load",
    "run",
    "validate",
]
