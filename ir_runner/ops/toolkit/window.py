"""Shared by the convolution and pooling families: OpenVINO's dimension interval arithmetic, attribute
reading (strides, dilations, pads, ``auto_pad``) and padding of windowed inputs.

Dims are :class:`~ir_runner.types.Dim` intervals (``hi=None``: unbounded). The arithmetic is OpenVINO's
``Interval``: sums and products saturate at infinity, differences clip at 0 (``[2,5] - [1,9] = [0,4]``),
and an int converted to a dimension follows ``Dimension(int)``: -1 is a dynamic dim, any other negative
value is 0 (so a pad sum of -1 makes a padded dim dynamic, as it does in OpenVINO).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...errors import UnsupportedError
from ...types import DYNAMIC_DIM, Dim, ElementType
from ..api import OpContext
from .dims import dim_add, dim_mul, dim_sub

AUTO_PADS = {"explicit": "explicit", "notset": "explicit", "valid": "valid", "same_upper": "same_upper",
             "same_lower": "same_lower"}


INTEGER_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


def refuse_element_type(ctx: OpContext, et: ElementType, allowed: tuple[str, ...], what: str) -> None:
    """An UnsupportedError at load for an element type the windowed kernels do not compute (f8, i4, u1...; or
    integers where ``allowed`` has floats only), instead of at the first run."""
    if et.kind != "dynamic" and et.name not in allowed:
        raise UnsupportedError(f"{what} of element type {et} is not implemented", layer=ctx.ref)


def as_dim(n: int) -> Dim:
    """``ov::Dimension(n)``: -1 is dynamic, other negatives clip to 0."""
    if n == -1:
        return DYNAMIC_DIM
    n = max(n, 0)
    return Dim(n, n)


def dilated(d: Dim, dilation: int) -> Dim:
    """``(d - 1) * dilation + 1`` as OpenVINO computes it on a dimension."""
    return dim_add(dim_mul(dim_sub(d, Dim(1, 1)) or Dim(0, 0), dilation), Dim(1, 1))


def same_padding(d: Dim, kernel: int, dilation: int, stride: int) -> tuple[int, int]:
    """(smaller half, larger half) of the padding ``same_*`` needs for a static dim (0, 0 otherwise)."""
    if not d.is_static:
        return 0, 0
    out = -(-d.lo // stride)
    total = max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - d.lo)
    return total // 2, total - total // 2


def crop_negative(x: np.ndarray, begin, end) -> tuple[np.ndarray, tuple, tuple]:
    """``x`` cropped where pads are negative (a view) and the pads that remain (all >= 0)."""
    spatial = len(begin)
    crop = tuple(slice(max(-b, 0), x.shape[x.ndim - spatial + i] - max(-e, 0))
                 for i, (b, e) in enumerate(zip(begin, end)))
    return x[(Ellipsis,) + crop], tuple(max(b, 0) for b in begin), tuple(max(e, 0) for e in end)


def pad_input(x: np.ndarray, begin, end, value=0) -> np.ndarray:
    """``x`` padded (or cropped, for negative pads) on its trailing spatial axes."""
    x, begin, end = crop_negative(x, begin, end)
    if not any(begin) and not any(end):
        return x
    spatial = len(begin)
    shape = x.shape[:-spatial] + tuple(d + b + e for d, b, e in zip(x.shape[-spatial:], begin, end))
    out = np.zeros(shape, dtype=x.dtype) if value == 0 else np.full(shape, value, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(b, b + d) for b, d in zip(begin, x.shape[-spatial:]))] = x
    return out


def tap_views(x: np.ndarray, kernel, strides, dilations, out_spatial) -> list[np.ndarray]:
    """Per kernel tap (in ``np.ndindex`` order), the view ``x[..., o*s + k*d]`` of shape ``x.shape[:-n] +
    out_spatial`` (``x`` already padded). With a stride above 1 on the last axis and several taps along it,
    that axis is first split into contiguous phase planes (``x[..., p::s]``, one copy of ``x`` in all), so
    that every view reads unit-stride rows and numpy's vector loops apply."""
    n = len(kernel)
    lead = (slice(None),) * (x.ndim - n)
    step, dilation, count = strides[-1], dilations[-1], out_spatial[-1]
    planes: dict[int, np.ndarray] | None = {} if step > 1 and kernel[-1] > 1 and count > 1 else None
    views = []
    for tap in np.ndindex(*kernel):
        index = lead + tuple(slice(k * d, k * d + (o - 1) * s + 1, s) if o > 0 else slice(0, 0)
                             for k, d, o, s in zip(tap[:-1], dilations[:-1], out_spatial[:-1], strides[:-1]))
        start = tap[-1] * dilation
        if planes is None:
            last = slice(start, start + (count - 1) * step + 1, step) if count > 0 else slice(0, 0)
            views.append(x[index + (last,)])
            continue
        phase, shift = start % step, start // step
        if phase not in planes:
            planes[phase] = np.ascontiguousarray(x[..., phase::step])
        views.append(planes[phase][index + (slice(shift, shift + count),)])
    return views


class FlatTaps:
    """The kernel taps of a windowed op as 1-D runs. ``x`` padded by ``begin``/``end`` (>= 0) elements of
    ``value`` is written straight into stride phase planes (one buffer, each spatial dim rounded up to a
    multiple of its stride), each plane flat per leading index. Output position ``o`` of tap ``t`` is then
    ``views[t][..., Σ o_i·pitch_i]``: every tap is one contiguous run of ``span`` elements, so elementwise
    loops over taps run long unit-stride rows even for small spatial dims. Positions between rows
    (``o_i >= out_i`` past the first axis) hold values of no window; :meth:`crop` drops them from a
    ``[..., span]`` accumulator."""

    def __init__(self, x: np.ndarray, begin, end, value, kernel, strides, dilations, out_spatial) -> None:
        n = len(kernel)
        lead = x.shape[:-n]
        geometry = _flat_taps_geometry(x.shape[-n:], tuple(begin), tuple(end), tuple(kernel), tuple(strides),
                                       tuple(dilations), tuple(out_spatial))
        planes, copies, self.pitch, self.span, taps = geometry
        if copies is None:
            flat = np.ascontiguousarray(x).reshape(lead + (1, math.prod(planes)))
        else:
            shape = lead + tuple(strides) + planes
            buffer = np.zeros(shape, dtype=x.dtype) if value == 0 else np.full(shape, value, dtype=x.dtype)
            for target, source in copies:
                buffer[target] = x[source]
            flat = buffer.reshape(lead + (math.prod(strides), math.prod(planes)))
        self.out_spatial, self.planes = tuple(out_spatial), planes
        self.views = [flat[..., phase, shift:shift + self.span] for phase, shift in taps]

    def crop(self, acc: np.ndarray) -> np.ndarray:
        """``acc`` [..., span] (C-contiguous) as a new C-contiguous [..., *out_spatial] array."""
        if self.out_spatial[1:] == self.planes[1:]:  # no positions between rows
            return acc.reshape(acc.shape[:-1] + self.out_spatial)
        strides = acc.strides[:-1] + tuple(p * acc.itemsize for p in self.pitch)
        view = np.lib.stride_tricks.as_strided(acc, acc.shape[:-1] + self.out_spatial, strides, writeable=False)
        return view.copy()



@functools.lru_cache(maxsize=1024)
def _flat_taps_geometry(dims, begin, end, kernel, strides, dilations, out_spatial):
    """What :class:`FlatTaps` computes from the shapes alone (cached: a plan repeats its layers' geometry):
    the phase planes' dims, the (target, source) index pairs that fill them (None: ``x`` is used as is), the
    pitch of each spatial axis, the span of a run, and each tap's (phase number, shift)."""
    planes = tuple(-(-(d + b + e) // s) for d, b, e, s in zip(dims, begin, end, strides))
    copies = None
    if not (all(s == 1 for s in strides) and not any(begin) and not any(end)):
        copies = []
        for phase in np.ndindex(*strides):
            source, target = [], []
            for p, s, b, d in zip(phase, strides, begin, dims):
                first = max(-(-(b - p) // s), 0)  # first plane index inside the data
                start = first * s + p - b
                if start >= d:
                    break
                count = -(-(d - start) // s)
                source.append(slice(start, start + (count - 1) * s + 1, s))
                target.append(slice(first, first + count))
            else:
                copies.append(((Ellipsis,) + phase + tuple(target), (Ellipsis,) + tuple(source)))
        copies = tuple(copies)
    n = len(kernel)
    pitch = tuple(math.prod(planes[i + 1:]) for i in range(n))
    span = sum((o - 1) * p for o, p in zip(out_spatial, pitch)) + 1
    taps = []
    for tap in np.ndindex(*kernel):
        phase = [k * d % s for k, d, s in zip(tap, dilations, strides)]
        shift = sum(k * d // s * p for k, d, s, p in zip(tap, dilations, strides, pitch))
        taps.append((int(np.ravel_multi_index(phase, strides)), shift))
    return planes, copies, pitch, span, tuple(taps)

def batch_axis_zero(params, inputs, outputs, axes) -> list | str:
    """Windowed ops keep a batch axis that is axis 0 of the data (N); parameter inputs (filters, offsets
    with their own batch, an output shape) must not be split."""
    if axes[0] != 0:
        return "the batch axis is not the data's axis 0 (N): windows mix the other axes"
    for position, axis in enumerate(axes[1:], start=1):
        if axis is not None and not (position in (1, 3) and axis == 0 and params.get("deformable")):
            return f"input {position} (filters or a shape) would be split along with the batch"
    return [0] * len(outputs)
