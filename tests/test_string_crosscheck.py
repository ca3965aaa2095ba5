"""``crosscheck`` and ``run --ref openvino`` on string models and tokenizer IRs: string inputs reach OpenVINO as
their exact UTF-8 bytes (invalid UTF-8 and NULs included), string outputs are compared element by element as
Python strings, every corpus tokenizer and detokenizer (tests/data/tokenizers) agrees with the CPU plugin running
openvino-tokenizers' extension, and a string that differs is named as the first divergence with both values."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
pytest.importorskip("openvino_tokenizers")
from openvino import opset15  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner import device as devices  # noqa: E402
from ir_runner.divergence import AGREE, DIVERGES, UNOBSERVABLE  # noqa: E402
from ir_runner.errors import UnsupportedError  # noqa: E402
from tests.cli.clikit import invoke  # noqa: E402
from tests.helpers.optest import write_ir  # noqa: E402

CORPUS = Path(__file__).parent / "data" / "tokenizers"
NAMES = sorted(p.name for p in CORPUS.iterdir() if (p / "cases.json").exists())
RAW = np.array([b"ab\xffd", "é".encode(), b"", b"\xe4\xb8", b"a\x00b", b"\xf0\x9f\x98\x80"], dtype=object)


def _feeds(model: ir_runner.Model, name: str, part: str) -> dict[str, np.ndarray]:
    cases = json.loads((CORPUS / name / "cases.json").read_text())
    if part == "openvino_detokenizer":
        return {model.inputs[0].name: np.array(cases["decode"][1]["ids"], dtype=np.int64)}
    case = cases["encode"][2]
    feeds = {model.inputs[0].name: np.array(case["texts"], dtype=object)}
    if "pairs" in case:
        feeds[model.inputs[1].name] = np.array(case["pairs"], dtype=object)
    return feeds


def _unpack_pack(tmp_path) -> Path:
    text = opset15.parameter([-1], ov.Type.string, name="text")
    begins, ends, chars = opset15.string_tensor_unpack(text).outputs()
    return write_ir([opset15.string_tensor_pack(begins, ends, chars)], [text], tmp_path)


@pytest.mark.parametrize("every_layer", [False, True], ids=["groups", "every-layer"])
def test_string_inputs_reach_the_device_as_their_bytes(every_layer, tmp_path):
    """The unpacked bytes (u8, compared bit for bit) agree: invalid UTF-8 and NULs were fed as they are.
    (Rows are found by layer type: once a test has loaded openvino-tokenizers' extension, OpenVINO writes these
    layers as its ``extension`` versions instead of opset15's; ir-run runs both with the same kernels.)"""
    report = ir_runner.crosscheck(str(_unpack_pack(tmp_path)), {"text": RAW}, every_layer=every_layer)
    assert report.ok and report.count(DIVERGES) == 0
    rows = {(row.layer.type_version.rpartition("-")[0], row.position): row for row in report.layers}
    pack = rows[("StringTensorPack", 0)]
    assert pack.status == AGREE
    assert pack.element_type == "string" and pack.rule == "bits"
    assert pack.ours == pack.device == "ab\\xffd"  # (shown with invalid UTF-8 escaped: JSON-safe)
    if every_layer:
        assert rows[("StringTensorUnpack", 2)].status == AGREE  # the flat bytes, \xff and \x00 among them
        assert rows[("StringTensorUnpack", 2)].size == sum(len(item) for item in RAW)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("part", ["openvino_tokenizer", "openvino_detokenizer"])
def test_every_corpus_tokenizer_and_detokenizer_agrees_with_openvino(name, part):
    model = ir_runner.load(str(CORPUS / name / f"{part}.xml"))
    report = ir_runner.crosscheck(model, _feeds(model, name, part))
    assert report.ok, report.first
    assert {row.status for row in report.layers} <= {AGREE, UNOBSERVABLE}
    returned = {model.graph.layers[model.graph.sources[result.id][0][0]].name for result in model.graph.results}
    assert all(row.status == AGREE for row in report.layers if row.layer.name in returned)


def test_a_differing_string_is_the_first_divergence_with_both_values(monkeypatch):
    """A device output string planted one character off (the detokenizer's text) is named with both strings."""
    model = ir_runner.load(str(CORPUS / "gpt2_bpe" / "openvino_detokenizer.xml"))
    feeds = _feeds(model, "gpt2_bpe", "openvino_detokenizer")
    pack = next(layer.name for layer in model.graph.layers.values() if layer.type == "StringTensorPack")
    planted = devices._device_run

    def device_run(ov_, requested, unobservable, produced, device):
        value = produced[(pack, 0)].copy()
        value[1] = value[1] + "!"
        return planted(ov_, requested, unobservable, {**produced, (pack, 0): value}, device)

    monkeypatch.setattr(devices, "_device_run", device_run)
    report = ir_runner.crosscheck(model, feeds, every_layer=True)
    first = report.first
    assert first.layer.name == pack and first.status == DIVERGES and first.element_type == "string"
    assert (first.mismatches, first.worst_index) == (1, (1,))
    assert first.device == first.ours + "!" and isinstance(first.ours, str)


def test_the_cli_crosschecks_a_tokenizer_from_text(tmp_path):
    xml = CORPUS / "bert_wordpiece" / "openvino_tokenizer.xml"
    name = ir_runner.load(str(xml)).inputs[0].name
    result = invoke("crosscheck", xml, "--value", f'{name}=["Hello, World!", "日本語 🙂", ""]', "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["agree"] and data["counts"]["agree"] > 0


def test_without_openvino_tokenizers_an_extension_ir_is_unsupported(monkeypatch):
    monkeypatch.setitem(sys.modules, "openvino_tokenizers", None)
    model = ir_runner.load(str(CORPUS / "gpt2_bpe" / "openvino_detokenizer.xml"))
    with pytest.raises(UnsupportedError, match="extension opset.*openvino-tokenizers") as info:
        ir_runner.crosscheck(model, _feeds(model, "gpt2_bpe", "openvino_detokenizer"))
    assert "pip install openvino-tokenizers" in info.value.hint


@pytest.mark.parametrize(("name", "model_op"), [("llama_options", "BPETokenizer"),
                                                ("bert_padded", "WordpieceTokenizer")])
def test_ragged_rows_the_device_truncates_in_place_are_not_observable(name, model_op):
    """The CPU plugin runs openvino-tokenizers' Truncate in place, in the ragged rows of the tokenizer op before
    it: read after the inference, that op's output holds the truncated rows. It is not observable (not a
    divergence), and Truncate's own rows agree."""
    model = ir_runner.load(str(CORPUS / name / "openvino_tokenizer.xml"))
    texts = np.array(["short", "many words " * 30, "", "more words again " * 20], dtype=object)
    report = ir_runner.crosscheck(model, {model.inputs[0].name: texts}, every_layer=True)
    assert report.ok
    overwritten = [row for row in report.layers if row.note and row.note.startswith("overwritten")]
    assert [row.layer.type_version.split("-")[0] for row in overwritten] == [model_op]
    assert overwritten[0].status == UNOBSERVABLE and "'Truncate" in overwritten[0].note
    truncate = [row for row in report.layers if row.layer.type_version.startswith("Truncate")]
    assert truncate and {row.status for row in truncate} == {AGREE}


@pytest.mark.parametrize("name", ["gpt2_bpe", "bert_pair"])
def test_run_ref_openvino_on_a_tokenizer_and_its_detokenizer(name):
    tokenizer = CORPUS / name / "openvino_tokenizer.xml"
    model = ir_runner.load(str(tokenizer))
    values = [f'{info.name}=["Hello, World!", "日本語 🙂", ""]' for info in model.inputs]
    result = invoke("run", tokenizer, *(item for value in values for item in ("--value", value)), "--ref", "openvino",
                    "--json")
    assert result.exit_code == 0, result.output
    comparison = json.loads(result.output)["comparison"]
    assert comparison["passed"] and comparison["reference"] == "openvino"
    assert {report["name"] for report in comparison["outputs"]} == {info.name for info in model.outputs}
    detokenizer = CORPUS / name / "openvino_detokenizer.xml"
    ids = json.loads((CORPUS / name / "cases.json").read_text())["decode"][1]["ids"]
    name_in = ir_runner.load(str(detokenizer)).inputs[0].name
    result = invoke("run", detokenizer, "--value", f"{name_in}={json.dumps(ids)}", "--ref", "openvino", "--json")
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)["comparison"]["outputs"]
    assert report["passed"] and report["actual"]["element_type"] == "string" and report["total"] == len(ids)


def test_run_ref_openvino_feeds_invalid_utf8_as_bytes_and_compares_strings_exactly(tmp_path):
    xml = _unpack_pack(tmp_path)
    np.save(tmp_path / "text.npy", RAW.astype(bytes))
    result = invoke("run", xml, "--input", f"text={tmp_path / 'text.npy'}", "--ref", "openvino", "--json")
    assert result.exit_code == 0, result.output
    output = ir_runner.load(str(xml)).outputs[0].name
    (tmp_path / "ref.json").write_text(json.dumps({output: ["ab\ufffdd", "é", "", "\ufffd", "a\x00b", "?"]}))
    result = invoke("run", xml, "--input", f"text={tmp_path / 'text.npy'}", "--ref", tmp_path / "ref.json")
    assert result.exit_code == 1
    assert "mismatched  1 of 6" in result.output and "[5] '😀' vs '?'" in result.output


def test_the_cli_json_report_of_invalid_utf8_strings_is_valid_json(tmp_path):
    xml = _unpack_pack(tmp_path)
    np.save(tmp_path / "text.npy", RAW.astype(bytes))
    result = invoke("crosscheck", xml, "--input", f"text={tmp_path / 'text.npy'}", "--every-layer", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["layers"]
    assert [row["ours"] for row in rows if row["element_type"] == "string"] == ["ab\\xffd", "ab\\xffd"]


def test_a_string_ending_in_nul_cannot_be_fed_to_openvino(tmp_path):
    """OpenVINO's Python API passes strings as numpy bytes, which drop trailing NULs: the device would see
    another text, so the check is refused rather than reported as a divergence."""
    with pytest.raises(UnsupportedError, match=r"element 1 of the string input 'text' ends in a NUL byte"):
        ir_runner.crosscheck(str(_unpack_pack(tmp_path)), {"text": np.array(["a\x00b", "a\x00"], dtype=object)})
