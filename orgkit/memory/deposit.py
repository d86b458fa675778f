"""Depositing a finding: a new note written exclusively, with its audit record.

The note file and the audit record are one unit. The deposit is first recorded
as an intent (`status = 'writing'`) under a per-deposit lock; then the file is
created (never replacing anything); then, in one transaction, the audit record
is written and the deposit becomes `pending` for the librarian. If that last
step fails the file is removed. A crash anywhere in between is repaired by
`repair_deposits` on the next run: a finished file is kept and gets its audit
record, anything else is removed, so no note exists without its audit record.

Superseding is a compare-and-set: the old deposit's `superseded_by` is set in
the transaction that finishes the new one, only while it is still empty, so of
concurrent deposits superseding one deposit exactly one wins; the others are
undone like any failed deposit and refused naming the winner.

What the depositor sends never becomes org structure: the title and `--meta`
values are folded to one line (and no `--meta` key names a property org or
org-roam acts on, such as `ROAM_EXCLUDE` or `header-args`), the title's link syntax is made inert (a title
`[[id:X][...]]` links to nothing, before review or after), and body lines org
would read as a heading, a drawer or a keyword are comma-escaped
(`org.escape`); the note keeps, and every reader shows, the escaped text.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from ..config import Config
from ..edit import utf8_text
from ..org.names import fit_name, name_max, slugify
from ..errors import BadParameter, NotFound, OrgkitError
from ..files import LockBusy
from ..instructions import refused_place
from ..org.escape import escape_lines, inert_line, inert_property, meaningful_property, one_line
from ..org.ids import id_line, new_id
from ..org.write import atomic_write, directory_lock, remove_note, remove_stale_temporaries
from ..vault import is_org_file
from .proposals import store_proposals
from .replayed import note_file, stored_id
from .store import DepositRecord, Store, loads

LANES = ("agent", "human")
VIAS = ("cli", "serve", "mcp", "http", "emacs")  # the surfaces a deposit can come through
DEFAULT_FOLDER = "deposits"
RESERVED = {"ID", "LANE", "CREATED", "DEPOSITED_VIA", "SUPERSEDES"}
STATUSES = ("pending", "processing", "proposed", "failed", "refused", "no-model")


@dataclass
class Deposit:
    id: str
    path: str
    title: str
    lane: str
    status: str
    via: str = "cli"
    actor: str = ""
    created: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    supersedes: str | None = None
    superseded_by: str | None = None
    error: str | None = None
    model: str | None = None

    @classmethod
    def of(cls, r: DepositRecord) -> "Deposit":
        return cls(id=r.id, path=r.path, title=r.title, lane=r.lane, status=r.status, via=r.via, actor=r.actor,
                   created=r.created, meta=loads(r.meta, dict), supersedes=r.supersedes,
                   superseded_by=r.superseded_by, error=r.error, model=r.model)

    def to_json(self) -> dict:
        return {"id": self.id, "path": self.path, "title": self.title, "lane": self.lane,
                "status": self.status, "via": self.via, "actor": self.actor, "created": self.created,
                "meta": self.meta, "supersedes": self.supersedes, "superseded_by": self.superseded_by,
                "error": self.error, "model": self.model}


class AlreadySuperseded(OrgkitError):
    """The deposit to supersede was superseded first, by another deposit."""

    def __init__(self, old: str, winner: str | None) -> None:
        super().__init__(f"deposit {old} is already superseded by {winner}" if winner
                         else f"supersedes {old}: no such deposit")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def validate(cfg: Config, title: str, body: str, lane: str, path: str | None,
             meta: dict[str, str]) -> None:
    """Every reason to refuse a deposit, checked before anything is written."""
    for what, text in (("the title", title), ("the body", body), *((f"meta {k}", v) for k, v in meta.items())):
        utf8_text(text, what)
    if not one_line(title):
        raise OrgkitError("a deposit needs a title")
    if not body.strip():
        raise OrgkitError("a deposit needs a body")
    if lane not in LANES:
        raise OrgkitError(f"unknown lane {lane!r} (choose from {', '.join(LANES)})")
    size = len(body.encode("utf-8"))
    if size > cfg["deposit.max_bytes"]:
        raise BadParameter("body", f" is {size} bytes, over deposit.max_bytes ({cfg['deposit.max_bytes']})")
    for key, value in meta.items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", key):
            raise BadParameter("meta", f" key {key!r}: letters, digits, _ and - only")
        if key.upper() in RESERVED:
            raise BadParameter("meta", f" {key} is set by orgkit itself")
        if meaningful_property(key):  # :ROAM_EXCLUDE: t would hide the note from the index for good
            raise BadParameter("meta", f" {key} is a property org or org-roam acts on")
    if path is not None:
        check_destination(cfg, path)


def check_destination(cfg: Config, rel: str, *, taken_ok: bool = False) -> Path:
    """The absolute path for `rel`, refused when it leaves the notes dir, is a place orgkit
    reads instructions or configuration from (`instructions`: personas/, skills/, schemas/,
    the state and data dirs, hidden directories, orgkit.toml), is not a note org-roam would
    read, or (unless `taken_ok`: a default name, which the exclusive create retries) already
    exists."""
    pure = PurePosixPath(utf8_text(rel, "path").replace("\\", "/"))
    if not rel.strip() or pure.is_absolute() or ".." in pure.parts:
        raise BadParameter("path", f" {rel!r} must be a relative path inside the notes directory")
    longest = max(pure.parts, key=lambda part: len(part.encode()))
    if len(longest.encode()) > name_max(cfg.notes):
        raise BadParameter("path", f": the name {longest[:40]!r}... is too long for the file system")
    if ".git" in pure.parts or not is_org_file(str(pure)):
        raise BadParameter("path", f" {rel!r} must name a .org note outside data/ folders")
    root = cfg.notes.resolve()
    target = root.joinpath(*pure.parts)
    _check_folders(rel, root, pure.parts[:-1])
    real = _resolve_existing(target)
    if real != root and root not in real.parents:
        raise BadParameter("path", f" {rel!r} leaves the notes directory")
    rule = refused_place(pure, real, root, cfg.state_dir, cfg.data_dir)
    if rule:
        raise BadParameter("path", f" {rel!r} is refused: {rule}")
    if not taken_ok and os.path.lexists(target):
        raise OrgkitError(f"{rel}: already exists; a deposit never replaces a note "
                          "(deposit again with --supersedes ID)")
    return target


def _check_folders(rel: str, root: Path, folders: tuple[str, ...]) -> None:
    """Refuse a path whose folders are not folders: a file, or a link to nothing."""
    at = root
    for name in folders:
        at = at / name
        if not os.path.lexists(at):
            return
        if not at.is_dir():
            what = "a link to nothing" if at.is_symlink() and not at.exists() else "not a folder"
            raise BadParameter("path", f" {rel!r}: {at.relative_to(root).as_posix()} is {what}")


def _resolve_existing(path: Path) -> Path:
    """`path` with symlinks resolved in the part of it that exists."""
    missing: list[str] = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe.name)
        probe = probe.parent
    return probe.resolve().joinpath(*reversed(missing))


def render_note(node_id: str, title: str, body: str, lane: str, via: str, created: datetime,
                meta: dict[str, str], supersedes: str | None) -> str:
    """The deposited note: an org-roam file node with provenance properties; the outside
    text in it (title, meta values, body) cannot make structure."""
    props = [id_line(node_id), f"{':LANE:':<10} {lane}",
             f"{':CREATED:':<10} {created.strftime('[%Y-%m-%d %a %H:%M]')}",
             f":DEPOSITED_VIA: {via}"]
    if supersedes:
        props.append(f":SUPERSEDES: {supersedes}")
    props += [f":{key.upper()}: {inert_property(value)}" for key, value in sorted(meta.items())]
    head = "\n".join([":PROPERTIES:", *props, ":END:", f"#+title: {inert_line(title)}"])
    return f"{head}\n\n{escape_lines(body).strip(chr(10))}\n"


def deposit(store: Store, *, title: str, body: str, lane: str = "agent", path: str | None = None,
            meta: dict[str, str] | None = None, supersedes: str | None = None, via: str = "cli",
            actor: str = "") -> Deposit:
    """Write a deposit's note and its audit record as one unit; returns it `pending`."""
    cfg = store.cfg
    meta = dict(meta or {})
    validate(cfg, title, body, lane, path, meta)
    meta = {key: one_line(value) for key, value in meta.items()}  # as the note holds them
    if via not in VIAS:
        raise OrgkitError(f"unknown channel {via!r}")
    if supersedes is not None:
        old = store.deposit_record(supersedes, written=True)
        if old is None:
            raise NotFound(f"supersedes {supersedes}: no such deposit")
        if old.superseded_by:
            raise AlreadySuperseded(supersedes, old.superseded_by)
    node_id = new_id()
    created = datetime.now().astimezone()
    data = render_note(node_id, title, body, lane, via, created, meta, supersedes).encode("utf-8")
    digest = sha(data)
    with store.subject_lock(f"deposit-{node_id}", wait=True):
        rel = path if path is not None else _free_default_path(cfg, title, created)
        target = check_destination(cfg, rel, taken_ok=path is None)
        with store.tx() as conn:
            store.begin_deposit(conn, node_id, rel, inert_line(title), lane, via, actor, digest, meta, supersedes)
        try:
            while not _create(target, data, retry=path is None):
                rel = _free_default_path(cfg, title, created)  # a concurrent deposit took the name
                target = check_destination(cfg, rel, taken_ok=True)
                with store.tx() as conn:
                    store.move_deposit(conn, node_id, rel)
        except BaseException:
            with store.tx() as conn:
                store.drop_deposit(conn, node_id)
            raise
        try:
            with store.tx() as conn:
                _finish(store, conn, node_id, rel, supersedes, actor, lane, via, digest)
        except BaseException:
            remove_note(target, data, rel)
            with store.tx() as conn:
                store.drop_deposit(conn, node_id)
            raise
        # Safe to remove while held: a repair that opened it sees the deposit is no longer 'writing'.
        store.forget_subject_lock(f"deposit-{node_id}")
    return get(store, node_id)


def _finish(store: Store, conn, node_id: str, rel: str, supersedes: str | None, actor: str,
            lane: str, via: str, digest: str, repaired: bool = False) -> None:
    """The second half of the unit: the audit record, the proposal to admit the note (what
    review decides on), and the deposit becomes pending for the librarian. A deposit that
    another one superseded first raises `AlreadySuperseded` (the caller's transaction is
    rolled back)."""
    if supersedes:
        taken, winner = store.supersede(conn, supersedes, node_id)
        if not taken:
            raise AlreadySuperseded(supersedes, winner)
    store.set_deposit_status(conn, node_id, "pending")
    admit = {"kind": "admit", "target": node_id, "chunks": [], "payload": {}}
    store_proposals(store, conn, node_id, "orgkit", [admit], {node_id: {"id": node_id, "file": rel, "sha": digest}},
                    set(), {node_id}, actor)
    store.audit(conn, actor, "deposit-repaired" if repaired else "deposit", node_id,
                path=rel, lane=lane, via=via, supersedes=supersedes)


def _create(target: Path, data: bytes, *, retry: bool) -> bool:
    """Create the note exclusively; False when the name was taken and another may be tried.

    The note's one ID is a fresh UUID (its other text is escaped, and no --meta key
    may be ID), so no other note can hold it: the notes are not searched for it under
    the writer's lock, which would make every deposit wait for a pass over all of them.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        atomic_write(target, data, expected=None, ids=None)
    except OrgkitError:
        if retry and os.path.lexists(target):
            return False
        raise
    return True


def _free_default_path(cfg: Config, title: str, created: datetime) -> str:
    """`deposits/STAMP-slug.org`, with -2, -3... when a concurrent deposit took the name."""
    stem = f"{created.strftime('%Y%m%d%H%M%S')}-{slugify(title) or 'note'}"
    n = 1
    while True:
        rel = f"{DEFAULT_FOLDER}/" + fit_name(cfg.notes, stem, ".org" if n == 1 else f"-{n}.org")
        if not os.path.lexists(cfg.notes / rel):
            return rel
        n += 1


def repair_deposits(store: Store) -> list[str]:
    """Finish or undo deposits interrupted between their file and their audit record.

    Only deposits whose writer is gone (its lock is free) are touched. Returns
    one line per repair."""
    done = []
    for row in store.interrupted_deposits():
        try:
            with store.subject_lock(f"deposit-{stored_id(row.id, 'deposit')}", wait=False):
                done += _repair_one(store, row.id)
        except LockBusy:  # the subject's lock is held by a live process
            continue
        except OrgkitError as exc:  # a row that came with the database, not from orgkit
            done.append(str(exc))
    return done


def _repair_one(store: Store, node_id: str) -> list[str]:
    """Finish or undo one interrupted deposit; a row whose path is no place a deposit may be
    written (it came with the database, not from orgkit: `orgkit.toml`, `personas/...`, a
    link out) is refused in one line and left as it is."""
    row = store.deposit_record(node_id)
    if row is None or row.status != "writing":
        return []
    try:
        note_file(store.cfg, row.path, f"deposit {node_id}")
        target = check_destination(store.cfg, row.path, taken_ok=True)
    except OrgkitError as exc:
        return [f"deposit {node_id}: {exc}; refused and left as it is" if isinstance(exc, BadParameter)
                else str(exc)]
    if target.parent.is_dir():
        with directory_lock(target.parent):  # a killed writer's temporary file goes too
            remove_stale_temporaries(target.parent)
    try:
        on_disk = target.read_bytes()
    except OSError:
        on_disk = None
    if on_disk is not None and sha(on_disk) == row.sha:
        try:
            with store.tx() as conn:
                _finish(store, conn, node_id, row.path, row.supersedes, row.actor, row.lane,
                        row.via, row.sha, repaired=True)
            return [f"deposit {node_id}: {row.path} was written; its audit record is added"]
        except AlreadySuperseded as exc:
            remove_note(target, on_disk, row.path)
            reason = f"interrupted, and {exc}"
    else:
        reason = "interrupted before its note was written"
    with store.tx() as conn:
        store.drop_deposit(conn, node_id)
        store.audit(conn, row.actor, "deposit-abandoned", node_id, path=row.path, reason=reason)
    return [f"deposit {node_id}: {reason}; {row.path} dropped"]


def get(store: Store, deposit_id: str) -> Deposit:
    row = store.deposit_record(deposit_id, written=True)
    if row is None:
        raise NotFound(f"no deposit {deposit_id}")
    return Deposit.of(row)


def listing(store: Store) -> list[Deposit]:
    return [Deposit.of(r) for r in store.written_deposits()]


def deposit_facts(store: Store, ids: set[str]) -> dict[str, dict]:
    """What a reviewer reads of each deposit in `ids`: its title, lane and stage, by ID."""
    from .stage import stages

    where = stages(store)
    return {d.id: {"title": d.title, "lane": d.lane, "stage": where.get(d.id, d.status)}
            for d in listing(store) if d.id in ids}
