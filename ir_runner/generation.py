"""Greedy generation with a stateful language model (a KV cache in variables), as ``ir-run generate`` runs it.

The inputs are found in the IR, not assumed: by their names as optimum-intel writes them (``input_ids``,
``attention_mask``, ``position_ids``, ``beam_idx``; ``decoder_input_ids`` for a seq2seq decoder), checked for
an integer element type and their rank, and, for an IR that names them otherwise, by what they feed: the
token ids are the 2-D integer input that indexes a constant table (the embedding), the beam order the 1-D
integer input that indexes a variable's value. The logits are the output named ``logits``, else the one
floating-point output of rank 3. Batch 1: a step feeds its new tokens, a mask of ones over the past and new
tokens, their positions (``position_ids`` [1,n], ``cache_position`` [n]), and beam order [0]; the next token is
the argmax of the last row of logits. Other inputs (a seq2seq decoder's ``encoder_hidden_states``) are given
by the caller and fed unchanged at every step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

from .context import check_prompt, context_length
from .errors import InputError
from .model import Model
from .record import Record
from .runtime import TensorInfo
from .state import State, carried

_NAMES = {"input_ids": "input_ids", "decoder_input_ids": "input_ids", "attention_mask": "attention_mask",
          "decoder_attention_mask": "attention_mask", "position_ids": "position_ids", "beam_idx": "beam_idx",
          "cache_position": "cache_position"}
_RANKS = {"input_ids": 2, "attention_mask": 2, "position_ids": 2, "beam_idx": 1, "cache_position": 1}
_OPTIONAL = ("attention_mask", "position_ids", "beam_idx", "cache_position")


class Roles(Record):
    """Which model input plays which part (input names; None: the model has no such input), and the
    logits output's name."""

    __slots__ = ("input_ids", "attention_mask", "position_ids", "beam_idx", "cache_position", "logits")

    def __init__(self, input_ids: str, attention_mask: str | None, position_ids: str | None, beam_idx: str | None,
                 cache_position: str | None, logits: str) -> None:
        self.input_ids = input_ids
        self.attention_mask = attention_mask
        self.position_ids = position_ids
        self.beam_idx = beam_idx
        self.cache_position = cache_position
        self.logits = logits


def find_roles(model: Model, given: Collection[str] = ()) -> Roles:
    """The roles of ``model``'s inputs and its logits output; an InputError for an input it cannot feed (the
    inputs named in ``given`` are the caller's)."""
    if not carried(model):
        raise InputError("generate needs a stateful model (a KV cache in ReadValue/Assign variables); this one has"
                         " none (no variable, or only options that no run changes)", hint="export with"
                         " optimum-intel's default (stateful) mode, or run each step with ir-run run")
    found: dict[str, TensorInfo] = {}
    rest = []
    for info in model.inputs:
        if info.name in given:
            continue
        role = next((_NAMES[name.lower()] for name in info.names if name.lower() in _NAMES), None)
        if role is None or role in found:
            rest.append(info)
        else:
            found[role] = info
    for info in rest:
        role = _structural_role(model, info)
        if role is None or role in found:
            raise InputError(f"generate does not know what to feed the input '{info.name}' {info.element_type.name}"
                             f"{info.partial_shape}", hint="it feeds input_ids, attention_mask, position_ids,"
                             " cache_position and beam_idx (found by name, or by the layers they feed); give other"
                             f" inputs' values (--input {info.name}=FILE.npy)")
        found[role] = info
    if "input_ids" not in found:
        raise InputError("no input of the model takes the token ids (input_ids)")
    for role, info in found.items():
        rank = info.partial_shape.rank
        if info.element_type.kind not in ("int", "uint") or (rank is not None and rank != _RANKS[role]):
            raise InputError(f"input '{info.name}' ({role}) must be an integer tensor of rank {_RANKS[role]}, it is"
                             f" {info.element_type.name}{info.partial_shape}")
    return Roles(found["input_ids"].name, *(found[r].name if r in found else None for r in _OPTIONAL),
                 _logits(model))


def _structural_role(model: Model, info: TensorInfo) -> str | None:
    """``input_ids`` or ``beam_idx`` from what the input indexes (see the module docstring), else None."""
    if info.element_type.kind not in ("int", "uint"):
        return None
    graph, inference = model.graph, model.inference
    for consumer, position in _readers(model, graph.parameters[model.inputs.index(info)].id):
        op = inference.layers[consumer].op
        if op is None or position >= len(op.roles) or op.roles[position] != "indices" or position == 0:
            continue
        table = graph.sources[consumer][0][0]
        if inference.layers[table].op is not None and inference.layers[table].op.state == "read":
            return "beam_idx" if info.partial_shape.rank == 1 else None
        if inference.folder.input_value(consumer, 0) is not None and info.partial_shape.rank == 2:
            return "input_ids"
    return None


def _readers(model: Model, layer_id: str, depth: int = 3) -> list[tuple[str, int]]:
    """The layers reading ``layer_id``'s output, and those reading it as their first input through a layer that
    keeps its shape and an integer type (optimum reshapes input_ids and converts them from i64 to i32 before
    the embedding's Gather)."""
    found = []
    for consumer, position in model.graph.consumers.get((layer_id, 0), ()):
        found.append((consumer, position))
        info = model.inference.layers[consumer]
        passes = (depth > 0 and position == 0 and len(info.outputs) == 1
                  and info.outputs[0].shape == info.inputs[0].shape
                  and info.outputs[0].element_type.kind in ("int", "uint"))
        if passes:
            found.extend(_readers(model, consumer, depth - 1))
    return found


def _logits(model: Model) -> str:
    named = [o.name for o in model.outputs if "logits" in (name.lower() for name in o.names)]
    if named:
        return named[0]
    floats = [o.name for o in model.outputs if o.element_type.kind == "float" and o.partial_shape.rank == 3]
    if len(floats) != 1:
        raise InputError("cannot tell which output holds the logits: none is named 'logits' and"
                         f" {len(floats)} are floating-point of rank 3")
    return floats[0]


def step_feeds(model: Model, roles: Roles, tokens: Sequence[int], past: int) -> dict[str, np.ndarray]:
    """The feeds of one step: ``tokens`` after ``past`` earlier tokens, batch 1, in each input's type."""
    dtypes = {info.name: info.dtype for info in model.inputs}
    count = len(tokens)
    feeds = {roles.input_ids: np.array([tokens], dtypes[roles.input_ids])}
    if roles.attention_mask is not None:
        feeds[roles.attention_mask] = np.ones((1, past + count), dtypes[roles.attention_mask])
    if roles.position_ids is not None:
        feeds[roles.position_ids] = np.arange(past, past + count, dtype=dtypes[roles.position_ids])[None]
    if roles.cache_position is not None:
        feeds[roles.cache_position] = np.arange(past, past + count, dtype=dtypes[roles.cache_position])
    if roles.beam_idx is not None:
        feeds[roles.beam_idx] = np.zeros(1, dtypes[roles.beam_idx])
    return feeds


class GenerationStep(Record):
    """One step: its index, the tokens fed, the feeds, the logits, the token chosen (argmax of the last row),
    the state's variable values before the step (to replay it) and the seconds the run took."""

    __slots__ = ("index", "fed", "feeds", "logits", "token", "before", "seconds")

    def __init__(self, index: int, fed: list[int], feeds: dict[str, np.ndarray], logits: np.ndarray, token: int,
                 before: dict[str, np.ndarray | None], seconds: float) -> None:
        self.index = index
        self.fed = fed
        self.feeds = feeds
        self.logits = logits
        self.token = token
        self.before = before
        self.seconds = seconds


def generate(model: Model, prompt: Sequence[int], max_new_tokens: int, *, state: State | None = None,
             on_step: Callable[[GenerationStep], None] | None = None,
             given: Mapping[str, np.ndarray] | None = None, stop: Collection[int] = ()) -> list[GenerationStep]:
    """Prefill ``prompt``, then decode greedily until ``max_new_tokens`` tokens are chosen, one of ``stop`` (an
    end-of-sequence id) is, or the context the model declares is full (:mod:`ir_runner.context`: a prompt longer
    than it is an InputError), on ``state`` (a new one when None); each step is passed to ``on_step`` as soon as
    it is done. ``given``: the values of other inputs by name, fed unchanged at every step."""
    if not prompt:
        raise InputError("the prompt has no token", hint="give at least one id: --input-ids 1,2,3")
    given = dict(given or {})
    roles = find_roles(model, given)
    _check_vocabulary(model, roles, prompt)
    context = context_length(model, roles.input_ids)
    check_prompt(context, len(prompt))
    state = state if state is not None else model.new_state()
    steps: list[GenerationStep] = []
    tokens, past = list(prompt), 0
    for index in range(max_new_tokens):
        if context is not None and past + len(tokens) > context.positions:
            break
        feeds = {**step_feeds(model, roles, tokens, past), **given}
        before = state.values()
        started = time.perf_counter()
        logits = model.run(feeds, state=state)[roles.logits]
        step = GenerationStep(index, tokens, feeds, logits, int(np.argmax(logits[0, -1])), before,
                              time.perf_counter() - started)
        steps.append(step)
        if on_step is not None:
            on_step(step)
        if step.token in stop:
            break
        past += len(tokens)
        tokens = [step.token]
    return steps


def _check_vocabulary(model: Model, roles: Roles, prompt: Sequence[int]) -> None:
    """InputError when a prompt id is outside the vocabulary that the logits' static last dim gives (a model
    indexes its embedding table with it: OpenVINO's Gather gives zeros for such an id, a run with no meaning)."""
    dims = next(info.partial_shape.dims for info in model.outputs if info.name == roles.logits)
    if not dims or not dims[-1].is_static:
        return
    size = dims[-1].lo
    for position, token in enumerate(prompt):
        if not 0 <= token < size:
            raise InputError(f"the prompt's token {position} is id {token}, outside the model's vocabulary: its"
                             f" logits '{roles.logits}' score {size} ids (0 to {size - 1})",
                             hint="give ids of this model's vocabulary (with --prompt: the folder's tokenizer IRs"
                                  " must be the model's own)")


def state_from(model: Model, values: dict[str, np.ndarray | None]) -> State:
    """A new state holding these variable values (None: unset)."""
    state = model.new_state()
    for variable_id, value in values.items():
        if value is not None:
            state[variable_id] = value
    return state
