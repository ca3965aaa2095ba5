"""What the CLI needs to know of an input's data before it has any: its concrete shape (``--data-shape`` or
the static shape), the ``--data-shape`` option that would fit it, and the range of its integer values."""

from __future__ import annotations

from ..casting import integer_bounds
from ..errors import InputError
from ..model import TensorInfo
from .common import flag


def int_bounds(info: TensorInfo) -> tuple[int, int]:
    """The smallest and largest value of an integer or boolean input."""
    return integer_bounds(info.element_type)


def generated_shape(info: TensorInfo, data_shape) -> tuple[int, ...]:
    """The concrete shape of an input's data: ``--data-shape``, else its static shape (else an error)."""
    shape = info.partial_shape
    if data_shape is not None:
        if not shape.accepts(data_shape):
            raise InputError(f"{flag('--data-shape', info.name, dims_text(data_shape))} does not fit its shape {shape}")
        return tuple(data_shape)
    if shape.is_static:
        return shape.to_shape()
    raise InputError(
        f"input '{info.name}' has the dynamic shape {shape}: ir-run needs the concrete shape of its data",
        hint=f"add {data_shape_example(info)} (or give the data in a file)",
    )


def data_shape_example(info: TensorInfo) -> str:
    """A ``--data-shape`` option that fits a dynamic input: each dynamic dim at its lower bound (at least 1)."""
    dims = info.partial_shape.dims
    if dims is None:
        return flag("--data-shape", info.name, "[1,3]")
    return flag("--data-shape", info.name, dims_text([d.lo if d.is_static else max(d.lo, 1) for d in dims]))


def dims_text(dims) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"
