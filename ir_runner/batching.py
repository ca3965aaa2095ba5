"""Batch separability: proving, before any work, that a model keeps the rows of a batch apart.

A chunked run (``ir_runner.dask``) cuts the model's batched inputs into blocks of rows along a batch axis
and runs the model on each block. That gives the whole run's result only when no layer mixes rows. The
proof is made for the graph as a whole, over *probes*: the graph inferred for each size the run will see
(every distinct block size, and the whole data's rows). Each tensor is then one of three kinds:

- **rows** on an axis (an int): its slices along that axis are the rows of the block, each computed from
  its own input rows. Each operation declares how such an axis passes through it (``OpDef.batch``), which
  says where rows mix (a Gather along the batch axis, a reduction over it, a reshape that merges rows).
- **shared** (None): the same value in every block and in the whole run (Consts, shared inputs, and what is
  computed from them alone).
- **sized**: a value computed from the block's shape, not from its rows (ShapeOf of a batched tensor, and the
  Gather -> Concat -> Reshape target subgraphs models exported from PyTorch build from it). Where its
  value is known at every probe (constant folding) and the same at each, it is shared after all (a
  sequence length); otherwise it depends on the block's size and may only decide shapes: it may enter a
  layer that carries rows only at an input whose role decides shapes (Reshape's target, Broadcast's target
  shape, Slice's stop...), where that layer's rule, evaluated at every probe, checks the shape it makes.

A layer that gets rows and whose operation has no rule, whose rule says why it mixes rows, that gets a sized
value as data, or whose rule places its rows on different axes at two probes ends the proof with a
:class:`BatchError` naming the layer and the port.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .errors import BatchError
from .ops.api import REPLICATES, SIZED, BatchAxis, RowOffsets, Sized

if TYPE_CHECKING:
    from .infer import Inference


Kind = int | None | Sized
"""A tensor's batch kind: its batch axis, None (shared) or SIZED (see the module docstring)."""


def trace_batch(inference: Inference, input_axes: Sequence[int | None]) -> tuple[Kind, ...]:
    """The batch axis of each model output for one probe: ``trace_batches([inference], input_axes)[0]``."""
    return trace_batches([inference], input_axes)[0]


def trace_batches(inferences: Sequence[Inference], input_axes: Sequence[int | None]) -> list[tuple[Kind, ...]]:
    """Per probe (the graph inferred for one block size each), the batch kind of each model output (Result
    layers in document order): its batch axis (a :class:`BatchAxis`: its dim holds whole rows), None
    (shared) or SIZED, when the model inputs (Parameters in document order) carry their rows at
    ``input_axes``.

    Raises BatchError for the first layer that cannot pass the rows on.
    """
    graph = inferences[0].graph
    probes = [_Probe(inference, input_axes) for inference in inferences]
    for layer_id in graph.order:
        if (layer_id, 0) in probes[0].kinds:
            continue
        incoming = [[probe.kinds[slot] for slot in graph.sources[layer_id]] for probe in probes]
        outgoing = _layer_kinds(probes, layer_id, incoming)
        for probe, found in zip(probes, outgoing):
            for position, kind in enumerate(found):
                probe.kinds[layer_id, position] = kind
    return [tuple(probe.kinds[graph.sources[layer.id][0]] for layer in graph.results) for probe in probes]


class _Probe:
    """The graph inferred for one block size, and the batch kind of each tensor found so far."""

    def __init__(self, inference: Inference, input_axes: Sequence[int | None]) -> None:
        self.inference = inference
        parameters = inference.graph.parameters
        rows = [inference.layers[layer.id].outputs[0].shape.dims[axis] for layer, axis in zip(parameters, input_axes)
                if axis is not None]
        self.rows = rows[0].lo if rows and rows[0].is_static else 0
        self.kinds: dict[tuple[str, int], Kind] = {
            (layer.id, 0): None if axis is None else BatchAxis(axis, self.rows)
            for layer, axis in zip(parameters, input_axes)}  # placed by the caller

    def per_row(self, info, outgoing: list[int | None]) -> tuple[list[Kind], list[int | None]]:
        """The rule's output axes as BatchAxis, and how many elements of each output's batch dim one row
        has (None: no batch axis, or the rows are not known)."""
        kinds, factors = [], []
        for axis, spec in zip(outgoing, info.outputs):
            if axis is None:
                kinds.append(None)
                factors.append(None)
                continue
            dim = spec.shape.dims[axis]
            factor = dim.lo // self.rows if dim.is_static and self.rows and dim.lo % self.rows == 0 else None
            if factor is None and self.rows:
                raise BatchError(f"output {info.outputs.index(spec)} has {dim} on its batch axis {axis} for a block"
                                 f" of {self.rows} rows: rows would be merged or split", layer=info.ref)
            kinds.append(BatchAxis(axis, self.rows))
            factors.append(factor)
        return kinds, factors


def _layer_kinds(probes: Sequence[_Probe], layer_id: str, incoming: list[list[Kind]]) -> list[list[Kind]]:
    """The kinds of a layer's outputs, per probe."""
    infos = [probe.inference.layers[layer_id] for probe in probes]
    count = len(infos[0].outputs)
    rows = any(isinstance(kind, int) for kinds in incoming for kind in kinds)
    sized = any(isinstance(kind, Sized) for kinds in incoming for kind in kinds)
    op = infos[0].op
    if not rows and not sized:
        return [[None] * count for _ in infos]
    if not rows or op is not None and op.shape_only:
        kinds = _sized_or_shared(probes, layer_id, count)
        if SIZED in kinds and op is not None and op.batch is not None and all(
                not isinstance(kind, Sized) or position in op.deciding for position, kind in enumerate(incoming[0])):
            return _replicated(probes, infos, incoming, kinds)
        return [list(kinds) for _ in probes]
    found = [probe.per_row(info, _apply_rule(info, kinds)) for probe, info, kinds in zip(probes, infos, incoming)]
    if any(axes != found[0] for axes in found):
        laid = "; ".join(f"{probe.rows} rows: axes {[None if a is None else int(a) for a in axes]},"
                         f" elements per row {factors}" for probe, (axes, factors) in zip(probes, found))
        raise BatchError(f"{op.label} lays the rows out differently for different block sizes ({laid}), so the"
                         " blocks cannot be put together as the whole run", layer=infos[0].ref,
                         hint="run the model on the whole data with Model.run")
    return [axes for axes, _ in found]


def _replicated(probes: Sequence[_Probe], infos: list, incoming: list[list[Kind]], kinds: list[Kind]
                ) -> list[list[Kind]]:
    """A layer that makes its shape from sized values and its data from shared ones: where its rule says
    that it copies the data (Broadcast), its one axis that grows with the rows (found by comparing the
    probes) carries rows that are the same in every block."""
    verdicts = infos[0].op.batch(infos[0].params, infos[0].inputs, infos[0].outputs, incoming[0])
    out = [list(kinds) for _ in probes]
    for port, verdict in enumerate(verdicts if not isinstance(verdicts, str) else ()):
        if verdict != REPLICATES or kinds[port] is not SIZED:
            continue
        shapes = [info.outputs[port].shape for info in infos]
        if not all(shape.is_static for shape in shapes) or len({shape.rank for shape in shapes}) != 1:
            continue
        dims = [shape.to_shape() for shape in shapes]
        grows = [axis for axis in range(len(dims[0])) if len({d[axis] for d in dims}) > 1]
        if len(grows) == 1 and all(d[grows[0]] == probe.rows for d, probe in zip(dims, probes)):
            for kinds_of_probe, probe in zip(out, probes):
                kinds_of_probe[port] = BatchAxis(grows[0], probe.rows)
    return out


def _sized_or_shared(probes: Sequence[_Probe], layer_id: str, count: int) -> list[Kind]:
    """Outputs computed from sized and shared values alone (or from shapes only): shared where their value
    is known at every probe and the same at each (or there is only one probe: every block has the one
    size), row offsets where the known values have their form, else sized."""
    if len(probes) == 1:
        return [None] * count
    values = [probe.inference.folder.layer_values(layer_id) for probe in probes]
    kinds: list[Kind] = []
    for port in range(count):
        known = [found[port] if found is not None else None for found in values]
        if all(value is not None for value in known) and all(_same_value(value, known[0]) for value in known[1:]):
            kinds.append(None)
        else:
            kinds.append(_row_offsets([(probe.rows, value) for probe, value in zip(probes, known)
                                       if value is not None]) or SIZED)
    return kinds


def _row_offsets(known: list[tuple[int, np.ndarray]]) -> RowOffsets | None:
    """The row offsets these values are, if they are: integers with one axis of one entry per row where row
    ``i`` holds ``stride * i + base``, ``0 <= base < stride``, base the same for every row and probe. Read
    from the probes whose values constant folding computed (the small ones, which include the sample
    sizes 2 and 3 that ir_runner.dask adds): for larger blocks the form is taken as sampled."""
    if len({rows for rows, _ in known}) < 2 or any(value.dtype.kind not in "iu" for _, value in known):
        return None
    ranks = {value.ndim for _, value in known}
    if len(ranks) != 1:
        return None
    axes = [axis for axis in range(ranks.pop()) if all(value.shape[axis] == rows for rows, value in known)]
    if len(axes) != 1:
        return None
    axis = axes[0]
    rows, sample = max(known, key=lambda pair: pair[0])
    steps = np.diff(sample.astype(np.int64), axis=axis)
    if not steps.size or (steps != steps.flat[0]).any() or steps.flat[0] <= 0:
        return None
    stride = int(steps.flat[0])
    base = np.take(sample, [0], axis=axis).astype(np.int64)
    for rows, value in known:
        index = np.arange(rows).reshape([-1 if d == axis else 1 for d in range(value.ndim)])
        if not np.array_equal(value.astype(np.int64) - stride * index, np.broadcast_to(base, value.shape)):
            return None
    if base.min(initial=0) < 0 or base.max(initial=0) >= stride:
        return None
    return RowOffsets(axis, stride)


def _same_value(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _apply_rule(info, incoming: list[Kind]) -> list[int | None]:
    op = info.op
    carried = ", ".join(f"input {i} on dim {axis}" for i, axis in enumerate(incoming) if isinstance(axis, int))
    if op is None or op.batch is None:
        name = op.label if op is not None else info.layer.type
        raise BatchError(f"{name} declares no batch rule, so ir-run cannot prove that it keeps the rows of a"
                         f" batch apart ({carried} carry the batch axis)", layer=info.ref,
                         port=_rows_port(info, incoming),
                         hint="run the model on the whole data with Model.run, or declare the operation's batch"
                              " rule (OpDef.batch)")
    takes = getattr(op.batch, "row_offsets", ())
    for position, kind in enumerate(incoming):
        if isinstance(kind, RowOffsets) and position in takes:
            continue
        if isinstance(kind, Sized) and position not in op.deciding:
            raise BatchError(f"its input {position} is computed from the block's shape (its number of rows), and"
                             f" {op.label} uses it as data ({carried} carry the batch axis): each block would see"
                             " its own size where the whole run sees all the rows", layer=info.ref,
                             port=_input_port(info, position),
                             hint="run the model on the whole data with Model.run, or in blocks of one size")
    axes = [None if isinstance(kind, Sized) and position in op.deciding else kind
            for position, kind in enumerate(incoming)]
    result = op.batch(info.params, info.inputs, info.outputs, axes)
    if isinstance(result, str):
        raise BatchError(f"the batch axis cannot pass this layer ({carried}): {result}", layer=info.ref,
                         port=_rows_port(info, incoming),
                         hint="only the rows of a batch may be split: make the batch axis another one"
                              " (batch_axis=), or run the model on the whole data")
    outgoing = list(result)
    ranks = [spec.shape.rank for spec in info.outputs]
    if len(outgoing) != len(ranks) or any(
        axis is not None and (rank is None or not 0 <= axis < rank) for axis, rank in zip(outgoing, ranks)
    ):
        raise BatchError(f"the batch rule of {op.label} returned {outgoing!r} for outputs of ranks {ranks}"
                         " (a bug in the operation's declaration)", layer=info.ref)
    return outgoing


def _input_port(info, position: int) -> str:
    names = info.op.input_names
    return f"input {position} ({names[min(position, len(names) - 1)]})"


def _rows_port(info, incoming: list[Kind]) -> str | None:
    """The first input that carries rows, as an error's port."""
    position = next((i for i, kind in enumerate(incoming) if isinstance(kind, int)), None)
    if position is None or info.op is None:
        return None if position is None else f"input {position}"
    return _input_port(info, position)
