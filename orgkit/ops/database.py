"""db status / db migrate: the storage the index and the memory store (and, on PostgreSQL, the tokens)
live in, and their named migrations."""

from __future__ import annotations

from typing import Any

from . import declare
from .context import OpContext
from .shown import for_caller
from .spec import Op, Param


def _status(ctx: OpContext) -> dict:
    """The index backend's status, with the memory store's schema, and the tokens' where they are a table."""
    from ..storage import token_table
    from ..memory.store import MIGRATIONS, place

    status = ctx.index.backend.status(ctx.index)
    latest = {"memory": len(MIGRATIONS), "tokens": len(token_table.MIGRATIONS)}
    for name, version in place(ctx.config).versions(tuple(latest)).items():  # none: the memory flow was never used
        status["schemas"][name] = {"version": version, "latest": latest[name]}
    return status


def db_status(ctx: OpContext, args: dict[str, Any]) -> dict:
    """The backend, where it is, the server and its pgvector, and each schema's version."""
    status = _status(ctx)
    behind = [name for name, s in status["schemas"].items() if s["version"] < s["latest"]]
    if status["vector_extension"] and status["vector"] is None:  # the engine ranks vectors with an extension it lacks
        ctx.warn(f"the server has no {status['vector_extension']} extension (0.5 or later is needed): install it, "
                 "then `orgkit db migrate`")
    elif behind:
        ctx.warn(f"schema behind: {', '.join(behind)}; `orgkit db migrate` (or any command) brings it up to date")
    return for_caller(ctx, status)


def _pending(ctx: OpContext) -> dict[str, list[dict]]:
    """Each store's steps still to run on this engine, by name, with their SQL (nothing is changed)."""
    from ..memory.store import place

    steps = {"index": ctx.index.backend.pending_migrations(ctx.index), **place(ctx.config).pending()}
    pg = ctx.index.backend.name == "postgres"
    return {store: [{"name": s.name, "sql": s.postgres if pg else s.sqlite} for s in todo]
            for store, todo in steps.items()}


def db_migrate(ctx: OpContext, args: dict[str, Any]) -> dict:
    """Apply the missing migrations (opening the index does: one transaction, one process at a time)."""
    from ..config import ensure_state_dir

    from ..memory.store import place
    from ..tokens import store_for

    if args.get("dry_run"):
        return {**_status(ctx), "would_run": _pending(ctx)}
    ensure_state_dir(ctx.config)
    before = _status(ctx)
    ctx.index.conn
    memory = place(ctx.config)
    if memory.made():  # a memory store never used is not made here
        memory.connect().close()
    if memory.holds_tokens:
        store_for(ctx.config, ctx.warn).listing()
    after = _status(ctx)
    return {**after, "migrated": {name: [before["schemas"][name]["version"], s["version"]]
                                  for name, s in after["schemas"].items()}}


declare(Op("db_status", "The storage the index lives in (SQLite in the state dir, or the PostgreSQL database "
           "database.url names, password masked), the server and its pgvector, and each schema's version against "
           "the latest.", db_status, cli=("db", "status"), mcp=False, role="admin",
           result="{backend, location, server, vector, vector_extension, schemas: {NAME: {version, latest}}}"))
declare(Op("db_migrate", "Bring the storage's schemas up to date with their named migrations (one transaction; "
           "a second process waits, then finds nothing to do).", db_migrate, cli=("db", "migrate"), mcp=False,
           writes=True, role="admin",
           params=(Param("dry_run", "boolean", "Show each store's steps still to run, with their SQL, and run none."),),
           result="{backend, location, server, vector, vector_extension, schemas, migrated?: {NAME: [FROM, TO]}, "
           "would_run?: {NAME: [{name, sql}]}}"))
