"""`orgkit serve --http`: the team server (MCP over streamable HTTP, the operations as JSON,
the review page), for agents and reviewers on other machines.

Only loopback unless an address is asked for; TLS is a reverse proxy's job.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import OrgkitError
from ..ops import OpContext
from .protocol import OneCallPerConnection, TimedProtocol, configured

DEFAULT_HOST = "127.0.0.1"
BACKLOG = 1024  # connections the kernel holds for a worker to accept: a burst waits instead of being dropped


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
    """A listening socket on host:port (a clear error when it is taken or not ours).

    Made as TCP by name: asyncio turns Nagle's algorithm off only on connections
    whose socket says IPPROTO_TCP, and with it on, a response written in two
    parts (headers, then body) waited for the client's delayed ACK: 40 ms on
    every call over a kept-alive connection.
    """
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        raise OrgkitError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run(make_context: Callable[[], OpContext], address: str, workers: int) -> None:
    """Serve until interrupted; says where on stderr once listening.

    With one worker, this process serves. With several, `make_context` (picklable:
    a spawned process calls it) builds each worker's own warm context, and uvicorn's
    supervisor runs them on the one listening socket, restarting any that dies;
    the leader lock (see `leader`) picks the one that runs background work.
    """
    import uvicorn


    host, port = parse_address(address)
    ctx = make_context()
    cfg = ctx.config
    tokens = _tokens(cfg)
    if not tokens.listing():
        print("orgkit: warning: no tokens yet: every request will be refused (orgkit token add NAME --role ROLE)",
              file=sys.stderr)
    sock = listen(host, port)
    port = sock.getsockname()[1]
    server = Server(make_context, host, port, workers)
    shown = f"[{host}]" if ":" in host else host
    serving = (f"orgkit: serving http://{shown}:{port} (MCP at /mcp, operations at /ops/NAME, review page at /"
               + (f"; {workers} worker processes" if workers > 1 else "") + ")")
    idle = cfg["http.idle_timeout"]
    config = uvicorn.Config(server if workers > 1 else server.app(ctx), factory=workers > 1, workers=workers,
                            http=TimedProtocol, log_level="warning", timeout_keep_alive=max(1, round(idle)),
                            timeout_graceful_shutdown=5, h11_max_incomplete_event_size=64 * 1024,
                            proxy_headers=True, forwarded_allow_ips=cfg["http.trusted_proxies"],
                            limit_concurrency=cfg["http.max_connections"],
                            lifespan="on", access_log=False)
    if workers > 1:
        _supervisor(config, sock, serving).run()
    else:
        print(serving, file=sys.stderr, flush=True)
        uvicorn.Server(config).run(sockets=[sock])


def _supervisor(config: Any, sock: socket.socket, serving: str) -> Any:
    """uvicorn's supervisor of worker processes, saying `serving` once every worker answers."""
    from uvicorn.supervisors import Multiprocess

    class Supervisor(Multiprocess):
        def init_processes(self) -> None:
            super().init_processes()
            if all([process.wait_until_ready(60, self.should_exit) for process in self.processes]):
                print(serving, file=sys.stderr, flush=True)

    return Supervisor(config, sockets=[sock])


@dataclass(frozen=True)
class Server:
    """The team server's app, built in the process that serves (each worker's own, when several)."""

    make_context: Callable[[], OpContext]
    host: str
    port: int
    workers: int = 1

    def __call__(self) -> Any:
        """uvicorn's app factory in a worker process: its own context, leader bid and app."""
        from .leader import Leadership

        ctx = self.make_context()
        leadership = Leadership(ctx)
        ctx.process.leader = leadership
        return OneCallPerConnection(self.app(ctx, leadership))

    def app(self, ctx: OpContext, leadership: Any = None) -> Any:
        from ..ops.rates import RateLimits
        from .app import build_app
        from .guard import Allowed

        cfg = ctx.config
        ctx.process.limits = RateLimits.from_config(cfg, self.workers)
        configured(cfg["http.idle_timeout"], cfg["http.max_unauthenticated"])
        allowed = Allowed.for_address(self.host, self.port, cfg["http.allowed_hosts"], cfg["http.allowed_origins"])
        return build_app(ctx, _tokens(cfg), allowed, max_body=cfg["http.max_body_bytes"], leadership=leadership)


def _tokens(cfg: Any) -> Any:
    """The server's token store (the user's data dir, or the database), warnings on stderr."""
    from ..tokens import store_for

    return store_for(cfg, lambda message: print(f"orgkit: warning: {message}", file=sys.stderr))
