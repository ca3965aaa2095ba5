"""Batch separability: proving, before any work, that a model keeps the rows of a batch apart.

A chunked run (``ir_runner.dask``) cuts the model's batched inputs into blocks of rows along a batch axis
and runs the model on each block. That gives the whole run's result only when no layer mixes rows. Each
operation declares how a batch axis passes through it (``OpDef.batch``); this module walks the graph in
execution order and follows the batch axis from tensor to tensor (None: the tensor has no batch axis, so
it is the same in every block, e.g. a Const or a shared mask). A layer whose inputs carry no batch axis
needs no rule. A layer that gets one and whose operation has no rule, or whose rule says why it mixes
rows, ends the proof with a :class:`BatchError` naming the layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .errors import BatchError

if TYPE_CHECKING:
    from .infer import Inference


def trace_batch(inference: Inference, input_axes: Sequence[int | None]) -> tuple[int | None, ...]:
    """The batch axis of each model output (Result layers in document order; None: no batch axis) when
    the model inputs (Parameters in document order) carry theirs at ``input_axes``.

    ``inference`` should be inferred for the shapes of one block (rules may look at dims). Raises
    BatchError for the first layer that cannot pass the batch axis on.
    """
    graph = inference.graph
    axes: dict[tuple[str, int], int | None] = {
        (layer.id, 0): axis for layer, axis in zip(graph.parameters, input_axes)}  # placed by the caller
    for layer_id in graph.order:
        if (layer_id, 0) in axes:
            continue
        info = inference.layers[layer_id]
        incoming = [axes[slot] for slot in graph.sources[layer_id]]
        count = len(info.outputs)
        if all(axis is None for axis in incoming):
            outgoing: list[int | None] = [None] * count
        else:
            outgoing = _apply_rule(info, incoming)
        for position, axis in enumerate(outgoing):
            axes[layer_id, position] = axis
    return tuple(axes[graph.sources[layer.id][0]] for layer in graph.results)


def _apply_rule(info, incoming: list[int | None]) -> list[int | None]:
    op = info.op
    carried = ", ".join(f"input {i} on dim {axis}" for i, axis in enumerate(incoming) if axis is not None)
    if op is None or op.batch is None:
        name = op.label if op is not None else info.layer.type
        raise BatchError(f"{name} declares no batch rule, so ir-run cannot prove that it keeps the rows of a"
                         f" batch apart ({carried} carry the batch axis)", layer=info.ref,
                         hint="run the model on the whole data with Model.run, or declare the operation's batch"
                              " rule (OpDef.batch)")
    result = op.batch(info.params, info.inputs, info.outputs, incoming)
    if isinstance(result, str):
        raise BatchError(f"the batch axis cannot pass this layer ({carried}): {result}", layer=info.ref,
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
