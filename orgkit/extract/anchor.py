"""Finding a quote in its source: exactly, else after folding, mapped back to the original.

Models (and people) copy quotes with re-flowed whitespace and straight quotes
where the source has hard-wrapped lines and typographic ones. The folded
search collapses every whitespace run to one space and maps typographic
quotes to straight ones on both sides, then maps the match back to offsets
in the original text, so `text[start:end]` is always the source's own span.
A last try also ignores markdown's emphasis and code marks (`*`, `_`, `` ` ``),
which models tend to drop when they copy. Offsets are 0-based characters of
the decoded text, end exclusive.
"""

from __future__ import annotations

_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'",
                         "“": '"', "”": '"', "„": '"', "‟": '"', "″": '"'})


_MARKS = frozenset("*_`")


def fold(text: str, marks: bool = False) -> tuple[str, list[int]]:
    """The folded text and, for each of its characters, the index in `text` it came from.

    With `marks`, markdown emphasis and code marks are left out too.
    """
    out: list[str] = []
    where: list[int] = []
    in_space = False
    for i, ch in enumerate(text):
        if marks and ch in _MARKS:
            continue
        if ch.isspace():
            if not in_space:
                out.append(" ")
                where.append(i)
            in_space = True
            continue
        in_space = False
        out.append(ch.translate(_QUOTES))
        where.append(i)
    return "".join(out), where


def find_quote(text: str, quote: str, near: int | None = None) -> tuple[int, int] | None:
    """(start, end) of `quote` in `text`, the occurrence nearest `near` when given; None if absent."""
    quote = quote.strip()
    if not quote:
        return None
    exact = _occurrences(text, quote)
    if exact:
        start = _nearest(exact, near)
        return start, start + len(quote)
    for marks in (False, True):
        folded, where = fold(text, marks)
        needle, _ = fold(quote, marks)
        needle = needle.strip()
        hits = _occurrences(folded, needle) if needle else []
        if hits:
            hit = _nearest(hits, near, key=lambda h: where[h])
            return where[hit], where[hit + len(needle) - 1] + 1
    return None


def _occurrences(haystack: str, needle: str) -> list[int]:
    found, i = [], haystack.find(needle)
    while i >= 0:
        found.append(i)
        i = haystack.find(needle, i + 1)
    return found


def _nearest(hits: list[int], near: int | None, key=lambda h: h) -> int:
    if near is None:
        return hits[0]
    return min(hits, key=lambda h: abs(key(h) - near))
