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
from collections import OrderedDict
from collections.abc import Sequence

# The passages' FTS5 tokenizer, as the index's latest migration declares it (a test holds the
# two together): anything else that ranks text by words (PostgreSQL's terms, extraction's
# sentence ranking) tokenizes the same way.
TOKENIZE = "porter unicode61 remove_diacritics 2"

# (chunk, term, positions in the heading column, positions in the body column)
TermRow = tuple[int, str, list[int], list[int]]
PHRASES_KEPT = 4096  # query phrases whose tokens a process remembers


class Tokenizer:
    """FTS5's tokenizer, run in a private in-memory SQLite database."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5 (heading, body, tokenize = '{TOKENIZE}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
        self._lock = threading.Lock()
        self._phrases: OrderedDict[str, tuple[str, ...]] = OrderedDict()

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
        """The tokens of one query phrase, in order (what FTS5 matches for `"text"`).

        The last PHRASES_KEPT phrases are remembered: a query's words are
        scored against one note's passages after another, and each time
        through this one lock.
        """
        with self._lock:
            kept = self._phrases.get(text)
            if kept is not None:
                self._phrases.move_to_end(text)
                return list(kept)
            with self._conn:
                self._conn.execute("DELETE FROM t")
                self._conn.execute("INSERT INTO t (rowid, heading, body) VALUES (1, '', ?)", (text,))
                tokens = [term for (term,) in self._conn.execute("SELECT term FROM v ORDER BY offset")]
                self._conn.execute("DELETE FROM t")
            self._phrases[text] = tuple(tokens)
            if len(self._phrases) > PHRASES_KEPT:
                self._phrases.popitem(last=False)
        return tokens


_shared: Tokenizer | None = None


def tokenizer() -> Tokenizer:
    """The process's tokenizer (one in-memory table, serialised by a lock)."""
    global _shared
    if _shared is None:
        _shared = Tokenizer()
    return _shared


def phrase_hits(phrase: int, tokens: list[str], within: list[int] | None = None) -> tuple[str, list]:
    """PostgreSQL's SQL for the passages where `tokens` stand in a row (`within`: those of these
    rows), with how often per column and the passage's size, and its parameters.

    One token is read from the terms' key alone (it holds each row's counts and
    its passage's size: an index-only scan, no row of the table is visited); a
    longer phrase (`foo_bar`) counts the positions of its first token followed by
    each next one, column by column.
    """
    from .postgres import array_literal

    rows = [] if within is None else [array_literal(within)]
    if len(tokens) == 1:
        return (f"SELECT {int(phrase)} AS phrase, chunk, in_heading AS heading, in_body AS body, tokens "
                "FROM chunk_terms WHERE term = %s" + (" AND chunk = ANY(%s::bigint[])" if rows else ""),
                [tokens[0], *rows])
    joins = " ".join(f"JOIN chunk_terms t{k} ON t{k}.chunk = t0.chunk AND t{k}.term = %s"
                     for k in range(1, len(tokens)))

    def count(col: str) -> str:
        follows = " AND ".join(f"p + {k} = ANY(t{k}.{col})" for k in range(1, len(tokens)))
        return f"(SELECT count(*) FROM unnest(t0.{col}) AS p WHERE {follows})"

    sql = (f"SELECT phrase, chunk, heading, body, tokens FROM (SELECT {int(phrase)} AS phrase, t0.chunk, t0.tokens, "
           f"{count('heading')} AS heading, {count('body')} AS body FROM chunk_terms t0 {joins} WHERE t0.term = %s"
           + (" AND t0.chunk = ANY(%s::bigint[])" if rows else "") + ") AS found "
           "WHERE heading + body > 0")
    return sql, [*tokens[1:], tokens[0], *rows]


# The index's passage count and token total, kept in `meta` by the writer (`add_totals`), so a
# query need not count every passage: a scan of `chunks` was most of what a passage's score cost.
TOTAL_KEYS = ("passages", "passage_tokens")
PASSAGE_COUNT = ("SELECT coalesce((SELECT value::bigint FROM meta WHERE key = 'passages'), "
                 "(SELECT count(*) FROM chunks))")
_TOTALS = f"""SELECT greatest(n, 1)::float8 AS nrow, greatest(t, 1)::float8 / greatest(n, 1) AS avgdl FROM (
    SELECT ({PASSAGE_COUNT})::float8 AS n,
           coalesce((SELECT value::float8 FROM meta WHERE key = 'passage_tokens'),
                    (SELECT sum(tokens) FROM chunks), 0) AS t) AS kept"""


def add_totals(conn, passages: int, tokens: int) -> bool:
    """Add to the kept totals (negative: passages about to be removed), inside the writer's
    transaction; False where none are kept (a new or cleared index, or one made before they were):
    queries then count the passages themselves, until `count_totals` keeps them."""
    return conn.run("UPDATE meta SET value = (value::bigint + CASE key WHEN %s THEN %s ELSE %s END)::text "
                    "WHERE key = ANY(%s)", (TOTAL_KEYS[0], passages, tokens, list(TOTAL_KEYS))).rowcount \
        == len(TOTAL_KEYS)


def count_totals(conn) -> None:
    """Keep the totals of the passages as they are now, counted afresh (inside the writer's transaction)."""
    conn.run("DELETE FROM meta WHERE key = ANY(%s)", (list(TOTAL_KEYS),))
    conn.run("INSERT INTO meta SELECT %s, count(*)::text FROM chunks UNION ALL "
             "SELECT %s, coalesce(sum(tokens), 0)::text FROM chunks", TOTAL_KEYS)


def bm25_sql(phrases: list[list[str]], within: list[int] | None = None) -> tuple[str, list]:
    """FTS5's bm25() over the stored terms, for passages matching any phrase (`within`: those of
    these rows), in PostgreSQL's SQL; parameters to add: the heading weight, then the limit.

    Each phrase scores on its own, as in FTS5 (a token named twice counts twice):
    IDF = ln((N - hits + 0.5) / (hits + 0.5)), floored at 1e-6; each passage
    adds IDF x f x (k1 + 1) / (f + k1 x (1 - b + b x size / average size)),
    f being the phrase's weighted count, k1 = 1.2, b = 0.75.

    A one-token phrase's passages are counted once, by the writer (`term_passages`);
    its hits, with their counts and passage sizes, are read from the terms' key,
    so a query over the whole index visits no row of the terms table, and only the
    `limit` best passages are looked up in `chunks` (for their node). Only a
    longer phrase reads its first token's rows, to check the tokens stand in a row.
    """
    parts, counts, params, count_params = [], [], [], []
    for number, tokens in enumerate(phrases):
        sql, values = phrase_hits(number, tokens, within)
        parts.append(sql)
        params += values
        if len(tokens) == 1:
            counts.append(f"SELECT {number} AS phrase, coalesce((SELECT passages FROM term_passages "
                          "WHERE term = %s), 0)::float8 AS n")
            count_params.append(tokens[0])
        elif within is None:
            counts.append(f"SELECT {number} AS phrase, "
                          f"(SELECT count(*) FROM hits WHERE phrase = {number})::float8 AS n")
        else:
            every, values = phrase_hits(number, tokens)
            counts.append(f"SELECT {number} AS phrase, (SELECT count(*) FROM ({every}) AS every)::float8 AS n")
            count_params += values
    return f"""
WITH hits AS ({" UNION ALL ".join(parts)}),
     counts AS ({" UNION ALL ".join(counts)}),
     totals AS ({_TOTALS}),
     idf AS (SELECT phrase, CASE WHEN x <= 0 THEN 1e-6 ELSE x END AS idf FROM (
         SELECT counts.phrase, ln((totals.nrow - n + 0.5) / (n + 0.5)) AS x FROM counts CROSS JOIN totals) AS raw),
     scored AS (
         SELECT hits.chunk,
                sum(idf.idf * (f.freq * 2.2) / (f.freq + 1.2 * (0.25 + 0.75 * hits.tokens::float8 / totals.avgdl)))
                    AS score
         FROM hits JOIN idf ON idf.phrase = hits.phrase CROSS JOIN totals
         CROSS JOIN LATERAL (SELECT hits.heading * %s::float8 + hits.body::float8 AS freq) AS f
         GROUP BY hits.chunk ORDER BY score DESC, hits.chunk LIMIT %s)
SELECT c.node, scored.chunk, scored.score FROM scored JOIN chunks c ON c.rowid = scored.chunk
ORDER BY scored.score DESC, scored.chunk
""", params + count_params


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
