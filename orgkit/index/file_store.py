"""What an update writes of each indexed file: its row in `files`, its outline, nodes, aliases,
links and passages, put in and taken out together, inside the writer's transaction.

`orgkit.index.update` decides what changed and parses it; this module holds the statements,
written once with the engine's placeholder (`backend.P`) where both engines take the same SQL,
and left to the backend where they differ (the words, many rows at once, the duplicate IDs'
query).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

from ..storage.backend import IndexBackend
from ..storage.db import Connection

# The columns each table's new rows fill, in the order `FileRows` holds them.
FILE_COLUMNS = ("path", "size", "mtime_ns", "hash", "title")
OUTLINE_COLUMNS = ("rowid", "file", "parent", "title", "label")
NODE_COLUMNS = ("rowid", "id", "file", "level", "pos", "line", "end_line", "title", "todo", "priority", "outline",
                "tags", "refs", "properties", "seen", "kind", "unit")
ALIAS_COLUMNS = ("node", "alias")
LINK_COLUMNS = ("file", "source", "dest", "type", "pos", "line")
PASSAGE_COLUMNS = ("rowid", "node", "file", "line", "outline", "body", "hash")


class NextRows(NamedTuple):
    """The row ids the next outline, node and passage take: the largest so far plus one, as SQLite
    numbers them, so every engine gives the same rows the same ids."""

    outline: int
    node: int
    passage: int


class DuplicateId(NamedTuple):
    """A node of a changed file whose ID a node seen before it holds, and where that one is."""

    id: str
    file: str
    line: int
    other_file: str
    other_line: int


@dataclass
class FileRows:
    """New files' rows for each table, as tuples in the order of that table's `*_COLUMNS`."""

    files: list[tuple]
    outlines: list[tuple]
    nodes: list[tuple]
    aliases: list[tuple]
    links: list[tuple]
    passages: list[tuple]


@dataclass
class FileStore:
    """The writer's statements over the files' tables, on its connection (inside its transaction)."""

    conn: Connection
    backend: IndexBackend

    def touch(self, rows: list[tuple[int, int, str]]) -> None:
        """Record the new (size, mtime, path) of files whose content did not change."""
        P = self.backend.P
        self.backend.run_many(self.conn, f"UPDATE files SET size = {P}, mtime_ns = {P} WHERE path = {P}", rows)

    def first_seen(self, files: list[str]) -> dict[tuple[str, str], int]:
        """The first-seen number of each (ID, file) the index holds of `files`."""
        return {(node_id, file): number for node_id, file, number in self.backend.among(
            self.conn, "SELECT id, file, min(seen) FROM nodes WHERE file {} GROUP BY id, file", files)}

    def last_seen(self) -> int:
        """The largest first-seen number given so far (0 in an empty index)."""
        return self.conn.execute("SELECT coalesce(max(seen), 0) FROM nodes").fetchone()[0]

    def duplicate_ids(self, files: list[str]) -> list[DuplicateId]:
        """Each node of `files` whose ID a node seen before it holds, by file and line."""
        return [DuplicateId(*row) for row in self.backend.among(self.conn, self.backend.duplicate_ids_sql, files)]

    def remove(self, file: str) -> None:
        """Take every row of `file` out of the index (its words first, read from its passages)."""
        backend, P = self.backend, self.backend.P
        backend.unindex_words(self.conn, file)
        for statement in (f"DELETE FROM chunks WHERE file = {P}", f"DELETE FROM outlines WHERE file = {P}",
                          f"DELETE FROM aliases WHERE node IN (SELECT rowid FROM nodes WHERE file = {P})",
                          f"DELETE FROM nodes WHERE file = {P}", f"DELETE FROM links WHERE file = {P}",
                          f"DELETE FROM files WHERE path = {P}"):
            backend.run(self.conn, statement, (file,))

    def next_rows(self) -> NextRows:
        """The row ids the next outline, node and passage take."""
        return NextRows(*(self.conn.execute(f"SELECT coalesce(max(rowid), 0) + 1 FROM {table}").fetchone()[0]
                          for table in ("outlines", "nodes", "chunks")))

    def insert(self, rows: FileRows, texts: Sequence[tuple[str, Any]]) -> None:
        """Put new files' rows in, one statement (or stream) per table for all of them; then their
        passages' words, and (for a backend that keeps them) the files' (path, text)."""
        backend, conn = self.backend, self.conn
        for table, columns, values in (("files", FILE_COLUMNS, rows.files),
                                       ("outlines", OUTLINE_COLUMNS, rows.outlines),
                                       ("nodes", NODE_COLUMNS, rows.nodes), ("aliases", ALIAS_COLUMNS, rows.aliases),
                                       ("links", LINK_COLUMNS, rows.links), ("chunks", PASSAGE_COLUMNS, rows.passages)):
            if values:
                backend.insert_rows(conn, table, columns, values)
        backend.index_words(conn, [row[0] for row in rows.files])
        backend.store_texts(conn, list(texts))

    def drop_unused_vectors(self) -> None:
        """Forget the vectors of texts no passage holds any more."""
        self.conn.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT hash FROM chunks)")
