"""How a call is answered on every surface: one table of failures, one reply of a result.

A failed call raises one of a few kinds of error; this table says what each
surface makes of each kind (the command line's exit status, the team server's
HTTP status, the JSON-RPC error code of an MCP request that fails as a whole),
so an unknown ID is the same "not found" everywhere. The adapters (cli,
serve, mcp, http) look failures up here and build replies with `reply`; none
of them decides a status of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import BadParameter, NotFound, OrgkitError, Refused, TooMany, Unavailable, say
from .spec import ParamError

# JSON-RPC's own codes, and MCP's for a resource that does not exist.
INVALID_PARAMS, INTERNAL_ERROR, RESOURCE_NOT_FOUND = -32602, -32603, -32002
# Codes of the implementation-defined server range (-32000 to -32099).
SERVER_REFUSED, SERVER_UNAVAILABLE = -32001, -32003


@dataclass(frozen=True)
class Answer:
    """What each surface answers for one kind of failure."""

    kind: str
    exit: int  # the command line's exit status
    http: int  # the team server's status
    jsonrpc: int  # the JSON-RPC error code


# The kinds, most specific first: a failure is answered by the first entry it is an instance of.
ANSWERS: tuple[tuple[type[BaseException], Answer], ...] = (
    (NotFound, Answer("not found", 1, 404, RESOURCE_NOT_FOUND)),
    (Refused, Answer("refused", 1, 403, SERVER_REFUSED)),
    (Unavailable, Answer("unavailable", 1, 503, SERVER_UNAVAILABLE)),
    (TooMany, Answer("too many calls", 1, 429, SERVER_UNAVAILABLE)),
    (ParamError, Answer("bad parameters", 2, 400, INVALID_PARAMS)),
    (RecursionError, Answer("bad parameters", 2, 400, INVALID_PARAMS)),
    (BadParameter, Answer("bad parameters", 1, 400, INVALID_PARAMS)),
    (OrgkitError, Answer("failed", 1, 422, INVALID_PARAMS)),
    (OSError, Answer("failed", 1, 422, INVALID_PARAMS)),
)
# A bug: the server keeps running and the client hears of it.
INTERNAL = Answer("internal error", 1, 500, INTERNAL_ERROR)


def answer(exc: BaseException) -> Answer:
    """The table's entry for `exc`."""
    for kind, found in ANSWERS:
        if isinstance(exc, kind):
            return found
    return INTERNAL


def message(exc: BaseException) -> str:
    """The one line every surface says for `exc`."""
    if isinstance(exc, RecursionError):
        return "request nested too deeply"
    if answer(exc) is INTERNAL:
        return f"internal error: {type(exc).__name__}: {say(exc, 500)}"
    return say(exc)


def failure(exc: BaseException) -> dict[str, Any]:
    """A failed call's reply: `{"error": ...}`, and when to try again after too many calls."""
    if isinstance(exc, TooMany):
        return {"error": message(exc), "retry_after": exc.retry_after}
    return {"error": message(exc)}


def reply(outcome: Any) -> dict[str, Any]:
    """A call's reply (an ops.Outcome): result, warnings, and errors when part of it failed."""
    out: dict[str, Any] = {"result": outcome.result, "warnings": outcome.warnings}
    if outcome.errors:
        out["errors"] = outcome.errors
    return out
