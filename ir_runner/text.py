"""Text in, text out: the tokenizer and detokenizer IRs that openvino-tokenizers writes beside a language model
(``openvino_tokenizer.xml``, ``openvino_detokenizer.xml``), run by ir-run.

The tokenizer takes a string tensor of texts and gives ``input_ids`` and ``attention_mask`` (padded rows); a
prompt's ids are its row where the mask is set. The detokenizer takes ``[batch, length]`` ids and gives one
string per row. The end-of-sequence id is the tokenizer's ``eos_token_id`` (its ``<rt_info>``, as
openvino-tokenizers writes it), where generation stops as openvino-genai's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .errors import InputError
from .model import Model, load
from .record import Record

TOKENIZER, DETOKENIZER = "openvino_tokenizer.xml", "openvino_detokenizer.xml"


class TextCodec(Record):
    """A folder's tokenizer and detokenizer, and its end-of-sequence id (None when the IR names none)."""

    __slots__ = ("tokenizer", "detokenizer", "eos_token_id")

    def __init__(self, tokenizer: Model, detokenizer: Model, eos_token_id: int | None) -> None:
        self.tokenizer = tokenizer
        self.detokenizer = detokenizer
        self.eos_token_id = eos_token_id

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (special tokens included, as the tokenizer adds them)."""
        first = self.tokenizer.inputs[0].name
        outputs = self.tokenizer.run({first: np.array([text], dtype=object)})
        ids, mask = _output(self.tokenizer, outputs, "input_ids"), _output(self.tokenizer, outputs, "attention_mask")
        return [int(i) for i, m in zip(ids[0].tolist(), mask[0].tolist()) if m]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` (the detokenizer's string of one row)."""
        info = self.detokenizer.inputs[0]
        (text,) = self.detokenizer.run({info.name: np.array([list(ids)], dtype=info.dtype)}).values()
        return str(text.ravel()[0]) if text.size else ""


def _output(model: Model, outputs: dict[str, np.ndarray], name: str) -> np.ndarray:
    for info in model.outputs:
        if name in info.names:
            return outputs[info.name]
    raise InputError(f"the tokenizer '{model.source}' has no output named '{name}'",
                     hint="a tokenizer made by openvino-tokenizers' convert_tokenizer names its outputs input_ids"
                          " and attention_mask")


def load_codec(folder: str | Path) -> TextCodec:
    """The tokenizer and detokenizer of ``folder``; an InputError when it lacks one."""
    folder = Path(folder)
    missing = [name for name in (TOKENIZER, DETOKENIZER) if not (folder / name).is_file()]
    if missing:
        raise InputError(f"the folder '{folder}' holds no {' and no '.join(missing)}",
                         hint="convert the model's tokenizer with openvino-tokenizers (convert_tokenizer(...,"
                              " with_detokenizer=True)) or give token ids with --input-ids")
    tokenizer = load(str(folder / TOKENIZER))
    if len(tokenizer.inputs) != 1:
        raise InputError(f"the tokenizer '{folder / TOKENIZER}' takes {len(tokenizer.inputs)} inputs; a prompt"
                         " is one text", hint="convert it with number_of_inputs=1")
    return TextCodec(tokenizer, load(str(folder / DETOKENIZER)), _eos_token_id(folder / TOKENIZER))


def _eos_token_id(xml: Path) -> int | None:
    """The ``eos_token_id`` of the IR's ``<rt_info>``, None when it names none."""
    from lxml import etree

    for _, element in etree.iterparse(str(xml), tag="eos_token_id", huge_tree=True):
        value = element.get("value")
        try:
            return int(value) if value is not None else None
        except ValueError:
            return None
    return None
