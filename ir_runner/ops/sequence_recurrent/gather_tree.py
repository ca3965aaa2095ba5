"""GatherTree-1 (beam search back-tracking): a decoder at the end of sequence models.

OpenVINO has no ``Node.evaluate`` for it: the oracle is the CPU plugin, which ir-run matches bit for bit on
valid inputs. Where the CPU plugin, OpenVINO's reference kernel (the template plugin's) and the specification
disagree on invalid inputs, ir-run raises an InputError or follows the specification (see the kernel and
docs/semantics.md).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError, UnsupportedError
from ...types import DYNAMIC, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, InputFit, OpContext, OpDef, equal_merge

TREE_NAMES = ("step_ids", "parent_ids", "max_seq_len", "end_token")


def infer_gather_tree(ctx: OpContext):
    et = ctx.common_element_type(0, 1, 2, 3)
    if et != DYNAMIC and et.kind not in ("int", "uint", "float"):
        ctx.fail(f"the inputs must have a numeric element type, got {et}", position=0)
    if et != DYNAMIC and et.dtype is not None and et.bits < 8:
        raise UnsupportedError(f"GatherTree of {et} is not computed by ir-run", layer=ctx.ref, port=ctx.input_label(0))
    steps, parents, lengths, end = (spec.shape for spec in ctx.inputs)
    shape = equal_merge(steps, parents)
    if shape is None or (shape.rank is not None and shape.rank != 3):
        ctx.fail(f"step_ids {steps.brief()} and parent_ids {parents.brief()} must have one shape"
                 " [MAX_TIME, BATCH_SIZE, BEAM_WIDTH]", position=1 if shape is None else 0)
    if lengths.rank is not None and lengths.rank != 1:
        ctx.fail(f"max_seq_len must be 1-D [BATCH_SIZE], got {lengths.brief()}", position=2)
    if shape.rank is not None and lengths.rank is not None:
        batch = merge_dims(shape.dims[1], lengths.dims[0])
        if batch is None:
            ctx.fail(f"max_seq_len has {lengths.dims[0]} elements, BATCH_SIZE (dim 1 of step_ids) is"
                     f" {shape.dims[1]}", position=2)
        shape = PartialShape((shape.dims[0], batch, shape.dims[2]))
    if end.rank is not None and end.rank != 0:
        ctx.fail(f"end_token must be a scalar, got {end.brief()}", position=3)
    return [TensorSpec(et, shape)], {}


def _as_index(values: np.ndarray, top: int, nan: int) -> np.ndarray:
    """Index values as int64 truncated toward zero (as the CPU plugin's int cast), clipped to ``[-1, top]``
    (u64 is not wrapped); NaN becomes ``nan``."""
    if values.dtype.kind == "u":
        return np.minimum(values, top).astype(np.int64)
    if values.dtype.kind in "iu":
        return values.astype(np.int64)
    wide = np.trunc(values.astype(np.float64))
    wide[np.isnan(wide)] = nan
    return np.clip(wide, -1, top).astype(np.int64)


def gather_tree(step_ids: np.ndarray, parent_ids: np.ndarray, max_seq_len: np.ndarray,
                end_token: np.ndarray) -> np.ndarray:
    """GatherTree-1: for each batch and beam, follow ``parent_ids`` back from time ``max_seq_len - 1``
    (starting at the beam itself) and gather ``step_ids`` along that path; times at or past
    ``max_seq_len``, and those after the first ``end_token`` of the path, hold ``end_token``.

    Index values (parents, lengths) are truncated toward zero, as the CPU plugin casts them. Where the
    three OpenVINO codes disagree: a parent outside ``[0, BEAM_WIDTH)`` on the path is an InputError (the CPU
    plugin raises "Wrong parent index"; the reference kernel reads outside the tensor); a max_seq_len <= 0
    (or NaN) gives a beam of end_token (the specification and TensorFlow; the CPU plugin leaves the beam
    unwritten, the reference kernel wraps a negative length to MAX_TIME); ``end_token`` is compared exactly
    (as the CPU plugin; the reference kernel compares truncated values: 2.5 would end a 2.0 end_token)."""
    time, batch, beam = step_ids.shape
    out = np.empty_like(step_ids)
    out[...] = end_token
    if not out.size:
        return out
    lengths = np.clip(_as_index(np.asarray(max_seq_len).reshape(batch), time, 0), 0, time)
    rows = np.arange(batch)[:, None]
    parent = np.broadcast_to(np.arange(beam, dtype=np.int64), (batch, beam)).copy()
    for t in range(int(lengths.max(initial=0)) - 1, -1, -1):
        active = (t < lengths)[:, None]
        out[t] = np.where(active, step_ids[t][rows, parent], out[t])
        if t == 0:
            break
        following = _as_index(parent_ids[t][rows, parent], beam, beam)
        bad = active & ((following < 0) | (following >= beam))
        if bad.any():
            b, k = (int(i) for i in np.argwhere(bad)[0])
            raise InputError(f"parent_ids[{t}, {b}, {int(parent[b, k])}] = {parent_ids[t, b, parent[b, k]]} (on the"
                             f" path of beam {k}) is outside [0, {beam}) (BEAM_WIDTH): OpenVINO's CPU plugin refuses"
                             " it, its reference kernel reads outside the tensor", port="input 1 (parent_ids)")
        parent = np.where(active, following, parent)
    ended = np.logical_or.accumulate(out == end_token, axis=0)  # at or after the first end_token of each path
    out[1:][ended[:-1]] = end_token
    return out


def _tree_batch(params, inputs, outputs, axes):
    """Beams are traced within each batch: BATCH_SIZE is axis 1 of step_ids and parent_ids, axis 0 of
    max_seq_len."""
    if axes[0] == 1 and axes[1] == 1 and axes[2] == 0 and axes[3] is None:
        return [1]
    return ("the batch axis must be BATCH_SIZE: axis 1 of step_ids and parent_ids and axis 0 of max_seq_len"
            " (the beams of one batch are traced together, over every time step)")


def _tree_fit(params, inputs: list[TensorSpec], position: int):
    dims = inputs[0].shape.dims
    if dims is None:
        return None
    if position == 1 and dims[2].is_static and dims[2].lo:
        return InputFit("index", 0, dims[2].lo - 1, f"parents are beams: BEAM_WIDTH is {dims[2].lo}")
    if position == 2 and dims[0].is_static:
        return InputFit("index", 0, dims[0].lo, f"sequence lengths: MAX_TIME is {dims[0].lo}")
    return None

OPS = (
    OpDef("GatherTree", 1, 1, LATEST_OPSET, TREE_NAMES, infer_gather_tree, gather_tree,
          roles=("data", "indices", "indices", "data"), batch=_tree_batch, fit=_tree_fit),
)
