"""One migration runner for every store (the index, the memory store, the tokens), on both engines.

A store's schema is one numbered list. Each migration is one SQL text both
engines accept, or a pair `(sqlite, postgres)` only where their dialects
differ. A database records how many migrations it has had: SQLite in
`PRAGMA user_version` (each store has a file of its own), PostgreSQL in the
`orgkit_schema` table, one row per store (`postgres.migrate`, under an
advisory lock). The missing ones are applied in one transaction; a database
written by a newer orgkit is refused rather than guessed at.
"""

from __future__ import annotations

import sqlite3
from typing import Literal, Sequence, Union

from ..errors import OrgkitError

Migration = Union[str, tuple[str, str]]  # one text for both engines, or (sqlite, postgres)
Engine = Literal["sqlite", "postgres"]


def sql(migration: Migration, engine: Engine) -> str:
    """The text of `migration` for `engine`."""
    if isinstance(migration, str):
        return migration
    return migration[0] if engine == "sqlite" else migration[1]


def refuse_newer(store: str, version: int, migrations: Sequence[Migration], remedy: str) -> None:
    """Refuse a database that has had more migrations than this orgkit knows."""
    if version > len(migrations):
        raise OrgkitError(f"the {store} schema was written by a newer orgkit (schema {version}); {remedy}")


def sqlite_version(conn: sqlite3.Connection) -> int:
    """How many migrations a SQLite store has had."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate_sqlite(conn: sqlite3.Connection, store: str, migrations: Sequence[Migration], *,
                   remedy: str = "upgrade orgkit", adopt: tuple[str, int] | None = None) -> None:
    """Apply the missing migrations to a SQLite store in one write transaction.

    `adopt` is `(table, version)` for a store an earlier release made without
    recording a version: a database at version 0 that already holds `table`
    is stamped `version` (its rows kept), then the later migrations apply.
    """
    version = sqlite_version(conn)
    refuse_newer(store, version, migrations, remedy)
    if version == len(migrations):
        return
    conn.execute("BEGIN IMMEDIATE")  # the write lock up front: a second process waits, then finds nothing to do
    try:
        version = sqlite_version(conn)
        if version == 0 and adopt is not None and conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (adopt[0],)).fetchone():
            version = adopt[1]
        for number in range(version, len(migrations)):
            for statement in statements(sql(migrations[number], "sqlite")):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {len(migrations)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def statements(script: str) -> list[str]:
    """executescript() would commit; statements run one by one stay in our transaction."""
    return [s.strip() for s in script.split(";") if s.strip()]
