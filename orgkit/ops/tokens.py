"""token add|list|revoke: the team server's callers and their roles (see orgkit.tokens: kept in the
user's data dir, or in the database with PostgreSQL, never with the notes)."""

from __future__ import annotations

from typing import Any

from . import declare
from .context import OpContext
from .spec import Op, Param


def _store(ctx: OpContext):
    from ..tokens import store_for

    return store_for(ctx.config, ctx.warn)


def token_add(ctx: OpContext, args: dict[str, Any]) -> dict:
    token = _store(ctx).add(args["name"], args["role"])
    ctx.warn("the token is shown only now: keep it (only its hash is stored)")
    return {"name": args["name"], "role": args["role"], "token": token}


def token_list(ctx: OpContext, args: dict[str, Any]) -> list[dict]:
    return _store(ctx).listing()


def token_revoke(ctx: OpContext, args: dict[str, Any]) -> dict:
    return _store(ctx).revoke(args["name"])


# A caller of a server must not mint, see or revoke the credentials that servers check.
TOKENS_CLI_ONLY = "makes, lists and revokes the team server's tokens"
NAME = Param("name", "string", "The caller's name (kept as the actor in the audit log).", required=True,
             positional=True, metavar="NAME")

declare(Op("token_add", "Make a bearer token for the team server (`serve --http`); it is printed once.", token_add,
           params=(NAME, Param("role", "string", "What the caller may do.", default="reader",
                               enum=("reader", "agent", "reviewer", "admin"))),
           result="{name, role, token}", writes=True, cli=("token", "add"), mcp=False, cli_only=TOKENS_CLI_ONLY,
           role="admin"))
declare(Op("token_list", "The team server's tokens: name, role, created, revoked (never the token).", token_list,
           result="[{name, role, created, revoked}]", cli=("token", "list"), mcp=False, cli_only=TOKENS_CLI_ONLY,
           role="admin"))
declare(Op("token_revoke", "Revoke a token: its caller is refused from the next request on.", token_revoke,
           params=(NAME,), result="{name, role, created, revoked}", writes=True, cli=("token", "revoke"), mcp=False,
           cli_only=TOKENS_CLI_ONLY, role="admin"))
