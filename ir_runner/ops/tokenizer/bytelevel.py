"""BytesToChars and CharsToBytes (openvino-tokenizers, ``extension`` opset): byte-level BPE's alphabet, which
writes every byte as a printable character (GPT-2's ``bytes_to_unicode``: the bytes ``!``..``~``, U+00A1..U+00AC
and U+00AE..U+00FF stand for themselves, the 68 others for U+0100.. in order). Written from
``bytes_to_chars.cpp`` and ``chars_to_bytes.cpp`` (2026.4):

- BytesToChars writes each byte of every word of a ragged string tensor as its character (UTF-8); words
  marked by skips are copied. Words outside every row keep empty ranges (openvino-tokenizers leaves them
  unwritten).
- CharsToBytes joins each row's words into one string of the bytes the characters stand for: a byte below
  0x80 is itself, a byte from 0x80 on starts a two-byte character U+0080..U+017F (lead bytes C2..C5) that
  gives its byte; a two-byte character that stands for no byte gives 0x00 (an unset entry of
  openvino-tokenizers' table), and another lead byte is refused (it reads outside its table there).
"""

from __future__ import annotations

import functools

import numpy as np

from ...errors import InputError
from ...types import TensorSpec
from ..api import OpContext, OpDef
from ._ragged import BOOL, expect, expect_ragged_string, i32, items, packed, ragged_string_specs, ranges, string_specs


@functools.cache
def byte_chars() -> tuple[bytes, ...]:
    """The UTF-8 of the character each byte is written as."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars = {b: b for b in printable}
    extra = 0x100
    for b in range(256):
        if b not in chars:
            chars[b] = extra
            extra += 1
    return tuple(chr(chars[b]).encode() for b in range(256))


@functools.cache
def char_bytes() -> dict[bytes, int]:
    """The byte each two-byte character of :func:`byte_chars` stands for."""
    return {char: b for b, char in enumerate(byte_chars()) if len(char) == 2}


def infer_bytes_to_chars(ctx: OpContext):
    if len(ctx.inputs) not in (5, 6):
        ctx.fail(f"takes 5 inputs (a ragged string tensor) or 6 (with skips), got {len(ctx.inputs)}")
    expect_ragged_string(ctx, 0)
    outputs = ragged_string_specs(ctx.inputs[0].shape)
    if len(ctx.inputs) == 6:
        expect(ctx, 5, BOOL, "the skips")
        outputs.append(TensorSpec(ctx.inputs[5].element_type, ctx.inputs[5].shape))
    return outputs, {}


def bytes_to_chars(*inputs: np.ndarray):
    """BytesToChars: every byte of every word as its byte-level character (see the module's docstring)."""
    row_begins, row_ends, begins, ends, symbols = inputs[:5]
    skips = inputs[5].ravel().tolist() if len(inputs) == 6 else None
    words = items(begins, ends, symbols)
    table = byte_chars()
    out = bytearray()
    new_begins = [0] * len(words)
    new_ends = [0] * len(words)
    for row_begin, row_end in ranges(row_begins, row_ends, begins.size, "row"):
        for i in range(row_begin, row_end):
            new_begins[i] = len(out)
            out += words[i] if skips is not None and skips[i] else b"".join(table[b] for b in words[i])
            new_ends[i] = len(out)
    result = (row_begins.copy(), row_ends.copy(), i32(new_begins).reshape(begins.shape),
              i32(new_ends).reshape(ends.shape), np.frombuffer(bytes(out), np.uint8).copy())
    return (*result, inputs[5].copy()) if skips is not None else result


def infer_chars_to_bytes(ctx: OpContext):
    if len(ctx.inputs) != 5:
        ctx.fail(f"takes 5 inputs (a ragged string tensor), got {len(ctx.inputs)}")
    expect_ragged_string(ctx, 0)
    return string_specs(ctx.inputs[0].shape), {}


def chars_to_bytes(row_begins: np.ndarray, row_ends: np.ndarray, begins: np.ndarray, ends: np.ndarray,
                   symbols: np.ndarray):
    """CharsToBytes: each row's words joined as the bytes their characters stand for."""
    words = items(begins, ends, symbols)
    table = char_bytes()
    rows = []
    for row_begin, row_end in ranges(row_begins, row_ends, begins.size, "row"):
        out = bytearray()
        for word in words[row_begin:row_end]:
            k = 0
            while k < len(word):
                if word[k] < 0x80:
                    out.append(word[k])
                    k += 1
                    continue
                if not 0xC2 <= word[k] <= 0xC5:
                    raise InputError(f"byte 0x{word[k]:02X} of the word {word!r} starts no byte-level character",
                                     hint="CharsToBytes reads the characters of a byte-level BPE vocabulary")
                out.append(table.get(word[k:k + 2], 0))
                k += 2
        rows.append(bytes(out))
    return packed(rows, row_begins.shape)


OPS = (
    OpDef("BytesToChars", 1, 0, 0, ("row_begins", "row_ends", "begins", "ends", "symbols", "skips"),
          infer_bytes_to_chars, bytes_to_chars, domain="extension", min_inputs=5),
    OpDef("CharsToBytes", 1, 0, 0, ("row_begins", "row_ends", "begins", "ends", "symbols"), infer_chars_to_bytes,
          chars_to_bytes, domain="extension"),
)
