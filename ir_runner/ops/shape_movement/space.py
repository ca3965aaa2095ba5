"""Space rearrangement: ShuffleChannels-1, DepthToSpace-1, SpaceToDepth-1 (all ``version="opset1"``) and
ExtractImagePatches-3.

Pure data movement (a reshape, a transpose, a reshape; ExtractImagePatches a gather with zero padding),
bit-exact for every element type.

- ShuffleChannels: ``axis`` (default 1, negative counts from the end) of size C is viewed as
  ``[group, C / group]`` and transposed to ``[C / group, group]``.
- DepthToSpace: ``[N, C, D1..Dk]`` -> ``[N, C / bs**k, D1·bs, .., Dk·bs]``; ``blocks_first`` reads the
  channels as ``[bs, .., bs, C / bs**k]``, ``depth_first`` as ``[C / bs**k, bs, .., bs]``.
- SpaceToDepth: the inverse, ``[N, C, D1..Dk]`` -> ``[N, C·bs**k, D1 / bs, .., Dk / bs]``.
- ExtractImagePatches: ``[N, C, H, W]`` -> ``[N, C·KH·KW, OH, OW]``, each output pixel the ``KH x KW`` patch
  (taps ``rates`` apart) at ``strides``, channels ordered ``(kh, kw, c)`` (see :func:`extract_image_patches`).
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelFormatError
from ...types import Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.axes import normalise_axis
from ..toolkit.dims import dim_div_bounds, dim_mul

_MODES = {"blocks_first": "blocks_first", "depth_first": "depth_first"}


def _divided(ctx: OpContext, d: Dim, k: int, what: str) -> Dim:
    if d.is_static:
        if d.lo % k:
            ctx.fail(f"{what} {d.lo} is not divisible by {k}")
        return Dim(d.lo // k, d.lo // k)
    quotients = dim_div_bounds(d, k)
    if quotients is None:
        ctx.fail(f"{what} {d} holds no multiple of {k}")
    return quotients


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
        axis = normalise_axis(ctx, axis, rank)
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
        shape = PartialShape(data.dims[:1] + (channels,) + tuple(dim_mul(d, bs) for d in data.dims[2:]))
    return [TensorSpec(ctx.inputs[0].element_type, shape)], {"mode": mode, "block_size": bs}


def infer_space_to_depth(ctx: OpContext):
    mode, bs, data = _block_params(ctx)
    shape = data
    if data.dims is not None:
        k = len(data.dims) - 2
        spatial = tuple(_divided(ctx, d, bs, f"spatial dim {i + 2}") for i, d in enumerate(data.dims[2:]))
        shape = PartialShape(data.dims[:1] + (dim_mul(data.dims[1], bs ** k),) + spatial)
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


# -- ExtractImagePatches-3 ---------------------------------------------------------------------------------

_PADS = {"valid": "valid", "same_upper": "same_upper", "same_lower": "same_lower"}


def _patch_count(size: int, k: int, stride: int, rate: int, pad: str) -> int:
    """Patches along one axis, as OpenVINO's shape inference counts them: ``valid`` those that fit,
    ``same_*`` ``ceil(size / stride)`` (0 for an empty axis)."""
    if pad == "valid":
        return max(0, (size - rate * (k - 1) - 1) // stride + 1)
    return max(0, (size - 1) // stride + 1)


def infer_patches(ctx: OpContext):
    params = {}
    for name in ("sizes", "strides", "rates"):
        values = ctx.attr_ints(name)
        if len(values) != 2:
            raise ModelFormatError(f"attribute {ctx.attr_shown(name)} must have two values ([rows, cols])",
                                   layer=ctx.ref)
        if min(values) < 1 or max(values) > 2**31 - 1:
            raise ModelFormatError(f"attribute {ctx.attr_shown(name)} must hold positive int32 values",
                                   layer=ctx.ref, hint="OpenVINO refuses strides and rates below 1; a patch size"
                                   " below 1 gives no patch channels")
        params[name] = tuple(values)
    pad = ctx.attr_choice("auto_pad", _PADS, None)
    if pad is None:
        raise ModelFormatError("the attribute auto_pad (valid, same_upper or same_lower) is required", layer=ctx.ref)
    params["auto_pad"] = pad
    data = ctx.inputs[0]
    if data.shape.rank is not None and data.shape.rank != 4:
        ctx.fail(f"data must be 4-D [N, C, H, W], got {data.shape.brief()}", position=0)
    shape = PartialShape((Dim(0, None),) * 4)  # (a dynamic rank: OpenVINO's [?,?,?,?])
    if data.shape.dims is not None:
        n, c, h, w = data.shape.dims
        spatial = [Dim(_patch_count(d.lo, k, s, r, pad), None if d.hi is None else _patch_count(d.hi, k, s, r, pad))
                   for d, k, s, r in zip((h, w), params["sizes"], params["strides"], params["rates"])]
        shape = PartialShape((n, dim_mul(c, params["sizes"][0] * params["sizes"][1]), *spatial))
    return [TensorSpec(data.element_type, shape)], params


def _patch_pad(size: int, k: int, stride: int, rate: int, pad: str) -> int:
    """The leading padding of one axis, as OpenVINO's reference computes it (none when the total is not in
    ``(0, span)``; an odd total puts the extra element first for same_lower, last for same_upper)."""
    span = k + (rate - 1) * (k - 1)
    total = (-(-size // stride) - 1) * stride + span - size
    if pad == "valid" or not 0 < total < span:
        return 0
    if total % 2 == 0:
        return total // 2
    return (total + 1) // 2 if pad == "same_lower" else (total - 1) // 2


def extract_image_patches(data: np.ndarray, *, sizes: tuple[int, int], strides: tuple[int, int],
                          rates: tuple[int, int], auto_pad: str) -> np.ndarray:
    """ExtractImagePatches-3 as OpenVINO's reference: output ``[n, (kh·KW + kw)·C + c, oh, ow]`` is
    ``data[n, c, oh·SH - PT + kh·RH, ow·SW - PL + kw·RW]``, 0 where that is outside the image (PT, PL: the
    reference's leading padding for ``same_*``, 0 for ``valid``)."""
    n, c, h, w = data.shape
    axes = []
    for size, k, stride, rate in zip((h, w), sizes, strides, rates):
        count = _patch_count(size, k, stride, rate, auto_pad)
        index = (np.arange(count)[:, None] * stride - _patch_pad(size, k, stride, rate, auto_pad)
                 + np.arange(k)[None, :] * rate)
        inside = (index >= 0) & (index < size)
        axes.append((np.where(inside, index, 0), inside))
    (rows, row_in), (cols, col_in) = axes
    oh, ow = rows.shape[0], cols.shape[0]
    out = np.zeros((n, sizes[0], sizes[1], c, oh, ow), data.dtype)
    if out.size == 0:
        return out.reshape(n, sizes[0] * sizes[1] * c, oh, ow)
    gathered = data[:, :, rows[:, :, None, None], cols[None, None, :, :]]  # (N, C, OH, KH, OW, KW)
    inside = row_in[:, :, None, None] & col_in[None, None, :, :]
    np.copyto(out, gathered.transpose(0, 3, 5, 1, 2, 4), where=inside.transpose(1, 3, 0, 2)[:, :, None])
    return out.reshape(n, sizes[0] * sizes[1] * c, oh, ow)


_BLOCK_ATTRS = (Attr("mode", None, tuple(_MODES)), Attr("block_size", "1"))
OPS = (
    OpDef("ShuffleChannels", 1, 1, LATEST_OPSET, ("data",), infer_shuffle, shuffle_channels,
          attrs=(Attr("axis", "1"), Attr("group", "1")), batch=_shuffle_rule, views=True, absent=(2,)),
    OpDef("DepthToSpace", 1, 1, LATEST_OPSET, ("data",), infer_depth_to_space, depth_to_space, attrs=_BLOCK_ATTRS,
          batch=_block_rule, views=True),
    OpDef("SpaceToDepth", 1, 1, LATEST_OPSET, ("data",), infer_space_to_depth, space_to_depth, attrs=_BLOCK_ATTRS,
          batch=_block_rule, views=True),
    OpDef("ExtractImagePatches", 3, 3, LATEST_OPSET, ("data",), infer_patches, extract_image_patches,
          attrs=(Attr("sizes"), Attr("strides"), Attr("rates"), Attr("auto_pad", None, tuple(_PADS))),
          batch=_block_rule),
)
