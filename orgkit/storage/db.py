"""Helpers for connections in the sqlite3 call shape (`postgres.PgConnection` speaks it too)."""

from __future__ import annotations

from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol

from ..confine import SQLITE_SIDE_FILES, writable
from ..files import made_dir


class Cursor(Protocol):
    """The rows of one statement, as both engines' cursors give them."""

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What flows through `Index.conn` and the memory store: a `sqlite3.Connection` opened with
    `isolation_level=None`, or `postgres.PgConnection`, which speaks the same calls (`?`
    placeholders, explicit BEGIN ... COMMIT)."""

    def execute(self, sql: str, params: Any = ..., /) -> Cursor: ...
    def executemany(self, sql: str, rows: Iterable[Any], /) -> Any: ...
    @property
    def in_transaction(self) -> bool: ...
    def close(self) -> None: ...


def sqlite_file(path: Path) -> Path:
    """`path`, ready for sqlite3 to open: refused when it or a side file SQLite opens beside it
    (journal, WAL) leads out of its root through a symlink, and its dir made where missing."""
    made_dir(writable(path, *SQLITE_SIDE_FILES).parent)
    return path


IN_SLICE = 500  # values per IN list, under SQLite's variable limit


def in_slices(conn: Connection, sql: str, values: list, before: tuple = ()) -> list[tuple]:
    """Rows of `sql`, whose `IN ({})` is a list of `values`, run in slices under SQLite's variable
    limit; `before` are the parameters ahead of the list.

    On PostgreSQL the list is one array parameter (`= ANY(...)`, in its text
    form: `postgres.array_literal`): one statement
    text for any number of values, so it is prepared once and planned from its
    plan, where a placeholder a value made a new text for each length, parsed
    and planned afresh every call (half the client's CPU of such a query, and
    more of the server's).
    """
    arrays = getattr(conn, "lists_as_arrays", False) and "IN ({})" in sql
    any_of = sql.replace("IN ({})", "= ANY(?)")
    out: list[tuple] = []
    for start in range(0, len(values), IN_SLICE):
        part = list(values[start:start + IN_SLICE])
        if arrays:
            from .postgres import array_literal

            out.extend(conn.execute(any_of, (*before, array_literal(part))).fetchall())
        else:
            out.extend(conn.execute(sql.format(",".join("?" * len(part))), (*before, *part)).fetchall())
    return out


@contextmanager
def write_transaction(conn: Connection) -> Iterator[None]:
    """One write transaction: all of it commits, or (on any exception, a kill included) none.

    BEGIN IMMEDIATE takes the write lock up front, so a second writer waits at
    the start (busy_timeout) rather than failing half-way. A transaction the engine
    already rolled back itself (SQLite does on a full disk) is not rolled back again:
    the error that ended it is the one raised.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        with suppress(Exception):
            conn.execute("ROLLBACK")
        raise
