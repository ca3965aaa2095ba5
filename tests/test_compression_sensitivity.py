"""``ir_runner.compression``: compressed weights ranked by the output error their compression causes, on a network
with one badly quantised layer and on the NNCF-compressed language models of tests/data/llm."""

from __future__ import annotations

import numpy as np
import pytest

import ir_runner
from tests.helpers.llm import LLM_DIR as LLM
from tests.helpers.precision_models import BADLY_QUANTISED_LAYER, compressed_mlp


def _mlp():
    xml, weights, feeds = compressed_mlp()
    original = ir_runner.load(*compressed_mlp(compressed=False)[:2])
    return ir_runner.load(xml, weights), original, feeds


def test_the_badly_quantised_layer_ranks_first_against_the_original_weights():
    model, original, feeds = _mlp()
    report = ir_runner.compression(model, feeds, reference=original, top=1)
    assert [row.layer.name for row in report.layers][0] == BADLY_QUANTISED_LAYER
    assert [row.codes for row in report.layers] == ["u8"] * 3 and report.against == "reference"
    bad, good = report.layers[0], report.layers[1]
    assert bad.relative > 20 * good.relative and bad.position == 1 and bad.shape == (96, 96)
    assert report.worst == [BADLY_QUANTISED_LAYER]
    assert "nncf.IgnoredScope(names=[\n    'fc2',\n])" in report.snippet()
    # the error is the layer's own: its output with the original weights on the same inputs, by hand
    trace = {r.layer.name: r.value for r in model.trace(feeds).layers}
    wanted = original.inference.constant_input(next(i for i, info in original.inference.layers.items()
                                                    if info.ref.name == "fc2"), 1)
    ours, theirs = trace["fc2"].astype(np.float64), trace["fc1/relu"] @ wanted.T.astype(np.float64)
    assert bad.relative == pytest.approx(np.linalg.norm(ours - theirs) / np.linalg.norm(theirs), rel=1e-5)


def test_without_a_reference_the_step_sensitivity_names_it_too():
    model, _, feeds = _mlp()
    report = ir_runner.compression(model, feeds)
    assert report.against == "step" and report.layers[0].layer.name == BADLY_QUANTISED_LAYER
    assert report.layers[0].relative > 20 * report.layers[1].relative
    assert ir_runner.compression(model, feeds).layers[0].relative == report.layers[0].relative  # seeded


def test_a_model_without_compressed_weights_has_nothing_to_rank():
    _, original, feeds = _mlp()
    report = ir_runner.compression(original, feeds)
    assert report.layers == [] and report.worst == [] and report.snippet() == ""


def _llm_feeds():
    return {"input_ids": np.array([[1, 5, 9, 30]], np.int64), "attention_mask": np.ones((1, 4), np.int64),
            "position_ids": np.arange(4, dtype=np.int64)[None], "beam_idx": np.zeros(1, np.int32)}


def test_nncf_int4_layers_rank_above_the_int8_ones_of_the_same_model():
    # NNCF's int4 mode kept the embeddings, the head and each block's mlp.c_fc in int8 (its backup precision)
    report = ir_runner.compression(LLM / "gpt2-int4" / "openvino_model.xml", _llm_feeds(),
                                   reference=LLM / "gpt2-default" / "openvino_model.xml")
    codes = [row.codes for row in report.layers]
    assert len(codes) == 11 and set(codes[:6]) == {"u4"} and set(codes[6:]) == {"u8"}
    assert min(row.relative for row in report.layers[:6]) > 5 * max(row.relative for row in report.layers[6:])
    assert all(row.note is None for row in report.layers)


def test_nf4_codes_step_through_the_lookup_table():
    report = ir_runner.compression(LLM / "llama-nf4" / "openvino_model.xml", _llm_feeds())
    nf4 = [row for row in report.layers if row.codes == "nf4"]
    assert len(nf4) == 14 and all(0.01 < row.relative < 1 for row in nf4)


def test_float_codes_need_the_reference_and_say_so():
    model = LLM / "llama-mxfp4" / "openvino_model.xml"
    alone = ir_runner.compression(model, _llm_feeds())
    assert {row.codes for row in alone.layers} == {"f4e2m1", "f8e4m3"} and alone.worst == []
    assert all(row.relative is None and "give the uncompressed model" in row.note for row in alone.layers)
    measured = ir_runner.compression(model, _llm_feeds(), reference=LLM / "llama-default" / "openvino_model.xml")
    assert all(row.relative is not None for row in measured.layers) and len(measured.worst) == 3
