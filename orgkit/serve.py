"""A warm process for editors and agents: JSON requests in, JSON responses out, one a line.

A request is `{"op": NAME, ...parameters}` for any operation in the registry
(`{"op": "ops"}` lists them with their JSON Schemas). The response is
`{"result": ..., "warnings": [...]}` with the same result document as the
matching command's `--json`, plus `"errors": [...]` when part of the call failed
(an unknown ID among known ones), or `{"error": "..."}` when the request fails
as a whole; the server goes on either way. A request's `"request"` tag, if any,
is echoed back. The index, model and vectors stay loaded in one `OpContext`,
and the files are re-checked at most every `serve.recheck_after` seconds.

Each request passes one error boundary (`handle`): whatever a line holds,
it gets one response line.
"""

from __future__ import annotations

import json
from typing import IO, Any

from .errors import OrgkitError
from .ops import OpContext, call

RESERVED = ("op", "request")  # request fields that are not operation parameters


def answer(ctx: OpContext, request: Any) -> dict:
    """The response to one decoded request; raises OrgkitError for a failed call."""
    if not isinstance(request, dict):
        raise OrgkitError("a request must be a JSON object with an \"op\"")
    params = {k: v for k, v in request.items() if k not in RESERVED}
    outcome = call(ctx, request.get("op"), params)
    response: dict = {"result": outcome.result, "warnings": outcome.warnings}
    if outcome.errors:
        response["errors"] = outcome.errors
    return response


def handle(ctx: OpContext, line: str) -> dict:
    """The response to one request line; never raises."""
    request: Any = None
    try:
        request = json.loads(line)
        response = answer(ctx, request)
    except json.JSONDecodeError as exc:
        response = {"error": f"not JSON: {exc}"}
    except OrgkitError as exc:
        response = {"error": str(exc)}
    except Exception as exc:  # a bug must not end the server; the client hears of it
        response = {"error": f"internal error: {type(exc).__name__}: {exc}"}
    if isinstance(request, dict) and request.get("request") is not None:
        response["request"] = request["request"]
    return response


def serve(ctx: OpContext, stdin: IO[str], stdout: IO[str]) -> None:
    """Answer requests until end of input."""
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(json.dumps(handle(ctx, line), ensure_ascii=False) + "\n")
        stdout.flush()
