"""Convolution-1, GroupConvolution-1, ConvolutionBackpropData-1, GroupConvolutionBackpropData-1 and
DeformableConvolution-8 (1-D, 2-D and 3-D; DeformableConvolution 2-D only, as in OpenVINO).

Shape inference is OpenVINO's ``shape_infer`` (convolution_shape_inference_util.hpp and friends): the
number of spatial axes comes from the data rank, else the filters rank, else the attributes; ``same_upper``
and ``same_lower`` give ``ceil(dim / stride)`` and compute pads from static dims; intervals propagate
with OpenVINO's clipped interval arithmetic (:mod:`.window`). Run-time pads are recomputed from the
actual input shapes, as OpenVINO re-infers a dynamic model per shape.

Kernels: :mod:`.conv_forward` (im2col or a matmul per kernel tap, BLAS; prepared once per plan for static
shapes and constant filters); transposed convolutions: :mod:`.conv_backprop` (one matmul, then one strided
add per kernel tap; prepared once per plan for static shapes).

Accuracy (``exact=False``): the reference sums ``K = C_in/group * kernel volume`` products in the
element type in its own order; ir-run sums in another order (f16/bf16 in f32, rounded once), so
``|got - want| <= 2·K·eps·Σ|x·w|`` per output element (eps of the element type). Integer convolutions
are exact: products and sums wrap modulo 2**bits as the reference's ``T sum`` does (computed in int64).
DeformableConvolution adds its bilinear sampling (4 products in f32, as the reference computes them).

DeformableConvolution-1 (opset1..opset7): DeformableConvolution-8 without the mask input and without
``bilinear_interpolation_pad`` (a sample point must lie inside the input), as OpenVINO's v1 node computes it;
within DeformableConvolution-8's bound of the CPU plugin.

BinaryConvolution-1: a convolution of binary data with binary (u1) filters, ``mode="xnor-popcount"``.

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

from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.dims import ceil_div, compatible, dim_add, dim_div, dim_mul, dim_sub, floor_div
from ..toolkit.numeric import Arith
from ..toolkit.partial import unknown_dims, value_dims
from ..toolkit.window import (
    AUTO_PADS,
    FLOAT_TYPES,
    INTEGER_TYPES,
    as_dim,
    batch_axis_zero,
    dilated,
    refuse_element_type,
    same_padding,
)
from ._conv_backprop import backprop, prepare_backprop
from ._conv_forward import convolution, finish, prepare_convolution, run_pads

# -- shape inference ------------------------------------------------------------------------------------------

class _Attrs:
    """The common attributes of a convolution layer, as read from ``<data>``."""

    def __init__(self, ctx: OpContext, backprop: bool = False) -> None:
        self.strides = ctx.attr_ints("strides", [])
        self.dilations = ctx.attr_ints("dilations", [])
        self.pads_begin = ctx.attr_ints("pads_begin", [])
        self.pads_end = ctx.attr_ints("pads_end", [])
        self.auto_pad = ctx.attr_choice("auto_pad", AUTO_PADS, "explicit")
        self.output_padding = ctx.attr_ints("output_padding", []) if backprop else []

    def spatial_from_attrs(self) -> int | None:
        for values in (self.strides, self.dilations, self.pads_begin, self.pads_end):
            if values:
                return len(values)
        return None

    def validate(self, ctx: OpContext, n: int, backprop: bool = False) -> None:
        self.pads_begin = self.pads_begin or [0] * n
        self.pads_end = self.pads_end or [0] * n
        if len(self.strides) != n:
            ctx.fail(f"strides={self.strides} should be defined for all and only the {n} spatial dimensions")
        if len(self.dilations) != n:
            ctx.fail(f"dilations={self.dilations} should be defined for all and only the {n} spatial dimensions")
        if len(self.pads_begin) != n or len(self.pads_end) != n:
            ctx.fail(f"pads_begin={self.pads_begin} and pads_end={self.pads_end} should be defined for all and"
                     f" only the {n} spatial dimensions")
        if any(s <= 0 for s in self.strides):
            ctx.fail(f"strides={self.strides} has zero dimension(s)")
        if any(d <= 0 for d in self.dilations):
            ctx.fail(f"dilations={self.dilations} has zero dimension(s)")
        if backprop:
            self.output_padding = self.output_padding or [0] * n
            if len(self.output_padding) != n:
                ctx.fail(f"output_padding={self.output_padding} should be defined for all and only the {n}"
                         " spatial dimensions")

    @property
    def same(self) -> bool:
        return self.auto_pad in ("same_upper", "same_lower")

    def params(self) -> dict:
        return {"strides": tuple(self.strides), "dilations": tuple(self.dilations),
                "pads_begin": tuple(self.pads_begin), "pads_end": tuple(self.pads_end), "auto_pad": self.auto_pad}


def _element_type(ctx: OpContext, *positions: int):
    et = ctx.common_element_type(*positions)
    if et.kind in ("bool", "string"):
        ctx.fail(f"element type must be numeric, got {et}", position=positions[0])
    refuse_element_type(ctx, et, INTEGER_TYPES + FLOAT_TYPES, ctx.op.label)
    return et


def _rank_ok(ctx: OpContext, shape: PartialShape, ranks, what: str, position: int) -> None:
    if shape.rank is not None and shape.rank not in ranks:
        ctx.fail(f"expected a {'D, '.join(str(r) for r in ranks)}D tensor for {what}, got {shape.brief()}",
                 position=position)


def _output_channels(ctx: OpContext, data: PartialShape, filters: PartialShape, grouped: bool, *, plain: int,
                     per_group: int, times: int) -> Dim:
    """The output channels: the filters' dim ``plain`` (ungrouped), else groups (filter dim 0, checked against the
    data channels over the filters' input channels at dim ``per_group``) times the filters' dim ``times``."""
    if filters.rank is None:
        return DYNAMIC_DIM
    if not grouped:
        return filters.dims[plain]
    channels = filters.dims[0]
    inputs = filters.dims[per_group]
    if data.rank is not None and inputs.is_static:
        groups = dim_div(data.dims[1], inputs.lo) if inputs.lo else None
        channels = merge_dims(channels, groups) if groups is not None else None
        if channels is None:
            ctx.fail(f"data channels ({data.dims[1]}) are incompatible with the filter groups"
                     f" ({filters.dims[0]}) and input channels ({inputs})", position=1)
    return dim_mul(channels, filters.dims[times])



def _forward_spatial(ctx: OpContext, attrs: _Attrs, data: PartialShape, filters: PartialShape, n: int) -> list[Dim]:
    """Forward (and deformable) convolution: pads (resolved in ``attrs``) and the output's spatial dims."""
    data_dims = data.dims[-n:] if data.dims is not None else (DYNAMIC_DIM,) * n
    filter_dims = filters.dims[-n:] if filters.dims is not None else (DYNAMIC_DIM,) * n
    if attrs.auto_pad == "valid":
        attrs.pads_begin, attrs.pads_end = [0] * n, [0] * n
    elif attrs.same and data.dims is not None and filters.dims is not None:
        for i in range(n):
            k = filter_dims[i]
            small, large = same_padding(data_dims[i], k.lo, attrs.dilations[i], attrs.strides[i]) if k.is_static \
                else (0, 0)
            upper = attrs.auto_pad == "same_upper"
            attrs.pads_begin[i], attrs.pads_end[i] = (small, large) if upper else (large, small)
    if attrs.same:
        return [ceil_div(d, s) for d, s in zip(data_dims, attrs.strides)]
    out = []
    for i in range(n):
        dim = dim_add(data_dims[i], as_dim(attrs.pads_begin[i] + attrs.pads_end[i]))
        window = dilated(filter_dims[i], attrs.dilations[i])
        if dim.is_static and window.is_static:
            if window.lo > dim.lo:
                ctx.fail(f"the dilated filter ({window.lo}) is larger than the padded data ({dim.lo}) at spatial"
                         f" axis {i}")
        out.append(dim_add(floor_div(dim_sub(dim, window), attrs.strides[i]), Dim(1, 1)))
    return out


def _num_spatial(data: PartialShape, filters: PartialShape, filter_extra: int, attrs: _Attrs,
                 out_spatial: PartialShape | None = None) -> int | None:
    if data.rank is not None:
        return data.rank - 2
    if filters.rank is not None:
        return filters.rank - filter_extra
    if out_spatial is not None and out_spatial.rank:
        return out_spatial.rank
    return attrs.spatial_from_attrs()


def _check_data_and_filters(ctx: OpContext, data: PartialShape, filters: PartialShape, extra: int, grouped: bool,
                            filters_in: int) -> None:
    """The data is of rank 3 to 5, the filters' rank matches it (``extra`` leading filter dims: 2, grouped 3)
    and, ungrouped, data channels equal the filters' input channels (filter axis ``filters_in``: 1 forward,
    0 transposed)."""
    _rank_ok(ctx, data, (3, 4, 5), "the data", 0)
    if data.rank is not None and filters.rank is not None and data.rank != filters.rank - extra + 2:
        ctx.fail(f"data {data.brief()} and filters {filters.brief()} ranks do not match", position=1)
    if not grouped and data.rank is not None and filters.rank is not None \
            and not compatible(data.dims[1], filters.dims[filters_in]):
        ctx.fail(f"data channels ({data.dims[1]}) do not match filter input channels "
                 f"({filters.dims[filters_in]})", position=1)


def infer_convolution(ctx: OpContext, grouped: bool):
    data, filters = (s.shape for s in ctx.inputs[:2])
    et = _element_type(ctx, 0, 1)
    attrs = _Attrs(ctx)
    extra = 3 if grouped else 2
    n = _num_spatial(data, filters, extra, attrs)
    if n is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], {}
    _check_data_and_filters(ctx, data, filters, extra, grouped, filters_in=1)
    attrs.validate(ctx, n)
    batch = data.dims[0] if data.rank is not None else DYNAMIC_DIM
    channels = _output_channels(ctx, data, filters, grouped, plain=0, per_group=2, times=1)
    spatial = _forward_spatial(ctx, attrs, data, filters, n)
    return [TensorSpec(et, PartialShape((batch, channels, *spatial)))], {**attrs.params(), "grouped": grouped}


def _out_spatial_input(ctx: OpContext) -> PartialShape | None:
    """The ``output_shape`` input of a transposed convolution, as a partial shape (None: no such input)."""
    if len(ctx.inputs) < 3:
        return None
    spec = ctx.inputs[2].shape
    if spec.rank is not None and spec.rank != 1:
        ctx.fail(f"output_shape must have rank 1, got {spec.brief()}", position=2)
    value = ctx.partial_value(2)
    if value is not None:
        return PartialShape(value_dims(ctx, value, 2))
    if spec.is_static:
        return PartialShape(unknown_dims(ctx, spec.dims[0].lo, 2))
    return DYNAMIC_SHAPE


def _padded(d: Dim, n: int) -> Dim:
    """OpenVINO's ``dim::padded``: a bound that would go negative becomes unbounded (then 0 for the low one)."""
    if n == 0:
        return d
    hi = None if d.hi is None or d.hi + n < 0 else d.hi + n
    if d.is_static:
        return DYNAMIC_DIM if hi is None else Dim(hi, hi)
    lo = 0 if d.lo + n < 0 else d.lo + n
    return Dim(lo, hi) if hi is None or lo <= hi else Dim(hi, hi)


def infer_backprop(ctx: OpContext, grouped: bool):
    data, filters = (s.shape for s in ctx.inputs[:2])
    et = _element_type(ctx, 0, 1)
    attrs = _Attrs(ctx, backprop=True)
    extra = 3 if grouped else 2
    out_spatial = _out_spatial_input(ctx)
    n = _num_spatial(data, filters, extra, attrs, out_spatial)
    if n is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], {}
    if out_spatial is not None and out_spatial.rank is not None and out_spatial.rank != n:
        ctx.fail(f"output_shape {out_spatial} should be defined for all and only the {n} spatial dimensions",
                 position=2)
    _check_data_and_filters(ctx, data, filters, extra, grouped, filters_in=0)
    attrs.validate(ctx, n, backprop=True)
    data_dims = data.dims[-n:] if data.dims is not None else (DYNAMIC_DIM,) * n
    filter_dims = filters.dims[-n:] if filters.dims is not None else (DYNAMIC_DIM,) * n
    if out_spatial is not None and attrs.same and data.rank is not None and filters.rank is not None:
        for i in range(n):
            target = out_spatial.dims[i] if out_spatial.dims is not None else DYNAMIC_DIM
            if data_dims[i].is_static and filter_dims[i].is_static and target.is_static:
                total = max((data_dims[i].lo - 1) * attrs.strides[i] + (filter_dims[i].lo - 1) * attrs.dilations[i]
                            + 1 - target.lo + attrs.output_padding[i], 0)
                small, large = total // 2, total - total // 2
            else:
                small = large = 0
            attrs.pads_begin[i], attrs.pads_end[i] = (large, small) if attrs.auto_pad == "same_upper" \
                else (small, large)
    elif attrs.same or attrs.auto_pad == "valid":
        attrs.pads_begin, attrs.pads_end = [0] * n, [0] * n
    batch = data.dims[0] if data.rank is not None else DYNAMIC_DIM
    channels = _output_channels(ctx, data, filters, grouped, plain=1, per_group=1, times=2)
    if out_spatial is not None:
        spatial = list(out_spatial.dims) if out_spatial.dims is not None else [DYNAMIC_DIM] * n
    else:
        spatial = []
        for i in range(n):
            dim = dim_mul(dim_sub(data_dims[i], Dim(1, 1)), attrs.strides[i])
            dim = dim_add(dim, dilated(filter_dims[i], attrs.dilations[i]))
            spatial.append(_padded(dim, attrs.output_padding[i] - attrs.pads_begin[i] - attrs.pads_end[i]))
    params = {**attrs.params(), "output_padding": tuple(attrs.output_padding), "grouped": grouped}
    return [TensorSpec(et, PartialShape((batch, channels, *spatial)))], params


def _divisible(d: Dim, k: int) -> bool:
    return dim_div(d, k) is not None


def infer_deformable(ctx: OpContext):
    data, offsets, filters = (s.shape for s in ctx.inputs[:3])
    mask = ctx.inputs[3].shape if len(ctx.inputs) > 3 else None
    et = _element_type(ctx, *range(len(ctx.inputs)))
    refuse_element_type(ctx, et, FLOAT_TYPES, ctx.op.label)
    attrs = _Attrs(ctx)
    group = ctx.attr_int("group", 1)
    dgroup = ctx.attr_int("deformable_group", 1)
    bilinear_pad = ctx.attr_bool("bilinear_interpolation_pad", False)
    if mask is not None and mask.rank is not None:
        if filters.rank == 4:
            channels = dim_mul(dim_mul(filters.dims[2], filters.dims[3]), Dim(dgroup, dgroup))
            if not compatible(mask.dims[1], channels):
                ctx.fail(f"mask channels ({mask.dims[1]}) are incompatible with filters {filters.brief()} and"
                         f" deformable_group={dgroup}", position=3)
        if dgroup <= 0 or not _divisible(mask.dims[1], dgroup):
            ctx.fail(f"mask channels ({mask.dims[1]}) must be evenly divisible by deformable_group={dgroup}",
                     position=3)
        if data.rank is not None and not compatible(mask.dims[0], data.dims[0]):
            ctx.fail(f"data batch ({data.dims[0]}) and mask batch ({mask.dims[0]}) differ", position=3)
    n = data.rank - 2 if data.rank is not None else filters.rank - 2 if filters.rank is not None \
        else 2 if offsets.rank is not None else None
    if n is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], {}
    for position, spec in enumerate(ctx.inputs):
        if spec.shape.rank is not None and spec.shape.rank != 4:
            ctx.fail(f"{ctx.op.input_names[position]} must be of rank 4, got {spec.shape.brief()}", position=position)
    if group <= 0 or dgroup <= 0:
        ctx.fail(f"group={group} and deformable_group={dgroup} must be at least 1")
    attrs.validate(ctx, n)
    if data.rank is not None:
        if not _divisible(data.dims[1], group):
            ctx.fail(f"data channels ({data.dims[1]}) must be evenly divisible by group={group}", position=0)
        batch = data.dims[0]
    else:
        batch = DYNAMIC_DIM
    if offsets.rank is not None:
        if filters.rank is not None:
            channels = dim_mul(dim_mul(filters.dims[2], filters.dims[3]), Dim(2 * dgroup, 2 * dgroup))
            if not compatible(offsets.dims[1], channels):
                ctx.fail(f"offsets channels ({offsets.dims[1]}) are incompatible with filters {filters.brief()} and"
                         f" deformable_group={dgroup}", position=1)
        if not _divisible(offsets.dims[1], dgroup):
            ctx.fail(f"offsets channels ({offsets.dims[1]}) must be evenly divisible by deformable_group={dgroup}",
                     position=1)
        merged = merge_dims(batch, offsets.dims[0])
        if merged is None:
            ctx.fail(f"data batch ({batch}) and offsets batch ({offsets.dims[0]}) differ", position=1)
        batch = merged
    if filters.rank is not None:
        if not _divisible(filters.dims[0], group):
            ctx.fail(f"filters output channels ({filters.dims[0]}) must be evenly divisible by group={group}",
                     position=2)
        if data.rank is not None and not compatible(data.dims[1], dim_mul(filters.dims[1], group)):
            ctx.fail(f"data channels ({data.dims[1]}) do not match filter input channels ({filters.dims[1]}) x"
                     f" group={group}", position=2)
        out_channels = filters.dims[0]
    else:
        out_channels = DYNAMIC_DIM
    spatial = _forward_spatial(ctx, attrs, data, filters, n)
    for position, spec in ((1, offsets), (3, mask)):
        if spec is not None and spec.rank is not None and \
                not all(compatible(a, b) for a, b in zip(spatial, spec.dims[2:])):
            ctx.fail(f"spatial dims of {ctx.op.input_names[position]} {spec.brief()} and of the output"
                     f" {[str(d) for d in spatial]} must be compatible", position=position)
    params = {**attrs.params(), "group": group, "deformable_group": dgroup, "bilinear_pad": bilinear_pad,
              "deformable": True}
    return [TensorSpec(et, PartialShape((batch, out_channels, *spatial)))], params


# -- kernels --------------------------------------------------------------------------------------------------

def deformable(x, offsets, w, mask=None, *, strides, dilations, pads_begin, pads_end, auto_pad, group,
               deformable_group, bilinear_pad, deformable):
    """DeformableConvolution-8 (2-D): each tap samples the input at its position plus a learned offset by
    OpenVINO's bilinear interpolation (f32, corners outside the input read as 0; without
    ``bilinear_interpolation_pad`` a sample point must lie in ``[0, size)`` and its corners are clamped),
    scaled by the mask, then an im2col matmul. Bound: (2·K + 8)·eps·Σ|x·w|."""
    batch, channels, height, width = x.shape
    out_ch, cg, kh, kw = w.shape
    begin, end = run_pads(x.shape[2:], (kh, kw), strides, dilations, pads_begin, pads_end, auto_pad)
    oh, ow = offsets.shape[2:]
    taps = kh * kw
    out_dtype = x.dtype
    work = np.float64 if out_dtype == np.float64 else np.float32
    off = offsets.astype(work, copy=False).reshape(batch, deformable_group, taps, 2, oh, ow)
    ky, kx = np.meshgrid(np.arange(kh), np.arange(kw), indexing="ij")
    base_y = (np.arange(oh) * strides[0] - begin[0])[None, :, None] + (ky.reshape(-1) * dilations[0])[:, None, None]
    base_x = (np.arange(ow) * strides[1] - begin[1])[None, None, :] + (kx.reshape(-1) * dilations[1])[:, None, None]
    y = (base_y.astype(work) + off[:, :, :, 0])  # [N, DG, K, OH, OW]
    xx = (base_x.astype(work) + off[:, :, :, 1])
    if bilinear_pad:
        inside = (np.trunc(y) > -1) & (np.trunc(y) < height) & (np.trunc(xx) > -1) & (np.trunc(xx) < width)
        y1, x1 = np.floor(y), np.floor(xx)
        y2, x2 = y1 + 1, x1 + 1
    else:
        inside = (y >= 0) & (y < height) & (xx >= 0) & (xx < width)
        y1, x1 = np.maximum(np.floor(y), 0), np.maximum(np.floor(xx), 0)
        y2, x2 = np.minimum(np.ceil(y), height - 1), np.minimum(np.ceil(xx), width - 1)
    with np.errstate(invalid="ignore"):
        dx, dy = (xx - x1).astype(np.float32), (y - y1).astype(np.float32)
    data = x.astype(work, copy=False).reshape(batch, deformable_group, channels // deformable_group, height * width)

    def corner(cy, cx):
        valid = inside & (cy >= 0) & (cy < height) & (cx >= 0) & (cx < width)
        flat = np.where(valid, np.nan_to_num(cy) * width + np.nan_to_num(cx), 0).astype(np.int64)
        picked = np.take_along_axis(data, flat.reshape(batch, deformable_group, 1, -1), axis=3)
        return np.where(valid.reshape(batch, deformable_group, 1, -1), picked, 0).astype(np.float32)

    shape = (batch, deformable_group, 1, -1)
    ex, ey = (1 - dx).reshape(shape), (1 - dy).reshape(shape)
    fx, fy = dx.reshape(shape), dy.reshape(shape)
    sampled = (ex * ey * corner(y1, x1) + ex * fy * corner(y2, x1) + fx * ey * corner(y1, x2)
               + fx * fy * corner(y2, x2))  # [N, DG, C/DG, K*OH*OW]
    sampled = np.where(inside.reshape(shape), sampled, 0).astype(work)
    if mask is not None:
        sampled = sampled * mask.astype(work, copy=False).reshape(batch, deformable_group, 1, -1)
    cols = sampled.reshape(batch, group, cg * taps, oh * ow)
    out = np.matmul(w.astype(work, copy=False).reshape(group, out_ch // group, cg * taps), cols)
    return finish(out.reshape(batch, out_ch, oh, ow), out_dtype)


BINARY_MODES = ("xnor-popcount",)
BINARY_EXACT_COUNT = {np.dtype(np.float16): 2048, np.dtype(np.float32): 2**24, np.dtype(np.float64): 2**53}


def infer_binary_convolution(ctx: OpContext):
    data, filters = ctx.inputs
    if data.element_type.kind not in ("float", "dynamic"):
        ctx.fail(f"data must have a floating-point element type, got {data.element_type}", position=0)
    if filters.element_type.name not in ("u1", "dynamic"):
        ctx.fail(f"filters must be u1 (packed bits), got {filters.element_type}", position=1)
    ctx.attr_choice("mode", {m: m for m in BINARY_MODES}, BINARY_MODES[0])  # (the only mode OpenVINO defines)
    pad_value = ctx.attr_float("pad_value")
    attrs = _Attrs(ctx)
    n = _num_spatial(data.shape, filters.shape, 2, attrs)
    params = {**attrs.params(), "pad_value": pad_value}
    if n is None:
        return [TensorSpec(data.element_type, DYNAMIC_SHAPE)], params
    _rank_ok(ctx, data.shape, (4,), "the data", 0)
    _rank_ok(ctx, filters.shape, (4,), "the filters", 1)
    if data.shape.rank is not None and filters.shape.rank is not None \
            and not compatible(data.shape.dims[1], filters.shape.dims[1]):
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
    limit = BINARY_EXACT_COUNT.get(x.dtype, 256)  # (bf16)
    total = np.zeros((batch, outs, oh, ow), x.dtype)
    size = kh * kw
    for c in range(channels):
        count = np.einsum("ok,nkhw->nohw", bits[:, c], is1[:, c]) + np.einsum("ok,nkhw->nohw", 1 - bits[:, c],
                                                                              is0[:, c])
        count = ar.of(np.minimum(count, limit))
        total = ar.add(total, ar.sub(ar.mul(ar.of(2), count), ar.of(size)))
    return total


_COMMON = (Attr("strides"), Attr("dilations"), Attr("pads_begin"), Attr("pads_end"),
           Attr("auto_pad", "explicit", tuple(AUTO_PADS)))
OPS = (
    OpDef("Convolution", 1, 1, LATEST_OPSET, ("data", "filters"), lambda ctx: infer_convolution(ctx, False),
          convolution, prepare_convolution, attrs=_COMMON, batch=batch_axis_zero, exact=False,
          precision_anchor=True),
    OpDef("GroupConvolution", 1, 1, LATEST_OPSET, ("data", "filters"), lambda ctx: infer_convolution(ctx, True),
          convolution, prepare_convolution, attrs=_COMMON, batch=batch_axis_zero, exact=False,
          precision_anchor=True),
    OpDef("ConvolutionBackpropData", 1, 1, LATEST_OPSET, ("data", "filters", "output_shape"),
          lambda ctx: infer_backprop(ctx, False), backprop, prepare_backprop, roles=("data", "filters", "shape"),
          attrs=_COMMON + (Attr("output_padding"),), batch=batch_axis_zero, exact=False, min_inputs=2),
    OpDef("GroupConvolutionBackpropData", 1, 1, LATEST_OPSET, ("data", "filters", "output_shape"),
          lambda ctx: infer_backprop(ctx, True), backprop, prepare_backprop, roles=("data", "filters", "shape"),
          attrs=_COMMON + (Attr("output_padding"),), batch=batch_axis_zero, exact=False, min_inputs=2),
    OpDef("DeformableConvolution", 8, 8, LATEST_OPSET, ("data", "offsets", "filters", "mask"), infer_deformable,
          deformable, attrs=_COMMON + (Attr("group", "1"), Attr("deformable_group", "1"),
                                                      Attr("bilinear_interpolation_pad", "false")),
          batch=batch_axis_zero, exact=False, min_inputs=3),
    OpDef("DeformableConvolution", 1, 1, 7, ("data", "offsets", "filters"), infer_deformable, deformable,
          attrs=_COMMON + (Attr("group", "1"), Attr("deformable_group", "1")), batch=batch_axis_zero, exact=False),
    OpDef("BinaryConvolution", 1, 1, LATEST_OPSET, ("data", "filters"), infer_binary_convolution,
          binary_convolution, batch=batch_axis_zero,
          attrs=(Attr("strides"), Attr("dilations"), Attr("pads_begin"), Attr("pads_end"),
                 Attr("auto_pad", "explicit", tuple(AUTO_PADS)), Attr("mode", None, BINARY_MODES), Attr("pad_value"))),
)
