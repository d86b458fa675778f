"""Bearer tokens of the team server: who is calling, and what their role lets them do.

A token is shown once, when it is made; only its SHA-256 is kept (a token is
32 random bytes, so a fast hash is as good as a slow one), in `tokens.json` in
the data dir beside the review queue it guards. Its name is the caller's
identity everywhere the server records one (audit log, depositor, approver).

Roles are ordered; each can do what the ones before it can:
reader (read operations and recall) < agent (+ deposit) < reviewer (+ review
decisions and undo) < admin (+ index, tangle, tokens, everything else).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .errors import OrgkitError
from .files import replace_file
from .org.write import directory_lock

ROLES = ("reader", "agent", "reviewer", "admin")
FILE_NAME = "tokens.json"
PREFIX = "ok_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


@dataclass(frozen=True)
class Identity:
    """A verified caller: the token's name and role."""

    name: str
    role: str

    def may(self, role: str) -> bool:
        """Whether this caller's role includes `role`."""
        return ROLES.index(self.role) >= ROLES.index(role)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def check_role(role: str) -> str:
    if role not in ROLES:
        raise OrgkitError(f"unknown role {role!r} (roles: {', '.join(ROLES)})")
    return role


class TokenStore:
    """The tokens of one data dir; reads are cached until the file changes."""

    def __init__(self, data_dir: Path) -> None:
        self.dir = data_dir
        self.path = data_dir / FILE_NAME
        self._seen: tuple[int, int] | None = None
        self._records: list[dict] = []

    def _load(self) -> list[dict]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._seen, self._records = None, []
            return []
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            # The data dir sits in the notes folder: a tokens file that came with the folder (a
            # clone, a copy) would let its author in. Only a file this user made privately counts.
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
        self.dir.mkdir(parents=True, exist_ok=True)
        token = PREFIX + secrets.token_urlsafe(32)
        with directory_lock(self.dir):
            self._seen = None
            records = self._load()
            if any(r.get("name") == name and not r.get("revoked") for r in records):
                raise OrgkitError(f"a token named {name!r} exists; revoke it first (orgkit token revoke {name})")
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            self._save(records + [{"name": name, "role": role, "sha256": _digest(token), "created": stamp,
                                   "revoked": None}])
        return token

    def revoke(self, name: str) -> dict:
        """Revoke the live token called `name`."""
        if not self.path.exists():
            raise OrgkitError(f"no live token named {name!r} (orgkit token list)")
        with directory_lock(self.dir):
            self._seen = None
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
        digest = _digest(token)
        found = None
        try:
            records = self._load()
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

