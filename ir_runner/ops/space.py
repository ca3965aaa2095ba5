"""Space rearrangement: ShuffleChannels-1, DepthToSpace-1 and SpaceToDepth-1 (all ``version="opset1"``).

Pure data movement (a reshape, a transpose, a reshape), bit-exact for every element type.

- ShuffleChannels: ``axis`` (default 1, negative counts from the end) of size C is viewed as
  ``[group, C / group]`` and transposed to ``[C / group, group]``.
- DepthToSpace: ``[N, C, D1..Dk]`` -> ``[N, C / bs**k, D1·bs, .., Dk·bs]``; ``blocks_first`` reads the
  channels as ``[bs, .., bs, C / bs**k]``, ``depth_first`` as ``[C / bs**k, bs, .., bs]``.
- SpaceToDepth: the inverse, ``[N, C, D1..Dk]`` -> ``[N, C·bs**k, D1 / bs, .., Dk / bs]``.
"""

from __future__ import annotations

import numpy as np

from ..types import Dim, PartialShape, TensorSpec
from .api import LATEST_OPSET, Attr, OpContext, OpDef

_MODES = {"blocks_first": "blocks_first", "depth_first": "depth_first"}


def _times(d: Dim, k: int) -> Dim:
    return Dim(d.lo * k, None if d.hi is None else d.hi * k)


def _divided(ctx: OpContext, d: Dim, k: int, what: str) -> Dim:
    if d.is_static:
        if d.lo % k:
            ctx.fail(f"{what} {d.lo} is not divisible by {k}")
        return Dim(d.lo // k, d.lo // k)
    return Dim(-(-d.lo // k), None if d.hi is None else d.hi // k)


# -- ShuffleChannels ---------------------------------------------------------------------------------------


def infer_shuffle(ctx: OpContext):
    data = ctx.inputs[0]
    axis, group = ctx.attr_int("axis", 1), ctx.attr_int("group", 1)
    if group < 1:
        ctx.fail(f"group={group} must be at least 1")
    rank = data.shape.rank
    if rank is not None:
        if rank == 0:
            ctx.fail("data must have rank >= 1")
        if not -rank <= axis < rank:
            ctx.fail(f"axis={axis} is out of the range [{-rank}, {rank - 1}]")
        axis = axis + rank if axis < 0 else axis
        d = data.shape.dims[axis]
        if d.is_static and d.lo % group:
            ctx.fail(f"the channel dim {d.lo} (axis {axis}) is not divisible by group={group}")
    return [TensorSpec(data.element_type, data.shape)], {"axis": axis, "group": group}


def shuffle_channels(data: np.ndarray, *, axis: int, group: int) -> np.ndarray:
    """Channels ``[group, C / group]`` read as ``[C / group, group]`` (exact)."""
    axis = axis + data.ndim if axis < 0 else axis
    shape = data.shape
    viewed = data.reshape(shape[:axis] + (group, shape[axis] // group) + shape[axis + 1:])
    return np.ascontiguousarray(np.swapaxes(viewed, axis, axis + 1)).reshape(shape)


def _shuffle_rule(params, inputs, outputs, axes):
    b = axes[0]
    return "shuffles along the batch axis" if b is not None and b == params["axis"] else [b]


# -- DepthToSpace / SpaceToDepth ---------------------------------------------------------------------------


def _block_params(ctx: OpContext):
    mode = ctx.attr_choice("mode", _MODES, None)
    if mode is None:
        ctx.fail("the attribute mode (blocks_first or depth_first) is required")
    bs = ctx.attr_int("block_size", 1)
    if bs < 1:
        ctx.fail(f"block_size={bs} must be at least 1")
    data = ctx.inputs[0].shape
    if data.rank is not None and data.rank < 3:
        ctx.fail(f"data must have rank >= 3, got {data.brief()}")
    return mode, bs, data


def infer_depth_to_space(ctx: OpContext):
    mode, bs, data = _block_params(ctx)
    shape = data
    if data.dims is not None:
        k = len(data.dims) - 2
        channels = _divided(ctx, data.dims[1], bs ** k, "the channel dim")
        shape = PartialShape(data.dims[:1] + (channels,) + tuple(_times(d, bs) for d in data.dims[2:]))
    return [TensorSpec(ctx.inputs[0].element_type, shape)], {"mode": mode, "block_size": bs}


def infer_space_to_depth(ctx: OpContext):
    mode, bs, data = _block_params(ctx)
    shape = data
    if data.dims is not None:
        k = len(data.dims) - 2
        spatial = tuple(_divided(ctx, d, bs, f"spatial dim {i + 2}") for i, d in enumerate(data.dims[2:]))
        shape = PartialShape(data.dims[:1] + (_times(data.dims[1], bs ** k),) + spatial)
    return [TensorSpec(ctx.inputs[0].element_type, shape)], {"mode": mode, "block_size": bs}


def depth_to_space(data: np.ndarray, *, mode: str, block_size: int) -> np.ndarray:
    """Channels moved into blocks of the spatial dims (exact)."""
    n, c, *spatial = data.shape
    k, bs = len(spatial), block_size
    depth = c // bs ** k
    if mode == "blocks_first":  # channels as [bs]*k + [depth]
        viewed = data.reshape([n] + [bs] * k + [depth] + spatial)
        order = [0, k + 1] + [a for i in range(k) for a in (k + 2 + i, 1 + i)]
    else:  # channels as [depth] + [bs]*k
        viewed = data.reshape([n, depth] + [bs] * k + spatial)
        order = [0, 1] + [a for i in range(k) for a in (k + 2 + i, 2 + i)]
    out_shape = [n, depth] + [d * bs for d in spatial]
    return np.ascontiguousarray(viewed.transpose(order)).reshape(out_shape)


def space_to_depth(data: np.ndarray, *, mode: str, block_size: int) -> np.ndarray:
    """Blocks of the spatial dims moved into the channels (exact)."""
    n, c, *spatial = data.shape
    k, bs = len(spatial), block_size
    split = [n, c] + [a for d in spatial for a in (d // bs, bs)]
    viewed = data.reshape(split)
    blocks = [3 + 2 * i for i in range(k)]
    outer = [2 + 2 * i for i in range(k)]
    order = [0] + blocks + [1] + outer if mode == "blocks_first" else [0, 1] + blocks + outer
    out_shape = [n, c * bs ** k] + [d // bs for d in spatial]
    return np.ascontiguousarray(viewed.transpose(order)).reshape(out_shape)


def _block_rule(params, inputs, outputs, axes):
    b = axes[0]
    return [b] if b in (None, 0) else "moves data across the batch axis"


_BLOCK_ATTRS = (Attr("mode", None, tuple(_MODES)), Attr("block_size", "1"))
OPS = (
    OpDef("ShuffleChannels", 1, 1, LATEST_OPSET, ("data",), infer_shuffle, shuffle_channels,
          attrs=(Attr("axis", "1"), Attr("group", "1")), batch=_shuffle_rule, views=True, absent=(2,)),
    OpDef("DepthToSpace", 1, 1, LATEST_OPSET, ("data",), infer_depth_to_space, depth_to_space, attrs=_BLOCK_ATTRS,
          batch=_block_rule, views=True),
    OpDef("SpaceToDepth", 1, 1, LATEST_OPSET, ("data",), infer_space_to_depth, space_to_depth, attrs=_BLOCK_ATTRS,
          batch=_block_rule, views=True),
)
