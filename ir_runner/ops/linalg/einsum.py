"""Einsum-7: sums of products over labelled axes, ``equation`` as numpy's (``docs/semantics.md``, "Einsum").

The equation is ``in1,in2,...->out`` (spaces ignored) with letter labels (case matters) and at most one
``...`` per subscript standing for the broadcast (numpy-style) leading or middle axes. A label repeated in
one input takes its diagonal; labels missing from the output are summed. Without ``->`` the output is the
ellipsis, then the labels that appear once, in alphabetical (ASCII) order. Dims sharing a label in one
input must be equal (a diagonal); across inputs they broadcast (a 1 against n gives n, as in numpy and
OpenVINO 2026's inference), as ellipsis dims do; the labels of an
input of unknown rank have unknown dims unless another input gives them.

Not bit-exact (``exact=False``): the reference transposes, reduces and multiplies with its own loops, and
ir-run contracts with numpy (BLAS), so the summation order differs. Bound: for a contraction over K
products, ``|got - want| <= 2·K·eps·sum|a·b|`` (eps of the element type; f16/bf16 are computed in f32 and
rounded once, the reference accumulates in them: the difference stays within the reference's own K·eps
error). Integer einsum wraps as the reference does and is exact.
"""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec, broadcast_dims, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.numeric import is_narrow_float

ELLIPSIS = "..."


def parse_equation(equation: str, inputs: int) -> tuple[list[list[str]], list[str]] | str:
    """The labels of each input and of the output (``...`` one label), or a message saying what is wrong."""
    text = equation.replace(" ", "")
    if text.count("->") > 1:
        return "more than one '->'"
    left, arrow, right = text.partition("->")
    parts = left.split(",")
    if len(parts) != inputs:
        return f"{len(parts)} input subscript(s) for {inputs} input(s)"
    subscripts = []
    for part in parts:
        labels = _labels(part)
        if isinstance(labels, str):
            return labels
        subscripts.append(labels)
    if arrow:
        output = _labels(right)
        if isinstance(output, str):
            return output
        if len(set(output)) != len(output):
            return f"the output subscript '{right}' repeats a label"
        known = {label for labels in subscripts for label in labels}
        missing = [label for label in output if label not in known]
        if missing:
            return f"output label(s) {', '.join(missing)} appear in no input"
    else:
        counts: dict[str, int] = {}
        for labels in subscripts:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        output = ([ELLIPSIS] if ELLIPSIS in counts else []) + sorted(
            label for label, n in counts.items() if n == 1 and label != ELLIPSIS)
    return subscripts, output


def _labels(subscript: str) -> list[str] | str:
    if subscript.count(ELLIPSIS) > 1 or subscript.replace(ELLIPSIS, "").count("."):
        return f"the subscript '{subscript}' has a malformed or repeated ellipsis"
    head, dots, tail = subscript.partition(ELLIPSIS)
    for char in head + tail:
        if not (char.isascii() and char.isalpha()):
            return f"the subscript '{subscript}' has a label that is not a letter: {char!r}"
    return list(head) + ([ELLIPSIS] if dots else []) + list(tail)


def infer_einsum(ctx: OpContext):
    equation = ctx.attr("equation")
    if equation is None:
        ctx.fail("the required attribute 'equation' is missing")
    parsed = parse_equation(equation, len(ctx.inputs))
    if isinstance(parsed, str):
        ctx.fail(f"equation {equation!r}: {parsed}")
    subscripts, output = parsed
    types = {spec.element_type for spec in ctx.inputs if spec.element_type.kind != "dynamic"}
    if len(types) > 1:
        ctx.fail(f"all inputs must have the same element type, got {', '.join(sorted(map(str, types)))}")
    et = next(iter(types)) if types else ctx.inputs[0].element_type
    params = {"equation": equation.replace(" ", "")}
    label_dims: dict[str, Dim] = {}
    ellipsis: list[Dim] | None = []
    for position, (spec, labels) in enumerate(zip(ctx.inputs, subscripts)):
        dims = spec.shape.dims
        if dims is None:  # its labels' dims are unknown unless another input has them
            if ELLIPSIS in labels:
                ellipsis = None
            for label in labels:
                label_dims.setdefault(label, DYNAMIC_DIM)
            continue
        fixed = len(labels) - (ELLIPSIS in labels)
        if len(dims) != fixed and (ELLIPSIS not in labels or len(dims) < fixed):
            ctx.fail(f"input {position} {spec.shape.brief()} does not fit the subscript '{''.join(labels)}'",
                     position=position)
        at = labels.index(ELLIPSIS) if ELLIPSIS in labels else len(labels)
        n_ellipsis = len(dims) - fixed
        own = dims[at:at + n_ellipsis]
        if ellipsis is not None and ELLIPSIS in labels:
            ellipsis = _broadcast(ctx, ellipsis, list(own))
        own_dims: dict[str, Dim] = {}  # a label repeated within one input: its dims merge (a diagonal)
        for label, dim in zip(labels[:at] + labels[at + 1:], dims[:at] + dims[at + n_ellipsis:]):
            merged = merge_dims(own_dims.get(label, dim), dim)
            if merged is None:
                ctx.fail(f"dims labelled '{label}' differ ({own_dims[label]} and {dim})", position=position)
            own_dims[label] = merged
        for label, dim in own_dims.items():  # across inputs they broadcast (as OpenVINO 2026 and numpy)
            merged = broadcast_dims(label_dims.get(label, dim), dim)
            if merged is None:
                ctx.fail(f"dims labelled '{label}' differ ({label_dims[label]} and {dim})", position=position)
            label_dims[label] = merged
    out = []
    for label in output:
        if label == ELLIPSIS:
            if ellipsis is None:
                return [TensorSpec(et, DYNAMIC_SHAPE)], params
            out.extend(ellipsis)
        elif label not in label_dims:
            return [TensorSpec(et, DYNAMIC_SHAPE)], params
        else:
            out.append(label_dims[label])
    return [TensorSpec(et, PartialShape(tuple(out)))], params


def _broadcast(ctx: OpContext, a: list[Dim], b: list[Dim]) -> list[Dim]:
    rank = max(len(a), len(b))
    one = Dim(1, 1)
    a, b = [one] * (rank - len(a)) + a, [one] * (rank - len(b)) + b
    result = [broadcast_dims(x, y) for x, y in zip(a, b)]
    if None in result:
        ctx.fail("the dims under '...' do not broadcast together")
    return result


def einsum(*operands: np.ndarray, equation: str) -> np.ndarray:
    """numpy's einsum (BLAS contractions); f16/bf16 computed in f32 and rounded once."""
    dtype = operands[0].dtype
    if is_narrow_float(dtype):
        wide = [op.astype(np.float32) for op in operands]
        return np.asarray(np.einsum(equation, *wide, optimize=True)).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array(np.einsum(equation, *operands, optimize=len(operands) > 1), dtype=dtype, copy=True)


OPS = (
    OpDef("Einsum", 7, 7, LATEST_OPSET, ("inputs",), infer_einsum, einsum, attrs=(Attr("equation"),),
          variadic=True, exact=False),
)
