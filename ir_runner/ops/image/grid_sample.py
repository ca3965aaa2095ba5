"""GridSample-9 (torch's ``grid_sample``): samples ``data`` [N, C, H, W] at the normalised points of ``grid``
[N, H_out, W_out, 2] (x then y, in [-1, 1]) into [N, C, H_out, W_out].

Computed as OpenVINO's reference (``ov::reference::grid_sample``), in its order and types:

- the grid is read as f32 (the only grid type the reference evaluates, the one the CPU plugin converts
  every grid to) and denormalised in f32: ``((g + 1) * (size - 1)) / 2`` with ``align_corners``, else
  ``((g + 1) * size - 1) / 2``;
- ``nearest`` rounds half to even (``lrint``) and copies the data element (any data type, bit for bit);
- ``bilinear``: ``d = floor(c)``, ``q0 = (1 - dx) * v00 + dx * v01``, ``q1`` alike one row down, then
  ``dy * q1 + (1 - dy) * q0``;
- ``bicubic``: 4x4 taps from ``(floor(y) - 1, floor(x) - 1)`` with the cubic convolution coefficients of
  ``A = -0.75`` (each coefficient evaluated as the reference writes it), summed in order from 0: each row
  over x, then the rows over y;
- padding: ``zeros`` reads 0 outside, ``border`` clamps the index, ``reflection`` folds the integer index:
  ``i mod 2n``, mirrored as ``2n - 1 - i`` (without ``align_corners``), or ``|i| mod 2(n - 1)``, mirrored as
  ``2(n - 1) - i`` (with it; a size of 1 gives index 0).

Types: f32 data is bit-exact against the reference (``Node.evaluate``, which only evaluates f32 data with an
f32 grid). Other data types follow the CPU plugin, which converts them to f32 (integers to i32) and back:
f16 and bf16 data are interpolated in f32 and rounded once to the data type (bound: 1 ULP of the data type
from the CPU plugin, whose f32 sums may differ in the last bit); f64 data is interpolated in f64 with the
f32 weights (the reference's type rules; the CPU plugin computes it in f32: the difference stays below
``32 * eps(f32)`` times the largest magnitude in the data); integer data is interpolated in f32 and converted
toward zero (the reference's C conversion, and the CPU plugin's for 16- to 64-bit integers; its i8 and u8
results round to nearest instead; where its f32 sums differ in the last bit from ours, a result near an
integer may differ by 1). The CPU plugin's own f32 results differ from the reference
in the last bits (it contracts products into FMAs): see docs/semantics.md (GridSample).

Non-finite or huge coordinates (beyond int64) become the index -2**63, as the reference's conversion does
on x86; where the reference then reads outside the data (reflection with ``align_corners``) ir-run reads
the nearest edge. Empty spatial data (H or W = 0) reads zeros in every padding mode (the reference divides
by zero or reads outside the data for border and reflection)."""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC_DIM, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef

_MODES = ("bilinear", "bicubic", "nearest")
_PADDINGS = ("zeros", "border", "reflection")
_F32 = np.float32
_A = _F32(-0.75)  # the cubic convolution constant of the reference


def infer_grid_sample(ctx: OpContext):
    data, grid = ctx.inputs
    params = {
        "mode": ctx.attr_choice("mode", {m: m for m in _MODES}, "bilinear"),
        "padding_mode": ctx.attr_choice("padding_mode", {p: p for p in _PADDINGS}, "zeros"),
        "align_corners": ctx.attr_bool("align_corners", False),
    }
    if grid.element_type.kind not in ("float", "dynamic") or grid.element_type.bits < 16:
        ctx.fail(f"grid must be f16, bf16, f32 or f64, got {grid.element_type}", position=1)
    if data.element_type.kind in ("bool", "string") or data.element_type.bits < 8:
        ctx.fail(f"data must be a number type of 8 bits or more, got {data.element_type}", position=0)
    for position, name in ((0, "data"), (1, "grid")):
        rank = ctx.inputs[position].shape.rank
        if rank is not None and rank != 4:
            ctx.fail(f"{name} must be 4-D, got {ctx.inputs[position].shape.brief()}", position=position)
    dims = [DYNAMIC_DIM] * 4
    if grid.shape.rank is not None:
        g = grid.shape.dims
        if not g[3].contains(2):
            ctx.fail(f"the last dim of grid must be 2 (x, y), got {grid.shape.brief()}", position=1)
        dims[0], dims[2], dims[3] = g[0], g[1], g[2]
    if data.shape.rank is not None:
        d = data.shape.dims
        batch = merge_dims(dims[0], d[0])
        if batch is None:
            ctx.fail(f"the batch dims of data ({d[0]}) and grid ({dims[0]}) differ", position=1)
        dims[0], dims[1] = batch, d[1]
    return [TensorSpec(data.element_type, PartialShape(tuple(dims)))], params


# -- kernel ------------------------------------------------------------------------------------------------


def _denormalize(g: np.ndarray, size: int, align_corners: bool) -> np.ndarray:
    one, two = _F32(1), _F32(2)
    if align_corners:
        return (g + one) * (_F32(size) - one) / two
    return ((g + one) * _F32(size) - one) / two


def _to_index(x: np.ndarray) -> np.ndarray:
    """f32 -> int64 as C's conversion on x86: NaN, infinities and values beyond int64 become -2**63."""
    with np.errstate(invalid="ignore"):
        return x.astype(np.int64)


class _Taps:
    """Reads data[n, :, y, x] under a padding mode as (N, C, P) arrays. ``row(y)`` and ``column(x)`` resolve
    integer indices (N, P) once (each serves several taps); ``at(row, column)`` gathers."""

    def __init__(self, data: np.ndarray, padding: str, align_corners: bool, dtype: np.dtype) -> None:
        n, c, self.h, self.w = data.shape
        self.flat = data.reshape(n, c, self.h * self.w).astype(dtype, copy=False)
        self.padding, self.align = padding, align_corners

    def _fold(self, i: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(the index to read, where it is inside: None when every index is)."""
        if self.padding == "zeros":
            inside = (i >= 0) & (i < size)
            return np.where(inside, i, 0), inside
        if self.padding == "border":
            return np.clip(i, 0, size - 1), None
        if not self.align:
            i = np.mod(i, 2 * size)
            return np.where(i >= size, 2 * size - 1 - i, i), None
        period = 1 if size == 1 else 2 * (size - 1)
        i = np.fmod(np.abs(i), period)  # C's truncating %, of C's abs (which keeps -2**63)
        return np.clip(np.where(i >= size, period - i, i), 0, size - 1), None

    def row(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        index, inside = self._fold(y, self.h)
        return index * self.w, inside

    def column(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return self._fold(x, self.w)

    def at(self, row, column) -> np.ndarray:
        shape = self.flat.shape[:2] + row[0].shape[1:]
        if self.h * self.w == 0:
            return np.zeros(shape, self.flat.dtype)
        index = row[0] + column[0]
        out = np.empty(shape, self.flat.dtype)
        for n in range(index.shape[0]):  # np.take per image: ~3x faster than take_along_axis
            np.take(self.flat[n], index[n], axis=1, out=out[n])
        if row[1] is not None:
            np.copyto(out, 0, where=~(row[1] & column[1])[:, None, :])
        return out


def _cubic(r: np.ndarray) -> list[np.ndarray]:
    """The four cubic convolution weights of the fraction r (f32, as the reference evaluates them)."""
    a, one, two = _A, _F32(1), _F32(2)
    five_a, eight_a, four_a = _F32(5) * a, _F32(8) * a, _F32(4) * a
    r1, s, s2 = r + one, one - r, two - r
    return [
        ((a * r1 - five_a) * r1 + eight_a) * r1 - four_a,
        ((a + two) * r - (a + _F32(3))) * r * r + one,
        ((a + two) * s - (a + _F32(3))) * s * s + one,
        ((a * s2 - five_a) * s2 + eight_a) * s2 - four_a,
    ]


def _weighted(wa: np.ndarray, a: np.ndarray, wb: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``wa * a + wb * b``, overwriting the fresh arrays a and b."""
    a *= wa
    b *= wb
    a += b
    return a


def _dot(weights: list[np.ndarray], values: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
    """``0 + w0 * v0 + w1 * v1 + ...`` in that order (std::inner_product from a zero)."""
    total = np.zeros(np.broadcast_shapes(weights[0].shape, values[0].shape), dtype)
    for w, v in zip(weights, values):
        # (weight first, as the reference: a NaN product takes the first operand's sign; v is a fresh gather)
        total += np.multiply(w.astype(dtype, copy=False), v, out=v)
    return total


def grid_sample(data: np.ndarray, grid: np.ndarray, *, mode: str, padding_mode: str,
                align_corners: bool) -> np.ndarray:
    """GridSample-9 (see the module docstring for the arithmetic and its bound)."""
    n, c, h, w = data.shape
    _, h_out, w_out, _ = grid.shape
    g = grid.reshape(n, h_out * w_out, 2).astype(_F32)
    x = _denormalize(g[..., 0], w, align_corners)
    y = _denormalize(g[..., 1], h, align_corners)
    kind = data.dtype.kind
    if mode == "nearest":
        with np.errstate(invalid="ignore"):
            taps = _Taps(data, padding_mode, align_corners, data.dtype)
            out = taps.at(taps.row(_to_index(np.rint(y))), taps.column(_to_index(np.rint(x))))
        return out.reshape(n, c, h_out, w_out)
    work = np.dtype(np.float64) if data.dtype == np.float64 else np.dtype(_F32)
    taps = _Taps(data, padding_mode, align_corners, work)
    with np.errstate(invalid="ignore", over="ignore"):
        top, left = np.floor(y), np.floor(x)
        dy, dx = (y - top)[:, None, :], (x - left)[:, None, :]
        one = _F32(1)
        if mode == "bilinear":
            y0, y1 = taps.row(_to_index(top)), taps.row(_to_index(top + one))
            x0, x1 = taps.column(_to_index(left)), taps.column(_to_index(left + one))
            ex, ey = (one - dx).astype(work), (one - dy).astype(work)
            dx, dy = dx.astype(work), dy.astype(work)
            q0 = _weighted(ex, taps.at(y0, x0), dx, taps.at(y0, x1))
            q1 = _weighted(ex, taps.at(y1, x0), dx, taps.at(y1, x1))
            out = _weighted(dy, q1, ey, q0)
        else:
            y0, x0 = _to_index(top - one), _to_index(left - one)
            ys, xs = [taps.row(y0 + j) for j in range(4)], [taps.column(x0 + i) for i in range(4)]
            cx, cy = _cubic(dx), _cubic(dy)
            rows = [_dot(cx, [taps.at(r, col) for col in xs], work) for r in ys]
            out = _dot(cy, rows, work)
        out = out.reshape(n, c, h_out, w_out)
        if kind in "iu":  # C's conversion: toward zero (saturated here; C leaves overflow undefined)
            info = np.iinfo(data.dtype)
            return np.clip(np.trunc(out), info.min, info.max).astype(data.dtype)
        return out.astype(data.dtype, copy=False)


def _batch(params, inputs, outputs, axes):
    if axes[0] == 0 and axes[1] == 0:
        return [0]
    if axes[0] is None and axes[1] is None:
        return [None]
    return "the batch axis must be axis 0 (N) of both data and grid: each image is sampled at its own grid"


OPS = (
    OpDef("GridSample", 9, 9, LATEST_OPSET, ("data", "grid"), infer_grid_sample, grid_sample, batch=_batch,
          exact=False, attrs=(Attr("align_corners", "false", ("true", "false")), Attr("mode", "bilinear", _MODES),
                              Attr("padding_mode", "zeros", _PADDINGS))),
)
