"""The public API for adding operations to ir-run: the declaration the built-in operations use, the context
their inference sees, and :func:`register_op`.

An extension declares each operation version as an :class:`OpDef` and registers it, either by calling
``ir_runner.register_op(op)`` or, for a package, through the entry-point group ``ir_runner.ops``: a callable
run once, on the first use of the registry, which registers the package's operations. Operations of a
custom opset (``version="my_opset"`` in the IR) give ``domain="my_opset"``. See ``docs/extending.md``.
"""

from __future__ import annotations

from .errors import ExtensionError, InferenceError, ModelFormatError
from .ops.api import Attr, Finding, InputFit, OpContext, OpDef, quiet_f16_nans
from .ops.registry import ENTRY_POINT_GROUP, register_op
from .types import Dim, ElementType, PartialShape, TensorSpec, element_type

__all__ = [
    "ENTRY_POINT_GROUP",
    "Attr",
    "Dim",
    "ElementType",
    "ExtensionError",
    "Finding",
    "InferenceError",
    "InputFit",
    "ModelFormatError",
    "OpContext",
    "OpDef",
    "PartialShape",
    "TensorSpec",
    "element_type",
    "quiet_f16_nans",
    "register_op",
]
