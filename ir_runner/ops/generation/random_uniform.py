"""RandomUniform-8: a tensor of ``output_shape`` filled with uniform random numbers in ``[min, max)``, drawn as
OpenVINO's reference draws them, bit for bit for given seeds (``ov::reference::random_uniform``).

- ``alignment="tensorflow"`` (the default): Philox-4x32-10 with key ``global_seed`` and counter
  ``(block, op_seed)``; each block of four 32-bit words gives four values (two for f64 and i64, which take two
  words each). A float is made from the word's low mantissa bits as ``1.m - 1`` (f32: 23 bits, f16: 10,
  bf16: 7, f64: 52 from two words), then ``r * (max - min) + min`` in the output type (f16 and bf16: each
  operation in f32, rounded, as ``ov::float16``/``ov::bfloat16``); integers are ``word % (max - min) + min`` in
  unsigned arithmetic (i64: the two words ``high << 32 | low``).
- ``alignment="pytorch"``: the 32-bit outputs of MT19937 seeded with the low 32 bits of ``global_seed``
  (``op_seed`` unused); floats ``(word & (2**d - 1)) / 2**d`` (f32: d = 24, f16: 11, bf16: 8, f64: 53 from
  two words) then ``r * (max - min) + min`` computed in f32 (f64 for f64) and rounded once; integers as above
  (i64 from one word when min and max are below 2**32, as PyTorch does).

Deviations: OpenVINO's node continues its random sequence on every evaluation (the next run draws the next
numbers); ir-run draws every run from the initial state, as a fresh model's first inference. Both seeds 0 mean a
non-deterministic sequence in OpenVINO (a seed from the clock): ir-run then draws a fresh seed from the operating
system each time the kernel runs: on every run, or once at load when every input is constant (the layer is then
evaluated at load, as constant layers are).
"""

from __future__ import annotations

from ...errors import ModelFormatError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.partial import unknown_dims, value_dims
from ._uniform import random_uniform

NAMES = ("output_shape", "min", "max")
OUTPUT_TYPES = ("f16", "bf16", "f32", "f64", "i32", "i64")
ALIGNMENTS = {"tensorflow": "tensorflow", "pytorch": "pytorch"}
def _seed(ctx: OpContext, name: str) -> int:
    """A seed attribute: read as an int64, as OpenVINO's IR reader does (it refuses larger values), used as the
    uint64 it holds (a negative seed wraps)."""
    return ctx.attr_int(name, 0) % 2**64


def infer_random_uniform(ctx: OpContext):
    et = ctx.attr_element_type("output_type")
    if et.name not in OUTPUT_TYPES:
        raise ModelFormatError(f"attribute output_type={et.name!r} must be one of {', '.join(OUTPUT_TYPES)}",
                               layer=ctx.ref)
    shape_spec = ctx.inputs[0]
    if shape_spec.element_type.kind not in ("int", "dynamic") or shape_spec.element_type.bits not in (32, 64, 0):
        ctx.fail(f"output_shape must be i32 or i64, got {shape_spec.element_type}", position=0)
    if shape_spec.shape.rank is not None and shape_spec.shape.rank != 1:
        ctx.fail(f"output_shape must be 1-D, got {shape_spec.shape.brief()}", position=0)
    for position in (1, 2):
        spec = ctx.inputs[position]
        if spec.element_type.kind != "dynamic" and spec.element_type != et:
            ctx.fail(f"{NAMES[position]} must have the output type {et}, got {spec.element_type}", position=position)
        rank = spec.shape.rank
        if rank is not None and not (rank == 0 or (rank == 1 and spec.shape.dims[0].contains(1))):
            ctx.fail(f"{NAMES[position]} must be a scalar or have one element, got {spec.shape.brief()}",
                     position=position)
    low, high = ctx.const_value(1), ctx.const_value(2)
    if low is not None and high is not None and low.size == high.size == 1:
        if not low.reshape(-1)[0] < high.reshape(-1)[0]:
            ctx.fail(f"min must be less than max, got {low.reshape(-1)[0]} and {high.reshape(-1)[0]}", position=1)
    params = {"dtype": et.dtype, "global_seed": _seed(ctx, "global_seed"), "op_seed": _seed(ctx, "op_seed"),
              "alignment": ctx.attr_choice("alignment", ALIGNMENTS, "tensorflow")}
    value = ctx.partial_value(0)
    if value is not None:
        return [TensorSpec(et, PartialShape(value_dims(ctx, value, 0)))], params
    length = shape_spec.shape.dims[0] if shape_spec.shape.rank == 1 else DYNAMIC_DIM
    shape = PartialShape(unknown_dims(ctx, length.lo, 0)) if length.is_static else DYNAMIC_SHAPE
    return [TensorSpec(et, shape)], params


def _batch(params, inputs, outputs, axes):
    return "a generator: its values depend on every element's position in the whole tensor"


OPS = (
    OpDef("RandomUniform", 8, 8, LATEST_OPSET, NAMES, infer_random_uniform, random_uniform,
          roles=("shape", "data", "data"), batch=_batch,
          attrs=(Attr("output_type", None, OUTPUT_TYPES), Attr("global_seed", "0"), Attr("op_seed", "0"),
                 Attr("alignment", "tensorflow", tuple(ALIGNMENTS)))),
)
