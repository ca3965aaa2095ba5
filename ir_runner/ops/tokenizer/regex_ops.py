"""RegexNormalization, RegexSplit and SpecialTokensSplit (openvino-tokenizers, ``extension`` opset).

Patterns are PCRE2's, run by the ``regex`` package (see :mod:`.pcre`); offsets are bytes. Written from
openvino-tokenizers' ``regex_normalization.cpp``, ``regex_split.cpp`` and ``special_tokens_split.cpp``
(2026.4), quirks included:

- RegexNormalization replaces the matches of the search pattern by the replacement (``\\1``..``\\9`` read as
  ``$1``..``$9``; every match with ``global_replace``, else the first), skipping the strings marked by skips.
  Three old patterns are rewritten as openvino-tokenizers does (``fix_search_pattern``).
- RegexSplit splits every word of each row at the matches of its pattern, as ``behaviour`` says (``remove``,
  ``isolate``, ``contiguous``: ``(pattern)+`` isolated unless the pattern ends with ``+``,
  ``mergedwithprevious``, ``mergedwithnext``), ``invert`` swapping the roles of matches and the text between
  them; an empty match ends the splitting of a word. Words marked by skips, and words equal to one of the skip
  tokens (the 9-input form), pass whole. With no symbols at all the rows become one empty row (``[0]``,
  ``[0]``), as there. (Without skips, openvino-tokenizers reads one false skip per row where it needs one per
  word: words past the number of rows read memory beyond it. Here they are not skipped.)
- SpecialTokensSplit cuts each word at the matches of the special tokens' pattern: the match (or its
  capturing group, when one matched non-empty) becomes a word marked by skips, the text between stays.
"""

from __future__ import annotations

import numpy as np

from ...types import TensorSpec
from ..api import Attr, OpContext, OpDef
from ._pcre import Subject, compiled, matches, substitute
from ._ragged import (
    BOOL,
    FLAT,
    expect,
    expect_ragged_string,
    expect_string,
    i32,
    items,
    packed,
    ragged_string_specs,
    ranges,
    string_specs,
    text_input,
)

_OLD_PATTERNS = {
    r" ([\\.\\?\\!,])| ('[ms])| (') | ('[rv]e)| (n't)": r"(?| ([\\.\\?\\!,])| ('[ms])| (') | ('[rv]e)| (n't))",
    r"(^)(.)": r"(^)([\s\S])",
    r"(^)(.+)": r"(^)([\s\S])",
}


def _pattern(ctx: OpContext, position: int) -> bytes | None:
    """The constant pattern at ``position``, compiled once to report a bad one at load."""
    pattern = text_input(ctx, position, "the pattern")
    if pattern is not None:
        try:
            compiled(pattern)
        except Exception as exc:  # InputError: the message says what does not compile
            ctx.fail(str(exc), position=position)
    return pattern


def _fixed(pattern: bytes) -> bytes:
    text = pattern.decode("utf-8", "surrogateescape")
    return _OLD_PATTERNS.get(text, text).encode("utf-8", "surrogateescape")


def _pcre_replacement(replacement: bytes) -> str:
    text = replacement.decode("utf-8", "surrogateescape")
    for digit in "123456789":
        text = text.replace("\\" + digit, "$" + digit)
    return text


def _inputs_with_skips(ctx: OpContext, plain: int, forms: str, also: tuple[int, ...] = ()) -> bool:
    """Check the layer's input count (``plain``, ``plain + 1`` with skips before the pattern, or one of
    ``also``), its string or ragged string tensor, its skips and its pattern; whether it has skips."""
    count = len(ctx.inputs)
    if count not in (plain, plain + 1, *also):
        ctx.fail(f"takes {forms}, got {count} inputs")
    skips = count == plain + 1
    strings = 3 if plain == 5 else 5  # the tensor before the pattern(s): a string tensor or a ragged one
    if strings == 5:
        expect_ragged_string(ctx, 0)
    else:
        expect_string(ctx, 0)
    if skips:
        expect(ctx, strings, BOOL, "the skips")
    _pattern(ctx, strings + skips)
    return skips


def infer_regex_normalization(ctx: OpContext):
    skips = _inputs_with_skips(ctx, 5, "5 inputs (a string tensor, search and replace patterns) or 6 (with"
                                       " skips)")
    search_pattern = text_input(ctx, 3 + skips, "the pattern")
    text_input(ctx, 4 + skips, "the replacement")
    if search_pattern is not None:
        compiled(_fixed(search_pattern))
    outputs = string_specs(ctx.inputs[0].shape)
    if skips:
        outputs.append(TensorSpec(BOOL, ctx.inputs[3].shape))
    return outputs, {"global_replace": ctx.attr_bool("global_replace", True)}


def regex_normalization(*inputs: np.ndarray, global_replace: bool):
    """RegexNormalization: each string with the pattern's matches replaced (PCRE2 substitution)."""
    begins, ends, symbols = inputs[:3]
    skips = inputs[3].ravel().tolist() if len(inputs) == 6 else None
    pattern = compiled(_fixed(inputs[-2].tobytes()))
    replacement = _pcre_replacement(inputs[-1].tobytes())
    strings = items(begins, ends, symbols)
    out = [s if skips is not None and skips[i] else substitute(pattern, replacement, s, global_replace)
           for i, s in enumerate(strings)]
    result = packed(out, begins.shape)
    return (*result, inputs[3].copy()) if skips is not None else result


_MODES = {"remove": "remove", "isolate": "isolate", "contiguous": "isolate",
          "mergedwithprevious": "previous", "mergedwithnext": "next"}


def infer_regex_split(ctx: OpContext):
    skips = _inputs_with_skips(ctx, 6, "6 inputs (a ragged string tensor and the pattern), 7 (with skips) or 9"
                                       " (with skip tokens)", also=(9,))
    if len(ctx.inputs) == 9:
        expect_string(ctx, 6, "the skip tokens")
    behaviour = ctx.attr_choice("behaviour", {k: k for k in _MODES}, "remove")
    pattern = ctx.const_value(5 + skips)
    if pattern is not None:
        compiled(_split_pattern(pattern.tobytes(), behaviour))
    max_splits = ctx.attr_int("max_splits", -1)
    if max_splits != -1 and max_splits <= 0:
        ctx.fail(f"max_splits must be -1 or positive, got {max_splits}")
    outputs = ragged_string_specs(ctx.inputs[0].shape)
    if skips:
        outputs.append(TensorSpec(BOOL, FLAT))
    return outputs, {"behaviour": behaviour, "invert": ctx.attr_bool("invert", False), "max_splits": max_splits}


def _split_pattern(pattern: bytes, behaviour: str) -> bytes:
    """The pattern RegexSplit compiles: ``contiguous`` repeats one that does not end with ``+``."""
    return b"(" + pattern + b")+" if behaviour == "contiguous" and not pattern.endswith(b"+") else pattern


def _split_word(pattern, word: bytes, mode: str, invert: bool, max_splits: int) -> list[tuple[int, int]]:
    """The (begin, end) byte ranges RegexSplit makes of one word (openvino-tokenizers' ``add_split``)."""
    subject = Subject(word)
    length = len(word)
    pieces: list[tuple[int, int]] = []
    last_begin = -1
    limit = max_splits if max_splits >= 0 else 2 ** 32 - 1  # (a u32 count against -1 never meets it)

    def add(begin: int, end: int, inverted: bool) -> None:
        nonlocal last_begin
        if mode == "remove" and inverted:
            return
        if mode == "previous":
            if not inverted and end != length:
                last_begin = begin
                return
            if inverted:
                begin = last_begin
        elif mode == "next":
            if not inverted:
                if last_begin != -1:
                    begin = last_begin
            else:
                last_begin = begin
                return
        begin, end = max(0, begin), min(length, end)
        if len(pieces) == limit:
            end = length
        pieces.append((begin, end))

    start = 0
    for _, match_start, match_end in matches(pattern, subject):
        if match_start != start:
            add(start, match_start, invert)
        add(match_start, match_end, not invert)
        start = match_end
    if start < length:
        add(start, length, invert)
    elif mode == "next" and last_begin != length:
        add(last_begin, length, invert)
    return pieces


def regex_split(*inputs: np.ndarray, behaviour: str, invert: bool, max_splits: int):
    """RegexSplit: each word of each row split at the pattern's matches; a ragged string tensor (and skips)."""
    count = len(inputs)
    has_skips = count == 7
    row_begins, row_ends, begins, ends, symbols = inputs[:5]
    if symbols.size == 0:
        zero = np.zeros(1, np.int32)
        return (zero, zero.copy(), begins.copy(), ends.copy(), symbols.copy()) + \
            ((inputs[5].copy(),) if has_skips else ())
    pattern = compiled(_split_pattern(inputs[5 + has_skips].tobytes(), behaviour))
    skips = inputs[5].tolist() if has_skips else None
    skip_tokens = set(items(*inputs[6:9])) if count == 9 else set()
    mode = _MODES[behaviour]
    result = _split_rows(inputs[:5], lambda col, word: (skips is not None and skips[col]) or word in skip_tokens,
                         lambda word: [(b, e, False) for b, e in _split_word(pattern, word, mode, invert, max_splits)])
    return result if has_skips else result[:5]


def _split_rows(ragged: tuple[np.ndarray, ...], passes, pieces) -> tuple[np.ndarray, ...]:
    """The ragged string tensor and skips of every word cut into ``pieces(word)`` ((begin, end, skip) byte
    ranges), the words where ``passes(index, word)`` kept whole and marked by skips."""
    row_begins, row_ends, begins, ends, symbols = ragged
    raw = symbols.tobytes()
    spans = ranges(begins, ends, len(raw), "string")
    new_begins, new_ends, new_skips, out_rows_b, out_rows_e = [], [], [], [], []
    for row_begin, row_end in ranges(row_begins, row_ends, begins.size, "row"):
        out_rows_b.append(len(new_begins))
        for col in range(row_begin, row_end):
            b, e = spans[col]
            word = raw[b:e]
            for piece_begin, piece_end, skip in [(0, e - b, True)] if passes(col, word) else pieces(word):
                new_begins.append(b + piece_begin)
                new_ends.append(b + piece_end)
                new_skips.append(skip)
        out_rows_e.append(len(new_begins))
    return (i32(out_rows_b).reshape(row_begins.shape), i32(out_rows_e).reshape(row_ends.shape),
            i32(new_begins), i32(new_ends), symbols.copy(), np.array(new_skips, dtype=bool))


def infer_special_tokens_split(ctx: OpContext):
    skips = _inputs_with_skips(ctx, 6, "6 inputs (a ragged string tensor and the pattern) or 7 (with skips)")
    skip_spec = TensorSpec(ctx.inputs[5].element_type, ctx.inputs[5].shape) if skips else \
        TensorSpec(BOOL, ctx.inputs[2].shape)
    return [*ragged_string_specs(ctx.inputs[0].shape), skip_spec], {}


def _special_pieces(pattern, word: bytes) -> list[tuple[int, int, bool]]:
    """The (begin, end, special) ranges SpecialTokensSplit makes of one word."""
    subject = Subject(word)
    pieces = []
    start = 0
    for match, match_start, match_end in matches(pattern, subject):
        group = next(((subject.byte(match.start(g)), subject.byte(match.end(g)))
                      for g in range(len(match.groups()), 0, -1) if match.start(g) >= 0), None)
        if group is None or group[0] == group[1]:
            group = (match_start, match_end)
        if start < match_start:
            pieces.append((start, match_start, False))
        pieces.append((*group, True))
        start = match_end
    if start < len(word):
        pieces.append((start, len(word), False))
    return pieces


def special_tokens_split(*inputs: np.ndarray):
    """SpecialTokensSplit: special tokens cut out of each word as words of their own, marked by skips."""
    has_skips = len(inputs) == 7
    pattern = compiled(inputs[5 + has_skips].tobytes())
    skips = inputs[5].tolist() if has_skips else None
    return _split_rows(inputs[:5], lambda col, word: skips is not None and skips[col],
                       lambda word: _special_pieces(pattern, word))


_STRING = ("begins", "ends", "symbols")
_RAGGED = ("row_begins", "row_ends", *_STRING)

OPS = (
    OpDef("RegexNormalization", 1, 0, 0, (*_STRING, "skips", "search_pattern", "replace_pattern"),
          infer_regex_normalization, regex_normalization, domain="extension", min_inputs=5,
          attrs=(Attr("global_replace", "true"),)),
    OpDef("RegexSplit", 1, 0, 0, (*_RAGGED, "skips", "pattern", "skip_begins", "skip_ends", "skip_symbols"),
          infer_regex_split, regex_split, domain="extension", min_inputs=6,
          attrs=(Attr("behaviour", "remove", tuple(_MODES)), Attr("invert", "false"), Attr("max_splits", "-1"))),
    OpDef("SpecialTokensSplit", 1, 0, 0, (*_RAGGED, "skips", "pattern"), infer_special_tokens_split,
          special_tokens_split, domain="extension", min_inputs=6),
)
