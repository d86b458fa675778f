"""What every request to the team server passes before any route sees it.

- The Host header must name this server (an allow-list: the bound address and
  loopback names, plus `http.allowed_hosts`), and an Origin header, when a
  browser sends one, must be one of `http.allowed_origins` or the server's own:
  a web page elsewhere cannot reach the server through DNS rebinding or drive
  it cross-site.
- A request body larger than `http.max_body_bytes` is refused (413) while it
  arrives, so a client cannot make the server hold more than that.
- The caller is identified by `Authorization: Bearer TOKEN` (or, for the review
  page only, its session cookie); the verified identity is put in the ASGI scope
  for the routes, and the connection is vouched for (see `protocol`). A missing
  or unknown token gets 401 with no detail.
- Every refusal closes the connection (`Connection: close`): a caller without a
  token cannot keep one open to send request after request on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import DatabaseUnavailable
from ..tokens import Identity, TokenStore
from .protocol import VOUCH
from .signin import Sessions

IDENTITY = "orgkit.identity"  # the scope key the verified caller is kept under
COOKIE = "orgkit_session"
PUBLIC_PATHS = ("/", "/login", "/logout")  # the page answers these itself (login form without a token)
PAGE_PATHS = PUBLIC_PATHS + ("/decide", "/undo")  # where the page's session cookie is taken
UNAVAILABLE = "the database is unavailable (restarting or unreachable); try again shortly"


def _nobody() -> None:
    """The vouch of a request that came through no TimedProtocol (a test client)."""


@dataclass(frozen=True)
class Allowed:
    """The Host and Origin values the server answers to."""

    hosts: frozenset[str]
    origins: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def for_address(cls, host: str, port: int, hosts: list[str], origins: list[str]) -> "Allowed":
        """This server's own names (the bound address; loopback names when bound there) and the extras."""
        names = {host}
        if host in ("127.0.0.1", "localhost", "::1"):
            names |= {"127.0.0.1", "localhost", "[::1]"}
        own = {f"{n}:{port}" for n in names} | {n for n in names if port == 80}
        extra = set(hosts)
        origin_hosts = own | extra
        return cls(frozenset(own | extra),
                   frozenset({f"http://{h}" for h in origin_hosts} | {f"https://{h}" for h in extra} | set(origins)))

    def host_ok(self, host: str | None) -> bool:
        return host is not None and host.lower() in self.hosts

    def origin_ok(self, origin: str | None) -> bool:
        return origin is None or origin.lower().rstrip("/") in self.origins


def header(scope: Scope, name: bytes) -> str | None:
    """One request header, decoded as Latin-1 (as HTTP defines them)."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def cookie(scope: Scope, name: str) -> str | None:
    raw = header(scope, b"cookie")
    if not raw:
        return None
    for part in raw.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def bearer(scope: Scope) -> str | None:
    value = header(scope, b"authorization")
    if value and value[:7].lower() == "bearer ":
        return value[7:].strip()
    return None


async def respond(send: Send, status: int, body: dict, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A JSON refusal from the guard itself; the connection is closed after it."""
    data = json.dumps(body).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            (b"connection", b"close"), *extra]})
    await send({"type": "http.response.body", "body": data})


class Guard:
    """ASGI middleware: Host/Origin allow-list, body limit and the caller's identity."""

    def __init__(self, app: ASGIApp, allowed: Allowed, tokens: TokenStore, sessions: Sessions, max_body: int) -> None:
        self.app, self.allowed, self.tokens, self.sessions, self.max_body = app, allowed, tokens, sessions, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self.allowed.host_ok(header(scope, b"host")):
            await respond(send, 421, {"error": "this server does not answer to that Host"})
            return
        if not self.allowed.origin_ok(header(scope, b"origin")):
            await respond(send, 403, {"error": "requests from that Origin are not allowed"})
            return
        length = header(scope, b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await respond(send, 413, {"error": f"request body over {self.max_body} bytes (http.max_body_bytes)"})
            return
        try:
            identity = self.identify(scope)
        except DatabaseUnavailable:
            await respond(send, 503, {"error": UNAVAILABLE}, [(b"retry-after", b"5")])
            return
        if identity is None and scope["path"] not in PUBLIC_PATHS:
            await respond(send, 401, {"error": "unauthorized"}, [(b"www-authenticate", b'Bearer realm="orgkit"')])
            return
        if identity is not None:
            scope.get(VOUCH, _nobody)()
        scope[IDENTITY] = identity
        await self.app(scope, self._bounded(receive, send), send)

    def identify(self, scope: Scope) -> Identity | None:
        """The caller: a bearer token anywhere; the page's session cookie only on the page's own paths."""
        token = bearer(scope)
        if token is not None:
            return self.tokens.verify(token)
        session = cookie(scope, COOKIE) if scope["path"] in PAGE_PATHS else None
        return self.sessions.identity(session) if session else None

    def _bounded(self, receive: Receive, send: Send) -> Receive:
        """`receive`, failing the request once its body passes the limit (chunked uploads too)."""
        seen = 0
        limit = self.max_body

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        return bounded


class BodyTooLarge(Exception):
    """A request body went past `http.max_body_bytes` while it was read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body over {limit} bytes (http.max_body_bytes)")
