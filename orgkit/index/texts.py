"""Passage texts read back by their hash, and the index's generation: what embedding, its
work queue and the update share (each below the other two)."""

from __future__ import annotations


from ..storage.db import Connection, in_slices
from .store import Index, headings


def missing_texts(index: Index, hashes: list[str]) -> list[tuple[str, str]]:
    """(hash, text) of the passage texts with these hashes, sorted by hash (gone ones left out)."""
    conn = index.conn
    rows = in_slices(conn, index.backend.missing_texts_sql, sorted(hashes))
    paths = headings(conn, [(title, outline) for _, title, outline, _ in rows])
    return [(h, f"{heading}: {body}" if body else heading) for (h, _, _, body), heading in zip(rows, paths)]


def bump_generation(conn: Connection) -> None:
    conn.execute("INSERT INTO meta VALUES ('generation', '1') "
                 "ON CONFLICT (key) DO UPDATE SET value = CAST(meta.value AS INTEGER) + 1")
