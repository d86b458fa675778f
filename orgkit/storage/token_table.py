"""The team server's tokens as a table in the PostgreSQL database `database.url` names, so every
server on it (and `orgkit token` on any machine with the URL) shares them.

Records are what orgkit.tokens keeps (name, role, the token's SHA-256, dates); this module
keeps them, over one connection remade when it broke, and says "unavailable" (never "no
tokens") while the database is away, so a server answers 503 rather than 401.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator

from ..errors import DatabaseUnavailable, OrgkitError

# The tokens table's numbered migrations (`orgkit.storage.migrations`, the "tokens" component):
# a table on PostgreSQL only, since with SQLite the tokens are a file in the user's data dir.
MIGRATIONS: tuple[str, ...] = (
    "CREATE TABLE tokens (name TEXT NOT NULL, role TEXT NOT NULL, sha256 TEXT PRIMARY KEY, "
    "created TEXT NOT NULL, revoked TEXT); "
    "CREATE UNIQUE INDEX tokens_live_name ON tokens (name) WHERE revoked IS NULL",
)
_COLUMNS = ("name", "role", "sha256", "created", "revoked")


class TokenTable:
    """The tokens table of the database `url` names."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = None
        self._guard = threading.Lock()

    def _query(self, run: Callable[[Any], Any]) -> Any:
        """`run(conn)` on the kept connection, made (and the table prepared) anew when it broke."""
        from .postgres import prepared

        with self._guard:
            for attempt in (1, 2):
                try:
                    if self._conn is None:
                        self._conn = prepared(self.url, "tokens", MIGRATIONS, "the tokens table")
                    return run(self._conn)
                except Exception as exc:  # noqa: BLE001 - a closed connection, a restarted server
                    conn, self._conn = self._conn, None
                    if conn is not None:
                        with contextlib.suppress(Exception):
                            conn.close()
                    if isinstance(exc, DatabaseUnavailable):
                        if attempt == 2:  # the server is away: the caller answers 503, never "unauthorized"
                            raise
                    elif attempt == 2 or isinstance(exc, OrgkitError):
                        raise OrgkitError(f"cannot read the tokens from the database: {exc}") from None

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One writer of the table at a time, across machines."""
        from .postgres import advisory_lock

        with advisory_lock(self.url, "orgkit tokens", wait=True):
            yield

    def load(self) -> list[dict]:
        rows = self._query(lambda conn: conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM tokens ORDER BY created, name").fetchall())
        return [dict(zip(_COLUMNS, row)) for row in rows]

    def save(self, records: list[dict]) -> None:
        """Replace every record, in one transaction."""
        def replace(conn: Any) -> None:
            conn.execute("BEGIN")
            try:
                conn.execute("DELETE FROM tokens")
                for record in records:
                    conn.run(f"INSERT INTO tokens ({', '.join(_COLUMNS)}) VALUES (%s, %s, %s, %s, %s)",
                                 tuple(record.get(c) for c in _COLUMNS))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

        self._query(replace)
