"""ReverseSequence-1: the first ``seq_lengths[b]`` elements along ``seq_axis`` reversed, for each index ``b``
of ``batch_axis`` (the rest copied). Pure data movement, bit-exact for every element type.

Inference as OpenVINO's: data of rank >= 2 (equal batch and sequence axes refused: the reference leaves
elements unwritten then), ``seq_lengths`` 1-D of a numeric type (integer or float; floats
are truncated as the reference's cast does) whose length merges with the batch dim, both axes may be negative.
Values as OpenVINO's reference: a length of 0 reverses nothing (read as 1); a length above the sequence dim,
or a negative one, is an InputError (the reference throws). The reference has no ``evaluate`` in OpenVINO's
wheel: compared with the CPU plugin, which agrees on every valid length.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, OpContext, OpDef
from ..toolkit.axes import normalise_axis


def infer_reverse_sequence(ctx: OpContext):
    data, lengths = ctx.inputs
    rank = data.shape.rank
    if rank is not None and rank < 2:
        ctx.fail(f"data must have rank 2 or more, got {data.shape.brief()}", position=0)
    if lengths.shape.rank not in (None, 1):
        ctx.fail(f"seq_lengths must be 1-D, got {lengths.shape.brief()}", position=1)
    if lengths.element_type.kind not in ("int", "uint", "float", "dynamic") or lengths.element_type.dtype is None:
        ctx.fail(f"seq_lengths must have a numeric type, got {lengths.element_type}", position=1)
    batch_axis = normalise_axis(ctx, ctx.attr_int("batch_axis", 0), rank, what="batch_axis")
    seq_axis = normalise_axis(ctx, ctx.attr_int("seq_axis", 1), rank, what="seq_axis")
    if rank is not None and batch_axis == seq_axis:
        ctx.fail(f"batch_axis and seq_axis are both axis {batch_axis}", hint="OpenVINO accepts it, but its"
                 " reference then leaves output elements unwritten (undefined values)")
    shape = data.shape
    if rank is not None and lengths.shape.rank is not None:
        merged = merge_dims(data.shape.dims[batch_axis], lengths.shape.dims[0])
        if merged is None:
            ctx.fail(f"seq_lengths has {lengths.shape.dims[0]} elements, the batch axis {batch_axis} of data"
                     f" {data.shape.brief()} has {data.shape.dims[batch_axis]}", position=1)
        dims = list(data.shape.dims)
        dims[batch_axis] = merged
        shape = PartialShape(tuple(dims))
    return [TensorSpec(data.element_type, shape)], {"batch_axis": batch_axis, "seq_axis": seq_axis}


def reverse_sequence(data: np.ndarray, seq_lengths: np.ndarray, *, batch_axis: int, seq_axis: int) -> np.ndarray:
    """ReverseSequence-1 (exact): per batch index ``b``, positions ``s < L_b`` take ``L_b - 1 - s`` along the
    sequence axis, ``L_b = max(int(seq_lengths[b]), 1)``."""
    batch_axis += data.ndim if batch_axis < 0 else 0
    seq_axis += data.ndim if seq_axis < 0 else 0
    if batch_axis == seq_axis:
        raise InputError(f"ReverseSequence: batch_axis and seq_axis are both axis {batch_axis}")
    steps = data.shape[seq_axis]
    with np.errstate(invalid="ignore"):
        lengths = np.trunc(seq_lengths.astype(np.float64)) if seq_lengths.dtype.kind == "f" else seq_lengths
    bad = np.flatnonzero((lengths < 0) | (lengths > steps) | (lengths != lengths))
    if bad.size:
        raise InputError(f"ReverseSequence: seq_lengths[{int(bad[0])}] = {seq_lengths.reshape(-1)[bad[0]]} is outside"
                         f" [0, {steps}] (the sequence axis {seq_axis} has {steps} elements)",
                         port="input 1 (seq_lengths)")
    if lengths.size != data.shape[batch_axis]:
        raise InputError(f"ReverseSequence: seq_lengths has {lengths.size} elements, the batch axis has"
                         f" {data.shape[batch_axis]}", port="input 1 (seq_lengths)")
    length = np.maximum(lengths.astype(np.int64), 1)[:, None]
    positions = np.arange(steps, dtype=np.int64)[None, :]
    source = np.where(positions < length, length - 1 - positions, positions)  # [batch, steps]
    moved = np.moveaxis(data, (batch_axis, seq_axis), (0, 1))
    gathered = moved[np.arange(moved.shape[0])[:, None], source]
    return np.ascontiguousarray(np.moveaxis(gathered, (0, 1), (batch_axis, seq_axis)))


def _batch_rule(params, inputs, outputs, axes):
    data_axis, lengths_axis = axes
    if data_axis is None:
        return "seq_lengths has a batch axis but the data has none" if lengths_axis is not None else [None]
    if data_axis == params["seq_axis"]:
        return "reverses along the batch axis"
    if data_axis == params["batch_axis"]:
        return [data_axis] if lengths_axis == 0 else "the data's batch axis needs seq_lengths split with it"
    return [data_axis] if lengths_axis is None else "seq_lengths is split on another axis than the data's"


OPS = (
    OpDef("ReverseSequence", 1, 1, LATEST_OPSET, ("data", "seq_lengths"), infer_reverse_sequence, reverse_sequence,
          roles=("data", "data"), attrs=(Attr("batch_axis", "0"), Attr("seq_axis", "1")), batch=_batch_rule),
)
