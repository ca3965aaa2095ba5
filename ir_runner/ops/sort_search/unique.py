"""Unique-10 (``docs/semantics.md``, "Unique"): the distinct elements of ``data`` (flattened, or its slices
along ``axis``) and four outputs: the unique elements (or slices), the index of each one's first occurrence,
for each input element (or slice) the position of its unique in the first output, and the count of each.

As OpenVINO's reference (``find_unique_elements``): with ``sorted`` the uniques ascend (slices compared
element by element in row-major order, the first difference deciding), ties kept in input order (its
``std::stable_sort``), so each unique is its first occurrence (``-0.0`` and ``0.0`` are equal: the one seen
first is kept); without ``sorted`` they come in the order of their first occurrence. Equality is ``==``: a
NaN equals nothing, so without ``sorted`` every NaN (every slice holding one) is a unique of its own. With
``sorted``, NaN makes the reference's comparison no order (its results depend on the sort's internals; the
CPU plugin's are inconsistent too): refused (``InputError``). Index outputs are ``index_element_type``
(i32/i64), counts ``count_element_type`` (i64/i32). Bit-exact (integers, and the input's own elements).

Shapes depend on the values: at load they are what OpenVINO infers (``[1..elements]`` or dynamic, the
axis dim ``1..dim``; exact for a constant input), and ``data`` has the deciding role ``counted``, so the plan
is made per value and the outputs are concrete at run (computed once: those inference computed are handed to
the kernel, ``toolkit/handover.py``). An empty input gives empty outputs (OpenVINO's
reference reads the first element of an empty list there; the CPU plugin fails). Compared with OpenVINO's
CPU plugin (the reference has no ``Node.evaluate`` for Unique); the plugin computes i64/u64 data in i32,
wrapping values beyond it (ir-run keeps them).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec, element_type
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.axes import scalar_axis
from ..toolkit.handover import computed_once, outputs_from_constants

INDEX_TYPES = {"i32": "i32", "i64": "i64"}


def _infer(ctx: OpContext):
    data = ctx.inputs[0]
    et = data.element_type
    if et.kind not in ("int", "uint", "float", "bool", "dynamic") or (et.kind != "dynamic" and et.bits < 8):
        ctx.fail(f"data must be a number or boolean type of 8 bits or more, got {et}", position=0)
    rank = data.shape.rank
    axis = None
    if len(ctx.inputs) > 1:
        spec = ctx.inputs[1]
        if spec.element_type.kind != "dynamic" and spec.element_type.name not in ("i32", "i64"):
            ctx.fail(f"axis must be i32 or i64, got {spec.element_type}", position=1)
        axis = scalar_axis(ctx, 1, rank)
        if axis is None:
            ctx.fail("axis must be a constant (OpenVINO requires a Constant there)", position=1)
    params = {"sorted": ctx.attr_bool("sorted", True), "axis": axis,
              "index_type": ctx.attr_choice("index_element_type", INDEX_TYPES, "i64"),
              "count_type": ctx.attr_choice("count_element_type", INDEX_TYPES, "i64")}
    types = (et, element_type(params["index_type"]), element_type(params["index_type"]),
             element_type(params["count_type"]))
    try:
        outs = outputs_from_constants(ctx, KERNEL, params)  # (the plan per value: computed once, here)
    except InputError as error:
        ctx.fail(error.detail, position=0)
    if outs is not None:
        return [TensorSpec(t, PartialShape.of(o.shape)) for t, o in zip(types, outs)], params
    return [TensorSpec(t, s) for t, s in zip(types, _shapes(data.shape, axis))], params


def _shapes(shape: PartialShape, axis: int | None) -> list[PartialShape]:
    """The four output shapes as OpenVINO infers them for a non-constant input."""
    capacity = None
    if shape.dims is not None and all(d.is_static for d in shape.dims):
        capacity = int(np.prod([d.lo for d in shape.dims], dtype=np.int64))
    some = Dim(1, capacity) if capacity else DYNAMIC_DIM
    first, counted, every = DYNAMIC_SHAPE, PartialShape((some,)), PartialShape((Dim(capacity, capacity)
                                                                               if capacity else DYNAMIC_DIM,))
    if axis is None:
        first = PartialShape((some,))
    elif shape.dims is not None:
        dims = list(shape.dims)
        dim = dims[axis]
        if dim == DYNAMIC_DIM:
            out, rows = dim, dim
        elif not dim.is_static:
            out, rows = Dim(1, dim.hi), dim
        elif dim.lo == 0:
            out, rows = dim, dim
            counted = PartialShape((Dim(0, 0),))
        else:
            out, rows = Dim(1, dim.lo), dim
        dims[axis] = out
        first, every = PartialShape(tuple(dims)), PartialShape((rows,))
    return [first, counted, every, counted]


def _keys(rows: np.ndarray) -> np.ndarray:
    """Rows as numpy compares them like the reference's ``<`` and ``==`` (bool as 0/1, floats exactly widened)."""
    if rows.dtype == np.bool_:
        return rows.view(np.uint8)
    if rows.dtype.kind == "f" or rows.dtype.kind == "V" or rows.dtype.name in ("bfloat16",):
        return rows.astype(np.float64)
    return rows


def unique(data: np.ndarray, *axis_input: np.ndarray, sorted: bool, axis: int | None, index_type: str,
           count_type: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(uniques, first indices, reverse indices, counts) as OpenVINO's reference (see the module docstring)."""
    itype = np.int32 if index_type == "i32" else np.int64
    ctype = np.int32 if count_type == "i32" else np.int64
    if axis is None:
        rows = data.reshape(-1, 1)
    else:
        rest = int(np.prod(data.shape, dtype=np.int64)) // data.shape[axis] if data.shape[axis] else 0
        rows = np.moveaxis(data, axis, 0).reshape(data.shape[axis], rest)
    n = rows.shape[0]
    keys = _keys(rows)
    if sorted and keys.dtype.kind == "f" and np.isnan(keys).any():
        raise InputError("data holds NaN: with sorted=true OpenVINO's reference compares with '<', which NaN makes"
                         " no order (its results are undefined)", port="input 0 (data)",
                         hint="use sorted=false (each NaN is then a unique of its own)")
    if n == 0:
        first = data.reshape(0) if axis is None else data.copy()
        empty = np.zeros(0, itype)
        return first, empty, empty.copy(), np.zeros(0, ctype)
    order = np.lexsort(keys.T[::-1]) if keys.shape[1] else np.arange(n)
    ordered = keys[order]
    with np.errstate(invalid="ignore"):
        new = np.ones(n, dtype=bool)
        new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    group = np.empty(n, np.int64)
    group[order] = np.cumsum(new) - 1
    firsts = order[starts]  # the lowest index of each group: lexsort is stable
    counts = np.diff(np.append(starts, n))
    if sorted:
        rank = np.arange(starts.size)
    else:
        by_first = np.argsort(firsts, kind="stable")
        rank = np.empty(starts.size, np.int64)
        rank[by_first] = np.arange(starts.size)
        firsts, counts = firsts[by_first], counts[by_first]
    values = data.reshape(-1)[firsts] if axis is None else np.take(data, firsts, axis=axis)
    return values, firsts.astype(itype), rank[group].astype(itype), counts.astype(ctype)


KERNEL = computed_once(unique)


def _batch(params, inputs, outputs, axes):
    return "compares all the elements (or slices) of data with each other: the uniques of a chunk are not those"\
           " of the whole"


OPS = (
    OpDef("Unique", 10, 10, LATEST_OPSET, ("data", "axis"), _infer, KERNEL, roles=("counted", "axis"), min_inputs=1,
          batch=_batch, attrs=(Attr("sorted", "true", ("true", "false")),
                               Attr("index_element_type", "i64", tuple(INDEX_TYPES)),
                               Attr("count_element_type", "i64", tuple(INDEX_TYPES)))),
)
