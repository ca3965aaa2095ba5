"""Regenerate the tokenizer corpus in tests/data/tokenizers/: tokenizer and detokenizer IRs made by
openvino-tokenizers, with the ids and texts OpenVINO computes for them.

Needs ``openvino-tokenizers``, ``tokenizers``, ``transformers``, ``sentencepiece`` and ``protobuf``
(``pip install -e '.[tokenizers]'``; never the tests'). Nothing is downloaded: each tokenizer is trained by the
``tokenizers`` library (or ``sentencepiece``) on the small text below (seeded, deterministic), wrapped as a
transformers fast tokenizer and converted by ``openvino_tokenizers.convert_tokenizer(...,
with_detokenizer=True)``:

    python scripts/make_tokenizer_corpus.py              # every tokenizer
    python scripts/make_tokenizer_corpus.py gpt2_bpe     # some

Tokenizers (folder names):

- ``gpt2_bpe``: byte-level BPE as GPT-2's (ByteLevel pre-tokenizer and decoder, ``<|endoftext|>`` special);
- ``llama_bpe``: SentencePiece-like BPE as Llama 2's (``▁`` for spaces, byte fallback ``<0xXX>`` tokens,
  ``<s>`` prepended, ``<unk>``);
- ``llama_options``: the same converted with other options (no special tokens added, special tokens kept
  when decoding, spaces cleaned up, invalid UTF-8 dropped, truncated and padded on the left to 24);
- ``bert_wordpiece``: BERT's WordPiece (lowercasing, accent stripping, ``[CLS] A [SEP]``, pairs
  ``[CLS] A [SEP] B [SEP]``), in three conversions: ``bert_wordpiece`` (one input), ``bert_pair`` (two inputs)
  and ``bert_padded`` (truncation to 16 tokens, padding to the longest... to max length);
- ``unigram``: a SentencePiece-like Unigram model (NFKC, Metaspace pre-tokenizer and decoder);
- ``spm_unigram``: a Unigram model trained by ``sentencepiece`` (nmt_nfkc rule), with its precompiled character
  map as the normalizer, as T5's and XLM-R's tokenizers hold one (needs ``sentencepiece`` and ``protobuf``);
- ``word_level``: a WordLevel model (lowercased, whitespace-split words, ``[UNK]``);
- ``clip_bpe``: a byte-level BPE with CLIP's ``</w>`` end-of-word suffix (texts OpenVINO fails on are left out);
- ``char_bpe``: a 256-token BPE over the training text's characters (Metaspace, ``<unk>`` for the others),
  small enough for the 256-token models of tests/data/llm (``ir-run generate --prompt``).

Each folder holds ``openvino_tokenizer.xml``/``.bin``, ``openvino_detokenizer.xml``/``.bin`` and
``cases.json``: ``encode`` (texts, or text pairs, fed one batch at a time in groups of BATCH, with every
output OpenVINO's CPU plugin gives, as lists) and ``decode`` (id rows, fed in groups, with the strings
OpenVINO gives). OpenVINO computes them with the openvino-tokenizers extension loaded (importing
``openvino_tokenizers`` registers it).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "tokenizers"
SEED = 23
BATCH = 4

TRAINING = """\
The quick brown fox jumps over the lazy dog. A tokenizer splits text into pieces that a model reads as ids.
OpenVINO runs models on many devices; ir-run reads the same files in pure Python and numpy.
Byte pair encoding merges the most frequent pair of symbols again and again until the vocabulary is full.
WordPiece prefers the longest piece in its vocabulary, and marks the pieces inside a word with two hashes.
Unigram language models keep the pieces that make the corpus most likely and drop the others.
Numbers like 3.14159, 2026, 1e-5 and 42 appear in code: for i in range(10): print(i ** 2) # squares
Émile naïvely visited the café in Zürich; façade, rôle, coöperate, Ångström and São Paulo.
Привет, мир! Это тест токенизатора. Γειά σου κόσμε. שלום עולם. مرحبا بالعالم.
日本語のテキストも少し含めます。中文文本也在这里。한국어 문장도 있습니다.
Emoji too: 🙂 👍🏽 👨‍👩‍👧 🇫🇷 — and symbols ©®™ ½ ∑ ∞ → ≠.
E-mail: someone@example.com, URL: https://example.org/path?q=1&x=y, path C:\\Users\\me\\file.txt
"""

EDGE_CASES = [
    "", " ", "  ", "\t", "\n", "\r\n", "a", "A", "hello", "Hello world", " leading space", "trailing space ",
    "double  space", "tabs\tand\nnewlines\r\n", "UPPER CASE TEXT", "MiXeD CaSe", "don't can't won't",
    "e\u0301", "cafe\u0301 vs caf\u00e9", "\u1e9b\u0323", "A\u030a", "\uFB01 ligature", "\u2126 ohm",
    "\u00bd \u2153 \u2075", "\uff21\uff22\uff23 fullwidth", "\u0131 \u0130 \u00df \u1e9e", "\u03a3\u03c3\u03c2",
    "🙂", "👍🏽", "👨‍👩‍👧", "🇫🇷🇩🇪", "🏳️‍🌈", "a🙂b", "😀😃😄😁😆😅😂🤣",
    "日本語", "中文文本", "한국어", "テキスト", "漢字かな交じり文", "𠀋𠂤 (CJK extension B)",
    "שלום", "مرحبا", "Hello שלום world", "\u202eRTL override\u202c", "\u200fmark\u200e", "עברית 123 عربى",
    "\x00", "a\x00b", "\x01\x02\x03", "\x7f", "bell\x07", "\x1b[31mred\x1b[0m", "\u0085next line",
    "\u00a0nbsp\u00a0", "\u2028line sep\u2029", "zero\u200bwidth", "soft\u00adhyphen", "\ufeffBOM",
    "\ufffd replacement", "\U0010ffff", "\ue000 private use", "<|endoftext|>", "a<|endoftext|>b", "<s>", "</s>",
    "<unk>", "[CLS]", "[SEP] [PAD]", "[MASK] me", "<s> inside </s>", "▁", "▁▁x", "##", "##ing",
    "Ġ", "Ċ", "3.14159", "1,000,000", "2026-11-29T04:08:58Z", "x**2 + y**2 == z**2", "for i in range(10):",
    "def f(x):\n    return x\n", "https://example.org/a?b=c&d=e", "someone@example.com", "!!!???...", "'\"`",
    "(((nested)))", "ʻokina", "Ελληνικά", "Кириллица", "ไทย", "हिन्दी", "தமிழ்", "ქართული", "Հայերեն",
]


def _corpus_texts(count: int, rng: random.Random) -> list[str]:
    """``count`` texts: the edge cases, then sentences and random mixes of the training text's pieces, and a
    few very long strings."""
    words = TRAINING.split(" ")
    chars = sorted(set(TRAINING) | set("".join(EDGE_CASES)))
    texts = list(EDGE_CASES)
    texts += [line for line in TRAINING.splitlines()]
    while len(texts) < count - 4:
        kind = rng.randrange(3)
        if kind == 0:
            start = rng.randrange(len(words))
            texts.append(" ".join(words[start:start + rng.randint(1, 12)]))
        elif kind == 1:
            texts.append("".join(rng.choice(chars) for _ in range(rng.randint(1, 30))))
        else:
            texts.append(rng.choice(EDGE_CASES) + rng.choice([" ", "", "\n"]) + rng.choice(words))
    texts += [TRAINING * 3, "a" * 3000, "🙂" * 700, " ".join(words) * 2]
    return texts


def _trained(model, trainer, normalizer=None, pre_tokenizer=None, decoder=None, post_processor=None):
    """A ``tokenizers.Tokenizer`` of ``model`` trained by ``trainer`` on TRAINING (repeated per line)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer(model)
    if normalizer is not None:
        tokenizer.normalizer = normalizer
    if pre_tokenizer is not None:
        tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.train_from_iterator(TRAINING.splitlines() * 3, trainer=trainer)
    if decoder is not None:
        tokenizer.decoder = decoder
    if post_processor is not None:
        tokenizer.post_processor = post_processor
    return tokenizer


def gpt2_bpe():
    from tokenizers import decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer = _trained(models.BPE(), trainer, pre_tokenizer=pre_tokenizers.ByteLevel(add_prefix_space=False),
                         decoder=decoders.ByteLevel())
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<|endoftext|>",
                                   eos_token="<|endoftext|>", unk_token="<|endoftext|>"), {}


def llama_bpe():
    from tokenizers import Tokenizer, decoders, models, normalizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<s>", "</s>"]
    normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=specials, show_progress=False)
    trained = _trained(models.BPE(unk_token="<unk>"), trainer, normalizer=normalizer)
    learned = json.loads(trained.to_str())["model"]
    vocab = {token: i for i, token in enumerate(specials)}
    for i in range(256):
        vocab[f"<0x{i:02X}>"] = len(vocab)
    for token in sorted(learned["vocab"], key=learned["vocab"].get):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned["merges"]]
    tokenizer = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tokenizer.add_special_tokens(specials)
    tokenizer.normalizer = normalizer
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                           decoders.Strip(" ", 1, 0)])
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                             special_tokens=[("<s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>"), {}


def _bert():
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=700, special_tokens=specials, show_progress=False)
    post = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                         special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer = _trained(models.WordPiece(unk_token="[UNK]"), trainer,
                         normalizer=normalizers.BertNormalizer(lowercase=True),
                         pre_tokenizer=pre_tokenizers.BertPreTokenizer(), decoder=decoders.WordPiece(),
                         post_processor=post)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", sep_token="[SEP]",
                                   pad_token="[PAD]", cls_token="[CLS]", mask_token="[MASK]")


def llama_options():
    """llama_bpe converted with other options: no special tokens added, special tokens kept when decoding,
    tokenization spaces cleaned up, invalid UTF-8 dropped, truncation to 24 from the left, padding on the left."""
    from openvino_tokenizers.constants import UTF8ReplaceMode

    hf, _ = llama_bpe()
    hf.padding_side = "left"
    hf.truncation_side = "left"
    return hf, {"add_special_tokens": False, "skip_special_tokens": False, "clean_up_tokenization_spaces": True,
                "utf8_replace_mode": UTF8ReplaceMode.IGNORE, "max_length": 24, "truncation": True}


def bert_wordpiece():
    return _bert(), {}


def bert_pair():
    return _bert(), {"number_of_inputs": 2}


def bert_padded():
    return _bert(), {"max_length": 16, "truncation": True, "use_max_padding": True}


def unigram():
    from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    trainer = trainers.UnigramTrainer(vocab_size=400, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>",
                                      show_progress=False)
    tokenizer = _trained(models.Unigram(), trainer, normalizer=normalizers.NFKC(),
                         pre_tokenizer=pre_tokenizers.Metaspace(), decoder=decoders.Metaspace())
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>",
                                   unk_token="<unk>"), {}


def spm_unigram():
    """A SentencePiece Unigram model (trained by ``sentencepiece`` with its nmt_nfkc rule) as T5's and XLM-R's
    tokenizer.json hold one: the precompiled character map as the normalizer, Metaspace."""
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    with tempfile.TemporaryDirectory() as tmp:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(TRAINING.splitlines() * 3), model_prefix=f"{tmp}/spm", vocab_size=250,
            model_type="unigram", normalization_rule_name="nmt_nfkc", character_coverage=1.0, minloglevel=2)
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(Path(f"{tmp}/spm.model").read_bytes())
    tokenizer = Tokenizer(models.Unigram([(p.piece, p.score) for p in proto.pieces], unk_id=proto.trainer_spec.unk_id))
    tokenizer.normalizer = normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<s>",
                                   eos_token="</s>"), {}


def word_level():
    """A WordLevel model (one id per whitespace-split word, ``[UNK]`` for the others)."""
    from tokenizers import models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    trainer = trainers.WordLevelTrainer(vocab_size=200, special_tokens=["[UNK]", "[PAD]"], show_progress=False)
    tokenizer = _trained(models.WordLevel(unk_token="[UNK]"), trainer, normalizer=normalizers.Lowercase(),
                         pre_tokenizer=pre_tokenizers.Whitespace())
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]"), {}


def clip_bpe():
    """A byte-level BPE with CLIP's end-of-word suffix ``</w>`` (NFC, whitespace collapsed, lowercased; CLIP's
    split pattern). OpenVINO fails on texts whose words give more tokens than bytes (openvino-tokenizers'
    output buffer check): those are left out and listed in cases.json."""
    from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|startoftext|>", "<|endoftext|>"]
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=specials, end_of_word_suffix="</w>",
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    split = pre_tokenizers.Split(Regex(r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"),
                                 behavior="removed", invert=True)
    normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "),
                                       normalizers.Lowercase()])
    pre_tokenizer = pre_tokenizers.Sequence([split, pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tokenizer = _trained(models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>"), trainer,
                         normalizer=normalizer, pre_tokenizer=pre_tokenizer, decoder=decoders.ByteLevel())
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token=specials[0], eos_token=specials[1],
                                   unk_token=specials[1], pad_token=specials[1]), {}


def char_bpe():
    from tokenizers import decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    trainer = trainers.BpeTrainer(vocab_size=256, special_tokens=["<unk>", "<eos>"], show_progress=False)
    tokenizer = _trained(models.BPE(unk_token="<unk>"), trainer, pre_tokenizer=pre_tokenizers.Metaspace(),
                         decoder=decoders.Metaspace())
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", eos_token="<eos>"), {}


TOKENIZERS: dict[str, Callable] = {f.__name__: f for f in (gpt2_bpe, llama_bpe, llama_options, bert_wordpiece,
                                                            bert_pair, bert_padded, unigram, spm_unigram,
                                                            word_level, clip_bpe, char_bpe)}


def _decode_rows(vocab_size: int, encoded: list[list[int]], rng: random.Random) -> list[list[int]]:
    """Id rows for the detokenizer: the corpus texts' ids, and random ids (special tokens, partial bytes)."""
    rows = [ids for ids in encoded if ids]
    rows += [[rng.randrange(vocab_size) for _ in range(rng.randint(1, 24))] for _ in range(60)]
    rows += [[0], list(range(min(vocab_size, 300)))]
    return rows


def _as_lists(outputs) -> dict[str, list]:
    return {port.get_any_name(): value.tolist() for port, value in outputs.items()}


def write(name: str) -> None:
    import numpy as np
    import openvino as ov
    from openvino_tokenizers import convert_tokenizer

    rng = random.Random(f"{SEED}-{name}")
    hf, options = TOKENIZERS[name]()
    tokenizer, detokenizer = convert_tokenizer(hf, with_detokenizer=True, **options)
    folder = OUT / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:  # save, then read back, as a user's folder is
        for model, stem in ((tokenizer, "openvino_tokenizer"), (detokenizer, "openvino_detokenizer")):
            ov.save_model(model, f"{tmp}/{stem}.xml")
            for suffix in (".xml", ".bin"):
                shutil.copy(f"{tmp}/{stem}{suffix}", folder / f"{stem}{suffix}")
    core = ov.Core()
    encoder = core.compile_model(folder / "openvino_tokenizer.xml", "CPU")
    decoder = core.compile_model(folder / "openvino_detokenizer.xml", "CPU")
    texts = _corpus_texts(300, rng)
    pairs = options.get("number_of_inputs", 1) == 2
    encode: list[dict] = []
    single_ids: list[list[int]] = []
    failed: list[str] = []

    def run(group: list[str], seconds: list[str] | None) -> None:
        outputs = encoder([np.array(group)] if seconds is None else [np.array(group), np.array(seconds)])
        encode.append({"texts": group, **({} if seconds is None else {"pairs": seconds}),
                       "outputs": _as_lists(outputs)})
        ids, mask = outputs["input_ids"], outputs["attention_mask"]
        single_ids.extend(row[m.astype(bool)].tolist() for row, m in zip(ids, mask))

    for start in range(0, len(texts), BATCH):
        # as OpenVINO receives them: numpy's unicode arrays drop trailing NUL characters
        group = np.array(texts[start:start + BATCH]).tolist()
        seconds = np.array([texts[(start + 7 * i + 3) % len(texts)] for i in range(len(group))]).tolist() \
            if pairs else None
        try:
            run(group, seconds)
        except RuntimeError:  # OpenVINO fails on some text: the batch's others one by one, that text left out
            for i, text in enumerate(group):
                try:
                    run([text], None if seconds is None else [seconds[i]])
                except RuntimeError:
                    failed.append(text)
    vocab_size = hf.backend_tokenizer.get_vocab_size(with_added_tokens=True)
    rows = _decode_rows(vocab_size, single_ids, rng)
    decode = []
    for start in range(0, len(rows), BATCH):
        group = rows[start:start + BATCH]
        width = max(len(r) for r in group)
        # rows of one batch share a width: shorter rows are padded with their own last id, as a user's would be
        matrix = np.array([r + [r[-1]] * (width - len(r)) for r in group], dtype=np.int64)
        outputs = decoder([matrix])
        decode.append({"ids": matrix.tolist(), "texts": [str(s) for s in outputs["string_output"].tolist()]})
    cases = {"tokenizer": name, "options": {k: getattr(v, "value", v) for k, v in options.items()},
             "vocab_size": vocab_size, "encode": encode, "decode": decode, "openvino_failed": failed}
    (folder / "cases.json").write_text(json.dumps(cases, ensure_ascii=False, indent=None) + "\n")
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(f"{name}: {len(texts)} texts ({len(failed)} failing in OpenVINO), {len(rows)} id rows, {size / 1024:.0f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"tokenizers to write (default: all of {', '.join(TOKENIZERS)})")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(TOKENIZERS))
    if unknown:
        parser.error(f"unknown tokenizer(s) {', '.join(unknown)}; choose from {', '.join(TOKENIZERS)}")
    for name in args.names or TOKENIZERS:
        write(name)


if __name__ == "__main__":
    main()
