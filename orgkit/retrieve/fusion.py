"""Combining ranked lists into one: the one place rankings are fused.

Every fusion here is by reciprocal rank: each list adds weight / (k + rank)
for each key it ranks. Ranks need no common scale and mean the same in a pool
of one as in a pool of fifty, so nothing breaks on a query that one note
answers alone. What differs per query is each list's weight (`Trust`): for
search, the probability that the ranking's top note answers the query, read
from the evidence for it: BM25's from how much of the query, weighted by
rarity, its top passage holds; dense's from how far its top cosine clears the
model's hit floor (floor.py). Each is a logistic curve fitted on the fitting
query sets (`python bench/fit_fusion.py`, figures in bench/README.md). Each of
BM25's notes weighs by the same curve read at its own passage's share of the
query (`note_weights`), so a note far down its list that holds a word or two
of a paraphrase does not pass the notes dense found for its rank alone. When
BM25's top note is not among dense's first few, the two disagree and at most
one of them is right, so each weighs by the chance that it is and the other
is not: a paraphrase whose
few shared words point BM25 at another note follows the dense ranking, and a
note holding the query's rare words is not buried by an unsure dense one.
The headline scan and search have fixed weights (candidates.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence, TypeVar

K = TypeVar("K", bound=Hashable)

LEAST_TRUST = 0.05  # a ranking with no evidence for it still breaks ties among the others
# P(the ranking's top note answers the query) = 1 / (1 + exp(-(intercept + slope x evidence)))
LEXICAL_FIT = (-2.77, 5.47)  # evidence: the idf-weighted share of the query BM25's top passage holds
DENSE_FIT = (-1.15, 3.46)  # evidence: the confidence of dense's top cosine (floor.Floors.confidence)


@dataclass(frozen=True, slots=True)
class Trust:
    """How far each of search's rankings is worth following for one query (0 to 1 each)."""

    lexical: float
    dense: float


def trust(coverage: float, confidence: float, agree: bool) -> Trust:
    """Both rankings' weights for one query: the probability each one's top note is right; when
    they disagree on it (not `agree`), the probability that it is right and the other wrong."""
    lexical, dense = _probability(LEXICAL_FIT, coverage), _probability(DENSE_FIT, confidence)
    if agree:
        return Trust(lexical, dense)
    return Trust(max(LEAST_TRUST, lexical * (1.0 - dense)), max(LEAST_TRUST, dense * (1.0 - lexical)))


def note_weights(coverages: Sequence[float], confidence: float, agree: bool) -> list[float]:
    """BM25's weight for each of its notes, in its order: the chance that the note is right, read from
    the share of the query its own passage holds as the top's is (`trust`). A note far down the
    list that holds little of the query weighs little, whatever its rank: on a paraphrase, BM25's
    notes holding a word or two each do not push the ones dense found past the first ten."""
    return [trust(coverage, confidence, agree).lexical for coverage in coverages]


def _probability(fit: tuple[float, float], evidence: float) -> float:
    """The fitted curve at `evidence`, held to the 0-1 range it was fitted on (no evidence: 0)."""
    intercept, slope = fit
    held = min(1.0, max(evidence, 0.0)) if math.isfinite(evidence) else 0.0
    return 1.0 / (1.0 + math.exp(-(intercept + slope * held)))


def reciprocal_rank(parts: Iterable[tuple[float | Sequence[float], list[K]]], k: float) -> dict[K, float]:
    """The weighted sum of weight / (k + rank) over the lists, one weight per list or one per key in the
    list's order (rank from 1; a key repeated counts at its first place)."""
    fused: dict[K, float] = {}
    for weight, keys in parts:
        weights = [weight] * len(keys) if isinstance(weight, (int, float)) else weight
        seen: set[K] = set()
        for rank, (key, each) in enumerate(zip(keys, weights), 1):
            if key not in seen:
                seen.add(key)
                fused[key] = fused.get(key, 0.0) + each / (k + rank)
    return fused
