"""The public API for adding operations to ir-run: the declaration the built-in operations use, the context
their inference sees, and :func:`register_op`.

An extension declares each operation version as an :class:`OpDef` and registers it, either by calling
``ir_runner.register_op(op)`` or, for a package, through the entry-point group ``ir_runner.ops``: a callable
run once, on the first use of the registry, which registers the package's operations. Operations of a
custom opset (``version="my_opset"`` in the IR) give ``domain="my_opset"``. See ``docs/extending.md``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import ExtensionError, ExtensionKernelError, InferenceError, IRError, ModelFormatError
from .ops.api import Attr, Finding, InputFit, KernelFn, OpContext, OpDef, quiet_f16_nans
from .ops.registry import BUILTIN_ORIGIN, ENTRY_POINT_GROUP, register_op
from .types import Dim, ElementType, PartialShape, TensorSpec, element_type, element_type_of

__all__ = [
    "ENTRY_POINT_GROUP",
    "Attr",
    "Dim",
    "ElementType",
    "ExtensionError",
    "ExtensionKernelError",
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


def checked_kernel(op: OpDef, kernel: KernelFn, outputs: Sequence[TensorSpec | None]) -> KernelFn:
    """``kernel`` itself for a built-in operation; for an extension's, the kernel with its results checked
    against ``outputs`` (the layer's inferred specs; None: an output no layer reads, not checked) and its
    exceptions other than IRErrors and MemoryError turned into an ExtensionKernelError naming the package.

    Built-in kernels are tested against OpenVINO's reference; an extension's may return what its ``infer``
    did not declare, which would flow on silently with another dtype or shape than every later layer expects."""
    if op.origin is None or op.origin.startswith(BUILTIN_ORIGIN):
        return kernel

    def checked(*inputs: np.ndarray) -> object:
        try:
            result = kernel(*inputs)
        except (IRError, MemoryError):
            raise
        except Exception as exc:
            raise ExtensionKernelError(f"the kernel of {op.label} from {op.origin} failed: {type(exc).__name__}:"
                                       f" {exc}", hint=_HINT) from exc
        _check_results(op, result, outputs)
        return result

    return checked


_HINT = "a bug in that extension, not in ir-run: report it to the package's authors"


def _check_results(op: OpDef, result: object, outputs: Sequence[TensorSpec | None]) -> None:
    several = len(outputs) > 1
    values = tuple(result) if several and isinstance(result, (tuple, list)) else (result,)
    if len(values) != len(outputs):
        raise ExtensionKernelError(f"the kernel of {op.label} from {op.origin} returned {len(values)} value(s) for"
                                   f" {len(outputs)} outputs", hint=_HINT)
    for position, (value, spec) in enumerate(zip(values, outputs)):
        if spec is None:
            continue
        if not isinstance(value, np.ndarray):
            got = type(value).__name__
        elif spec.element_type.dtype not in (None, value.dtype) or not spec.shape.accepts(value.shape):
            known = element_type_of(value.dtype)
            got = f"{known.name if known else value.dtype}{list(value.shape)}".replace(" ", "")
        else:
            continue
        raise ExtensionKernelError(f"the kernel of {op.label} from {op.origin} returned {got} for output"
                                   f" {position}, where its inference gives {spec.brief()}", hint=_HINT)
