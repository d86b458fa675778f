"""FTS5's tokens and BM25, for an engine without FTS5.

The SQLite index ranks passages with FTS5's `bm25()` over its tokenizer
(`porter unicode61 remove_diacritics 2`). PostgreSQL's text search stems and
ranks differently (`ts_rank` is not BM25), so its answers would drift from
SQLite's. Instead, the same tokenizer cuts the text here, in an in-memory
SQLite FTS5 table read through `fts5vocab`, and the database stores each
passage's terms with their counts per column; `BM25_SQL` then computes FTS5's
formula from them (k1 = 1.2, b = 0.75, IDF floored at 1e-6, column weights),
so both engines rank alike, to the rounding of a floating-point sum.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

# The passages' FTS5 tokenizer, as the index's latest migration declares it (a test holds the
# two together): anything else that ranks text by words (PostgreSQL's terms, extraction's
# sentence ranking) tokenizes the same way.
TOKENIZE = "porter unicode61 remove_diacritics 2"

# (chunk, term, positions in the heading column, positions in the body column)
TermRow = tuple[int, str, list[int], list[int]]


class Tokenizer:
    """FTS5's tokenizer, run in a private in-memory SQLite database."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5 (heading, body, tokenize = '{TOKENIZE}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
        self._lock = threading.Lock()

    def passages(self, rows: list[tuple[int, str, str]]) -> tuple[list[TermRow], dict[int, int]]:
        """The terms of (row, heading, body) passages with their token positions, and each passage's size."""
        import json

        with self._lock, self._conn:
            self._conn.execute("DELETE FROM t")
            self._conn.executemany("INSERT INTO t (rowid, heading, body) VALUES (?, ?, ?)", rows)
            terms = [(doc, term, json.loads(heading), json.loads(body)) for doc, term, heading, body in
                     self._conn.execute(
                         "SELECT doc, term, json_group_array(offset) FILTER (WHERE col = 'heading'), "
                         "json_group_array(offset) FILTER (WHERE col = 'body') FROM v GROUP BY doc, term")]
            sizes = {rowid: 0 for rowid, _, _ in rows}
            sizes.update(self._conn.execute("SELECT doc, count(*) FROM v GROUP BY doc").fetchall())
            self._conn.execute("DELETE FROM t")
        return terms, sizes

    def stems(self, texts: dict[int, str]) -> dict[int, set[str]]:
        """The distinct tokens of each text, keyed as given."""
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM t")
            self._conn.executemany("INSERT INTO t (rowid, heading, body) VALUES (?, '', ?)", list(texts.items()))
            out: dict[int, set[str]] = {key: set() for key in texts}
            for term, doc in self._conn.execute("SELECT DISTINCT term, doc FROM v"):
                out[doc].add(term)
            self._conn.execute("DELETE FROM t")
        return out

    def phrase(self, text: str) -> list[str]:
        """The tokens of one query phrase, in order (what FTS5 matches for `"text"`)."""
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM t")
            self._conn.execute("INSERT INTO t (rowid, heading, body) VALUES (1, '', ?)", (text,))
            tokens = [term for (term,) in self._conn.execute(
                "SELECT term FROM v ORDER BY offset")]
            self._conn.execute("DELETE FROM t")
        return tokens


_shared: Tokenizer | None = None


def tokenizer() -> Tokenizer:
    """The process's tokenizer (one in-memory table, serialised by a lock)."""
    global _shared
    if _shared is None:
        _shared = Tokenizer()
    return _shared


def phrase_hits(phrase: int, tokens: list[str]) -> tuple[str, list]:
    """SQL for the passages where `tokens` stand in a row, with how often per column, and its parameters.

    One token is a row of the terms table; a longer phrase (`foo_bar`) counts
    the positions of its first token followed by each next one, column by column.
    """
    if len(tokens) == 1:
        return ("SELECT ? AS phrase, chunk, cardinality(heading) AS heading, cardinality(body) AS body "
                "FROM chunk_terms WHERE term = ?", [phrase, tokens[0]])
    joins = " ".join(f"JOIN chunk_terms t{k} ON t{k}.chunk = t0.chunk AND t{k}.term = ?" for k in range(1, len(tokens)))

    def count(col: str) -> str:
        follows = " AND ".join(f"p + {k} = ANY(t{k}.{col})" for k in range(1, len(tokens)))
        return f"(SELECT count(*) FROM unnest(t0.{col}) AS p WHERE {follows})"

    sql = (f"SELECT phrase, chunk, heading, body FROM (SELECT ? AS phrase, t0.chunk, {count('heading')} AS heading, "
           f"{count('body')} AS body FROM chunk_terms t0 {joins} WHERE t0.term = ?) AS found "
           "WHERE heading + body > 0")
    return sql, [phrase, *tokens[1:], tokens[0]]


def bm25_sql(phrases: list[list[str]], ranged: bool = False) -> tuple[str, list]:
    """FTS5's bm25() over the stored terms, for passages matching any phrase; parameters
    to add: the heading weight, (`ranged`: the first and last passage row to keep,) then the limit.

    Each phrase scores on its own, as in FTS5 (a token named twice counts twice):
    IDF = ln((N - hits + 0.5) / (hits + 0.5)), floored at 1e-6; each passage
    adds IDF x f x (k1 + 1) / (f + k1 x (1 - b + b x size / average size)),
    f being the phrase's weighted count, k1 = 1.2, b = 0.75.
    """
    parts, params = [], []
    for number, tokens in enumerate(phrases):
        sql, values = phrase_hits(number, tokens)
        parts.append(sql)
        params += values
    return f"""
WITH hits AS ({" UNION ALL ".join(parts)}),
     totals AS (SELECT greatest(count(*), 1)::float8 AS nrow,
                       greatest(coalesce(sum(tokens), 0), 1)::float8 / greatest(count(*), 1) AS avgdl
                FROM chunks),
     idf AS (SELECT phrase, CASE WHEN x <= 0 THEN 1e-6 ELSE x END AS idf FROM (
                 SELECT hits.phrase, ln((totals.nrow - count(*) + 0.5) / (count(*) + 0.5)) AS x
                 FROM hits CROSS JOIN totals GROUP BY hits.phrase, totals.nrow) AS raw)
SELECT c.node, c.rowid,
       sum(idf.idf * (f.freq * 2.2) / (f.freq + 1.2 * (0.25 + 0.75 * c.tokens / totals.avgdl))) AS score
FROM hits
JOIN idf ON idf.phrase = hits.phrase
JOIN chunks c ON c.rowid = hits.chunk
CROSS JOIN totals
CROSS JOIN LATERAL (SELECT hits.heading * ?::float8 + hits.body * 1.0 AS freq) AS f
{"WHERE c.rowid BETWEEN ? AND ?" if ranged else ""}
GROUP BY c.node, c.rowid
ORDER BY score DESC, c.rowid
LIMIT ?
""", params


def bm25_collection(texts: Sequence[str], matches: Sequence[str | None]) -> list[list[float]]:
    """scores[m][t]: FTS5's BM25 of text t for match expression m (0 where it does not match,
    and for a None match), the texts being the whole collection: a table in memory for one call,
    with the index's tokenizer, so a ranking over a few texts scores as search does."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE VIRTUAL TABLE texts USING fts5 (body, tokenize = '{TOKENIZE}')")
        conn.executemany("INSERT INTO texts (rowid, body) VALUES (?, ?)", enumerate(texts))
        out = []
        for match in matches:
            row = [0.0] * len(texts)
            if match is not None:
                for rowid, score in conn.execute("SELECT rowid, -bm25(texts) FROM texts WHERE texts MATCH ?",
                                                 (match,)):
                    row[rowid] = score
            out.append(row)
        return out
    finally:
        conn.close()
