"""The team server's MCP sessions: each belongs to the token that opened it, a token holds a
bounded number, and an idle one ends within minutes, its memory given back.

Built on the SDK's session manager, which keeps a session for the principal that
opened it when the request carries an authenticated user: the verified caller
(the Guard's identity) is handed to it as that user, so a request with another
token on a session's ID is answered 404, as if the session did not exist, and
cannot end it either. A token opening a session past `http.sessions_per_token`
ends its own longest idle one first (idle: no call of it under way; a client's
open event stream, which waits for the server's messages, is not a call); when
every one of them is busy, the new one is refused (429) with the reason. A session with no request for
`http.session_idle_timeout` seconds ends; the memory of ended sessions is
returned to the system once they are gone.
"""

from __future__ import annotations

from collections.abc import MutableMapping

import ctypes
import ctypes.util
import gc
import time
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from ..tokens import Identity
from .guard import IDENTITY, header, respond


class TokenSessions(StreamableHTTPSessionManager):
    """MCP sessions tied to their token, at most `per_token` each, ended after `idle` seconds idle.

    `stateless`: a server of several worker processes keeps no sessions at all (a
    session lives in the process that opened it, and the shared socket hands each
    request to any worker), so every request stands alone, as the SDK's stateless
    mode serves it, with the verified caller still its user.
    """

    def __init__(self, app: Any, *, per_token: int, idle: float, max_body: int, stateless: bool = False) -> None:
        super().__init__(app, max_request_body_size=max_body, session_idle_timeout=idle, stateless=stateless)
        self.per_token = per_token
        self._used: dict[str, float] = {}  # session ID -> when a request last came for it
        self._calls: dict[str, int] = {}  # session ID -> its POST requests under way (only while there are)
        self._ended = 0  # sessions ended since memory was last given back

    def open_sessions(self, identity: Identity | None = None) -> list[str]:
        """The IDs of the open sessions (of `identity`'s token only, when given)."""
        if identity is None:
            return list(self._server_instances)
        owner = _owner(identity)
        return [sid for sid, who in list(self._session_owners.items()) if who == owner]

    async def handle_request(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        identity: Identity | None = scope.get(IDENTITY)
        if identity is not None:
            scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=_client_id(identity), scopes=[]))
        if self.stateless:
            await super().handle_request(scope, receive, send)
            return
        session = header(scope, MCP_SESSION_ID_HEADER.encode("ascii"))
        if session is None and scope.get("method") == "POST" and identity is not None:
            if not await self._make_room(identity):
                await respond(send, 429, {"error": f"this token already holds {self.per_token} MCP sessions, all "
                                                   "busy (http.sessions_per_token): end one (DELETE /mcp) or wait"})
                return
        elif session is not None and session in self._server_instances:
            self._used[session] = time.monotonic()
            if scope.get("method") == "POST":
                self._calls[session] = self._calls.get(session, 0) + 1
                try:
                    await super().handle_request(scope, receive, send)
                finally:
                    left = self._calls.pop(session, 1) - 1
                    if left:
                        self._calls[session] = left
                return
        await super().handle_request(scope, receive, send)

    async def _make_room(self, identity: Identity) -> bool:
        """End `identity`'s longest idle sessions until it may open one more; False when all are busy."""
        mine = self.open_sessions(identity)
        idle = sorted((sid for sid in mine if not self._calls.get(sid)), key=lambda sid: self._used.get(sid, 0.0))
        while len(mine) >= self.per_token and idle:
            sid = idle.pop(0)
            transport = self._server_instances.get(sid)
            if transport is not None:
                await self._discard_session(sid, transport)
            mine.remove(sid)
        return len(mine) < self.per_token

    def _admit_session(self, requestor: Any) -> Any:
        """The SDK's admission, refusing past the token's cap even when requests race."""
        if requestor is not None and sum(1 for who in self._session_owners.values() if who == requestor) \
                >= self.per_token:
            return None
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            self._used[transport.mcp_session_id] = time.monotonic()
        return transport

    async def _discard_session(self, session_id: str, transport: Any) -> None:
        known = session_id in self._server_instances
        await super()._discard_session(session_id, transport)
        self._used.pop(session_id, None)
        if known:
            self._ended += 1
            if self._ended >= RELEASE_EVERY or (not self._server_instances and self._ended >= RELEASE_EMPTY):
                self._ended = 0
                release_memory()


# Ended sessions between returns of freed memory (a collection costs milliseconds: not one per session).
RELEASE_EVERY = 64
RELEASE_EMPTY = 8  # ... or fewer, once no session is left


def _client_id(identity: Identity) -> str:
    return f"{identity.name}\0{identity.role}"


def _owner(identity: Identity) -> dict[str, Any]:
    """The principal the SDK records as a session's owner for `identity` (its authorization context)."""
    return {"client_id": _client_id(identity), "issuer": None, "subject": None}


def release_memory() -> None:
    """Collect what ended sessions left and hand freed heap pages back to the system (glibc)."""
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()
