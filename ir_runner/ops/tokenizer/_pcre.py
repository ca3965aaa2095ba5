"""PCRE2 patterns (as openvino-tokenizers compiles them: ``PCRE2_UTF | PCRE2_UCP``) run by the ``regex`` package.

openvino-tokenizers matches UTF-8 bytes and reports byte offsets; here a pattern runs on the ``str`` of the
bytes and offsets are mapped back to bytes. :func:`translate` rewrites the PCRE2 syntax that ``regex`` reads
otherwise (``\\x{H..}``, ``\\Q..\\E``, ``\\z``, ``\\Z``; ``\\s``, ``\\w``, ``\\b`` and scripts as UCP defines them);
docs/tokenizers.md lists what remains different.
A subject that is not valid UTF-8 never matches (PCRE2 refuses it: ``PCRE2_ERROR_UTF8_*``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...errors import InputError

if TYPE_CHECKING:
    import regex

# PCRE2's \s under UCP: \p{Z}, \h and \v (U+0009..U+000D, U+0085, U+180E besides the separators)
_SPACE = r"\p{Z}\t\n\x0b\f\r\x85\u180e"
# PCRE2's \h and \v (horizontal and vertical white space)
_HORIZONTAL = r"\t \xa0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000"
_VERTICAL = r"\n\x0b\f\r\x85\u2028\u2029"
# PCRE2's \w under UCP (10.43 on): letters, numbers, the underscore, non-spacing marks, connector punctuation
_WORD = r"\p{L}\p{N}_\p{Mn}\p{Pc}"
# PCRE2's own properties: alphanumeric, space (two spellings), word
_SPECIAL_PROPERTIES = {"Xan": r"\p{L}\p{N}", "Xsp": _SPACE, "Xps": _SPACE, "Xwd": _WORD}


@functools.lru_cache(maxsize=64)
def _property(name: str) -> str:
    r"""A ``\p{..}`` name as PCRE2 reads it: a script matches its Script_Extensions (``\p{Han}`` takes U+00B7
    too), in ``regex`` ``scx=``; categories and other properties stay."""
    import regex

    if "=" in name or ":" in name or name.startswith("^"):
        return name
    try:
        regex.compile(f"\\p{{scx={name}}}")
    except regex.error:
        return name
    return f"scx={name}"


def translate(pattern: str) -> str:
    """``pattern`` (PCRE2 syntax) in the syntax of the ``regex`` package (its V0 mode)."""
    import regex

    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e == "x" and pattern.startswith("{", i + 2):
                close = pattern.find("}", i + 3)
                if close > 0:
                    out.append(f"\\U{int(pattern[i + 3:close] or '0', 16):08X}")
                    i = close + 1
                    continue
            if e == "Q":  # \Q...\E: literal text
                close = pattern.find("\\E", i + 2)
                close = len(pattern) if close < 0 else close
                out.append(regex.escape(pattern[i + 2:close]))
                i = close + 2
                continue
            if e in "pP" and pattern.startswith("{", i + 2) and "}" in pattern[i + 3:]:
                close = pattern.index("}", i + 3)
                members = _SPECIAL_PROPERTIES.get(pattern[i + 3:close])
                if members is None:
                    out.append(f"\\{e}{{{_property(pattern[i + 3:close])}}}")
                elif e == "p":
                    out.append(members if in_class else f"[{members}]")
                else:  # (a negated special property inside a class: left for regex to refuse)
                    out.append(pattern[i:close + 1] if in_class else f"[^{members}]")
                i = close + 1
                continue
            if e == "k" and i + 2 < len(pattern) and pattern[i + 2] in "<{'":  # \k<name>: a named back reference
                close = pattern.find({"<": ">", "{": "}", "'": "'"}[pattern[i + 2]], i + 3)
                if close > 0:
                    out.append(f"(?P={pattern[i + 3:close]})")
                    i = close + 1
                    continue
            if e == "o" and pattern.startswith("{", i + 2) and "}" in pattern[i + 3:]:
                close = pattern.index("}", i + 3)
                out.append(f"\\U{int(pattern[i + 3:close] or '0', 8):08X}")
                i = close + 1
                continue
            if e == "c" and i + 2 < len(pattern):  # \cX: a control character
                out.append(f"\\x{ord(pattern[i + 2].upper()) ^ 0x40:02x}")
                i += 3
                continue
            if e == "N" and pattern.startswith("{U+", i + 2) and "}" in pattern[i + 5:]:  # \N{U+hh}: a code point
                close = pattern.index("}", i + 5)
                out.append(f"\\U{int(pattern[i + 5:close] or '0', 16):08X}")
                i = close + 1
                continue
            if e == "N" and not in_class:  # any character but a newline (\N{2}: a quantifier)
                out.append(r"[^\n]")
                i += 2
                continue
            replacement = {"z": r"\Z", "Z": r"(?=\n?\Z)", "s": _SPACE if in_class else f"[{_SPACE}]",
                           "S": None if in_class else f"[^{_SPACE}]", "w": _WORD if in_class else f"[{_WORD}]",
                           "W": None if in_class else f"[^{_WORD}]",
                           "b": None if in_class else f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
                           "B": None if in_class else f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
                           "h": _HORIZONTAL if in_class else f"[{_HORIZONTAL}]",
                           "H": None if in_class else f"[^{_HORIZONTAL}]",
                           "v": _VERTICAL if in_class else f"[{_VERTICAL}]",
                           "V": None if in_class else f"[^{_VERTICAL}]", "e": r"\x1b",
                           }.get(e)
            out.append(replacement if replacement is not None else pattern[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):  # a leading ] is a member
                out.append("\\]")
                i += 1
            continue
        if c == "[" and in_class and pattern.startswith("[:", i):  # POSIX class [:alpha:]
            close = pattern.find(":]", i + 2)
            if close > 0:
                out.append(pattern[i:close + 2])
                i = close + 2
                continue
        if c == "[" and in_class:
            out.append("\\[")  # a literal [ inside a class (regex would read a nested set)
            i += 1
            continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def compiled(pattern: bytes) -> regex.Pattern:
    """The compiled ``regex`` of a PCRE2 pattern given as UTF-8 bytes; InputError when it does not compile."""
    import regex

    try:
        text = pattern.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"the pattern {pattern!r} is not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    try:
        return regex.compile(translate(text), regex.V0)
    except (regex.error, ValueError, OverflowError) as exc:
        raise InputError(f"the pattern {text!r} does not compile: {exc}") from exc


class Subject:
    """A string's bytes and text, mapping character offsets to byte offsets (None: not valid UTF-8)."""

    __slots__ = ("raw", "text", "_offsets")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        try:
            self.text: str | None = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.text = None
        self._offsets: list[int] | None = None

    def byte(self, index: int) -> int:
        """The byte offset of character offset ``index``."""
        assert self.text is not None
        if len(self.text) == len(self.raw):
            return index
        if self._offsets is None:
            offsets = [0]
            for ch in self.text:
                offsets.append(offsets[-1] + len(ch.encode("utf-8", "surrogatepass")))
            self._offsets = offsets
        return self._offsets[index]


def matches(pattern: regex.Pattern, subject: Subject) -> Iterator[tuple[regex.Match, int, int]]:
    """The successive matches of ``pattern`` in ``subject`` with their byte offsets, each searched from the
    end of the one before (pcre2_match with a start offset: lookbehinds see the text before it), up to the
    first empty match (openvino-tokenizers stops there)."""
    if subject.text is None:
        return
    start = 0
    while True:
        match = pattern.search(subject.text, start)
        if match is None or match.start() == match.end():
            return
        yield match, subject.byte(match.start()), subject.byte(match.end())
        start = match.end()


def substitute(pattern: regex.Pattern, replacement: str, raw: bytes, global_replace: bool) -> bytes:
    """``raw`` with the matches of ``pattern`` replaced as pcre2_substitute does (``$n``, ``${n}``, ``$$``;
    every match with ``global_replace``, else the first). A reference to an unset or unknown group makes
    pcre2_substitute fail, and openvino-tokenizers then keeps the string unchanged. The subject is not checked
    (``PCRE2_NO_UTF_CHECK``): bytes that are not UTF-8 are kept as lone surrogates, matched by nothing but
    ``.``, negated classes and the like, and written back as they were."""
    import regex

    text = raw.decode("utf-8", "surrogateescape")
    parts = _replacement_parts(replacement)
    if parts is None:
        return raw
    failed = False

    def expand(match: regex.Match) -> str:
        nonlocal failed
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
                continue
            try:
                value = match.group(part)
            except (IndexError, regex.error):
                value = None
            if value is None:
                failed = True
                return ""
            out.append(value)
        return "".join(out)

    result = pattern.sub(expand, text, count=0 if global_replace else 1)
    return raw if failed else result.encode("utf-8", "surrogateescape")


@functools.lru_cache(maxsize=256)
def _replacement_parts(replacement: str) -> tuple | None:
    """The literal texts and group references (int or name) of a PCRE2 replacement; None when invalid."""
    import regex

    parts: list[str | int] = []
    literal = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c != "$":
            literal.append(c)
            i += 1
            continue
        rest = replacement[i + 1:]
        if rest.startswith("$"):
            literal.append("$")
            i += 2
            continue
        match = regex.match(r"\{(\w+)\}|(\d+)|([A-Za-z_]\w*)", rest)
        if match is None:
            return None
        name = next(g for g in match.groups() if g is not None)
        parts.extend(["".join(literal)] if literal else [])
        literal = []
        parts.append(int(name) if name.isdigit() else name)
        i += 1 + match.end()
    if literal:
        parts.append("".join(literal))
    return tuple(parts)
