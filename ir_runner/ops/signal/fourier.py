"""The discrete Fourier transforms: DFT-7, IDFT-7 (complex to complex), RDFT-9 (real to complex) and IRDFT-9
(complex to real), as ``torch.fft.*`` converts to them; and the short-time transform STFT-15 (real to complex),
as ``torch.stft`` converts to it (see :func:`stft`).

Inputs: ``data``, ``axes`` (1-D i32/i64) and the optional ``signal_size`` (1-D i32/i64, one entry per axis).
A complex tensor is a float tensor whose last dim is 2 (real, imaginary); DFT, IDFT and IRDFT take one, so
their axes lie in ``[-(r-1), r-2]`` (a negative axis ``a`` means ``r-1+a``), RDFT's in ``[-r, r-1]``.
``signal_size[i]`` pads the input with zeros at the end of ``axes[i]`` or trims it to that length (-1: the
input's length; for IRDFT's last axis ``2*(n-1)``); IRDFT's last axis reads ``signal_size//2+1`` input
points, RDFT's output keeps ``signal_size//2+1``. IDFT and IRDFT divide by the product of the signal sizes.

Kernels compute in float64 with numpy's pocketfft and round once to the data type (f32, f16, bf16; STFT also
f64): see :func:`dft` and :func:`stft` for the bounds. ``Node.evaluate`` has no kernel for these operations
(their reference runs only in the template plugin): the oracle is the CPU plugin, where it works
(docs/semantics.md, "Fourier transforms").
"""

from __future__ import annotations

import numpy as np

from ...types import DYNAMIC, DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, ElementType, PartialShape, TensorSpec
from ..api import LATEST_OPSET, OpContext, OpDef
from ..toolkit.axes import normalise_axis
from ..toolkit.dims import dim_add, floor_div
from ..toolkit.numeric import round_from_f64
from ..toolkit.partial import const_int

NAMES = ("data", "axes", "signal_size")
ROLES = ("data", "axes", "sizes")
FLOAT_TYPES = ("f32", "f16", "bf16")
_COMPLEX = {"DFT": True, "IDFT": True, "RDFT": False, "IRDFT": True}  # does data hold complex pairs?


def _check_types(ctx: OpContext) -> ElementType:
    et = ctx.inputs[0].element_type
    if et.name not in FLOAT_TYPES + ("dynamic",):
        ctx.fail(f"data must be f32, f16 or bf16, got {et}", position=0)
    for position in range(1, len(ctx.inputs)):
        other = ctx.inputs[position].element_type
        if other.name not in ("i32", "i64", "dynamic"):
            ctx.fail(f"{NAMES[position]} must be i32 or i64, got {other}", position=position)
        rank = ctx.inputs[position].shape.rank
        if rank is not None and rank != 1:
            ctx.fail(f"{NAMES[position]} must be 1-D, got {ctx.inputs[position].shape.brief()}", position=position)
    return et


def _check_shapes(ctx: OpContext, complex_data: bool) -> int | None:
    """The data rank (None when dynamic) after the rank, pair and length checks OpenVINO makes."""
    data = ctx.inputs[0].shape
    rank = data.rank
    axes_len = _length(ctx, 1)
    if rank is not None:
        least = 2 if complex_data else 1
        if rank < least:
            ctx.fail(f"data must have rank {least} or more, got {data.brief()}", position=0)
        if complex_data and not data.dims[-1].contains(2):
            ctx.fail(f"the last dim of data must be 2 (real and imaginary parts), got {data.brief()}", position=0,
                     hint="a complex tensor is stored as [..., 2]; RDFT takes real data")
        usable = rank - 1 if complex_data else rank
        if axes_len is not None and axes_len > usable:
            ctx.fail(f"{axes_len} axes for data {data.brief()}: at most {usable} can be transformed", position=1)
    sizes_len = _length(ctx, 2) if len(ctx.inputs) == 3 else None
    if axes_len is not None and sizes_len is not None and axes_len != sizes_len:
        ctx.fail(f"signal_size has {sizes_len} elements but axes has {axes_len}: they must be equal", position=2)
    return rank


def _length(ctx: OpContext, position: int) -> int | None:
    dims = ctx.inputs[position].shape.dims
    return dims[0].lo if dims is not None and dims[0].is_static else None


def _axes(ctx: OpContext, rank: int, complex_data: bool) -> tuple[int, ...] | None:
    """The constant axes, normalised (None when computed at run time); an error names a bad or repeated one."""
    value = ctx.const_value(1)
    if value is None:
        return None
    raw = [int(a) for a in np.asarray(value).reshape(-1)]
    usable = rank - 1 if complex_data else rank
    if len(raw) > usable:
        ctx.fail(f"{len(raw)} axes for data of rank {rank}: at most {usable} can be transformed", position=1)
    hint = "the last dim holds the complex pair and is not an axis" if complex_data else None
    axes = tuple(normalise_axis(ctx, axis, usable, position=1, hint=hint) for axis in raw)
    if len(set(axes)) != len(axes):
        ctx.fail(f"axes must be unique, got {raw} (normalised {list(axes)})", position=1)
    return axes


def _sizes(ctx: OpContext, count: int) -> tuple[int, ...] | None:
    """The constant signal sizes (-1 kept), None when computed at run time; each must be -1 or >= 0."""
    value = ctx.const_value(2)
    if value is None:
        return None
    sizes = tuple(int(s) for s in np.asarray(value).reshape(-1))
    if len(sizes) != count:
        ctx.fail(f"signal_size has {len(sizes)} elements but axes has {count}: they must be equal", position=2)
    if any(s < -1 for s in sizes):
        ctx.fail(f"signal_size entries must be -1 or non-negative, got {list(sizes)}", position=2)
    return sizes


def _half(dim: Dim) -> Dim:
    """RDFT's output length ``n//2 + 1`` of an interval (0 stays 0, as OpenVINO infers)."""
    def bound(b: int | None) -> int | None:
        return b if b is None or b <= 0 else b // 2 + 1
    return Dim(bound(dim.lo), bound(dim.hi))


def _doubled(dim: Dim) -> Dim:
    """IRDFT's default output length ``2*(n-1)`` of an interval, clipped at 0 (as OpenVINO infers)."""
    return Dim(2 * max(dim.lo - 1, 0), None if dim.hi is None else 2 * max(dim.hi - 1, 0))


def _infer(kind: str):
    complex_data = _COMPLEX[kind]

    def infer(ctx: OpContext):
        et = _check_types(ctx)
        rank = _check_shapes(ctx, complex_data)
        sized = len(ctx.inputs) == 3
        if rank is None:
            return [TensorSpec(et, DYNAMIC_SHAPE)], {"kind": kind, "axes": None, "sizes": None}
        axes = _axes(ctx, rank, complex_data)
        sizes = None
        if axes is not None:
            sizes = _sizes(ctx, len(axes)) if sized else (-1,) * len(axes)
        dims = list(ctx.inputs[0].shape.dims)  # (a complex pair's dim stays as declared, -1 included)
        shape = _output_dims(ctx, kind, dims, axes, sizes)
        params = {"kind": kind, "axes": axes if sizes is not None else None, "sizes": sizes}
        return [TensorSpec(et, PartialShape(tuple(shape)))], params

    return infer


def _output_dims(ctx: OpContext, kind: str, dims: list[Dim], axes, sizes) -> list[Dim]:
    """The output dims as OpenVINO's shape inference gives them from the data dims."""
    sized = len(ctx.inputs) == 3
    if kind in ("DFT", "IDFT"):
        if axes is None:
            return [DYNAMIC_DIM] * (len(dims) - 1) + dims[-1:] if sized else dims
        if sized:
            _apply_sizes(dims, axes, _partial_sizes(ctx, len(axes)))
        return dims
    if kind == "RDFT":
        dims = dims + [Dim(2, 2)]
    else:
        dims = dims[:-1]
    if axes is None:
        return [DYNAMIC_DIM] * (len(dims) - 1) + [Dim(2, 2)] if kind == "RDFT" else [DYNAMIC_DIM] * len(dims)
    last = axes[-1]
    if not sized:
        dims[last] = _half(dims[last]) if kind == "RDFT" else _doubled(dims[last])
        return dims
    if sizes is None:
        dims[last] = DYNAMIC_DIM
        return dims
    _apply_sizes(dims, axes, tuple(Dim(s, s) for s in sizes))
    if kind == "RDFT":
        dims[last] = _half(dims[last])
    elif sizes[-1] == -1:
        dims[last] = _doubled(dims[last])
    return dims


def _partial_sizes(ctx: OpContext, count: int) -> tuple[Dim, ...] | None:
    """What is known of DFT's signal sizes, element by element (bounds, as OpenVINO's DFT shape inference)."""
    known = ctx.partial_value(2)
    return known if known is not None and len(known) == count else None


def _apply_sizes(dims: list[Dim], axes: tuple[int, ...], sizes: tuple[Dim, ...] | None) -> None:
    for i, axis in enumerate(axes):
        size = None if sizes is None else sizes[i]
        if size is None:
            dims[axis] = DYNAMIC_DIM
        elif size != Dim(-1, -1):
            dims[axis] = Dim(max(size.lo, 0), size.hi)


def _fitted(x: np.ndarray, axes: tuple[int, ...], lengths: tuple[int, ...]) -> np.ndarray:
    """``x`` trimmed to ``lengths`` along ``axes`` or padded there with zeros at the end."""
    if all(x.shape[a] == n for a, n in zip(axes, lengths)):
        return x
    shape = list(x.shape)
    for axis, n in zip(axes, lengths):
        shape[axis] = n
    out = np.zeros(shape, x.dtype)
    common = tuple(slice(0, min(x.shape[i], shape[i])) for i in range(x.ndim))
    out[common] = x[common]
    return out


def dft(data: np.ndarray, _axes: np.ndarray, _sizes: np.ndarray | None = None, *, kind: str,
        axes: tuple[int, ...], sizes: tuple[int, ...]) -> np.ndarray:
    """DFT, IDFT, RDFT or IRDFT (``kind``) of ``data`` over ``axes`` with ``sizes`` (-1: default length).

    Computed in float64 (pocketfft) and rounded once to the data type: each output differs from the exact
    transform of the given input by at most ½ ULP of the data type plus ``N·2⁻⁵⁰·max|x|`` (``N``: the number
    of points transformed, the product of the signal sizes; ``max|x|``: the largest input magnitude read). The
    CPU plugin computes in f32: it differs from this by its own error, measured up to ``2.9·N·2⁻²³·max|x|``
    over 200 random cases (tests allow ``N·2⁻²⁰·max|x|`` plus one ULP of f16/bf16: tests/ops/test_fourier.py);
    against float64 sums this kernel stayed within ½ ULP of f32 at the largest output. A NaN or infinity read
    by a transform makes every output of that transform NaN: the CPU plugin gives the same for a NaN, NaN and
    ±inf for an infinity (pocketfft alone would keep some parts finite, multiplying by ±1 and ±i exactly)."""
    dtype = data.dtype
    if kind == "RDFT":
        x = data.astype(np.float64)
        lengths = tuple(x.shape[a] if s == -1 else s for a, s in zip(axes, sizes))
        fitted = _fitted(x, axes, lengths)
        if 0 in fitted.shape:
            shape = list(fitted.shape)
            shape[axes[-1]] = shape[axes[-1]] // 2 + 1 if shape[axes[-1]] else 0
            return np.zeros((*shape, 2), dtype)
        y = np.fft.rfftn(fitted, axes=axes)
        return round_from_f64(_spread_nan(np.stack((y.real, y.imag), axis=-1), fitted[..., None], axes), dtype)
    x = np.empty(data.shape[:-1], np.complex128)
    x.real = data[..., 0]
    x.imag = data[..., 1]
    if kind == "IRDFT":
        last = axes[-1]
        lengths = tuple((x.shape[a] if a != last else 2 * max(x.shape[a] - 1, 0)) if s == -1 else s
                        for a, s in zip(axes, sizes))
        reads = lengths[:-1] + (lengths[-1] // 2 + 1,)
        fitted = _fitted(x, axes, reads)
        if 0 in fitted.shape or lengths[-1] == 0:
            shape = list(fitted.shape)
            shape[last] = lengths[-1]
            return np.zeros(shape, dtype)
        y = np.fft.irfftn(fitted, s=lengths, axes=axes)
        pairs = fitted.view(np.float64).reshape(*fitted.shape, 2)
        return round_from_f64(_spread_nan(y[..., None], pairs, axes)[..., 0], dtype)
    lengths = tuple(x.shape[a] if s == -1 else s for a, s in zip(axes, sizes))
    fitted = _fitted(x, axes, lengths)
    if 0 in fitted.shape:
        return np.zeros((*fitted.shape, 2), dtype)
    y = np.fft.fftn(fitted, axes=axes) if kind == "DFT" else np.fft.ifftn(fitted, axes=axes)
    pairs = fitted.view(np.float64).reshape(*fitted.shape, 2)
    return round_from_f64(_spread_nan(np.stack((y.real, y.imag), axis=-1), pairs, axes), dtype)


def _spread_nan(y: np.ndarray, read: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``y`` (``[..., 2]``) with NaN in every output of a transform whose input ``read`` (``[..., 2]``, the
    points it reads) holds a NaN or an infinity."""
    finite = np.isfinite(read)
    if finite.all():
        return y
    bad = ~finite.all(axis=axes + (-1,), keepdims=True)
    y[np.broadcast_to(bad, y.shape)] = np.nan
    return y


def _batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]):
    """The batch axis stays where it is unless the transform runs over it (or over the complex pair)."""
    b = axes[0]
    if any(a is not None for a in axes[1:]):
        return "its axes or signal sizes come from the batched data"
    if b is None:
        return [None]
    if params["axes"] is None:
        return "the transformed axes are only known at run time"
    if b in params["axes"]:
        return f"it transforms over the batch axis (axis {b}): every output row mixes all input rows"
    rank = inputs[0].shape.rank
    if _COMPLEX[params["kind"]] and rank is not None and b == rank - 1:
        return "the batch axis is the dim of real and imaginary parts, which the transform combines"
    return [b]


# -- STFT-15 ---------------------------------------------------------------------------------------------------

STFT_NAMES = ("signal", "window", "frame_size", "frame_step")
STFT_ROLES = ("data", "window", "frame_size", "step")
STFT_TYPES = ("f64", "f32", "f16", "bf16")


def _stft_types(ctx: OpContext) -> ElementType:
    """The output element type (the signal's, or the window's when the signal's is dynamic) after OpenVINO's
    checks: a floating signal, a window of the same type, i32/i64 frame size and step."""
    signal, window = ctx.inputs[0].element_type, ctx.inputs[1].element_type
    if signal.name not in STFT_TYPES + ("dynamic",):
        ctx.fail(f"signal must be f64, f32, f16 or bf16, got {signal}", position=0)
    if window.name not in STFT_TYPES + ("dynamic",) or DYNAMIC not in (signal, window) and window != signal:
        ctx.fail(f"window must be a floating type matching the signal's ({signal}), got {window}", position=1)
    for position in (2, 3):
        other = ctx.inputs[position].element_type
        if other.name not in ("i32", "i64", "dynamic"):
            ctx.fail(f"{STFT_NAMES[position]} must be i32 or i64, got {other}", position=position)
    return window if signal == DYNAMIC else signal


def _stft_ranks(ctx: OpContext) -> None:
    for position, ranks, what in ((0, (1, 2), "1-D [signal_size] or 2-D [batch, signal_size]"),
                                  (1, (1,), "1-D [window_size]"), (2, (0,), "a scalar"), (3, (0,), "a scalar")):
        rank = ctx.inputs[position].shape.rank
        if rank is not None and rank not in ranks:
            ctx.fail(f"{STFT_NAMES[position]} must be {what}, got {ctx.inputs[position].shape.brief()}",
                     position=position)


def _stft_infer(ctx: OpContext):
    et = _stft_types(ctx)
    _stft_ranks(ctx)
    transpose = ctx.attr_bool("transpose_frames", False)  # (OpenVINO reads a missing one as false)
    signal = ctx.inputs[0].shape
    params = {"frame_size": None, "frame_step": None, "transpose": transpose}
    if signal.rank is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], params
    batch = list(signal.dims[:-1])
    size, step = const_int(ctx, 2), const_int(ctx, 3)
    if size is None or step is None:
        return [TensorSpec(et, PartialShape((*batch, DYNAMIC_DIM, DYNAMIC_DIM, Dim(2, 2))))], params
    length = signal.dims[-1]
    if size < 1 or length.hi is not None and size > length.hi:
        ctx.fail(f"frame_size is {size} but must be in the range [1, {length}] (the signal length)", position=2,
                 hint="a frame cannot be longer than the signal" if size > 0 else None)
    if step < 1:
        ctx.fail(f"frame_step is {step} but must be greater than zero", position=3)
    window = ctx.inputs[1].shape
    if window.dims is not None and window.dims[0].is_static and not 0 < window.dims[0].lo <= size:
        ctx.fail(f"the window has {window.dims[0].lo} points but must have 1 to frame_size={size}", position=1,
                 hint="a window shorter than the frame is padded with zeros on both sides; a longer one is an error")
    left = Dim(max(length.lo - size, 0), None if length.hi is None else length.hi - size)
    frames = dim_add(floor_div(left, step), 1)
    bins = Dim(size // 2 + 1, size // 2 + 1)
    dims = (*batch, bins, frames, Dim(2, 2)) if transpose else (*batch, frames, bins, Dim(2, 2))
    params.update(frame_size=size, frame_step=step)
    return [TensorSpec(et, PartialShape(dims))], params


def stft(signal: np.ndarray, window: np.ndarray, _size: np.ndarray, _step: np.ndarray, *, frame_size: int,
         frame_step: int, transpose: bool) -> np.ndarray:
    """STFT-15: frame ``t`` is ``signal[..., t*frame_step : t*frame_step + frame_size]`` (``(L - frame_size) //
    frame_step + 1`` frames of a signal of length ``L``), multiplied by the window padded with zeros to
    ``frame_size`` (``(frame_size - len(window)) // 2`` zeros before it, as ``torch.stft`` centres it); each frame's
    real DFT gives ``frame_size // 2 + 1`` complex pairs. Output ``[batch?, frames, bins, 2]``, or ``[batch?, bins,
    frames, 2]`` with ``transpose_frames``.

    Computed in float64 (pocketfft; the window product is exact for f32, f16 and bf16) and rounded once to the
    signal's type: each output differs from the exact transform of the given signal and window by at most ½ ULP
    of the type plus ``frame_size·2⁻⁵⁰·max|x·w|`` (``max|x·w|``: the frame's largest windowed sample); f64 gets
    only the second term. The oracle is the CPU plugin (``Node.evaluate`` has no STFT kernel), which computes in
    f32 (f64 models too): it differs from this by its own error, measured up to ``0.4·frame_size·2⁻²³·max|x·w|``
    over 200 random f32 cases (tests allow ``frame_size·2⁻²⁰·max|x|·max|w|`` plus one ULP of f16/bf16:
    tests/ops/test_fourier.py); against float64 sums this kernel stayed within ½ ULP of f32 at the largest
    output. A NaN or infinity in a frame makes every output of that frame NaN, as in :func:`dft` (OpenVINO's
    reference multiplies every sample by the padded window, and ``NaN·0`` is NaN): the CPU plugin makes the same
    frames non-finite, but not every output of them (a NaN at a frame's first sample leaves the imaginary parts
    finite; an infinity gives ±inf and NaN)."""
    x = signal.astype(np.float64)
    padded = np.zeros(frame_size, np.float64)
    start = (frame_size - window.shape[0]) // 2
    padded[start:start + window.shape[0]] = window
    frames = np.lib.stride_tricks.sliding_window_view(x, frame_size, axis=-1)[..., ::frame_step, :] * padded
    y = np.fft.rfft(frames, axis=-1)
    shape = (*y.shape[:-2], y.shape[-1], y.shape[-2], 2) if transpose else (*y.shape, 2)
    out = np.empty(shape, np.float64)
    pairs = np.swapaxes(out, -3, -2) if transpose else out  # [..., frames, bins, 2], a view of out
    pairs[..., 0] = y.real
    pairs[..., 1] = y.imag
    _spread_nan(pairs, frames[..., None], (-2,))
    return out if signal.dtype == np.float64 else round_from_f64(out, signal.dtype)


def _stft_batch(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]):
    """A batch of signals (axis 0 of a 2-D signal) stays axis 0; frames mix the samples of a signal's axis."""
    b = axes[0]
    if any(a is not None for a in axes[1:]):
        return "its window, frame size or frame step come from the batched data"
    if b is None:
        return [None]
    if inputs[0].shape.rank == 2 and b == 0:
        return [0]
    return f"the batch axis (axis {b}) is the signal's samples, which overlapping frames mix"


OPS = tuple(
    OpDef(kind, version, version, LATEST_OPSET, NAMES, _infer(kind), dft, roles=ROLES, min_inputs=2, batch=_batch,
          exact=False)
    for kind, version in (("DFT", 7), ("IDFT", 7), ("RDFT", 9), ("IRDFT", 9))
) + (OpDef("STFT", 15, 15, LATEST_OPSET, STFT_NAMES, _stft_infer, stft, roles=STFT_ROLES, batch=_stft_batch,
           exact=False),)
