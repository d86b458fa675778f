"""Combining ranked lists into one: the one place rankings are fused.

Every fusion here is by reciprocal rank: each list adds weight / (k + rank)
for each key it ranks. Ranks need no common scale and mean the same in a pool
of one as in a pool of fifty, so nothing breaks on a query that one note
answers alone. What differs per query is each list's weight: how far the
evidence says it is worth following (`Trust`). Search weighs its dense
ranking by how far its top cosine clears the model's hit floor (floor.py) and
its word ranking by how much of the query, weighted by rarity, its top passage
holds, less when a confident dense ranking puts another note on top; the
headline scan and search have fixed weights (candidates.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Iterable, TypeVar

K = TypeVar("K", bound=Hashable)

LEAST_TRUST = 0.05  # a ranking with no evidence for it still breaks ties among the others


@dataclass(frozen=True, slots=True)
class Trust:
    """How far each of search's rankings is worth following for one query (0 to 1 each)."""

    lexical: float
    dense: float


def trust(coverage: float, rarity: float, confidence: float, agree: bool) -> Trust:
    """Both rankings' weights for one query: BM25's from what its top passage holds of the query
    (`lexical_trust`), dense's from its confidence (`dense_trust`). When BM25's top node is not
    near the top of a confident dense ranking, the two disagree and the dense one's confidence
    is evidence against the words: a paraphrase shares a few words with some other note."""
    dense = dense_trust(confidence)
    lexical = lexical_trust(coverage, rarity)
    return Trust(lexical if agree else max(LEAST_TRUST, lexical * (1.0 - dense)), dense)


def lexical_trust(coverage: float, rarity: float) -> float:
    """BM25's weight: the idf-weighted share of the query its top passage holds, times the square
    root of the rarity of the rarest word it holds (its idf against that of a word one passage holds).

    A passage holding every rare word of the query is strong evidence; one
    holding only its common words, or words every note has, is little.
    """
    return max(LEAST_TRUST, min(1.0, coverage) * min(1.0, max(rarity, 0.0)) ** 0.5)


def dense_trust(confidence: float) -> float:
    """The dense ranking's weight from how confidently its top cosine clears the corpus's floor (0 to 1)."""
    return max(LEAST_TRUST, min(1.0, confidence))


def reciprocal_rank(parts: Iterable[tuple[float, list[K]]], k: float) -> dict[K, float]:
    """The weighted sum of 1 / (k + rank) over the lists (rank from 1; a key repeated counts at its first place)."""
    fused: dict[K, float] = {}
    for weight, keys in parts:
        seen: set[K] = set()
        for rank, key in enumerate(keys, 1):
            if key not in seen:
                seen.add(key)
                fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused
