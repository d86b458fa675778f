"""Notes in watched folders (`librarian.folders`): new or changed ones go to the librarian.

Such a note is taken in as a deposit of the human lane (`via = 'watch'`): it is
the person's own note, so it needs no admission and recall treats it as any
note; the librarian proposes how it fits the others, and those proposals are
reviewed like a deposit's. A change made by an accepted proposal is recorded as
the note's known state, so it does not send the note round again; a change made
by anyone else does, and the note's proposals still pending are set aside.
"""

from __future__ import annotations

from ..errors import OrgkitError
from ..vault import iter_org_files, read_org_file
from .deposit import VIAS, sha
from .replayed import stored_id
from .store import Store, dumps, now

VIA = "watch"
SKIPPED_VIAS = (*VIAS, "librarian")


def _in_folders(rel: str, folders: list[str]) -> bool:
    for folder in folders:
        prefix = folder.strip().strip("/")
        if prefix in ("", ".") or rel.startswith(prefix + "/"):
            return True
    return False


def take_in(store: Store) -> list[str]:
    """Register new and changed notes of the watched folders as pending deposits."""
    folders = store.cfg["librarian.folders"] or []
    if not folders:
        return []
    root = store.cfg.notes
    known = {r["path"]: r for r in store.all("SELECT id, path, sha, via FROM deposits")}
    out = []
    for rel in iter_org_files(root):
        if not _in_folders(rel, folders):
            continue
        row = known.get(rel)
        if row is not None and row["via"] != VIA:
            continue  # a deposit of its own
        try:
            data = (root / rel).read_bytes()
            parsed = read_org_file(root, rel)
        except (OSError, OrgkitError):
            continue
        node = next((n for n in parsed.nodes if n.level == 0), None)
        if node is None or node.properties.get("DEPOSITED_VIA") in SKIPPED_VIAS:
            continue
        try:
            stored_id(node.id, f"{rel}: its ID")
        except OrgkitError as exc:  # it would name the deposit's lock file
            out.append(str(exc))
            continue
        digest = sha(data)
        if row is not None and row["sha"] == digest:
            continue
        with store.tx() as conn:
            if row is None:
                conn.execute("INSERT INTO deposits(id, path, title, lane, via, actor, created, sha, meta, status) "
                             "VALUES (?,?,?,'human',?,'librarian',?,?,?, 'pending')",
                             (node.id, rel, node.title, VIA, now(), digest, dumps({})))
                store.audit(conn, "librarian", "taken-in", node.id, path=rel)
                out.append(f"{rel}: new in a watched folder; sent to the librarian")
            else:
                conn.execute("UPDATE proposals SET status = 'rejected', "
                             "reason = 'withdrawn: the note changed since, so the librarian proposes again', "
                             "decided_by = 'librarian', decided_at = ? "
                             "WHERE deposit = ? AND status = 'pending'", (now(), row["id"]))
                conn.execute("UPDATE deposits SET sha = ?, title = ?, status = 'pending' WHERE id = ?",
                             (digest, node.title, row["id"]))
                store.audit(conn, "librarian", "taken-in", row["id"], path=rel, changed=True)
                out.append(f"{rel}: changed in a watched folder; sent to the librarian")
    return out


def note_written(conn, path: str, text: str | None) -> None:
    """Record an accepted change to a watched note as its known state (inside the batch's commit)."""
    if text is not None:
        conn.execute("UPDATE deposits SET sha = ? WHERE path = ? AND via = ?",
                     (sha(text.encode("utf-8")), path, VIA))
