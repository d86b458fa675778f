"""`orgkit serve --http`: the team server (MCP over streamable HTTP, the operations as JSON,
the review page), for agents and reviewers on other machines.

Only loopback unless an address is asked for; TLS is a reverse proxy's job.
"""

from __future__ import annotations

import socket
import sys

from ..errors import OrgkitError
from ..ops import OpContext

DEFAULT_HOST = "127.0.0.1"


def parse_address(text: str) -> tuple[str, int]:
    """HOST:PORT, [V6]:PORT, :PORT or PORT (host 127.0.0.1); port 0 picks a free one."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or int(port) > 65535:
        raise OrgkitError(f"--http {text!r}: give HOST:PORT, e.g. 127.0.0.1:8765")
    return host, int(port)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (a clear error when it is taken or not ours)."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise OrgkitError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def run(ctx: OpContext, address: str) -> None:
    """Serve until interrupted; says where on stderr once listening."""
    import uvicorn

    from ..tokens import store_for
    from .app import build_app
    from .guard import Allowed

    host, port = parse_address(address)
    cfg = ctx.config
    sock = listen(host, port)
    port = sock.getsockname()[1]
    allowed = Allowed.for_address(host, port, cfg["http.allowed_hosts"], cfg["http.allowed_origins"])
    tokens = store_for(cfg, lambda message: print(f"orgkit: warning: {message}", file=sys.stderr))
    if not tokens.listing():
        print("orgkit: warning: no tokens yet: every request will be refused (orgkit token add NAME --role ROLE)",
              file=sys.stderr)
    idle = cfg["http.idle_timeout"]
    app = build_app(ctx, tokens, allowed, max_body=cfg["http.max_body_bytes"])
    shown = f"[{host}]" if ":" in host else host
    print(f"orgkit: serving http://{shown}:{port} (MCP at /mcp, operations at /ops/NAME, review page at /)",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, http=_timed_protocol(), log_level="warning", timeout_keep_alive=max(1, round(idle)),
                            timeout_graceful_shutdown=5, h11_max_incomplete_event_size=64 * 1024,
                            lifespan="on", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


def _timed_protocol() -> type:
    """uvicorn's HTTP/1.1 protocol, closing a connection whose first request has not arrived in time.

    uvicorn times out idle connections only between requests; one opened and left
    silent, or sending its headers a byte at a time, would otherwise be held forever.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class TimedProtocol(H11Protocol):
        def connection_made(self, transport) -> None:  # type: ignore[no-untyped-def]
            super().connection_made(transport)
            self._first_request = self.loop.call_later(self.timeout_keep_alive, self._close_if_unstarted)

        def _close_if_unstarted(self) -> None:
            if self.cycle is None:
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._first_request.cancel()
            super().connection_lost(exc)

    return TimedProtocol
