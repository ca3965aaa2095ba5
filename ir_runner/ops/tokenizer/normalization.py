"""CharsMapNormalization (openvino-tokenizers, ``extension`` opset) with a named normalization form: Unicode
normalization of each string, by the standard library's ``unicodedata``.

openvino-tokenizers applies a SentencePiece character map built from ICU's tables (``normalization_form``
nfc, nfd, nfkc or nfkd, with ``case_fold`` merging Unicode's simple case folding). Measured over every code
point U+0001..U+10FFFF (surrogates aside) with openvino-tokenizers 2026.4.1 and Python 3.11's Unicode 14.0:
``normalize(form, fold(normalize(form, c)))``, ``fold`` the simple (one code point) case folding, gives the
same string for every single code point, for nfkc and for nfd with case folding. On longer strings the map
works character by character with longest matches, where full normalization also reorders combining marks
(``a`` U+0301 U+0323 stays unreordered there): docs/tokenizers.md lists the measured differences.
The strings marked by skips pass unchanged. The other SentencePiece options (extra whitespace removal, a
dummy prefix, escaped whitespace) and precompiled maps given as an input are refused.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from ...types import TensorSpec
from ..api import Attr, OpContext, OpDef
from .ragged import BOOL, expect, expect_string, items, packed, string_specs

_FORMS = {"nfc": "NFC", "nfd": "NFD", "nfkc": "NFKC", "nfkd": "NFKD"}


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


def normalized(text: str, form: str, case_fold: bool) -> str:
    """``text`` in Unicode normalization ``form`` (NFC...), simply case folded and normalized again."""
    text = unicodedata.normalize(form, text)
    return unicodedata.normalize(form, simple_fold(text)) if case_fold else text


def infer_charsmap(ctx: OpContext):
    count = len(ctx.inputs)
    if count not in (3, 4, 5):
        ctx.fail(f"takes 3 to 5 inputs (a string tensor, skips, a character map), got {count}")
    expect_string(ctx, 0)
    form = ctx.attr("normalization_form") or ""
    if form.lower() not in _FORMS:
        ctx.fail(f"normalization_form '{form}' is not one ir-run implements (nfc, nfd, nfkc, nfkd)",
                 hint="a precompiled SentencePiece character map (an input) is not implemented")
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
    return outputs, {"form": _FORMS[form.lower()], "case_fold": ctx.attr_bool("case_fold", False)}


def charsmap_normalization(*inputs: np.ndarray, form: str, case_fold: bool):
    """CharsMapNormalization: each string normalized (see the module's docstring)."""
    begins, ends, symbols = inputs[:3]
    skips = inputs[3].ravel().tolist() if len(inputs) > 3 else None
    out = []
    for i, raw in enumerate(items(begins, ends, symbols)):
        if skips is not None and skips[i]:
            out.append(raw)
            continue
        text = raw.decode("utf-8", "surrogateescape")
        out.append(normalized(text, form, case_fold).encode("utf-8", "surrogateescape"))
    result = packed(out, begins.shape)
    return (*result, inputs[3].copy()) if skips is not None else result


OPS = (
    OpDef("CharsMapNormalization", 1, 0, 0, ("begins", "ends", "symbols", "skips", "charsmap"), infer_charsmap,
          charsmap_normalization, domain="extension", min_inputs=3,
          attrs=(Attr("add_dummy_prefix", "false"), Attr("remove_extra_whitespaces", "true"),
                 Attr("escape_whitespaces", "false"), Attr("normalization_form", ""), Attr("case_fold", "false"),
                 Attr("nmt", "false"))),
)
