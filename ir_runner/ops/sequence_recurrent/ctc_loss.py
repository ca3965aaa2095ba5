"""CTCLoss-4: the connectionist temporal classification loss of each batch item, ``-log p(labels | logits)``,
summed over every alignment of the (decoded) labels to the first ``logit_length`` frames.

``logits`` ``[N, T, C]`` (unnormalised: a log-softmax over C per frame), ``labels`` ``[N, T]`` (the first
``label_length`` entries used), ``blank_index`` (default ``C - 1``). Labels are first decoded: ``unique`` keeps
each label's first occurrence, else ``preprocess_collapse_repeated`` merges runs of one label. An alignment
writes each label on a run of frames with blanks between and around them; ``ctc_merge_repeated`` (the default)
lets a label's run be longer than one frame (a blank must then separate two equal labels), without it every
label takes exactly one frame. No alignment: the loss is +inf. A label equal to ``blank_index`` is kept in the
labels but moves as a blank (it cannot be skipped from, and stays without merging), as in the CPU plugin.

OpenVINO's core node has no ``evaluate``; the CPU plugin is the oracle. ir-run computes the log-softmax and the
forward recursion in float64 (log-sum-exp over alignments) and rounds once to the logits' type: within
``BOUND`` relative (plus 1e-6 absolute for losses near 0) of the CPU plugin at f32, measured over random cases
(docs/semantics.md); the reference kernel enumerates alignments one by one in the logits' type, with the same
bound. Lengths outside ``[0, T]`` or a label length above its logit length are an InputError (the reference
throws too); labels outside ``[0, C)`` are an InputError (the kernels read outside the frame).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, PartialShape, TensorSpec, merge_dims
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef

NAMES = ("logits", "logit_length", "labels", "label_length", "blank_index")
RANKS = (3, 1, 2, 1, 0)
BOUND = 1e-5


def infer_ctc_loss(ctx: OpContext):
    logits = ctx.inputs[0]
    if logits.element_type.kind not in ("float", "dynamic"):
        ctx.fail(f"logits must have a floating-point element type, got {logits.element_type}", position=0)
    for position, spec in enumerate(ctx.inputs[1:], 1):
        if spec.element_type.kind not in ("int", "uint", "dynamic"):
            ctx.fail(f"{NAMES[position]} must have an integer element type, got {spec.element_type}", position=position)
        if spec.shape.rank not in (None, RANKS[position]):
            ctx.fail(f"{NAMES[position]} must be {RANKS[position]}-D, got {spec.shape.brief()}", position=position)
    if logits.shape.rank not in (None, 3):
        ctx.fail(f"logits must be 3-D [N, T, C], got {logits.shape.brief()}", position=0)
    batch, time = (logits.shape.dims[0], logits.shape.dims[1]) if logits.shape.rank == 3 else (DYNAMIC_DIM,) * 2
    for position in (1, 2, 3):
        dims = ctx.inputs[position].shape.dims
        if dims is None:
            continue
        merged = merge_dims(batch, dims[0])
        if merged is None:
            ctx.fail(f"dim 0 of {NAMES[position]} ({dims[0]}) must be the batch N ({batch})", position=position)
        batch = merged
        if position == 2 and merge_dims(time, dims[1]) is None:
            ctx.fail(f"dim 1 of labels ({dims[1]}) must be the time T of logits ({time})", position=2)
    params = {"collapse": ctx.attr_bool("preprocess_collapse_repeated", False),
              "merge": ctx.attr_bool("ctc_merge_repeated", True), "unique": ctx.attr_bool("unique", False)}
    return [TensorSpec(logits.element_type, PartialShape((batch,)))], params


def _decoded(labels: np.ndarray, collapse: bool, unique: bool) -> list[int]:
    if unique:
        return list(dict.fromkeys(labels.tolist()))
    if collapse and labels.size:
        return labels[np.concatenate([[True], labels[1:] != labels[:-1]])].tolist()
    return labels.tolist()


def _log_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logaddexp(a, b)


def _loss(log_probs: np.ndarray, targets: list[int], blank: int, merge: bool) -> float:
    """``-log`` of the summed probability of every alignment of ``targets`` to the frames of ``log_probs``
    ``[T', C]`` (float64), by the forward recursion over the states blank, t1, blank, t2, ..., blank."""
    states = np.full(2 * len(targets) + 1, blank, np.int64)
    states[1::2] = targets
    # As the CPU plugin, by the states' values (a label equal to blank_index acts as a blank): a state is entered
    # from two states back (skipping a blank) when that state holds no blank and, merging, another label
    skip = np.zeros(states.size, bool)
    skip[2:] = (states[:-2] != blank) & ((states[:-2] != states[2:]) if merge else True)
    stay = merge | (states == blank)  # (without merging, a label takes exactly one frame)
    alpha = np.full(states.size, -np.inf)
    if not log_probs.shape[0]:
        return 0.0 if not targets else np.inf
    alpha[0] = log_probs[0, blank]
    if states.size > 1:
        alpha[1] = log_probs[0, states[1]]
    with np.errstate(invalid="ignore"):
        for frame in log_probs[1:]:
            previous = np.where(stay, alpha, -np.inf)
            previous[1:] = _log_add(previous[1:], alpha[:-1])
            previous[2:] = np.where(skip[2:], _log_add(previous[2:], alpha[:-2]), previous[2:])
            alpha = previous + frame[states]
    total = _log_add(alpha[-1], alpha[-2]) if states.size > 1 else alpha[-1]
    return -float(total)


def _lengths(values: np.ndarray, top: int, name: str, port: str) -> np.ndarray:
    lengths = values.astype(np.int64).reshape(-1)
    bad = np.flatnonzero((lengths < 0) | (lengths > top))
    if bad.size:
        raise InputError(f"{name}[{int(bad[0])}] = {int(lengths[bad[0]])} is outside [0, {top}] (T)", port=port)
    return lengths


def ctc_loss(logits: np.ndarray, logit_length: np.ndarray, labels: np.ndarray, label_length: np.ndarray,
             blank_index: np.ndarray | None = None, *, collapse: bool, merge: bool, unique: bool) -> np.ndarray:
    """CTCLoss-4 (see the module docstring)."""
    batch, time, classes = logits.shape
    frames = _lengths(logit_length, time, "logit_length", "input 1 (logit_length)")
    counts = _lengths(label_length, time, "label_length", "input 3 (label_length)")
    over = np.flatnonzero(counts > frames)
    if over.size:
        b = int(over[0])
        raise InputError(f"label_length[{b}] = {int(counts[b])} is above logit_length[{b}] = {int(frames[b])}",
                         port="input 3 (label_length)")
    blank = classes - 1 if blank_index is None else int(np.asarray(blank_index).reshape(-1)[0])
    if not 0 <= blank < classes:
        raise InputError(f"blank_index {blank} is outside [0, {classes}) (C)", port="input 4 (blank_index)")
    out = np.empty(batch, logits.dtype)
    wide = logits.astype(np.float64)
    with np.errstate(divide="ignore"):
        log_probs = wide - np.log(np.exp(wide).sum(axis=2, keepdims=True))
    for b in range(batch):
        used = labels[b, : counts[b]].astype(np.int64)
        bad = np.flatnonzero((used < 0) | (used >= classes))
        if bad.size:
            raise InputError(f"labels[{b}, {int(bad[0])}] = {int(used[bad[0]])} is outside [0, {classes}) (C)",
                             port="input 2 (labels)")
        out[b] = _loss(log_probs[b, : frames[b]], _decoded(used, collapse, unique), blank, merge)
    return out


def _batch(params, inputs, outputs, axes):
    if axes[:4] == [0, 0, 0, 0] and (len(axes) < 5 or axes[4] is None):
        return [0]
    return "the batch axis must be N: axis 0 of logits, logit_length, labels and label_length"


def _fit(params, inputs: list[TensorSpec], position: int):
    dims = inputs[0].shape.dims
    if dims is None or not all(d.is_static for d in dims):
        return None
    time, classes = dims[1].lo, dims[2].lo
    if position == 2 and classes > 1:
        return InputFit("index", 0, classes - 2, f"labels are classes other than the blank (C - 1 = {classes - 1})")
    if position in (1, 3):
        return InputFit("index", time if position == 1 else 0, time if position == 1 else time // 2,
                        f"lengths up to T = {time}, labels at most half of them (an alignment exists)")
    if position == 4:
        return InputFit("index", classes - 1, classes - 1, "the blank class")
    return None


OPS = (
    OpDef("CTCLoss", 4, 4, LATEST_OPSET, NAMES, infer_ctc_loss, ctc_loss, min_inputs=4, batch=_batch, fit=_fit,
          exact=False, attrs=(Attr("preprocess_collapse_repeated", "false", ("true", "false")),
                              Attr("ctc_merge_repeated", "true", ("true", "false")),
                              Attr("unique", "false", ("true", "false")))),
)
