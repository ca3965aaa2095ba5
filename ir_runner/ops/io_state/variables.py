"""ReadValue-3/6 and Assign-3/6: a stateful model's variables (its memory between runs, such as a KV cache).

A ReadValue's output is its variable's value: the value the last run stored, else the initial value, which
is the init input when the layer has one (OpenVINO uses it on the first run and after a reset) or zeros of
the variable's declared type and shape, each dynamic dim 0 (what the CPU plugin starts a KV cache
``[?,heads,?,dim]`` with: an empty tensor). An Assign stores its input in its variable when the run ends;
it is a sink, which no Result needs to read. A run feeds each set variable's value to its ReadValues (see
``ir_runner.state``); the kernels here compute the initial value and pass an Assign's input through.

Shape inference is OpenVINO's: ReadValue-6 outputs the declared ``variable_type``/``variable_shape`` (the
init input's own spec when both are left dynamic), which must relax the init input's (every init dim
within the declared one, the types equal unless the declared one is dynamic). ReadValue-3 declares nothing:
it outputs its init input's spec. The checks that need two layers (an Assign's variable has a ReadValue,
one Assign per variable, the Assign's input fits the declaration) are ``ir_runner.state``'s.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelFormatError, UnsupportedError, clip_text
from ...types import DYNAMIC, DYNAMIC_SHAPE, PartialShape, TensorSpec, parse_partial_shape
from ..api import LATEST_OPSET, Attr, OpContext, OpDef


def _variable_id(ctx: OpContext) -> str:
    text = ctx.attr("variable_id")
    if not text:
        raise ModelFormatError("the required attribute 'variable_id' is missing or empty", layer=ctx.ref,
                               hint='name the variable: variable_id="past_key_values.0.key"')
    return text


def _declared(ctx: OpContext) -> TensorSpec:
    """The variable as ReadValue-6 declares it; a dynamic type and shape when left out."""
    et = ctx.attr_element_type("variable_type") if ctx.attr("variable_type") is not None else DYNAMIC
    text = ctx.attr("variable_shape")
    if text is None:
        return TensorSpec(et, DYNAMIC_SHAPE)
    try:
        return TensorSpec(et, parse_partial_shape(text))
    except ValueError as exc:
        raise ModelFormatError(f"attribute {ctx.attr_shown('variable_shape')} is not a shape:"
                               f" {clip_text(str(exc), 120)}", layer=ctx.ref,
                               hint="write dims as in '?,32,?,128', '1..10,3' or '...' for a dynamic rank") from None


def relaxes(wide: PartialShape, narrow: PartialShape) -> bool:
    """OpenVINO's ``PartialShape::relaxes``: every shape that fits ``narrow`` fits ``wide``."""
    if wide.dims is None:
        return True
    if narrow.dims is None or len(wide.dims) != len(narrow.dims):
        return False
    return all(w.lo <= n.lo and (w.hi is None or (n.hi is not None and n.hi <= w.hi))
               for w, n in zip(wide.dims, narrow.dims))


def infer_read_value3(ctx: OpContext):
    variable_id = _variable_id(ctx)
    return [ctx.inputs[0]], {"variable_id": variable_id, "declared": TensorSpec(DYNAMIC, DYNAMIC_SHAPE)}


def infer_read_value6(ctx: OpContext):
    variable_id = _variable_id(ctx)
    declared = _declared(ctx)
    params = {"variable_id": variable_id, "declared": declared}
    if not ctx.inputs:
        return [declared], params
    init = ctx.inputs[0]
    if not relaxes(declared.shape, init.shape):
        ctx.fail(f"the variable '{clip_text(variable_id)}' is declared {declared.shape.brief()}, which does not"
                 f" take the init input's shape {init.shape.brief()}", position=0,
                 hint="variable_shape must allow every shape the init input can have")
    if declared.element_type != DYNAMIC and init.element_type not in (DYNAMIC, declared.element_type):
        ctx.fail(f"the variable '{clip_text(variable_id)}' is declared {declared.element_type.name}, the init input"
                 f" is {init.element_type.name}", position=0)
    if declared.element_type == DYNAMIC and declared.shape.dims is None:
        return [init], params
    return [declared], params


def infer_assign(ctx: OpContext):
    return [ctx.inputs[0]], {"variable_id": _variable_id(ctx)}


def initial_zeros(declared: TensorSpec) -> np.ndarray:
    """A variable's initial value without an init input: zeros of its type and shape, a dynamic dim 0."""
    dtype = declared.element_type.dtype
    if dtype is None or declared.shape.dims is None:
        raise UnsupportedError(f"the variable is declared {declared.brief()}: its initial value (zeros) needs an"
                               " element type and a rank", hint="declare variable_type and variable_shape")
    return np.zeros(tuple(d.lo for d in declared.shape.dims), dtype)


def read_value(*init: np.ndarray, variable_id: str | None = None, declared: TensorSpec | None = None) -> np.ndarray:
    """The initial value (a run feeds a set variable's value instead of calling this; a run that computes
    it from the init input plans the layer with the init's spec, and no parameter)."""
    return init[0] if init else initial_zeros(declared)


def assign(value: np.ndarray, *, variable_id: str) -> np.ndarray:
    """The input, passed through (the run stores it in the variable)."""
    return value


_ATTRS6 = (Attr("variable_id"), Attr("variable_type"), Attr("variable_shape"))

OPS = (
    OpDef("ReadValue", 3, 3, 5, ("init",), infer_read_value3, read_value, attrs=(Attr("variable_id"),),
          views=True, state="read"),
    OpDef("ReadValue", 6, 6, LATEST_OPSET, ("init",), infer_read_value6, read_value, attrs=_ATTRS6, views=True,
          state="read", min_inputs=0),
    OpDef("Assign", 3, 3, 5, ("value",), infer_assign, assign, attrs=(Attr("variable_id"),), views=True,
          state="write"),
    OpDef("Assign", 6, 6, LATEST_OPSET, ("value",), infer_assign, assign, attrs=(Attr("variable_id"),), views=True,
          state="write"),
)
