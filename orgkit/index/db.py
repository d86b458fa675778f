"""SQLite helpers shared by the index's writers."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: all of it commits, or (on any exception, a kill included) none.

    BEGIN IMMEDIATE takes the write lock up front, so a second writer waits at
    the start (busy_timeout) rather than failing half-way.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
