"""NV12toRGB-8, NV12toBGR-8, I420toRGB-8, I420toBGR-8: YUV 4:2:0 camera frames to interleaved RGB/BGR.

Inputs are NHWC with one channel per plane. NV12: one plane ``[N, H*3/2, W, 1]`` (Y rows, then interleaved
UV rows) or two, Y ``[N, H, W, 1]`` and UV ``[N, H/2, W/2, 2]``. I420: one plane ``[N, H*3/2, W, 1]`` (Y,
then the U plane, then the V plane, each of ``H*W/4`` elements) or three, Y and U, V ``[N, H/2, W/2, 1]``.
The output is ``[N, H, W, 3]`` of the input type (u8 or a float type); H and W must be even. Each 2x2
block of Y shares one U and one V.

Per pixel, in f32 (``c = Y - 16``, ``d = U - 128``, ``e = V - 128``)::

    R = 1.164*c + 1.596*e;   G = (1.164*c - 0.391*d) - 0.813*e;   B = 1.164*c + 2.018*d

each clamped to [0, 255] and cast to the input type; for u8, rounded to the nearest integer first.
OpenVINO has no ``Node.evaluate`` for these operations: the oracle is the CPU plugin, which ir-run matches
bit for bit (u8: all 2**24 (Y, U, V) triples; floats: random values, infinities, NaN). Where the CPU plugin
and OpenVINO's reference kernel (the template plugin's) differ, ir-run follows the CPU plugin:

- u8 rounds halves to even: the reference's ``std::round`` rounds them away from zero, one more on 19216 of
  the 2**24 triples (Y=4, V=211: R is exactly 118.5 in f32: 118 in the CPU plugin and ir-run, 119 in the
  reference kernel);
- a NaN channel gives 0 (the reference's ``std::max``/``std::min`` keep NaN); +inf gives 255, -inf 0.
  (The CPU plugin's f64 path alone gives 255 for a channel that is inf - inf; ir-run gives 0.)
"""

from __future__ import annotations

import numpy as np

from ...parallel import run_chunked
from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, OpContext, OpDef, equal_merge
from ..toolkit.dims import dim_div, dim_mul
from ._color import color_element_type

_F32 = np.float32


def _y_shape(ctx: OpContext, planes: str) -> list[Dim]:
    y = ctx.inputs[0].shape
    if y.rank is None:
        return [DYNAMIC_DIM] * 4
    if y.rank != 4:
        ctx.fail(f"the {planes} input must have 4 dims (N, H, W, C), got {y.brief()}", position=0)
    if not y.dims[3].contains(1):
        ctx.fail(f"the {planes} input must have 1 channel (the last dim), got {y.dims[3]}", position=0)
    return list(y.dims)


def _chroma(ctx: OpContext, dims: list[Dim], uv: PartialShape, channels: int, what: str, first: int) -> list[Dim]:
    """Merge the full-size dims with the chroma plane(s) ``uv`` (H and W doubled)."""
    if uv.rank is not None:
        if uv.rank != 4 or not uv.dims[3].contains(channels):
            ctx.fail(f"{what} must be [N, H/2, W/2, {channels}] ({channels} channel(s)), got {uv.brief()}",
                     position=first)
        uv = PartialShape((uv.dims[0], dim_mul(uv.dims[1], 2), dim_mul(uv.dims[2], 2), uv.dims[3]))
    merged = equal_merge(PartialShape(tuple(dims)), uv)
    if merged is None:
        names = "UV" if channels == 2 else "U and V"
        ctx.fail(f"the Y shape {PartialShape(tuple(dims[:3])).brief()} (N, H, W) does not fit {names}"
                 f" {uv.brief()} (N, H/2, W/2 doubled: N, H, W)", position=first)
    return list(merged.dims)


def _infer(ctx: OpContext, family: str):
    single = len(ctx.inputs) == 1
    if family == "i420" and len(ctx.inputs) == 2:
        ctx.fail("I420 takes one plane (Y, U, V stacked) or three (Y, U, V), got two inputs", position=1)
    planes = "single-plane" if single else "Y"
    et = color_element_type(ctx)
    dims = _y_shape(ctx, planes)
    if single:
        dims[1] = dim_div(dim_mul(dims[1], 2), 3)
        if dims[1] is None:
            ctx.fail(f"the single-plane image height {ctx.inputs[0].shape.dims[0 + 1]} must be a multiple of 3"
                     " (H*3/2 rows: Y, then the chroma)", position=0)
    elif family == "nv12":
        dims[3] = Dim(2, 2)
        dims = _chroma(ctx, dims, ctx.inputs[1].shape, 2, "the UV input", 1)
    else:
        uv = equal_merge(ctx.inputs[1].shape, ctx.inputs[2].shape)
        if uv is None:
            ctx.fail(f"U {ctx.inputs[1].shape.brief()} and V {ctx.inputs[2].shape.brief()} must have equal shapes",
                     position=2)
        dims = _chroma(ctx, dims, uv, 1, "the U and V inputs", 1)
    for axis, name in ((1, "height"), (2, "width")):
        if dim_div(dims[axis], 2) is None:
            ctx.fail(f"the image {name} must be even, got {dims[axis]}", position=0)
    dims[3] = Dim(3, 3)
    return [TensorSpec(et, PartialShape(tuple(dims)))], {}


def _split_planes(family: str, planes: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Y ``[N, H, W]`` and U, V ``[N, H/2, W/2]`` (views) of the inputs."""
    if len(planes) > 1:
        y = planes[0][..., 0]
        if family == "nv12":
            return y, planes[1][..., 0], planes[1][..., 1]
        return y, planes[1][..., 0], planes[2][..., 0]
    frame = planes[0][..., 0]
    n, rows, w = frame.shape
    h = rows * 2 // 3
    chroma = frame[:, h:, :].reshape(n, h // 2 * w)
    if family == "nv12":
        pairs = chroma.reshape(n, h // 2, w // 2, 2)
        return frame[:, :h, :], pairs[..., 0], pairs[..., 1]
    quarter = h * w // 4
    return (frame[:, :h, :], chroma[:, :quarter].reshape(n, h // 2, w // 2),
            chroma[:, quarter:].reshape(n, h // 2, w // 2))


_BLOCK_PIXELS = 1 << 15  # pixels converted per step: the f32 temporaries stay in the cache


def _convert(family: str, order: str, *planes: np.ndarray) -> np.ndarray:
    """The conversion (see the module docstring), over threads in blocks of image rows."""
    y, u, v = _split_planes(family, planes)
    n, h, w = y.shape
    dtype = planes[0].dtype
    out = np.empty((n, h, w, 3), dtype)
    if not out.size:
        return out
    pairs = h // 2  # row pairs per image: the unit of work (they share one chroma row)
    step = max(1, _BLOCK_PIXELS // (2 * w))

    def work(start: int, stop: int) -> None:
        unit = start
        while unit < stop:
            image, first = divmod(unit, pairs)
            count = min(step, pairs - first, stop - unit)  # (a block stays within one image)
            last = first + count
            rows = slice(2 * first, 2 * last)
            _rows(y[image, rows], u[image, first:last], v[image, first:last], out[image, rows], order)
            unit += count

    run_chunked(n * pairs, 2 * w, work)
    return out


def _rows(y: np.ndarray, u: np.ndarray, v: np.ndarray, out: np.ndarray, order: str) -> None:
    """Rows of one image: Y ``[2k, w]``, U and V ``[k, w/2]``. The chroma terms are computed once per 2x2
    block and broadcast to its four pixels; each channel is written into the interleaved output."""
    k, half = u.shape
    block = (k, 2, half, 2)  # Y as [k, 2, w/2, 2]; chroma as [k, 1, w/2, 1]
    luma = np.subtract(y.reshape(block), _F32(16), dtype=_F32)
    np.multiply(luma, _F32(1.164), out=luma)
    d = np.subtract(u, _F32(128), dtype=_F32)[:, None, :, None]
    e = np.subtract(v, _F32(128), dtype=_F32)[:, None, :, None]
    channel = np.empty(block, _F32)
    target = out.reshape(block + (3,))
    for index, name in enumerate(order):
        if name == "r":
            np.add(luma, _F32(1.596) * e, out=channel)
        elif name == "g":
            np.subtract(luma, _F32(0.391) * d, out=channel)
            np.subtract(channel, _F32(0.813) * e, out=channel)
        else:
            np.add(luma, _F32(2.018) * d, out=channel)
        if out.dtype == np.uint8:
            np.rint(channel, out=channel)  # halves to even, as the CPU plugin
        np.fmax(channel, _F32(0), out=channel)  # NaN -> 0, as the CPU plugin
        np.minimum(channel, _F32(255), out=channel)
        target[..., index] = channel  # (a cast to the input type: exact for u8, round to nearest for f16/bf16)


def _kernel(family: str, order: str):
    def convert(*planes: np.ndarray) -> np.ndarray:
        return _convert(family, order, *planes)

    convert.__name__ = f"{family}_to_{order}"
    convert.__doc__ = (f"{family.upper()}to{order.upper()}-8: YUV 4:2:0 planes to [N, H, W, 3] {order.upper()} "
                       "(see the module docstring; bit-exact against OpenVINO's CPU plugin).")
    return convert


def _batch(params, inputs, outputs, axes):
    """Each image is converted alone: the batch axis N (axis 0 of every plane) goes to the output's N."""
    if all(axis == 0 for axis in axes):
        return [0]
    return "the planes of an image must be split along N (axis 0 of every input)"


def _op(family: str, order: str) -> OpDef:
    names = ("y", "uv") if family == "nv12" else ("y", "u", "v")
    return OpDef(f"{family.upper()}to{order.upper()}", 8, 8, LATEST_OPSET, names,
                 lambda ctx: _infer(ctx, family), _kernel(family, order), min_inputs=1, batch=_batch)


OPS = (_op("nv12", "rgb"), _op("nv12", "bgr"), _op("i420", "rgb"), _op("i420", "bgr"))
