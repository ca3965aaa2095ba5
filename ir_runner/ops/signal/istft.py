"""ISTFT-16: the inverse short-time Fourier transform, STFT-15's frames (``transpose_frames`` layout:
``data`` ``[batch?, frame_size // 2 + 1, frames, 2]``) back to a signal by windowed overlap-add.

As OpenVINO's reference (``ov::reference::istft``): each frame's inverse real DFT (``frame_size`` samples, the
imaginary parts of the DC and Nyquist bins ignored) times the window (zero-padded to ``frame_size``, centred),
added at ``frame * frame_step``; every sample divided by the sum of the squared windows over it (0 where that
sum is 0), times ``sqrt(frame_size)`` when ``normalized``. ``center`` drops ``frame_size // 2`` samples at the
start. The output length is ``signal_length`` when given, else OpenVINO's inferred one: ``(frames - 1) *
frame_step``, plus ``frame_size`` without ``center`` and ``frame_size % 2`` with it (the signal less ``frame_size``
rounded down to even); samples past the computed signal are 0. Only the samples of the output are computed (a
huge ``frame_step`` with a short ``signal_length`` costs no memory).

OpenVINO's core node has no ``evaluate``; the oracle is the CPU plugin (f32). ir-run computes in float64 and
rounds once to the data's type: within ``BOUND`` relative to the largest output magnitude of the CPU plugin's
f32 result (docs/semantics.md; measured over random cases).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC, DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.numeric import round_from_f64
from ..toolkit.partial import const_int

STFT_TYPES = ("f64", "f32", "f16", "bf16")  # (as STFT-15's)
NAMES = ("data", "window", "frame_size", "frame_step", "signal_length")
ROLES = ("data", "window", "frame_size", "step", "shape")
BOUND = 1e-5


def _types(ctx: OpContext):
    data, window = ctx.inputs[0].element_type, ctx.inputs[1].element_type
    if data.name not in STFT_TYPES + ("dynamic",):
        ctx.fail(f"data must be f64, f32, f16 or bf16, got {data}", position=0)
    if window.name not in STFT_TYPES + ("dynamic",) or DYNAMIC not in (data, window) and window != data:
        ctx.fail(f"window must be a floating type matching the data's ({data}), got {window}", position=1)
    for position in range(2, len(ctx.inputs)):
        if ctx.inputs[position].element_type.name not in ("i32", "i64", "dynamic"):
            ctx.fail(f"{NAMES[position]} must be i32 or i64, got {ctx.inputs[position].element_type}",
                     position=position)
    return data


def infer_istft(ctx: OpContext):
    et = _types(ctx)
    data, window = ctx.inputs[0].shape, ctx.inputs[1].shape
    for position, ranks, what in ((0, (3, 4), "3-D or 4-D [batch?, bins, frames, 2]"), (1, (1,), "1-D"),
                                  (2, (0,), "a scalar"), (3, (0,), "a scalar")):
        rank = ctx.inputs[position].shape.rank
        if rank is not None and rank not in ranks:
            ctx.fail(f"{NAMES[position]} must be {what}, got {ctx.inputs[position].shape.brief()}", position=position)
    size, step = const_int(ctx, 2), const_int(ctx, 3)
    if size is not None:
        if size < 1:
            ctx.fail(f"frame_size is {size} but must be greater than zero", position=2)
        if window.dims is not None and window.dims[0].is_static and not 0 < window.dims[0].lo <= size:
            ctx.fail(f"the window has {window.dims[0].lo} points but must have 1 to frame_size={size}", position=1)
    if step is not None and step < 1:
        ctx.fail(f"frame_step is {step} but must be greater than zero", position=3)
    params = {"frame_size": size, "frame_step": step, "center": ctx.attr_bool("center", False),
              "normalized": ctx.attr_bool("normalized", False)}
    if data.rank is None:
        return [TensorSpec(et, DYNAMIC_SHAPE)], params
    if size is not None and not data.dims[-3].contains(size // 2 + 1):
        ctx.fail(f"data has {data.dims[-3]} frequency bins (dim -3); frame_size {size} needs {size // 2 + 1}",
                 position=0)
    if len(ctx.inputs) == 5:
        length = ctx.inputs[4].shape
        if length.rank is not None and not (length.rank == 0 or length.rank == 1 and length.dims[0].contains(1)):
            ctx.fail(f"signal_length must be a scalar or have one element, got {length.brief()}", position=4)
        value = ctx.partial_value(4)
        out = value[0] if value is not None and value[0].lo >= 0 else DYNAMIC_DIM
    elif size is not None and step is not None:
        frames, extra = data.dims[-2], size % 2 if params["center"] else size
        high = None if frames.hi is None else max(frames.hi - 1, 0) * step + extra
        out = Dim(max(frames.lo - 1, 0) * step + extra, high)
    else:
        out = DYNAMIC_DIM
    return [TensorSpec(et, PartialShape((*data.dims[:-3], out)))], params


def istft(data: np.ndarray, window: np.ndarray, _size: np.ndarray, _step: np.ndarray,
          signal_length: np.ndarray | None = None, *, frame_size: int, frame_step: int, center: bool,
          normalized: bool) -> np.ndarray:
    """ISTFT-16 (see the module docstring)."""
    bins, frames = data.shape[-3], data.shape[-2]
    if bins != frame_size // 2 + 1:
        raise InputError(f"data has {bins} frequency bins; frame_size {frame_size} needs {frame_size // 2 + 1}",
                         port="input 0 (data)")
    if window.shape[0] > frame_size:
        raise InputError(f"the window has {window.shape[0]} points, more than frame_size {frame_size}",
                         port="input 1 (window)")
    length = None if signal_length is None else int(np.asarray(signal_length).reshape(-1)[0])
    if length is not None and length < 0:
        raise InputError(f"signal_length is {length}: it must not be negative", port="input 4 (signal_length)")
    full = max(frames - 1, 0) * frame_step + frame_size
    if length is None:
        length = full - (frame_size & ~1) if center else full
    if frames == 0:
        full = 0
    batch = data.shape[:-3]
    wide = data.astype(np.float64)
    spectrum = (wide[..., 0] + 1j * wide[..., 1]).reshape(int(np.prod(batch)), bins, frames)  # (frames may be 0)
    signals = np.fft.irfft(np.swapaxes(spectrum, 1, 2), n=frame_size, axis=-1)  # [batch, frames, frame_size]
    padded = np.zeros(frame_size)
    start = (frame_size - window.shape[0]) // 2
    padded[start:start + window.shape[0]] = window.astype(np.float64)
    margin = frame_size // 2 if center else 0
    end = min(full, margin + length)  # (the samples past the output are not computed: a huge step costs nothing)
    total = np.zeros((signals.shape[0], end))
    weight = np.zeros(end)
    for t in range(frames):
        first = t * frame_step
        if first >= end:
            break
        count = min(frame_size, end - first)
        total[:, first:first + count] += signals[:, t, :count] * padded[:count]
        weight[first:first + count] += (padded * padded)[:count]
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = total * np.sqrt(np.float64(frame_size)) if normalized else total
        result = np.where(weight != 0, scaled / np.where(weight != 0, weight, 1), 0.0)
    out = np.zeros((signals.shape[0], length))
    kept = max(0, min(length, end - margin))
    out[:, :kept] = result[:, margin:margin + kept]
    out = out.reshape(*batch, length)
    return out if data.dtype == np.float64 else round_from_f64(out, data.dtype)


def _batch(params, inputs, outputs, axes):
    if any(a is not None for a in axes[1:]):
        return "its window, frame size, step or length come from the batched data"
    if axes[0] is None:
        return [None]
    if inputs[0].shape.rank == 4 and axes[0] == 0:
        return [0]
    return f"the batch axis (axis {axes[0]}) is not the batch of 4-D data: frames or bins would be mixed"


OPS = (
    OpDef("ISTFT", 16, 16, LATEST_OPSET, NAMES, infer_istft, istft, roles=ROLES, min_inputs=4, batch=_batch,
          exact=False, attrs=(Attr("center", None, ("true", "false")), Attr("normalized", None, ("true", "false")))),
)
