"""The executable plan: a flat list of kernel steps over numbered slots.

Inference resolves every parameter (normalised axis, batch_dims, broadcast mode); the plan gives each
tensor a slot number, preloads Const views and the values the constant folder computed, and records after
which step each intermediate can be released. Running a plan is a short loop (see ``runtime.execute``).

Ownership: a caller owns every output it gets. Kernels return new arrays unless their operation declares
``views`` (Reshape, Transpose...); an output that may alias a feed, a constant or another output is
copied when it is returned.

Caller-given output buffers (``Model.run(out=...)``): a kernel that can write into one has the attribute
``accepts_out = True`` (for a ``functools.partial``, its function does) and is then called as
``kernel(*inputs, out=buffer)``, with a C-contiguous, writeable buffer of the output's exact dtype and
shape that overlaps none of its inputs. The plan marks the outputs whose step can do that; any other
output is copied into its buffer.

In place (:mod:`ir_runner.inplace`): a step whose operation declares ``in_place`` positions may be called
with ``out=`` one of its inputs, an array of the output's dtype and shape that a kernel of this run made and
that nothing reads after the step.
"""

from __future__ import annotations

import functools
import math
import operator
import threading

import numpy as np

from .blas import keep_single_threaded
from .errors import IRError, KernelError, LayerRef, ResourceLimitError, UnsupportedError, human_bytes, with_layer
from .extension import checked_kernel
from .heap import keep_freed_memory
from .infer import (
    Inference,
    LayerInference,
    constant_fingerprint,
    prepared_per_shape,
    run_time_kernel,
    static_nbytes,
    static_specs,
)
from .inplace import reused_inputs, writing_into
from .ir.weights import const_value
from .ops.api import KernelFn
from .record import Record

DEFAULT_MEMORY_LIMIT = 16 * 2**30


class Step(Record):
    """One kernel call: ``slots[output] = kernel(*slots[inputs])`` (for several outputs, ``outputs`` holds
    their slots and the kernel returns a tuple), then free the ``release`` slots. ``reuses``: the input
    position whose array the output may take (:mod:`ir_runner.inplace`), or None; ``call``: the kernel as a
    run that keeps no intermediate calls it (writing into that input when it can)."""

    __slots__ = ("kernel", "inputs", "output", "layer", "release", "outputs", "fetch", "reuses", "call")

    def __init__(self, kernel: KernelFn, inputs: tuple[int, ...], output: int, layer: LayerRef,
                 release: tuple[int, ...], outputs: tuple[int, ...] | None = None, reuses: int | None = None) -> None:
        self.kernel = kernel
        self.reuses = reuses
        self.call = kernel if reuses is None else writing_into(kernel, reuses)
        self.inputs = inputs
        self.output = output
        self.layer = layer
        self.release = release
        self.outputs = outputs
        # fetch(slots): the input values, unpackable as kernel arguments (one C call instead of a comprehension)
        self.fetch = operator.itemgetter(*inputs) if len(inputs) > 1 else operator.itemgetter(
            slice(inputs[0], inputs[0] + 1) if inputs else slice(0, 0))


class Plan(Record):
    """Everything needed to run: slot count, preloaded constants, steps, where inputs/outputs live, the
    outputs' (dtype, shape), and which outputs' steps can write into a caller's buffer.

    ``program`` is the steps as the plain run loop reads them, one tuple per step: ``(kernel, fetch, target,
    release, step)``, ``target`` the output slot, or for several outputs the slice of their (consecutive)
    slots; ``initial_slots`` the slots before a run (the constants in place), copied by each run. ``generic``:
    made for a family of input shapes (:mod:`ir_runner.lengths`); output shapes it does not know are None."""

    __slots__ = ("slot_count", "constants", "input_slots", "steps", "output_slots", "output_copies", "output_specs",
                 "output_into", "program", "initial_slots", "generic")

    def __init__(self, slot_count: int, constants: tuple[tuple[int, np.ndarray], ...], input_slots: tuple[int, ...],
                 steps: tuple[Step, ...], output_slots: tuple[int, ...], output_copies: tuple[bool, ...],
                 output_specs: tuple[tuple[np.dtype, tuple[int, ...]], ...], output_into: tuple[bool, ...],
                 generic: bool = False) -> None:
        self.slot_count = slot_count
        self.constants = constants
        self.input_slots = input_slots
        self.steps = steps
        self.output_slots = output_slots
        self.output_copies = output_copies
        self.output_specs = output_specs
        self.output_into = output_into
        self.program = tuple(_instruction(step) for step in steps)
        self.initial_slots: list = [None] * slot_count
        for slot, value in constants:
            self.initial_slots[slot] = value
        self.generic = generic


class PlanCache:
    """Plans by signature, for a model and for a sub-graph alike: at most ``size``, then started anew (a model
    fed ever new shapes keeps no more). Lookups take no lock; stores take the cache's, so several threads may
    plan and run at once (two that plan one signature together store equal plans)."""

    def __init__(self, size: int = 64) -> None:
        self._plans: dict[tuple, Plan] = {}
        self._size = size
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._plans)

    def get(self, signature: tuple) -> Plan | None:
        return self._plans.get(signature)

    def put(self, signature: tuple, plan: Plan) -> None:
        with self._lock:
            if len(self._plans) >= self._size:
                self._plans.clear()
            self._plans[signature] = plan


def _instruction(step: Step) -> tuple:
    """``step`` as the run loop reads it (see Plan)."""
    if step.outputs is None:
        return step.call, step.fetch, step.output, step.release, step
    first, count = step.outputs[0], len(step.outputs)
    if step.outputs != tuple(range(first, first + count)):
        raise ValueError("the outputs of a step must have consecutive slots")  # (build_plan numbers them so)
    return _counted(step.kernel, count), step.fetch, slice(first, first + count), step.release, step


def _counted(kernel: KernelFn, count: int) -> KernelFn:
    """``kernel`` checked to return ``count`` values (they fill a slice of the slots, which must keep its size)."""
    def run(*inputs: np.ndarray) -> tuple:
        values = tuple(kernel(*inputs))
        if len(values) != count:
            raise ValueError(f"the kernel returned {len(values)} values for {count} outputs")
        return values

    return run


def build_plan(inference: Inference, memory_limit: int | None = DEFAULT_MEMORY_LIMIT, *, checked: bool = False,
               fed: tuple[str, ...] = (), stored: tuple[tuple[str, int], ...] = (),
               kernels: dict[int, tuple] | None = None, strict: bool = False,
               exact_at: Inference | None = None) -> Plan:
    """Turn an error-free inference with static shapes into a plan (a layer output whose shape only its run
    decides, such as a Loop stopped by its body's condition, is computed by the plain kernel).

    Layers that the constant folder can compute (all inputs constant, outputs of at most FOLD_MAX_BYTES;
    or values known from shapes alone) become constants. Plans whose tensors exceed ``memory_limit`` or
    numpy's largest array are refused (``checked``: :func:`check_memory` already ran on this inference).
    ``fed``: layers whose output the run feeds, after the Parameters (a stateful model's variables);
    ``stored``: layer outputs the run returns after the Results (what its variables' writers receive).
    ``kernels``: the kernels of earlier plans of the same graph by LayerInference, taken for the layers whose
    inference this one reuses (``infer_graph(reuse=)``: same inputs, same constants), and filled.
    ``strict``: the model's, for the layers inferred again at run (see :func:`run_time_kernel`).
    ``exact_at``: ``inference`` is generic (dims that vary left unknown: :mod:`ir_runner.lengths`) and this is
    the inference of one signature it covers. A layer whose parameters differ there (they hold only for some
    values of the unknown dims) is inferred again at run; one of unknown shapes whose operation prepares
    kernels that are not bit-exact is prepared per shape at run (as a plan for those shapes would prepare it);
    the others take the plain kernel, which needs no shape; the plan is then ``generic``.

    The first plan built in the process (before anything runs) sets OpenBLAS to one thread (:mod:`.blas`) and
    glibc's heap to keep freed memory (:mod:`.heap`), both process-wide; later ones find them done (a flag each),
    so that no run pays for them.
    """
    keep_single_threaded()
    keep_freed_memory()
    if not checked:
        check_memory(inference, memory_limit)
    graph = inference.graph
    slots: dict[tuple[str, int], int] = {}
    values: dict[int, np.ndarray] = {}
    steps_raw = []
    layers = []  # the LayerInference of each step
    prepared: dict[tuple, KernelFn] = {}
    may_alias: set[int] = set()  # slots of kernels that may return views of their inputs
    # the caches the run-time layers of a generic plan share (see run_time_kernel and prepared_per_shape)
    shared, shared_prepared = ({}, {}) if exact_at is not None else (None, None)
    read = {source for sources in graph.sources.values() for source in sources}  # (layer, position) some layer reads
    for layer_id in graph.order:
        info = inference.layers[layer_id]
        kind = info.op.type if info.op else None
        if kind == "Result":
            continue
        outputs = []
        for position in range(len(info.outputs)):
            slots[(layer_id, position)] = len(slots)
            outputs.append(len(slots) - 1)
        if kind == "Const":
            values[outputs[0]] = const_value(info.params["value"])
        elif kind != "Parameter" and layer_id not in fed:
            inputs = tuple(slots[src] for src in graph.sources[layer_id])
            folded = None
            if all(slot in values for slot in inputs) or info.values is not None:
                folded = inference.folder.layer_values(layer_id)
            if folded is not None:
                values.update(zip(outputs, folded))
                continue
            known = kernels.get(id(info)) if kernels is not None else None
            static = static_specs(info.inputs)
            if exact_at is not None and not _holds(info, exact_at.layers[layer_id]):
                kernel = run_time_kernel(info, strict, graph.net.weights, inference.bodies, shared)
            elif exact_at is not None and not (static and static_specs(info.outputs)) and info.op.prepare is not None \
                    and not info.op.exact:
                kernel = prepared_per_shape(info, [values.get(slot) for slot in inputs], graph.net.weights,
                                            inference.bodies, shared_prepared)
            elif known is not None and known[0] is info:
                kernel = known[1]
            elif static or exact_at is not None:
                kernel = _kernel_for(info, [values.get(slot) for slot in inputs], prepared,
                                     [(layer_id, position) in read for position in range(len(outputs))])
                if kernels is not None:
                    kernels[id(info)] = (info, kernel)
            else:  # shapes only the run decides: inferred again from the arrays
                kernel = run_time_kernel(info, strict, graph.net.weights, inference.bodies)
            if layer_id in inference.pinned:
                kernel = _pinned(kernel, [spec.shape.to_shape() for spec in info.outputs])
            steps_raw.append((kernel, info.ref, inputs, tuple(outputs)))
            layers.append(info)
            if info.op.views:
                may_alias.update(outputs)
    constants = tuple(values.items())
    parameters = graph.parameters
    results = graph.results
    input_slots = tuple(slots[(p.id, 0)] for p in parameters) + tuple(slots[(lid, 0)] for lid in fed)
    output_slots = tuple(slots[graph.sources[r.id][0]] for r in results) + tuple(slots[s] for s in stored)
    keep = set(output_slots)
    reuses = reused_inputs(steps_raw, layers, keep, [accepts_out(raw[0]) for raw in steps_raw])
    steps = _with_releases(steps_raw, keep, reuses)
    fresh = {slot for step in steps for slot in (step.outputs or (step.output,))} - may_alias
    writes_into = {step.output for step in steps if step.outputs is None and accepts_out(step.kernel)} - may_alias
    seen: set[int] = set()
    copies, into = [], []
    for slot in output_slots:
        copy = slot not in fresh or slot in seen
        copies.append(copy)
        into.append(not copy and slot in writes_into)
        seen.add(slot)
    specs = tuple(_shape_and_dtype(inference.output_spec(*source))
                  for source in (*(graph.sources[r.id][0] for r in results), *stored))
    return Plan(len(slots), constants, input_slots, steps, output_slots, tuple(copies), specs, tuple(into),
                generic=exact_at is not None)


def accepts_out(kernel: KernelFn) -> bool:
    """True when ``kernel`` (or the function of a ``functools.partial``) can write into ``out=``; a bare
    ufunc (a prepared binary kernel) can."""
    if isinstance(kernel, np.ufunc):
        return True
    if isinstance(kernel, functools.partial):
        kernel = kernel.func
    return getattr(kernel, "accepts_out", False) is True


def _shape_and_dtype(spec) -> tuple[np.dtype, tuple[int, ...] | None]:
    """An output's dtype and shape; None for a shape known only when run (a Loop stopped by its body's
    condition)."""
    return spec.element_type.dtype, spec.shape.to_shape() if spec.shape.is_static else None


def _pinned(kernel: KernelFn, shapes: list[tuple[int, ...]]) -> KernelFn:
    """``kernel`` whose outputs are checked to have ``shapes``, the specs a generic plan pinned for its layer
    (:mod:`ir_runner.lengths`): a run that leaves them fails here, before a later step relies on them, and is
    then planned exactly."""
    several = len(shapes) > 1

    def run(*inputs: np.ndarray):
        result = kernel(*inputs)
        got = [None if value is None else value.shape for value in result] if several else [result.shape]
        if any(shape is not None and shape != want for shape, want in zip(got, shapes)):
            raise KernelError(f"the output shapes {got} are not the generic plan's {shapes}")
        return result

    return run


def _holds(info: LayerInference, exact: LayerInference) -> bool:
    """Whether a layer's generic inference holds where ``exact`` inferred it for one signature: the same
    parameters, and outputs that are the exact ones or have them as instances."""
    if len(info.outputs) != len(exact.outputs):
        return False
    for spec, known in zip(info.outputs, exact.outputs):
        fits = spec.shape.accepts(known.shape.to_shape()) if known.shape.is_static else spec.shape == known.shape
        if spec.element_type != known.element_type or not fits:
            return False
    try:
        return bool(info.params == exact.params)
    except (ValueError, TypeError):  # a parameter holding an array: not compared
        return False


def kernel_error(exc: Exception, layer: LayerRef) -> IRError:
    """The IRError for an exception a kernel raised (a kernel bug must still name the layer): the one place
    that makes it, used by ``runtime.execute`` (the constant folder treats a failure as 'not constant')."""
    if isinstance(exc, MemoryError):
        return ResourceLimitError("out of memory while computing this layer", layer=layer)
    return KernelError(f"internal error while computing this layer: {type(exc).__name__}: {exc}", layer=layer)


_KERNEL_KEY_MAX_BYTES = 4096  # constant inputs compared by value when looking for an equal prepared kernel


def _kernel_for(info, consts: list[np.ndarray | None], prepared: dict[tuple, KernelFn],
                read: list[bool]) -> KernelFn:
    """The layer's kernel; one prepared for an equal layer earlier in the plan (same operation, params,
    specs and small constant inputs) is reused: kernels keep no state between calls, and large IRs repeat
    the same blocks thousands of times.

    For a layer of several outputs, ``prepare`` sees None as the spec of an output that no layer or Result
    reads: its kernel may then return None for it instead of computing it (MaxPool's indices)."""
    op = info.op
    outputs = info.outputs if len(info.outputs) < 2 else [s if r else None for s, r in zip(info.outputs, read)]
    key = _kernel_key(info, consts, outputs)
    try:
        kernel = prepared.get(key) if key is not None else None
    except TypeError:  # a parameter that cannot be hashed: prepare this one on its own
        key = kernel = None
    if kernel is None:
        if op.prepare is not None and static_specs(info.inputs) and static_specs(info.outputs):
            try:
                kernel = op.prepare(info.params, info.inputs, outputs, consts)
            except IRError as error:
                raise with_layer(error, info.ref) from None
            except Exception as exc:  # (a prepare computes the kernel's tables: its failure is the kernel's)
                raise kernel_error(exc, info.ref) from exc
        else:
            kernel = functools.partial(op.kernel, **info.params)
        kernel = checked_kernel(op, kernel, outputs)
        if key is not None:
            prepared[key] = kernel
    return kernel


def _kernel_key(info, consts: list[np.ndarray | None], outputs) -> tuple | None:
    values = tuple(constant_fingerprint(value, _KERNEL_KEY_MAX_BYTES) for value in consts)
    if False in values:
        return None
    return (info.op.type, info.op.version, tuple(info.params.items()), tuple(info.inputs), tuple(outputs), values)


def _with_releases(steps_raw, keep: set[int], reuses: list[int | None]) -> tuple[Step, ...]:
    """Steps that free each intermediate after its last use (freeing early lets numpy reuse the memory: measured
    faster than freeing small ones at the end of the run), and write into the inputs ``reuses`` names."""
    last_use: dict[int, int] = {}
    for index, (_, _, inputs, _) in enumerate(steps_raw):
        for slot in inputs:
            last_use[slot] = index
    releases: dict[int, list[int]] = {}
    for slot, index in last_use.items():
        if slot not in keep:
            releases.setdefault(index, []).append(slot)
    return tuple(
        Step(kernel, inputs, outputs[0], ref, tuple(releases.get(index, ())), outputs if len(outputs) > 1 else None,
             reuse)
        for index, ((kernel, ref, inputs, outputs), reuse) in enumerate(zip(steps_raw, reuses))
    )


class Footprint(Record):
    """The computed tensors of an inference: ``total`` bytes (a bound on a run's peak) and their largest ``rank``."""

    __slots__ = ("total", "rank")

    def __init__(self, total: int, rank: int) -> None:
        self.total = total
        self.rank = rank


def check_memory(inference: Inference, limit: int | None) -> Footprint | None:
    """Refuse a computed tensor numpy cannot describe (its non-zero dims multiply past numpy's largest array,
    which an empty tensor can too), and, given a ``limit``, one tensor or all of them together (a bound on the
    peak) above it. Returns their Footprint, or None when a shape is not static (checked up to it)."""
    total = rank = 0
    for info in inference.layers.values():
        if info.op is None or info.op.type in ("Const", "Result"):
            continue
        for spec in info.outputs:
            if not spec.shape.is_static or spec.element_type.dtype is None:
                return None
            nbytes = static_nbytes(spec)
            if limit is not None and nbytes > limit:
                raise ResourceLimitError(
                    f"the output {spec.brief()} would take {human_bytes(nbytes)}, above the memory limit of"
                    f" {human_bytes(limit)}",
                    layer=info.ref,
                    hint="pass memory_limit= to load() (or --memory-limit) to raise the ceiling",
                )
            if (nbytes or math.prod(d for d in spec.shape.to_shape() if d)) > _NUMPY_MAX_BYTES:
                raise UnsupportedError(f"the output {spec.brief()} is beyond the largest array numpy can describe",
                                       layer=info.ref)
            total += nbytes
            rank = max(rank, len(spec.shape.dims))
    if limit is not None and total > limit:
        raise ResourceLimitError(
            f"running would need up to {human_bytes(total)} for its tensors, above the memory limit of"
            f" {human_bytes(limit)}",
            hint="pass memory_limit= to load() (or --memory-limit) to raise the ceiling",
        )
    return Footprint(total, rank)


_NUMPY_MAX_BYTES = np.iinfo(np.intp).max
