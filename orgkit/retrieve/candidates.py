"""Candidate notes for a question: the headline scan's and the search's, fused.

A question in plain words rarely has all its words in one headline, so the
scan here looks for any significant word and ranks headlines by how many of
the words they hold. Ranked lists are fused by reciprocal rank (k = 60), so a
note that several lists find rises to the top.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .scan import ScanHit, scan

RRF_K = 60
_STOPWORDS = frozenset("""
a an and are as at be by can do does for from how i in is it of on or so that the this
to was what when where which who why will with you your my me we our about into
""".split())

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

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "file": self.file, "line": self.line,
                "level": self.level, "olp": self.olp, "score": round(self.score, 6),
                "sources": self.sources}


@dataclass
class Candidates:
    candidates: list[Candidate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def significant_words(query: str) -> list[str]:
    words = re.findall(r"\w+", query.lower())
    kept = [w for w in words if len(w) > 2 and w not in _STOPWORDS]
    return list(dict.fromkeys(kept or words))


def scan_ranked(root: Path, query: str, limit: int) -> tuple[list[dict], list[str]]:
    """Headlines holding any of the query's words, most words first."""
    words = significant_words(query)
    if not words:
        return [], []
    result = scan(root, "|".join(re.escape(w) for w in words), regex=True)
    def matched(hit: ScanHit) -> int:
        text = hit.title.lower()
        return sum(w in text for w in words)
    hits = sorted((h for h in result.hits if h.id), key=lambda h: (-matched(h), h.level, h.file, h.line))
    return [h.to_json() for h in hits[: limit * 3]], result.warnings


def fuse(ranked: dict[str, list[dict]], limit: int) -> list[Candidate]:
    """Reciprocal-rank fusion of several ranked lists, one entry per node ID."""
    by_id: dict[str, Candidate] = {}
    for source, rows in ranked.items():
        seen: set[str] = set()
        for rank, row in enumerate(rows):
            if row["id"] in seen:
                continue
            seen.add(row["id"])
            cand = by_id.get(row["id"])
            if cand is None:
                cand = by_id[row["id"]] = Candidate(
                    id=row["id"], title=row["title"], file=row["file"], line=row["line"],
                    level=row["level"], olp=list(row.get("olp") or []))
            cand.score += 1.0 / (RRF_K + rank + 1)
            cand.sources.append(source)
    return sorted(by_id.values(), key=lambda c: -c.score)[:limit]


def find_candidates(root: Path, query: str, *, limit: int = 10,
                    rankers: dict[str, Ranker] | None = None) -> Candidates:
    """The best `limit` candidate notes for `query`, from every ranker."""
    out = Candidates()
    ranked: dict[str, list[dict]] = {}
    for name, ranker in (rankers or {"scan": scan_ranked}).items():
        rows, warnings = ranker(root, query, limit)
        ranked[name] = rows
        out.warnings.extend(warnings)
    out.candidates = fuse(ranked, limit)
    return out
