"""How similar each unit is to each dimension's rubric: BM25, or embeddings when a model loads.

Both rankers return, per dimension, one score per unit scaled to 0..1 within
the document, so the extractor's other signals (section headings, cue
phrases, position) weigh the same whichever ranker ran.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Callable, Sequence

EMBED_BATCH = 16
EMBED_CHARS = 600  # a unit's first characters say what it is about
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP = frozenset("""a an and are as at be been but by for from has have in into is it its of on or
that the their them then there these they this to was were which with will would can could our we
you your not no so such than also may might should must shall do does did what when where who how""".split())


def words(text: str) -> list[str]:
    """Lower-case content words, a light suffix strip so "decided" meets "decision"."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in _STOP or len(w) < 2:
            continue
        for suffix in ("ations", "ation", "ings", "ing", "ions", "ion", "ed", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 4:
                w = w[: -len(suffix)]
                break
        out.append(w)
    return out


def bm25_scores(units: Sequence[str], queries: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[list[float]]:
    """scores[q][u]: BM25 of unit u for query q, the units being the collection."""
    docs = [Counter(words(u)) for u in units]
    n = len(docs) or 1
    avg = sum(sum(d.values()) for d in docs) / n or 1.0
    df = Counter(w for d in docs for w in d)
    out = []
    for query in queries:
        terms = set(words(query))
        row = []
        for d in docs:
            length = sum(d.values())
            s = 0.0
            for t in terms:
                f = d.get(t, 0)
                if f:
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avg))
            row.append(s)
        out.append(_scaled(row))
    return out


def embedding_scores(embed: Callable[[list[str]], "object"], units: Sequence[str],
                     queries: Sequence[str]) -> list[list[float]]:
    """scores[q][u]: cosine of unit and rubric embeddings, scaled within the document."""
    import numpy as np

    texts = list(queries) + [u[:EMBED_CHARS] for u in units]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad little
    rows: list = [None] * len(texts)
    for first in range(0, len(order), EMBED_BATCH):
        batch = order[first:first + EMBED_BATCH]
        for i, vector in zip(batch, embed([texts[i] for i in batch])):
            rows[i] = vector
    matrix = np.vstack(rows)
    q, u = matrix[: len(queries)], matrix[len(queries):]
    sims = q @ u.T
    return [_scaled([float(x) for x in row]) for row in sims]


def _scaled(row: list[float]) -> list[float]:
    lo, hi = (min(row), max(row)) if row else (0.0, 0.0)
    if hi - lo < 1e-9:
        return [0.0 for _ in row]
    return [(x - lo) / (hi - lo) for x in row]
