"""The team server's sign-in sessions on disk: one SQLite file in the state dir, shared by the
server's worker processes, so a session opened by one worker is known (and ended) by all.

Rows are what http/signin.py seals: a session's digest, its sealed token and when it was
made; plus the server's one secret. Who may read what is signin's business; this module
only keeps the rows (the file is made readable by its owner only).
"""

from __future__ import annotations

import secrets
import sqlite3
from contextlib import closing
from pathlib import Path

from .db import sqlite_file
from .migrations import migrate_sqlite

_SCHEMA = ("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, sealed BLOB NOT NULL, created REAL NOT NULL);"
           "CREATE TABLE IF NOT EXISTS secret (one INTEGER PRIMARY KEY CHECK (one = 1), value BLOB NOT NULL);")


class SessionFile:
    """The sessions table and the server's secret in `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ready = False  # the schema is known to be in the file (checked once, not per request)

    def _connect(self) -> sqlite3.Connection:
        sqlite_file(self.path)
        fresh = not self.path.exists()
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        if fresh:
            self.path.chmod(0o600)
        if fresh or not self._ready:
            migrate_sqlite(conn, "sessions", (_SCHEMA,), adopt=("sessions", 1))  # a file made before versions: 1
            self._ready = True
        return conn

    def add(self, digest: str, sealed: bytes, created: float, *, older_than: float) -> None:
        """Keep a new session, dropping those made before `older_than`."""
        with closing(self._connect()) as conn:
            conn.execute("DELETE FROM sessions WHERE created < ?", (older_than,))
            conn.execute("INSERT INTO sessions VALUES (?, ?, ?)", (digest, sealed, created))

    def get(self, digest: str) -> tuple[bytes, float] | None:
        """A session's sealed token and when it was made, or None (also when no file was made yet)."""
        if not self.path.exists():
            return None
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT sealed, created FROM sessions WHERE id = ?", (digest,)).fetchone()
        return None if row is None else (row[0], row[1])

    def remove(self, digest: str) -> None:
        if self.path.exists():
            with closing(self._connect()) as conn:
                conn.execute("DELETE FROM sessions WHERE id = ?", (digest,))

    def secret(self) -> bytes:
        """The server's secret, made once by whichever process asks first."""
        with closing(self._connect()) as conn:
            conn.execute("INSERT OR IGNORE INTO secret VALUES (1, ?)", (secrets.token_bytes(32),))
            return conn.execute("SELECT value FROM secret").fetchone()[0]
