"""How many positions a language model can take, as the model declares it, for ``generate`` to refuse a prompt
longer than that (the model would run and give meaningless logits).

Two declarations are read, and the smaller one wins:

- ``config.json`` beside the IR (optimum-intel copies the model's Hugging Face config there): the first of
  ``max_position_embeddings`` (most decoders), ``n_positions`` (GPT-2), ``max_target_positions`` (Whisper's
  decoder), ``n_ctx``, ``seq_length``, ``max_sequence_length``; at the top level and in the language model's
  sections of a multimodal or encoder-decoder config (``text_config``, ``llm_config``, ``language_config``,
  ``decoder``, nested in one another too; not ``vision_config`` nor ``encoder``): the smallest of them.
- a **position table** in the graph: a constant floating-point table indexed (an input of role ``indices``
  beside ``data`` and ``axis``) by positions, that is by indices computed at run time, in integers only, from
  values that are not the token ids (what reads only a tensor's shape does not count): GPT-2's learned position
  embeddings (indexed by ``position_ids``), Whisper's (by a range from the cache's length), a rotary cache
  gathered by position. Its length along the indexed axis is a hard limit: a position past it indexes nothing
  (OpenVINO's Gather gives zeros). A table indexed through floating-point arithmetic (T5's relative-position
  buckets: a logarithm of the distance) is no position table.

A rotary embedding computed from the positions (Llama, Qwen2...) has no table: without a ``config.json`` such a
model declares no context length, and the caller is told that the prompt could not be checked.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import InputError
from .model import Model
from .record import Record

CONFIG_KEYS = ("max_position_embeddings", "n_positions", "max_target_positions", "n_ctx", "seq_length",
               "max_sequence_length")
# the sections of a config.json that describe the language model (LLaVA's and most multimodal models' text_config,
# InternVL's llm_config, DeepSeek-VL's language_config, an EncoderDecoderModel's decoder)
LANGUAGE_SECTIONS = ("text_config", "llm_config", "language_config", "decoder")


class ContextLength(Record):
    """The number of ``positions`` a model takes and where it declares them (``source``, for a message)."""

    __slots__ = ("positions", "source")

    def __init__(self, positions: int, source: str) -> None:
        self.positions = positions
        self.source = source


def context_length(model: Model, token_input: str) -> ContextLength | None:
    """The smallest context length ``model`` declares (see the module docstring; ``token_input``: the name of
    its token-ids input), None when it declares none."""
    found = [length for length in (_from_config(model), _from_table(model, token_input)) if length is not None]
    return min(found, key=lambda length: length.positions, default=None)


def check_prompt(context: ContextLength | None, prompt_tokens: int) -> None:
    """InputError when a prompt of ``prompt_tokens`` tokens needs more positions than ``context`` holds."""
    if context is not None and prompt_tokens > context.positions:
        raise InputError(f"the prompt has {prompt_tokens} tokens, more than the {context.positions} positions the"
                         f" model takes ({context.source}): the positions past {context.positions - 1} would"
                         " give meaningless logits", hint=f"give a prompt of at most {context.positions} tokens")


def _from_config(model: Model) -> ContextLength | None:
    source = model.source
    if not isinstance(source, (str, Path)):
        return None
    path = Path(source).parent / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = [ContextLength(value, f"{key} in '{path}'") for key, value in _declared(config, "")]
    return min(found, key=lambda length: length.positions, default=None)


def _declared(section: object, prefix: str) -> list[tuple[str, int]]:
    """The (dotted key, positions) a config ``section`` declares: the first of CONFIG_KEYS it holds as a positive
    integer, then those of its language sections (LANGUAGE_SECTIONS), recursively."""
    if not isinstance(section, dict):
        return []
    found = []
    for key in CONFIG_KEYS:
        value = section.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            found.append((prefix + key, value))
            break
    for name in LANGUAGE_SECTIONS:
        found += _declared(section.get(name), f"{prefix}{name}.")
    return found


def _from_table(model: Model, token_input: str) -> ContextLength | None:
    """The shortest position table of the graph (see the module docstring), None when there is none."""
    graph, inference = model.graph, model.inference
    tokens = {layer.id for layer in graph.parameters if layer.name == token_input}
    found: ContextLength | None = None
    for layer_id in graph.order:
        info = inference.layers[layer_id]
        roles = tuple(info.op.roles) if info.op is not None and info.op.roles else ()
        if roles[:2] != ("data", "indices") or "axis" not in roles or len(info.inputs) < len(roles):
            continue
        table = info.inputs[0]
        if table.element_type.kind != "float" or not table.shape.is_static:
            continue
        data, indices = graph.sources[layer_id][0][0], graph.sources[layer_id][1][0]
        if _reached(model, data, True)[0] or not _reached(model, indices, True)[0]:
            continue  # (a table computed at run time, or constant indices)
        inputs, through_floats = _reached(model, indices, False)
        if inputs & tokens or through_floats:
            continue  # (the token embedding, a table indexed by what the tokens compute, or buckets)
        axis = inference.constant_input(layer_id, roles.index("axis"))
        if axis is None or axis.size != 1:
            continue
        dims = table.shape.dims
        rows = dims[int(axis.reshape(())) % len(dims)].lo if dims else None
        if rows and (found is None or rows < found.positions):
            found = ContextLength(rows, f"the position table read by layer '{info.layer.name}' has {rows} rows")
    return found


def _reached(model: Model, layer_id: str, through_shapes: bool) -> tuple[set[str], bool]:
    """The inputs and variable readers (layer ids) that ``layer_id``'s output is computed from (empty: a
    constant), and whether a layer of floating-point output is on the way; without ``through_shapes``, not
    through a layer that reads only its inputs' shapes."""
    graph, inference = model.graph, model.inference
    reached, floats, seen, stack = set(), False, set(), [layer_id]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        op = inference.layers[current].op
        sources = graph.sources[current]
        floats = floats or any(spec.element_type.kind == "float" for spec in inference.layers[current].outputs)
        if not sources and "value" not in inference.layers[current].params or op is not None and op.state:
            reached.add(current)
        if op is not None and op.shape_only and not through_shapes:
            continue
        stack.extend(source for source, _ in sources)
    return reached, floats
