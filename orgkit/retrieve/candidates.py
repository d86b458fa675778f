"""Candidate notes for a question: the headline scan's and the search's, fused.

A question in plain words rarely has all its words in one headline, so the
scan here looks for any significant word and ranks headlines by how many of
the words they hold. The two ranked lists are fused by reciprocal rank with a
small k (the scan's word counts and search's scores share no scale; see
fusion.py), so a note that both find rises to the top. A candidate is
relevant when a ranker that judges relevance (search's floor) marked it so;
one only the scan found is not, when search judged: a headline sharing a
word with the query ("Pros and Cons", "References") is no evidence, and a note
that holds the query's words is one search finds. Without an index the scan
alone decides. The atomic-notes skill starts here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..embed import Embedder
from ..index.store import Index
from . import fusion
from .scan import scan
from .scope import Scope
from ..index.words import query_terms
from .search import VectorCache, search

RRF_K = 5  # small: the top of each list is trusted, deep ranks add little
SCAN_WEIGHT = 0.5  # a headline sharing a word with the query reorders search's hits, it does not lead them

# A ranked list of (id, title, file, line, level, olp) rows from one retriever.
Ranker = Callable[[Path, str, int], tuple[list[dict], list[str]]]


@dataclass(slots=True)
class Candidate:
    id: str
    title: str
    file: str
    line: int
    level: int
    olp: list[str]
    score: float = 0.0
    sources: list[str] = field(default_factory=list)
    relevant: bool = True  # False below search's relevance floor

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "file": self.file, "line": self.line,
                "level": self.level, "olp": self.olp, "score": round(self.score, 6),
                "sources": self.sources, "relevant": self.relevant}


@dataclass
class Candidates:
    candidates: list[Candidate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def scan_ranked(root: Path, query: str, limit: int) -> tuple[list[dict], list[str]]:
    """Headlines holding any of the query's words, most words first."""
    words = [w.lower() for w in query_terms(query)]
    if not words:
        return [], []

    def fewer_words_later(headline: str) -> int:
        text = headline.lower()
        return -sum(w in text for w in words)

    result = scan(root, "|".join(re.escape(w) for w in words), regex=True,
                  limit=limit * 3, rank=fewer_words_later)
    return [h.to_json() for h in result.hits if h.id], result.warnings


def fuse(ranked: dict[str, list[dict]], limit: int) -> list[Candidate]:
    """Reciprocal-rank fusion of several ranked lists, one entry per node ID, with its relevance.

    A row carrying `relevant` was judged by the floor; a candidate no judged
    row names is relevant only when no ranker judges.
    """
    judged = any("relevant" in row for rows in ranked.values() for row in rows)
    by_id: dict[str, Candidate] = {}
    verdicts: dict[str, bool] = {}
    for source, rows in ranked.items():
        for row in rows:
            if row["id"] not in by_id:
                by_id[row["id"]] = Candidate(id=row["id"], title=row["title"], file=row["file"], line=row["line"],
                                             level=row["level"], olp=list(row.get("olp") or []))
            if source not in by_id[row["id"]].sources:
                by_id[row["id"]].sources.append(source)
            if "relevant" in row:
                verdicts[row["id"]] = verdicts.get(row["id"], False) or row["relevant"]
    scores = fusion.reciprocal_rank(((SCAN_WEIGHT if source == "scan" else 1.0, [row["id"] for row in rows])
                                     for source, rows in ranked.items()), RRF_K)
    for node_id, cand in by_id.items():
        cand.score = scores[node_id]
        cand.relevant = verdicts.get(node_id, not judged)
    return sorted(by_id.values(), key=lambda c: -c.score)[:limit]


class SearchRanker:
    """Hybrid search over an index as a ranker (words only when there is no model); each row carries
    the search's `relevant`."""

    def __init__(self, index: Index, embedder: Embedder | None, cache: VectorCache | None = None,
                 scope: Scope | None = None) -> None:
        self.index, self.embedder, self.cache, self.scope = index, embedder, cache, scope

    def __call__(self, root: Path, query: str, limit: int) -> tuple[list[dict], list[str]]:
        found = search(self.index, query, limit=limit * 2, embedder=self.embedder, cache=self.cache, scope=self.scope)
        # rows are named by `id`: a unit's is its locator (org/units.py)
        return [h.to_json() | {"id": h.id} for h in found.hits], found.warnings


def search_ranker(index: Index, embedder: Embedder | None, cache: VectorCache | None = None,
                  scope: Scope | None = None) -> SearchRanker:
    return SearchRanker(index, embedder, cache, scope)


def default_rankers(root: Path, state_dir: Path | None = None) -> dict[str, Ranker]:
    """The scan, plus the search when the notes have an index."""
    from ..config import load

    config = load(root)
    index = Index.of(config, state_dir)
    if not index.exists():
        return {"scan": scan_ranked}
    return {"search": search_ranker(index, Embedder.from_config(config)), "scan": scan_ranked}


def find_candidates(root: Path, query: str, *, limit: int = 10,
                    rankers: dict[str, Ranker] | None = None) -> Candidates:
    """The best `limit` candidate notes for `query`, from every ranker."""
    out = Candidates()
    ranked: dict[str, list[dict]] = {}
    for name, ranker in (rankers or default_rankers(root)).items():
        rows, warnings = ranker(root, query, limit)
        ranked[name] = rows
        out.warnings.extend(warnings)
    out.candidates = fuse(ranked, limit)
    return out
