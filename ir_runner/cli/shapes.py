"""What the CLI needs to know of an input's data before it has any: its concrete shape (``--data-shape`` or
the static shape) and the ``--data-shape`` option that would fit it."""

from __future__ import annotations

from ..errors import InputError
from ..model import TensorInfo
from .common import flag


def generated_shape(info: TensorInfo, data_shape) -> tuple[int, ...]:
    """The concrete shape of an input's data: ``--data-shape``, else its static shape (else an error)."""
    shape = info.partial_shape
    if data_shape is not None:
        if not shape.accepts(data_shape):
            raise InputError(f"{flag('--data-shape', info.name, bracketed(data_shape))} does not fit its shape {shape}")
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
    return flag("--data-shape", info.name, bracketed([d.lo if d.is_static else max(d.lo, 1) for d in dims]))


def bracketed(dims) -> str:
    """``[2,4]``: dims as a flag takes them, every one written (not clipped like messages: it is pasted back)."""
    return "[" + ",".join(str(d) for d in dims) + "]"
