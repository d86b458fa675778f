"""Combining ranked lists into one: the one place rankings are fused.

Two ways, for two kinds of input. Rankings whose scores mean something
(search's cosines and BM25) are fused on their scores: each list's scores
over its pool become z-scores (standard deviations from the pool's mean, so
cosines and BM25 share a scale) and are summed with per-list weights; a key
missing from a pool takes that pool's lowest z-score. Rankings whose scores
share no scale or mean little (the headline scan's word counts against
search) are fused by reciprocal rank: each list adds weight / (k + rank).
"""

from __future__ import annotations

from typing import Hashable, Iterable, TypeVar

K = TypeVar("K", bound=Hashable)


def z_scores(scores: dict[K, float]) -> dict[K, float]:
    """Each score in standard deviations from the mean of all of them (0 when all are equal)."""
    if not scores:
        return {}
    values = list(scores.values())
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {key: (score - mean) / spread if spread > 0 else 0.0 for key, score in scores.items()}


def weighted_z(parts: Iterable[tuple[float, dict[K, float]]]) -> dict[K, float]:
    """The weighted sum of each list's z-scores; a key absent from a list takes that list's lowest."""
    normalised = [(weight, z, min(z.values(), default=0.0)) for weight, z in
                  ((weight, z_scores(scores)) for weight, scores in parts)]
    keys = dict.fromkeys(key for _, z, _ in normalised for key in z)  # first list's keys first: ties keep that order
    return {key: sum(weight * z.get(key, lowest) for weight, z, lowest in normalised) for key in keys}


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
