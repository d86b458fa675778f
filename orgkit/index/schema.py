"""The index's tables, as numbered migrations applied in order.

`PRAGMA user_version` records how many migrations a database has had; opening
it applies the missing ones in one transaction. An index written by a newer
orgkit is refused rather than guessed at (a rebuild makes a fresh one).
"""

from __future__ import annotations

import sqlite3

from ..errors import OrgkitError
from .db import write_transaction

MIGRATIONS: tuple[str, ...] = (
    # 1: files, the org-roam graph, passages with their BM25 index, vectors by content.
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE files (
        path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
        hash TEXT NOT NULL, title TEXT NOT NULL
    );
    CREATE TABLE nodes (
        rowid INTEGER PRIMARY KEY, id TEXT NOT NULL, file TEXT NOT NULL, level INTEGER NOT NULL,
        pos INTEGER NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        title TEXT NOT NULL, todo TEXT, priority TEXT,
        olp TEXT NOT NULL, tags TEXT NOT NULL, refs TEXT NOT NULL, properties TEXT NOT NULL
    );
    CREATE INDEX nodes_id ON nodes (id);
    CREATE INDEX nodes_file ON nodes (file);
    CREATE TABLE aliases (node INTEGER NOT NULL, alias TEXT NOT NULL);
    CREATE INDEX aliases_node ON aliases (node);
    CREATE INDEX aliases_alias ON aliases (alias);
    CREATE TABLE links (
        file TEXT NOT NULL, source TEXT NOT NULL, dest TEXT NOT NULL, type TEXT NOT NULL,
        pos INTEGER NOT NULL, line INTEGER NOT NULL
    );
    CREATE INDEX links_file ON links (file);
    CREATE INDEX links_source ON links (source);
    CREATE INDEX links_dest ON links (dest);
    CREATE TABLE chunks (
        rowid INTEGER PRIMARY KEY, node INTEGER NOT NULL, file TEXT NOT NULL,
        line INTEGER NOT NULL, heading TEXT NOT NULL, body TEXT NOT NULL, hash TEXT NOT NULL
    );
    CREATE INDEX chunks_file ON chunks (file);
    CREATE INDEX chunks_hash ON chunks (hash);
    CREATE VIRTUAL TABLE chunks_fts USING fts5 (
        heading, body, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TABLE vectors (
        model TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL,
        PRIMARY KEY (model, hash)
    ) WITHOUT ROWID;
    """,
    # 2: outline paths stored once per heading (linked to their parent), not per
    # passage and per node: a deep outline no longer multiplies the index. Passages
    # and nodes point at their heading; BM25 ranks a passage's file title, own
    # heading and aliases, read through a view instead of a second copy of the text.
    # Every file is re-read by the next update (vectors, keyed by text, are kept).
    """
    DROP TABLE chunks_fts;
    DROP TABLE chunks;
    DROP TABLE aliases;
    DROP TABLE nodes;
    DELETE FROM links;
    DELETE FROM files;
    CREATE TABLE outlines (
        rowid INTEGER PRIMARY KEY, file TEXT NOT NULL, parent INTEGER,
        title TEXT NOT NULL, label TEXT
    );
    CREATE INDEX outlines_file ON outlines (file);
    CREATE TABLE nodes (
        rowid INTEGER PRIMARY KEY, id TEXT NOT NULL, file TEXT NOT NULL, level INTEGER NOT NULL,
        pos INTEGER NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        title TEXT NOT NULL, todo TEXT, priority TEXT, outline INTEGER,
        tags TEXT NOT NULL, refs TEXT NOT NULL, properties TEXT NOT NULL
    );
    CREATE INDEX nodes_id ON nodes (id);
    CREATE INDEX nodes_file ON nodes (file);
    CREATE TABLE aliases (node INTEGER NOT NULL, alias TEXT NOT NULL);
    CREATE INDEX aliases_node ON aliases (node);
    CREATE INDEX aliases_alias ON aliases (alias);
    CREATE TABLE chunks (
        rowid INTEGER PRIMARY KEY, node INTEGER NOT NULL, file TEXT NOT NULL,
        line INTEGER NOT NULL, outline INTEGER, body TEXT NOT NULL, hash TEXT NOT NULL
    );
    CREATE INDEX chunks_file ON chunks (file);
    CREATE INDEX chunks_hash ON chunks (hash);
    CREATE VIEW chunk_text AS
        SELECT c.rowid AS rowid, c.file AS file,
               rtrim(f.title || ' ' || coalesce(o.title, '') || ' ' || coalesce(
                   (SELECT group_concat(alias, ' ') FROM
                       (SELECT alias FROM aliases a WHERE a.node = c.node ORDER BY a.rowid)), '')) AS heading,
               c.body AS body
        FROM chunks c JOIN files f ON f.path = c.file LEFT JOIN outlines o ON o.rowid = c.outline;
    CREATE VIRTUAL TABLE chunks_fts USING fts5 (
        heading, body, content = 'chunk_text', content_rowid = 'rowid',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
    # 3: the order in which nodes were first seen, so a duplicate ID resolves to the
    # older node: a node keeps its number while its file keeps its ID, and the
    # nodes a run adds are numbered by their file's mtime, then path.
    """
    ALTER TABLE nodes ADD COLUMN seen INTEGER NOT NULL DEFAULT 0;
    UPDATE nodes SET seen = rowid;
    """,
    # 4: each node's kind (the person's note, a deposit, or a generated claim, quote,
    # hub, run or source note: index/kinds.py), for scoped searches. Every file is
    # re-read by the next update to set it (vectors, keyed by text, are kept).
    """
    INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all');
    DELETE FROM chunks;
    DELETE FROM outlines;
    DELETE FROM aliases;
    DELETE FROM nodes;
    DELETE FROM links;
    DELETE FROM files;
    ALTER TABLE nodes ADD COLUMN kind TEXT NOT NULL DEFAULT 'note';
    CREATE INDEX nodes_kind ON nodes (kind) WHERE kind != 'note';
    """,
)

def migrate(conn: sqlite3.Connection) -> None:
    """Bring the schema up to date (the caller holds the writer's lock)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise OrgkitError(
            f"the index was written by a newer orgkit (schema {version}); "
            "run `orgkit index --rebuild` to make a fresh one"
        )
    if version == len(MIGRATIONS):
        return
    with write_transaction(conn):
        for number in range(version, len(MIGRATIONS)):
            for statement in _statements(MIGRATIONS[number]):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")


def _statements(script: str) -> list[str]:
    """executescript() would commit; statements run one by one stay in our transaction."""
    return [s.strip() for s in script.split(";") if s.strip()]


def current_version() -> int:
    return len(MIGRATIONS)
