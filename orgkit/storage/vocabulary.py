"""Where each engine keeps the index's stems (porter stems, as FTS5 cuts them), for typo correction.

SQLite reads them from FTS5's own vocabulary through an `fts5vocab` table,
PostgreSQL from the terms table: a `Vocabulary` is the two queries that read
them, so `orgkit.index.vocab` corrects words the same way on both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .db import Connection, Cursor

VOCAB_TABLE = "temp.chunks_vocab"


@dataclass(frozen=True)
class Vocabulary:
    """Where a backend keeps the index's stems: a key for caches, the queries that read them (the
    stems in a range, with their counts; the counts of a list of stems, `{}` standing for the
    test against it), written for the engine, and how the engine sends them (its backend's `run` and
    `among`)."""

    key: str
    range_sql: str
    counts_sql: str
    run: Callable[[Connection, str, Sequence[Any]], Cursor]
    among: Callable[[Connection, str, list], list[tuple]]

    def starting_with(self, conn: Connection, first: str) -> list[tuple[str, int]]:
        """The stems that start with the letter `first`, with how many passages hold each."""
        return self.run(conn, self.range_sql, (first, chr(ord(first) + 1))).fetchall()

    def documents(self, conn: Connection, stems: set[str]) -> dict[str, int]:
        """How many passages hold each of `stems` (a stem none holds is left out), in one query
        per 500 stems rather than one per stem (a deposit brings thousands)."""
        return dict(self.among(conn, self.counts_sql, sorted(stems)))


def ensure_vocab(conn: Connection) -> None:
    """The vocabulary table, on this connection only (a temp table: nothing is written to the index)."""
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {VOCAB_TABLE} USING fts5vocab(main, chunks_fts, row)")
