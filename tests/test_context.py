"""``ir_runner.context``: the context length a language model declares, from its ``config.json`` or the position
table its graph indexes, and which indexed tables are no position table."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ir_runner
from ir_runner.context import check_prompt, context_length

ov = pytest.importorskip("openvino")
ops = pytest.importorskip("openvino.opset13")


def _tables(path, *, buckets: bool = True, positions: int = 48):
    """input_ids and position_ids [1,?] -> token embedding (13 rows) + position table (``positions`` rows) + T5-like
    relative buckets (32 rows, indexed through a logarithm of the position) -> out."""
    rng = np.random.default_rng(5)
    ids = ops.parameter([1, -1], np.int64, name="input_ids")
    where = ops.parameter([1, -1], np.int64, name="position_ids")
    axis = np.int64(0)
    hidden = ops.add(ops.gather(ops.constant(rng.standard_normal((13, 8)).astype(np.float32)), ids, axis),
                     ops.gather(ops.constant(rng.standard_normal((positions, 8)).astype(np.float32)), where, axis))
    if buckets:
        logarithm = ops.log(ops.add(ops.convert(where, np.float32), ops.constant(np.float32(1))))
        bucket = ops.convert(ops.floor(logarithm), np.int64)
        hidden = ops.add(hidden, ops.gather(ops.constant(rng.standard_normal((32, 8)).astype(np.float32)), bucket,
                                            axis))
    ov.save_model(ov.Model([ops.result(hidden)], [ids, where], "tables"), str(path), compress_to_fp16=False)
    return ir_runner.load(str(path))


def test_the_position_table_is_found_not_the_token_embedding_nor_buckets_computed_in_floats(tmp_path):
    length = context_length(_tables(tmp_path / "m.xml"), "input_ids")
    assert length.positions == 48 and length.source.startswith("the position table read by layer 'Gather_")
    assert "has 48 rows" in length.source  # (not the 13-row token table nor the 32 buckets: both are shorter)
    plain = _tables(tmp_path / "short.xml", buckets=False, positions=20)
    assert context_length(plain, "input_ids").positions == 20


def test_config_json_and_the_table_the_smaller_wins_and_a_bad_config_is_ignored(tmp_path):
    model = _tables(tmp_path / "m.xml")
    config = tmp_path / "config.json"
    for content, want in ((json.dumps({"max_position_embeddings": 40}), (40, "max_position_embeddings")),
                          (json.dumps({"n_positions": 100}), (48, "the position table")),
                          (json.dumps({"max_position_embeddings": True, "n_ctx": 30}), (30, "n_ctx")),
                          ("{not json", (48, "the position table")), ("[1, 2]", (48, "the position table"))):
        config.write_text(content)
        length = context_length(ir_runner.load(str(tmp_path / "m.xml")), "input_ids")
        assert (length.positions, length.source.split(" in ")[0][:len(want[1])]) == want, content
    assert context_length(ir_runner.load((tmp_path / "m.xml").read_bytes(), (tmp_path / "m.bin").read_bytes()),
                          "input_ids").positions == 48  # (bytes: no folder, no config)
    with pytest.raises(ir_runner.InputError, match="the prompt has 49 tokens, more than the 48 positions"):
        check_prompt(context_length(model, "input_ids"), 49)
    check_prompt(None, 10**6)


@pytest.mark.parametrize("config, want", [
    ({"text_config": {"max_position_embeddings": 40}, "vision_config": {"max_position_embeddings": 10}},
     (40, "text_config.max_position_embeddings")),                       # LLaVA-like: not the vision tower's
    ({"llm_config": {"max_position_embeddings": 50, "n_positions": 30}}, (48, "the position table")),  # first key
    ({"max_position_embeddings": 46, "language_config": {"seq_length": 44}}, (44, "language_config.seq_length")),
    ({"encoder": {"max_position_embeddings": 12}, "decoder": {"n_positions": 47}}, (47, "decoder.n_positions")),
    ({"text_config": {"decoder": {"n_ctx": 45}, "max_position_embeddings": 0}}, (45, "text_config.decoder.n_ctx")),
    ({"text_config": [40], "decoder": {"n_ctx": True}, "encoder": {"n_ctx": 5}}, (48, "the position table")),
])
def test_nested_language_sections_of_config_json_are_read(tmp_path, config, want):
    """Multimodal and encoder-decoder configs declare the language model's positions in a section: the smallest
    positive value among the top level's and the language sections' (each the first of CONFIG_KEYS it holds);
    a vision tower's or an encoder's section, a section that is no object and a non-positive or boolean value
    are not read."""
    _tables(tmp_path / "m.xml")
    (tmp_path / "config.json").write_text(json.dumps(config))
    length = context_length(ir_runner.load(str(tmp_path / "m.xml")), "input_ids")
    assert (length.positions, length.source.split(" in ")[0][:len(want[1])]) == want
    if want[0] < 48:
        assert length.source == f"{want[1]} in '{tmp_path / 'config.json'}'"
