"""The memory database: deposits, proposals, batches, decisions and the audit log.

Primary data, kept in the data dir (`memory.sqlite`, SQLite in WAL mode) and never
deleted by a rebuild. Every change is one transaction; what must span a note file
and the database (a deposit, a batch of accepted proposals) is written here first
as an intent (`deposits.status = 'writing'`, `batches.state = 'applying'`), so the
next run can finish or undo it after a crash (see `repair`).

Tables that other layers read (the feedback loop reads `decisions`):

- `audit(seq, at, actor, action, subject, detail)`: append-only; `action` is one of
  deposit, deposit-repaired, deposit-abandoned, taken-in (a note of a watched folder),
  librarian, librarian-failed,
  proposal-invalid, accept, reject, undo, batch-rolled-back, auto-refused, recall.
- `decisions(seq, at, actor, action, proposal, deposit, batch, kind, before, after, why)`:
  one row per reviewed proposal; `action` is accept, edit, reject, undo or
  auto-accept; `before`/`after` are JSON: the proposal's payload before and after an
  edit, and for accept/undo the files' text before and after
  (`{"payload": ..., "files": {path: text-or-null}}`).
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ..config import Config
from ..errors import OrgkitError
from ..files import file_lock
from ..index.db import write_transaction

DB_NAME = "memory.sqlite"
LOCK_NAME = "memory.lock"
LOCKS_DIR = "locks"

SCHEMA = """
CREATE TABLE IF NOT EXISTS deposits (
    id TEXT PRIMARY KEY, path TEXT NOT NULL, title TEXT NOT NULL, lane TEXT NOT NULL,
    via TEXT NOT NULL, actor TEXT NOT NULL, created TEXT NOT NULL, sha TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}', supersedes TEXT, superseded_by TEXT,
    status TEXT NOT NULL, error TEXT, model TEXT, processed_at TEXT
);
CREATE TABLE IF NOT EXISTS proposals (
    id TEXT PRIMARY KEY, deposit TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    target TEXT, payload TEXT NOT NULL, chunks TEXT NOT NULL, evidence TEXT NOT NULL,
    status TEXT NOT NULL, reason TEXT, model TEXT NOT NULL, created TEXT NOT NULL,
    batch TEXT, decided_by TEXT, decided_at TEXT
);
CREATE INDEX IF NOT EXISTS proposals_deposit ON proposals(deposit);
CREATE INDEX IF NOT EXISTS proposals_status ON proposals(status);
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY, action TEXT NOT NULL, state TEXT NOT NULL, actor TEXT NOT NULL,
    at TEXT NOT NULL, plan TEXT NOT NULL, proposals TEXT NOT NULL, undoes TEXT, undone_by TEXT
);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, actor TEXT NOT NULL,
    action TEXT NOT NULL, proposal TEXT NOT NULL, deposit TEXT NOT NULL, batch TEXT,
    kind TEXT NOT NULL, before TEXT, after TEXT, why TEXT
);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, actor TEXT NOT NULL,
    action TEXT NOT NULL, subject TEXT, detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS audit_subject ON audit(subject);
CREATE TABLE IF NOT EXISTS watermarks (
    subject TEXT PRIMARY KEY, sha TEXT NOT NULL, model TEXT NOT NULL, at TEXT NOT NULL
);
"""


def now() -> str:
    """A UTC timestamp, ISO 8601 to the second."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def data_dir(cfg: Config) -> Path:
    """The data dir, created on first use."""
    path = cfg.data_dir
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OrgkitError(f"cannot create the data dir {path}: {exc.strerror or exc}") from None
    return path


class Store:
    """One connection to the memory database of a notes directory."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.dir = data_dir(cfg)
        self.path = self.dir / DB_NAME
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=60, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 60000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            with write_transaction(conn):
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
        except sqlite3.Error as exc:
            raise OrgkitError(f"cannot open the memory database {self.path}: {exc}") from None
        self.conn = conn

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: writers queue instead of failing)."""
        with write_transaction(self.conn):
            yield self.conn

    def one(self, sql: str, args: tuple = ()) -> sqlite3.Row | None:
        return self.conn.execute(sql, args).fetchone()

    def all(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, args).fetchall()

    def audit(self, conn: sqlite3.Connection, actor: str, action: str, subject: str | None,
              **detail: Any) -> None:
        """Append one audit record inside the caller's transaction."""
        conn.execute("INSERT INTO audit(at, actor, action, subject, detail) VALUES (?,?,?,?,?)",
                     (now(), actor, action, subject, dumps(detail)))

    @contextmanager
    def writer(self) -> Iterator[None]:
        """The single resolver lock: one process at a time changes notes for the memory flow."""
        with file_lock(self.dir / LOCK_NAME, wait=True):
            yield

    def subject_lock(self, name: str, *, wait: bool):
        """A lock held while one deposit is written or processed; free means its holder died."""
        return file_lock(self.subject_lock_path(name), wait=wait)

    def subject_lock_path(self, name: str) -> Path:
        locks = self.dir / LOCKS_DIR
        locks.mkdir(exist_ok=True)
        return locks / f"{name}.lock"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def actor_name(explicit: str | None = None) -> str:
    """Who acts: the caller's name when given, else the login user."""
    if explicit:
        return explicit
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
