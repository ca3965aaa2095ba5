"""Running a model layer by layer while watching each result: for tracing, per-layer timing and dumps.

``runtime.execute`` runs a plan as fast as it can; :func:`run_observed` runs the same plan with the same
rules (slots, constants, releases, errors naming the layer) and calls ``observe(step, value, seconds)``
after every step, before anything is released.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from .errors import IRError, ResourceLimitError
from .infer import infer_graph
from .model import Model
from .plan import Plan, Step, build_plan
from .types import PartialShape, TensorSpec, element_type_of

Observer = Callable[[Step, np.ndarray, float], None]


def plan_for(model: Model, arrays: Sequence[np.ndarray]) -> Plan:
    """The plan ``model.run`` would use for these (already checked) input arrays."""
    if all(info.partial_shape.is_static for info in model.inputs) and all(
        info.element_type.kind != "dynamic" for info in model.inputs
    ):
        return build_plan(model.inference, model.memory_limit)
    specs = {}
    for layer, info, array in zip(model.graph.of_type("Parameter"), model.inputs, arrays):
        et = info.element_type if info.element_type.kind != "dynamic" else element_type_of(array.dtype)
        specs[layer.id] = TensorSpec(et, PartialShape.of(array.shape))
    inference = infer_graph(model.graph, strict=model.strict, input_specs=specs, check_declared=False)
    inference.raise_first()
    return build_plan(inference, model.memory_limit)


def run_observed(plan: Plan, feeds: Sequence[np.ndarray], observe: Observer) -> list[np.ndarray]:
    """Run ``plan`` on ``feeds`` like ``runtime.execute``, calling ``observe`` after each step."""
    slots: list = [None] * plan.slot_count
    for slot, value in plan.constants:
        slots[slot] = value
    for slot, value in zip(plan.input_slots, feeds):
        slots[slot] = value
    for step in plan.steps:
        arguments = [slots[i] for i in step.inputs]
        start = time.perf_counter()
        try:
            value = step.kernel(*arguments)
        except IRError:
            raise
        except MemoryError:
            raise ResourceLimitError("out of memory while computing this layer", layer=step.layer) from None
        except Exception as exc:  # a kernel bug must still surface as an IRError naming the layer
            raise IRError(f"internal error while computing this layer: {type(exc).__name__}: {exc}",
                          layer=step.layer) from exc
        seconds = time.perf_counter() - start
        slots[step.output] = value
        observe(step, value, seconds)
        for slot in step.release:
            slots[slot] = None
    return [
        np.array(slots[slot], copy=True) if copy else slots[slot]
        for slot, copy in zip(plan.output_slots, plan.output_copies)
    ]
