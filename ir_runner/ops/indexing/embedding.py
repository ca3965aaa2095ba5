"""EmbeddingBagOffsetsSum-3, EmbeddingBagPackedSum-3, EmbeddingSegmentsSum-3, EmbeddingBagOffsets-15 and
EmbeddingBagPacked-15: rows of ``emb_table`` picked by ``indices``, (optionally weighted and) summed or
averaged per bag. ``torch.nn.EmbeddingBag`` converts to the -15 ones.

Bags: Offsets-* bag ``b`` holds ``indices[offsets[b]:offsets[b+1]]`` (the last one runs to the end);
Packed-* bag ``b`` is row ``b`` of the 2-D ``indices``; SegmentsSum bag ``s`` holds every index whose
``segment_ids`` entry is ``s`` (in any order), ``num_segments`` bags in all. The output is
``[bags] + emb_table.shape[1:]`` of the table's type.

Arithmetic, as OpenVINO's reference (``ov::reference::embeddingBag*``, run by its template plugin; the
wheel's ``Node.evaluate`` has none for these operations): each bag starts at +0 and adds its rows in index
order in the table's own type, a weighted row being ``row * weight`` rounded to the type first; f16 rounds
after every step (numpy's f16 arithmetic is OpenVINO's), bf16 too with OpenVINO's own f32 -> bf16 rounding;
integers wrap. So every result is bit-exact, not merely within a bound. ``mean`` divides a bag by its count
converted to the type, ``(T)count`` (integers: C++'s truncating division; ``(i8)200`` is -56).

Empty bags (Offsets and SegmentsSum): the row ``default_index`` when given and, for Offsets, not negative;
zeros otherwise (a mean of an empty bag is that row, or zeros). A Packed bag of 0 indices sums to zeros and
averages to 0/0 (NaN for floats; an InputError for integers, where the reference divides by zero).

Where the reference reads outside its inputs or throws, ir-run raises an InputError naming the layer and the
port: an index of a bag outside ``[0, num_emb)``, an offset outside ``[0, num_indices)`` (the reference
throws even for an empty last bag, ``offset == num_indices``), decreasing offsets, a segment id outside
``[0, num_segments)`` (the reference throws), a used ``default_index`` at or past ``num_emb`` (SegmentsSum:
also a negative one), and an integer mean dividing by zero. Differences of the CPU plugin are listed in
docs/semantics.md (Embedding section).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...types import DYNAMIC_DIM, DYNAMIC_SHAPE, Dim, PartialShape, TensorSpec
from ..api import LATEST_OPSET, Attr, InputFit, OpContext, OpDef, equal_merge
from ..toolkit.convert_rules import bf16_as_openvino_rounds

OFFSETS_NAMES = ("emb_table", "indices", "offsets", "default_index", "per_sample_weights")
PACKED_NAMES = ("emb_table", "indices", "per_sample_weights")
SEGMENTS_NAMES = ("emb_table", "indices", "segment_ids", "num_segments", "default_index", "per_sample_weights")
TABLE_TYPES = ("f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
REDUCTIONS = {"sum": "sum", "mean": "mean"}


# -- inference -----------------------------------------------------------------------------------------------

def _names(ctx: OpContext) -> tuple[str, ...]:
    return ctx.op.input_names


def _index_type(ctx: OpContext, position: int, like: int | None = None) -> None:
    """Input ``position`` must be i32 or i64 (and, with ``like``, the same type as that input)."""
    et = ctx.inputs[position].element_type
    name = _names(ctx)[position]
    if et.kind != "dynamic" and et.name not in ("i32", "i64"):
        ctx.fail(f"{name} must be i32 or i64, got {et}", position=position)
    if like is not None:
        other = ctx.inputs[like].element_type
        if et.kind != "dynamic" and other.kind != "dynamic" and et != other:
            ctx.fail(f"{name} ({et}) must have the element type of {_names(ctx)[like]} ({other})",
                     position=position, hint="insert a Convert so that the index types agree")


def _rank(ctx: OpContext, position: int, rank: int, what: str) -> None:
    spec_rank = ctx.inputs[position].shape.rank
    if spec_rank is not None and spec_rank != rank:
        ctx.fail(f"{_names(ctx)[position]} must be {what}, got shape {ctx.inputs[position].shape.brief()}",
                 position=position)


def _table(ctx: OpContext, weights: int | None):
    """The table's element type (checked: numeric types the reference evaluates) and the weights' agreement."""
    et = ctx.inputs[0].element_type
    if et.kind != "dynamic" and et.name not in TABLE_TYPES:
        ctx.fail(f"emb_table of element type {et} is not supported (the reference sums {', '.join(TABLE_TYPES)})",
                 position=0, hint="insert a Convert to f32 or i32 before the layer")
    if weights is not None and weights < len(ctx.inputs):
        wet = ctx.inputs[weights].element_type
        if wet.kind != "dynamic" and et.kind != "dynamic" and wet != et:
            ctx.fail(f"per_sample_weights ({wet}) must have the element type of emb_table ({et})",
                     position=weights)
        et = wet if et.kind == "dynamic" else et
    rank = ctx.inputs[0].shape.rank
    if rank == 0:
        ctx.fail("emb_table must not be a scalar (its first dim numbers the embeddings)", position=0)
    return et


def _out_shape(ctx: OpContext, bags: Dim) -> PartialShape:
    table = ctx.inputs[0].shape
    if table.dims is None:
        return DYNAMIC_SHAPE
    return PartialShape((bags,) + table.dims[1:])


def _reduction(ctx: OpContext, version: int) -> str:
    return ctx.attr_choice("reduction", REDUCTIONS, "sum") if version >= 15 else "sum"


def _check_weights_mode(ctx: OpContext, reduction: str, position: int) -> None:
    if len(ctx.inputs) > position and reduction != "sum":
        ctx.fail("per_sample_weights can only be used with reduction='sum'", position=position,
                 hint="drop per_sample_weights or set reduction='sum'")


def infer_offsets(ctx: OpContext, version: int):
    reduction = _reduction(ctx, version)
    _index_type(ctx, 1)
    _index_type(ctx, 2, like=1)
    _rank(ctx, 1, 1, "1-D")
    _rank(ctx, 2, 1, "1-D")
    if len(ctx.inputs) > 3:
        _index_type(ctx, 3, like=1)
        _rank(ctx, 3, 0, "a scalar")
    if len(ctx.inputs) > 4:
        _check_weights_mode(ctx, reduction, 4)
        _rank(ctx, 4, 1, "1-D")
        if equal_merge(ctx.inputs[1].shape, ctx.inputs[4].shape) is None:
            ctx.fail(f"per_sample_weights {ctx.inputs[4].shape.brief()} must have the shape of indices"
                     f" {ctx.inputs[1].shape.brief()}", position=4)
    et = _table(ctx, 4)
    offsets = ctx.inputs[2].shape
    bags = offsets.dims[0] if offsets.dims is not None else DYNAMIC_DIM
    return [TensorSpec(et, _out_shape(ctx, bags))], {"reduction": reduction}


def infer_packed(ctx: OpContext, version: int):
    reduction = _reduction(ctx, version)
    _index_type(ctx, 1)
    _rank(ctx, 1, 2, "2-D ([bags, indices per bag])")
    indices = ctx.inputs[1].shape
    if len(ctx.inputs) > 2:
        _check_weights_mode(ctx, reduction, 2)
        _rank(ctx, 2, 2, "2-D")
        merged = equal_merge(indices, ctx.inputs[2].shape)
        if merged is None:
            ctx.fail(f"per_sample_weights {ctx.inputs[2].shape.brief()} must have the shape of indices"
                     f" {indices.brief()}", position=2)
        indices = merged
    et = _table(ctx, 2)
    bags = indices.dims[0] if indices.dims is not None else DYNAMIC_DIM
    return [TensorSpec(et, _out_shape(ctx, bags))], {"reduction": reduction}


def infer_segments(ctx: OpContext):
    _index_type(ctx, 1)
    _index_type(ctx, 2, like=1)
    _index_type(ctx, 3, like=2)
    _rank(ctx, 1, 1, "1-D")
    _rank(ctx, 2, 1, "1-D")
    if equal_merge(ctx.inputs[1].shape, ctx.inputs[2].shape) is None:
        ctx.fail(f"segment_ids {ctx.inputs[2].shape.brief()} must have the shape of indices"
                 f" {ctx.inputs[1].shape.brief()}", position=2)
    _rank(ctx, 3, 0, "a scalar")
    if len(ctx.inputs) > 4:
        _index_type(ctx, 4, like=1)
        _rank(ctx, 4, 0, "a scalar")
    if len(ctx.inputs) > 5:
        _rank(ctx, 5, 1, "1-D")
        if equal_merge(ctx.inputs[1].shape, ctx.inputs[5].shape) is None:
            ctx.fail(f"per_sample_weights {ctx.inputs[5].shape.brief()} must have the shape of indices"
                     f" {ctx.inputs[1].shape.brief()}", position=5)
    et = _table(ctx, 5)
    value = ctx.partial_value(3)
    bags = DYNAMIC_DIM
    if value is not None and len(value) == 1:
        bags = value[0]
        if bags.is_static and bags.lo < 0:
            ctx.fail(f"num_segments must not be negative, got {bags.lo}", position=3)
        bags = Dim(max(bags.lo, 0), bags.hi)
    return [TensorSpec(et, _out_shape(ctx, bags))], {}


# -- kernels ---------------------------------------------------------------------------------------------------

class _Arith:
    """The reference's arithmetic in the table's type: numpy's own, except bf16, which is held in f32
    (``load``), rounded after every step as OpenVINO's ``bfloat16`` class rounds (``round``) and converted
    back at the end (``store``)."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype
        self.bf16 = dtype.name == "bfloat16"
        self.work = np.dtype(np.float32) if self.bf16 else dtype

    def round(self, values: np.ndarray) -> np.ndarray:
        return bf16_as_openvino_rounds(values, self.dtype).astype(np.float32) if self.bf16 else values

    def load(self, values: np.ndarray) -> np.ndarray:
        return values.astype(np.float32) if self.bf16 else values

    def store(self, values: np.ndarray) -> np.ndarray:
        return bf16_as_openvino_rounds(values, self.dtype) if self.bf16 else values

    def scalar(self, count: int) -> np.ndarray:
        """``(T)count``: the count converted to the type (integers wrap, floats round)."""
        if self.bf16:
            return self.round(np.array([count], np.float32))
        return np.array([count]).astype(self.dtype)


def _bag_sums(table: np.ndarray, rows: np.ndarray, starts: np.ndarray, counts: np.ndarray,
              weights: np.ndarray | None, arith: _Arith) -> np.ndarray:
    """Per bag ``b``: ``0 + t[rows[s]] (* w[s]) + t[rows[s+1]] ... `` for ``s`` from ``starts[b]``, ``counts[b]``
    terms, in that order and the table's arithmetic, as a ``[bags, depth]`` array of the working type.

    Vectorised over bags: the bags are ordered by count (longest first) and step ``k`` adds the ``k``-th
    term of every bag that has one, so each bag still sums in index order."""
    bags = starts.size
    depth = table.shape[1]
    acc = np.zeros((bags, depth), arith.work)
    if not bags or not depth or not counts.any():
        return acc
    order = np.argsort(-counts, kind="stable")
    sorted_counts = counts[order]
    sorted_starts = starts[order]
    remaining = np.searchsorted(-sorted_counts, -np.arange(1, int(sorted_counts[0]) + 1), side="right")
    work_table = arith.load(table)
    work_weights = None if weights is None else arith.load(weights)
    sums = np.zeros((bags, depth), arith.work)
    with np.errstate(all="ignore"):
        for k, active in enumerate(remaining.tolist()):
            positions = sorted_starts[:active] + k
            term = work_table.take(rows[positions], axis=0)
            if work_weights is not None:
                term = arith.round(np.multiply(term, work_weights[positions][:, None], out=term))
            head = sums[:active]
            np.add(head, term, out=head)
            if arith.bf16:
                head[...] = arith.round(head)
    acc[order] = sums
    return acc


def _check_rows(rows: np.ndarray, num_emb: int, port: str, what: str = "index") -> None:
    """Every used index must lie in ``[0, num_emb)`` (the reference reads outside the table otherwise)."""
    if not rows.size:
        return
    bad = (rows < 0) | (rows >= num_emb)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{what} {int(rows[at])} at position {at} is outside [0, {num_emb - 1}] (emb_table has {num_emb} rows;"
            f" {int(bad.sum())} such value(s); OpenVINO's reference reads outside the table here)",
            port=port, hint="indices must be row numbers of emb_table")


def _divide_by_count(part: np.ndarray, counts: np.ndarray, arith: _Arith, port: str) -> np.ndarray:
    """``mean``: rows of ``part`` divided by ``(T)count`` each, as the reference (integers: C++'s truncating
    division; a count that is 0 in the type divides by zero: 0/0 for floats, an InputError for integers)."""
    if not part.size:
        return part
    divisors = np.concatenate([arith.scalar(int(c)) for c in counts])[:, None]
    if part.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return arith.round(part / divisors)
    if not divisors.all():
        count = int(counts[np.flatnonzero(divisors[:, 0] == 0)[0]])
        raise InputError(f"a bag of {count} indices: its mean divides by ({part.dtype})({count}) = 0 (the reference"
                         " divides an integer by zero)", port=port, hint="use bags of other sizes, or a float table")
    wide = part.astype(np.int64) if part.dtype.kind == "i" else part
    div = divisors.astype(wide.dtype)
    quotient = wide // div
    if part.dtype.kind == "i":  # truncate towards zero as C++ does
        quotient += ((wide - quotient * div) != 0) & ((wide < 0) != (div < 0))
    return quotient.astype(part.dtype)


def _flat_table(table: np.ndarray) -> np.ndarray:
    return table.reshape(table.shape[0], -1)


def _index_array(values: np.ndarray) -> np.ndarray:
    return values.astype(np.int64, copy=False).reshape(-1)


def embedding_bag_offsets(table: np.ndarray, indices: np.ndarray, offsets: np.ndarray,
                          default_index: np.ndarray | None = None, weights: np.ndarray | None = None, *,
                          reduction: str = "sum") -> np.ndarray:
    """EmbeddingBagOffsetsSum-3 / EmbeddingBagOffsets-15 (bit-exact: the reference's order and arithmetic)."""
    arith = _Arith(table.dtype)
    idx = _index_array(indices)
    off = _index_array(offsets)
    n, bags = idx.size, off.size
    if bags:
        bad = (off < 0) | (off >= n)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"offset {int(off[at])} of bag {at} is outside [0, {n - 1}] ({n} indices; OpenVINO's reference"
                " throws 'Offset value exceeds indices size', even for an empty last bag)",
                port="input 2 (offsets)", hint="every bag must start at an existing index")
        if (np.diff(off) < 0).any():
            at = int(np.flatnonzero(np.diff(off) < 0)[0])
            raise InputError(f"offsets decrease from {int(off[at])} (bag {at}) to {int(off[at + 1])} (bag {at + 1})"
                             " (the reference reads outside the indices)", port="input 2 (offsets)",
                             hint="offsets must be non-decreasing")
        _check_rows(idx[off[0]:], table.shape[0], "input 1 (indices)")
    counts = np.diff(np.append(off, n)) if bags else off
    flat = _flat_table(table)
    w = None if weights is None else weights.reshape(-1)
    acc = _bag_sums(flat, idx, off, counts, w, arith)
    empty = counts == 0
    if default_index is not None and empty.any():
        default = int(np.asarray(default_index).reshape(-1)[0])
        if default >= 0:
            _check_rows(np.array([default]), table.shape[0], "input 3 (default_index)", "default_index")
            with np.errstate(all="ignore"):
                acc[empty] = arith.round(acc[empty] + arith.load(flat[default]))
    full = counts > 0
    if reduction == "mean" and full.any():  # (an empty bag is its default row or zeros, undivided)
        acc[full] = _divide_by_count(acc[full], counts[full], arith, "input 1 (indices)")
    return arith.store(acc).reshape((bags,) + table.shape[1:])


def embedding_bag_packed(table: np.ndarray, indices: np.ndarray, weights: np.ndarray | None = None, *,
                         reduction: str = "sum") -> np.ndarray:
    """EmbeddingBagPackedSum-3 / EmbeddingBagPacked-15 (bit-exact: the reference's order and arithmetic)."""
    arith = _Arith(table.dtype)
    bags, per_bag = indices.shape
    idx = _index_array(indices)
    _check_rows(idx, table.shape[0], "input 1 (indices)")
    starts = np.arange(bags, dtype=np.int64) * per_bag
    counts = np.full(bags, per_bag, np.int64)
    w = None if weights is None else weights.reshape(-1)
    acc = _bag_sums(_flat_table(table), idx, starts, counts, w, arith)
    if reduction == "mean":
        acc = _divide_by_count(acc, counts, arith, "input 1 (indices)")
    return arith.store(acc).reshape((bags,) + table.shape[1:])


def embedding_segments_sum(table: np.ndarray, indices: np.ndarray, segment_ids: np.ndarray,
                           num_segments: np.ndarray, default_index: np.ndarray | None = None,
                           weights: np.ndarray | None = None) -> np.ndarray:
    """EmbeddingSegmentsSum-3 (bit-exact: each segment adds its indices in index order, as the reference)."""
    arith = _Arith(table.dtype)
    segments = int(np.asarray(num_segments).reshape(-1)[0])
    if segments < 0:
        raise InputError(f"num_segments is {segments}, it must not be negative", port="input 3 (num_segments)")
    idx = _index_array(indices)
    seg = _index_array(segment_ids)
    bad = (seg < 0) | (seg >= segments)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise InputError(f"segment id {int(seg[at])} at position {at} is outside [0, {segments - 1}]"
                         " (OpenVINO's reference throws 'Segment index could not be more than segments number')",
                         port="input 2 (segment_ids)", hint="segment ids must be below num_segments")
    _check_rows(idx, table.shape[0], "input 1 (indices)")
    order = np.argsort(seg, kind="stable")  # each segment's indices together, in index order
    sorted_seg = seg[order]
    starts = np.searchsorted(sorted_seg, np.arange(segments), side="left")
    counts = np.searchsorted(sorted_seg, np.arange(segments), side="right") - starts
    flat = _flat_table(table)
    w = None if weights is None else weights.reshape(-1)[order]
    acc = _bag_sums(flat, idx[order], starts, counts, w, arith)
    empty = counts == 0
    if default_index is not None and empty.any():
        default = int(np.asarray(default_index).reshape(-1)[0])
        _check_rows(np.array([default]), table.shape[0], "input 4 (default_index)", "default_index")
        acc[empty] = arith.load(flat[default])  # assigned, not added to +0 (a -0 row stays -0)
    return arith.store(acc).reshape((segments,) + table.shape[1:])


# -- batch rules -------------------------------------------------------------------------------------------------

def _batch_packed(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]):
    """Packed bags are the rows of indices (and weights): their batch axis 0 is the output's axis 0. A batch
    axis of the table past its first dim stays where it is; along the table's rows, or across a bag, it
    mixes rows."""
    table_axis, index_axes = axes[0], list(axes[1:])
    if table_axis is not None and table_axis == 0:
        return "the batch axis numbers the embeddings: every bag may read any of them"
    if any(a not in (None, 0) for a in index_axes):
        return "the batch axis runs across the indices of a bag"
    if any(a == 0 for a in index_axes):
        if len(index_axes) > 1 and None in index_axes:
            return "indices and per_sample_weights must both carry the batch axis"
        if table_axis is not None:
            return "the table and the indices bring their batch axes to different output axes"
        return [0]
    return [table_axis]


def _batch_table_only(params, inputs: list[TensorSpec], outputs: list[TensorSpec], axes: list[int | None]):
    """Offsets and segments number the bags through values (offsets, segment ids) that a block of rows would
    cut: only a batch axis of the table past its first dim (an embedding dim) passes, unchanged."""
    if any(a is not None for a in axes[1:]):
        return "bags are defined by offsets or segment ids into the whole indices tensor"
    if axes[0] == 0:
        return "the batch axis numbers the embeddings: every bag may read any of them"
    return [axes[0]]


def _fit_indices(params, inputs: list[TensorSpec], position: int, positions: tuple[int, ...]):
    """Generated indices (and default indices): row numbers of the table."""
    dims = inputs[0].shape.dims
    if position not in positions or dims is None or not dims[0].is_static or dims[0].lo == 0:
        return None
    return InputFit("index", 0, dims[0].lo - 1, f"emb_table has {dims[0].lo} rows")


def _fit_offsets(params, inputs, position):
    return _fit_indices(params, inputs, position, (1, 3))


def _fit_packed(params, inputs, position):
    return _fit_indices(params, inputs, position, (1,))


def _fit_segments(params, inputs, position):
    return _fit_indices(params, inputs, position, (1, 4))


_REDUCTION_ATTR = (Attr("reduction", "sum", ("sum", "mean")),)

OPS = (
    OpDef("EmbeddingBagOffsetsSum", 3, 3, LATEST_OPSET, OFFSETS_NAMES, lambda ctx: infer_offsets(ctx, 3),
          embedding_bag_offsets, min_inputs=3, batch=_batch_table_only, fit=_fit_offsets,
          roles=("data", "indices", "offsets", "indices", "weights")),
    OpDef("EmbeddingBagOffsets", 15, 15, LATEST_OPSET, OFFSETS_NAMES, lambda ctx: infer_offsets(ctx, 15),
          embedding_bag_offsets, min_inputs=3, batch=_batch_table_only, fit=_fit_offsets, attrs=_REDUCTION_ATTR,
          roles=("data", "indices", "offsets", "indices", "weights")),
    OpDef("EmbeddingBagPackedSum", 3, 3, LATEST_OPSET, PACKED_NAMES, lambda ctx: infer_packed(ctx, 3),
          embedding_bag_packed, min_inputs=2, batch=_batch_packed, fit=_fit_packed,
          roles=("data", "indices", "weights")),
    OpDef("EmbeddingBagPacked", 15, 15, LATEST_OPSET, PACKED_NAMES, lambda ctx: infer_packed(ctx, 15),
          embedding_bag_packed, min_inputs=2, batch=_batch_packed, fit=_fit_packed, attrs=_REDUCTION_ATTR,
          roles=("data", "indices", "weights")),
    OpDef("EmbeddingSegmentsSum", 3, 3, LATEST_OPSET, SEGMENTS_NAMES, infer_segments, embedding_segments_sum,
          min_inputs=4, batch=_batch_table_only, fit=_fit_segments,
          roles=("data", "indices", "indices", "sizes", "indices", "weights")),
)
