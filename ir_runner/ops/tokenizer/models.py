"""BPETokenizer, WordpieceTokenizer, UnigramTokenizer, TrieTokenizer and VocabEncoder (openvino-tokenizers,
``extension`` opset): the words of a ragged string tensor to a ragged tensor of i32 token ids (VocabEncoder:
words to ids, one each, for WordLevel models).

Written from openvino-tokenizers' ``bpe_tokenizer.cpp``, ``wordpiece_tokenizer.cpp`` and
``unigram_tokenizer.cpp`` (2026.4); everything works on UTF-8 bytes:

- BPE: a word (with ``end_suffix`` appended) is first cut greedily into the longest vocabulary tokens that no
  merge produces (added tokens included); a byte that starts none becomes its ``<0xXX>`` token with
  ``byte_fallback``, else the unknown token (one per byte: ``fuse_unk`` has no effect there), else nothing.
  Then the pair of adjacent tokens of lowest merge rank is merged, the leftmost first among equal ranks,
  until no pair merges. For a duplicated token the last id wins, for a duplicated merge the last rank.
- WordPiece: the longest vocabulary token starting the word, then the longest ``suffix_indicator`` tokens
  for the rest; the unknown id for the whole word when a piece is missing or the word is longer than
  ``max_bytes_per_word`` bytes.
- Unigram: the Viterbi path of highest total score (f32 sums) over the vocabulary tokens; a character that
  starts no token becomes the unknown id with score ``min(scores) - 10``; adjacent unknown ids fuse.
"""

from __future__ import annotations

import heapq

import numpy as np

from ...errors import InputError
from ...types import TensorSpec
from ..api import Attr, OpContext, OpDef
from ._ragged import F32, I32, expect, expect_ragged_string, expect_string, i32, items, ragged_specs, ranges

_CACHE: dict[tuple, object] = {}


def _cached(kind: str, arrays: tuple[np.ndarray, ...], options: tuple, build):
    """The tokenizer ``build()`` makes of these constant arrays, kept across runs (by their digest)."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    for array in arrays:
        digest.update(str(array.dtype).encode() + str(array.shape).encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    key = (kind, digest.digest(), options)
    found = _CACHE.get(key)
    if found is None:
        if len(_CACHE) > 16:
            _CACHE.clear()
        found = _CACHE[key] = build()
    return found


def _longest(table: dict[bytes, int], longest: int, text: bytes, start: int) -> tuple[int, int]:
    """(id, end) of the longest token of ``table`` that starts ``text`` at ``start``; (-1, start) for none."""
    for end in range(min(len(text), start + longest), start, -1):
        token = table.get(text[start:end])
        if token is not None:
            return token, end
    return -1, start


def _words(ragged: tuple[np.ndarray, ...], tokenize) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ragged ids of every word of every row, ``tokenize(word) -> list of ids``."""
    row_begins, row_ends, begins, ends, symbols = ragged
    words = items(begins, ends, symbols)
    ids: list[int] = []
    out_begins, out_ends = [], []
    for row_begin, row_end in ranges(row_begins, row_ends, begins.size, "row"):
        out_begins.append(len(ids))
        for col in range(row_begin, row_end):
            ids.extend(tokenize(words[col]))
        out_ends.append(len(ids))
    return i32(out_begins).reshape(row_begins.shape), i32(out_ends).reshape(row_ends.shape), i32(ids)


class _BPE:
    """A BPE model as openvino-tokenizers' BPETokenizerImpl builds it."""

    def __init__(self, vocab: list[bytes], lefts: list[bytes], rights: list[bytes], added: dict[bytes, int],
                 unk_token: bytes, end_suffix: bytes, byte_fallback: bool) -> None:
        table: dict[bytes, int] = {}
        for i, token in enumerate(vocab):
            table[token] = i
        for token, i in added.items():
            table.setdefault(token, i)
        self.unk = table.get(unk_token, -1)
        self.merges: dict[tuple[int, int], tuple[int, int]] = {}
        produced = []
        for rank, (left, right) in enumerate(zip(lefts, rights)):
            try:
                pair = table[left], table[right]
                merged = table[left + right]
            except KeyError as exc:
                raise InputError(f"merge {rank} ({left!r} {right!r}) names a token that is not in the vocabulary:"
                                 f" {exc.args[0]!r}") from None
            self.merges[pair] = (rank, merged)
            produced.append(left + right)
        for token in produced:
            table.pop(token, None)
        self.bytes = {i: table.get(f"<0x{i:02X}>".encode()) for i in range(256)} if byte_fallback else {}
        table.pop(b"", None)
        self.table = table
        self.longest = max((len(t) for t in table), default=0)
        self.end_suffix = end_suffix
        self.cache: dict[bytes, list[int]] = {}

    def __call__(self, word: bytes) -> list[int]:
        found = self.cache.get(word)
        if found is not None:
            return found
        text = word + self.end_suffix
        ids: list[int] = []
        i = 0
        while i < len(text):
            token, end = _longest(self.table, self.longest, text, i)
            if token != -1:
                ids.append(token)
                i = end
                continue
            fallback = self.bytes.get(text[i])
            if fallback is not None:
                ids.append(fallback)
            elif self.unk != -1:
                ids.append(self.unk)
            i += 1
        result = self._merge(ids)
        if len(self.cache) < 20000:
            self.cache[word] = result
        return result

    def _merge(self, ids: list[int]) -> list[int]:
        ident = list(ids)
        prev = list(range(-1, len(ids) - 1))
        nxt = list(range(1, len(ids))) + [-1]
        alive = [True] * len(ids)
        heap: list[tuple[int, int, int, int, int]] = []
        counter = 0

        def push(a: int, b: int) -> None:
            merge = self.merges.get((ident[a], ident[b]))
            if merge is not None:
                heapq.heappush(heap, (merge[0], counter, a, b, merge[1]))

        for a in range(len(ids) - 1):
            push(a, a + 1)
            counter += 1
        head = 0 if ids else -1
        live = len(ids)
        while heap and live >= 2:
            _, _, first, second, merged_id = heapq.heappop(heap)
            if not alive[first] or not alive[second] or nxt[first] != second:
                continue
            before, after = prev[first], nxt[second]
            merged = len(ident)
            ident.append(merged_id)
            prev.append(before)
            nxt.append(after)
            alive.append(True)
            alive[first] = alive[second] = False
            if before != -1:
                nxt[before] = merged
            else:
                head = merged
            if after != -1:
                prev[after] = merged
            live -= 1
            counter += 1
            if before != -1:
                push(before, merged)
            if after != -1:
                push(merged, after)
        out = []
        while head != -1:
            out.append(ident[head])
            head = nxt[head]
        return out


def infer_bpe(ctx: OpContext):
    count = len(ctx.inputs)
    if count not in (11, 14, 15, 18):
        ctx.fail(f"takes 11, 14, 15 or 18 inputs (words, vocabulary, merges, right merges, added tokens), got"
                 f" {count}", hint="reconvert the tokenizer with a newer openvino-tokenizers")
    expect_ragged_string(ctx, 0)
    expect_string(ctx, 5, "the vocabulary")
    expect_string(ctx, 8, "the merges")
    if count in (14, 18):
        expect_string(ctx, 11, "the right merges")
    if count in (15, 18):
        expect_string(ctx, count - 4, "the added tokens")
        expect(ctx, count - 1, I32, "the added token ids")
    params = {"unk_token": ctx.attr("unk_token") or "", "end_suffix": ctx.attr("end_suffix") or "",
              "byte_fallback": ctx.attr_bool("byte_fallback", False)}
    ctx.attr_bool("fuse_unk", False)
    return ragged_specs(ctx.inputs[0].shape, I32), params


def bpe_tokenizer(*inputs: np.ndarray, unk_token: str, end_suffix: str, byte_fallback: bool):
    """BPETokenizer: the BPE ids of every word (see the module's docstring)."""
    count = len(inputs)

    def build() -> _BPE:
        vocab = items(*inputs[5:8])
        merges = items(*inputs[8:11])
        if count in (14, 18):
            lefts, rights = merges, items(*inputs[11:14])
        else:
            pairs = [m.split(b" ", 1) if b" " in m else [m, m] for m in merges]
            lefts, rights = [p[0] for p in pairs], [p[1] for p in pairs]
        added = {}
        if count in (15, 18):
            for token, i in zip(items(*inputs[count - 4:count - 1]), inputs[count - 1].ravel().tolist()):
                added.setdefault(token, int(i))
        return _BPE(vocab, lefts, rights, added, unk_token.encode(), end_suffix.encode(), byte_fallback)

    model = _cached("bpe", inputs[5:], (unk_token, end_suffix, byte_fallback), build)
    return _words(inputs[:5], model)


def _expect_words_and_vocab(ctx: OpContext, last: str) -> None:
    """Fail unless the layer has 9 inputs: words (a ragged string tensor), the vocabulary and ``last``."""
    if len(ctx.inputs) != 9:
        ctx.fail(f"takes 9 inputs (words, vocabulary, {last}), got {len(ctx.inputs)}")
    expect_ragged_string(ctx, 0)
    expect_string(ctx, 5, "the vocabulary")


def infer_wordpiece(ctx: OpContext):
    _expect_words_and_vocab(ctx, "unknown token id")
    if ctx.inputs[8].element_type.kind not in ("int", "uint", "dynamic"):
        ctx.fail(f"the unknown token id must be an integer, got {ctx.inputs[8].element_type}", position=8)
    params = {"suffix_indicator": ctx.attr("suffix_indicator") or "",
              "max_bytes_per_word": ctx.attr_int("max_bytes_per_word", 100)}
    return ragged_specs(ctx.inputs[0].shape, I32), params


def wordpiece_tokenizer(*inputs: np.ndarray, suffix_indicator: str, max_bytes_per_word: int):
    """WordpieceTokenizer: the WordPiece ids of every word (see the module's docstring)."""
    if inputs[8].size == 0:
        raise InputError("the unknown token id (input 8) is empty")
    unk = int(inputs[8].ravel()[0])
    suffix = suffix_indicator.encode()

    def build():
        roots: dict[bytes, int] = {}
        subwords: dict[bytes, int] = {}
        for i, token in enumerate(items(*inputs[5:8])):
            if token.startswith(suffix):
                subwords[token[len(suffix):]] = i
            else:
                roots[token] = i
        roots.pop(b"", None)
        subwords.pop(b"", None)
        return roots, subwords, max(map(len, roots), default=0), max(map(len, subwords), default=0)

    roots, subwords, root_longest, sub_longest = _cached("wordpiece", inputs[5:8], (suffix,), build)

    def tokenize(word: bytes) -> list[int]:
        if len(word) > max_bytes_per_word or not word:
            return [unk]
        token, i = _longest(roots, root_longest, word, 0)
        if token == -1:
            return [unk]
        ids = [token]
        while i < len(word):
            token, i = _longest(subwords, sub_longest, word, i)
            if token == -1:
                return [unk]
            ids.append(token)
        return ids

    return _words(inputs[:5], tokenize)


def infer_unigram(ctx: OpContext):
    _expect_words_and_vocab(ctx, "scores")
    expect(ctx, 8, F32, "the scores")
    ctx.attr_bool("byte_fallback", False)
    ctx.attr_bool("fuse_unk", True)
    return ragged_specs(ctx.inputs[0].shape, I32), {"unk_token_id": ctx.attr_int("unk_token_id", 0)}


_UTF8_LENGTH = [1] * 12 + [2, 2, 3, 4]


def unigram_tokenizer(*inputs: np.ndarray, unk_token_id: int):
    """UnigramTokenizer: the Viterbi ids of every word (see the module's docstring); scores add in f32."""
    scores = inputs[8].astype(np.float32).ravel()
    if scores.size < inputs[6].size:
        raise InputError(f"{inputs[6].size} tokens but {scores.size} scores")

    def build():
        table: dict[bytes, int] = {}
        for i, token in enumerate(items(*inputs[5:8])):
            table.setdefault(token, i)
        table.pop(b"", None)
        return table, max(map(len, table), default=0)

    table, longest = _cached("unigram", inputs[5:9], (), build)
    unk_score = np.float32(np.float32(scores.min() if scores.size else np.finfo(np.float32).max) - np.float32(10))
    values = scores.tolist()

    def tokenize(word: bytes) -> list[int]:
        n = len(word)
        if not n:
            return []
        best = [0.0] * (n + 1)
        starts = [-1] * (n + 1)
        ids = [unk_token_id] * (n + 1)
        start = 0
        while start < n:
            so_far = best[start]
            step = min(_UTF8_LENGTH[word[start] >> 4], n - start)
            found = False
            for end in range(start + 1, min(n, start + longest) + 1):
                token = table.get(word[start:end])
                if token is None:
                    continue
                score = float(np.float32(values[token] + so_far))
                if starts[end] == -1 or score > best[end]:
                    best[end], starts[end], ids[end] = score, start, token
                if end - start == step:
                    found = True
            if not found:
                end = start + step
                score = float(np.float32(float(unk_score) + so_far))
                if starts[end] == -1 or score > best[end]:
                    best[end], starts[end], ids[end] = score, start, unk_token_id
            start += step
        out: list[int] = []
        end, previous = n, -1
        while end > 0:
            token = ids[end]
            end = starts[end]
            if token == unk_token_id and previous == unk_token_id:
                continue
            out.append(token)
            previous = token
        return out[::-1]

    return _words(inputs[:5], tokenize)


def infer_vocab_encoder(ctx: OpContext):
    if len(ctx.inputs) != 8:
        ctx.fail(f"takes 8 inputs (words, vocabulary, its ids, the default id), got {len(ctx.inputs)}")
    expect_string(ctx, 0, "the words")
    expect_string(ctx, 3, "the vocabulary")
    values = ctx.inputs[6].element_type
    if values.name not in ("i32", "i64") and values.kind != "dynamic":
        ctx.fail(f"the vocabulary's ids must be i32 or i64, got {values}", position=6)
    if ctx.inputs[7].element_type != values and "dynamic" not in (values.kind, ctx.inputs[7].element_type.kind):
        ctx.fail(f"the default id must be {values} as the ids, got {ctx.inputs[7].element_type}", position=7)
    return [TensorSpec(values, ctx.inputs[0].shape)], {}


def vocab_encoder(begins: np.ndarray, ends: np.ndarray, symbols: np.ndarray, vocab_begins: np.ndarray,
                  vocab_ends: np.ndarray, vocab_symbols: np.ndarray, values: np.ndarray, default: np.ndarray):
    """VocabEncoder: each word's id in the vocabulary (the first entry of a duplicated word), else the default."""
    if default.size == 0:
        raise InputError("the default id is empty")

    def build() -> dict[bytes, int]:
        table: dict[bytes, int] = {}
        for token, value in zip(items(vocab_begins, vocab_ends, vocab_symbols), values.ravel().tolist()):
            table.setdefault(token, value)
        return table

    table = _cached("vocab", (vocab_begins, vocab_ends, vocab_symbols, values), (), build)
    fallback = default.ravel()[0].item()
    return np.array([table.get(w, fallback) for w in items(begins, ends, symbols)], values.dtype)


def infer_trie_tokenizer(ctx: OpContext):
    _expect_words_and_vocab(ctx, "token ids")
    expect(ctx, 8, I32, "the token ids")
    return ragged_specs(ctx.inputs[0].shape, I32), {}


def trie_tokenizer(*inputs: np.ndarray):
    """TrieTokenizer (RWKV's): each word cut greedily into the longest vocabulary tokens, their ids (input 8;
    for a duplicated token the last). A byte that starts no token is refused: openvino-tokenizers loops
    forever there."""
    if inputs[8].size != inputs[5].size:
        raise InputError(f"{inputs[5].size} tokens but {inputs[8].size} ids")

    def build():
        table = dict(zip(items(*inputs[5:8]), inputs[8].ravel().tolist()))
        table.pop(b"", None)
        return table, max(map(len, table), default=0)

    table, longest = _cached("trie", inputs[5:9], (), build)

    def tokenize(word: bytes) -> list[int]:
        ids, i = [], 0
        while i < len(word):
            token, end = _longest(table, longest, word, i)
            if token == -1:
                raise InputError(f"byte {i} (0x{word[i]:02X}) of the word {word!r} starts no token of the vocabulary")
            ids.append(token)
            i = end
        return ids

    return _words(inputs[:5], tokenize)


_RAGGED = ("row_begins", "row_ends", "begins", "ends", "symbols")
_VOCAB = ("vocab_begins", "vocab_ends", "vocab_symbols")

OPS = (
    OpDef("BPETokenizer", 1, 0, 0, (*_RAGGED, *_VOCAB, "merges_begins", "merges_ends", "merges_symbols",
                                    "right_begins", "right_ends", "right_symbols", "added_begins", "added_ends",
                                    "added_symbols", "added_ids"),
          infer_bpe, bpe_tokenizer, domain="extension", min_inputs=11,
          attrs=(Attr("unk_token", ""), Attr("fuse_unk", "false"), Attr("suffix_indicator", ""),
                 Attr("end_suffix", ""), Attr("byte_fallback", "false"), Attr("cache_capacity", "20000"))),
    OpDef("WordpieceTokenizer", 1, 0, 0, (*_RAGGED, *_VOCAB, "unk_token_id"), infer_wordpiece,
          wordpiece_tokenizer, domain="extension",
          attrs=(Attr("suffix_indicator", "##"), Attr("max_bytes_per_word", "100"))),
    OpDef("TrieTokenizer", 1, 0, 0, (*_RAGGED, *_VOCAB, "ids"), infer_trie_tokenizer, trie_tokenizer,
          domain="extension"),
    OpDef("VocabEncoder", 1, 0, 0, ("begins", "ends", "symbols", *_VOCAB, "values", "default"), infer_vocab_encoder,
          vocab_encoder, domain="extension"),
    OpDef("UnigramTokenizer", 1, 0, 0, (*_RAGGED, *_VOCAB, "scores"), infer_unigram, unigram_tokenizer,
          domain="extension", attrs=(Attr("unk_token_id", "0"), Attr("byte_fallback", "false"),
                                     Attr("fuse_unk", "true"), Attr("min_score", "inf"))),
)
