"""The words of a query that carry meaning, cut as the index cuts them.

Search, passages, the scan's candidates, the librarian and the offline
extractor all ask which words of a text matter; they ask here, below them all.
"""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i if in into is it its of on or "
    "that the their this to was what when where which who why will with you your".split()
)
# What a contraction leaves once cut at its apostrophe ("isn't": "isn", "t"): pieces of common words, no names.
CONTRACTION_TAILS = frozenset(
    "s t d ll m re ve isn aren wasn weren doesn didn hasn haven hadn wouldn shouldn couldn mustn needn".split()
)
NUMBER = re.compile(r"\d+(?:st|nd|rd|th|s)?")  # a number, an ordinal or a decade: no name of a thing
WORD = re.compile(r"[^\W_]+", re.UNICODE)  # as FTS5's unicode61 cuts words: `_` separates


def query_terms(query: str) -> list[str]:
    """The words of a query that carry meaning (stopwords only when nothing else is left)."""
    words = [w.lower() for w in WORD.findall(query)]
    content = [w for w in words if w not in STOPWORDS]
    return list(dict.fromkeys(content or words))
