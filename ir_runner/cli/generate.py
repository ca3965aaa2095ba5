"""Generated input data (``random`` / ``zeros`` / ``ones``) that fits the layers each input feeds.

Random data looks at the layers an input feeds, as their declarations say (``fit``): e.g. indices get
integers in ``[0, dim-1]`` of the data's gathered axis, a condition (or data converted to boolean, as an
attention mask is) gets 0/1 or booleans. An input that feeds nothing telling its role but is named like a
mask (``attention_mask``, ``mask``, ``padding-mask``) gets 0/1 too. Each input has its own generator seeded
with ``(seed, input position)``. Imported only when an input is generated.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..casting import integer_bounds
from ..errors import InputError, ResourceLimitError, human_bytes
from ..model import Model, TensorInfo
from ..types import PartialShape, TensorSpec, dims_text
from .common import flag, log
from .shapes import data_shape_example, generated_shape

DEFAULT_INT_RANGE = (0, 9)
# attention_mask, mask, input_masks, attentionMask, MASK; not masked_positions, unmasked
_MASK_NAME = re.compile(r"(?:^|[^A-Za-z])(?:mask|Mask|MASK)[sS]?(?![a-z])|(?<=[a-z])Masks?(?![a-z])")
DEFAULT_FLOAT_RANGE = (0.0, 1.0)


@dataclass
class _Generation:
    lo: float
    hi: float
    integral: bool
    why: str = ""
    notes: list[str] = field(default_factory=list)


def generate_inputs(model: Model, arrays: list[np.ndarray | None], kinds: dict[int, str],
                    data_shapes: dict[int, tuple[int, ...]], ranges: dict[int, tuple[float, float]],
                    seed: int) -> dict[int, str]:
    """Fill ``arrays[i]`` for each input ``i`` in ``kinds`` (a keyword); return the random ones' descriptions."""
    for info in (model.inputs[i] for i in kinds):
        if info.dtype is None or info.element_type.kind == "string":  # (no text is generated)
            raise InputError(f"input '{info.name}' has element type {info.element_type}: give its data in a file"
                             + (" or with --value" if info.element_type.kind == "string" else ""))
    given = {i: generated_shape(model.inputs[i], data_shapes[i]) for i in kinds if i in data_shapes}  # checked
    unknown = [info for i, info in enumerate(model.inputs)
               if i in kinds and i not in given and not info.partial_shape.is_static]
    if len(unknown) > 1:  # one message for all of them (one input is explained by generated_shape)
        names = ", ".join(f"'{info.name}' {info.partial_shape}" for info in unknown)
        raise InputError(f"inputs {names} have dynamic shapes: ir-run needs the concrete shape of their data",
                         hint=f"add {' '.join(data_shape_example(info) for info in unknown)} (or give the data in"
                              " files)")
    shapes = {i: given[i] if i in given else generated_shape(model.inputs[i], None) for i in kinds}
    for i, shape in shapes.items():
        _check_generated_size(model, model.inputs[i], shape)
    descriptions = {}
    randoms = [i for i, kind in kinds.items() if kind == "random"]
    if randoms:
        plans = _generation_plans(model, arrays, shapes, ranges, randoms)
        for i in randoms:
            plan = plans[i]
            arrays[i] = _random(model.inputs[i], shapes[i], plan, np.random.default_rng([seed, i]))
            span = f"[{_num(plan.lo)},{_num(plan.hi)}]" if plan.integral else f"[{_num(plan.lo)},{_num(plan.hi)})"
            if model.inputs[i].element_type.kind == "bool":
                span = "true/false" if plan.lo != plan.hi else str(bool(plan.lo)).lower()
            descriptions[i] = f"random {span}" + (f" {plan.why}" if plan.why else "")
            for note in plan.notes:
                log(f"warning: input '{model.inputs[i].name}': {note}")
    for i, kind in kinds.items():
        if kind != "random":
            arrays[i] = _constant(model.inputs[i], shapes[i], kind)
    return descriptions


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _check_generated_size(model: Model, info: TensorInfo, shape: tuple[int, ...]) -> None:
    """Refuse to generate an input larger than the model's memory limit (before allocating it)."""
    limit = model.memory_limit
    nbytes = math.prod(shape) * info.dtype.itemsize
    if limit is not None and nbytes > limit:
        raise ResourceLimitError(
            f"generating input '{info.name}' of shape [{dims_text(shape, ', ')}] would take {human_bytes(nbytes)},"
            f" above the memory limit of {human_bytes(limit)}",
            hint="choose a smaller --data-shape, or raise --memory-limit",
        )
    if math.prod(d for d in shape if d) * info.dtype.itemsize > np.iinfo(np.intp).max:  # numpy's own bound
        raise InputError(f"input '{info.name}' of shape [{dims_text(shape, ', ')}] has no elements, but its other dims"
                         " multiply beyond the largest array numpy can describe")


def _generation_plans(model: Model, arrays, shapes, ranges, randoms: list[int]) -> dict[int, _Generation]:
    """For each random input: its value range, from --range or from the layers it feeds."""
    specs = [TensorSpec(info.element_type, PartialShape.of(shapes[i])) if i in shapes else info.spec_for(arrays[i])
             for i, info in enumerate(model.inputs)]
    inference = model.inference_for(specs)  # the model's own when no shape changes
    parameters = model.graph.parameters
    return {i: _plan(model.inputs[i], _uses(model.graph, inference, parameters[i].id), ranges.get(i))
            for i in randoms}


def _uses(graph, inference, layer_id: str) -> list[tuple[str, int, str]]:
    """What the layers a Parameter feeds accept there (their declarations' ``fit``), through the layers that
    pass it on unchanged in kind (``through``, e.g. Convert): ('index', last valid index, why) / ('cond', 1, why)."""
    found, frontier, seen = [], [(layer_id, 0)], set()
    while frontier:
        slot = frontier.pop()
        for consumer, position in graph.consumers.get(slot, ()):
            if (consumer, position) in seen:
                continue
            seen.add((consumer, position))
            info = inference.layers[consumer]
            fit = info.op.fit(info.params, info.inputs, position) if info.op and info.op.fit and not info.errors \
                else None
            if fit is None:
                continue
            if fit.kind == "through":
                frontier.append((consumer, 0))
                continue
            names = info.op.input_names
            role = names[position] if position < len(names) else f"input {position}"
            detail = f": {fit.why}" if fit.why else ""
            found.append((fit.kind, fit.high, f"({role} of {info.ref.type_version} '{info.ref.name}'{detail})"))
    return found


def _plan(info: TensorInfo, uses, given: tuple[float, float] | None) -> _Generation:
    et = info.element_type
    integral = et.kind in ("int", "uint", "bool") or bool(uses)
    indices = [u for u in uses if u[0] == "index"]
    plan = _Generation(*DEFAULT_FLOAT_RANGE, integral=False)
    if integral:
        lo, hi = DEFAULT_INT_RANGE
        low_bound, high_bound = integer_bounds(info.element_type) if et.kind != "float" else (-(2**53), 2**53)
        plan = _Generation(max(lo, low_bound), min(hi, high_bound), True)
    if indices:
        last = min(u[1] for u in indices)
        why = min(indices, key=lambda u: u[1])[2]
        if last < 0:
            plan = _Generation(0, 0, True, why, [f"the gathered axis is empty, so no index is valid {why}"])
        else:
            plan = _Generation(0, last, True, why)
    elif uses:
        plan = _Generation(0, 1, True, uses[0][2])
    elif _MASK_NAME.search(info.name):
        plan = _Generation(0, 1, True, "(named like a mask)")
    if given is not None:
        lo, hi = given
        if plan.integral and et.kind != "float":
            if lo != int(lo) or hi != int(hi):
                raise InputError(f"{flag('--range', info.name, f'[{lo},{hi}]')}: input '{info.name}' is {et.name},"
                                 " the range needs whole numbers")
            low_bound, high_bound = integer_bounds(info.element_type)
            if lo < low_bound or hi > high_bound:
                raise InputError(f"{flag('--range', info.name, f'[{lo},{hi}]')} is outside the range of {et.name}"
                                 f" [{low_bound}, {high_bound}]")
        notes = []
        if indices and (lo < 0 or hi > plan.hi):
            notes.append(f"--range [{_num(lo)},{_num(hi)}] goes beyond the valid indices [0,{_num(plan.hi)}]"
                         f" {plan.why}; Gather gives zeros for indices out of range")
        plan = _Generation(lo, hi, plan.integral, "(--range)", notes)
    return plan


def _random(info: TensorInfo, shape: tuple[int, ...], plan: _Generation, rng: np.random.Generator) -> np.ndarray:
    dtype = info.dtype
    if info.element_type.kind == "bool":
        if plan.why == "(--range)" and plan.lo == plan.hi:
            return np.full(shape, bool(plan.lo))
        return rng.random(shape) < 0.5
    if plan.integral:
        values = rng.integers(int(plan.lo), int(plan.hi), size=shape, endpoint=True, dtype=np.int64)
        return values.astype(dtype)
    return rng.uniform(plan.lo, plan.hi, size=shape).astype(dtype)


def _constant(info: TensorInfo, shape: tuple[int, ...], kind: str) -> np.ndarray:
    return (np.zeros if kind == "zeros" else np.ones)(shape, dtype=info.dtype)
