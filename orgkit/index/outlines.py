"""Outline paths in the index: each heading stored once, linked to its parent.

A passage's heading ("File > Parent > Child") and a node's `olp` are rebuilt
from these rows when read, so a deep outline costs one row per heading instead
of a copy of its whole path in every passage and every node below it.
"""

from __future__ import annotations


from .chunks import Chunk, Section
from ..storage.db import Connection

_Row = tuple[int | None, str, str]  # parent, title, label


def section_rows(file: str, chunks: list[Chunk], next_row: int) -> tuple[dict[int, int], list[tuple]]:
    """The rows that store the headings the passages sit under (and their ancestors).

    Returns the row of each heading by its 0-based line, and the rows to
    insert, numbered from `next_row`.
    """
    rows: dict[int, int] = {}
    values: list[tuple] = []

    def store(section: Section | None) -> None:
        nonlocal next_row
        pending = []
        while section is not None and section.line not in rows:
            pending.append(section)
            section = section.parent
        for s in reversed(pending):
            parent = rows[s.parent.line] if s.parent is not None else None
            rows[s.line] = next_row
            values.append((next_row, file, parent, s.title, None if s.label == s.title else s.label))
            next_row += 1

    for chunk in chunks:
        store(chunk.section)
    return rows, values


def _load(conn: Connection, wanted: set[int], known: dict[int, _Row]) -> None:
    """Read the rows `wanted` and all their ancestors into `known`."""
    todo = [r for r in wanted if r not in known]
    while todo:
        found: list[int] = []
        for start in range(0, len(todo), 500):
            part = todo[start:start + 500]
            for rowid, parent, title, label in conn.execute(
                    f"SELECT rowid, parent, title, label FROM outlines WHERE rowid IN ({','.join('?' * len(part))})",
                    part):
                known[rowid] = (parent, title, label if label is not None else title)
                if parent is not None and parent not in known:
                    found.append(parent)
        todo = list(dict.fromkeys(found))


def olps(conn: Connection, rowids: list[int | None]) -> dict[int, list[str]]:
    """The outline path above each heading row: its ancestors' titles, outermost first."""
    known: dict[int, _Row] = {}
    _load(conn, {r for r in rowids if r is not None}, known)
    out: dict[int, list[str]] = {}
    for rowid in rowids:
        if rowid is None or rowid in out:
            continue
        titles = []
        parent = known[rowid][0] if rowid in known else None
        while parent is not None and parent in known:
            titles.append(known[parent][1])
            parent = known[parent][0]
        out[rowid] = titles[::-1]
    return out


def headings(conn: Connection, rows: list[tuple[str, int | None]]) -> list[str]:
    """Passage headings ("File title > Parent > Child") of (file title, heading row) pairs."""
    known: dict[int, _Row] = {}
    _load(conn, {r for _, r in rows if r is not None}, known)
    out = []
    for file_title, rowid in rows:
        labels = []
        while rowid is not None and rowid in known:
            labels.append(known[rowid][2])
            rowid = known[rowid][0]
        out.append(" > ".join([file_title, *reversed(labels)]))
    return out
