"""BinaryConvolution-1: a convolution of binary data with binary (u1) filters, ``mode="xnor-popcount"``.

Each output is, over the filter's input channels, the sum of ``2 * popcount - K`` (K: the kernel's spatial
size; popcount: the kernel positions where the data bit equals the filter bit), as OpenVINO's reference
(``ov::reference::binary_convolution``) computes it: a data value is the bit 1 when it equals 1 and the bit 0
when it equals 0 (any other value matches neither bit); padded positions take ``pad_value`` the same way.
Filter bits follow the IR's u1 layout ``[C_OUT, C_IN, kH, kW]`` (element order, most significant bit first in
the .bin). Counting and summing happen in the data's type, as in the reference (f16 counts stop at 2048 and bf16
at 256, where adding 1 no longer changes them). Shapes as Convolution's (4-D data only, as OpenVINO's).

OpenVINO's core node has no ``evaluate``, and the CPU plugin's output for f32 data in 2026.4.1 does not follow
its own packing (different filters give the same outputs): the oracle is a loop written from the reference's
C++ source (tests/ops/test_binary_conv.py). ir-run follows the IR layout of the filters where the reference
addresses output channel ``o`` at byte ``o * C_IN * kH * kW`` of the packed filters (a byte stride where the
packing has a bit stride): the two agree for one output channel.
"""

from __future__ import annotations

import numpy as np

from ..types import DYNAMIC_DIM, DYNAMIC_SHAPE, PartialShape, TensorSpec
from .api import LATEST_OPSET, Attr, OpContext, OpDef
from .conv import _Attrs, _compatible, _forward_spatial, _num_spatial, _rank_ok
from .conv_forward import run_pads
from .roi_align import Arith
from .window import AUTO_PADS, batch_axis_zero

MODES = ("xnor-popcount",)
EXACT_COUNT = {np.dtype(np.float16): 2048, np.dtype(np.float32): 2**24, np.dtype(np.float64): 2**53}


def infer_binary_convolution(ctx: OpContext):
    data, filters = ctx.inputs
    if data.element_type.kind not in ("float", "dynamic"):
        ctx.fail(f"data must have a floating-point element type, got {data.element_type}", position=0)
    if filters.element_type.name not in ("u1", "dynamic"):
        ctx.fail(f"filters must be u1 (packed bits), got {filters.element_type}", position=1)
    ctx.attr_choice("mode", {m: m for m in MODES}, MODES[0])  # (the only mode OpenVINO defines)
    pad_value = ctx.attr_float("pad_value")
    attrs = _Attrs(ctx)
    n = _num_spatial(data.shape, filters.shape, 2, attrs)
    params = {**attrs.params(), "pad_value": pad_value}
    if n is None:
        return [TensorSpec(data.element_type, DYNAMIC_SHAPE)], params
    _rank_ok(ctx, data.shape, (4,), "the data", 0)
    _rank_ok(ctx, filters.shape, (4,), "the filters", 1)
    if data.shape.rank is not None and filters.shape.rank is not None \
            and not _compatible(data.shape.dims[1], filters.shape.dims[1]):
        ctx.fail(f"data channels ({data.shape.dims[1]}) do not match filter input channels"
                 f" ({filters.shape.dims[1]})", position=1)
    attrs.validate(ctx, n)
    batch = data.shape.dims[0] if data.shape.rank is not None else DYNAMIC_DIM
    channels = filters.shape.dims[0] if filters.shape.rank is not None else DYNAMIC_DIM
    spatial = _forward_spatial(ctx, attrs, data.shape, filters.shape, n)
    return [TensorSpec(data.element_type, PartialShape((batch, channels, *spatial)))], {**attrs.params(),
                                                                                    "pad_value": pad_value}


def binary_convolution(x: np.ndarray, w: np.ndarray, *, strides, dilations, pads_begin, pads_end, auto_pad,
                       pad_value: float) -> np.ndarray:
    """BinaryConvolution-1 (see the module docstring)."""
    batch, channels, height, width = x.shape
    outs, _, kh, kw = w.shape
    begin, end = run_pads((height, width), (kh, kw), strides, dilations, pads_begin, pads_end, auto_pad)
    ar = Arith(x.dtype)
    pad = ar.of(pad_value)
    padded = np.full((batch, channels, height + begin[0] + end[0], width + begin[1] + end[1]), pad, x.dtype)
    padded[:, :, begin[0]:begin[0] + height, begin[1]:begin[1] + width] = x
    (sh, sw), (dh, dw) = strides, dilations
    oh = (padded.shape[2] - (dh * (kh - 1) + 1)) // sh + 1
    ow = (padded.shape[3] - (dw * (kw - 1) + 1)) // sw + 1
    wide = padded.astype(np.float64)
    ones = np.stack([wide[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw]
                     for i in range(kh) for j in range(kw)], axis=2)  # [N, C, K, OH, OW]
    is1, is0 = (ones == 1).astype(np.int64), (ones == 0).astype(np.int64)
    bits = w.reshape(outs, channels, kh * kw).astype(np.int64)
    limit = EXACT_COUNT.get(x.dtype, 256)  # (bf16)
    total = np.zeros((batch, outs, oh, ow), x.dtype)
    size = kh * kw
    for c in range(channels):
        count = np.einsum("ok,nkhw->nohw", bits[:, c], is1[:, c]) + np.einsum("ok,nkhw->nohw", 1 - bits[:, c],
                                                                              is0[:, c])
        count = ar.of(np.minimum(count, limit))
        total = ar.add(total, ar.sub(ar.mul(ar.of(2), count), ar.of(size)))
    return total


OPS = (
    OpDef("BinaryConvolution", 1, 1, LATEST_OPSET, ("data", "filters"), infer_binary_convolution,
          binary_convolution, batch=batch_axis_zero,
          attrs=(Attr("strides"), Attr("dilations"), Attr("pads_begin"), Attr("pads_end"),
                 Attr("auto_pad", "explicit", tuple(AUTO_PADS)), Attr("mode", None, MODES), Attr("pad_value"))),
)
