"""Outline paths in the index: each heading stored once, linked to its parent.

A passage's heading ("File > Parent > Child") and a node's `olp` are rebuilt
from these rows when read (`orgkit.index.store`: `olps`, `headings`), so a deep
outline costs one row per heading instead of a copy of its whole path in every
passage and every node below it.
"""

from __future__ import annotations


from .chunks import Chunk, Section


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
