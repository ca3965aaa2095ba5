"""Col2Im-15 (torch's ``fold``): sums sliding-window columns back into an image.

``data`` is [N, C * kh * kw, L] (or [C * kh * kw, L] without a batch), ``output_size`` is [H, W] and
``kernel_size`` [kh, kw] (1-D, i32 or i64); the output is [N, C, H, W] (or [C, H, W]). Column ``(c, i, j)``,
block ``(bh, bw)`` adds to pixel ``(bh * sh - pad_h + i * dh, bw * sw - pad_w + j * dw)`` when it is inside
the image; L must be ``Lh * Lw`` with ``Lh = (H + pads_h - dh * (kh - 1) - 1) // sh + 1`` (and Lw alike).

Overlapping windows are summed as OpenVINO's reference (``ov::reference::col2im``, which the CPU plugin
runs; ``Node.evaluate`` has none in OpenVINO 2026.4) sums them: each pixel starts from zero and takes its
taps in kernel order (row, then column), each addition in the data type, so integers wrap. bf16 adds in f32
and rounds each partial sum as OpenVINO's ``bfloat16`` class does (the reference kernel on bf16, as the CPU
plugin runs it). f16 is summed in f32 and rounded once (the CPU plugin converts f16 to f32 around the
kernel, as the reference's evaluate did). Bit-exact against the CPU plugin for f32, f16, bf16 and 8- to 32-bit
integers. f64, i64 and u64 are summed in their own type (the reference's rule); the CPU plugin computes
them in f32 and i32.
``output_size`` and ``kernel_size`` may be computed at run time: the
plan is then made per value. A dilated kernel wider than the padded image is refused when OpenVINO's shape
inference (C's truncating division) counts windows for it (its reference then loops over a wrapped unsigned
count); when it counts none, the image is zeros."""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.convert_rules import bf16_as_openvino_rounds

NAMES = ("data", "output_size", "kernel_size")


def _pair(ctx: OpContext, name: str, default: list[int] | None, least: int) -> tuple[int, int]:
    values = ctx.attr_ints(name, default)
    if len(values) != 2 or any(v < least for v in values):
        ctx.fail(f"{name} must be two integers of at least {least}, got {ctx.attr_shown(name)}")
    return values[0], values[1]


def _exact(ctx: OpContext, position: int) -> tuple[Dim, Dim] | None:
    value = ctx.partial_value(position)
    if value is None or len(value) != 2:
        return None
    return value[0], value[1]


def infer_col2im(ctx: OpContext):
    data = ctx.inputs[0]
    params = {"strides": _pair(ctx, "strides", [1, 1], 1), "dilations": _pair(ctx, "dilations", [1, 1], 1),
              "pads_begin": _pair(ctx, "pads_begin", [0, 0], 0), "pads_end": _pair(ctx, "pads_end", [0, 0], 0),
              "size": None, "kernel": None}
    if data.element_type.kind in ("bool", "string") or data.element_type.bits < 8:
        ctx.fail(f"data must be a number type of 8 bits or more, got {data.element_type}", position=0)
    for position in (1, 2):
        spec = ctx.inputs[position]
        if spec.element_type.name not in ("i32", "i64", "dynamic"):
            ctx.fail(f"{NAMES[position]} must be i32 or i64, got {spec.element_type}", position=position)
    ctx.common_element_type(1, 2)
    for position in (1, 2):
        spec = ctx.inputs[position]
        if spec.shape.rank is not None and (spec.shape.rank != 1 or not spec.shape.dims[0].contains(2)):
            ctx.fail(f"{NAMES[position]} must be 1-D of 2 elements, got {spec.shape.brief()}", position=position)
    rank = data.shape.rank
    if rank is None:
        return [TensorSpec(data.element_type, DYNAMIC_SHAPE)], params
    if rank not in (2, 3):
        ctx.fail(f"data must be 2-D [C * kh * kw, L] or 3-D [N, C * kh * kw, L], got {data.shape.brief()}",
                 position=0)
    columns, blocks = data.shape.dims[rank - 2:]
    kernel, size = _exact(ctx, 2), _exact(ctx, 1)
    channels = DYNAMIC_DIM
    if kernel is not None and all(k.is_static for k in kernel):
        kh, kw = kernel[0].lo, kernel[1].lo
        if kh < 1 or kw < 1:
            ctx.fail(f"kernel_size must be positive, got [{kh}, {kw}]", position=2)
        params["kernel"] = (kh, kw)
        if columns.is_static:
            if columns.lo % (kh * kw):
                ctx.fail(f"the columns dim of data ({columns.lo}) is not divisible by kh * kw = {kh * kw}",
                         position=0)
            channels = Dim(columns.lo // (kh * kw), columns.lo // (kh * kw))
    spatial = (DYNAMIC_DIM, DYNAMIC_DIM)
    if size is not None:
        spatial = size
        if all(d.is_static for d in size):
            h, w = size[0].lo, size[1].lo
            if h < 0 or w < 0:
                ctx.fail(f"output_size must not be negative, got [{h}, {w}]", position=1)
            params["size"] = (h, w)
            if params["kernel"] is not None:
                lh, lw = _blocks(ctx, (h, w), params["kernel"], **{k: params[k] for k in _GEOMETRY})
                if blocks.is_static and blocks.lo != lh * lw:
                    ctx.fail(f"data has {blocks.lo} blocks (dim {rank - 1}), but output_size [{h}, {w}], kernel_size"
                             f" {list(params['kernel'])} and the attributes make {lh} x {lw} = {lh * lw}",
                             position=0)
    dims = ((data.shape.dims[0],) if rank == 3 else ()) + (channels,) + tuple(spatial)
    return [TensorSpec(data.element_type, PartialShape(dims))], params


_GEOMETRY = ("strides", "dilations", "pads_begin", "pads_end")


def _blocks(ctx: OpContext | None, size, kernel_size, *, strides, dilations, pads_begin, pads_end):
    """(Lh, Lw): the number of window positions along each axis, ``span / stride + 1`` with C's truncating
    division as OpenVINO's shape inference (a span of -stride or less gives no window at all)."""
    counts = []
    for axis in range(2):
        extent = dilations[axis] * (kernel_size[axis] - 1) + 1
        span = size[axis] + pads_begin[axis] + pads_end[axis] - extent
        count = (span // strides[axis] if span >= 0 else -(-span // strides[axis])) + 1
        if span < 0 and count != 0:
            message = (f"the dilated kernel ({extent}) is larger than the padded output size ({span + extent})"
                       f" along axis {axis}")
            if ctx is None:
                raise ValueError(message)
            ctx.fail(message)
        counts.append(count)
    return tuple(counts)


def _taps(start: int, step: int, count: int, size: int) -> tuple[int, int]:
    """The blocks [lo, hi) whose position ``start + b * step`` falls in [0, size)."""
    lo = -(start // step) if start < 0 else 0
    hi = min(count, -(-(size - start) // step))
    return lo, max(lo, hi)


def col2im(data: np.ndarray, output_size: np.ndarray, kernel_size: np.ndarray, *, size, kernel, strides, dilations,
           pads_begin, pads_end) -> np.ndarray:
    """Col2Im-15: each tap of the kernel adds its blocks to a strided slice of the image (see the module)."""
    size = size or tuple(int(v) for v in np.asarray(output_size).reshape(-1))
    kernel = kernel or tuple(int(v) for v in np.asarray(kernel_size).reshape(-1))
    lh, lw = _blocks(None, size, kernel, strides=strides, dilations=dilations, pads_begin=pads_begin,
                     pads_end=pads_end)
    batched = data.ndim == 3
    x = data if batched else data[None]
    n = x.shape[0]
    c = x.shape[1] // (kernel[0] * kernel[1])
    x = x.reshape(n, c, kernel[0], kernel[1], lh, lw)
    work = np.dtype(np.float32) if data.dtype.name in ("float16", "bfloat16") else data.dtype
    out = np.zeros((n, c) + tuple(size), work)
    for i in range(kernel[0]):
        top = i * dilations[0] - pads_begin[0]
        h0, h1 = _taps(top, strides[0], lh, size[0])
        for j in range(kernel[1]):
            left = j * dilations[1] - pads_begin[1]
            w0, w1 = _taps(left, strides[1], lw, size[1])
            if h0 == h1 or w0 == w1:
                continue
            target = out[:, :, top + h0 * strides[0]: top + (h1 - 1) * strides[0] + 1: strides[0],
                         left + w0 * strides[1]: left + (w1 - 1) * strides[1] + 1: strides[1]]
            np.add(target, x[:, :, i, j, h0:h1, w0:w1], out=target)
            if data.dtype.name == "bfloat16":
                target[...] = bf16_as_openvino_rounds(target, data.dtype)
    out = out.astype(data.dtype, copy=False)
    return out if batched else out[0]


def _batch(params, inputs, outputs, axes):
    if axes[1] is not None or axes[2] is not None:
        return "output_size or kernel_size has a batch axis"
    if axes[0] is None:
        return [None]
    if inputs[0].shape.rank == 3 and axes[0] == 0:
        return [0]
    return "the batch axis is not axis 0 (N) of 3-D data: it would split the columns or the blocks of an image"


OPS = (
    OpDef("Col2Im", 15, 15, LATEST_OPSET, NAMES, infer_col2im, col2im, roles=("data", "sizes", "sizes"),
          batch=_batch, attrs=(Attr("strides", "1,1"), Attr("dilations", "1,1"), Attr("pads_begin", "0,0"),
                               Attr("pads_end", "0,0"))),
)
