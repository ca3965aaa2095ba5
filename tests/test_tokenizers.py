"""Tokenizer and detokenizer IRs (openvino-tokenizers' operations, ``extension`` opset).

The corpus (tests/data/tokenizers/, made by scripts/make_tokenizer_corpus.py): every tokenizer gives the ids
and every detokenizer the texts that OpenVINO gave with the openvino-tokenizers extension, and ir-run's
inference declares what the IRs declare. When openvino-tokenizers is importable, single operations built
by its factory are compared with OpenVINO's CPU plugin on texts and modes the corpus does not reach (split
behaviours, replacements, normalization forms, invalid UTF-8). Bad attributes and inputs are IRErrors
naming the layer.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest

import ir_runner
from ir_runner.errors import IndexOutOfRangeError, InferenceError, IRError
from ir_runner.ops.tokenizer.normalization import simple_fold

ov = pytest.importorskip("openvino")
from tests.helpers.optest import check_inference, write_ir  # noqa: E402

CORPUS = Path(__file__).parent / "data" / "tokenizers"
NAMES = sorted(p.name for p in CORPUS.iterdir() if (p / "cases.json").exists())
TEXTS = ["", " ", "a", "Hello, World!", "a.b a_b x\u00b2 \u00b7\u4e00 I'RE", "  two  spaces ", "don't stop",
         "e\u0301 caf\u00e9", "\u1e9b\u0323",
         "A\u030a \u00c5 \u212b", "\ufb01 \u2126 \u00bd", "\u0130 \u0131 \u00df \u1e9e \u03a3\u03c2", "🙂👍🏽👨‍👩‍👧",
         "日本語テキスト", "שלום עולם", "\u202eRTL\u202c", "tab\tnew\nline\r\n", "a\x00b", "\x1b[0m",
         "\u00a0\u2028\u2029\u0085\u180e\u200b", "ǅ ǈ ǋ", "ＡＢＣ１２３", "x" * 300]


def _cases(name: str) -> dict:
    return json.loads((CORPUS / name / "cases.json").read_text())


@pytest.mark.parametrize("name", NAMES)
def test_corpus_tokenizer_gives_openvinos_ids(name):
    model = ir_runner.load(str(CORPUS / name / "openvino_tokenizer.xml"))
    inputs = [info.name for info in model.inputs]
    for case in _cases(name)["encode"]:
        feeds = {inputs[0]: np.array(case["texts"], dtype=object)}
        if "pairs" in case:
            feeds[inputs[1]] = np.array(case["pairs"], dtype=object)
        got = model.run(feeds)
        assert {k: got[k].tolist() for k in case["outputs"]} == case["outputs"], case["texts"]


def test_texts_openvino_fails_on_run_here():
    """clip_bpe's words of more tokens than bytes overflow openvino-tokenizers' BPE output (it fails); ir-run
    gives their ids, which its detokenizer turns back into the normalized text (its words' spaces aside)."""
    failed = _cases("clip_bpe")["openvino_failed"]
    assert len(failed) > 10
    tokenizer = ir_runner.load(str(CORPUS / "clip_bpe" / "openvino_tokenizer.xml"))
    detokenizer = ir_runner.load(str(CORPUS / "clip_bpe" / "openvino_detokenizer.xml"))
    for text in failed[:20]:
        ids = tokenizer.run({tokenizer.inputs[0].name: np.array([text], dtype=object)})["input_ids"]
        (back,) = detokenizer.run({detokenizer.inputs[0].name: ids}).values()
        spaceless = re.sub(r"\s+", "", simple_fold(unicodedata.normalize("NFC", text)))
        assert re.sub(r"\s+", "", back[0]) == spaceless, text


@pytest.mark.parametrize("name", NAMES)
def test_corpus_detokenizer_gives_openvinos_texts(name):
    model = ir_runner.load(str(CORPUS / name / "openvino_detokenizer.xml"))
    for case in _cases(name)["decode"]:
        (got,) = model.run({model.inputs[0].name: np.array(case["ids"], dtype=np.int64)}).values()
        assert got.tolist() == case["texts"], case["ids"]


@pytest.mark.parametrize("name", NAMES)
def test_a_tokenizers_variables_are_options_not_state(name):
    """openvino-tokenizers' 'truncation' is read from a constant and stored back as read: an option, listed with
    the variables; no run changes it, so the model has no state (precision runs it)."""
    from ir_runner.state import carried

    model = ir_runner.load(str(CORPUS / name / "openvino_tokenizer.xml"))
    assert [(v.id, v.option) for v in model.variables] == [("truncation", True)] and carried(model) == ()
    texts = np.array(["Hello, World!", "x" * 40], dtype=object)
    feeds = {model.inputs[0].name: texts} | ({model.inputs[1].name: texts} if len(model.inputs) > 1 else {})
    report = ir_runner.precision(model, feeds, "f16")
    assert report.first is None and not report.outputs_diverging


def test_an_option_set_on_a_state_holds_until_reset():
    """llama_options truncates to 24 tokens; 'truncation' set to false on a state holds for every run on it (no run
    writes another value) until reset; a run without a state takes the initial value."""
    model = ir_runner.load(str(CORPUS / "llama_options" / "openvino_tokenizer.xml"))
    feeds = {model.inputs[0].name: np.array(["x" * 300], dtype=object)}
    state = model.new_state()
    assert model.run(feeds, state=state)["input_ids"].shape == (1, 24)
    state["truncation"] = np.array(False)
    assert [model.run(feeds, state=state)["input_ids"].shape[1] for _ in range(2)] == [301, 301]
    assert model.run(feeds)["input_ids"].shape == (1, 24) and not state["truncation"]
    state.reset()
    assert model.run(feeds, state=state)["input_ids"].shape == (1, 24) and state["truncation"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("part", ["openvino_tokenizer", "openvino_detokenizer"])
def test_corpus_inference_declares_what_the_ir_declares(name, part):
    check_inference(CORPUS / name / f"{part}.xml")


def test_corpus_covers_the_families():
    types = set()
    for name in NAMES:
        for part in ("openvino_tokenizer", "openvino_detokenizer"):
            types |= set(re.findall(r'type="(\w+)" version="extension"', (CORPUS / name / f"{part}.xml").read_text()))
    assert types >= {"BPETokenizer", "WordpieceTokenizer", "UnigramTokenizer", "ByteFallback", "CharsMapNormalization",
                     "RegexSplit", "RegexNormalization", "SpecialTokensSplit", "Truncate", "CombineSegments",
                     "RaggedToDense", "VocabDecoder", "FuzeRagged", "UTF8Validate", "VocabEncoder"}


def _mutated(tmp_path: Path, name: str, part: str, old: str, new: str) -> Path:
    """A copy of a corpus IR with ``old`` (once, in the XML) replaced by ``new``."""
    xml = (CORPUS / name / f"{part}.xml").read_text()
    assert xml.count(old) >= 1, old
    (tmp_path / f"{part}.bin").write_bytes((CORPUS / name / f"{part}.bin").read_bytes())
    path = tmp_path / f"{part}.xml"
    path.write_text(xml.replace(old, new, 1))
    return path


@pytest.mark.parametrize("name, part, old, new, layer, message", [
    ("gpt2_bpe", "openvino_tokenizer", 'behaviour="isolate"', 'behaviour="sideways"', "RegexSplit",
     "behaviour"),
    ("gpt2_bpe", "openvino_tokenizer", 'max_splits="-1"', 'max_splits="0"', "RegexSplit",
     "max_splits must be -1 or positive, got 0"),
    ("bert_wordpiece", "openvino_tokenizer", 'normalization_form="nfd"', 'normalization_form="nfx"',
     "CharsMapNormalization", "normalization_form 'nfx'"),
    ("bert_wordpiece", "openvino_tokenizer", 'normalization_form="nfd" case_fold="true"',
     'normalization_form="identity" case_fold="false"', "CharsMapNormalization", "needs case_fold=true"),
    ("bert_wordpiece", "openvino_tokenizer", 'normalization_form="nfd"', 'normalization_form=""',
     "CharsMapNormalization", "no normalization_form and no precompiled character map input"),
    ("gpt2_bpe", "openvino_tokenizer", 'fuse_unk="false"', 'fuse_unk="maybe"', "BPETokenizer", "fuse_unk"),
    ("gpt2_bpe", "openvino_detokenizer", 'replace_mode="true"', 'replace_mode="2"', "UTF8Validate",
     "replace_mode"),
])
def test_bad_attributes_name_the_layer(tmp_path, name, part, old, new, layer, message):
    path = _mutated(tmp_path, name, part, old, new)
    with pytest.raises(IRError) as caught:
        ir_runner.load(str(path))
    assert f"({layer}-1, id" in str(caught.value) and message in str(caught.value)


def test_bad_pattern_names_the_layer(tmp_path):
    """A pattern that does not compile (here an unclosed group, the pattern's bytes rewritten in the .bin)."""
    xml = (CORPUS / "gpt2_bpe" / "openvino_tokenizer.xml").read_text()
    raw = bytearray((CORPUS / "gpt2_bpe" / "openvino_tokenizer.bin").read_bytes())
    pattern = b"'s|'t|'re|'ve|'m|'ll|'d|"
    at = raw.index(pattern)
    raw[at:at + 3] = b"((("
    (tmp_path / "t.bin").write_bytes(bytes(raw))
    (tmp_path / "t.xml").write_text(xml)
    with pytest.raises(InferenceError) as caught:
        ir_runner.load(str(tmp_path / "t.xml"))
    assert "(RegexSplit-1, id" in str(caught.value) and "does not compile" in str(caught.value)


def test_wrong_input_types_name_the_layer(tmp_path):
    """The vocabulary's symbols declared i32 where the op needs u8."""
    xml = (CORPUS / "gpt2_bpe" / "openvino_detokenizer.xml").read_text()
    fixed = re.sub(r'(<layer id="4" name="[^"]*" type="Const" version="opset1">\s*<data element_type=")u8(" shape=")'
                   r'(\d+)(" offset="\d+" size=")(\d+)', lambda m: f"{m[1]}i8{m[2]}{m[3]}{m[4]}{m[5]}", xml, count=1)
    fixed = re.sub(r'(<layer id="4"[^>]*>(?:(?!</layer>).)*?precision=")U8', r"\1I8", fixed, count=1, flags=re.S)
    fixed = re.sub(r'(type="VocabDecoder"(?:(?!</layer>).)*?<port id="3" precision=")U8', r"\1I8", fixed, count=1,
                   flags=re.S)
    assert fixed != xml
    (tmp_path / "d.bin").write_bytes((CORPUS / "gpt2_bpe" / "openvino_detokenizer.bin").read_bytes())
    (tmp_path / "d.xml").write_text(fixed)
    with pytest.raises(IRError) as caught:
        ir_runner.load(str(tmp_path / "d.xml"))
    assert "(VocabDecoder-1, id" in str(caught.value) and "must be u8, got i8" in str(caught.value)


# ---- single operations against openvino-tokenizers (when installed) ----


@pytest.fixture(scope="module")
def factory():
    tokenizers = pytest.importorskip("openvino_tokenizers")
    return tokenizers._get_factory()


def _u8(data: bytes):
    from openvino import opset15
    return opset15.constant(np.frombuffer(data, np.uint8).copy() if data else np.zeros(0, np.uint8))


def _compare(tmp_path, outputs, params, feeds: dict[str, np.ndarray]) -> None:
    """Save the graph, run it in ir-run and on OpenVINO's CPU plugin; every output equal."""
    xml = write_ir(outputs, params, tmp_path)
    expected = ov.Core().compile_model(str(xml), "CPU")(feeds)
    model = ir_runner.load(str(xml))
    got = model.run(feeds)
    for info, (_, value) in zip(model.outputs, expected.items()):
        assert got[info.name].tolist() == np.asarray(value).tolist(), info.name


def _string_params():
    from openvino import opset15
    return [opset15.parameter([-1], t, name=n) for n, t in (("begins", ov.Type.i32), ("ends", ov.Type.i32),
                                                             ("symbols", ov.Type.u8))]


def _string_feeds(texts: list[bytes]) -> dict[str, np.ndarray]:
    ends = np.cumsum([len(t) for t in texts]).astype(np.int32)
    begins = np.concatenate([[0], ends[:-1]]).astype(np.int32)
    return {"begins": begins, "ends": ends, "symbols": np.frombuffer(b"".join(texts) or b"", np.uint8).copy()}


def _ragged_params():
    """A ragged string tensor and skips. (Without skips openvino-tokenizers reads one false skip per row, not
    per word, and the words past the number of rows read memory beyond it: that form is not compared.)"""
    from openvino import opset15
    rows = [opset15.parameter([-1], ov.Type.i32, name=n) for n in ("row_begins", "row_ends")]
    return rows + _string_params() + [opset15.parameter([-1], ov.Type.boolean, name="skips")]


def _ragged_feeds(texts: list[bytes]) -> dict[str, np.ndarray]:
    feeds = _string_feeds(texts)
    count = len(texts)
    half = count // 2  # two rows: the words split between them; every fifth word skipped
    return {"row_begins": np.array([0, half], np.int32), "row_ends": np.array([half, count], np.int32), **feeds,
            "skips": np.arange(count) % 5 == 4}


SPLIT_PATTERNS = [r"\s+", r"\s", r"[a-z]+", r"\p{L}+|\p{N}+", "▁", r"(?<=a)b", r" ?[^\s\p{L}\p{N}]+",
                  r"'s|'t| ?\p{L}+| ?\p{N}+|\s+(?!\S)|\s+", r"[\x{4E00}-\x{9FFF}]", r"\d", r"\w+", r"\W", r"\p{Han}+",
                  r"(?i:'s|'t|'re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+",
                  r"\b\w", r"\Qa.b\E|x\z", r"\h+|\v+", r"\p{Xan}+|[\p{Xwd}-]", r"\N{2}\B", r"(?<q>[ab])\k<q>"]


@pytest.mark.parametrize("behaviour", ["remove", "isolate", "contiguous", "mergedwithprevious", "mergedwithnext"])
@pytest.mark.parametrize("invert", [False, True])
def test_regex_split_as_openvino_tokenizers(tmp_path, factory, behaviour, invert):
    texts = [t.encode() for t in TEXTS] + ["a▁b▁▁c▁".encode(), "▁▁".encode(), b"ab ab aab", b"x1y22z333"]
    params = _ragged_params()
    outputs = []  # one model of every pattern and max_splits (one compilation)
    for pattern in SPLIT_PATTERNS:
        for max_splits in (-1, 2):
            node = factory.create("RegexSplit", [*[p.output(0) for p in params], _u8(pattern.encode()).output(0)],
                                  {"behaviour": behaviour, "invert": invert, "max_splits": max_splits})
            outputs += node.outputs()
    _compare(tmp_path, outputs, params, _ragged_feeds(texts))


@pytest.mark.parametrize("search, replace, global_replace", [
    (r"\s+", " ", True), (r"^\s+|\s+$", "", True), (r"(\w)(\w)", r"$2$1", True), (r"(\w)(\w)", r"\2\1", False),
    (r"([\p{Han}])", " $1 ", True), (r"\p{Mn}", "", True), (r"(a)|(b)", "<$2>", True), (r"x*", "-", True),
    (r"(?:^)([\s\S])", "▁$1", True), ("▁", " ", True), (r"^ ", "", True), (r"\$", "$$", True),
    (r" ([\\.\\?\\!,])| ('[ms])| (') | ('[rv]e)| (n't)", r"\1", True),
])
def test_regex_normalization_as_openvino_tokenizers(tmp_path, factory, search, replace, global_replace):
    """Valid UTF-8 (PCRE2's matching of invalid UTF-8 without its check is undefined; a detokenizer's partial
    bytes after the first character are in the corpus)."""
    texts = [t.encode() for t in TEXTS] + [b"ab$c", b"I 'm here , ok ? it 's", b"xx"]
    params = _string_params()
    node = factory.create("RegexNormalization", [*[p.output(0) for p in params], _u8(search.encode()).output(0),
                                                 _u8(replace.encode()).output(0)], {"global_replace": global_replace})
    _compare(tmp_path, node.outputs(), params, _string_feeds(texts))


@pytest.mark.parametrize("form, case_fold", [("identity", True)] + [(form, fold) for form in ("nfc", "nfd", "nfkc",
                                                                                               "nfkd")
                                                                    for fold in (False, True)])
def test_charsmap_normalization_as_openvino_tokenizers(tmp_path, factory, form, case_fold):
    """The texts, and random sequences of letters, combining marks and Hangul jamo (composed or not, never
    reordered)."""
    rng = random.Random(f"{form}{case_fold}")
    alphabet = [*"aeiouAEIOUsnK αωΑΩбюЖ", *map(chr, range(0x300, 0x370, 3)), *map(chr, range(0x1100, 0x1200, 9)),
                "\u1e9b", "\u212b", "\u0130", "\u0344", "\u3099", "か", "\uac00", "\ufb01"]
    texts = [t.encode() for t in TEXTS]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))).encode() for _ in range(300)]
    params = _string_params()
    node = factory.create("CharsMapNormalization", [p.output(0) for p in params],
                          {"normalization_form": form, "case_fold": case_fold, "remove_extra_whitespaces": False})
    _compare(tmp_path, node.outputs(), params, _string_feeds(texts))


@pytest.mark.parametrize("remove_extra_whitespaces", [False, True])
@pytest.mark.parametrize("add_dummy_prefix", [False, True])
@pytest.mark.parametrize("escape_whitespaces", [False, True])
def test_charsmap_whitespace_options_as_openvino_tokenizers(tmp_path, factory, remove_extra_whitespaces,
                                                            add_dummy_prefix, escape_whitespaces):
    texts = [t.encode() for t in TEXTS] + [b"  lead  and   trail  ", b"\t tab \xe3\x80\x80 wide", b"   ", b"a \xff b"]
    params = _string_params()
    node = factory.create("CharsMapNormalization", [p.output(0) for p in params],
                          {"normalization_form": "nfkc", "remove_extra_whitespaces": remove_extra_whitespaces,
                           "add_dummy_prefix": add_dummy_prefix, "escape_whitespaces": escape_whitespaces})
    _compare(tmp_path, node.outputs(), params, _string_feeds(texts))


def test_utf8_validate_and_byte_fallback_as_openvino_tokenizers(tmp_path, factory):
    rng = random.Random(23)
    texts = [bytes(rng.randrange(256) for _ in range(rng.randrange(12))) for _ in range(200)]
    texts += [b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xe2\x82\xac",
              b"<0x41>", b"<0xff>", b"<0xZZ>", b"<abcd>", b"<0x0A"]
    for mode in (False, True):
        params = _string_params()
        node = factory.create("UTF8Validate", [p.output(0) for p in params], {"replace_mode": mode})
        (tmp_path / str(mode)).mkdir()
        _compare(tmp_path / str(mode), node.outputs(), params, _string_feeds(texts))
    params = _string_params()
    node = factory.create("ByteFallback", [p.output(0) for p in params], {})
    _compare(tmp_path, node.outputs(), params, _string_feeds(texts))


@pytest.mark.parametrize("op, attrs", [
    *(("NormalizeUnicode", {"normalization_form": form}) for form in ("NFC", "NFD", "NFKC", "NFKD")),
    ("CaseFold", {"encoding": "", "lower": True}), ("CaseFold", {"encoding": "", "lower": False}),
    ("CaseFold", {"encoding": "utf-8", "lower": True}),
])
def test_normalize_unicode_and_case_fold_as_openvino_tokenizers(tmp_path, factory, op, attrs):
    params = _string_params()
    node = factory.create(op, [p.output(0) for p in params], attrs)
    _compare(tmp_path, node.outputs(), params, _string_feeds([t.encode() for t in TEXTS] + [b"\xc3\x84\xff"]))


@pytest.mark.parametrize("with_skips", [False, True])
def test_bytes_to_chars_and_back_as_openvino_tokenizers(tmp_path, factory, with_skips):
    rng = random.Random(7)
    words = [bytes(rng.randrange(256) for _ in range(rng.randrange(8))) for _ in range(60)]
    words += [t.encode() for t in TEXTS]
    params = _ragged_params() if with_skips else _ragged_params()[:5]
    feeds = _ragged_feeds(words)
    if not with_skips:
        del feeds["skips"]
    chars = factory.create("BytesToChars", [p.output(0) for p in params]).outputs()
    if with_skips:  # (skipped words stay raw bytes, which CharsToBytes cannot read)
        _compare(tmp_path, chars, params, feeds)
    else:
        _compare(tmp_path, [*chars, *factory.create("CharsToBytes", chars[:5]).outputs()], params, feeds)


def test_fed_ranges_out_of_bounds_name_the_layer(tmp_path, factory):
    params = _ragged_params()
    node = factory.create("RegexSplit", [*[p.output(0) for p in params], _u8(rb"\s+").output(0)],
                          {"behaviour": "remove"})
    model = ir_runner.load(str(write_ir(node.outputs(), params, tmp_path)))
    feeds = _ragged_feeds([b"ab cd", b"ef"])
    with pytest.raises(IndexOutOfRangeError, match=r"\(RegexSplit-1, id .*row 1 spans 1..3, outside 0..2"):
        model.run({**feeds, "row_ends": np.array([1, 3], np.int32)})
    with pytest.raises(IndexOutOfRangeError, match=r"\(RegexSplit-1, id .*string 0 begins at 4 after its end 3"):
        model.run({**feeds, "begins": np.array([4, 5], np.int32), "ends": np.array([3, 7], np.int32)})


def test_trie_tokenizer_as_openvino_tokenizers(tmp_path, factory):
    """RWKV's greedy longest-match tokenizer, over a vocabulary holding every byte (ids shuffled, a duplicate)."""
    from openvino import opset15
    rng = random.Random(3)
    vocab = [bytes([b]) for b in range(256)] + [w.encode() for w in ("the", "th", "he", "quick", "日本", "🙂", "the")]
    ids = np.array(rng.sample(range(1000), len(vocab)), np.int32)
    ends = np.cumsum([len(t) for t in vocab]).astype(np.int32)
    consts = [opset15.constant(np.concatenate([[0], ends[:-1]]).astype(np.int32)), opset15.constant(ends),
              _u8(b"".join(vocab)), opset15.constant(ids)]
    params = _ragged_params()[:5]
    node = factory.create("TrieTokenizer", [*[p.output(0) for p in params], *[c.output(0) for c in consts]])
    feeds = _ragged_feeds([t.encode() for t in TEXTS] + [b"the quick theth", b"\x00\xff"])
    del feeds["skips"]
    feeds["row_begins"], feeds["row_ends"] = (np.arange(len(feeds["begins"]), dtype=np.int32),
                                              np.arange(1, len(feeds["begins"]) + 1, dtype=np.int32))
    _compare(tmp_path, node.outputs(), params, feeds)


def test_tensorflow_text_ops_as_openvino_tokenizers(tmp_path, factory):
    from openvino import opset15
    params = [opset15.parameter([-1], ov.Type.i32, name=n) for n in ("row_begins", "row_ends", "row_ids", "rows")]
    strings = _string_params()
    kinds = (("begins", ov.Type.i32), ("ends", ov.Type.i32), ("symbols", ov.Type.u8))
    other = [opset15.parameter([-1], t, name=f"other_{n}") for n, t in kinds]
    sparse = factory.create("RaggedToSparse", [p.output(0) for p in params[:2]]).outputs()
    ragged = factory.create("RaggedToRagged", [params[2].output(0), params[3].output(0)]).outputs()
    equal = factory.create("EqualStr", [p.output(0) for p in strings + other]).outputs()
    texts = [t.encode() for t in TEXTS]
    others = [t if i % 3 else t + b"x" for i, t in enumerate(texts)]
    feeds = {"row_begins": np.array([3, 3, 5, 9], np.int32), "row_ends": np.array([3, 5, 9, 10], np.int32),
             "row_ids": np.array([0, 0, 2, 2, 2, 5, 6], np.int32), "rows": np.array([9], np.int32),
             **_string_feeds(texts), **{f"other_{k}": v for k, v in _string_feeds(others).items()}}
    _compare(tmp_path, [*sparse, *ragged, *equal], params + strings + other, feeds)


@pytest.mark.parametrize("buckets", [7, 2 ** 62 + 3])
def test_string_to_hash_bucket_as_openvino_tokenizers(tmp_path, factory, buckets):
    """FarmHash's Hash64 over every length 0..200 (each of its code paths and the 64-byte loop)."""
    rng = random.Random(buckets)
    texts = [bytes(rng.randrange(256) for _ in range(n)) for n in range(201)]
    params = _string_params()
    node = factory.create("StringToHashBucket", [p.output(0) for p in params], {"num_buckets": buckets})
    _compare(tmp_path, node.outputs(), params, _string_feeds(texts))
