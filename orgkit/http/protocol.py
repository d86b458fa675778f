"""uvicorn's HTTP/1.1 protocol with what it lacks for a server on a network: a read deadline on
every request, and a cap on connections no token has vouched for.

uvicorn times out a connection only while it is idle between requests: once a
request's first byte arrives, its headers (and body) may trickle in for as long
as the client likes, so a client that sends a byte at a time holds a
connection, and a few thousand such clients hold the server. Here each
request, the first on a connection and every later one, must have arrived
whole within `read_timeout` seconds of the moment the server began waiting for
it, or the connection is closed.

A connection counts as unvouched until a request on it carries a valid token
(the Guard says so through the scope's `VOUCH` callable). At most
`max_unvouched` of them are kept per process: past that, the oldest one still
waiting for a request is answered 503 (with Retry-After) and closed, so a flood
of silent or tokenless connections cannot crowd out callers who present a
token, and a client that is shed hears why. Past `http.max_connections`
connections or calls in a process, uvicorn answers every new request 503 too.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

VOUCH = "orgkit.vouch"  # the scope key of the callable that marks the connection as authenticated
_SHED_BODY = b'{"error": "too many connections without a token; try again shortly"}'
SHED = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
        b"connection: close\r\ncontent-length: " + str(len(_SHED_BODY)).encode() + b"\r\n\r\n" + _SHED_BODY)


class TimedProtocol(H11Protocol):
    """H11Protocol with a per-request read deadline and a cap on unvouched connections."""

    read_timeout: ClassVar[float] = 30.0
    max_unvouched: ClassVar[int] = 256
    _unvouched: ClassVar[dict["TimedProtocol", None]] = {}  # oldest first (one event loop per process)

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._awaited: Any = None
        self._arm()
        self._unvouched[self] = None
        if len(self._unvouched) > self.max_unvouched:
            self._shed()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._unvouched.pop(self, None)
        super().connection_lost(exc)

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before and self.cycle is not None:  # a new request: its app task has not run yet
            self.cycle.scope[VOUCH] = self.vouch  # type: ignore[literal-required]  # an extension key of our own

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def vouch(self) -> None:
        """A request on this connection carried a valid token: it no longer counts against the cap."""
        self._unvouched.pop(self, None)

    def _arm(self) -> None:
        """Start the deadline for the next request (the one after the current cycle)."""
        self._disarm()
        self._awaited = self.cycle
        self._deadline = self.loop.call_later(self.read_timeout, self._read_deadline)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _waiting(self) -> bool:
        """Whether the awaited request has not arrived whole yet (headers or body still to come)."""
        return self.cycle is self._awaited or self.cycle.more_body

    def _read_deadline(self) -> None:
        self._deadline = None
        if self._waiting() and not self.transport.is_closing():
            self.transport.close()

    def _shed(self) -> None:
        """Refuse the oldest unvouched connection that is waiting for a request (else this new one):
        it is answered 503 with Retry-After, then closed, so its client hears why instead of a reset."""
        victim = next((c for c in self._unvouched if c is not self and c._waiting()), self)
        self._unvouched.pop(victim, None)
        victim.transport.write(SHED)
        victim.transport.close()


def configured(read_timeout: float, max_unvouched: int) -> type[TimedProtocol]:
    """TimedProtocol with these limits (set on the class: one server per process)."""
    TimedProtocol.read_timeout = read_timeout
    TimedProtocol.max_unvouched = max_unvouched
    return TimedProtocol


class OneCallPerConnection:
    """ASGI middleware for a server of several worker processes: every answer closes its connection.

    The workers share one listening socket, and the first to wake accepts every
    connection waiting (asyncio accepts up to its backlog at once), so clients
    that connect together and keep their connections alive all land on one
    worker while the others idle: 8 MCP clients kept one worker at a full core
    and the other at none. A connection per call is accepted by a worker free to
    accept it, which spreads the calls by how busy each worker is; a new
    connection costs far less than a call.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def closing(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive, closing)
