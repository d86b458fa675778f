"""db status / db migrate: the storage the index and the memory store (and, on PostgreSQL, the tokens)
live in, and their numbered migrations."""

from __future__ import annotations

from typing import Any

from . import declare
from .context import OpContext
from .shown import for_caller
from .spec import Op


def _status(ctx: OpContext) -> dict:
    """The index backend's status, with the memory store's schema, and the tokens' where they are a table."""
    from .. import tokens
    from ..memory.store import MIGRATIONS, PostgresDatabase, place
    from ..storage import postgres
    from ..storage.migrations import sqlite_version

    status = ctx.index.backend.status(ctx.index)
    memory = place(ctx.config)
    if isinstance(memory, PostgresDatabase):
        conn = postgres.connect(memory.url)
        try:
            for name, migrations in (("memory", MIGRATIONS), ("tokens", tokens.MIGRATIONS)):
                status["schemas"][name] = {"version": postgres.schema_version(conn, name), "latest": len(migrations)}
        finally:
            conn.close()
        return status
    made = memory.existing()  # None: the memory flow was never used, and no store was made
    if made is not None:
        try:
            status["schemas"]["memory"] = {"version": sqlite_version(made), "latest": len(MIGRATIONS)}
        finally:
            made.close()
    return status


def db_status(ctx: OpContext, args: dict[str, Any]) -> dict:
    """The backend, where it is, the server and its pgvector, and each schema's version."""
    status = _status(ctx)
    behind = [name for name, s in status["schemas"].items() if s["version"] < s["latest"]]
    if status["backend"] == "postgres" and status["vector"] is None:
        ctx.warn("the server has no pgvector extension (0.5 or later is needed): install it, then `orgkit db migrate`")
    elif behind:
        ctx.warn(f"schema behind: {', '.join(behind)}; `orgkit db migrate` (or any command) brings it up to date")
    return for_caller(ctx, status)


def db_migrate(ctx: OpContext, args: dict[str, Any]) -> dict:
    """Apply the missing migrations (opening the index does: one transaction, one process at a time)."""
    from ..config import ensure_state_dir

    from ..memory.store import PostgresDatabase, place
    from ..tokens import PgTokenStore

    ensure_state_dir(ctx.config)
    before = _status(ctx)
    ctx.index.conn
    memory = place(ctx.config)
    if isinstance(memory, PostgresDatabase):
        memory.connect().close()
        PgTokenStore(memory.url).listing()
    elif memory.path.is_file():  # a memory store never used is not made here
        memory.connect().close()
    after = _status(ctx)
    return {**after, "migrated": {name: [before["schemas"][name]["version"], s["version"]]
                                  for name, s in after["schemas"].items()}}


declare(Op("db_status", "The storage the index lives in (SQLite in the state dir, or the PostgreSQL database "
           "database.url names, password masked), the server and its pgvector, and each schema's version against "
           "the latest.", db_status, cli=("db", "status"), mcp=False, role="admin",
           result="{backend, location, server, vector, schemas: {NAME: {version, latest}}}"))
declare(Op("db_migrate", "Bring the storage's schemas up to date with their numbered migrations (one transaction; "
           "a second process waits, then finds nothing to do).", db_migrate, cli=("db", "migrate"), mcp=False,
           writes=True,
           result="{backend, location, server, vector, schemas, migrated: {NAME: [FROM, TO]}}"))
