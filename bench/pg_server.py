"""PostgreSQL 16 with pgvector for the benchmarks: the `pgserver` wheel, started as the tests start it.

As root, pgserver runs the server as a user of its own (`pgserver`), who must be
able to reach the data dir (pgserver opens the directories on its path for
reading). A throwaway server lives in /dev/shm (removing a data dir file by file
costs seconds on disk) and is deleted at the end; one given a data dir keeps it,
stopped, so the next run starts from what is there.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path


def start(data_dir: Path | None = None):
    """A running pgserver: in `data_dir` (kept, stopped by `stop`) or in a temp dir (deleted by `stop`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: no XDG_RUNTIME_DIR on a CI machine
        import pgserver

        if data_dir is None:
            base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
            return pgserver.get_server(tempfile.mkdtemp(prefix="bench-pg-", dir=base), cleanup_mode="delete")
        data_dir.mkdir(parents=True, exist_ok=True)
        return pgserver.get_server(data_dir, cleanup_mode="stop")


def stop(server) -> None:
    """Stop the server (and remove its data dir when it was a throwaway one)."""
    server.cleanup()


def database(server, name: str, template: str | None = None) -> str:
    """A fresh database `name` on `server` (a copy of `template` when given), as a `postgresql://` URL."""
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
    return server.get_uri(name)


def server_url(given: str | None, name: str = "bench") -> str:
    """`given`, else a fresh database on a throwaway server (stopped and deleted when the process exits)."""
    return given or database(start(), name)
