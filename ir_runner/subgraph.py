"""Sub-graphs of layers (``<body>``, ``<then_body>``, ``<else_body>``): built, inferred and planned like a model.

Operations with bodies (TensorIterator, Loop, If) see them through ``ops.api.Body`` (``OpContext.body``); this
module implements it on top of the graph, inference, plan and runtime, so that the operations import none of
them. A body's graph is built once per layer; its plans are cached per input signature (dtypes and shapes).
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from .errors import InferenceError, IRError, LayerRef, UnsupportedError
from .graph import Graph, build_graph
from .infer import Inference, infer_graph
from .ir.records import LayerRecord
from .ops.api import Body
from .plan import DEFAULT_MEMORY_LIMIT, PlanCache, build_plan, check_memory
from .runtime import execute
from .types import PartialShape, TensorSpec, element_type, element_type_of

_MAX_INFERENCES = 16


class Subgraph(Body):
    """One body of one layer."""

    def __init__(self, graph: Graph, owner: LayerRef, tag: str, strict: bool,
                 memory_limit: int | None = DEFAULT_MEMORY_LIMIT) -> None:
        self.graph = graph
        self.owner = owner
        self.tag = tag
        self.strict = strict
        self.memory_limit = memory_limit
        self.parameters = tuple(layer.id for layer in graph.parameters)
        self.results = tuple(layer.id for layer in graph.results)
        self._plans = PlanCache()
        self._deciding: dict[tuple, tuple[int, ...]] = {}  # per signature: the Parameters whose values decide
        self._inferences: dict[tuple, Inference | IRError] = {}
        self._lock = threading.Lock()

    def _inference(self, specs: dict[str, TensorSpec], values: dict[str, np.ndarray] | None,
                   decide: bool = False) -> Inference:
        """The body inferred for these specs and values, once per distinct pair (an operation asks for its
        body's specs and its constants, and each nesting level would otherwise infer everything below it
        again: time exponential in the depth of nested Loops); ``decide``: at run, every Parameter that decides
        a shape given (see :func:`infer_for_inputs`)."""
        unknown = sorted(set(specs) - set(self.parameters))
        if unknown:
            raise InferenceError(f"<{self.tag}> has no Parameter with internal id {unknown[0]!r}", layer=self.owner)
        key = (tuple(sorted(specs.items())), decide, None if values is None else tuple(
            (pid, v.dtype.str, v.shape, _digest(v)) for pid, v in sorted(values.items())))
        found = self._inferences.get(key)
        if found is None:
            try:
                found = infer_for_inputs(self.graph, self.strict, specs, values, decide=decide,
                                         memory_limit=self.memory_limit)
                stateful = next((info for info in found.layers.values() if info.op is not None and info.op.state),
                                None)
                if stateful is not None:  # a body runs without a state: its variables would start anew each time
                    raise UnsupportedError(f"{stateful.ref} reads or writes a variable, which ir-run supports only"
                                           " in the model's main graph")
            except IRError as error:
                inner = f"{error.layer}, " if error.layer else ""
                found = type(error)(f"in <{self.tag}>: {inner}{error.detail}", layer=self.owner, port=error.port,
                                    hint=error.hint)
            with self._lock:
                if len(self._inferences) >= _MAX_INFERENCES:
                    self._inferences.clear()
                self._inferences[key] = found
        if isinstance(found, IRError):
            raise found.with_traceback(None)
        return found

    def latest_inference(self) -> Inference | None:
        """The body's most recent inference that succeeded (for its owner's input specs), or None: what the
        viewer shows of a body."""
        with self._lock:
            found = [inference for inference in self._inferences.values() if not isinstance(inference, IRError)]
        return found[-1] if found else None

    def infer(self, specs: dict[str, TensorSpec], values: dict[str, np.ndarray] | None = None
              ) -> dict[str, TensorSpec]:
        inference = self._inference(specs, values)
        return {rid: inference.output_spec(*self.graph.sources[rid][0]) for rid in self.results}

    def constants(self, specs: dict[str, TensorSpec], values: dict[str, np.ndarray] | None = None
                  ) -> dict[str, np.ndarray]:
        inference = self._inference(specs, values)
        found = {rid: inference.folder.input_value(rid, 0) for rid in self.results}
        return {rid: value for rid, value in found.items() if value is not None}

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Planned per dtypes and shapes, and per value of the Parameters whose values decide shapes inside
        (a nested Loop's trip count fed from outside), as a model is."""
        arrays = [feeds[pid] for pid in self.parameters]
        signature = tuple([(a.dtype, a.shape) for a in arrays])
        deciding = self._deciding.get(signature) if self._deciding else None
        if deciding:
            signature += tuple(arrays[i].tobytes() for i in deciding)
        plan = self._plans.get(signature)
        if plan is None:
            specs = {pid: TensorSpec(self._element_type(pid, a), PartialShape.of(a.shape))
                     for pid, a in zip(self.parameters, arrays)}
            inference = self._inference(specs, None)
            if inference.value_inputs:
                deciding = self._deciding[signature] = inference.value_inputs
                signature += tuple(arrays[i].tobytes() for i in deciding)
                inference = self._inference(specs, {self.parameters[i]: arrays[i] for i in deciding},
                                             decide=True)
            plan = build_plan(inference, None, strict=self.strict)
            self._plans.put(signature, plan)
        return dict(zip(self.results, execute(plan, arrays)))

    def _element_type(self, parameter: str, array: np.ndarray):
        """A Parameter's declared element type (packed types are held one element per byte), else the array's."""
        declared = element_type(self.graph.layers[parameter].data.get("element_type", ""))
        return declared if declared is not None and declared.dtype is not None else element_type_of(array.dtype)


def _digest(value: np.ndarray) -> bytes:
    """A value's bytes, or for a large one (a weight fed to a Loop) their BLAKE2 digest: the memo of
    inferences keeps its keys, and must not keep copies of large constants."""
    if value.nbytes <= 4096:
        return value.tobytes()
    import hashlib  # (here: a plain run imports no more than it needs, tests/cli/test_lazy_imports.py)

    return hashlib.blake2b(memoryview(np.ascontiguousarray(value)).cast("B")).digest()


def infer_for_inputs(graph: Graph, strict: bool, specs: dict[str, TensorSpec],
                     values: dict[str, np.ndarray] | None, *, decide: bool = True,
                     memory_limit: int | None = DEFAULT_MEMORY_LIMIT, reuse: Inference | None = None,
                     pinned: dict[str, list[TensorSpec]] | None = None) -> Inference:
    """``graph`` inferred for these input specs and values of the Parameters that decide shapes (both by
    layer id), declared ports unchecked. Raises the inference's first error; a model and a sub-graph put it in
    their own words.

    With values and ``decide`` (every Parameter that decides a shape has its value: the run), a shape that
    only the computation decides (NonMaxSuppression's count of boxes fed from a convolution's large output)
    is decided by computing what it comes from, whatever its size (the layers before it within
    ``memory_limit``); an input that decides a shape and is still unknown then raises InputError. Without
    ``decide`` (a body inferred at load, some of its Parameters unknown) unknown shapes stay unknown. ``pinned``:
    as :func:`infer_graph`'s."""
    bodies = functools.partial(body_provider, memory_limit=memory_limit)
    inference = infer_graph(graph, strict=strict, input_specs=specs, input_values=values,
                            body_provider=bodies, check_declared=False, reuse=reuse, pinned=pinned)
    inference.raise_first()
    if values is not None and decide and inference.deciding_inputs():
        check_memory(inference, memory_limit)  # (up to the first shape not yet known)
        inference = infer_graph(graph, strict=strict, input_specs=specs, input_values=values,
                                body_provider=bodies, check_declared=False, fold_limit=None)
        inference.raise_first()
        inference.refuse_unknown_deciding()
    return inference


def body_provider(graph: Graph, strict: bool, ref_of, memory_limit: int | None = DEFAULT_MEMORY_LIMIT):
    """``bodies(layer, tag)`` for the OpContexts of ``graph``: each body's Subgraph, built once per layer, with
    the model's ``strict`` and ``memory_limit``."""
    def bodies(layer: LayerRecord, tag: str) -> Subgraph:
        key = (layer.id, tag)
        found = graph.subgraphs.get(key)
        if found is None:
            try:
                inner = build_graph(layer.bodies[tag])
            except IRError as error:
                raise type(error)(f"in <{tag}>: {error.detail}", layer=ref_of(layer), port=error.port,
                                  hint=error.hint) from None
            found = graph.subgraphs[key] = Subgraph(inner, ref_of(layer), tag, strict, memory_limit)
        return found

    return bodies
