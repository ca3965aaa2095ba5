"""Which plan steps write their output into an input's buffer instead of a new array.

An element-wise layer (its operation declares the input positions in ``OpDef.in_place``) whose output has
the dtype and shape of such an input writes into that input's array when the array is provably private and
dead after the layer:

- a kernel of this run made it: the output of a step whose operation returns new arrays (no ``views``), is
  built in (an extension's kernel may not keep that promise) and reads or writes no model variable; never a
  Parameter's array (the caller's), a Const, a folded value, a variable's state or a caller's ``out=`` array;
- no later step reads it, nor a model output (or a value a variable stores), directly or through a view: the
  outputs of ``views`` operations (Reshape, Transpose, Split...) count as reads of every input they may alias;
- no other input of the layer may alias it (an input of the same slot, ``Multiply(x, x)``, is the same array:
  exact aliasing, which the declaration covers);
- at run, it is C-contiguous and writeable (else the step allocates, as usual).

The kernel must accept ``out=`` (``plan.accepts_out``). Runs that observe every layer (traces, per-layer
timings) keep every value and so never write in place (see ``runtime.execute``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .infer import LayerInference
from .ops.api import KernelFn
from .ops.registry import BUILTIN_ORIGIN

_FOREVER = float("inf")


def reused_inputs(steps_raw: Sequence[tuple], layers: Sequence[LayerInference], keep: set[int],
                  writes_out: Sequence[bool]) -> list[int | None]:
    """Per step of ``steps_raw`` (``(kernel, ref, input slots, output slots)``, computing ``layers``), the input
    position whose buffer its output may take, or None. ``keep``: the slots the run returns (outputs, stored
    values); ``writes_out``: per step, whether its kernel accepts ``out=``."""
    roots: dict[int, frozenset[int]] = {}  # slot -> the step outputs whose memory it may be (views follow inputs)
    owned: set[int] = set()  # slots holding a new array of a built-in kernel
    specs: dict[int, tuple] = {}
    for (_, _, inputs, outputs), info in zip(steps_raw, layers):
        op = info.op
        if op.views:
            shared = frozenset().union(*(roots.get(slot, frozenset((slot,))) for slot in inputs))
            roots.update((slot, shared) for slot in outputs)
            continue
        roots.update((slot, frozenset((slot,))) for slot in outputs)
        if op.state is None and op.origin is not None and op.origin.startswith(BUILTIN_ORIGIN):
            owned.update(outputs)
            specs.update((slot, _static(spec)) for slot, spec in zip(outputs, info.outputs))
    last_read: dict[int, float] = {}
    for index, (_, _, inputs, _) in enumerate(steps_raw):
        for slot in inputs:
            last_read.update((root, index) for root in roots.get(slot, (slot,)))
    for slot in keep:
        last_read.update((root, _FOREVER) for root in roots.get(slot, (slot,)))
    chosen: list[int | None] = []
    for index, ((_, _, inputs, outputs), info, accepts) in enumerate(zip(steps_raw, layers, writes_out)):
        position = None
        if accepts and len(outputs) == 1 and info.op.in_place:
            want = _static(info.outputs[0])
            position = next((p for p in info.op.in_place if p < len(inputs) and want is not None
                             and _dead_here(inputs, p, index, owned, specs, want, last_read, roots)), None)
        chosen.append(position)
    return chosen


def _dead_here(inputs: tuple[int, ...], position: int, index: int, owned: set[int], specs: dict[int, tuple],
               want: tuple, last_read: dict[int, float], roots: dict[int, frozenset[int]]) -> bool:
    """Whether input ``position`` of step ``index`` is a private array of the output's spec that nothing reads
    after the step and no other input of the step may alias."""
    slot = inputs[position]
    if slot not in owned or specs.get(slot) != want or last_read.get(slot) != index:
        return False
    return all(other == slot or slot not in roots.get(other, ()) for other in inputs)


def _static(spec) -> tuple | None:
    """(dtype, shape) of a spec of static shape and a numpy dtype, else None."""
    if not spec.shape.is_static or spec.element_type.dtype is None:
        return None
    return spec.element_type.dtype, spec.shape.to_shape()


def writing_into(kernel: KernelFn, position: int) -> KernelFn:
    """``kernel`` called with ``out=`` its input ``position`` when that array is C-contiguous and writeable
    (a kernel may return another layout, or a read-only array), else as it is."""
    def run(*inputs):
        target = inputs[position]
        flags = target.flags
        if flags.c_contiguous and flags.writeable:
            return kernel(*inputs, out=target)
        return kernel(*inputs)

    return run
