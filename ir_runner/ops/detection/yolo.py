"""RegionYolo-1 and ReorgYolo-2 (``docs/semantics.md``, "Detection heads"): the YOLO v2/v3 heads.

RegionYolo: ``data`` [N, C, H, W] holds, per region (anchor) ``r``, ``coords + classes + 1`` channels (x, y, w, h,
..., objectness, class scores). The logistic function is applied to x and y and to the objectness; with
``do_softmax`` (YOLO v2, ``num`` regions) the class scores get a softmax over the classes and the output flattens
dims ``axis..end_axis``; without it (YOLO v3) only the ``len(mask)`` first regions are kept (C becomes
``len(mask) * (coords + classes + 1)``) and the class scores get the logistic function too. Other channels
are copied. As in OpenVINO (reference and CPU plugin), channels 0 and 1 get the logistic function first and the
objectness (channel ``coords``) onwards after: with ``coords`` below 2 the channel they share gets it twice; the
regions are read from the flat input in blocks of the output's size per image (the same as per image unless
YOLO v3 data has more channels than the mask keeps). Computed in f32 (f16/bf16/f64 data converted, the result
rounded once), as OpenVINO's reference: ``1 / (1 + exp(-x))``, the softmax as ``exp(x - max)`` summed class by
class, then divided.

ReorgYolo: space-to-depth as OpenVINO's reference indexes it: the output [N, C * s^2, H / s, W / s] is the input
read as [N, C / s^2, H * s, W * s] and written as [N, C, H, W] (``out[n, c, h, w] = in'[n, c % C', h * s + o // s,
w * s + o % s]`` with ``C' = C / s^2``, ``o = c // C'``). Data movement: bit-exact for every element type.

Neither has a ``Node.evaluate`` in OpenVINO: they are compared with the CPU plugin. ReorgYolo bit for bit;
RegionYolo within 8 eps(f32) absolute on the transformed channels, whose values lie in [0, 1] (the plugin's exp
and summation are its own; measured: at most 4 eps, a few ULP on the logistic outputs), the copied ones exactly;
f16 output within one f16 rounding of that. Refused: a
ReorgYolo stride below 1 (OpenVINO infers zero dims) and a channel count that is not a multiple of stride^2 (its
reference reads outside the data); a RegionYolo whose channels do not hold its regions (``num`` regions with
``do_softmax``, at least ``len(mask)`` without), where the reference reads outside the data.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.dims import dim_div_bounds, dim_mul

F32 = np.float32


def _product(dims) -> Dim:
    lo, hi = 1, 1
    for dim in dims:
        lo *= dim.lo
        hi = None if hi is None or dim.hi is None else hi * dim.hi
    return Dim(lo, hi)


def _infer_region(ctx: OpContext):
    data = ctx.inputs[0]
    et = data.element_type
    if et.kind not in ("float", "dynamic"):
        ctx.fail(f"data must have a floating-point element type, got {et}", position=0)
    params = {"coords": ctx.attr_int("coords", 4), "classes": ctx.attr_int("classes", 0),
              "regions": ctx.attr_int("num", 0), "do_softmax": ctx.attr_bool("do_softmax", True),
              "mask": tuple(ctx.attr_ints("mask", [])), "axis": ctx.attr_int("axis", 1),
              "end_axis": ctx.attr_int("end_axis", 3)}
    for name in ("coords", "classes", "regions"):
        if not 0 <= params[name] < 2**31:
            ctx.fail(f"attribute {'num' if name == 'regions' else name}={params[name]} must be a non-negative int32")
    shape = data.shape
    if shape.rank is not None and shape.rank != 4:
        ctx.fail(f"data must be 4-D [N, C, H, W], got {shape.brief()}", position=0)
    entries = params["coords"] + params["classes"] + 1
    if params["do_softmax"]:
        for name in ("axis", "end_axis"):
            if not -4 <= params[name] < 4:
                ctx.fail(f"attribute {name}={params[name]} is outside [-4, 4) (data is 4-D)")
        params["axis"] %= 4
        params["end_axis"] %= 4
        need = params["regions"] * entries
    else:
        need = len(params["mask"]) * entries
    if shape.rank is None:
        return [TensorSpec(et, PartialShape(None))], params
    channels = shape.dims[1]
    if channels.hi is not None and (channels.hi < need or (params["do_softmax"] and channels.lo > need)):
        which = (f"num * (coords + classes + 1) = {need}" if params["do_softmax"]
                 else f"at least len(mask) * (coords + classes + 1) = {need}")
        ctx.fail(f"data must have {which} channels, got {shape.brief()}", position=0,
                 hint="OpenVINO's reference would read outside the data")
    dims = list(shape.dims)
    if params["do_softmax"]:
        axis, end = params["axis"], params["end_axis"]
        if end >= axis:
            dims = dims[:axis] + [_product(dims[axis:end + 1])] + dims[end + 1:]
    else:
        dims[1] = Dim(need, need)
    return [TensorSpec(et, PartialShape(tuple(dims)))], params


def _exp(x: np.ndarray) -> np.ndarray:
    """exp in f32, rounded from f64 (the correctly rounded value but for rare ties)."""
    return np.exp(x.astype(np.float64)).astype(F32)


def region_yolo(data: np.ndarray, *, coords: int, classes: int, regions: int, do_softmax: bool, mask, axis: int,
                end_axis: int) -> np.ndarray:
    """RegionYolo-1 (see the module docstring); the output keeps data's dtype."""
    n, c, h, w = data.shape
    entries = coords + classes + 1
    kept = regions if do_softmax else len(mask)
    if c < kept * entries or (do_softmax and c != kept * entries):
        raise InputError(f"data has {c} channels; RegionYolo needs {'' if do_softmax else 'at least '}"
                         f"{kept * entries} ({kept} regions of coords + classes + 1 = {entries})",
                         port="input 0 (data)")
    x = data.reshape(-1)[:n * kept * entries * h * w].astype(F32).reshape(n, kept, entries, h, w)
    with np.errstate(over="ignore"):
        for first, stop in ((0, min(2, entries)), (coords, entries if not do_softmax else coords + 1)):
            x[:, :, first:stop] = F32(1) / (F32(1) + _exp(-x[:, :, first:stop]))  # (coords < 2: twice, as OpenVINO)
        if do_softmax and classes:
            scores = x[:, :, coords + 1:]
            top = scores.max(axis=2, keepdims=True)
            terms = _exp(scores - top)
            total = terms[:, :, 0].copy()
            for k in range(1, classes):
                total += terms[:, :, k]
            x[:, :, coords + 1:] = terms / total[:, :, None]
    out = x.reshape(n, kept * entries, h, w).astype(data.dtype)
    if do_softmax and end_axis >= axis:
        shape = out.shape
        out = out.reshape(shape[:axis] + (int(np.prod(shape[axis:end_axis + 1])),) + shape[end_axis + 1:])
    return out


def _infer_reorg(ctx: OpContext):
    data = ctx.inputs[0]
    strides = ctx.attr_ints("stride")
    if not strides:
        ctx.fail("attribute stride must have a value")
    stride = strides[0]
    if stride < 1 or stride > 2**31:
        ctx.fail(f"attribute stride={stride} must be a positive int32",
                 hint="OpenVINO infers zero dims for stride 0 and divides by it in its reference")
    shape = data.shape
    if shape.rank is None:
        return [TensorSpec(data.element_type, PartialShape(None))], {"stride": stride}
    if shape.rank != 4:
        ctx.fail(f"data must be 4-D [N, C, H, W], got {shape.brief()}", position=0)
    n, c, h, w = shape.dims
    square = stride * stride
    if c.hi is not None and c.hi < square:
        ctx.fail(f"the channels of data must be at least stride^2 = {square}, got {shape.brief()}", position=0)
    if c.is_static and c.lo % square:
        ctx.fail(f"the channels of data must be a multiple of stride^2 = {square}, got {shape.brief()}",
                 position=0, hint="OpenVINO's reference would read outside the data")
    out = [n, dim_mul(c, square)]
    for dim in (h, w):
        quotients = dim_div_bounds(dim, stride)
        if quotients is None:
            ctx.fail(f"H and W of data must be divisible by stride {stride}, got {shape.brief()}", position=0)
        out.append(quotients)
    return [TensorSpec(data.element_type, PartialShape(tuple(out)))], {"stride": stride}


def reorg_yolo(data: np.ndarray, *, stride: int) -> np.ndarray:
    """ReorgYolo-2 (see the module docstring): a new array."""
    n, c, h, w = data.shape
    square = stride * stride
    if c % square or h % stride or w % stride:
        raise InputError(f"data {list(data.shape)}: the channels must be a multiple of stride^2 = {square} and H, W"
                         f" multiples of stride {stride}", port="input 0 (data)")
    part = c // square
    view = data.reshape(n, part, h, stride, w, stride)  # in' [N, C', H * s, W * s] with h*s+oy, w*s+ox split
    out = view.transpose(0, 3, 5, 1, 2, 4).copy()  # [N, oy, ox, C', H, W]: c = (oy * s + ox) * C' + c'
    return out.reshape(n, c * square, h // stride, w // stride)


def _batch_region(params, inputs, outputs, axes):
    axis = axes[0]
    if axis is None:
        return [None]
    if axis != 0:
        return "only the first axis (N) of RegionYolo's data may be a batch axis: the others are regions and cells"
    if params["do_softmax"] and params["axis"] == 0 and params["end_axis"] >= 1:
        return "the output flattens the batch axis with the following ones (axis=0)"
    return [0]


def _batch_reorg(params, inputs, outputs, axes):
    if axes[0] is None:
        return [None]
    if axes[0] != 0:
        return "ReorgYolo reads its input as [N, C / s^2, H * s, W * s]: only N (axis 0) may be a batch axis"
    return [0]


OPS = (
    OpDef("RegionYolo", 1, 1, LATEST_OPSET, ("data",), _infer_region, region_yolo, batch=_batch_region, exact=False,
          attrs=(Attr("coords"), Attr("classes"), Attr("num"), Attr("do_softmax", "true"), Attr("mask", ""),
                 Attr("axis", "1"), Attr("end_axis", "3"), Attr("anchors", ""))),
    OpDef("ReorgYolo", 2, 2, LATEST_OPSET, ("data",), _infer_reorg, reorg_yolo, batch=_batch_reorg,
          attrs=(Attr("stride"),)),
)
