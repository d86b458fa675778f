"""Search by meaning and by words over the index, ranked per node.

Dense: one matrix product of the query vector with every passage vector, the
top rows by argpartition, each node ranked by its best passage. Lexical: FTS5
BM25 over passages, matches in the outline path weighted up. Hybrid: the two
node rankings fused by reciprocal rank, which needs no score calibration
between them. Measured on bench/retrieval_dev.json (see bench/README.md), the
textbook fusion (k = 60, equal weights) ranked worse than dense alone: BM25 is
the weaker ranking here and deep ranks add noise. A small k, which trusts the
top of each ranking, and half weight for the lexical ranking beat both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..embed import Embedder, ModelUnavailable
from ..errors import OrgkitError
from ..index.outlines import headings
from ..index.store import Index
from ..index.vectors import VectorSet, load_vectors

if TYPE_CHECKING:
    import sqlite3

MODES = ("hybrid", "dense", "lexical")
RRF_K = 5
LEXICAL_WEIGHT = 0.5  # against the dense ranking's 1.0 in hybrid fusion
HEADING_WEIGHT = 3.0  # BM25 weight of the outline path against the passage's 1.0
POOL = 50  # nodes each ranking contributes to the fusion
SNIPPET_CHARS = 240
_STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i if in into is it its of on or "
    "that the their this to was what when where which who why will with you your".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(slots=True)
class SearchHit:
    id: str
    title: str
    file: str
    line: int
    level: int
    score: float
    snippet: str
    chunk: int = field(default=0, repr=False)  # the best passage's row, for callers that read on

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "file": self.file, "line": self.line,
                "level": self.level, "score": round(self.score, 6), "snippet": self.snippet}


@dataclass
class SearchResult:
    hits: list[SearchHit] = field(default_factory=list)
    mode: str = "hybrid"
    warnings: list[str] = field(default_factory=list)


@dataclass
class VectorCache:
    """Vectors kept in memory between queries (the server), reloaded when the index changes."""

    fingerprint: str | None = None
    vectors: VectorSet | None = None

    def get(self, index: Index, fingerprint: str, conn: "sqlite3.Connection") -> VectorSet:
        current = self.vectors
        if current is None or fingerprint != self.fingerprint or current.generation != index.generation(conn):
            import numpy as np

            loaded = load_vectors(index, fingerprint, conn)
            loaded.matrix = np.ascontiguousarray(loaded.matrix)
            self.fingerprint, self.vectors = fingerprint, loaded
        return self.vectors  # type: ignore[return-value]


# (node row, passage row, score), best first, one entry per node
Ranking = list[tuple[int, int, float]]


def search(
    index: Index,
    query: str,
    *,
    mode: str = "hybrid",
    limit: int = 10,
    embedder: Embedder | None = None,
    cache: VectorCache | None = None,
) -> SearchResult:
    """The `limit` best nodes for `query`; without a usable model, lexical ranking."""
    if mode not in MODES:
        raise OrgkitError(f"unknown search mode {mode!r} (choose from {', '.join(MODES)})")
    if not query.strip():
        raise OrgkitError("empty query: give at least one word to search for")
    result = SearchResult(mode=mode)
    query_vector = None
    if mode != "lexical":
        try:
            if embedder is None:
                raise ModelUnavailable("no embedding model configured")
            query_vector = embedder.embed_query(query)
        except ModelUnavailable as exc:
            result.warnings.append(f"{exc}; ranking by words only")
            result.mode = "lexical"
    pool = max(limit, POOL)
    with index.snapshot() as conn:
        rankings: list[Ranking] = []
        weights: list[float] = []
        if result.mode != "dense":
            rankings.append(lexical_ranking(conn, query, pool))
            weights.append(LEXICAL_WEIGHT)
        if query_vector is not None:
            vectors = (cache or VectorCache()).get(index, embedder.fingerprint, conn)  # type: ignore[union-attr]
            if len(vectors.chunks) == 0:
                result.warnings.append("no passage has a vector yet; run `orgkit index`")
            rankings.append(dense_ranking(vectors, query_vector, pool))
            weights.append(1.0)
        fused = rankings[0] if len(rankings) == 1 else fuse(rankings, weights)
        result.hits = _hits(conn, index, fused, query, limit)
    return result


def query_terms(query: str) -> list[str]:
    """The words of a query that carry meaning (stopwords only when nothing else is left)."""
    words = [w.lower() for w in _WORD.findall(query)]
    content = [w for w in words if w not in _STOPWORDS]
    return list(dict.fromkeys(content or words))


def lexical_ranking(conn: "sqlite3.Connection", query: str, pool: int) -> Ranking:
    """Nodes by their best passage's BM25 (any query word may match)."""
    terms = query_terms(query)
    if not terms:
        return []
    match = " OR ".join('"{}"'.format(t.replace('"', '""')) for t in terms)
    rows = conn.execute(
        f"""SELECT c.node, c.rowid, -bm25(chunks_fts, {HEADING_WEIGHT}, 1.0) AS score
            FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid
            WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?""",
        (match, pool * 8),
    ).fetchall()
    return _best_per_node(rows, pool)


def dense_ranking(vectors: VectorSet, query_vector, pool: int) -> Ranking:
    """Nodes by their best passage's cosine similarity: one product, one partial sort."""
    import numpy as np

    total = len(vectors.chunks)
    if total == 0:
        return []
    scores = vectors.matrix @ query_vector.astype(np.float32)
    take = min(total, pool * 8)
    while True:
        top = np.argpartition(scores, total - take)[total - take:] if take < total else np.arange(total)
        top = top[np.argsort(-scores[top], kind="stable")]
        ranking = _best_per_node(
            zip(vectors.nodes[top].tolist(), vectors.chunks[top].tolist(), scores[top].tolist()), pool)
        if len(ranking) >= pool or take >= total:
            return ranking
        take = min(total, take * 4)


def _best_per_node(rows, pool: int) -> Ranking:
    seen: set[int] = set()
    out: Ranking = []
    for node, chunk, score in rows:
        if node not in seen:
            seen.add(node)
            out.append((node, chunk, float(score)))
            if len(out) >= pool:
                break
    return out


def fuse(rankings: list[Ranking], weights: list[float]) -> Ranking:
    """Weighted reciprocal-rank fusion; a node keeps the passage of the ranking that liked it most."""
    scores: dict[int, float] = {}
    best: dict[int, tuple[int, int]] = {}  # node -> (rank, passage)
    for ranking, weight in zip(rankings, weights):
        for rank, (node, chunk, _) in enumerate(ranking, 1):
            scores[node] = scores.get(node, 0.0) + weight / (RRF_K + rank)
            if node not in best or rank < best[node][0]:
                best[node] = (rank, chunk)
    order = sorted(scores, key=lambda n: (-scores[n], best[n][0]))
    return [(n, best[n][1], scores[n]) for n in order]


def _hits(conn: "sqlite3.Connection", index: Index, ranking: Ranking, query: str, limit: int) -> list[SearchHit]:
    """Ranked nodes as hits; a node ID held by two files counts once."""
    nodes = index.nodes_by_rowid([n for n, _, _ in ranking[: limit * 2]])
    passages = _passages(conn, [c for _, c, _ in ranking[: limit * 2]])
    terms = query_terms(query)
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for node_row, chunk, score in ranking:
        node = nodes.get(node_row)
        if node is None or node["id"] in seen:
            continue
        seen.add(node["id"])
        heading, body = passages.get(chunk, ("", ""))
        hits.append(SearchHit(id=node["id"], title=node["title"], file=node["file"], line=node["line"],
                              level=node["level"], score=score, snippet=snippet(body or heading, terms),
                              chunk=chunk))
        if len(hits) >= limit:
            break
    return hits


def _passages(conn: "sqlite3.Connection", rowids: list[int]) -> dict[int, tuple[str, str]]:
    """(heading, body) of passages by row."""
    if not rowids:
        return {}
    rows = conn.execute(
        f"SELECT c.rowid, f.title, c.outline, c.body FROM chunks c JOIN files f ON f.path = c.file "
        f"WHERE c.rowid IN ({','.join('?' * len(rowids))})", rowids).fetchall()
    paths = headings(conn, [(title, outline) for _, title, outline, _ in rows])
    return {r[0]: (heading, r[3]) for r, heading in zip(rows, paths)}


def snippet(text: str, terms: list[str]) -> str:
    """A window of the passage around the query words it contains, on one line."""
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    lowered = flat.lower()
    found = [p for p in (lowered.find(t[:5]) for t in terms) if p >= 0]
    start = max(0, min(found) - SNIPPET_CHARS // 4) if found else 0
    if start:
        space = flat.rfind(" ", 0, start)
        start = space + 1 if space >= 0 else start
    end = min(len(flat), start + SNIPPET_CHARS)
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > start else end
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
