"""CharsMapNormalization (openvino-tokenizers, ``extension`` opset) with a named normalization form: Unicode
normalization by a character map built from the standard library's ``unicodedata``.

openvino-tokenizers applies a SentencePiece character map built from ICU's tables (``normalization_form``
identity, nfc, nfd, nfkc or nfkd, with ``case_fold`` merging Unicode's simple case folding): at each position
the longest key of the map that starts there is replaced by its value, other characters stay. It is not full
normalization: combining marks are never reordered, and a composing form composes only the sequences that
are the canonical decomposition of one character. :func:`charsmap` builds the same map: each code point to
``normalize(form, fold(normalize(form, c)))`` (``fold``: the one-code-point case folding), and for nfc and
nfkc each canonical decomposition of a code point (any mark replaced by a singleton equivalent, U+0340 for
U+0300) to the code point's value. Measured against openvino-tokenizers 2026.4.1 with Python 3.11
(Unicode 14.0): identical on every single code point U+0001..U+10FFFF in all nine form/case combinations,
and on 6,000 random strings of letters, combining marks, Greek, Cyrillic, kana and Hangul jamo each.
The strings marked by skips pass unchanged. The other SentencePiece options (extra whitespace removal, a
dummy prefix, escaped whitespace) and precompiled maps given as an input are refused.
"""

from __future__ import annotations

import functools
import itertools
import unicodedata

import numpy as np

from ...types import TensorSpec
from ..api import Attr, OpContext, OpDef
from .ragged import BOOL, expect, expect_string, items, packed, string_specs

_FORMS = {"identity": None, "nfc": "NFC", "nfd": "NFD", "nfkc": "NFKC", "nfkd": "NFKD"}


def simple_fold(text: str) -> str:
    """``text`` with Unicode's simple case folding (one code point for one: ``ß`` stays, ``ẞ`` gives ``ß``)."""
    out = []
    for c in text:
        folded = c.casefold()
        if len(folded) != 1:
            lower = c.lower()
            folded = lower if len(lower) == 1 else c
        out.append(folded)
    return "".join(out)


def normalized(text: str, form: str | None, case_fold: bool) -> str:
    """``text`` in Unicode normalization ``form`` (NFC...; None: as it is), simply case folded and normalized
    again: the map of one code point."""
    if form is None:
        return simple_fold(text) if case_fold else text
    text = unicodedata.normalize(form, text)
    return unicodedata.normalize(form, simple_fold(text)) if case_fold else text


@functools.cache
def _aliases() -> dict[str, tuple[str, ...]]:
    """Each code point that is another's canonical singleton decomposition, with those others (U+0300: U+0340)."""
    found: dict[str, list[str]] = {}
    for cp in range(0x110000):
        c = chr(cp)
        if unicodedata.decomposition(c) and not unicodedata.decomposition(c).startswith("<"):
            d = unicodedata.normalize("NFD", c)
            if len(d) == 1:
                found.setdefault(d, [d]).append(c)
    return {k: tuple(v) for k, v in found.items()}


@functools.cache
def charsmap(form: str | None, case_fold: bool) -> tuple[dict[str, str], int]:
    """The character map of a normalization form (and its longest key): every code point that
    :func:`normalized` changes, and for the composing forms every canonical decomposition of such a code point
    (with singleton-equivalent marks in any place) mapped to it. Built on first use (about a second)."""
    table: dict[str, str] = {}
    composing = form in ("NFC", "NFKC")
    aliases = _aliases() if composing else {}
    for cp in range(0x110000):
        c = chr(cp)
        changes = unicodedata.decomposition(c) or 0xAC00 <= cp <= 0xD7A3 or \
            (case_fold and (c.casefold() != c or c.lower() != c))  # (Hangul syllables: algorithmic)
        if 0xD800 <= cp <= 0xDFFF or not changes:
            continue
        value = normalized(c, form, case_fold)
        if value != c:
            table[c] = value
        decomposed = unicodedata.normalize("NFD", c)
        if composing and len(decomposed) > 1 and decomposed != value:
            for key in itertools.product(*[aliases.get(x, (x,)) for x in decomposed]):
                table.setdefault("".join(key), value)
    return table, max(map(len, table), default=1)


def mapped(text: str, form: str | None, case_fold: bool) -> str:
    """``text`` through the character map, longest key first at each position (SentencePiece's normalizer
    with none of its whitespace options)."""
    if text.isascii():
        return text.lower() if case_fold else text
    table, longest = charsmap(form, case_fold)
    out = []
    i, n = 0, len(text)
    while i < n:
        for length in range(min(longest, n - i), 0, -1):
            value = table.get(text[i:i + length])
            if value is not None:
                out.append(value)
                i += length
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def infer_charsmap(ctx: OpContext):
    count = len(ctx.inputs)
    if count not in (3, 4, 5):
        ctx.fail(f"takes 3 to 5 inputs (a string tensor, skips, a character map), got {count}")
    expect_string(ctx, 0)
    form = ctx.attr("normalization_form") or ""
    if form.lower() not in _FORMS:
        ctx.fail(f"normalization_form '{form}' is not one ir-run implements (identity, nfc, nfd, nfkc, nfkd)",
                 hint="a precompiled SentencePiece character map (an input) is not implemented")
    case_fold = ctx.attr_bool("case_fold", False)
    if form.lower() == "identity" and not case_fold:
        ctx.fail("normalization_form 'identity' needs case_fold=true (openvino-tokenizers has no map for it)")
    for name, default in (("remove_extra_whitespaces", True), ("add_dummy_prefix", False),
                          ("escape_whitespaces", False), ("nmt", False)):
        if ctx.attr_bool(name, default):
            ctx.fail(f"{name}=true is not implemented", hint="ir-run implements the plain normalization forms")
    skips = count == 5 or count == 4
    if skips:
        expect(ctx, 3, BOOL, "the skips")
    outputs = string_specs(ctx.inputs[0].shape)
    if skips:
        outputs.append(TensorSpec(ctx.inputs[3].element_type, ctx.inputs[3].shape))
    return outputs, {"form": _FORMS[form.lower()], "case_fold": case_fold}


def charsmap_normalization(*inputs: np.ndarray, form: str | None, case_fold: bool):
    """CharsMapNormalization: each string normalized (see the module's docstring)."""
    begins, ends, symbols = inputs[:3]
    skips = inputs[3].ravel().tolist() if len(inputs) > 3 else None
    out = []
    for i, raw in enumerate(items(begins, ends, symbols)):
        if skips is not None and skips[i]:
            out.append(raw)
            continue
        text = raw.decode("utf-8", "surrogateescape")
        out.append(mapped(text, form, case_fold).encode("utf-8", "surrogateescape"))
    result = packed(out, begins.shape)
    return (*result, inputs[3].copy()) if skips is not None else result


OPS = (
    OpDef("CharsMapNormalization", 1, 0, 0, ("begins", "ends", "symbols", "skips", "charsmap"), infer_charsmap,
          charsmap_normalization, domain="extension", min_inputs=3,
          attrs=(Attr("add_dummy_prefix", "false"), Attr("remove_extra_whitespaces", "true"),
                 Attr("escape_whitespaces", "false"), Attr("normalization_form", ""), Attr("case_fold", "false"),
                 Attr("nmt", "false"))),
)
