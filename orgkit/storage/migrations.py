"""One migration runner for every store (the index, the memory store, the tokens, the sign-in
sessions), on both engines.

A store's schema is a list of named steps (`Step`): each one SQL text for
each engine, or None where that engine has nothing to do. A database records
the steps it has had by name, in the table `orgkit_migrations` (store, name,
when): SQLite in each store's own file, PostgreSQL in one table for every
store. The missing steps run in list order, in one transaction (a second
process waits, then finds nothing to do); a database that records a step
this orgkit does not know was written by a newer one and is refused rather
than guessed at.

Earlier releases counted their migrations instead (SQLite's `PRAGMA
user_version`, PostgreSQL's `orgkit_schema` table): a list's first steps are
those numbered scripts, in their order, so a database that records no step
yet has its count's first steps recorded as done, and the rest run. The count
is still written after each migration, so an older orgkit refuses a database
a newer one changed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal, Sequence, Union

from ..errors import OrgkitError

Engine = Literal["sqlite", "postgres"]
Migration = Union[str, tuple[str, str]]  # an unnamed step: one text for both engines, or (sqlite, postgres)


@dataclass(frozen=True)
class Step:
    """One named migration: its SQL on each engine (None: nothing to do there, only recorded)."""

    name: str
    sqlite: str | None
    postgres: str | None

    def sql(self, engine: Engine) -> str | None:
        return self.sqlite if engine == "sqlite" else self.postgres


def step(name: str, migration: Migration) -> Step:
    """A named step from one text for both engines, or a pair (sqlite, postgres)."""
    return Step(name, sql(migration, "sqlite"), sql(migration, "postgres"))


def named(store: str, migrations: Sequence[Migration | Step]) -> tuple[Step, ...]:
    """`migrations` as named steps: a list still written as numbered texts names each by its
    store and number (`memory 1`), as the database that counted them knew it."""
    return tuple(m if isinstance(m, Step) else step(f"{store} {k}", m) for k, m in enumerate(migrations, 1))


def sql(migration: Migration, engine: Engine) -> str:
    """The text of an unnamed migration for `engine`."""
    if isinstance(migration, str):
        return migration
    return migration[0] if engine == "sqlite" else migration[1]


RECORD = ("CREATE TABLE IF NOT EXISTS orgkit_migrations (store TEXT NOT NULL, name TEXT NOT NULL, "
          "applied TEXT NOT NULL, PRIMARY KEY (store, name))")


def plan(store: str, steps: Sequence[Step], applied: set[str], counted: int, remedy: str) -> list[Step]:
    """The steps still to run, given the names a database records (`applied`) and how many steps it
    counts (`counted`): where it records no name yet, the numbered scheme's first `counted` ones ran."""
    if counted > len(steps):  # a newer orgkit counts more steps than this one knows
        raise OrgkitError(f"the {store} schema was written by a newer orgkit (schema {counted}); {remedy}")
    if not applied:
        return list(steps[counted:])
    unknown = applied - {s.name for s in steps}
    if unknown:
        raise OrgkitError(f"the {store} schema was written by a newer orgkit (step {sorted(unknown)[0]!r}); {remedy}")
    return [s for s in steps if s.name not in applied]


def sqlite_version(conn: sqlite3.Connection) -> int:
    """How many migrations a SQLite store has had, as the count earlier releases read."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def sqlite_pending(conn: sqlite3.Connection, store: str, migrations: Sequence[Migration | Step], *,
                   remedy: str = "upgrade orgkit", adopt: tuple[str, int] | None = None) -> list[Step]:
    """The steps a SQLite store has not had (read only). `adopt` is `(table, count)` for a store an
    earlier release made without recording anything: one at count 0 that holds `table` had `count`."""
    steps = named(store, migrations)
    applied: set[str] = set()
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'orgkit_migrations'").fetchone():
        applied = {n for (n,) in conn.execute("SELECT name FROM orgkit_migrations WHERE store = ?", (store,))}
    counted = sqlite_version(conn)
    if not applied and counted == 0 and adopt is not None and conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (adopt[0],)).fetchone():
        counted = adopt[1]
    return plan(store, steps, applied, counted, remedy)


def migrate_sqlite(conn: sqlite3.Connection, store: str, migrations: Sequence[Migration | Step], *,
                   remedy: str = "upgrade orgkit", adopt: tuple[str, int] | None = None) -> None:
    """Run the steps a SQLite store has not had, in one write transaction, and record them."""
    steps = named(store, migrations)
    if sqlite_version(conn) == len(steps) and not sqlite_pending(conn, store, steps, remedy=remedy, adopt=adopt):
        return
    conn.execute("BEGIN IMMEDIATE")  # the write lock up front: a second process waits, then finds nothing to do
    try:
        todo = sqlite_pending(conn, store, steps, remedy=remedy, adopt=adopt)
        conn.execute(RECORD)
        had = {n for (n,) in conn.execute("SELECT name FROM orgkit_migrations WHERE store = ?", (store,))}
        for each in steps:
            if each in todo:
                for statement in statements(each.sqlite or ""):
                    conn.execute(statement)
            if each.name not in had:
                conn.execute("INSERT INTO orgkit_migrations VALUES (?, ?, datetime('now'))", (store, each.name))
        conn.execute(f"PRAGMA user_version = {len(steps)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def statements(script: str) -> list[str]:
    """executescript() would commit; statements run one by one stay in our transaction."""
    return [s.strip() for s in script.split(";") if s.strip()]
