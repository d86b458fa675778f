"""Bearer tokens of the team server: who is calling, and what their role lets them do.

A token is shown once, when it is made; only its SHA-256 is kept (a token is
32 random bytes, so a fast hash is as good as a slow one). Its name is the
caller's identity everywhere the server records one (audit log, depositor,
approver).

Tokens belong to the machine that serves, never to the notes: the notes and
their data dir travel (a clone, a copy, an archive), and a tokens file that
came with them would let its author in. So they live in the user's data dir
(`$XDG_DATA_HOME/orgkit/tokens/`, one file per notes dir, keyed by its
resolved path), or, with PostgreSQL (`database.url`), in the database's
`tokens` table, so a server on a machine without the notes serves a team. A
`tokens.json` found in the notes' data dir (where older versions kept them) is
ignored, with one warning line.

The roles and the callers without a token are in orgkit/roles.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from .errors import DatabaseUnavailable, OrgkitError
from .files import replace_file
from .org.write import directory_lock
from .roles import ROLES, Identity

if TYPE_CHECKING:
    from .config import Config

FILE_NAME = "tokens.json"
PREFIX = "ok_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def check_role(role: str) -> str:
    if role not in ROLES:
        raise OrgkitError(f"unknown role {role!r} (roles: {', '.join(ROLES)})")
    return role


def tokens_dir(notes: Path) -> Path:
    """Where the tokens of the notes dir `notes` live on this machine: keyed by its resolved path."""
    from .config import user_dir

    resolved = Path(notes).expanduser().resolve()
    return user_dir("data") / "tokens" / f"{resolved.name}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:16]}"


def store_for(config: "Config", warn: Callable[[str], None]) -> "TokenStore":
    """The tokens a server over `config` checks: the database's with PostgreSQL, else this user's
    file for the notes dir. A tokens file in the notes' data dir is named in `warn` and ignored."""
    from .storage.backend import choose

    shipped = config.data_dir / FILE_NAME
    if shipped.exists():
        warn(f"{shipped}: ignored (a tokens file that travels with the notes is never trusted; tokens live in "
             "the user's data dir or the database: make them afresh with `orgkit token add`)")
    url = config["database.url"]
    return choose(url, lambda: TokenStore(tokens_dir(config.notes)), lambda: DatabaseTokenStore(url))()


class TokenStore:
    """The tokens kept in one directory of the user's data dir; reads are cached until the file changes."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.path = directory / FILE_NAME
        self._seen: tuple[int, int] | None = None
        self._records: list[dict] = []

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the store's write lock (one writer at a time), reading afresh under it."""
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        with directory_lock(self.dir):
            self._seen = None
            yield

    def _load(self) -> list[dict]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._seen, self._records = None, []
            return []
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            # Only a file this user made privately counts, wherever it is found.
            raise OrgkitError(f"{self.path}: not trusted: the tokens file must belong to you with mode 600 "
                              "(one made by `orgkit token add` is; delete this one and make tokens afresh)")
        key = (st.st_mtime_ns, st.st_size)
        if key != self._seen:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise OrgkitError(f"{self.path}: cannot read the tokens ({exc})") from None
            self._records = [r for r in data.get("tokens", []) if isinstance(r, dict)]
            self._seen = key
        return self._records

    def _save(self, records: list[dict]) -> None:
        text = json.dumps({"tokens": records}, indent=1, ensure_ascii=False) + "\n"
        replace_file(self.path, text.encode("utf-8"), mode=0o600)

    def add(self, name: str, role: str) -> str:
        """Make a token for `name` with `role`; returns the token (shown once, never stored)."""
        if not _NAME.fullmatch(name):
            raise OrgkitError(f"invalid token name {name!r}: letters, digits and . _ @ - (at most 64)")
        check_role(role)
        token = PREFIX + secrets.token_urlsafe(32)
        with self._writing():
            records = self._load()
            if any(r.get("name") == name and not r.get("revoked") for r in records):
                raise OrgkitError(f"a token named {name!r} exists; revoke it first (orgkit token revoke {name})")
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            self._save(records + [{"name": name, "role": role, "sha256": token_digest(token), "created": stamp,
                                   "revoked": None}])
        return token

    def revoke(self, name: str) -> dict:
        """Revoke the live token called `name`."""
        with self._writing():
            records = self._load()
            live = [r for r in records if r.get("name") == name and not r.get("revoked")]
            if not live:
                raise OrgkitError(f"no live token named {name!r} (orgkit token list)")
            live[0]["revoked"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
            self._save(records)
        return _public(live[0])

    def listing(self) -> list[dict]:
        """Every token's name, role and dates (never a hash)."""
        return [_public(r) for r in self._load()]

    def verify(self, token: str) -> Identity | None:
        """The identity `token` stands for, or None (unknown, revoked or malformed)."""
        if not token.startswith(PREFIX) or len(token) > 200:
            return None
        return self.holder(token_digest(token))

    def holder(self, digest: str) -> Identity | None:
        """The identity of the live token whose SHA-256 is `digest` (what a review session keeps)."""
        found = None
        try:
            records = self._load()
        except DatabaseUnavailable:  # not a verdict on the token: the server answers 503
            raise
        except OrgkitError:  # the server said why when it started; a file spoiled since lets no one in
            return None
        for record in records:
            if hmac.compare_digest(str(record.get("sha256", "")), digest) and not record.get("revoked"):
                found = record
        if found is None or found.get("role") not in ROLES:
            return None
        return Identity(str(found["name"]), str(found["role"]))


def _public(record: dict) -> dict:
    return {k: record.get(k) for k in ("name", "role", "created", "revoked")}


class DatabaseTokenStore(TokenStore):
    """The tokens in the team's database (the storage layer's token table): the same records,
    read on every check, so a revocation on any machine holds from the next request on."""

    def __init__(self, url: str) -> None:
        from .storage.token_table import TokenTable

        self.table = TokenTable(url)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        with self.table.writing():
            yield

    def _load(self) -> list[dict]:
        return self.table.load()

    def _save(self, records: list[dict]) -> None:
        self.table.save(records)
