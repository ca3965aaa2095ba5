"""RGBtoNV12-17 and BGRtoNV12-17: ``[N, H, W, 3]`` RGB (BGR) images to NV12 (OpenVINO 2026.4's opset17), the
inverse of NV12toRGB-8 (``color.py``). ``single_plane`` (the default): one ``[N, H * 3 / 2, W, 1]`` tensor, the Y
rows then the interleaved U, V rows; else Y ``[N, H, W, 1]`` and UV ``[N, H / 2, W / 2, 2]``. H and W must be even.

As OpenVINO's reference (``ov::reference::color_convert_to_nv12``), in f32 (each product and sum rounded, left
to right): ``Y = 0.257 R + 0.504 G + 0.098 B + 16``, ``U = -0.148 R - 0.291 G + 0.439 B + 128``, ``V = 0.439 R -
0.368 G - 0.071 B + 128``, each clamped to [0, 255] (u8: rounded half away from zero first; NaN stays NaN) and
converted to the type; U and V are the means of the 2x2 block's converted values (``((a + b) + c) + d) / 4``,
u8: rounded half away from zero). Bit-exact against a loop written from the C++ source: the wheel has no
``evaluate`` and the CPU plugin no kernel for them.
"""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC_DIM, Dim, PartialShape, TensorSpec
from ..api import NEWEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.dims import dim_div
from ..toolkit.numeric import Arith
from ..toolkit.rounding import round_half_away
from ._color import color_element_type

F32 = np.float32
Y_ROW = (F32(0.257), F32(0.504), F32(0.098), F32(16))
U_ROW = (F32(-0.148), F32(0.291), F32(0.439), F32(128))
V_ROW = (F32(0.439), F32(0.368), F32(0.071), F32(128))


def _infer(ctx: OpContext):
    (image,) = ctx.inputs
    et = color_element_type(ctx)
    single = ctx.attr_bool("single_plane", True)
    dims = list(image.shape.dims) if image.shape.rank is not None else [DYNAMIC_DIM] * 4
    if image.shape.rank not in (None, 4):
        ctx.fail(f"the image must have 4 dims (N, H, W, C), got {image.shape.brief()}", position=0)
    if not dims[3].contains(3):
        ctx.fail(f"the image must have 3 channels (the last dim), got {dims[3]}", position=0)
    for axis, name in ((1, "height"), (2, "width")):
        if dim_div(dims[axis], 2) is None:
            ctx.fail(f"the image {name} must be even, got {dims[axis]}", position=0)
    n, h, w = dims[:3]
    if single:
        rows = h if h == DYNAMIC_DIM else Dim(-(-h.lo * 3 // 2), None if h.hi is None else h.hi * 3 // 2)
        return [TensorSpec(et, PartialShape((n, rows, w, Dim(1, 1))))], {"single": True}
    return [TensorSpec(et, PartialShape((n, h, w, Dim(1, 1)))),
            TensorSpec(et, PartialShape((n, dim_div(h, 2), dim_div(w, 2), Dim(2, 2))))], {"single": False}


def _clamp(x: np.ndarray) -> np.ndarray:
    """``std::min(std::max(x, 0.f), 255.f)``: NaN stays NaN."""
    return np.where(x < 0, F32(0), np.where(F32(255) < x, F32(255), x))


def _channel(row: tuple, r: np.ndarray, g: np.ndarray, b: np.ndarray, signs: tuple[int, int, int]) -> np.ndarray:
    """``c0 r ± c1 g ± c2 b + c3``, left to right in f32 (``signs``: + or - before each term)."""
    terms = (row[0] * r, row[1] * g, row[2] * b)
    total = terms[0] if signs[0] > 0 else -terms[0]
    for term, sign in zip(terms[1:], signs[1:]):
        total = total + term if sign > 0 else total - term
    return total + row[3]


def _as(x: np.ndarray, dtype: np.dtype, integral: bool) -> np.ndarray:
    if integral:
        return _clamp(round_half_away(x)).astype(dtype)
    return Arith(dtype).of(x) if dtype.itemsize < 4 else x.astype(dtype)


def _convert(image: np.ndarray, bgr: bool, single: bool):
    integral = image.dtype.kind == "u"
    wide = image.astype(F32)
    r, g, b = (wide[..., i] for i in ((2, 1, 0) if bgr else (0, 1, 2)))
    with np.errstate(invalid="ignore", over="ignore"):
        y = _as(_clamp(_channel(Y_ROW, r, g, b, (1, 1, 1))) if not integral else
                _channel(Y_ROW, r, g, b, (1, 1, 1)), image.dtype, integral)
        chroma = []
        for row, signs in ((U_ROW, (1, -1, 1)), (V_ROW, (1, -1, -1))):
            value = _channel(row, r, g, b, signs)
            value = _as(value if integral else _clamp(value), image.dtype, integral).astype(F32)
            total = ((value[:, 0::2, 0::2] + value[:, 0::2, 1::2]) + value[:, 1::2, 0::2]) + value[:, 1::2, 1::2]
            mean = total / F32(4)
            chroma.append(round_half_away(mean).astype(image.dtype) if integral else _as(mean, image.dtype, False))
    uv = np.stack(chroma, axis=-1)  # [N, H/2, W/2, 2]
    if not single:
        return y[..., None], uv
    n, h, w = y.shape
    return np.concatenate([y, uv.reshape(n, h // 2, w)], axis=1)[..., None]


def _kernel(bgr: bool):
    def convert(image: np.ndarray, *, single: bool):
        return _convert(image, bgr, single)
    convert.__doc__ = f"{'BGR' if bgr else 'RGB'}toNV12-17 (see the module docstring)."
    return convert


def _batch(params, inputs, outputs, axes):
    return [0] * len(outputs) if axes[0] == 0 else "the batch axis must be N (axis 0): the others hold one image"


OPS = tuple(
    OpDef(f"{order}toNV12", 17, 17, NEWEST_OPSET, ("image",), _infer, _kernel(order == "BGR"), batch=_batch,
          attrs=(Attr("single_plane", "true", ("true", "false")),))
    for order in ("RGB", "BGR")
)
