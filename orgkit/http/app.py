"""The team server's routes: MCP at /mcp, the operations at /ops/NAME, the review page at /.

All three are adapters over the operation registry, as `serve` and `orgkit
mcp` are: the same operations, validated the same way, run side by side in
worker threads on one warm `OpContext` (each call with its own state and index
connection, so a slow call holds up no one), with the verified caller as the
actor of whatever they record. While the database is unreachable, calls get
503 with one line saying so; the next call after it is back connects afresh.
What is offered is what the registry offers agents (operations marked for
MCP); `ops.call` refuses a caller without the role an operation needs, and
failures are answered with the statuses of the one table (ops/answers.py).

Every route states its guard (`GUARDS`); the app is not built with a route
that has none, so a new route is closed until someone says who may use it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..mcp import build_server, offered_tools, run_op
from ..ops import OpContext, ParamError, get
from ..ops.answers import answer, failure, reply
from ..serve import encode
from ..tokens import Identity, TokenStore
from . import page
from .guard import IDENTITY, Allowed, BodyTooLarge, Guard
from .leader import Leadership
from .signin import Sessions


OPS = "each operation by its own role (ops.call; a listing shows only what the caller may call)"
MCP = "each message by its own guard (mcp.GUARDS)"
SIGN_IN = "no token: the sign-in form only; a token: the page's operation's role (page.PAGE_OP)"
# Who may use each route, by path. Every guard is the operations layer's one rule (ops.refusal /
# ops.call): the route names the operation whose role it needs, or says it decides per operation.
GUARDS: dict[str, str] = {
    "/ops": OPS, "/ops/{name}": OPS, "/mcp": MCP,
    "/": SIGN_IN, "/login": SIGN_IN, "/logout": SIGN_IN,  # logout only ends the session its cookie names
    "/decide": OPS, "/undo": OPS,  # review_accept / review_reject / review_edit, review_undo
}


def guarded(routes: list[Route]) -> list[Route]:
    """`routes`, each of which has a guard in GUARDS; a route without one is a programming error."""
    unguarded = [route.path for route in routes if route.path not in GUARDS]
    if unguarded:
        raise RuntimeError(f"routes without a guard (http/app.py GUARDS): {', '.join(unguarded)}")
    return routes


def json_response(body: dict, status: int = 200) -> Response:
    """`body` as JSON; a refusal for too many calls says when to come back (Retry-After)."""
    headers = {"retry-after": str(body["retry_after"])} if status == 429 and "retry_after" in body else None
    return Response(encode(body), status_code=status, media_type="application/json", headers=headers)


async def call_as(ctx: OpContext, identity: Identity, name: str, params: Any) -> tuple[int, dict]:
    """Run operation `name` for `identity`: the HTTP status and the body `serve` would answer."""
    try:
        op = get(name)
    except ParamError:
        op = None
    if op is None or not op.mcp:
        return 404, {"error": f"unknown op {name!r} (GET /ops lists them)"}
    if not isinstance(params, dict):
        return 400, {"error": "the body must be a JSON object of the operation's parameters"}
    try:
        outcome = await run_op(ctx, op.name, params, identity)
    except Exception as exc:  # a bug too must not end the server; the client hears of it
        return answer(exc).http, failure(exc)
    return 200, reply(outcome)


def build_app(ctx: OpContext, tokens: TokenStore, allowed: Allowed, *, max_body: int,
              warm_up: bool = True, leadership: Leadership | None = None) -> Guard:
    """The whole server as one ASGI application (the Guard in front of the routes); with
    `warm_up`, the index and model start loading as the server starts; with `leadership`
    (a worker of several), its bid for the background work starts too."""
    from .sessions import TokenSessions

    ctx.surface = "http"
    cfg = ctx.loaded_config()
    signed_in = Sessions(ctx.config.state_dir, tokens)
    mcp_server = build_server(ctx, identify=lambda rctx: _scope_identity(getattr(rctx, "request", None)))
    sessions = TokenSessions(mcp_server, per_token=cfg["http.sessions_per_token"],
                             idle=cfg["http.session_idle_timeout"], max_body=max_body,
                             stateless=leadership is not None)

    async def ops_list(request: Request) -> Response:
        identity: Identity = request.scope[IDENTITY]
        return json_response({"result": [op.describe(ctx.surface) | {"role": op.role}
                                         for op in offered_tools(ctx.optional_config(), identity).values()]})

    async def op_call(request: Request) -> Response:
        try:
            params = json.loads(await request.body() or b"{}")
        except ValueError as exc:
            return json_response({"error": f"not JSON: {exc}"}, 400)
        except RecursionError as exc:
            return json_response(failure(exc), answer(exc).http)
        status, body = await call_as(ctx, request.scope[IDENTITY], request.path_params["name"], params)
        return json_response(body, status)

    class McpEndpoint:  # an ASGI app, so the route hands it the raw request (streams and all)
        async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
            await sessions.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if warm_up:
            ctx.start_warm_up()
        if leadership is not None:
            leadership.start()
        try:
            async with sessions.run():
                yield
        finally:
            if leadership is not None:
                leadership.stop()

    async def too_large(request: Request, exc: Exception) -> Response:
        return json_response({"error": str(exc)}, 413)

    routes = guarded([Route("/ops", ops_list, methods=["GET"]),
                      Route("/ops/{name}", op_call, methods=["POST"]),
                      Route("/mcp", McpEndpoint(), methods=["GET", "POST", "DELETE"]),
                      *page.routes(ctx, tokens, signed_in, call_as)])
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={BodyTooLarge: too_large})
    return Guard(app, allowed, tokens, signed_in, max_body)


def _scope_identity(request: Any) -> Identity | None:
    """The verified caller the Guard put in the scope of the HTTP request behind an MCP message."""
    scope = getattr(request, "scope", None)
    return scope.get(IDENTITY) if isinstance(scope, dict) else None
