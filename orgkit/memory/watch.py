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
from ..storage.db import Connection
from .store import Store

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
    known = store.known_deposits()
    out = []
    for rel in iter_org_files(root):
        if not _in_folders(rel, folders):
            continue
        row = known.get(rel)
        if row is not None and row.via != VIA:
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
        if row is not None and row.sha == digest:
            continue
        with store.tx() as conn:
            if row is None:
                store.take_in_new(conn, node.id, rel, node.title, VIA, digest)
                store.audit(conn, "librarian", "taken-in", node.id, path=rel)
                out.append(f"{rel}: new in a watched folder; sent to the librarian")
            else:
                store.take_in_changed(conn, row.id, node.title, digest)
                store.audit(conn, "librarian", "taken-in", row.id, path=rel, changed=True)
                out.append(f"{rel}: changed in a watched folder; sent to the librarian")
    return out


def note_written(store: Store, conn: Connection, path: str, text: str | None) -> None:
    """Record an accepted change to a watched note as its known state (inside the batch's commit)."""
    if text is not None:
        store.watched_note_written(conn, path, VIA, sha(text.encode("utf-8")))
