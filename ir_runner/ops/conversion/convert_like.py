"""ConvertLike-1 and ConvertPromoteTypes-14: Convert-1 to a type taken from the inputs (PyTorch-converted IRs).

- ConvertLike-1: ``data`` converted to ``like``'s element type (``like``'s values are never read); the output
  has ``data``'s shape. Like OpenVINO's (which has no ``evaluate`` and no bounds for it), it carries no partial
  value: a shape computed through it is unknown until run time, as the IRs OpenVINO writes declare it.
- ConvertPromoteTypes-14: both inputs converted to one common type, chosen as OpenVINO's
  ``evaluate_common_type`` chooses it (see :func:`promoted_type`); each output keeps its input's shape.

Values follow Convert-1's rules exactly (``toolkit.convert_rules.convert``: OpenVINO's reference rounding, wrapping and
saturation, with its documented deviations). OpenVINO has no ``evaluate`` of its own for ConvertPromoteTypes
(a transformation replaces it by two Converts); the tests compare with those Converts' reference.
"""

from __future__ import annotations

from ...errors import UnsupportedError
from ...types import DYNAMIC, ELEMENT_TYPES, ElementType, PartialShape, TensorSpec, element_type_of
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef, keep_batch
from ..toolkit.convert_rules import convert

_PROMOTABLE = frozenset({"dynamic", "boolean", "f16", "f32", "f64", "i4", "i8", "i16", "i32", "i64", "u1", "u4",
                         "u8", "u16", "u32", "u64", "f8e4m3", "f8e5m2", "bf16"})


def _infer_convert_like(ctx: OpContext):
    data, like = ctx.inputs
    dst = like.element_type
    if dst.kind == "string" or data.element_type.kind == "string":
        raise UnsupportedError(f"ConvertLike from {data.element_type} to {dst} is not supported", layer=ctx.ref)
    return [TensorSpec(dst, data.shape)], {"dst": None if dst == DYNAMIC else dst}


def convert_like(x, like, *, dst: ElementType | None):
    """``x`` converted to ``like``'s element type (Convert-1's rules); a new array."""
    return convert(x, dst=dst if dst is not None else element_type_of(like.dtype))


class PromotionError(ValueError):
    """The two types have no common type under these attributes (OpenVINO's message)."""


def promoted_type(a: ElementType, a_shape: PartialShape, b: ElementType, b_shape: PartialShape, *,
                  unsafe: bool, pytorch_scalars: bool, u64_target: ElementType) -> ElementType:
    """The common type of ConvertPromoteTypes-14, rule by rule as OpenVINO chooses it:

    - equal types: that type; boolean with anything: the other; a dynamic type: dynamic.
    - float with integer: the float, only if its width is at least twice the integer's (any width when
      ``promote_unsafe``).
    - both float or both integer, ``pytorch_scalar_promotion`` and exactly one input a static 0-D tensor: the
      other input's type (when safe: same signedness and no narrower, or signed at least half the unsigned's
      width).
    - signed with unsigned integers: the signed integer of ``max(2 * unsigned width, signed width)`` bits if the
      unsigned has at most 32 bits and (``promote_unsafe`` or twice its width fits the signed); else, only when
      ``promote_unsafe``, ``u64_integer_promotion_target``.
    - same kind and signedness, different widths: the wider one.
    - same width (``promote_unsafe`` only): f8e4m3 with f8e5m2 gives f16, f16 with bf16 gives f32.
    Anything else raises :class:`PromotionError`."""
    if a == DYNAMIC or b == DYNAMIC:
        return DYNAMIC
    if a == b:
        return a
    if a.kind == "bool":
        return b
    if b.kind == "bool":
        return a
    a_real, b_real = a.kind == "float", b.kind == "float"
    if a_real != b_real:
        real, integer = (a, b) if a_real else (b, a)
        if not unsafe and real.bits < 2 * integer.bits:
            raise PromotionError("Integer input cannot be safely promoted to floating-point.")
        return real
    a_scalar = a_shape.dims is not None and len(a_shape.dims) == 0
    b_scalar = b_shape.dims is not None and len(b_shape.dims) == 0
    a_signed, b_signed = a.kind != "uint", b.kind != "uint"
    if pytorch_scalars and a_scalar != b_scalar:
        target, scalar = (b, a) if a_scalar else (a, b)
        target_signed, scalar_signed = target.kind != "uint", scalar.kind != "uint"
        if not unsafe and not ((target_signed == scalar_signed and target.bits >= scalar.bits)
                               or (target_signed and not scalar_signed and 2 * target.bits >= scalar.bits)):
            raise PromotionError("Scalar input cannot be PyTorch-like aligned using safe promotion rules.")
        return target
    if a_signed != b_signed:
        unsigned_bits, signed_bits = (b.bits, a.bits) if a_signed else (a.bits, b.bits)
        if unsigned_bits <= 32 and (unsafe or 2 * unsigned_bits <= signed_bits):
            return ELEMENT_TYPES[f"i{max(2 * unsigned_bits, signed_bits)}"]
        if not unsafe:
            raise PromotionError("Unsigned integer input cannot be safely promoted into any supported signed integer.")
        return u64_target
    if a.bits != b.bits:
        return a if a.bits >= b.bits else b
    if unsafe and {a.name, b.name} == {"f8e4m3", "f8e5m2"}:
        return ELEMENT_TYPES["f16"]
    if unsafe and {a.name, b.name} == {"f16", "bf16"}:
        return ELEMENT_TYPES["f32"]
    raise PromotionError("Unsupported input element types for ConvertPromoteTypes with given attributes.")


def _promotion_attrs(ctx: OpContext) -> dict:
    target = ctx.attr_element_type("u64_integer_promotion_target") if ctx.attr("u64_integer_promotion_target") \
        else ELEMENT_TYPES["f32"]
    return {"unsafe": ctx.attr_bool("promote_unsafe", False),
            "pytorch_scalars": ctx.attr_bool("pytorch_scalar_promotion", False), "u64_target": target}


def _infer_promote(ctx: OpContext):
    a, b = ctx.inputs
    for position, spec in enumerate(ctx.inputs):
        if spec.element_type.name not in _PROMOTABLE:
            ctx.fail(f"ConvertPromoteTypes does not take {spec.element_type}", position=position)
    attrs = _promotion_attrs(ctx)
    try:
        common = promoted_type(a.element_type, a.shape, b.element_type, b.shape, **attrs)
    except PromotionError as error:
        ctx.fail(f"{error} ({a.element_type} and {b.element_type}, promote_unsafe={attrs['unsafe']},"
                 f" pytorch_scalar_promotion={attrs['pytorch_scalars']})",
                 hint=None if attrs["unsafe"] else "promote_unsafe=\"true\" allows lossy promotions")
    if common.kind in ("string", "dynamic") and common != DYNAMIC:
        raise UnsupportedError(f"ConvertPromoteTypes to {common} is not supported", layer=ctx.ref)
    params = dict(attrs, dst=None if common == DYNAMIC else common)
    return [TensorSpec(common, a.shape), TensorSpec(common, b.shape)], params


def convert_promote_types(a, b, *, dst: ElementType | None, unsafe: bool, pytorch_scalars: bool,
                          u64_target: ElementType):
    """Both inputs converted to their common type (Convert-1's rules); new arrays."""
    if dst is None:  # the types were dynamic when inferred: choose from the arrays
        a_type, b_type = element_type_of(a.dtype), element_type_of(b.dtype)
        dst = promoted_type(a_type, PartialShape.of(a.shape), b_type, PartialShape.of(b.shape), unsafe=unsafe,
                            pytorch_scalars=pytorch_scalars, u64_target=u64_target)
    return convert(a, dst=dst), convert(b, dst=dst)


def _fit_through(params, inputs, position: int) -> InputFit:
    return InputFit("through")


def _promote_batch(params, inputs, outputs, axes):
    return list(axes)


OPS = (
    OpDef("ConvertLike", 1, 1, LATEST_OPSET, ("data", "like"), _infer_convert_like, convert_like,
          fit=_fit_through, batch=keep_batch),
    OpDef("ConvertPromoteTypes", 14, 14, LATEST_OPSET, ("input_0", "input_1"), _infer_promote, convert_promote_types,
          attrs=(Attr("promote_unsafe", "false"), Attr("pytorch_scalar_promotion", "false"),
                 Attr("u64_integer_promotion_target", "f32")), fit=_fit_through, batch=_promote_batch),
)
