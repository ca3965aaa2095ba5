"""``ir-run generate --prompt``: text in, text out with a folder's tokenizer IRs (a 256-token LLM of the corpus
beside the corpus's 256-token char_bpe tokenizer), against OpenVINO with the openvino-tokenizers extension, and
openvino-genai's LLMPipeline when it is installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner.generation import generate
from ir_runner.text import load_codec
from tests.cli.clikit import as_json, invoke

DATA = Path(__file__).parent.parent / "data"
PROMPT = "The quick brown fox 🙂 日本"


@pytest.fixture()
def folder(tmp_path):
    for name in ("openvino_model.xml", "openvino_model.bin"):
        shutil.copy(DATA / "llm" / "llama-default" / name, tmp_path / name)
    for name in ("openvino_tokenizer.xml", "openvino_tokenizer.bin", "openvino_detokenizer.xml",
                 "openvino_detokenizer.bin"):
        shutil.copy(DATA / "tokenizers" / "char_bpe" / name, tmp_path / name)
    return tmp_path


def _openvino_text(folder: Path, prompt: str, steps: int) -> tuple[list[int], list[int], str]:
    """The prompt's ids by OpenVINO's tokenizer, ir-run's greedy ids for them, their text by OpenVINO's
    detokenizer."""
    ov = pytest.importorskip("openvino")
    pytest.importorskip("openvino_tokenizers")
    core = ov.Core()
    encoded = core.compile_model(str(folder / "openvino_tokenizer.xml"), "CPU")([np.array([prompt])])
    ids = [int(i) for i, m in zip(encoded["input_ids"][0], encoded["attention_mask"][0]) if m]
    model = ir_runner.load(str(folder / "openvino_model.xml"))
    generated = [step.token for step in generate(model, ids, steps, stop=(1,))]
    detokenizer = core.compile_model(str(folder / "openvino_detokenizer.xml"), "CPU")
    text = detokenizer([np.array([[t for t in generated if t != 1]], dtype=np.int64)])[0]
    return ids, generated, str(text[0])


def test_prompt_gives_the_text_openvino_tokenizers_give(folder):
    ids, generated, text = _openvino_text(folder, PROMPT, 8)
    data = as_json(invoke("generate", folder, "--prompt", PROMPT, "--max-new-tokens", 8, "--json", "-q"))
    assert data["prompt"] == ids and data["generated"] == generated
    assert data["text"] == {"prompt": PROMPT, "eos_token_id": 1, "generated": text}
    result = invoke("generate", folder / "openvino_model.xml", "--prompt", PROMPT, "--max-new-tokens", 8, "-q")
    assert result.exit_code == 0 and f"text: {text!r}" in result.stdout


def test_generation_stops_at_the_tokenizers_end_of_sequence_id(folder):
    codec = load_codec(folder)
    tokens = [step.token for step in generate(ir_runner.load(str(folder / "openvino_model.xml")),
                                              codec.encode(PROMPT), 6)]
    eos = tokens[2]  # the tokenizer made to name the third chosen token its end of sequence
    xml = folder / "openvino_tokenizer.xml"
    xml.write_text(xml.read_text().replace('<eos_token_id value="1" />', f'<eos_token_id value="{eos}" />'))
    data = as_json(invoke("generate", folder, "--prompt", PROMPT, "--max-new-tokens", 6, "--json", "-q"))
    assert data["generated"] == tokens[:3] and data["text"]["eos_token_id"] == eos
    assert data["text"]["generated"] == codec.decode([t for t in tokens[:3] if t != eos])


def test_ref_openvino_compares_the_text_with_openvino_genai(folder):
    result = invoke("generate", folder, "--prompt", PROMPT, "--max-new-tokens", 6, "--ref", "openvino", "--json",
                    "-q")
    assert result.exit_code == 0, result.output
    data = as_json(result)
    try:
        import openvino_genai  # noqa: F401
    except ImportError:
        assert data["reference"]["text"] is None
        assert "openvino-genai is not installed" in invoke("generate", folder, "--prompt", PROMPT, "--max-new-tokens",
                                                           2, "--ref", "openvino", "-q").stdout
    else:
        assert data["reference"]["text"] == data["text"]["generated"]


@pytest.mark.parametrize("args, message", [
    (["--max-new-tokens", 2], "give the prompt as --input-ids or as --prompt"),
    (["--prompt", "a", "--input-ids", "1,2"], "give the prompt as --input-ids or as --prompt"),
    (["--prompt", ""], "the tokenizer gives no token for the prompt ''"),
])
def test_prompt_errors(folder, args, message):
    result = invoke("generate", folder, *args)
    assert result.exit_code == 4 and message in result.output and "Traceback" not in result.output


def test_prompt_needs_the_tokenizer_irs(folder):
    (folder / "openvino_detokenizer.xml").unlink()
    result = invoke("generate", folder, "--prompt", "hello")
    assert result.exit_code == 4
    assert "holds no openvino_detokenizer.xml" in result.output and "convert_tokenizer" in result.output


@pytest.mark.parametrize("prompt", [["--prompt", "hello"], ["--input-ids", "1,2"]])
def test_a_missing_model_is_an_invalid_model_as_for_run(folder, prompt):
    """Not the parent folder's missing tokenizers (exit 4): the model folder or file itself, exit 3 as ``run``."""
    result = invoke("generate", folder / "gone", *prompt, debug=False)
    assert result.exit_code == 3 and f"model folder '{folder / 'gone'}' does not exist" in result.stderr
    assert "tokenizer" not in result.stderr
    result = invoke("generate", folder / "gone.xml", *prompt, debug=False)
    assert result.exit_code == 3 and f"model file '{folder / 'gone.xml'}' does not exist" in result.stderr
    assert invoke("run", folder / "gone.xml", debug=False).stderr == result.stderr
    result = invoke("generate", folder / "openvino_model", *prompt, debug=False)  # (the .xml's stem)
    assert result.exit_code == 3 and f"did you mean '{folder / 'openvino_model.xml'}'?" in result.stderr


def test_a_token_outside_the_models_vocabulary_is_refused(folder):
    for name in ("openvino_tokenizer.xml", "openvino_tokenizer.bin", "openvino_detokenizer.xml",
                 "openvino_detokenizer.bin"):  # a tokenizer of more than the model's 256 ids
        shutil.copy(DATA / "tokenizers" / "gpt2_bpe" / name, folder / name)
    result = invoke("generate", folder, "--prompt", "Hello world", "--max-new-tokens", 2)
    assert result.exit_code == 4 and "is id 366, outside the model's vocabulary" in result.output
    assert "score 256 ids (0 to 255)" in result.output and "the model's own" in result.output
    result = invoke("generate", folder, "--input-ids", "3,256", "--max-new-tokens", 2)
    assert result.exit_code == 4 and "the prompt's token 1 is id 256, outside" in result.output
    assert invoke("generate", folder, "--input-ids", "3,255", "--max-new-tokens", 1).exit_code == 0


def test_a_prompt_of_more_tokens_than_the_models_context_is_refused_with_its_token_count(folder):
    (folder / "config.json").write_text('{"max_position_embeddings": 8}')
    count = len(load_codec(folder).encode(PROMPT))
    assert count > 8
    result = invoke("generate", folder, "--prompt", PROMPT)
    assert result.exit_code == 4 and f"the prompt has {count} tokens, more than the 8 positions the model takes" \
        f" (max_position_embeddings in '{folder / 'config.json'}')" in result.stderr
