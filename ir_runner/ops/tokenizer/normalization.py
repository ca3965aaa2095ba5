"""CharsMapNormalization (openvino-tokenizers, ``extension`` opset): SentencePiece's normalizer, with a named
Unicode normalization form built from the standard library's ``unicodedata`` or a precompiled map (an input).

openvino-tokenizers runs SentencePiece's Normalizer with a character map: at each position the longest key
of the map that starts there is replaced by its value, other characters stay (a byte that starts no valid
UTF-8 character becomes U+FFFD); then, as the options say, leading, repeated and trailing spaces are removed
(``remove_extra_whitespaces``), a space is prefixed (``add_dummy_prefix``) and spaces are written U+2581
(``escape_whitespaces``); ``nmt`` has no effect there. The map is either a precompiled one given as the last
input (a darts-clone trie and its replacements, as SentencePiece models and HF's ``Precompiled`` normalizer
hold it: :class:`Precompiled`), or one built from ICU for ``normalization_form`` identity, nfc, nfd, nfkc or
nfkd, with ``case_fold`` merging Unicode's simple case folding. That is not full normalization: combining
marks are never reordered, and a composing form composes only the sequences that are the canonical
decomposition of one character. :func:`charsmap` builds the same map: each code point to
``normalize(form, fold(normalize(form, c)))`` (``fold``: the one-code-point case folding), and for nfc and
nfkc each canonical decomposition of a code point (any mark replaced by a singleton equivalent, U+0340 for
U+0300) to the code point's value. Measured against openvino-tokenizers 2026.4.1 with Python 3.11
(Unicode 14.0): identical on every single code point U+0001..U+10FFFF in all nine form/case combinations,
and on 6,000 random strings of letters, combining marks, Greek, Cyrillic, kana and Hangul jamo each.
The strings marked by skips pass unchanged.
"""

from __future__ import annotations

import functools
import itertools
import unicodedata

import numpy as np

from ...errors import InputError
from ...types import TensorSpec
from ..api import Attr, OpContext, OpDef
from ._ragged import BOOL, U8, expect, expect_string, items, packed, string_specs

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


class Precompiled:
    """A SentencePiece precompiled character map: a little-endian u32 size, a darts-clone double-array trie
    of that many bytes (u32 units) whose values are offsets into the NUL-terminated replacements after it."""

    __slots__ = ("units", "replacements")

    def __init__(self, blob: bytes) -> None:
        if len(blob) < 4:
            raise InputError(f"the precompiled character map holds {len(blob)} bytes, fewer than its size field")
        size = int.from_bytes(blob[:4], "little")
        if size % 4 or 4 + size > len(blob) or not size:
            raise InputError(f"the precompiled character map's trie size {size} does not fit its {len(blob)} bytes")
        self.units = np.frombuffer(blob, "<u4", size // 4, 4).tolist()
        self.replacements = blob[4 + size:]

    def longest(self, raw: bytes, start: int) -> tuple[int, bytes] | None:
        """(length, replacement) of the longest key starting ``raw`` at ``start`` (darts' commonPrefixSearch
        keeping its first 32 results, as SentencePiece does); None when no key does."""
        units = self.units
        found, count = None, 0
        node = _offset(units[0])
        for i in range(start, len(raw)):
            node ^= raw[i]
            if node >= len(units):
                break
            unit = units[node]
            if unit & 0x800000FF != raw[i]:  # the label
                break
            node ^= _offset(unit)
            if (unit >> 8) & 1:  # has a leaf
                if count < 32 and node < len(units):
                    value = units[node] & 0x7FFFFFFF
                    end = self.replacements.find(b"\0", value)
                    found = (i + 1 - start, self.replacements[value:end if end >= 0 else None])
                count += 1
        return found


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


class _NamedMap:
    """A named form's character map (:func:`charsmap`) as UTF-8 bytes, looked up as :class:`Precompiled`."""

    __slots__ = ("table", "longest_key")

    def __init__(self, form: str | None, case_fold: bool) -> None:
        table, _ = charsmap(form, case_fold)
        self.table = {k.encode(): v.encode() for k, v in table.items()}
        self.longest_key = max(map(len, self.table), default=1)

    def longest(self, raw: bytes, start: int) -> tuple[int, bytes] | None:
        for length in range(min(self.longest_key, len(raw) - start), 0, -1):
            value = self.table.get(raw[start:start + length])
            if value is not None:
                return length, value
        return None


_named_map = functools.lru_cache(maxsize=None)(_NamedMap)
_REPLACEMENT = "\ufffd".encode()
_SPACE_SYMBOL = "\u2581".encode()


def _prefix(charmap, raw: bytes, start: int) -> tuple[bytes, int]:
    """SentencePiece's NormalizePrefix: the replacement of the longest key at ``start`` and its length, else
    the next character unchanged (U+FFFD for one byte that starts no valid UTF-8 character)."""
    found = charmap.longest(raw, start)
    if found is not None:
        return found[1], found[0]
    size = _UTF8_LENGTH[raw[start] >> 4]
    try:
        raw[start:start + size].decode("utf-8")
    except UnicodeDecodeError:
        return _REPLACEMENT, 1
    return raw[start:start + size], size


_UTF8_LENGTH = [1] * 12 + [2, 2, 3, 4]


def normalize_bytes(raw: bytes, charmap, remove_extra_whitespaces: bool, add_dummy_prefix: bool,
                    escape_whitespaces: bool) -> bytes:
    """SentencePiece's Normalizer::Normalize of one string: the character map, and the whitespace options
    (leading, repeated and trailing spaces removed; a space prefixed; spaces written as U+2581)."""
    i, n = 0, len(raw)
    if remove_extra_whitespaces:
        while i < n:
            piece, length = _prefix(charmap, raw, i)
            if piece != b" ":
                break
            i += length
    if i == n:
        return b""
    out = bytearray()
    space = _SPACE_SYMBOL if escape_whitespaces else b" "
    if add_dummy_prefix:
        out += space
    previous_space = remove_extra_whitespaces
    while i < n:
        piece, length = _prefix(charmap, raw, i)
        while previous_space and piece.startswith(b" "):
            piece = piece[1:]
        if piece:
            out += piece.replace(b" ", _SPACE_SYMBOL) if escape_whitespaces else piece
            previous_space = piece.endswith(b" ")
        i += length
        if not remove_extra_whitespaces:
            previous_space = False
    if remove_extra_whitespaces:
        while out.endswith(space):
            del out[-len(space):]
    return bytes(out)


def infer_charsmap(ctx: OpContext):
    count = len(ctx.inputs)
    if count not in (3, 4, 5):
        ctx.fail(f"takes 3 to 5 inputs (a string tensor, skips, a character map), got {count}")
    expect_string(ctx, 0)
    form = ctx.attr("normalization_form") or ""
    if form.lower() not in (*_FORMS, ""):
        ctx.fail(f"normalization_form '{form}' is not one openvino-tokenizers knows (identity, nfc, nfd, nfkc, nfkd;"
                 " empty: a precompiled map as the last input)")
    case_fold = ctx.attr_bool("case_fold", False)
    if form.lower() == "identity" and not case_fold:
        ctx.fail("normalization_form 'identity' needs case_fold=true (openvino-tokenizers has no map for it)")
    skips = count == 5 or (count == 4 and (form != "" or ctx.inputs[3].element_type == BOOL))
    if skips:
        expect(ctx, 3, BOOL, "the skips")
    if not form:
        if count == 3 or (count == 4 and skips):
            ctx.fail("has no normalization_form and no precompiled character map input")
        expect(ctx, count - 1, U8, "the precompiled character map", rank=1)
        blob = ctx.const_value(count - 1)
        if blob is not None:
            try:
                Precompiled(blob.tobytes())
            except InputError as exc:
                ctx.fail(exc.detail, position=count - 1)
    ctx.attr_bool("nmt", False)
    outputs = string_specs(ctx.inputs[0].shape)
    if skips:
        outputs.append(TensorSpec(ctx.inputs[3].element_type, ctx.inputs[3].shape))
    params = {"form": form.lower() or None, "case_fold": case_fold, "skips": skips,
              "remove_extra_whitespaces": ctx.attr_bool("remove_extra_whitespaces", True),
              "add_dummy_prefix": ctx.attr_bool("add_dummy_prefix", False),
              "escape_whitespaces": ctx.attr_bool("escape_whitespaces", False)}
    return outputs, params


def charsmap_normalization(*inputs: np.ndarray, form: str | None, case_fold: bool, skips: bool,
                           remove_extra_whitespaces: bool, add_dummy_prefix: bool, escape_whitespaces: bool):
    """CharsMapNormalization: each string through the character map and SentencePiece's whitespace options
    (see the module's docstring)."""
    begins, ends, symbols = inputs[:3]
    skipped = inputs[3].ravel().tolist() if skips else None
    if form is None:
        blob = inputs[-1].tobytes()
        charmap = _cached_precompiled(blob)
    else:
        charmap = _named_map(_FORMS[form], case_fold)
    plain = not (remove_extra_whitespaces or add_dummy_prefix or escape_whitespaces)
    out = []
    for i, raw in enumerate(items(begins, ends, symbols)):
        if skipped is not None and skipped[i]:
            out.append(raw)
        elif plain and form is not None and raw.isascii():
            out.append(raw.lower() if case_fold else raw)
        else:
            out.append(normalize_bytes(raw, charmap, remove_extra_whitespaces, add_dummy_prefix,
                                       escape_whitespaces))
    result = packed(out, begins.shape)
    return (*result, inputs[3].copy()) if skips else result


@functools.lru_cache(maxsize=8)
def _cached_precompiled(blob: bytes) -> Precompiled:
    return Precompiled(blob)


def _string_and_skips(ctx: OpContext) -> list[TensorSpec]:
    """The output specs of a normalization of a string tensor with optional skips (3 or 4 inputs)."""
    if len(ctx.inputs) not in (3, 4):
        ctx.fail(f"takes 3 inputs (a string tensor) or 4 (with skips), got {len(ctx.inputs)}")
    expect_string(ctx, 0)
    outputs = string_specs(ctx.inputs[0].shape)
    if len(ctx.inputs) == 4:
        outputs.append(TensorSpec(ctx.inputs[3].element_type, ctx.inputs[3].shape))
    return outputs


def infer_normalize_unicode(ctx: OpContext):
    outputs = _string_and_skips(ctx)
    form = ctx.attr("normalization_form") or "NFD"
    if form not in ("NFC", "NFD", "NFKC", "NFKD"):
        ctx.fail(f"normalization_form must be NFC, NFD, NFKC or NFKD, got '{form}'")
    return outputs, {"form": form.lower()}


def normalize_unicode(*inputs: np.ndarray, form: str):
    """NormalizeUnicode: CharsMapNormalization's map of ``form`` without case folding or whitespace options."""
    return charsmap_normalization(*inputs, form=form, case_fold=False, skips=len(inputs) == 4,
                                  remove_extra_whitespaces=False, add_dummy_prefix=False, escape_whitespaces=False)


def infer_case_fold(ctx: OpContext):
    outputs = _string_and_skips(ctx)
    encoding = ctx.attr("encoding")
    encoding = "utf-8" if encoding is None else encoding
    lower = ctx.attr_bool("lower", True)
    if encoding not in ("", "utf-8") or (encoding == "utf-8" and not lower):
        ctx.fail(f"encoding must be '' or 'utf-8' and 'utf-8' only lowers; got encoding '{encoding}',"
                 f" lower={str(lower).lower()}")
    return outputs, {"ascii": encoding == "", "lower": lower}


def case_fold(*inputs: np.ndarray, ascii: bool, lower: bool):
    """CaseFold: with encoding '' the ASCII letters lowered (or raised with ``lower`` false), byte by byte;
    with 'utf-8' the identity map with simple case folding (see CharsMapNormalization)."""
    if not ascii:
        return charsmap_normalization(*inputs, form="identity", case_fold=True, skips=len(inputs) == 4,
                                      remove_extra_whitespaces=False, add_dummy_prefix=False,
                                      escape_whitespaces=False)
    begins, ends, symbols = inputs[:3]  # (skips are passed on, not read, as there)
    table = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz") if lower else \
        bytes.maketrans(b"abcdefghijklmnopqrstuvwxyz", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    result = packed([s.translate(table) for s in items(begins, ends, symbols)], begins.shape)
    return (*result, inputs[3].copy()) if len(inputs) == 4 else result


OPS = (
    OpDef("NormalizeUnicode", 1, 0, 0, ("begins", "ends", "symbols", "skips"), infer_normalize_unicode,
          normalize_unicode, domain="extension", min_inputs=3, attrs=(Attr("normalization_form", "NFD"),)),
    OpDef("CaseFold", 1, 0, 0, ("begins", "ends", "symbols", "skips"), infer_case_fold, case_fold,
          domain="extension", min_inputs=3, attrs=(Attr("encoding", "utf-8"), Attr("lower", "true"))),
    OpDef("CharsMapNormalization", 1, 0, 0, ("begins", "ends", "symbols", "skips", "charsmap"), infer_charsmap,
          charsmap_normalization, domain="extension", min_inputs=3,
          attrs=(Attr("add_dummy_prefix", "false"), Attr("remove_extra_whitespaces", "true"),
                 Attr("escape_whitespaces", "false"), Attr("normalization_form", ""), Attr("case_fold", "false"),
                 Attr("nmt", "false"))),
)
