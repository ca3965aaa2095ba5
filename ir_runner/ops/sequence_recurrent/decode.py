"""CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6 (greedy CTC decoding for OCR and speech): decoders at the
end of sequence models.

OpenVINO has no ``Node.evaluate`` for either: the oracle is the CPU plugin, which ir-run matches bit for
bit on valid inputs. Where the CPU plugin, OpenVINO's reference kernel (the template plugin's) and the
specification disagree on invalid inputs, ir-run raises an InputError or follows the specification (see
each kernel and docs/semantics.md).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, UnsupportedError
from ...types import DYNAMIC, DYNAMIC_DIM, ELEMENT_TYPES, Dim, ElementType, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef
from ..toolkit.numeric import as_compute

# -- CTCGreedyDecoderSeqLen-6 ----------------------------------------------------------------------------------

CTC_NAMES = ("data", "sequence_length", "blank_index")
INDEX_TYPES = {"i32": np.int32, "i64": np.int64}


def _index_type(ctx: OpContext, name: str) -> ElementType:
    et = ctx.attr_element_type(name) if ctx.attr(name) is not None else ELEMENT_TYPES["i32"]
    if et.name not in INDEX_TYPES:
        raise UnsupportedError(f"attribute {name}={et.name!r}: ir-run computes i32 or i64 (as the specification"
                               " says; OpenVINO builds other types but no plugin runs them)", layer=ctx.ref)
    return et


def _layout(ctx: OpContext, position: int, layout: str) -> tuple[Dim, ...] | None:
    """The dims of input ``position``, which must have the rank of ``layout`` (e.g. ``"N, T, C"``); None when
    its rank is dynamic."""
    shape, rank = ctx.inputs[position].shape, layout.count(",") + 1
    if shape.rank is None:
        return None
    if shape.rank != rank:
        ctx.fail(f"{ctx.op.input_names[position]} must be {rank}-D [{layout}], got {shape.brief()}", position=position)
    return shape.dims


def infer_ctc(ctx: OpContext):
    merge = ctx.attr_bool("merge_repeated", True)
    classes, lengths_type = _index_type(ctx, "classes_index_type"), _index_type(ctx, "sequence_length_type")
    data, seq = ctx.inputs[0], ctx.inputs[1]
    if data.element_type != DYNAMIC and data.element_type.kind != "float":
        raise UnsupportedError(f"data of {data.element_type}: ir-run computes floating-point data (the"
                               " specification's type; the CPU plugin refuses others)", layer=ctx.ref,
                               port=ctx.input_label(0))
    for position in range(1, len(ctx.inputs)):
        et = ctx.inputs[position].element_type
        if et != DYNAMIC and et.kind not in ("int", "uint"):
            ctx.fail(f"{CTC_NAMES[position]} must have an integer element type, got {et}", position=position)
    if len(ctx.inputs) == 3:
        blank = ctx.inputs[2].shape
        if blank.is_static and not (blank.rank == 0 or blank.to_shape() == (1,)):
            ctx.fail(f"blank_index must be a scalar or have one element, got {blank.brief()}", position=2)
    batch, time, _ = _layout(ctx, 0, "N, T, C") or (DYNAMIC_DIM,) * 3
    if _layout(ctx, 1, "N") is not None:
        merged = merge_dims(batch, seq.shape.dims[0])
        if merged is None:
            ctx.fail(f"sequence_length has {seq.shape.dims[0]} elements, data's N is {batch}", position=1)
        batch = merged
    outputs = [TensorSpec(classes, PartialShape((batch, time))), TensorSpec(lengths_type, PartialShape((batch,)))]
    return outputs, {"merge_repeated": merge, "classes": classes.dtype, "lengths": lengths_type.dtype}


def _first_max(data: np.ndarray) -> np.ndarray:
    """Per row of the last axis, the index of the first largest value as a running strict ``>`` scan finds
    it (the CPU plugin's loop and the reference's ``std::max_element``): a NaN first value wins, later NaNs
    never do."""
    if data.shape[-1] == 0:
        return np.zeros(data.shape[:-1], np.int64)
    if data.dtype.kind != "f" and data.dtype.name != "bfloat16":
        return np.argmax(data, axis=-1)
    wide = as_compute(data)
    nan = np.isnan(wide)
    found = np.argmax(np.where(nan, -np.inf, wide), axis=-1)
    found[nan[..., 0]] = 0
    return found


def ctc_greedy_decoder_seq_len(data: np.ndarray, sequence_length: np.ndarray, blank_index: np.ndarray | None = None,
                               *, merge_repeated: bool, classes: np.dtype, lengths: np.dtype):
    """CTCGreedyDecoderSeqLen-6: per batch, the class of each of the first ``sequence_length`` time steps
    (the first largest value), repeated classes merged (``merge_repeated``; a blank in between separates
    them), blanks (``blank_index``, by default C - 1) dropped; outputs the classes left-aligned and padded with
    -1, and their count. A sequence length outside ``[0, T]`` is an InputError (the CPU plugin refuses one
    above T; the reference kernel reads outside the data for both)."""
    n, t, c = data.shape
    seq = sequence_length.reshape(n)
    seq = (np.minimum(seq, t + 1) if seq.dtype.kind == "u" else seq).astype(np.int64)  # (u64 not wrapped)
    bad = np.flatnonzero((seq < 0) | (seq > t))
    if bad.size:
        raise InputError(f"sequence_length[{int(bad[0])}] = {sequence_length.reshape(-1)[bad[0]]} is outside [0, {t}]"
                         " (T, dim 1 of data)", port="input 1 (sequence_length)")
    blank = c - 1 if blank_index is None else int(np.asarray(blank_index).reshape(-1)[0])
    found = _first_max(data)
    previous = np.empty_like(found)
    previous[:, :1] = -1
    previous[:, 1:] = found[:, :-1]
    keep = (np.arange(t) < seq[:, None]) & (found != blank)
    if merge_repeated:
        keep &= found != previous
    decoded = np.full((n, t), -1, classes)
    counts = keep.sum(axis=1)
    slots = np.cumsum(keep, axis=1) - 1
    rows = np.broadcast_to(np.arange(n)[:, None], keep.shape)
    decoded[rows[keep], slots[keep]] = found[keep]
    return decoded, counts.astype(lengths)


# -- CTCGreedyDecoder-1 ------------------------------------------------------------------------------------------

CTC1_NAMES = ("data", "sequence_mask")


def infer_ctc1(ctx: OpContext):
    merge = ctx.attr_bool("ctc_merge_repeated", True)
    data, mask = ctx.inputs
    for position, spec in enumerate(ctx.inputs):
        if spec.element_type != DYNAMIC and spec.element_type.kind != "float":
            raise UnsupportedError(f"{CTC1_NAMES[position]} of {spec.element_type}: ir-run computes floating-point"
                                   " data and masks (the specification's type; the CPU plugin refuses others)",
                                   layer=ctx.ref, port=ctx.input_label(position))
    time, batch, _ = _layout(ctx, 0, "T, N, C") or (DYNAMIC_DIM,) * 3
    if _layout(ctx, 1, "T, N") is not None:
        for what, dim, other in (("T", time, mask.shape.dims[0]), ("N", batch, mask.shape.dims[1])):
            if merge_dims(dim, other) is None:
                ctx.fail(f"sequence_mask {mask.shape.brief()} and data {data.shape.brief()} differ in {what}",
                         position=1)
        time, batch = merge_dims(time, mask.shape.dims[0]), merge_dims(batch, mask.shape.dims[1])
    one = Dim(1, 1)
    return [TensorSpec(data.element_type, PartialShape((batch, time, one, one)))], {"merge_repeated": merge}


def ctc_greedy_decoder(data: np.ndarray, sequence_mask: np.ndarray, *, merge_repeated: bool) -> np.ndarray:
    """CTCGreedyDecoder-1 as OpenVINO's reference: per batch, time steps until the first mask value equal to 0,
    each giving the class of its first largest value (a NaN first value wins, later NaNs never do); a class
    equal to the previous step's is dropped when ``merge_repeated``, the blank C - 1 always (it still counts as
    the previous class). Output ``[N, T, 1, 1]`` in the data type, the classes left-aligned, then -1."""
    t, n, c = data.shape
    out = np.full((n, t, 1, 1), -1, data.dtype)
    if not out.size:
        return out
    found = _first_max(data).T  # (N, T)
    masked = sequence_mask.T == 0
    steps = np.where(masked.any(axis=1), masked.argmax(axis=1), t)  # (the first 0 ends the sequence)
    previous = np.concatenate([np.full((n, 1), -1, found.dtype), found[:, :-1]], axis=1)
    keep = (np.arange(t) < steps[:, None]) & (found < c - 1)
    if merge_repeated:
        keep &= found != previous
    slots = np.cumsum(keep, axis=1) - 1
    rows = np.broadcast_to(np.arange(n)[:, None], keep.shape)
    out[rows[keep], slots[keep], 0, 0] = found[keep]
    return out


def _ctc1_batch(params, inputs, outputs, axes):
    """Each sequence is decoded alone: N is axis 1 of data and of sequence_mask, axis 0 of the output."""
    if axes[0] == 1 and axes[1] == 1:
        return [0]
    return "the batch axis must be N: axis 1 of data and of sequence_mask ([T, N, ...])"


def _ctc_batch(params, inputs, outputs, axes):
    """Each sequence is decoded alone: N is axis 0 of data and sequence_length."""
    if axes[0] == 0 and axes[1] == 0 and (len(axes) < 3 or axes[2] is None):
        return [0, 0]
    return "the batch axis must be N: axis 0 of data and of sequence_length (blank_index is shared)"


def _ctc_fit(params, inputs: list[TensorSpec], position: int):
    dims = inputs[0].shape.dims
    if dims is None:
        return None
    if position == 1 and dims[1].is_static:
        return InputFit("index", 0, dims[1].lo, f"sequence lengths: T (dim 1 of data) is {dims[1].lo}")
    if position == 2 and dims[2].is_static and dims[2].lo:
        return InputFit("index", 0, dims[2].lo - 1, f"a class: C (dim 2 of data) is {dims[2].lo}")
    return None


OPS = (
    OpDef("CTCGreedyDecoder", 1, 1, LATEST_OPSET, CTC1_NAMES, infer_ctc1, ctc_greedy_decoder, batch=_ctc1_batch,
          attrs=(Attr("ctc_merge_repeated", "true", ("true", "false")),)),
    OpDef("CTCGreedyDecoderSeqLen", 6, 6, LATEST_OPSET, CTC_NAMES, infer_ctc, ctc_greedy_decoder_seq_len,
          roles=("data", "indices", "indices"), min_inputs=2, batch=_ctc_batch, fit=_ctc_fit,
          attrs=(Attr("merge_repeated", "true", ("true", "false")), Attr("classes_index_type", "i32", ("i32", "i64")),
                 Attr("sequence_length_type", "i32", ("i32", "i64")))),
)
