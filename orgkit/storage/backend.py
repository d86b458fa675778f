"""The index's storage seam: what SQLite and PostgreSQL do differently, and nothing else.

A query both engines accept is written once, with the engine's placeholder
(`P`, its DB-API paramstyle: `?` for sqlite3, `%s` for psycopg) composed in
where the statement is written, and sent by the backend's `run`, `run_many`
or `among` as it is: PostgreSQL receives statements written for it, never
SQLite's rewritten. A backend answers the rest: opening a connection,
the single-writer lock (a file lock beside a SQLite file, an advisory lock in
PostgreSQL, released by the server when the writer's session dies), keeping
the word index (FTS5, or the terms table `orgkit.storage.terms` ranks with
FTS5's BM25), storing vectors (blobs read into one matrix, or pgvector ranked
in the database with HNSW above `EXACT_BELOW` vectors), many rows at once
(`insert_rows`: executemany, or COPY), and the two queries whose SQLite form
relies on SQLite's bare columns in GROUP BY.

`IndexBackend` is the interface both implement completely; a feature asks it
what the engine can do (`dense_in_database`, `stores_text`,
`shares_embedding`), never which engine it is.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Iterator, Protocol, Sequence, TypeVar

from ..errors import OrgkitError
from ..redact import redact
from ..files import LockBusy, file_lock, made_dir
from .db import IN_SLICE, Connection, Cursor, in_slices, sqlite_file
from .migrations import Step, sqlite_pending
from .schema import MIGRATIONS, migrate as migrate_sqlite
from .vocabulary import VOCAB_TABLE, Vocabulary, ensure_vocab

if TYPE_CHECKING:
    from .postgres import PgConnection


class Index(Protocol):
    """What a backend needs of the index it serves (orgkit.index.store.Index, which holds a backend)."""

    state_dir: Path

    @property
    def path(self) -> Path: ...

    @property
    def conn(self) -> Connection: ...

    def close(self) -> None: ...


class IndexBackend(Protocol):
    """Everything the index, search and memory ask of the engine under them.

    The capabilities are what a caller may decide on: `dense_in_database`,
    whether the database ranks vectors itself (else the caller's in-memory
    matrix is faster, and `dense`/`cosines` are an exact scan kept for
    completeness); `stores_text`, whether each file's text is kept (for
    machines without the notes); `shares_embedding`, whether several processes
    embed together from one work queue.
    """

    name: str
    P: str  # the engine's placeholder (its DB-API paramstyle): a statement both engines share is written with it
    dense_in_database: bool
    stores_text: bool
    shares_embedding: bool
    begin_read: str
    duplicate_ids_sql: str
    missing_texts_sql: str

    def connect(self, index: Index) -> Connection: ...
    def run(self, conn: Connection, sql: str, params: Sequence[Any] = ()) -> Cursor: ...
    def run_many(self, conn: Connection, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...
    def among(self, conn: Connection, sql: str, values: list, before: tuple = ()) -> list[tuple]: ...
    def insert_rows(self, conn: Connection, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None: ...
    def status(self, index: Index) -> dict: ...
    def pending_migrations(self, index: Index) -> list[Step]: ...
    def writer_lock(self, index: Index, *, wait: bool,
                    on_wait: Callable[[], None] | None = None) -> ContextManager[None]: ...
    def leader_lock(self, index: Index) -> ContextManager[bool]: ...
    def clear(self, index: Index) -> None: ...
    def bulk(self, conn: Connection) -> ContextManager[None]: ...
    def after_update(self, index: Index, changed: int, files: int) -> None: ...
    def store_texts(self, conn: Connection, texts: list[tuple[str, str]]) -> None: ...
    def unindex_words(self, conn: Connection, file: str) -> None: ...
    def index_words(self, conn: Connection, files: list[str]) -> None: ...
    def lexical(self, conn: Connection, phrases: list[str], heading_weight: float, limit: int) -> list: ...
    def passages_within(self, conn: Connection, spans: list[tuple[str, int, int]]) -> list[tuple[int, int, int]]: ...
    def passage_scores(self, conn: Connection, phrases: list[str], heading_weight: float,
                       rowids: list[int]) -> list: ...
    def vocabulary(self, conn: Connection) -> Vocabulary: ...
    def writes(self, conn: Connection, word: str, among: int) -> bool: ...
    def passage_count(self, conn: Connection) -> int: ...
    def vector_value(self, vector: Any) -> Any: ...
    def after_embed(self, index: Index, fingerprint: str, embedded: int) -> bool: ...
    def queue_embedding(self, conn: Connection, fingerprint: str) -> int: ...
    def claim_batch(self, conn: Connection, fingerprint: str, limit: int) -> list[str]: ...
    def unqueue(self, conn: Connection, fingerprint: str, hashes: list[str]) -> None: ...
    def vector_indexes(self, conn: Connection) -> list[str]: ...
    def dense(self, conn: Connection, fingerprint: str, query_vector: Any, take: int,
              indexed: bool | None = None, nodes: int | None = None) -> list: ...
    def has_vector_index(self, conn: Connection, fingerprint: str) -> bool: ...
    def cosines(self, conn: Connection, fingerprint: str, query_vector: Any, rows: list[int], *,
                by: str = "node") -> dict[int, float]: ...

LOCK_NAME = "index.lock"
LEADER_LOCK = "leader.lock"
DB_NAME = "index.sqlite"
BULK_CACHE_KIB = 16384  # SQLite's page cache while an update writes (its default is 2 MiB)
EXACT_BELOW = 10_000  # vectors of a model below which an exact scan is as fast as the HNSW graph (bench/README.md)
MAX_EF_SEARCH = 1000  # pgvector's ceiling: HNSW returns at most this many rows
# The HNSW graph's build parameters. At 1M vectors pgvector's defaults (m 16, ef_construction 64)
# kept recall@10 near 0.90 however long the candidate list; m 32, ef_construction 100 gave 0.958
# at ef_search 500 (p50 8.8 ms), for about twice the build time per vector (bench/README.md).
HNSW_M, HNSW_EF_CONSTRUCTION = 32, 100
ANALYZE_AT, ANALYZE_SHARE = 50, 0.1  # files an update changes, plus a share of all, that renew the statistics
# HNSW's candidate list at least this long: at 100k vectors, 100 gave recall@10 0.93 against
# exact search and 200 gave 0.994; at 1M, 200 gave 0.936 and 500 gave 0.958 (bench/README.md).
MIN_EF_SEARCH = 500


class IndexBusy(OrgkitError):
    """Another process is updating the index."""


def any_phrase(words) -> str:
    """An FTS5 expression matching any of `words`, each quoted as a phrase."""
    return " OR ".join('"{}"'.format(w.replace('"', '""')) for w in words)


class SqliteBackend:
    """The embedded default: `index.sqlite` in the state dir, FTS5, vectors as blobs."""

    name = "sqlite"
    P = "?"  # sqlite3's paramstyle, "qmark"
    dense_in_database = False  # the caller's in-memory matrix ranks faster than a scan here
    stores_text = False  # the notes are beside the index
    shares_embedding = False  # one process embeds, under the writer lock
    begin_read = "BEGIN"

    def connect(self, index: "Index") -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(sqlite_file(index.path), isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA busy_timeout = 30000")
            migrate_sqlite(conn)
        except (OSError, sqlite3.Error) as exc:
            raise OrgkitError(f"cannot open the index at {index.path}: {exc}") from None
        return conn

    def run(self, conn: Connection, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """One statement written with `P`, as sqlite3 takes it."""
        return conn.execute(sql, params)

    def run_many(self, conn: Connection, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        conn.executemany(sql, rows)

    def among(self, conn: Connection, sql: str, values: list, before: tuple = ()) -> list[tuple]:
        """Rows of `sql` whose `{}` is where a column is tested against `values`: an IN list, sent in
        slices under SQLite's variable limit (`db.in_slices`); `before` are the parameters ahead of it."""
        return in_slices(conn, sql.format("IN ({})"), values, before)

    def insert_rows(self, conn: Connection, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        """Many rows into `table`: one prepared INSERT run for each."""
        conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                         rows)

    @contextmanager
    def writer_lock(self, index: "Index", *, wait: bool, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """The single-writer lock: a file lock, released by the kernel if the process dies."""
        made_dir(index.state_dir)
        with ExitStack() as stack:
            try:
                stack.enter_context(file_lock(index.state_dir / LOCK_NAME, wait=wait, on_wait=on_wait))
            except LockBusy:
                raise IndexBusy("another orgkit process is updating the index") from None
            yield

    @contextmanager
    def leader_lock(self, index: "Index") -> Iterator[bool]:
        """The lock of the one process of a server that runs background work, if free (yields whether
        it is held): a file lock, released by the kernel if the holder dies."""
        with ExitStack() as stack:
            try:
                stack.enter_context(file_lock(index.state_dir / LEADER_LOCK, wait=False))
            except LockBusy:
                yield False
                return
            yield True

    def clear(self, index: "Index") -> None:
        """Throw the whole index away (a rebuild): its files and vector caches."""
        index.close()
        for suffix in ("", "-wal", "-shm"):
            (index.state_dir / f"{DB_NAME}{suffix}").unlink(missing_ok=True)
        for cache in index.state_dir.glob("vectors-*.bin"):
            cache.unlink(missing_ok=True)

    def status(self, index: "Index") -> dict:
        """Where the index is and its schema version, read without migrating anything."""
        from .schema import current_version

        version = 0
        if index.path.is_file():
            with sqlite3.connect(f"file:{index.path}?mode=ro", uri=True) as conn:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
        return {"backend": self.name, "location": str(index.path), "server": sqlite3.sqlite_version,
                "vector": None, "vector_extension": None,
                "schemas": {"index": {"version": version, "latest": current_version()}}}

    def pending_migrations(self, index: "Index") -> list[Step]:
        """The index's steps its file has not had (all of them where there is no file yet), read only."""
        if not index.path.is_file():
            return list(MIGRATIONS)
        conn = sqlite3.connect(f"file:{index.path}?mode=ro", uri=True)
        try:
            return sqlite_pending(conn, "index", MIGRATIONS)
        finally:
            conn.close()

    def bulk(self, conn: Connection) -> ContextManager[None]:
        return bulk_cache(conn)

    def after_update(self, index: "Index", changed: int, files: int) -> None:
        """Fold the write-ahead log into the database and truncate it, unless a reader is busy.

        One update is one transaction, so a first index leaves a log as big as the
        index itself; left alone, the state dir would hold it twice.
        """
        conn = index.conn
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            conn.execute("PRAGMA busy_timeout = 30000")

    def store_texts(self, conn: Connection, texts: list[tuple[str, str]]) -> None:
        """Nothing: the files are beside the index."""

    def unindex_words(self, conn: Connection, file: str) -> None:
        # The full-text index reads its text through a view: tell it what it indexed.
        conn.execute("INSERT INTO chunks_fts (chunks_fts, rowid, heading, body) "
                     "SELECT 'delete', rowid, heading, body FROM chunk_text WHERE file = ?", (file,))

    def index_words(self, conn: Connection, files: list[str]) -> None:
        in_slices(conn, "INSERT INTO chunks_fts (rowid, heading, body) SELECT rowid, heading, body "
                        "FROM chunk_text WHERE file IN ({})", files)

    def lexical(self, conn: Connection, phrases: list[str], heading_weight: float, limit: int) -> list:
        """(node, passage, score) of the passages matching any phrase, by FTS5's BM25."""
        match = any_phrase(phrases)
        # One expression scores and orders: the score shown is the one the list is sorted by. The full-text
        # index ranks alone and only the passages kept are joined to their nodes: joined before the sort,
        # every match was (a common word at 10k files: 22 ms, against 14).
        return conn.execute(
            f"""SELECT c.node, c.rowid, m.score
                FROM (SELECT rowid, -bm25(chunks_fts, {heading_weight}, 1.0) AS score FROM chunks_fts
                      WHERE chunks_fts MATCH ? ORDER BY score DESC, rowid LIMIT ?) m
                JOIN chunks c ON c.rowid = m.rowid ORDER BY m.score DESC, c.rowid""",
            (match, limit),
        ).fetchall()

    def passages_within(self, conn: Connection, spans: list[tuple[str, int, int]]) -> list[tuple[int, int, int]]:
        """(span's number, passage row, line) of the passages of each (file, first line, last line)."""
        out: list[tuple[int, int, int]] = []
        for start in range(0, len(spans), IN_SLICE // 4):
            part = spans[start:start + IN_SLICE // 4]
            values = ", ".join("(?, ?, ?, ?)" for _ in part)
            out += conn.execute(f"WITH s(i, file, first, last) AS (VALUES {values}) SELECT s.i, c.rowid, c.line "
                                "FROM s JOIN chunks c ON c.file = s.file AND c.line BETWEEN s.first AND s.last",
                                [v for i, span in enumerate(part, start) for v in (i, *span)]).fetchall()
        return out

    def passage_scores(self, conn: Connection, phrases: list[str], heading_weight: float,
                       rowids: list[int]) -> list:
        """(passage, BM25) of the passages `rowids` matching any phrase.

        A rowid range is a constraint FTS5 applies as it reads (a list of rowids it is not):
        a file's passages are written together, so the rows run in a few ranges, one query each.
        """
        wanted, out = set(rowids), []
        for first, last in _runs(sorted(wanted)):
            out += [row for row in conn.execute(
                f"SELECT rowid, -bm25(chunks_fts, {heading_weight}, 1.0) FROM chunks_fts "
                "WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ?", (any_phrase(phrases), first, last))
                if row[0] in wanted]
        return out

    def writes(self, conn: Connection, word: str, among: int) -> bool:
        """Whether one of the first `among` passages holding `word`'s stem writes `word` as typed (a
        word of letters and digits, lower case), in its text or its heading, as a word: not only inside
        a longer one, cut as FTS5's unicode61 cuts words (the stemmer keeps no other trace of how a
        word was written). A heading is read only where it holds the stem: a file's title is every
        passage's heading."""
        # LIKE (any case) passes the few texts holding the letters anywhere, GLOB those holding them as a
        # word; `word` is letters and digits, no wildcard of either
        inside, alone = f"%{word}%", f"*[^a-z0-9]{word}[^a-z0-9]*"
        return conn.execute(
            "SELECT 1 FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?) m "
            "JOIN chunks c ON c.rowid = m.rowid WHERE c.body LIKE ? AND ' ' || lower(c.body) || ' ' GLOB ? "
            "UNION ALL SELECT 1 FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?) m "
            "JOIN chunk_text t ON t.rowid = m.rowid WHERE t.heading LIKE ? AND ' ' || lower(t.heading) || ' ' GLOB ? "
            "LIMIT 1",
            (any_phrase([word]), among, inside, alone, "heading : " + any_phrase([word]), among, inside, alone),
        ).fetchone() is not None

    def passage_count(self, conn: Connection) -> int:
        """How many passages the index holds (the floor's and BM25's idf count against it)."""
        return conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

    def vocabulary(self, conn: Connection) -> Vocabulary:
        """How the index's stems and their passage counts are read (typo correction, orgkit.index.vocab)."""
        ensure_vocab(conn)
        return Vocabulary(conn.execute("PRAGMA database_list").fetchone()[2],
                          f"SELECT term, doc FROM {VOCAB_TABLE} WHERE term >= ? AND term < ?",
                          f"SELECT term, doc FROM {VOCAB_TABLE} WHERE term {{}}", self.run, self.among)

    def vector_value(self, vector: Any) -> Any:
        return vector.tobytes()

    def after_embed(self, index: "Index", fingerprint: str, embedded: int) -> bool:
        """Nothing in the database (False: nothing changed): the vector matrix cache beside it is the
        caller's (`vectors.after_embed`)."""
        return False

    def queue_embedding(self, conn: Connection, fingerprint: str) -> int:
        """How many passage texts lack a vector from this model: SQLite's queue is that backlog itself."""
        return conn.execute(f"SELECT count(*) FROM ({_MISSING})", (fingerprint,)).fetchone()[0]

    def claim_batch(self, conn: Connection, fingerprint: str, limit: int) -> list[str]:
        """Up to `limit` texts of the backlog: one process embeds, under the writer lock, so taking is claiming."""
        return [h for (h,) in conn.execute(f"{_MISSING} ORDER BY hash LIMIT ?", (fingerprint, limit))]

    def unqueue(self, conn: Connection, fingerprint: str, hashes: list[str]) -> None:
        """Nothing: a text with a vector has left the backlog."""

    def vector_indexes(self, conn: Connection) -> list[str]:
        """None: SQLite's vectors are scanned, never indexed."""
        return []

    def has_vector_index(self, conn: Connection, fingerprint: str) -> bool:
        """Never: SQLite's vectors are scanned."""
        return False

    def dense(self, conn: Connection, fingerprint: str, query_vector: Any, take: int,
              indexed: bool | None = None, nodes: int | None = None) -> list:
        """(node, passage, cosine) of the passages nearest `query_vector`, nearest first: an exact
        scan of the stored vectors (search ranks from its in-memory matrix instead); with `nodes`,
        each node by its nearest passage only, the first `nodes` of them."""
        import numpy as np

        rows = conn.execute("SELECT c.node, c.rowid, v.vector FROM chunks c JOIN vectors v "
                            "ON v.hash = c.hash AND v.model = ? ORDER BY c.rowid", (fingerprint,)).fetchall()
        if not rows:
            return []
        scores = np.frombuffer(b"".join(r[2] for r in rows), np.float32).reshape(len(rows), -1) \
            @ np.asarray(query_vector, np.float32)
        order = sorted(range(len(rows)), key=lambda i: (-scores[i], rows[i][1]))[:take]
        found = [(rows[i][0], rows[i][1], float(scores[i])) for i in order]
        return found if nodes is None else first_of_each_node(found, nodes)

    def cosines(self, conn: Connection, fingerprint: str, query_vector: Any, rows: list[int], *,
                by: str = "node") -> dict[int, float]:
        """Exact cosines with `query_vector` for a few rows (nodes, each by its best passage, or
        `by="rowid"` passages), read from the stored vectors."""
        import numpy as np

        assert by in ("node", "rowid")
        query = np.asarray(query_vector, np.float32)
        found = in_slices(conn, f"SELECT c.{by}, v.vector FROM chunks c JOIN vectors v "
                                f"ON v.hash = c.hash AND v.model = ? WHERE c.{by} IN ({{}})", rows, (fingerprint,))
        best: dict[int, float] = {}
        for row, blob in found:
            best[row] = max(best.get(row, -1.0), float(np.frombuffer(blob, np.float32) @ query))
        return best

    # Both pick one row per group: SQLite from a bare column, PostgreSQL with DISTINCT ON.
    # Each node of the files whose ID a node seen before it holds (index/update.py `_first_seen`).
    duplicate_ids_sql = """SELECT n.id, n.file, n.line, o.file, o.line FROM nodes n JOIN nodes o
        ON o.id = n.id AND (o.seen < n.seen OR (o.seen = n.seen AND
            (o.file < n.file OR (o.file = n.file AND o.line < n.line))))
        WHERE n.file {} GROUP BY n.rowid ORDER BY n.file, n.line"""
    missing_texts_sql = """SELECT c.hash, f.title, c.outline, c.body FROM chunks c JOIN files f ON f.path = c.file
        WHERE c.hash {} GROUP BY c.hash ORDER BY c.hash"""


RUN_GAP = 64  # rows further apart than this are read as two FTS5 ranges rather than one wider one
_MISSING = "SELECT hash FROM chunks EXCEPT SELECT hash FROM vectors WHERE model = ?"  # texts with no vector yet
_INDEX_TABLES = ("meta", "files", "outlines", "nodes", "aliases", "links", "chunks", "chunk_terms", "term_passages",
                 "vectors", "embed_queue", "file_texts")
# A passage's terms: positions per column (phrases), their counts and the passage's size (BM25, read from the key).
TERM_COLUMNS = ("chunk", "term", "heading", "body", "in_heading", "in_body", "tokens")


class PostgresBackend:
    """One PostgreSQL database (with pgvector) shared by every process that sets its URL."""

    name = "postgres"
    P = "%s"  # psycopg's paramstyle, "format" (a literal % in such a statement is written %%)
    dense_in_database = True
    stores_text = True  # for machines without the notes
    shares_embedding = True  # the embed_queue table hands out batches (`claim_batch`, orgkit.index.queue)
    begin_read = "BEGIN ISOLATION LEVEL REPEATABLE READ"  # one snapshot for every query inside

    def __init__(self, url: str) -> None:
        self.url = url

    def connect(self, index: "Index") -> Connection:
        from .postgres import prepared

        return prepared(self.url, "index", MIGRATIONS, "the index")

    def run(self, conn: Connection, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """One statement written with `P`, sent as it is (prepared once psycopg has seen it a few times)."""
        return _native(conn).run(sql, params)

    def run_many(self, conn: Connection, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        _native(conn).run_many(sql, rows)

    def among(self, conn: Connection, sql: str, values: list, before: tuple = ()) -> list[tuple]:
        """Rows of `sql` whose `{}` is where a column is tested against `values`: `= ANY(%s)`, the
        values one array (in its text form, `postgres.array_literal`), so the statement is one whatever
        their number, and prepared once it recurs."""
        from .postgres import array_literal

        if not values:
            return []
        return _native(conn).run(sql.format("= ANY(%s)"), (*before, array_literal(values))).fetchall()

    def insert_rows(self, conn: Connection, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        """Many rows into `table` through COPY: one stream instead of a statement each."""
        _native(conn).copy(table, columns, rows)

    def status(self, index: "Index") -> dict:
        """The server, its pgvector, and the schema version, read without migrating anything.

        `vector` is pgvector's installed version, else "available VERSION"
        (the first migration installs it), else None: the server lacks it;
        `vector_extension` names the extension, for a reader that knows no engine.
        """
        from . import postgres

        conn = postgres.connect(self.url)
        try:
            server = conn.execute("SHOW server_version").fetchone()[0]
            installed, available = conn.execute(
                "SELECT installed_version, default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone() or (None, None)
            version = postgres.schema_version(conn, "index")
        finally:
            conn.close()
        vector = installed or (f"available {available}" if available else None)
        return {"backend": self.name, "location": redact(self.url), "server": server, "vector": vector,
                "vector_extension": "pgvector",
                "schemas": {"index": {"version": version, "latest": len(MIGRATIONS)}}}

    def pending_migrations(self, index: "Index") -> list[Step]:
        """The index's steps the database has not had, read without migrating anything."""
        from . import postgres

        conn = postgres.connect(self.url)
        try:
            return postgres.pending(conn, "index", MIGRATIONS)
        finally:
            conn.close()

    @contextmanager
    def writer_lock(self, index: "Index", *, wait: bool, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """The single-writer lock: an advisory lock, released by the server if the writer dies."""
        from .postgres import advisory_lock

        with advisory_lock(self.url, "orgkit index writer", wait=False) as held:
            if held:
                yield
                return
        if not wait:
            raise IndexBusy("another orgkit process is updating the index")
        if on_wait is not None:
            on_wait()
        with advisory_lock(self.url, "orgkit index writer", wait=True):
            yield

    @contextmanager
    def leader_lock(self, index: "Index") -> Iterator[bool]:
        """The lock of the one process of a server that runs background work, if free (yields whether
        it is held): an advisory lock, released by the server if the holder dies."""
        from .postgres import advisory_lock

        with advisory_lock(self.url, "orgkit server leader", wait=False) as held:
            yield held

    def clear(self, index: "Index") -> None:
        index.conn.execute(f"TRUNCATE {', '.join(_INDEX_TABLES)}")
        for name in self.vector_indexes(index.conn):
            index.conn.execute(f"DROP INDEX IF EXISTS {name}")

    def bulk(self, conn: Connection) -> ContextManager[None]:
        return nullcontext()

    def after_update(self, index: "Index", changed: int, files: int) -> None:
        """Give the planner the tables' new statistics when the update `changed` as many of the
        `files` as PostgreSQL's own rule for analysing asks (autovacuum_analyze_threshold and
        _scale_factor's defaults, counted in files): autovacuum would do it too, but only on its
        next round, and a database copied from this one before then (CREATE DATABASE ...
        TEMPLATE) never gets them; without them every BM25 query is planned blind, several
        times the database's CPU a call. The terms table is vacuumed then too: BM25 reads its
        key alone only where the table's pages are marked all-visible, which a vacuum does."""
        if changed >= ANALYZE_AT + ANALYZE_SHARE * files:
            index.conn.execute("ANALYZE")
            index.conn.execute("VACUUM chunk_terms")

    def store_texts(self, conn: Connection, texts: list[tuple[str, str]]) -> None:
        """Keep each file's text, so a machine without the notes can read them."""
        _native(conn).copy("file_texts", ("path", "content"), texts)

    def unindex_words(self, conn: Connection, file: str) -> None:
        """Forget a file's terms and text, and take its passages out of the kept totals (BM25's)
        and out of each of its terms' passage counts."""
        from .terms import add_totals

        pg = _native(conn)
        pg.run("DELETE FROM file_texts WHERE path = %s", (file,))
        pg.run("UPDATE term_passages p SET passages = p.passages - gone.n FROM ("
                 "SELECT t.term, count(*) AS n FROM chunk_terms t JOIN chunks c ON c.rowid = t.chunk "
                 "WHERE c.file = %s GROUP BY t.term) AS gone WHERE p.term = gone.term", (file,))
        pg.run("DELETE FROM chunk_terms WHERE chunk IN (SELECT rowid FROM chunks WHERE file = %s)", (file,))
        passages, tokens = pg.run("SELECT count(*), coalesce(sum(tokens), 0) FROM chunks WHERE file = %s",
                                    (file,)).fetchone()
        if passages:
            add_totals(conn, -passages, -tokens)

    def index_words(self, conn: Connection, files: list[str]) -> None:
        """Store the terms of the passages of `files`, cut by FTS5's own tokenizer, and add the
        passages to the kept totals (BM25's)."""
        from .terms import add_totals, count_totals, tokenizer

        pg = _native(conn)
        rows = pg.run("SELECT rowid, heading, body FROM chunk_text WHERE file = ANY(%s)", (files,)).fetchall()
        terms, sizes = tokenizer().passages([tuple(r) for r in rows])
        pg.copy("chunk_terms", TERM_COLUMNS, ((chunk, term, heading, body, len(heading), len(body), sizes[chunk])
                                              for chunk, term, heading, body in terms))
        pg.run("UPDATE chunks c SET tokens = s.n FROM unnest(%s::bigint[], %s::int[]) AS s (rowid, n) "
                 "WHERE c.rowid = s.rowid", (list(sizes), list(sizes.values())))
        passages = Counter(term for _, term, _, _ in terms)
        pg.run("INSERT INTO term_passages (term, passages) SELECT * FROM unnest(%s::text[], %s::bigint[]) "
                 "ON CONFLICT (term) DO UPDATE SET passages = term_passages.passages + excluded.passages",
                 (list(passages), list(passages.values())))
        if sizes and not add_totals(conn, len(sizes), sum(sizes.values())):
            count_totals(conn)

    def lexical(self, conn: Connection, phrases: list[str], heading_weight: float, limit: int) -> list:
        """(node, passage, score) by FTS5's BM25, computed from the stored terms and their positions.

        Each query word is a phrase, as FTS5 reads `"word"`: its tokens (two
        for `foo_bar`) must stand in a row.
        """
        from .terms import bm25_sql, tokenizer

        tokenized = [tokens for tokens in (tokenizer().phrase(p) for p in phrases) if tokens]
        if not tokenized:
            return []
        sql, params = bm25_sql(tokenized)
        return _native(conn).run(sql, (*params, heading_weight, limit)).fetchall()

    def passages_within(self, conn: Connection, spans: list[tuple[str, int, int]]) -> list[tuple[int, int, int]]:
        """(span's number, passage row, line) of the passages of each (file, first line, last line):
        one statement for every span, the same text for any number of them."""
        from .postgres import array_literal

        if not spans:
            return []
        files, firsts, lasts = (array_literal(column) for column in zip(*spans))
        return _native(conn).run(
            "SELECT s.i - 1, c.rowid, c.line FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) "
            "WITH ORDINALITY AS s(file, first, last, i) "
            "JOIN chunks c ON c.file = s.file AND c.line BETWEEN s.first AND s.last",
            (files, firsts, lasts)).fetchall()

    def passage_scores(self, conn: Connection, phrases: list[str], heading_weight: float,
                       rowids: list[int]) -> list:
        """`lexical`'s BM25 (the whole index's statistics) for the passages `rowids`, in one statement."""
        from .terms import bm25_sql, tokenizer

        tokenized = [tokens for tokens in (tokenizer().phrase(p) for p in phrases) if tokens]
        if not tokenized or not rowids:
            return []
        sql, params = bm25_sql(tokenized, sorted(set(rowids)))
        rows = _native(conn).run(sql, (*params, heading_weight, len(set(rowids)))).fetchall()
        return [(rowid, score) for _, rowid, score in rows]

    def writes(self, conn: Connection, word: str, among: int) -> bool:
        """Whether one of the first `among` passages holding `word`'s stem writes `word` as typed, as a
        word, in its text or its heading (read only where it holds the stem), as FTS5's index answers it."""
        from .terms import tokenizer

        stems = tokenizer().phrase(word)
        inside, alone = f"%{word}%", f"(^|[^[:alnum:]]){word}([^[:alnum:]]|$)"  # `word`: letters and digits
        return _native(conn).run(
            "SELECT 1 FROM (SELECT chunk FROM chunk_terms WHERE term = ANY(%s) LIMIT %s) m "
            "JOIN chunks c ON c.rowid = m.chunk WHERE c.body ILIKE %s AND lower(c.body) ~ %s "
            "UNION ALL SELECT 1 FROM (SELECT chunk FROM chunk_terms WHERE term = ANY(%s) "
            "AND cardinality(heading) > 0 LIMIT %s) m "
            "JOIN chunk_text t ON t.rowid = m.chunk WHERE t.heading ILIKE %s AND lower(t.heading) ~ %s LIMIT 1",
            (stems, among, inside, alone, stems, among, inside, alone)).fetchone() is not None

    def passage_count(self, conn: Connection) -> int:
        """How many passages the index holds: the writer's kept total (counting every row of
        `chunks` scans the table), or a count where none is kept yet."""
        from .terms import PASSAGE_COUNT

        return int(conn.execute(PASSAGE_COUNT).fetchone()[0])

    def vocabulary(self, conn: Connection) -> Vocabulary:
        """The stems and their passage counts from the terms table (the same stems FTS5 keeps)."""
        return Vocabulary(self.url, "SELECT term, passages FROM term_passages WHERE term >= %s AND term < %s "
                                    "AND passages > 0",
                          "SELECT term, passages FROM term_passages WHERE term {} AND passages > 0",
                          self.run, self.among)

    def vector_value(self, vector: Any) -> str:
        from .postgres import vector_literal

        return vector_literal(vector)

    def after_embed(self, index: "Index", fingerprint: str, embedded: int) -> bool:
        """Give this model's vectors their HNSW index once there are enough to need one (True: it was
        built now)."""
        conn = index.conn
        row = _native(conn).run("SELECT count(*), min(vector_dims(vector)) FROM vectors WHERE model = %s",
                                (fingerprint,)).fetchone()
        name = vector_index_name(fingerprint)
        if row[0] >= EXACT_BELOW and not self.has_vector_index(conn, fingerprint):
            conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON vectors USING hnsw "
                         f"((vector::vector({int(row[1])})) vector_cosine_ops) "
                         f"WITH (m = {int(HNSW_M)}, ef_construction = {int(HNSW_EF_CONSTRUCTION)}) "
                         f"WHERE model = {_literal(fingerprint)}")
            conn.execute("ANALYZE vectors")  # row counts for the planner, so that it takes the graph
            return True
        return False

    def queue_embedding(self, conn: Connection, fingerprint: str) -> int:
        """Queue every passage text without a vector from this model (one row per text, for every
        worker of every machine); how many are queued."""
        pg = _native(conn)
        pg.run("INSERT INTO embed_queue (model, hash) SELECT %s, hash FROM "
               "(SELECT hash FROM chunks EXCEPT SELECT hash FROM vectors WHERE model = %s) AS missing "
               "ON CONFLICT DO NOTHING", (fingerprint, fingerprint))
        return pg.run("SELECT count(*) FROM embed_queue WHERE model = %s", (fingerprint,)).fetchone()[0]

    def claim_batch(self, conn: Connection, fingerprint: str, limit: int) -> list[str]:
        """Lock up to `limit` queued hashes no other worker holds (the caller's transaction keeps them;
        a worker killed half-way leaves no claim, its session's transaction rolled back)."""
        return [h for (h,) in _native(conn).run(
            "SELECT hash FROM embed_queue WHERE model = %s ORDER BY hash LIMIT %s FOR UPDATE SKIP LOCKED",
            (fingerprint, limit))]

    def unqueue(self, conn: Connection, fingerprint: str, hashes: list[str]) -> None:
        """Take a claimed batch off the queue, in the transaction that stores its vectors."""
        _native(conn).run("DELETE FROM embed_queue WHERE model = %s AND hash = ANY(%s)", (fingerprint, hashes))

    def vector_indexes(self, conn: Connection) -> list[str]:
        return [name for (name,) in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%' "
            "AND schemaname = current_schema()")]

    def has_vector_index(self, conn: Connection, fingerprint: str) -> bool:
        """Whether this model's HNSW index exists, looked up by its name (the `pg_indexes` view that
        lists them all joins five catalogs: 0.65 ms of a search's database time)."""
        return _native(conn).run("SELECT to_regclass(%s) IS NOT NULL",
                                 (vector_index_name(fingerprint),)).fetchone()[0]

    def dense(self, conn: Connection, fingerprint: str, query_vector: Any, take: int,
              indexed: bool | None = None, nodes: int | None = None) -> list:
        """(node, passage, cosine) of the passages nearest `query_vector`, nearest first.

        The `take` nearest distinct texts are found first (by the HNSW index
        when the model has one, `indexed`: as the caller knows it, None: looked
        up, and `take` fits its search list, else exactly), then every passage
        with one of those texts; with `nodes`, each node by its nearest passage
        only, the first `nodes` of them (a text many notes share is sent once a
        node, not once a passage).
        """
        from .postgres import vector_literal

        dims = len(query_vector)
        model = _literal(fingerprint)
        if take > MAX_EF_SEARCH:
            indexed = False
        elif indexed is None:
            indexed = self.has_vector_index(conn, fingerprint)
        literal = vector_literal(query_vector)
        if indexed:  # the graph's own expression, each vector cast to its dimensions
            # until the read transaction ends
            _native(conn).run(f"SET LOCAL hnsw.ef_search = {max(MIN_EF_SEARCH, take)}")
            nearest = (f"SELECT hash, vector::vector({dims}) <=> %s::vector({dims}) AS distance FROM vectors "
                       f"WHERE model = {model} ORDER BY vector::vector({dims}) <=> %s::vector({dims}) LIMIT %s")
            params: tuple = (literal, literal, take)
        else:  # exactly: an expression no HNSW index holds, each distance computed once, no cast a row
            nearest = (f"SELECT hash, vector <=> %s::vector AS distance FROM vectors WHERE model = {model} "
                       "ORDER BY distance LIMIT %s")
            params = (literal, take)
        # The passages of the nearest texts are found by their hash's index.
        passages = f"SELECT c.node, c.rowid, v.distance FROM ({nearest}) v JOIN chunks c ON c.hash = v.hash"
        if nodes is None:
            return _native(conn).run(f"SELECT node, rowid, 1 - distance FROM ({passages}) p "
                                     "ORDER BY distance, rowid", params).fetchall()
        return _native(conn).run(
            f"""SELECT node, rowid, 1 - distance FROM (SELECT DISTINCT ON (node) node, rowid, distance
                FROM ({passages}) p ORDER BY node, distance, rowid) b ORDER BY distance, rowid LIMIT %s""",
            (*params, nodes)).fetchall()

    def cosines(self, conn: Connection, fingerprint: str, query_vector: Any, rows: list[int], *,
                by: str = "node") -> dict[int, float]:
        """Exact cosines with `query_vector` for a few rows (the nodes a search shows, each by its
        best passage, or `by="rowid"` passages themselves)."""
        from .postgres import array_literal, vector_literal

        assert by in ("node", "rowid")
        if not rows:
            return {}
        dims = len(query_vector)
        # Passages have no index by node: they are found through their nodes' files (one scan of
        # every passage before, 29 ms a search on the 10k-file corpus, 1.4 ms this way). The rows
        # are one array, so the text is the same for any number of them and is prepared once.
        files = "c.file IN (SELECT file FROM nodes WHERE rowid = ANY(%s::bigint[])) AND " if by == "node" else ""
        found = _native(conn).run(
            f"""SELECT c.{by}, max(1 - (v.vector::vector({dims}) <=> %s::vector({dims}))) FROM chunks c
                JOIN vectors v ON v.hash = c.hash AND v.model = {_literal(fingerprint)}
                WHERE {files}c.{by} = ANY(%s::bigint[]) GROUP BY c.{by}""",
            (vector_literal(query_vector), *([array_literal(rows)] if by == "node" else []),
             array_literal(rows))).fetchall()
        return {row: float(cosine) for row, cosine in found}

    duplicate_ids_sql = """SELECT id, file, line, ofile, oline FROM (
        SELECT DISTINCT ON (n.rowid) n.id, n.file, n.line, o.file AS ofile, o.line AS oline
        FROM nodes n JOIN nodes o
        ON o.id = n.id AND (o.seen < n.seen OR (o.seen = n.seen AND
            (o.file < n.file OR (o.file = n.file AND o.line < n.line))))
        WHERE n.file {} ORDER BY n.rowid, o.file, o.line) d ORDER BY file, line"""
    missing_texts_sql = """SELECT DISTINCT ON (c.hash) c.hash, f.title, c.outline, c.body
        FROM chunks c JOIN files f ON f.path = c.file WHERE c.hash {} ORDER BY c.hash, c.rowid"""


def _runs(rowids: list[int], gap: int = RUN_GAP) -> list[tuple[int, int]]:
    """Sorted rows as (first, last) ranges, a new one where the next row is more than `gap` past the last."""
    runs: list[tuple[int, int]] = []
    for rowid in rowids:
        if runs and rowid - runs[-1][1] <= gap:
            runs[-1] = (runs[-1][0], rowid)
        else:
            runs.append((rowid, rowid))
    return runs


def first_of_each_node(rows: Iterable[tuple[int, int, Any]], nodes: int) -> list[tuple[int, int, Any]]:
    """The first (node, passage, score) row of each node, in the rows' order, up to `nodes` of them:
    a ranking of passages, best first, as a ranking of nodes by their best passage."""
    seen: set[int] = set()
    out = []
    for row in rows:
        if row[0] not in seen:
            seen.add(row[0])
            out.append(row)
            if len(out) >= nodes:
                break
    return out


def _native(conn: Connection) -> "PgConnection":
    """The psycopg connection `conn` is (the PostgreSQL backend opens no other kind), for its native calls."""
    from .postgres import PgConnection

    assert isinstance(conn, PgConnection)
    return conn


def vector_index_name(fingerprint: str) -> str:
    return f"vectors_hnsw_{hashlib.sha1(fingerprint.encode()).hexdigest()[:12]}"


def _literal(text: str) -> str:
    """`text` as an SQL string literal (a partial index's predicate must name the model literally)."""
    return "'" + text.replace("'", "''") + "'"


def backend_for(url: str | None) -> IndexBackend:
    """The backend `database.url` names: none set, the SQLite files in the state dir."""
    from .postgres import SCHEMES, is_postgres_url

    if not url:
        return SqliteBackend()
    if not is_postgres_url(url):
        raise OrgkitError(f"database.url must start with {' or '.join(s + '://' for s in SCHEMES)}")
    return PostgresBackend(url)


F = TypeVar("F")
D = TypeVar("D")


def choose(url: str | None, files: F, database: D) -> F | D:
    """`database` when `url` (`database.url`) names a database server, else `files`: how a store
    beside the index (memory, tokens) picks its engine as the index does. A URL of no engine's
    scheme is left to `backend_for` to refuse."""
    from .postgres import is_postgres_url

    return database if is_postgres_url(url) else files


@contextmanager
def bulk_cache(conn: Connection) -> Iterator[None]:
    """A larger page cache for the block, then the one the connection had.

    Inserting a file's passages and nodes updates indexes keyed by hash and
    by ID, in random order: with the default 2 MiB cache their pages leave
    and come back many times (83,000 passages into the hash index: 0.22 s,
    0.14 s with this cache). Pages are taken only as they are used and
    given back after.
    """
    before = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {int(before)}")
