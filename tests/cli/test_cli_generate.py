"""``ir-run generate``: greedy steps on one state, the inputs' roles found in the IR, and ``--ref openvino``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner.device import DeviceRequest
from ir_runner.errors import InputError
from ir_runner.generation import find_roles, generate
from tests.cli.clikit import SELECT_GATHER, as_json, invoke
from tests.helpers.stateful_models import decoder


@pytest.fixture()
def folder(tmp_path):
    decoder(tmp_path / "openvino_model.xml", init=True, seed=3)
    return tmp_path


def test_generate_prints_each_step_and_agrees_with_openvino(folder):
    want = [step.token for step in generate(ir_runner.load(str(folder / "openvino_model.xml")), [1, 5, 7], 6)]
    result = invoke("generate", folder, "--input-ids", "1,5,7", "--max-new-tokens", 6, "--ref", "openvino")
    assert result.exit_code == 0, result.output
    assert f"generated: {','.join(map(str, want))}" in result.stdout
    assert "ok: every step's logits agree with OpenVINO" in result.stdout
    assert "inputs: input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids," \
           " beam_idx=beam_idx; logits: logits" in result.stdout
    data = as_json(invoke("generate", folder, "--input-ids", "1,5,7", "--max-new-tokens", 6, "--json", "-q"))
    assert data["generated"] == want and [row["fed"] for row in data["steps"]] == [[1, 5, 7], *([t] for t in want[:-1])]


def test_the_first_differing_step_is_named_and_crosschecked(folder, monkeypatch):
    infer, calls = DeviceRequest.infer, []

    def drifting(self, feeds):
        outputs = infer(self, feeds)
        calls.append(len(calls))
        if len(calls) >= 3:  # from step 2 on, OpenVINO "gives" logits off by 0.5
            outputs["logits"] = outputs["logits"] + np.float32(0.5)
        return outputs

    monkeypatch.setattr(DeviceRequest, "infer", drifting)
    result = invoke("generate", folder / "openvino_model.xml", "--input-ids", "2,3", "--max-new-tokens", 4,
                    "--ref", "openvino", "--json")
    assert result.exit_code == 1
    data = as_json(result)
    assert data["reference"]["first_difference"] == 2
    assert [row["agree"] for row in data["steps"]] == [True, True, False, False]
    assert data["steps"][2]["max_abs"] == pytest.approx(0.5, abs=1e-5)
    assert data["crosscheck"]["first_divergence"] is None  # the layers themselves agree: only the output drifted
    calls.clear()
    text = invoke("generate", folder / "openvino_model.xml", "--input-ids", "2,3", "--max-new-tokens", 4,
                  "--ref", "openvino").stdout
    assert "step 2 is the first whose logits or token differ from OpenVINO" in text
    assert "crosscheck of that step: every observable layer output agrees" in text


def test_roles_are_found_by_what_inputs_feed_when_names_differ(folder):
    xml = folder / "openvino_model.xml"
    text = xml.read_text().replace('names="input_ids"', 'names="tokens"').replace('names="beam_idx"',
                                                                                   'names="order"')
    renamed = folder / "renamed.xml"
    renamed.write_text(text.replace('name="input_ids"', 'name="tokens"').replace('name="beam_idx"', 'name="order"'))
    (folder / "renamed.bin").write_bytes((folder / "openvino_model.bin").read_bytes())
    roles = find_roles(ir_runner.load(str(renamed)))
    assert (roles.input_ids, roles.beam_idx, roles.attention_mask, roles.logits) == (
        "tokens", "order", "attention_mask", "logits")
    original = [s.token for s in generate(ir_runner.load(str(xml)), [4, 4], 3)]
    assert [s.token for s in generate(ir_runner.load(str(renamed)), [4, 4], 3)] == original


def test_generate_refuses_what_it_cannot_run(folder):
    result = invoke("generate", SELECT_GATHER, "--input-ids", "1")
    assert result.exit_code == 4 and "generate needs a stateful model" in result.stderr
    tokenizer = Path(__file__).resolve().parents[1] / "data" / "tokenizers" / "gpt2_bpe" / "openvino_tokenizer.xml"
    result = invoke("generate", tokenizer, "--input-ids", "1")  # its 'truncation' variable is an option
    assert result.exit_code == 4 and "none (no variable, or only options that no run changes)" in result.stderr
    (folder / "second.xml").write_text((folder / "openvino_model.xml").read_text())
    (folder / "openvino_model.xml").rename(folder / "first.xml")
    (folder / "openvino_model.bin").rename(folder / "first.bin")
    result = invoke("generate", folder, "--input-ids", "1")
    assert result.exit_code == 4 and "holds 2 .xml files and no openvino_model.xml" in result.stderr
    result = invoke("generate", folder / "first.xml", "--input-ids", "1,x")
    assert result.exit_code == 2 and "is not a list of token ids" in result.stderr
    with pytest.raises(InputError, match="the prompt has no token"):
        generate(ir_runner.load(str(folder / "first.xml")), [], 2)


def test_inspect_lists_the_variables_of_a_stateful_model(folder):
    data = as_json(invoke("inspect", folder / "openvino_model.xml", "--format", "json"))
    assert sorted((v["id"], v["element_type"], v["shape"], v["initialised"], v["option"]) for v in data["variables"]) \
        == [("past_key_values.0.key", "f32", "[?,2,?,4]", True, False),
            ("past_key_values.0.value", "f32", "[?,2,?,4]", True, False)]
    assert all(v["readers"] and v["writer"] for v in data["variables"])
    text = invoke("inspect", folder / "openvino_model.xml").stdout
    table = (r"^variables\n  id +type +shape +read by +written by +initial value +role\n"
             r"  past_key_values\.0\.\w+ +f32 +\[\?,2,\?,4\] +ReadValue_\d+ +Assign_\d+ +init input +state$")
    assert re.search(table, text, re.M)
    assert "variables" not in as_json(invoke("inspect", SELECT_GATHER, "--format", "json"))


def test_a_seq2seq_decoder_gets_cache_position_and_a_given_encoder_output(tmp_path):
    xml = decoder(tmp_path / "openvino_decoder_model.xml", init=True, seq2seq=True, seed=5)
    encoded = np.random.default_rng(1).standard_normal((1, 6, 8)).astype(np.float32)
    np.save(tmp_path / "encoded.npy", encoded)
    result = invoke("generate", xml, "--input-ids", "1,2", "--max-new-tokens", 4, "--input",
                    f"encoder_hidden_states={tmp_path / 'encoded.npy'}", "--ref", "openvino", "--json", "-q")
    assert result.exit_code == 0, result.output
    data = as_json(result)
    assert data["inputs"]["cache_position"] == "cache_position" and data["inputs"]["position_ids"] is None
    assert data["inputs"]["encoder_hidden_states"] == "given" and data["reference"]["first_difference"] is None
    model = ir_runner.load(str(xml))
    steps = generate(model, [1, 2], 4, given={"encoder_hidden_states": encoded})
    assert data["generated"] == [step.token for step in steps]
    assert [list(step.feeds["cache_position"]) for step in steps[:2]] == [[0, 1], [2]]
    missing = invoke("generate", xml, "--input-ids", "1")
    assert missing.exit_code == 4 and "does not know what to feed the input 'encoder_hidden_states'" in missing.stderr
    assert "--input encoder_hidden_states=FILE.npy" in missing.stderr


def test_a_prompt_longer_than_the_position_table_is_refused_naming_both_lengths(folder):
    """The decoder's learned positions are a 64-row table gathered by position_ids: a 65th position reads zeros
    (a run with no meaning, which went on silently)."""
    table = "the position table read by layer"
    result = invoke("generate", folder, "--input-ids", ",".join(["3"] * 65))
    assert result.exit_code == 4, result.output
    assert "the prompt has 65 tokens, more than the 64 positions the model takes" in result.stderr
    assert table in result.stderr and "has 64 rows" in result.stderr and "hint: give a prompt of at most 64" \
        in result.stderr
    data = as_json(invoke("generate", folder, "--input-ids", ",".join(["3"] * 64), "--json", "-q"))
    assert len(data["generated"]) == 1 and data["context"]["positions"] == 64 and data["context"]["full"]
    # 60 positions taken by the prompt: the prefill and 4 steps fill the 64, then generation stops
    result = invoke("generate", folder, "--input-ids", ",".join(["3"] * 60), "--max-new-tokens", 10)
    assert result.exit_code == 0 and len(re.findall(r"^generated: ([\d,]+)$", result.stdout, re.M)[0].split(",")) == 5
    assert f"stopped: the context is full (64 positions: {table}" in result.stdout
    data = as_json(invoke("generate", folder, "--input-ids", ",".join(["3"] * 60), "--max-new-tokens", 5, "--json"))
    assert len(data["generated"]) == 5 and not data["context"]["full"]


def test_config_json_beside_the_model_declares_its_context_the_smaller_length_wins(folder):
    import json

    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "max_position_embeddings": 32}))
    result = invoke("generate", folder, "--input-ids", ",".join(["3"] * 33))
    assert result.exit_code == 4
    assert f"the prompt has 33 tokens, more than the 32 positions the model takes (max_position_embeddings in" \
           f" '{folder / 'config.json'}')" in result.stderr
    (folder / "config.json").write_text(json.dumps({"n_positions": 100}))  # (GPT-2's name; the table has 64)
    with pytest.raises(InputError, match="65 tokens, more than the 64 positions.*position table"):
        generate(ir_runner.load(str(folder / "openvino_model.xml")), [3] * 65, 1)


def test_a_seq2seq_decoders_positions_are_checked_through_cache_position(tmp_path):
    from ir_runner.context import context_length

    model = ir_runner.load(str(decoder(tmp_path / "decoder.xml", seq2seq=True)))
    assert context_length(model, "input_ids").positions == 64
    encoded = {"encoder_hidden_states": np.zeros((1, 3, 8), np.float32)}
    with pytest.raises(InputError, match="the prompt has 70 tokens, more than the 64 positions"):
        generate(model, [1] * 70, 1, given=encoded)


def test_a_model_that_declares_no_context_length_is_run_with_a_note(tmp_path):
    """Rotary positions computed from position_ids (the corpus's Llama) need no table: without a config.json
    nothing says how long the context is, and the note says the prompt was not checked."""
    from pathlib import Path

    from ir_runner.context import context_length

    llama = Path(__file__).parents[1] / "data" / "llm" / "llama-default" / "openvino_model.xml"
    assert context_length(ir_runner.load(str(llama)), "input_ids") is None
    result = invoke("generate", llama, "--input-ids", "1,2,3", "--max-new-tokens", 1)
    assert result.exit_code == 0
    assert "the model declares no context length" in result.stderr and "prompt's 3 tokens are not checked" \
        in result.stderr
    assert "declares no context length" not in invoke("generate", llama, "--input-ids", "1", "--max-new-tokens", 1,
                                                      "-q").stderr
