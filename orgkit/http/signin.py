"""The review page's sign-in sessions, kept server-side so that signing out ends them.

A session is a row in `http-sessions.sqlite` in the server's state dir, shared
by every worker process of the server. The browser's cookie is `ID.KEY`; the
row is found by the SHA-256 of the whole cookie and holds the SHA-256 of the
reviewer's token (as the token store keeps it), so a copy of the file yields
neither a cookie nor a token, and a session lives only while its token does.
The session's CSRF field is an HMAC under KEY, so it is good for this session
only. Signing out deletes the row: the old cookie no longer works. A session
ends after `LIFETIME` seconds, and when its token is revoked.

The login form, which comes before any session, carries an HMAC of a random
cookie under a secret of this server kept in the same file (a double submit a
forged cross-site post cannot produce).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from pathlib import Path

from ..storage.session_file import SessionFile
from ..tokens import Identity, TokenStore, token_digest

FILE_NAME = "http-sessions.sqlite"
LIFETIME = 12 * 3600.0


class Sessions:
    """The sessions of one server (its state dir), checked against its token store."""

    def __init__(self, state_dir: Path, tokens: TokenStore) -> None:
        self.file = SessionFile(state_dir / FILE_NAME)
        self.tokens = tokens
        self._secret: bytes | None = None

    def open(self, token: str) -> str:
        """A new session for a verified `token`: the cookie value that stands for it."""
        cookie = f"{secrets.token_urlsafe(24)}.{secrets.token_urlsafe(32)}"
        now = time.time()
        self.file.add(token_digest(cookie), token_digest(token).encode(), now, older_than=now - LIFETIME)
        return cookie

    def identity(self, cookie: str) -> Identity | None:
        """The reviewer a session cookie stands for, while the session and its token are live."""
        sid, _, key = cookie.partition(".")
        if not sid or not key or len(cookie) > 200:
            return None
        row = self.file.get(token_digest(cookie))
        if row is None or row[1] < time.time() - LIFETIME:
            return None
        return self.tokens.holder(row[0].decode("ascii", "replace"))

    def close(self, cookie: str) -> None:
        """End the session (sign-out): its cookie no longer works, in any worker."""
        if cookie:
            self.file.remove(token_digest(cookie))

    @staticmethod
    def csrf(cookie: str) -> str:
        """The CSRF field of the session `cookie` names (an HMAC under its key: this session's only)."""
        key = cookie.partition(".")[2]
        return hmac.new(key.encode(), b"orgkit csrf", hashlib.sha256).hexdigest()

    def sign(self, value: str) -> str:
        """The login form's CSRF field for the pre-session cookie `value`, under the server's secret."""
        return hmac.new(self.secret(), value.encode(), hashlib.sha256).hexdigest()

    def secret(self) -> bytes:
        """This server's secret, made once and shared by its worker processes."""
        if self._secret is None:
            self._secret = self.file.secret()
        return self._secret
