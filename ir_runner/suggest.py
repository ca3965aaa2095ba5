"""The closest name, for "did you mean" hints: case-insensitive (``X`` finds ``x``), then difflib's ratio."""

from __future__ import annotations

from collections.abc import Iterable


def closest(name: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate ``name`` most likely meant: one equal to it but for case, else the most similar one
    (compared in lower case) whose similarity is at least ``cutoff``; None when there is none."""
    import difflib  # only for error messages

    folded: dict[str, str] = {}
    for candidate in candidates:
        folded.setdefault(candidate.casefold(), candidate)
    key = str(name).casefold()
    if key in folded:
        return folded[key]
    close = difflib.get_close_matches(key, list(folded), n=1, cutoff=cutoff)
    return folded[close[0]] if close else None
