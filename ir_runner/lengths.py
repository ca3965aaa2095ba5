"""Plans that hold across lengths: one plan for a family of input shapes that differ only in dims that grow
together (a decoder's attention mask and KV cache, one longer at each step).

A decoding step feeds a longer mask and cache at every step (in variables, on a state; or as inputs, without one):
each step is a new signature, which the model would infer and plan anew. When two signatures differ only in some
dims, all by the same amount, those dims *vary*: the model is inferred once more with them unknown (at least 2, so
that no broadcast of a 1 and no empty tensor hides in them), and planned from that inference (a generic plan, see
``build_plan(exact_at=)``): a layer whose parameters are those the exact inference of the current signature gave
takes the plain kernel, which needs no shape (or one prepared per shape when its operation's prepared kernel is not
bit-exact, as the exact plan would have it); any other is inferred again at run (or given its parameters by its
operation's ``at_run``; equal layers share one cache per plan); what the constant folder computed from shapes is
computed by the run. Outputs the generic inference does not know but two exact inferences found static and equal
are pinned (:func:`pins`) and checked at run. The generic inference reuses the exact one for the layers no varying
dim reaches (their folded weights are shared).

A family serves the signatures whose varying dims are all its own plus one common amount, each at least 2
and at most twice the dim it was made at (a longer one makes a new family: a few per thousand steps), and
whose other dims and element types are those it was made for (not values: no value is known to a generic
inference, the layers whose shapes values decide are inferred at run). Whatever the generic plan raises is
not reported: the run is planned exactly, as without families, that plan gives the error, and the family is
dropped (a pin that does not hold would fail every run; the next exact steps make a new one). The memory
limit: a family is made only when its tensors at twice the lengths fit (the exact total at its signature
times 2 to the largest rank, a bound for dims that are sums and products of the varying dims).
"""

from __future__ import annotations

from collections.abc import Sequence

from .infer import Inference, static_specs
from .plan import Footprint, Plan, build_plan
from .record import Record
from .types import Dim, PartialShape, TensorSpec

Signature = tuple[tuple, ...]  # per input, then per variable: (dtype, shape); a variable unset: None
MAX_FAMILIES = 8
_LEAST = 2  # the smallest value of a varying dim a family serves
_GROWTH = 2  # a family serves varying dims up to this many times the dims it was made at


class Family(Record):
    """The signatures one generic plan serves: ``base`` is the signature it was made at, ``varying`` the
    positions (tensor, axis) of the dims that vary; ``plan`` the generic plan. ``fixed``: the tensors without a
    varying dim (compared whole); ``moving``: per tensor with some, (tensor, its axes that vary, the others)."""

    __slots__ = ("base", "varying", "plan", "fixed", "moving")

    def __init__(self, base: Signature, varying: tuple[tuple[int, int], ...], plan: Plan) -> None:
        self.base = base
        self.varying = varying
        self.plan = plan
        axes: dict[int, list[int]] = {}
        for tensor, axis in varying:
            axes.setdefault(tensor, []).append(axis)
        self.fixed = tuple(tensor for tensor in range(len(base)) if tensor not in axes)
        self.moving = tuple((tensor, tuple(moved), tuple(a for a in range(len(base[tensor][1])) if a not in moved))
                            for tensor, moved in axes.items())

    def admits(self, signature: Signature) -> bool:
        """Whether ``signature`` is ``base`` with every varying dim moved by one common amount, within
        ``[_LEAST, _GROWTH * base]``, and nothing else changed (another element type, rank or fixed dim, or a
        variable unset: not admitted). Runs at every step: a few comparisons per tensor."""
        base = self.base
        if len(signature) != len(base) or any(signature[tensor] != base[tensor] for tensor in self.fixed):
            return False
        shift = None
        for tensor, moved, others in self.moving:
            now, (dtype, was) = signature[tensor], base[tensor]
            if now is None or (now[0] is not dtype and now[0] != dtype) or len(now[1]) != len(was):
                return False
            shape = now[1]
            if any(shape[axis] != was[axis] for axis in others):
                return False
            for axis in moved:
                if shape[axis] < _LEAST or shape[axis] > _GROWTH * was[axis] or (
                        shift is not None and shape[axis] - was[axis] != shift):
                    return False
                shift = shape[axis] - was[axis]
        return True


def varying_dims(previous: Signature, signature: Signature) -> tuple[tuple[int, int], ...] | None:
    """The dims (tensor, axis) that differ between two signatures, when they all differ by one common amount
    and are at least ``_LEAST`` in both, and nothing else differs; else None."""
    if len(previous) != len(signature):
        return None
    found, shift = [], None
    for tensor, (was, now) in enumerate(zip(previous, signature)):
        if was is None or now is None:
            return None
        if was[0] != now[0] or len(was[1]) != len(now[1]):
            return None
        for axis, (a, b) in enumerate(zip(was[1], now[1])):
            if a == b:
                continue
            if min(a, b) < _LEAST or (shift is not None and b - a != shift):
                return None
            shift = b - a
            found.append((tensor, axis))
    return tuple(found) or None


def with_unknown_dims(spec: TensorSpec, axes) -> TensorSpec:
    """``spec`` with the dims at ``axes`` unknown, at least ``_LEAST``: a varying tensor as the generic inference
    takes it."""
    if not axes:
        return spec
    dims = tuple(Dim(_LEAST, None) if axis in axes else dim for axis, dim in enumerate(spec.shape.dims))
    return TensorSpec(spec.element_type, PartialShape(dims))


def fits_memory(footprint: Footprint | None, limit: int | None) -> bool:
    """Whether a family made at a signature whose exact inference has this ``footprint`` (what
    :func:`~ir_runner.plan.check_memory` returned for it, None: a shape not static) keeps its tensors within
    ``limit`` (see the module)."""
    if limit is None:
        return True
    return footprint is not None and footprint.total * _GROWTH ** footprint.rank <= limit


def pins(generic: Inference, exact: Inference, earlier: Inference | None) -> dict[str, list[TensorSpec]]:
    """The output specs to pin in ``generic``: those of the computed layers whose outputs it does not know but
    the exact inferences of two signatures (``exact``, ``earlier``) found static and equal (a decoding step's
    attention output, one query long whatever the cache's length, which the causal mask's shape arithmetic
    hides from inference). The generic plan checks them at run (``build_plan``): a pin that does not hold fails
    the run, which is then planned exactly."""
    found: dict[str, list[TensorSpec]] = {}
    if earlier is None or earlier is exact:
        return found
    by_values = _decided_by_values(generic)
    for layer_id, info in generic.layers.items():
        if info.op is None or info.op.type in _NOT_COMPUTED or info.op.state or static_specs(info.outputs) or (
                layer_id in by_values):
            continue
        known, before = exact.layers[layer_id].outputs, earlier.layers.get(layer_id)
        if before is None or before.outputs != known or not static_specs(known):
            continue
        if all(spec.element_type == spec_known.element_type and spec.shape.accepts(spec_known.shape.to_shape())
               for spec, spec_known in zip(info.outputs, known)) and len(known) == len(info.outputs):
            found[layer_id] = list(known)
    return found


_NOT_COMPUTED = ("Parameter", "Const", "Result")


def _decided_by_values(generic: Inference) -> set[str]:
    """The layers whose shapes the values of inputs or variables may decide (a MoE router's NonZero, whose count of
    tokens changes from step to step whatever the lengths), and every layer after them: never pinned. Shapes
    decided by shapes alone (a Range over a cache's length) are not."""
    graph = generic.graph
    found: set[str] = set()
    for layer_id, port in generic.deciding_inputs():
        stack, seen = [graph.sources[layer_id][port][0]], set()
        while stack and layer_id not in found:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            op = generic.layers[current].op
            if op is None or op.type == "Parameter" or op.state:
                found.add(layer_id)
            elif not op.shape_only:
                stack.extend(source for source, _ in graph.sources[current])
    for layer_id in graph.order:
        if layer_id not in found and any(source in found for source, _ in graph.sources[layer_id]):
            found.add(layer_id)
    return found


def generic_plan(generic: Inference, exact: Inference, fed: tuple[str, ...], stored: tuple[tuple[str, int], ...],
                 kernels: dict[int, tuple]) -> Plan:
    """The plan of ``generic`` (the varying dims unknown) that the family's signatures share (see the module);
    its memory is :func:`fits_memory`'s to check; ``kernels`` as ``build_plan``'s (the model's, shared with its
    exact plans). Families are for models that are not strict."""
    return build_plan(generic, None, checked=True, fed=fed, stored=stored, kernels=kernels, exact_at=exact)


def find(families: Sequence[Family], signature: Signature) -> Plan | None:
    """The generic plan of the newest family that admits ``signature``."""
    for family in reversed(families):
        if family.admits(signature):
            return family.plan
    return None
