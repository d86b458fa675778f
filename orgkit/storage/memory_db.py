"""The memory store's engines: where its tables live, how a process connects, and its locks.

The memory flow's SQL and its numbered migrations are its own
(`orgkit.memory.store`); what differs between the engines is here: a
`memory.sqlite` file in the data dir with `flock` locks beside it, or the
PostgreSQL database `database.url` names, with session advisory locks.
`MemoryDatabase` is the interface both implement; the memory flow and
`orgkit db` ask it, never which engine it is. Each engine sends the memory
store's statements as they are written for it: a statement both engines share
is written with the engine's placeholder (`P`, its DB-API paramstyle), and
`run` hands it to the driver untouched.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager, Iterator, Protocol, Sequence, cast

from ..confine import writable
from ..errors import OrgkitError
from ..files import LockBusy, file_lock, made_dir
from .backend import backend_for, choose
from .db import Connection, Cursor, sqlite_file
from .migrations import Engine, Migration, Step, migrate_sqlite, named, sqlite_pending, sqlite_version

if TYPE_CHECKING:
    from .postgres import PgConnection

DB_NAME = "memory.sqlite"
OPEN_TRIES = 5  # opening a WAL database refused at once (see SqliteFiles.connect) is tried this often
LOCK_NAME = "memory.lock"
LOCKS_DIR = "locks"


class MemoryDatabase(Protocol):
    """Everything the memory flow asks of the engine under its tables.

    `errors` are the engine's exceptions (an error of the database is said in
    one line); `holds_tokens`, whether the tokens table lives in this database too;
    `engine`, which statements it takes where the two differ, and `P` its placeholder.
    """

    errors: tuple[type[Exception], ...]
    holds_tokens: bool
    engine: Engine
    P: str

    def run(self, conn: Connection, sql: str, params: Sequence[Any] = ()) -> Cursor: ...
    def connect(self) -> Connection: ...
    def existing(self) -> Connection | None: ...
    def made(self) -> bool: ...
    def versions(self, stores: Sequence[str]) -> dict[str, int]: ...
    def pending(self) -> dict[str, list[Step]]: ...
    def lock(self, name: str, *, wait: bool) -> ContextManager[Any]: ...
    def writer(self) -> ContextManager[Any]: ...
    def forget(self, name: str) -> None: ...


class SqliteFiles:
    """The embedded default: `memory.sqlite` in the data dir, and `flock` locks beside it
    (the kernel releases a lock when its holder dies)."""

    holds_tokens = False  # the tokens are a file of their own
    engine: Engine = "sqlite"
    P = "?"  # sqlite3's paramstyle, "qmark"

    def __init__(self, directory: Path, migrations: Sequence[Migration], adopt: tuple[str, int] | None) -> None:
        self.dir = directory
        self.path = directory / DB_NAME
        self.migrations = migrations
        self.adopt = adopt
        self.errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def run(self, conn: Connection, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """One statement written with `P`, as sqlite3 takes it."""
        return conn.execute(sql, params)

    def connect(self) -> sqlite3.Connection:
        try:
            sqlite_file(self.path)
        except OSError as exc:
            raise OrgkitError(f"cannot create the data dir {self.dir}: {exc.strerror or exc}") from None
        attempt = 1
        while True:
            try:
                return self._open()
            except sqlite3.Error as exc:
                # Opening a WAL database while another process recovers or checkpoints it can be
                # refused at once, without the busy timeout (SQLite documents it): try again.
                locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
                if not locked or attempt >= OPEN_TRIES:
                    raise OrgkitError(f"cannot open the memory database {self.path}: {exc}") from None
            time.sleep(0.05 * attempt)
            attempt += 1

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=60, check_same_thread=False)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 60000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            migrate_sqlite(conn, "memory", self.migrations, adopt=self.adopt)
        except BaseException:
            conn.close()
            raise
        return conn

    def existing(self) -> sqlite3.Connection | None:
        """A read-only connection, or None when the file was never made."""
        if not self.path.is_file():
            return None
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)
        conn.row_factory = sqlite3.Row
        return conn

    def made(self) -> bool:
        """Whether the memory flow was ever used here (a store never used is not made by migrating)."""
        return self.path.is_file()

    def versions(self, stores: Sequence[str]) -> dict[str, int]:
        """The memory store's version, when its file was made: the file holds no other store."""
        conn = self.existing()
        if conn is None or "memory" not in stores:
            return {}
        try:
            return {"memory": sqlite_version(conn)}
        finally:
            conn.close()

    def pending(self) -> dict[str, list[Step]]:
        """The memory store's steps its file has not had (all of them where there is no file yet), read only."""
        conn = self.existing()
        if conn is None:
            return {"memory": list(named("memory", self.migrations))}
        try:
            return {"memory": sqlite_pending(conn, "memory", self.migrations, adopt=self.adopt)}
        finally:
            conn.close()

    def lock(self, name: str, *, wait: bool) -> ContextManager[Any]:
        locks = made_dir(self.dir / LOCKS_DIR)
        return file_lock(locks / f"{name}.lock", wait=wait)

    def writer(self) -> ContextManager[Any]:
        return file_lock(self.dir / LOCK_NAME, wait=True)

    def forget(self, name: str) -> None:
        writable(self.dir / LOCKS_DIR / f"{name}.lock").unlink(missing_ok=True)


_made: set[str] = set()  # databases this process found with the memory tables


class PostgresDatabase:
    """The tables in the PostgreSQL database `url` names, and its session advisory locks: the
    server releases one when its holder's connection ends, a killed process's included, so
    across machines a free lock still means its holder died."""

    holds_tokens = True
    engine: Engine = "postgres"
    P = "%s"  # psycopg's paramstyle, "format" (a literal % in such a statement is written %%)

    def __init__(self, url: str, migrations: Sequence[Migration]) -> None:
        self.url = url
        self.migrations = migrations
        try:
            import psycopg
        except ImportError:  # connecting says so in one line
            self.errors: tuple[type[Exception], ...] = ()
        else:
            self.errors = (psycopg.Error,)

    def run(self, conn: Connection, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """One statement written for PostgreSQL, sent as it is (and prepared on the server once
        psycopg has seen its text a few times)."""
        return cast("PgConnection", conn).run(sql, params)

    def connect(self) -> Connection:
        """A connection from the process's idle ones (closing it gives it back): a server's every
        call reads these tables, and a new session per call cost the database more than the reading."""
        from .postgres import prepared

        return prepared(self.url, "memory", self.migrations, "the memory tables", named=True, pool=True)

    def existing(self) -> Connection | None:
        """A connection (pooled, as `connect`'s), or None when no process made the memory tables yet."""
        from . import postgres

        conn = postgres.pooled(self.url, named=True)
        if self.url in _made:
            return conn
        if postgres.schema_version(conn, "memory") == 0:
            conn.close()
            return None
        _made.add(self.url)  # tables once made stay: no need to ask again
        return conn

    def made(self) -> bool:
        """Always: the database is there, and migrating makes its tables."""
        return True

    def versions(self, stores: Sequence[str]) -> dict[str, int]:
        """Each store's version in the database (0: not made yet)."""
        from . import postgres

        conn = postgres.connect(self.url)
        try:
            return {name: postgres.schema_version(conn, name) for name in stores}
        finally:
            conn.close()

    def pending(self) -> dict[str, list[Step]]:
        """The steps of the memory tables and of the tokens table the database has not had, read only."""
        from . import postgres, token_table

        conn = postgres.connect(self.url)
        try:
            return {"memory": postgres.pending(conn, "memory", self.migrations),
                    "tokens": postgres.pending(conn, "tokens", token_table.MIGRATIONS)}
        finally:
            conn.close()

    @contextmanager
    def lock(self, name: str, *, wait: bool) -> Iterator[None]:
        from .postgres import advisory_lock

        with advisory_lock(self.url, f"orgkit memory {name}", wait=wait) as held:
            if not held:
                raise LockBusy(name)
            yield

    def writer(self) -> ContextManager[None]:
        return self.lock("writer", wait=True)

    def forget(self, name: str) -> None:
        """Nothing: an advisory lock leaves nothing behind."""


def memory_database(url: str | None, data_dir: Path, migrations: Sequence[Migration],
                    adopt: tuple[str, int] | None = None) -> MemoryDatabase:
    """Where the memory tables are: the database `url` (`database.url`) names, else `data_dir`.
    `adopt` is `migrate_sqlite`'s, for memory.sqlite files made before versions were recorded."""
    backend_for(url)  # a URL of no engine's scheme is refused here as for the index
    database: MemoryDatabase = choose(url, lambda: SqliteFiles(data_dir, migrations, adopt),
                                      lambda: PostgresDatabase(url or "", migrations))()
    return database
