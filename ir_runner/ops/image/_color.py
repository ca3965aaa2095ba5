"""The colour conversions' element types (a private module of the image family: it declares no operation)."""

from __future__ import annotations

from ...errors import UnsupportedError
from ...types import DYNAMIC, ElementType
from ..api import OpContext

COMPUTED = ("u8", "f16", "bf16", "f32", "f64")  # OpenVINO accepts u8 and every real type (f8 too: not computed)


def color_element_type(ctx: OpContext) -> ElementType:
    """The element type of a colour conversion's inputs (they must agree, a dynamic one takes the others'): u8
    or a float type, as OpenVINO checks; an UnsupportedError for the float types ir-run does not compute (the
    8-bit floats)."""
    et = ctx.common_element_type(*range(len(ctx.inputs)))
    if et != DYNAMIC and et.name != "u8" and et.kind != "float":
        ctx.fail(f"the input type must be u8 or a floating-point type, got {et}", position=0)
    if et != DYNAMIC and et.name not in COMPUTED:
        raise UnsupportedError(f"{ctx.op.type} of {et} is not computed by ir-run (only {', '.join(COMPUTED)})",
                               layer=ctx.ref, port=ctx.input_label(0))
    return et
