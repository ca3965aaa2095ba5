"""VocabDecoder, FuzeRagged, ByteFallback and UTF8Validate (openvino-tokenizers, ``extension`` opset): ids
back to text. Written from ``vocab_decoder.cpp``, ``fuze.cpp``, ``byte_fallback.cpp`` and
``utf8_validate.cpp`` (2026.4):

- VocabDecoder maps each id of a ``[batch, length]`` tensor to its vocabulary bytes (a ragged string tensor,
  ``length`` words per row, one empty word for a row of length 0); ids out of the vocabulary (negative ones
  included) and the skip tokens (attribute, or the optional 5th input) give empty words.
- FuzeRagged joins each row's words into one string (the range from its first word's begin to its last
  word's end).
- ByteFallback turns each ``<0xXX>`` token (six bytes, upper-case hex) into its byte; any other six-byte
  ``<....>`` token becomes byte 0xFF (SentencePiece's PieceToByte gives -1).
- UTF8Validate replaces each invalid UTF-8 sequence by U+FFFD (``replace_mode``) or drops it: a byte that
  starts no sequence, a sequence cut short (one U+FFFD, the next byte read again), an overlong one (one U+FFFD
  per byte). Surrogates and code points above U+10FFFF pass, as there.
"""

from __future__ import annotations

import numpy as np

from ...errors import IndexOutOfRangeError
from ...types import PartialShape
from ..api import Attr, OpContext, OpDef
from ._ragged import I32, expect, expect_string, items, packed, ragged_string_specs, string_specs


def infer_vocab_decoder(ctx: OpContext):
    if len(ctx.inputs) not in (4, 5):
        ctx.fail(f"takes 4 inputs (ids, vocabulary) or 5 (with skip tokens), got {len(ctx.inputs)}")
    ids = ctx.inputs[0]
    expect(ctx, 0, I32, "the ids", rank=2)
    expect_string(ctx, 1, "the vocabulary")
    if len(ctx.inputs) == 5:
        expect(ctx, 4, I32, "the skip tokens", rank=1)
    rows = PartialShape((ids.shape.dims[0],)) if ids.shape.rank == 2 else PartialShape(None)
    return ragged_string_specs(rows), {"skip_tokens": tuple(ctx.attr_ints("skip_tokens", []))}


def vocab_decoder(*inputs: np.ndarray, skip_tokens: tuple[int, ...]):
    """VocabDecoder: the vocabulary bytes of every id, one word per id (see the module's docstring)."""
    ids, begins, ends, symbols = inputs[:4]
    skip = set(inputs[4].ravel().tolist() if len(inputs) == 5 else skip_tokens)
    vocab = items(begins, ends, symbols)
    batch, length = ids.shape
    width = length if length > 0 else 1
    words = [b""] * (batch * width)
    for i, token in enumerate(ids.ravel().tolist()):
        if 0 <= token < len(vocab) and token not in skip:
            words[i] = vocab[token]
    word_begins, word_ends, flat = packed(words, (len(words),))
    rows = np.arange(batch, dtype=np.int32) * width
    return rows, rows + width, word_begins, word_ends, flat


def infer_fuze_ragged(ctx: OpContext):
    if len(ctx.inputs) != 4:
        ctx.fail(f"takes 4 inputs (row begins and ends, word begins and ends), got {len(ctx.inputs)}")
    for i, what in enumerate(("the row begins", "the row ends", "the word begins", "the word ends")):
        expect(ctx, i, I32, what)
    return string_specs(ctx.inputs[0].shape)[:2], {}


def fuze_ragged(row_begins: np.ndarray, row_ends: np.ndarray, begins: np.ndarray, ends: np.ndarray):
    """FuzeRagged: each row's words as one string range (first word's begin, last word's end)."""
    first = row_begins.ravel()
    last = np.where(row_ends.ravel() > first, row_ends.ravel() - 1, row_ends.ravel())
    for name, index, array in (("begins", first, begins), ("ends", last, ends)):
        bad = (index < 0) | (index >= array.size)
        if bad.any():
            i = int(np.argmax(bad))
            raise IndexOutOfRangeError(f"row {i} reads word {int(index[i])} of {array.size} ({name})")
    return (begins.ravel()[first].reshape(row_begins.shape).astype(np.int32),
            ends.ravel()[last].reshape(row_begins.shape).astype(np.int32))


def infer_string_map(ctx: OpContext):
    if len(ctx.inputs) != 3:
        ctx.fail(f"takes 3 inputs (a string tensor), got {len(ctx.inputs)}")
    expect_string(ctx, 0)
    return string_specs(ctx.inputs[0].shape), {}


def _piece_byte(token: bytes) -> bytes:
    if len(token) == 6 and token.startswith(b"<") and token.endswith(b">"):
        hex_digits = token[3:5]
        if token[1:3] == b"0x" and all(c in b"0123456789ABCDEF" for c in hex_digits):
            return bytes([int(hex_digits, 16)])
        return b"\xff"
    return token


def byte_fallback(begins: np.ndarray, ends: np.ndarray, symbols: np.ndarray):
    """ByteFallback: ``<0xXX>`` tokens to their bytes (see the module's docstring)."""
    return packed([_piece_byte(t) for t in items(begins, ends, symbols)], begins.shape)


def infer_utf8_validate(ctx: OpContext):
    outputs, _ = infer_string_map(ctx)
    return outputs, {"replace_mode": ctx.attr_bool("replace_mode", False)}


_REPLACEMENT = "\ufffd".encode()
_FIRST_CODE_POINT = (0, 0x80, 0x800, 0x10000)


def _validated(raw: bytes, replace: bool) -> bytes:
    out = bytearray()
    bad = _REPLACEMENT if replace else b""
    i, n = 0, len(raw)
    pending = size = code = 0
    while i < n:
        byte = raw[i]
        if not pending:
            if byte < 0x80:
                out.append(byte)
            elif byte >> 5 == 0b110:
                size, pending, code = 2, 1, (byte & 0x1F) << 6
            elif byte >> 4 == 0b1110:
                size, pending, code = 3, 2, (byte & 0x0F) << 12
            elif byte >> 3 == 0b11110:
                size, pending, code = 4, 3, (byte & 0x07) << 18
            else:
                out += bad
            i += 1
            continue
        if byte >> 6 != 0b10:  # cut short: this byte starts afresh
            pending = 0
            out += bad
            continue
        pending -= 1
        code |= (byte & 0x3F) << (6 * pending)
        if not pending:
            if code < _FIRST_CODE_POINT[size - 1]:
                out += bad * size
            else:
                out += raw[i + 1 - size:i + 1]
            code = 0
        i += 1
    if pending and replace:
        out += _REPLACEMENT
    return bytes(out)


def utf8_validate(begins: np.ndarray, ends: np.ndarray, symbols: np.ndarray, *, replace_mode: bool):
    """UTF8Validate: invalid UTF-8 replaced by U+FFFD or dropped (see the module's docstring)."""
    strings = [_validated(s, replace_mode) for s in items(begins, ends, symbols)]
    base = int(begins.ravel()[0]) if begins.size else 0
    out_begins, out_ends, flat = packed(strings, begins.shape)
    if base:  # openvino-tokenizers writes from the first begin on and keeps as many bytes as it wrote
        flat = np.concatenate([np.zeros(base, np.uint8), flat])[:flat.size]
        out_begins, out_ends = out_begins + base, out_ends + base
    return out_begins, out_ends, flat


OPS = (
    OpDef("VocabDecoder", 1, 0, 0, ("ids", "vocab_begins", "vocab_ends", "vocab_symbols", "skip_tokens"),
          infer_vocab_decoder, vocab_decoder, domain="extension", min_inputs=4, attrs=(Attr("skip_tokens", ""),)),
    OpDef("FuzeRagged", 1, 0, 0, ("row_begins", "row_ends", "begins", "ends"), infer_fuze_ragged, fuze_ragged,
          domain="extension"),
    OpDef("ByteFallback", 1, 0, 0, ("begins", "ends", "symbols"), infer_string_map, byte_fallback,
          domain="extension"),
    OpDef("UTF8Validate", 1, 0, 0, ("begins", "ends", "symbols"), infer_utf8_validate, utf8_validate,
          domain="extension", attrs=(Attr("replace_mode", "false"),)),
)
