"""Search by meaning and by words over the index, ranked per node.

Dense: one matrix product of the query vector with every passage vector, the
top rows by argpartition, each node ranked by its best passage. Lexical: FTS5
BM25 over passages, matches in the outline path weighted up. Hybrid: each
ranking's scores over its pool turned into z-scores (so cosines and BM25 are
on one scale), summed with the dense ranking weighted 0.8 and BM25 0.2; a node
that BM25 ranks near the top and whose title is the query's words exactly
comes first. Chosen on the tuning half of bench/retrieval_dev.json and checked
on its held-out half (bench/README.md), it beat reciprocal-rank fusion, which
keeps only ranks: a clear dense winner and a marginal one count the same there.
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
from .scope import Scope, scoped

if TYPE_CHECKING:
    import sqlite3

MODES = ("hybrid", "dense", "lexical")
DENSE_WEIGHT = 0.8  # against BM25's 0.2, on z-scores, in hybrid fusion
TITLE_WINDOW = 3  # BM25's top hits looked at for a title that is the query
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
    mode: str = "hybrid"  # the ranking that found it: hybrid, dense or lexical

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "file": self.file, "line": self.line,
                "level": self.level, "score": round(self.score, 6), "snippet": self.snippet,
                "mode": self.mode}


@dataclass
class SearchResult:
    """Hits, the mode that ranked them, and why it is not the mode asked for (if it is not)."""

    hits: list[SearchHit] = field(default_factory=list)
    mode: str = "hybrid"
    reason: str | None = None
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
    scope: Scope | None = None,
) -> SearchResult:
    """The `limit` best nodes for `query` within `scope` (None: every note); without a usable model,
    lexical ranking."""
    if mode not in MODES:
        raise OrgkitError(f"unknown search mode {mode!r} (choose from {', '.join(MODES)})")
    if not query.strip():
        raise OrgkitError("empty query: give at least one word to search for")
    result = SearchResult(mode=mode)
    pool = max(limit, POOL)
    with index.snapshot() as conn:
        vectors, query_vector = None, None
        if mode != "lexical":
            vectors, query_vector = _dense_inputs(index, conn, query, embedder, cache, result)
        lexical = lexical_ranking(conn, query, pool) if result.mode != "dense" else None
        dense = dense_ranking(vectors, query_vector, pool) if vectors is not None else None
        if lexical is not None and dense is not None:
            fused = fuse(lexical, dense, title_match(conn, lexical, query))
        else:
            fused = lexical if lexical is not None else dense
        fused = scoped(conn, fused, scope)
        result.hits = _hits(conn, index, fused, query, limit)
    for hit in result.hits:
        hit.mode = result.mode
    return result


def _dense_inputs(index: Index, conn: "sqlite3.Connection", query: str, embedder: Embedder | None,
                  cache: VectorCache | None, result: SearchResult):
    """(vectors, query vector) for dense ranking, or (None, None) with the reason in `result`.

    The stored vectors are looked at first: with none from this model there is
    nothing to rank by meaning, and the model is not even loaded.
    """
    if embedder is None:
        return _words_only(result, "no embedding model configured")
    vectors = (cache or VectorCache()).get(index, embedder.fingerprint, conn)
    if len(vectors.chunks) == 0 and embedder.missing() is not None:
        return _words_only(result, embedder.missing())
    if len(vectors.chunks) == 0:
        return _words_only(result, f"no passage has a vector from {embedder.name} yet "
                                   "(run `orgkit index` to embed them)")
    try:
        return vectors, embedder.embed_query(query)
    except ModelUnavailable as exc:
        return _words_only(result, str(exc))


def _words_only(result: SearchResult, reason: str) -> tuple[None, None]:
    result.mode, result.reason = "lexical", reason
    result.warnings.append(f"{reason}; ranking by words only")
    return None, None


def query_terms(query: str) -> list[str]:
    """The words of a query that carry meaning (stopwords only when nothing else is left)."""
    words = [w.lower() for w in _WORD.findall(query)]
    content = [w for w in words if w not in _STOPWORDS]
    return list(dict.fromkeys(content or words))


def lexical_ranking(conn: "sqlite3.Connection", query: str, pool: int) -> Ranking:
    """Nodes by their best passage's BM25 (any query word may match).

    The heading column (the note's title, outline path and aliases) weighs
    HEADING_WEIGHT times the passage's text, so a note about a word outranks a
    note that mentions it.
    """
    terms = query_terms(query)
    if not terms:
        return []
    match = " OR ".join('"{}"'.format(t.replace('"', '""')) for t in terms)
    # One expression scores and orders: the score shown is the one the list is sorted by.
    rows = conn.execute(
        f"""SELECT c.node, c.rowid, -bm25(chunks_fts, {HEADING_WEIGHT}, 1.0) AS score
            FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid
            WHERE chunks_fts MATCH ? ORDER BY score DESC, c.rowid LIMIT ?""",
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


def fuse(lexical: Ranking, dense: Ranking, title_match: int | None = None) -> Ranking:
    """The two rankings' z-scores summed, DENSE_WEIGHT for dense; `title_match` (a node) first.

    A node missing from one ranking's pool takes that ranking's lowest z-score.
    The title match's score is raised by more than any two fused scores can
    differ (the z-scores of n values span at most √(2n)), so the list stays
    sorted by the score it shows. A node keeps the passage of the ranking
    that ranked it higher.
    """
    weighted = [(weight, z, min(z.values(), default=0.0))
                for weight, z in ((1.0 - DENSE_WEIGHT, _z_scores(lexical)), (DENSE_WEIGHT, _z_scores(dense)))]
    scores = {node: sum(weight * z.get(node, floor) for weight, z, floor in weighted)
              for _, z, _ in weighted for node in z}
    if title_match in scores:
        n = max(len(lexical), len(dense))
        scores[title_match] += (2 * n) ** 0.5 + 1.0
    best: dict[int, tuple[int, int]] = {}  # node -> (rank, passage)
    for ranking in (lexical, dense):
        for rank, (node, chunk, _) in enumerate(ranking, 1):
            if node not in best or rank < best[node][0]:
                best[node] = (rank, chunk)
    order = sorted(scores, key=lambda n: (-scores[n], best[n][0]))
    return [(n, best[n][1], scores[n]) for n in order]


def _z_scores(ranking: Ranking) -> dict[int, float]:
    """Each node's score in standard deviations from its ranking's mean (0 when all are equal)."""
    if not ranking:
        return {}
    values = [score for _, _, score in ranking]
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {node: (score - mean) / spread if spread > 0 else 0.0 for node, _, score in ranking}


def title_match(conn: "sqlite3.Connection", lexical: Ranking, query: str) -> int | None:
    """The best of BM25's top TITLE_WINDOW nodes whose title is the query's words, in order.

    A query that names a note is a request for that note, whatever else means
    something close; a title that merely contains the words is not.
    """
    words = [w.lower() for w in _WORD.findall(query)]
    top = [node for node, _, _ in lexical[:TITLE_WINDOW]]
    if not words or not top:
        return None
    titles = dict(conn.execute(
        f"SELECT rowid, title FROM nodes WHERE rowid IN ({','.join('?' * len(top))})", top).fetchall())
    return next((node for node in top
                 if [w.lower() for w in _WORD.findall(titles.get(node) or "")] == words), None)


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
