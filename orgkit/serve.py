"""A warm process for editors and agents: JSON requests in, JSON responses out, one a line.

A request is `{"op": NAME, ...parameters}` for any operation in the registry
(`{"op": "ops"}` lists them with their JSON Schemas). The response is
`{"result": ..., "warnings": [...]}` with the same result document as the
matching command's `--json`, plus `"errors": [...]` when part of the call failed
(an unknown ID among known ones), or `{"error": "..."}` when the request fails
as a whole; the server goes on either way. A request's `"request"` tag, if any,
is echoed back. Its client is the caller `STDIO` (orgkit/roles.py): every role,
but a server's caller, not the command line's. The index, model and vectors stay loaded in one `OpContext`,
and the files are re-checked at most every `serve.recheck_after` seconds. Each
call runs under the per-call deadline `serve.call_timeout`: past it the client
gets an error line and the next request is read.

Each request passes one error boundary: whatever a line holds, it gets one
response line. Lines are read as bytes, at most `serve.max_line_bytes` of a
line kept in memory (a longer one is answered with an error and its bytes
dropped as they arrive), decoded with replacement characters where they are
not UTF-8; answers are always valid UTF-8 JSON (what UTF-8 cannot hold, such
as a lone surrogate, is escaped).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from .errors import OrgkitError
from .ops import OpContext, call_within
from .ops.answers import failure, reply
from .roles import STDIO

RESERVED = ("op", "request")  # request fields that are not operation parameters


def answer(ctx: OpContext, request: Any) -> dict:
    """The response to one decoded request; raises OrgkitError for a failed call."""
    if not isinstance(request, dict):
        raise OrgkitError("a request must be a JSON object with an \"op\"")
    name = request.get("op")
    if not isinstance(name, str):
        raise OrgkitError(f"unknown op {name!r}: a request names its operation in \"op\" "
                          "({\"op\": \"ops\"} lists them)")
    params = {k: v for k, v in request.items() if k not in RESERVED}
    return reply(call_within(ctx, name, params, identity=STDIO))


def handle(ctx: OpContext, line: str) -> dict:
    """The response to one request line; never raises."""
    request: Any = None
    try:
        request = json.loads(line)
        response = answer(ctx, request)
    except json.JSONDecodeError as exc:
        response = {"error": f"not JSON: {exc}"}
    except Exception as exc:  # a bug too must not end the server: the one table words every failure
        response = failure(exc)
    if isinstance(request, dict) and request.get("request") is not None:
        response["request"] = request["request"]
    return response


def encode(response: dict) -> bytes:
    """One response line as UTF-8 JSON; never raises (a response that cannot be encoded
    becomes an error response)."""
    try:
        text = json.dumps(response, ensure_ascii=False)
        try:
            return text.encode("utf-8") + b"\n"
        except UnicodeEncodeError:  # lone surrogates: escape them as JSON allows
            return json.dumps(response, ensure_ascii=True).encode("ascii") + b"\n"
    except Exception as exc:  # too deep, or not JSON at all: say so instead
        error = {"error": f"internal error: the answer could not be encoded ({type(exc).__name__})"}
        if isinstance(response.get("request"), (str, int, float)):
            error["request"] = response["request"]
        return json.dumps(error, ensure_ascii=True).encode("ascii") + b"\n"


def read_lines(stream: IO[bytes], limit: int, chunk: int = 1 << 16) -> Iterator[bytes | None]:
    """Each line of `stream` without its newline, or None for a line longer than `limit`.

    At most `limit` bytes of a line are held: the rest of a longer line is read
    and dropped as it comes, so a hostile client cannot make the server grow.
    """
    read = getattr(stream, "read1", stream.read)  # whatever is there, without waiting for more
    line = bytearray()
    too_long = False
    while True:
        data = read(chunk)
        if not data:
            break
        start = 0
        while True:
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if not too_long:
                if len(line) + len(piece) > limit:
                    too_long = True
                    line.clear()
                else:
                    line += piece
            if end < 0:
                break
            yield None if too_long else bytes(line)
            line.clear()
            too_long = False
            start = end + 1
    if too_long:
        yield None
    elif line:
        yield bytes(line)


def serve(ctx: OpContext, stdin: IO[bytes], stdout: IO[bytes], max_line_bytes: int | None = None) -> None:
    """Answer requests until end of input (binary streams: bytes in, UTF-8 out)."""
    limit = max_line_bytes if max_line_bytes is not None else ctx.config["serve.max_line_bytes"]
    for raw in read_lines(stdin, limit):
        if raw is None:
            response = {"error": f"request line longer than {limit} bytes (serve.max_line_bytes); ignored"}
        else:
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue
            response = handle(ctx, line)
        try:
            stdout.write(encode(response))
            stdout.flush()
        except BrokenPipeError:
            return  # the client is gone
