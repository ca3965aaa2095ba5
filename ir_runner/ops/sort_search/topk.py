"""TopK-1/3/11 (``docs/semantics.md``, "Selection").

The ``k`` largest (``mode='max'``) or smallest elements along ``axis``, ties broken by the lower index
(OpenVINO's reference orders by value, then index), as ``sort='value'`` (that order), ``'index'`` (by index)
or ``'none'`` (the order in which the reference's ``std::nth_element``, libstdc++'s introselect, leaves
them: emulated exactly, row by row in Python, so it is slow on long rows). ``stable`` (TopK-11) changes
nothing: the reference's order is already stable. Refused where the reference is undefined: NaN in the
data (its comparison is then no order) and ``k`` above the axis length (it reads past its buffer). ``k=0``
gives an empty output, as inference declares (the reference's ``evaluate`` returns the whole axis
there). A ``k`` computed at run time makes the output dim ``k.lo..min(k.hi, dim.hi)`` at load and concrete
at run (``k`` decides the plan). Bit-exact. A small k (4k < axis) partitions instead of sorting whole rows
([1000,1000], k=10: 169 -> 47 ms; OpenVINO's CPU plugin 10 ms).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec, element_type
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef
from ..toolkit.axes import normalise_axis
from ..toolkit.index_rules import require_integer
from ..toolkit.numeric import as_compute
from ..toolkit.partial import const_count
from ..toolkit.stl_order import introselect

# -- TopK-1/3/11 ---------------------------------------------------------------------------------------

MODES = {"max": "max", "min": "min"}
SORTS = {"value": "value", "index": "index", "none": "none"}


def infer_topk(ctx: OpContext, version: int):
    data, k_spec = ctx.inputs
    require_integer(ctx, 1, "k")
    if k_spec.shape.rank not in (None, 0):
        ctx.fail(f"k must be a scalar, got {k_spec.shape.brief()}", position=1)
    mode = ctx.attr_choice("mode", MODES, None)
    sort = ctx.attr_choice("sort", SORTS, None)
    if mode is None or sort is None:
        ctx.fail("the attributes 'mode' (max or min) and 'sort' (value, index or none) are required")
    stable = ctx.attr_bool("stable", False) if version >= 11 else False
    if stable and sort == "none":
        ctx.fail("stable=true needs sort='value' or 'index'")
    index_type = ctx.attr_choice("index_element_type", {"i32": "i32", "i64": "i64"}, "i32")
    if data.shape.rank == 0:
        ctx.fail("data must have at least one axis", position=0)
    axis = ctx.attr_int("axis", 0)
    axis = normalise_axis(ctx, axis, data.shape.rank)
    k = const_count(ctx, 1)
    params = {"axis": axis, "k": k, "mode": mode, "sort": sort, "index_type": index_type}
    if data.shape.dims is None:
        shape = DYNAMIC_SHAPE
    else:
        dims = list(data.shape.dims)
        dim = dims[axis]
        if k is not None:
            if dim.is_static and k > dim.lo:
                ctx.fail(f"k={k} is above the {dim.lo} elements of axis {axis} (OpenVINO's reference reads past its"
                         " buffer)", position=1)
            dims[axis] = Dim(k, k)
        else:
            partial = ctx.partial_value(1)
            bound = partial[0] if partial is not None and len(partial) == 1 else DYNAMIC_DIM
            hi = bound.hi if dim.hi is None else dim.hi if bound.hi is None else min(bound.hi, dim.hi)
            dims[axis] = Dim(max(bound.lo, 0), hi)
        shape = PartialShape(tuple(dims))
    return [TensorSpec(data.element_type, shape), TensorSpec(element_type(index_type), shape)], params


def topk(data: np.ndarray, k_input: np.ndarray, *, axis: int, k: int, mode: str, sort: str,
         index_type: str) -> tuple[np.ndarray, np.ndarray]:
    """The values and indices of the top ``k`` elements along ``axis`` (``k`` was resolved by inference)."""
    dim = data.shape[axis]
    if k > dim:
        raise InputError(f"k={k} is above the {dim} elements of axis {axis} (OpenVINO's reference reads past its"
                         " buffer)", port="input 1 (k)")
    if data.dtype.kind == "f" or data.dtype.kind == "V":
        if np.isnan(as_compute(data)).any():
            raise InputError("NaN in the data: OpenVINO's reference has no defined order for it (std::nth_element"
                             " with a comparison that is no order)", port="input 0 (data)",
                             hint="replace NaN before the TopK")
    rows = np.moveaxis(data, axis, -1)
    if k == 0 or rows.size == 0:
        order = np.zeros(rows.shape[:-1] + (k,), dtype=np.int64)
    elif sort == "none" and k == dim:  # nth_element(begin, end, end) leaves the row as it is
        order = np.broadcast_to(np.arange(dim), rows.shape)
    elif sort == "none":
        order = _nth_element_order(_ordered(rows, mode), k)
    else:
        order = _ordered(rows, mode)[..., :k] if 4 * k >= dim else _top(rows, k, mode)
        if sort == "index":
            order = np.sort(order, axis=-1)
    values = np.take_along_axis(rows, order, axis=-1)
    itype = np.int32 if index_type == "i32" else np.int64
    return (np.ascontiguousarray(np.moveaxis(values, -1, axis)),
            np.ascontiguousarray(np.moveaxis(order.astype(itype), -1, axis)))


def _ordered(rows: np.ndarray, mode: str) -> np.ndarray:
    """Per row, the positions ordered by value (descending for max, ascending for min), ties by position."""
    if mode == "min":
        return np.argsort(rows, axis=-1, kind="stable")
    n = rows.shape[-1]
    return (n - 1 - np.argsort(rows[..., ::-1], axis=-1, kind="stable"))[..., ::-1]


def _top(rows: np.ndarray, k: int, mode: str) -> np.ndarray:
    """The first ``k`` of :func:`_ordered` without sorting whole rows: the k-th value by partition, every element
    beyond it, the lowest-indexed ones equal to it, then those k sorted (for small k)."""
    n = rows.shape[-1]
    flat = rows.reshape(-1, n)
    if mode == "max":
        kth = np.partition(flat, n - k, axis=-1)[:, n - k:n - k + 1]
        beyond = flat > kth
    else:
        kth = np.partition(flat, k - 1, axis=-1)[:, k - 1:k]
        beyond = flat < kth
    ties = flat == kth
    needed = k - beyond.sum(axis=-1, keepdims=True)
    chosen = beyond | (ties & (np.cumsum(ties, axis=-1) <= needed))
    positions = np.nonzero(chosen)[1].reshape(-1, k)  # row by row, ascending positions
    picked = np.take_along_axis(flat, positions, axis=-1)
    order = np.take_along_axis(positions, _ordered(picked, mode), axis=-1)
    return order.reshape(rows.shape[:-1] + (k,))


def _nth_element_order(order: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` positions as libstdc++'s ``std::nth_element(begin, begin + k, end, cmp)`` leaves them,
    ``cmp`` ordering by value then position (a strict total order: the rank in ``order`` stands for it)."""
    n = order.shape[-1]
    flat_rank = np.empty(order.shape, dtype=np.int64)
    np.put_along_axis(flat_rank, order, np.broadcast_to(np.arange(n), order.shape), axis=-1)
    result = np.empty(order.shape[:-1] + (k,), dtype=np.int64)
    flat_in = flat_rank.reshape(-1, n)
    flat_out = result.reshape(-1, k)
    for r in range(flat_in.shape[0]):
        ranks = flat_in[r].tolist()  # element i of the row has rank ranks[i]; workspace holds positions
        work = list(range(n))
        introselect(work, k, lambda a, b, ranks=ranks: ranks[a] < ranks[b])
        flat_out[r] = work[:k]
    return result


def _batch_rows(params, inputs, outputs, axes):
    """The batch axis passes through unless TopK works along it."""
    axis = axes[0]
    if axis is None or axes[1] is not None:
        return "k or data carry no batch axis"
    if axis == params["axis"]:
        return "selects along the batch axis"
    return [axis, axis]


def _fit_k(params, inputs, position: int) -> InputFit | None:
    """A generated k in ``[0, dim]`` of the axis."""
    dims, axis = inputs[0].shape.dims, params.get("axis")
    if position != 1 or dims is None or axis is None or not dims[axis].is_static:
        return None
    return InputFit("index", 0, dims[axis].lo, f"axis {axis} has {dims[axis].lo}")


_TOPK_ATTRS = (Attr("axis"), Attr("mode", None, tuple(MODES)), Attr("sort", None, tuple(SORTS)),
               Attr("index_element_type", "i32", ("i32", "i64")))
OPS = (
    OpDef("TopK", 1, 1, 2, ("data", "k"), lambda ctx: infer_topk(ctx, 1), topk, attrs=_TOPK_ATTRS,
          batch=_batch_rows, fit=_fit_k),
    OpDef("TopK", 3, 3, 10, ("data", "k"), lambda ctx: infer_topk(ctx, 3), topk, attrs=_TOPK_ATTRS,
          batch=_batch_rows, fit=_fit_k),
    OpDef("TopK", 11, 11, LATEST_OPSET, ("data", "k"), lambda ctx: infer_topk(ctx, 11), topk,
          attrs=_TOPK_ATTRS + (Attr("stable", "false", ("true", "false")),), batch=_batch_rows, fit=_fit_k),
)
