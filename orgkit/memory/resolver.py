"""The one resolver: every accept, reject and undo changes notes through here.

A resolution is a batch. Under the memory writer lock, the batch's plan (each
file's text before and after) is computed from the current files, recorded as
an intent (`batches.state = 'applying'`), written file by file through the note
writer (each write refused if the file changed since it was read), and then
committed in one transaction with the proposals' new status, the decisions and
the audit records. A crash leaves an `applying` batch that `repair_batches`
finishes (every file is still at its before or after text) or rolls back (a
file changed in between), so no batch is ever half-applied.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Config
from ..confine import inside
from ..errors import OrgkitError
from ..org.ids import new_id
from ..org.write import atomic_write, remove_note
from ..locator import note_ids, rg_locator
from . import edits, watch
from .proposals import Proposal
from .replayed import batch_file, stored_id
from .store import Store, loads, now


def digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Change:
    """One proposal's effect: each file's text before and after it."""

    proposal: Proposal
    before: dict[str, str | None] = field(default_factory=dict)
    after: dict[str, str | None] = field(default_factory=dict)


@dataclass
class Plan:
    """A batch's effect on the files: first and last text of each, and each proposal's part."""

    first: dict[str, str | None] = field(default_factory=dict)
    last: dict[str, str | None] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)

    def to_json(self) -> list[dict]:
        return [{"path": p, "before": self.first[p], "after": self.last[p]} for p in self.first]


class NotANode(OrgkitError):
    """No note file holds the node: it was removed, or its file no longer makes it an org-roam
    node (a `:ROAM_EXCLUDE:` property, an ID drawer edited away). Waiting does not bring it back."""


class Files:
    """The current text of note files, read once per plan, located by ID when needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.text: dict[str, str | None] = {}
        self.located: dict[str, str] = {}

    def read(self, rel: str) -> str | None:
        if rel not in self.text:
            try:
                data = (self.root / rel).read_bytes()
            except FileNotFoundError:
                self.text[rel] = None
            except OSError as exc:
                raise OrgkitError(f"{rel}: cannot read ({exc.strerror or exc})") from None
            else:
                try:
                    self.text[rel] = data.decode("utf-8")
                except UnicodeDecodeError:
                    raise OrgkitError(f"{rel}: not UTF-8; orgkit does not change it") from None
        return self.text[rel]

    def file_of(self, node_id: str, hint: str | None = None) -> str:
        """The file holding node `node_id` (the hint first, then a search of the notes)."""
        if node_id in self.located:
            return self.located[node_id]
        hinted = [hint] if hint and not Path(hint).is_absolute() and inside(self.root / hint, self.root) else []
        candidates = hinted + rg_locator(self.root)([node_id]).get(node_id, [])
        for rel in candidates:
            text = self.read(rel)
            if text is not None and any(n.id == node_id for n in edits.parse_text(text, rel).nodes):
                self.located[node_id] = rel
                return rel
        if hinted and self.read(hinted[0]) is not None:
            raise NotANode(f"note {node_id}: {hint} no longer holds it as an org-roam node "
                           "(excluded by ROAM_EXCLUDE, or its ID drawer changed)")
        raise NotANode(f"note {node_id} no longer exists")


def plan_for(store: Store, proposals: list[Proposal], action: str, files: Files | None = None) -> Plan:
    """What accepting (or rejecting) `proposals` would do to the files, in order."""
    files = files or Files(store.cfg.notes)
    plan = Plan()
    for p in proposals:
        change = Change(p)
        for rel, text in _effect(store, p, action, files, plan).items():
            current = plan.last[rel] if rel in plan.last else files.read(rel)
            plan.first.setdefault(rel, files.read(rel))
            change.before[rel], change.after[rel] = current, text
            plan.last[rel] = text
        plan.changes.append(change)
    return plan


def _effect(store: Store, p: Proposal, action: str, files: Files, plan: Plan) -> dict[str, str | None]:
    """The files `p` changes and their new text, given the batch so far."""
    dep = store.deposit_note(p.deposit)
    if action == "reject":
        if p.kind != "admit":
            return {}
        rel = files.file_of(p.deposit, dep.path)
        return {rel: None}  # rejecting the deposit itself removes its note
    if p.kind in ("admit", "duplicate-of"):
        files.file_of(p.deposit, dep.path)  # it must still be there
        return {}
    if p.kind == "new":
        rel = _new_path(store, dep.path, p.payload["title"], files, plan)
        text = edits.new_note_text(p.payload["id"], p.payload["title"], p.payload["body"], dep.lane,
                                   p.deposit)
        return {rel: text}
    target = p.target
    if target is None:
        raise OrgkitError(f"proposal {p.id}: a {p.kind} proposal names no target note")
    rel = files.file_of(target, dep.path if target == p.deposit else None)
    current = plan.last[rel] if rel in plan.last else files.read(rel)
    if current is None:
        raise OrgkitError(f"{rel}: removed earlier in this batch")
    if p.kind == "append":
        return {rel: edits.append(current, rel, target, p.payload["text"])}
    if p.kind == "link":
        description = p.payload.get("description") or p.payload["dest"]
        return {rel: edits.add_link(current, rel, target, p.payload["dest"], description)}
    return {rel: edits.add_tag(current, rel, target, p.payload["tag"])}


def _new_path(store: Store, deposit_path: str, title: str, files: Files, plan: Plan) -> str:
    """Beside the deposit, unless that is no place for a note (then at the notes' top)."""
    from ..org.names import fit_name, slugify

    folder = deposit_path.rsplit("/", 1)[0] + "/" if "/" in deposit_path else ""
    if folder and not _note_place(store.cfg, folder + "note.org"):  # the folder is what is judged
        folder = ""
    stem = slugify(title) or "note"
    n = 1
    while True:
        rel = folder + fit_name(store.cfg.notes, stem, ".org" if n == 1 else f"-{n}.org")
        if rel not in plan.last and files.read(rel) is None and not os.path.lexists(store.cfg.notes / rel):
            return rel
        n += 1


def _note_place(cfg: Config, rel: str) -> bool:
    """Whether a note may be written at `rel`: inside the notes, nowhere orgkit reads
    instructions or configuration from."""
    try:
        batch_file(cfg, rel, "a new note")
    except OrgkitError:
        return False
    return True


def unified_diff(rel: str, before: str | None, after: str | None) -> str:
    a = [] if before is None else before.splitlines(keepends=True)
    b = [] if after is None else after.splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, "/dev/null" if before is None else f"a/{rel}",
                                 "/dev/null" if after is None else f"b/{rel}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


# --- applying a batch ---------------------------------------------------------

def apply(store: Store, action: str, plan: Plan, actor: str,
          statuses: dict[str, str], decisions: list[dict], undoes: str | None = None,
          why: str | None = None, payloads: dict[str, dict] | None = None) -> str:
    """Record the batch, write its files, commit it; the caller holds `store.writer()`."""
    for rel in plan.first:  # refused before anything is recorded or written
        batch_file(store.cfg, rel, "a batch's file")
    batch_id = new_id()
    with store.tx() as conn:
        store.open_batch(conn, batch_id, action, actor, plan.to_json(),
                         {"statuses": statuses, "decisions": decisions, "why": why, "payloads": payloads or {}},
                         undoes)
    try:
        _write_files(store.cfg, plan.first, plan.last)
    except BaseException as exc:
        _roll_back(store, batch_id, str(exc))
        raise
    _commit(store, batch_id)
    return batch_id


def _write_files(cfg: Config, first: dict, last: dict) -> None:
    for rel in first:
        _put(cfg, rel, first[rel], last[rel])


def _put(cfg: Config, rel: str, before: str | None, after: str | None) -> None:
    """Change one file from `before` to `after` (None: absent), refusing if it is not at `before`
    or lies anywhere but inside the notes dir."""
    path = batch_file(cfg, rel, "a batch's file")
    root = cfg.notes
    if before == after:
        return
    if after is None:
        remove_note(path, None if before is None else before.encode("utf-8"), rel)
        return
    if before is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, after.encode("utf-8"), expected=None if before is None else before.encode("utf-8"),
                 ids=note_ids(root))


def _state(root: Path, rel: str) -> str | None:
    try:
        return (root / rel).read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def _roll_back(store: Store, batch_id: str, error: str) -> None:
    """Put every file of the batch back at its before text where it is at its after text."""
    for item in checked_plan(store.cfg, batch_id, store.batch(batch_id).plan):
        rel, before, after = item["path"], item["before"], item["after"]
        if before != after and _state(store.cfg.notes, rel) == after:
            _put(store.cfg, rel, after, before)
    with store.tx() as conn:
        store.set_batch_state(conn, batch_id, "rolled-back")
        store.audit(conn, "orgkit", "batch-rolled-back", batch_id, error=error)


def _commit(store: Store, batch_id: str) -> None:
    """The batch's database half, in one transaction: statuses, decisions, audit, done."""
    row = store.batch(batch_id)
    info = loads(row.proposals)
    at, actor, action = now(), row.actor, row.action
    with store.tx() as conn:
        for pid, status in info["statuses"].items():
            store.decide(conn, pid, status, batch_id, actor, at, info["why"])
        for pid, payload in info.get("payloads", {}).items():
            store.set_payload(conn, pid, payload)
        for d in info["decisions"]:
            store.record_decision(conn, at, actor, batch_id, d, info["why"])
        if row.undoes:
            store.mark_undone(conn, row.undoes, batch_id)
        for item in loads(row.plan):
            watch.note_written(store, conn, item["path"], item["after"])
        store.audit(conn, actor, action, batch_id, proposals=sorted(info["statuses"]),
                    files=[p["path"] for p in loads(row.plan)], undoes=row.undoes, why=info["why"])
        store.set_batch_state(conn, batch_id, "applied")


def checked_plan(cfg: Config, batch_id: str, text: str) -> list[dict]:
    """A batch's recorded plan, each path checked as an agent's would be before any file is
    touched; an OrgkitError naming the batch when one fails (nothing is done then)."""
    try:
        plan = loads(text)
    except ValueError:
        plan = None
    if not isinstance(plan, list) or not all(
            isinstance(p, dict) and isinstance(p.get("path"), str)
            and all(isinstance(p.get(k), (str, type(None))) for k in ("before", "after")) for p in plan):
        raise OrgkitError(f"batch {batch_id}: its recorded plan is not a plan; refused and left as it is")
    for item in plan:
        batch_file(cfg, item["path"], f"batch {batch_id}")
    return plan


def repair_batches(store: Store) -> list[str]:
    """Finish or roll back batches a crash interrupted; the caller holds `store.writer()`.

    A batch whose plan names a file outside the notes is refused in one line and
    left `applying`, untouched, for a person to look at."""
    out = []
    root = store.cfg.notes
    for batch_id, recorded in store.applying_batches():
        try:
            plan = checked_plan(store.cfg, stored_id(batch_id, "batch"), recorded)
        except OrgkitError as exc:
            out.append(str(exc))
            continue
        states = {p["path"]: _state(root, p["path"]) for p in plan}
        if all(states[p["path"]] in (p["before"], p["after"]) for p in plan):
            try:
                for p in plan:
                    if states[p["path"]] == p["before"]:
                        _put(store.cfg, p["path"], p["before"], p["after"])
            except OrgkitError as exc:
                _roll_back(store, batch_id, f"interrupted, then {exc}")
                out.append(f"batch {batch_id}: interrupted; rolled back ({exc})")
                continue
            _commit(store, batch_id)
            out.append(f"batch {batch_id}: interrupted; finished")
        else:
            _roll_back(store, batch_id, "interrupted, and a file changed since")
            out.append(f"batch {batch_id}: interrupted and a file changed since; rolled back")
    return out
