"""How similar each unit is to each dimension's rubric: BM25 (search's own), or embeddings too.

Both rankers return, per dimension, one score per unit scaled to 0..1 within
the document, so the extractor's other signals (section headings, cue
phrases, position) weigh the same whichever ranker ran.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from ..retrieve.search import fts_match
from ..storage.terms import bm25_collection

EMBED_BATCH = 16
EMBED_CHARS = 600  # a unit's first characters say what it is about


def bm25_scores(units: Sequence[str], queries: Sequence[str]) -> list[list[float]]:
    """scores[q][u]: BM25 of unit u for query q, the units being the collection.

    The same ranker as search's: SQLite FTS5's bm25() over a table with the
    index's tokenizer (Porter stems, so "decided" meets "decide"), queried with
    any of the query's meaningful words; the table lives in memory for one call.
    """
    return [_scaled(row) for row in bm25_collection(units, [fts_match(query) for query in queries])]


def embedding_scores(embed: Callable[[list[str]], Iterable], units: Sequence[str],
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
