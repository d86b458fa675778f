"""PostgreSQL through psycopg 3, in the call shape of orgkit's sqlite3 connections.

What differs between the engines besides SQL is how a transaction starts and
the driver: `PgConnection` takes care of those. Statements are PostgreSQL's
own, written with psycopg's `%s` placeholder (the index's backend composes
them with its `P`), and go out through `run`, `run_many` and `copy` as they
are: nothing is rewritten. `execute` takes only statements without
parameters (BEGIN, COMMIT, DDL); one with parameters is refused. The
password never comes from a notes folder: the URL is a trust-granting
setting, and libpq also reads `PGPASSWORD`, `~/.pgpass` and service files.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Sequence

from ..errors import DatabaseUnavailable, OrgkitError, first_line
from ..redact import redact
from .migrations import RECORD, Migration, Step, named, plan

SCHEMES = ("postgresql", "postgres")


def is_postgres_url(url: str | None) -> bool:
    """Whether `url` names PostgreSQL: by its scheme alone, since a malformed rest is libpq's to report."""
    scheme, sep, _ = (url or "").partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


class PgConnection:
    """A psycopg connection in autocommit mode, used as orgkit uses sqlite3 connections.

    Transactions are explicit (`BEGIN` ... `COMMIT`), as with sqlite3's
    `isolation_level=None`; `BEGIN IMMEDIATE` (SQLite's "take the write lock
    now") is a plain `BEGIN` here, since PostgreSQL locks rows, not the file.

    Round trips are what a call pays for on a busy machine (each one wakes the
    server's backend, and waits for a core when both are taken), and a reader
    opens a transaction for every few queries: so `BEGIN` is held back and sent
    in one pipeline with the transaction's first query, and a transaction that
    ran no query sends nothing at all. A query with parameters is prepared on the
    server once psycopg has seen it a few times (its `prepare_threshold`): its
    parse and plan are then paid once per connection, not per call.
    """

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self._begin: str | None = None  # a BEGIN not yet sent
        self.pool: Pool | None = None  # where close() gives it back (`pooled`); None: close() closes it

    def execute(self, sql: str, params: Iterable[Any] = ()):
        text = sql.strip()
        params = tuple(params)
        if not params and text.upper().startswith("BEGIN"):
            self._begin = "BEGIN" if text.upper().startswith("BEGIN IMMEDIATE") else text
            return _NO_ROWS
        if self._begin is not None and not params and text.upper() in ("COMMIT", "ROLLBACK"):
            self._begin = None  # nothing was asked inside: nothing to end
            return _NO_ROWS
        if not params:
            with self._lost():
                # Without parameters psycopg sends the text as it is (several statements allowed).
                self._send_begin()
                return self.raw.execute(text, None, prepare=False)
        raise TypeError("a statement with parameters goes to PostgreSQL through `run`, written with %s")

    def run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """A statement written for PostgreSQL (`%s` placeholders), sent as it is: no rewriting, and
        prepared on the server once psycopg has seen its text a few times. A held-back BEGIN goes
        in one pipeline with it."""
        with self._lost():
            if self._begin is None:
                return self.raw.execute(sql, params)
            begin, self._begin = self._begin, None
            with self.raw.pipeline():
                self.raw.execute(begin, prepare=False)
                cursor = self.raw.execute(sql, params)
            return cursor

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """`run` for each of many rows, in one pipeline (psycopg's executemany): no rewriting."""
        batch = [tuple(r) for r in rows]
        if not batch:
            return
        with self._lost(), self.raw.cursor() as cur:
            self._send_begin()
            cur.executemany(sql, batch)

    def copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Many rows into `table` through COPY: one stream instead of a statement each."""
        with self._lost(), self.raw.cursor() as cur:
            self._send_begin()
            with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as stream:
                for row in rows:
                    stream.write_row(row)

    def _send_begin(self) -> None:
        if self._begin is not None:
            begin, self._begin = self._begin, None
            self.raw.execute(begin, prepare=False)

    @property
    def lost(self) -> bool:
        """Whether the connection is gone (closed, or the server went away): open a new one."""
        return bool(self.raw.closed or self.raw.broken)

    @contextmanager
    def _lost(self) -> Iterator[None]:
        """A failure that lost the connection as `DatabaseUnavailable` (one line; the next call reconnects)."""
        import psycopg

        try:
            yield
        except psycopg.OperationalError as exc:
            if not self.lost:
                raise
            raise DatabaseUnavailable(f"the database is unavailable ({first_line(exc)}); try again shortly") from None

    def executemany(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        """sqlite3's call, refused: statements for PostgreSQL go out through `run_many` as written."""
        raise TypeError("many rows go to PostgreSQL through `run_many` or `copy`, written with %s")

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self._begin is not None or self.raw.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        """Close it, or give it back to the idle connections it was taken from (`pooled`)."""
        if self.pool is not None:
            self.pool.give(self)
        else:
            self.raw.close()

    def discard(self) -> None:
        """Close it, never to be handed out again (its session holds what it could not release)."""
        self.raw.close()
        if self.pool is not None:
            self.pool.give(self)  # lost now: the pool counts it closed


class Pool:
    """Idle connections to one database, kept for the process's next caller.

    A call of the team server used to open a connection of its own to read the
    memory tables (and a second for recall): a new session each time, forked by
    the server and warmed up from cold caches, 2 ms of its CPU and as long again
    in waiting. A connection is given back unless it was lost or its transaction
    could not be ended, and is checked before it is handed out again: one whose
    socket has something to read while idle was ended by the server (a restart,
    an administrator), so it is closed and the next one tried, and a call after
    a restart gets a fresh one instead of an error. At most `most` are open at
    once: under 32 clients a server's threads opened one each, and two workers
    with their memory and lock sessions went past the server's connection limit.
    """

    def __init__(self, url: str, named: bool, keep: int, most: int = 0) -> None:
        self.url, self.named, self.keep = url, named, keep
        self.most = most or keep  # connections open at once before a caller waits for one given back
        self._idle: list[PgConnection] = []
        self._open = 0
        self._freed = threading.Condition(threading.Lock())

    def take(self) -> PgConnection:
        """An idle connection, or a new one while fewer than `most` are open; else the next one given
        back, waiting at most POOL_WAIT seconds (then a new one all the same: a caller holding one
        while it asks for another must not wait for itself)."""
        while True:
            with self._freed:
                if not self._idle and self._open >= self.most:
                    self._freed.wait_for(lambda: bool(self._idle) or self._open < self.most, timeout=POOL_WAIT)
                conn = self._idle.pop() if self._idle else None
                if conn is None:
                    self._open += 1
            if conn is None:
                try:
                    conn = connect(self.url, named=self.named)
                except BaseException:
                    self._closed()
                    raise
                conn.pool = self
                return conn
            if _alive(conn):
                return conn
            conn.raw.close()
            self._closed()

    def give(self, conn: PgConnection) -> None:
        if not conn.lost and conn.in_transaction:
            try:
                conn.execute("ROLLBACK")  # what a caller left open (after an error) is not the next one's
            except Exception:  # noqa: BLE001 - the connection goes, whatever was wrong with it
                conn.raw.close()
        with self._freed:
            if not conn.lost and len(self._idle) < self.keep:
                self._idle.append(conn)
                self._freed.notify()
                return
        conn.raw.close()
        self._closed()

    def _closed(self) -> None:
        with self._freed:
            self._open -= 1
            self._freed.notify()


def _alive(conn: PgConnection) -> bool:
    """Whether an idle connection is still the server's: nothing arrived on it while it waited."""
    import select

    if conn.lost:
        return False
    try:
        readable, _, _ = select.select([conn.raw.fileno()], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


_pools: dict[tuple[str, bool], Pool] = {}
_pools_lock = threading.Lock()
POOL_KEEP = 16  # idle connections kept per database and process: a server's calls at once, about
POOL_MOST = 16  # connections open at once per database and process: a call past them waits for one given back,
# so 32 clients on two workers stay well inside the server's max_connections (100 by default)
POOL_WAIT = 10.0  # seconds a caller waits for a connection given back before opening one more


def _forget_pools() -> None:
    """In a forked child: the parent's idle connections are the parent's sessions (a query sent on
    one would interleave with the parent's), so the child keeps none of them (psycopg, seeing
    another process, lets them go without ending the parent's session)."""
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()  # a thread of the parent may have held it at the fork


os.register_at_fork(after_in_child=_forget_pools)


def pooled(url: str, *, named: bool = False) -> PgConnection:
    """A connection to `url` from the process's idle ones (see `Pool`), or a new one; closing it gives it back."""
    with _pools_lock:
        pool = _pools.get((url, named))
        if pool is None:
            pool = _pools[(url, named)] = Pool(url, named, POOL_KEEP, POOL_MOST)
    return pool.take()


class _NoRows:
    """The result of a statement not sent yet (a held-back BEGIN) or not needed (its COMMIT): no rows."""

    def fetchone(self) -> None:
        return None

    def fetchall(self) -> list:
        return []

    def __iter__(self) -> Iterator[Any]:
        return iter(())


_NO_ROWS = _NoRows()


class Row(tuple):
    """A result row read by position or by column name, as sqlite3.Row is (`row[0]`, `row["id"]`,
    `dict(row)`), so code written for sqlite3 rows reads PostgreSQL's unchanged."""

    names: dict[str, int]

    def __new__(cls, values: Iterable[Any], names: dict[str, int]) -> "Row":
        row = super().__new__(cls, values)
        row.names = names
        return row

    def __getitem__(self, key):  # type: ignore[override]
        return super().__getitem__(self.names[key] if isinstance(key, str) else key)

    def keys(self) -> list[str]:
        return list(self.names)


def named_rows(cursor: Any):
    """psycopg's row factory for `Row`: the column names are looked up once per result."""
    names = {column.name: number for number, column in enumerate(cursor.description or ())}
    return lambda values: Row(values, names)


def connect(url: str, *, named: bool = False) -> PgConnection:
    """A new connection (with `named`, its rows are `Row`s), or one line saying why there is none."""
    try:
        import psycopg
    except ImportError:
        raise OrgkitError("database.url names PostgreSQL but psycopg is not installed "
                          "(pip install 'orgkit[postgres]')") from None
    try:
        raw = (psycopg.connect(url, autocommit=True, connect_timeout=10, row_factory=named_rows) if named
               else psycopg.connect(url, autocommit=True, connect_timeout=10))
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailable(redact(f"cannot connect to {url}: {first_line(exc)}", url)) from None
    except psycopg.Error as exc:
        raise OrgkitError(redact(f"cannot connect to {url}: {first_line(exc)}", url)) from None
    return PgConnection(raw)



def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for `name` (per database, as PostgreSQL scopes them)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextmanager
def advisory_lock(url: str, name: str, *, wait: bool) -> Iterator[bool]:
    """Hold the session advisory lock `name` on a connection of its own; yields whether it is held.

    PostgreSQL releases a session lock when the session ends, so a writer
    killed mid-way never leaves the lock behind. Without `wait`, yields False
    at once when another session holds it. The session is one of the process's
    kept ones (`pooled`: a deposit takes two or three locks, and a new session
    for each cost the database more than the lock); the lock is released before
    the session goes back, and a session that cannot say it released it is closed.
    """
    conn = pooled(url)
    held = False
    try:
        key = lock_key(name)
        if wait:
            conn.run("SELECT pg_advisory_lock(%s)", (key,))
            held = True
        else:
            held = bool(conn.run("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0])
        yield held
    finally:
        released = True
        if held:
            try:
                released = bool(conn.run("SELECT pg_advisory_unlock(%s)", (lock_key(name),)).fetchone()[0])
            except Exception:  # noqa: BLE001 - closing the session releases it all the same
                released = False
        if released:
            conn.close()  # back to the kept sessions
        else:
            conn.discard()  # ends the session, and with it the lock


def pending(conn: PgConnection, store: str, migrations: Sequence[Migration | Step],
            remedy: str = "upgrade orgkit") -> list[Step]:
    """The steps `store` has not had in this database (read only; see `orgkit.storage.migrations`)."""
    applied: set[str] = set()
    if conn.run("SELECT to_regclass('orgkit_migrations') IS NOT NULL").fetchone()[0]:
        applied = {n for (n,) in conn.run("SELECT name FROM orgkit_migrations WHERE store = %s", (store,))}
    return plan(store, named(store, migrations), applied, schema_version(conn, store), remedy)


def migrate(conn: PgConnection, component: str, migrations: Sequence[Migration | Step]) -> None:
    """Run `component`'s steps this database has not had (their PostgreSQL text) in one transaction,
    and record them by name (and their count, for an older orgkit to refuse a newer schema).

    A transaction-scoped advisory lock makes a second process that opens the
    database at the same moment wait and then find the schema up to date.
    """
    steps = named(component, migrations)
    if not pending(conn, component, steps):
        return
    conn.execute("BEGIN")
    try:
        conn.run("SELECT pg_advisory_xact_lock(%s)", (lock_key("orgkit migrate"),))
        # The record tables are made before they are read: a session that waited for the lock
        # since before another made them may still hold their names as absent (its catalog
        # cache), where a statement that takes them sees them.
        conn.execute("CREATE TABLE IF NOT EXISTS orgkit_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        conn.execute(RECORD)
        todo = pending(conn, component, steps)
        had = {n for (n,) in conn.run("SELECT name FROM orgkit_migrations WHERE store = %s", (component,))}
        for each in steps:
            if each in todo and each.postgres:
                conn.execute(each.postgres)
            if each.name not in had:
                conn.run("INSERT INTO orgkit_migrations VALUES (%s, %s, now()::text)", (component, each.name))
        conn.run("INSERT INTO orgkit_schema VALUES (%s, %s) ON CONFLICT (component) "
                 "DO UPDATE SET version = excluded.version", (component, len(steps)))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def prepared(url: str, component: str, migrations: Sequence[Migration | Step], what: str, *,
             named: bool = False, pool: bool = False) -> PgConnection:
    """A connection (see `connect`; with `pool`, see `pooled`) to a database with `component`'s
    schema up to date; a migration that fails closes it and says why in one line naming `what`
    was being prepared. A pooled one's database is checked once per process and schema."""
    conn = pooled(url, named=named) if pool else connect(url, named=named)
    if pool and (url, component, len(migrations)) in _migrated:
        return conn
    try:
        migrate(conn, component, migrations)
    except Exception as exc:
        conn.close()
        if isinstance(exc, OrgkitError):
            raise
        raise OrgkitError(redact(f"cannot prepare {what} in {url}: {first_line(exc)}", url)) from None
    if pool:
        _migrated.add((url, component, len(migrations)))
    return conn


_migrated: set[tuple[str, str, int]] = set()  # (url, component, migrations) a pooled connection found up to date


def schema_version(conn: PgConnection, component: str) -> int:
    """The number of `component`'s migrations the database has had (0: none, or no orgkit tables yet)."""
    if not conn.run("SELECT to_regclass('orgkit_schema') IS NOT NULL").fetchone()[0]:
        return 0
    row = conn.run("SELECT version FROM orgkit_schema WHERE component = %s", (component,)).fetchone()
    return row[0] if row else 0


def array_literal(values: Sequence[int] | Sequence[str]) -> str:
    """A PostgreSQL array's text form of ints or of strings (each string quoted, its quotes and
    backslashes escaped), for a parameter the statement casts or compares to an array: psycopg
    dumps a list element by element in Python, several times the CPU of one join, and a call
    sends lists of hundreds of rows."""
    if not values or isinstance(values[0], int):
        return "{" + ",".join(map(str, values)) + "}"
    return "{" + ",".join('"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


def vector_literal(values: Any) -> str:
    """A pgvector text literal of a float vector."""
    return "[" + ",".join(map(repr, (float(v) for v in values))) + "]"
