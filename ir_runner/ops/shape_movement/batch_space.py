"""Blocks between the batch and the spatial axes: SpaceToBatch-2 and BatchToSpace-2 (``version="opset2"``).

Pure data movement, bit-exact for every element type (compared with the reference, ``Node.evaluate``).

- SpaceToBatch: ``data`` ``[N, D1..Dk]`` padded with zeros by ``pads_begin``/``pads_end``, each padded
  ``Di`` split into ``[Di / bi, bi]``, the block offsets moved in front of the batch:
  ``[N · prod(b), (D1 + pads) / b1, ..]``.
- BatchToSpace: the inverse, ``[N, D1..Dk]`` -> ``[N / prod(b), D1 · b1 - crops1, ..]``: the batch read as
  ``[b1, .., bk, N / prod(b)]``, interleaved into the spatial axes, then cropped.

``block_shape``, the pads and the crops are 1-D integer tensors with one element per data axis. Element 0
(the batch axis) must be a block of 1 with no pad or crop: OpenVINO's inference counts such a block in the
batch but its reference kernel then reads outside its buffers (and crashes), so ir-run refuses it (an
InferenceError naming the input). When they are not constant the rank is inferred with dynamic dims (as
OpenVINO; its bounds where the crops or pads are known) and the plan is made per value.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, OpContext, OpDef, equal_merge
from ..toolkit.dims import dim_div_bounds, dim_mul

_NAMES = {"SpaceToBatch": ("block_shape", "pads_begin", "pads_end"),
          "BatchToSpace": ("block_shape", "crops_begin", "crops_end")}


def _check_values(kind: str, block, begin, end, fail) -> None:
    """The checks OpenVINO makes on the values (``fail(detail, position)`` raises), plus the batch-axis one."""
    names = _NAMES[kind]
    for position, values in ((1, block), (2, begin), (3, end)):
        if len(values) != len(block):
            fail(f"{names[position - 1]} has {len(values)} elements, block_shape {len(block)}", position)
    bad = [int(v) for v in block if v < 1]
    if bad:
        fail(f"block_shape values must be at least 1, got {bad}", 1)
    for position, values in ((2, begin), (3, end)):
        if any(v < 0 for v in values):
            fail(f"{names[position - 1]} values must not be negative, got {list(map(int, values))}", position)
    if len(block) and (block[0] != 1 or begin[0] != 0 or end[0] != 0):
        fail(f"the batch axis (element 0) must have block 1 and no {names[1].split('_')[0]}, got block"
             f" {int(block[0])}, {int(begin[0])} and {int(end[0])} (OpenVINO's reference reads out of bounds"
             " there)", 1 if block[0] != 1 else 2)


def _infer(kind: str):
    def infer(ctx: OpContext):
        data = ctx.inputs[0]
        vectors = [ctx.inputs[i].shape for i in (1, 2, 3)]
        merged = vectors[1]
        for position, shape in ((3, vectors[2]), (1, vectors[0])):
            merged = equal_merge(merged, shape)
            if merged is None:
                ctx.fail(f"{', '.join(_NAMES[kind])} must have one shape", position=position)
        if merged.rank not in (None, 1):
            ctx.fail(f"{_NAMES[kind][0]} and the {_NAMES[kind][1].split('_')[0]}s must be 1-D, got"
                     f" {merged.brief()}", position=1)
        for position in (1, 2, 3):
            if ctx.inputs[position].element_type.kind not in ("int", "uint", "dynamic"):
                ctx.fail(f"{_NAMES[kind][position - 1]} must have an integer type, got"
                         f" {ctx.inputs[position].element_type}", position=position)
        rank = data.shape.rank
        if rank is None:
            return [TensorSpec(data.element_type, data.shape)], {}
        if rank < 2:
            ctx.fail(f"data must have rank 2 or more, got {data.shape.brief()}", position=0)
        if merged.is_static and merged.dims[0].lo != rank:
            ctx.fail(f"{_NAMES[kind][0]} and the {_NAMES[kind][1].split('_')[0]}s must have {rank} elements (the"
                     f" data's rank), got {merged.dims[0].lo}", position=1)
        values = [ctx.const_value(i) for i in (1, 2, 3)]
        dims = data.shape.dims
        if any(v is None for v in values):
            sides = values[1:] if all(v is not None for v in values[1:]) else None
            return [TensorSpec(data.element_type, _unknown_block(kind, dims, sides))], {}
        block, begin, end = (v.reshape(-1).astype(np.int64).tolist() for v in values)

        def fail(detail: str, position: int):
            ctx.fail(detail, position=position)

        _check_values(kind, block, begin, end, fail)
        product = math.prod(block)
        if kind == "SpaceToBatch":
            out = [dim_mul(dims[0], product)]
            for i in range(1, rank):
                out.append(_divide(ctx, _plus(dims[i], begin[i] + end[i]), block[i], f"padded dim {i}"))
        else:
            out = [_divide(ctx, dims[0], product, "the batch dim")]
            for i in range(1, rank):
                scaled, crop = dim_mul(dims[i], block[i]), begin[i] + end[i]
                if scaled.is_static and crop > scaled.lo:
                    ctx.fail(f"crops {begin[i]} + {end[i]} exceed block {block[i]} times dim {i} ({dims[i].lo})",
                             position=2)
                out.append(_plus(scaled, -crop))
        return [TensorSpec(data.element_type, PartialShape(tuple(out)))], {}

    return infer


def _unknown_block(kind: str, dims: tuple[Dim, ...], sides) -> PartialShape:
    """The shape when the block is not constant: every dim dynamic, except that BatchToSpace keeps a lower
    bound ``dim - crops`` where the crops are known (as OpenVINO)."""
    if kind == "SpaceToBatch" or sides is None:
        return PartialShape((DYNAMIC_DIM,) * len(dims))
    begin, end = (s.reshape(-1).astype(np.int64).tolist() for s in sides)
    if len(begin) != len(dims) or len(end) != len(dims):
        return PartialShape((DYNAMIC_DIM,) * len(dims))
    return PartialShape((DYNAMIC_DIM,) + tuple(
        DYNAMIC_DIM if d == DYNAMIC_DIM else Dim(max(d.lo - begin[i] - end[i], 0), None)
        for i, d in enumerate(dims) if i))


def _plus(d: Dim, k: int) -> Dim:
    return Dim(max(d.lo + k, 0), None if d.hi is None else max(d.hi + k, 0))


def _divide(ctx: OpContext, d: Dim, k: int, what: str) -> Dim:
    if d.is_static:
        if d.lo % k:
            ctx.fail(f"{what} ({d.lo}) is not a multiple of {k}", position=0)
        return Dim(d.lo // k, d.lo // k)
    quotients = dim_div_bounds(d, k)
    if quotients is None:
        ctx.fail(f"{what} ({d}) holds no multiple of {k}", position=0)
    return quotients


def _values(kind: str, block: np.ndarray, begin: np.ndarray, end: np.ndarray, ndim: int):
    block, begin, end = (v.reshape(-1).astype(np.int64).tolist() for v in (block, begin, end))

    def fail(detail: str, position: int):
        raise InputError(f"{kind}: {detail}", port=f"input {position} ({_NAMES[kind][position - 1]})")

    if len(block) != ndim:
        fail(f"block_shape has {len(block)} elements, the data's rank is {ndim}", 1)
    _check_values(kind, block, begin, end, fail)
    return block, begin, end


def space_to_batch(data: np.ndarray, block_shape: np.ndarray, pads_begin: np.ndarray,
                   pads_end: np.ndarray) -> np.ndarray:
    """SpaceToBatch-2 (exact): zero padding, then the spatial blocks moved in front of the batch."""
    block, begin, end = _values("SpaceToBatch", block_shape, pads_begin, pads_end, data.ndim)
    padded_shape = [d + b + e for d, b, e in zip(data.shape, begin, end)]
    for i in range(1, data.ndim):
        if padded_shape[i] % block[i]:
            raise InputError(f"SpaceToBatch: padded dim {i} ({padded_shape[i]}) is not a multiple of block"
                             f" {block[i]}", port="input 0 (data)")
    padded = np.zeros(padded_shape, data.dtype)
    padded[tuple(slice(b, b + d) for b, d in zip(begin, data.shape))] = data
    k = data.ndim - 1
    split = [data.shape[0]] + [a for i in range(1, data.ndim) for a in (padded_shape[i] // block[i], block[i])]
    order = [2 + 2 * i for i in range(k)] + [0] + [1 + 2 * i for i in range(k)]
    out_shape = [data.shape[0] * math.prod(block)] + [padded_shape[i] // block[i] for i in range(1, data.ndim)]
    return np.ascontiguousarray(padded.reshape(split).transpose(order)).reshape(out_shape)


def batch_to_space(data: np.ndarray, block_shape: np.ndarray, crops_begin: np.ndarray,
                   crops_end: np.ndarray) -> np.ndarray:
    """BatchToSpace-2 (exact): the batch read as blocks interleaved into the spatial axes, then cropped."""
    block, begin, end = _values("BatchToSpace", block_shape, crops_begin, crops_end, data.ndim)
    product = math.prod(block)
    if data.shape[0] % product:
        raise InputError(f"BatchToSpace: the batch dim ({data.shape[0]}) is not a multiple of {product}",
                         port="input 0 (data)")
    k, spatial = data.ndim - 1, data.shape[1:]
    for i in range(1, data.ndim):
        if begin[i] + end[i] > data.shape[i] * block[i]:
            raise InputError(f"BatchToSpace: crops {begin[i]} + {end[i]} exceed block {block[i]} times dim {i}"
                             f" ({data.shape[i]})", port="input 2 (crops_begin)")
    viewed = data.reshape(block[1:] + [data.shape[0] // product] + list(spatial))
    order = [k] + [a for i in range(k) for a in (k + 1 + i, i)]
    full = viewed.transpose(order).reshape([data.shape[0] // product] + [d * b for d, b in zip(spatial, block[1:])])
    window = (slice(None),) + tuple(slice(begin[i], full.shape[i] - end[i]) for i in range(1, data.ndim))
    return np.ascontiguousarray(full[window])


def _batch_rule(params, inputs, outputs, axes):
    if any(axis is not None for axis in axes[1:]):
        return "a block, pad or crop input has a batch axis"
    if axes[0] is None:
        return [None]
    return "moves rows between the batch axis and the spatial axes (block offsets interleave with the batch)"


_ROLES = ("data", "shape", "pads", "pads")
OPS = (
    OpDef("SpaceToBatch", 2, 2, LATEST_OPSET, ("data",) + _NAMES["SpaceToBatch"], _infer("SpaceToBatch"),
          space_to_batch, roles=_ROLES, batch=_batch_rule),
    OpDef("BatchToSpace", 2, 2, LATEST_OPSET, ("data",) + _NAMES["BatchToSpace"], _infer("BatchToSpace"),
          batch_to_space, roles=_ROLES, batch=_batch_rule),
)
