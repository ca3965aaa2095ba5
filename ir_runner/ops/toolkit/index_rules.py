"""Rules shared by the indexing and data-movement operations: input checks, constant axes, index values
checked and normalised as OpenVINO's reference kernels read them, interval arithmetic of dims."""

from __future__ import annotations

import numpy as np

from ...errors import IndexOutOfRangeError
from ..api import InputFit, OpContext

INDEX_KINDS = ("int", "uint", "dynamic")


def require_integer(ctx: OpContext, position: int, what: str, *, bits: tuple[int, ...] | None = None) -> None:
    """Fail unless input ``position`` has an integer element type (of one of ``bits`` widths when given)."""
    et = ctx.inputs[position].element_type
    if et.kind not in INDEX_KINDS or (bits is not None and et.kind != "dynamic" and et.name not in
                                      tuple(f"i{b}" for b in bits)):
        allowed = "integer" if bits is None else " or ".join(f"i{b}" for b in bits)
        ctx.fail(f"{what} must have an {allowed} element type, got {et}", position=position)


def require_same_type(ctx: OpContext, first: int, second: int, what: str) -> None:
    a, b = ctx.inputs[first].element_type, ctx.inputs[second].element_type
    if a.kind != "dynamic" and b.kind != "dynamic" and a != b:
        ctx.fail(f"{what}: element types differ, {a} and {b}", position=second)


def as_index_array(indices: np.ndarray) -> np.ndarray:
    """Index values as int64, as the reference reads them (u64 wraps to int64)."""
    return indices.astype(np.int64, copy=False)


def checked_indices(indices: np.ndarray, dim: int, *, negative: bool, what: str = "indices",
                    port: str = "input 1 (indices)") -> np.ndarray:
    """``indices`` as int64 in ``[0, dim)``: negative ones get ``dim`` added when ``negative`` (the reference
    normalises them); any value still outside is an IndexOutOfRangeError (the reference fails or reads
    outside its buffer there)."""
    idx = as_index_array(indices)
    if not idx.size:
        return idx
    if negative and idx.min() < 0:
        idx = np.where(idx < 0, idx + dim, idx)
    bad = (idx < 0) | (idx >= dim)
    if bad.any():
        position = tuple(int(i) for i in np.argwhere(bad)[0])
        low = -dim if negative else 0
        raise IndexOutOfRangeError(
            f"{what} value {indices[position]} at position {list(position)} is outside [{low}, {dim - 1}]"
            f" ({int(bad.sum())} such value(s)); OpenVINO's reference fails or reads outside the tensor there",
            port=port,
        )
    return idx


def last_writes(targets: np.ndarray) -> np.ndarray:
    """Positions (into flat ``targets``) of the last write to each distinct target, in increasing order: what
    sequential assignment in index order leaves behind."""
    if targets.size < 2:
        return np.arange(targets.size)
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    last = np.ones(targets.size, dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    return np.sort(order[last])


def occurrence_rounds(targets: np.ndarray) -> list[np.ndarray]:
    """Positions of ``targets`` split into rounds: round r holds each target's (r+1)-th occurrence, so that
    applying the rounds in order applies every target's updates in index order, with no target twice in
    one round (vectorised sequential reduction)."""
    if not targets.size:
        return []
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    starts = np.ones(targets.size, dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    run_start = np.maximum.accumulate(np.where(starts, np.arange(targets.size), 0))
    rank = np.arange(targets.size) - run_start
    by_rank = np.argsort(rank, kind="stable")
    counts = np.bincount(rank)
    return np.split(order[by_rank], np.cumsum(counts)[:-1])



def prod(shape) -> int:
    result = 1
    for n in shape:
        result *= int(n)
    return result


def fit_within(dims, why: str) -> InputFit | None:
    """Generated index values that are valid in every one of ``dims`` (None when one is not static)."""
    if dims is None or not dims or any(not d.is_static for d in dims):
        return None
    return InputFit("index", 0, min(d.lo for d in dims) - 1, why)
