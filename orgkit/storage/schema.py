"""The index's tables, as one list of named migrations for both engines.

`orgkit.storage.migrations` runs the missing ones in one transaction and
records them by name (store "index"). An index written by a newer orgkit is
refused rather than guessed at (a rebuild makes a fresh one).

The tables are written once (`_GRAPH`, `_FILES`), with the words each engine
spells its own way filled in. Steps 1 to 4 are each engine's history as
earlier releases numbered it, so a database of either engine keeps its
version: PostgreSQL's first step made the tables SQLite reached in two, and
its own steps 2 and 3 (the embedding queue, the files' texts) have no SQLite
counterpart; they keep the names `index 1` to `index 4` the count gave them.
Later steps are named for what they do, with None for an engine that has
nothing to do.
"""

from __future__ import annotations

import sqlite3

from .migrations import Engine, Migration, Step, migrate_sqlite, named

# Tables both engines hold from their first step (SQLite reads BIGINT as INTEGER).
_FILES = """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE files (
        path TEXT PRIMARY KEY, size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL,
        hash TEXT NOT NULL, title TEXT NOT NULL
    );
    CREATE TABLE links (
        file TEXT NOT NULL, source TEXT NOT NULL, dest TEXT NOT NULL, type TEXT NOT NULL,
        pos BIGINT NOT NULL, line BIGINT NOT NULL
    );
    CREATE INDEX links_file ON links (file);
    CREATE INDEX links_source ON links (source);
    CREATE INDEX links_dest ON links (dest);
"""
# Outline paths stored once per heading (linked to their parent), not per passage and per
# node: a deep outline does not multiply the index. Passages and nodes point at their
# heading; BM25 ranks a passage's file title, own heading and aliases, read through a view
# instead of a second copy of the text.
_GRAPH = """
    CREATE TABLE outlines (
        {rowid}, file TEXT NOT NULL, parent BIGINT, title TEXT NOT NULL, label TEXT
    );
    CREATE INDEX outlines_file ON outlines (file);
    CREATE TABLE nodes (
        {rowid}, id TEXT NOT NULL, file TEXT NOT NULL, level INTEGER NOT NULL,
        pos BIGINT NOT NULL, line BIGINT NOT NULL, end_line BIGINT NOT NULL,
        title TEXT NOT NULL, todo TEXT, priority TEXT, outline BIGINT,
        tags TEXT NOT NULL, refs TEXT NOT NULL, properties TEXT NOT NULL
    );
    CREATE INDEX nodes_id ON nodes (id);
    CREATE INDEX nodes_file ON nodes (file);
    CREATE TABLE aliases (node BIGINT NOT NULL, alias TEXT NOT NULL{alias_key});
    CREATE INDEX aliases_node ON aliases (node);
    CREATE INDEX aliases_alias ON aliases (alias);
    CREATE TABLE chunks (
        {rowid}, node BIGINT NOT NULL, file TEXT NOT NULL,
        line BIGINT NOT NULL, outline BIGINT, body TEXT NOT NULL, hash TEXT NOT NULL{chunk_tokens}
    );
    CREATE INDEX chunks_file ON chunks (file);
    CREATE INDEX chunks_hash ON chunks (hash);
    CREATE VIEW chunk_text AS
        SELECT c.rowid AS rowid, c.file AS file,
               rtrim(f.title || ' ' || coalesce(o.title, '') || ' ' || coalesce({aliases}, '')) AS heading,
               c.body AS body
        FROM chunks c JOIN files f ON f.path = c.file LEFT JOIN outlines o ON o.rowid = c.outline;
"""
# What the two engines spell differently in `_GRAPH`: SQLite's rowid is an INTEGER PRIMARY
# KEY (an alias it fills in), and its aggregate has no ORDER BY; PostgreSQL keeps each
# passage's token count for its BM25 (storage/terms.py).
_SPELLING: dict[Engine, dict[str, str]] = {
    "sqlite": {"rowid": "rowid INTEGER PRIMARY KEY", "alias_key": "", "chunk_tokens": "",
               "aliases": "(SELECT group_concat(alias, ' ') FROM "
                          "(SELECT alias FROM aliases a WHERE a.node = c.node ORDER BY a.rowid))"},
    "postgres": {"rowid": "rowid BIGINT PRIMARY KEY", "alias_key": ", rowid BIGSERIAL PRIMARY KEY",
                 "chunk_tokens": ", tokens INTEGER NOT NULL DEFAULT 0",
                 "aliases": "(SELECT string_agg(a.alias, ' ' ORDER BY a.rowid) FROM aliases a WHERE a.node = c.node)"},
}


def _graph(engine: Engine) -> str:
    return _GRAPH.format(**_SPELLING[engine])


# The order in which nodes were first seen, so a duplicate ID resolves to the older node: a
# node keeps its number while its file keeps its ID, and the nodes a run adds are numbered
# by their file's mtime, then path.
_SEEN = """
    ALTER TABLE nodes ADD COLUMN seen BIGINT NOT NULL DEFAULT 0;
    UPDATE nodes SET seen = rowid;
"""
# Each node's kind (the person's note, a deposit, or a generated claim, quote, hub, run or
# source note: index/kinds.py), for scoped searches.
_KIND = """
    ALTER TABLE nodes ADD COLUMN kind TEXT NOT NULL DEFAULT 'note';
    CREATE INDEX nodes_kind ON nodes (kind) WHERE kind != 'note';
"""

# Every file is re-read by the next update: how files are cut into passages changed.
_REREAD = "UPDATE files SET size = -1, hash = '';"

# Whether a row is a searchable unit without an ID rather than an org-roam node: `nodes`,
# `links` and `backlinks` list only nodes; retrieval ranks both.
_UNIT = """
    ALTER TABLE nodes ADD COLUMN unit INTEGER NOT NULL DEFAULT 0;
""" + _REREAD

_NUMBERED: tuple[Migration, ...] = (
    # 1: SQLite: files and links, vectors by content (the graph came with step 2);
    # PostgreSQL: pgvector, every table, and a terms table in place of FTS5 (storage/terms.py).
    (_FILES + """
    CREATE TABLE vectors (
        model TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, hash)
    ) WITHOUT ROWID;
    """, "CREATE EXTENSION IF NOT EXISTS vector;" + _FILES + _graph("postgres") + """
    CREATE TABLE chunk_terms (
        chunk BIGINT NOT NULL, term TEXT NOT NULL, heading INTEGER[] NOT NULL, body INTEGER[] NOT NULL,
        PRIMARY KEY (term, chunk)
    );
    CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk);
    CREATE TABLE vectors (model TEXT NOT NULL, hash TEXT NOT NULL, vector vector NOT NULL, PRIMARY KEY (model, hash));
    """),
    # 2: SQLite: the graph in place of its first release's per-passage outlines (dropped,
    # every file re-read by the next update; vectors, keyed by text, are kept);
    # PostgreSQL: passage texts waiting for a vector, claimed by embedding workers (index/queue.py).
    ("""
    DROP TABLE IF EXISTS chunks_fts;
    DROP TABLE IF EXISTS chunks;
    DROP TABLE IF EXISTS aliases;
    DROP TABLE IF EXISTS nodes;
    DELETE FROM links;
    DELETE FROM files;
    """ + _graph("sqlite") + """
    CREATE VIRTUAL TABLE chunks_fts USING fts5 (
        heading, body, content = 'chunk_text', content_rowid = 'rowid',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """, "CREATE TABLE embed_queue (model TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (model, hash))"),
    # 3: SQLite: the order nodes were first seen in; PostgreSQL: each file's text, so that a
    # machine without the notes reads them from the database.
    (_SEEN, "CREATE TABLE file_texts (path TEXT PRIMARY KEY, content TEXT NOT NULL)"),
    # 4: SQLite: each node's kind (every file is re-read by the next update to set it);
    # PostgreSQL: both of SQLite's steps 3 and 4.
    ("""
    INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all');
    DELETE FROM chunks;
    DELETE FROM outlines;
    DELETE FROM aliases;
    DELETE FROM nodes;
    DELETE FROM links;
    DELETE FROM files;
    """ + _KIND, _SEEN + _KIND),
)

# PostgreSQL's BM25 reads each term's hits from the terms' key alone: the key carries each
# row's counts per column and its passage's size (an index-only scan visits no row of the
# table), and each term's passage count is kept by the writer rather than counted per query
# (storage/terms.py). SQLite's FTS5 keeps both itself.
_TERMS_COVERED = """
    ALTER TABLE chunk_terms ADD COLUMN IF NOT EXISTS in_heading INTEGER,
        ADD COLUMN IF NOT EXISTS in_body INTEGER, ADD COLUMN IF NOT EXISTS tokens INTEGER;
    UPDATE chunk_terms t SET in_heading = cardinality(t.heading), in_body = cardinality(t.body), tokens = c.tokens
        FROM chunks c WHERE c.rowid = t.chunk AND t.tokens IS NULL;
    ALTER TABLE chunk_terms ALTER COLUMN in_heading SET NOT NULL, ALTER COLUMN in_body SET NOT NULL,
        ALTER COLUMN tokens SET NOT NULL;
    ALTER TABLE chunk_terms DROP CONSTRAINT IF EXISTS chunk_terms_pkey;
    ALTER TABLE chunk_terms ADD CONSTRAINT chunk_terms_pkey
        PRIMARY KEY (term, chunk) INCLUDE (in_heading, in_body, tokens);
    CREATE TABLE IF NOT EXISTS term_passages (term TEXT PRIMARY KEY, passages BIGINT NOT NULL);
    INSERT INTO term_passages SELECT term, count(*) FROM chunk_terms GROUP BY term
        ON CONFLICT (term) DO UPDATE SET passages = excluded.passages;
"""

MIGRATIONS: tuple[Step, ...] = named("index", _NUMBERED) + (
    Step("terms covered by their key", None, _TERMS_COVERED),
    # both: searchable units, the files and headings outside every node (org/units.py), kept as
    # rows of `nodes` whose ID is their locator; every file is re-read by the next update.
    Step("searchable units", _UNIT, _UNIT),
    # both: a heading with no text and nothing under it is a passage of its own; every file is re-read
    # by the next update to cut them.
    Step("leaf headings as passages", _REREAD, _REREAD),
)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring a SQLite index up to date (the caller holds the writer's lock)."""
    migrate_sqlite(conn, "index", MIGRATIONS, remedy="run `orgkit index --rebuild` to make a fresh one")


def current_version() -> int:
    return len(MIGRATIONS)
