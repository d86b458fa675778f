"""Proposals: what the librarian suggests doing with a deposit, and their checks.

Kinds: `admit` (keep the deposited note; made for every deposit), `new` (a new
note from the deposit's chunks), `append` (text added to a note), `link` (a link
from one note to another), `tag` (a tag on a note) and `duplicate-of` (the
deposit largely repeats an existing note: accepting it records that judgement
and changes no file; a deposit with one is never admitted by policy). Each cites the deposit's
chunk numbers it rests on and keeps the content hashes of the notes it rests on
(its evidence), so auto-approval can refuse when they changed. A proposal that
cites a chunk or a note the librarian was not shown is stored as rejected, with
the reason, never silently trimmed.
"""

from __future__ import annotations

from typing import Any, Literal

from ..org.ids import new_id
from .edits import TAG
from .store import Proposal, Store, now

KINDS = ("admit", "new", "append", "link", "tag", "duplicate-of")
# The payload fields each kind needs, and the one a reviewer edits.
FIELDS = {"admit": (), "new": ("title", "body"), "append": ("text",), "link": ("dest", "description"),
          "tag": ("tag",), "duplicate-of": ("dest",)}
EDITABLE = {"new": "body", "append": "text", "link": "description", "tag": "tag"}


SET_ASIDE = "set aside by the librarian"  # a proposal that cannot stand, and why after a colon


def check(kind: Any, target: Any, payload: dict, chunks: list[int], shown_chunks: set[int],
          shown_notes: set[str]) -> str | None:
    """Why a proposal cannot stand (None when it can): unknown kind, missing fields, or a
    chunk or note that was not shown."""
    if kind not in KINDS:
        return f"unknown kind {kind!r}"
    missing = [f for f in FIELDS[kind] if not str(payload.get(f) or "").strip()]
    if missing:
        return f"missing {', '.join(missing)}"
    if kind != "admit":
        if not chunks:
            return "cites no chunk of the deposit"
        unseen = sorted(c for c in chunks if c not in shown_chunks)
        if unseen:
            return f"cites chunk(s) {', '.join(map(str, unseen))}, which the librarian was not shown"
    notes = [n for n in (target, payload.get("dest")) if n]
    if kind in ("append", "link", "tag", "duplicate-of") and not target:
        return "names no target note"
    unseen_notes = [n for n in notes if n not in shown_notes]
    if unseen_notes:
        return f"names note {unseen_notes[0]}, which the librarian was not shown"
    if kind == "tag" and not TAG.fullmatch(str(payload["tag"])):
        return f"invalid tag {payload['tag']!r}"
    if kind in ("link", "duplicate-of") and target == payload.get("dest"):
        return "links a note to itself" if kind == "link" else "names the deposit as its own duplicate"
    return None


def redundant(kind: Any, payload: dict, held: str | None) -> str | None:
    """Why a proposal would change nothing (None when it would, or the target's text is not known):
    the target already holds the text to append (spacing aside), or already links to the note."""
    if held is None:
        return None
    if kind == "append" and " ".join(str(payload["text"]).split()) in " ".join(held.split()):
        return "the target already holds this text"
    if kind == "link" and f"id:{payload['dest']}" in held:
        return "the target already links to that note"
    return None


def store_proposals(store: Store, conn, deposit_id: str, model: str, items: list[dict],
                    evidence: dict[str, dict], shown_chunks: set[int], shown_notes: set[str],
                    actor: str, held: dict[str, str | None] | None = None) -> list[Proposal]:
    """Insert the librarian's proposals (inside the caller's transaction); invalid ones, and
    those that would change nothing in the notes' texts `held` (by ID), are stored rejected
    with their reason and an audit record."""
    out = []
    base = store.last_proposal_seq(conn, deposit_id)
    for n, item in enumerate(items, start=base + 1):
        kind, target = item.get("kind"), item.get("target")
        payload = dict(item.get("payload") or {})
        cited = item.get("chunks") or []
        chunks = sorted({c for c in cited if isinstance(c, int) and not isinstance(c, bool)})
        reason = check(kind, target, payload, chunks, shown_chunks, shown_notes)
        if reason is None and held is not None:  # a valid kind, so its fields are there
            reason = redundant(kind, payload, held.get(target) if target is not None else None)
        if reason is None and len(chunks) != len(set(map(str, cited))):
            reason = f"cites chunks that are not chunk numbers: {cited!r}"
        if kind == "new" and reason is None:
            payload.setdefault("id", new_id())
        if reason is not None:
            reason = f"{SET_ASIDE}: it {reason}" if reason.startswith(("cites", "names", "links")) \
                else f"{SET_ASIDE}: {reason}"
        rests_on = [deposit_id] + [x for x in (target, payload.get("dest")) if x and x != deposit_id]
        proof = [evidence[x] for x in rests_on if x in evidence]
        p = Proposal(id=new_id(), deposit=deposit_id, kind=str(kind), target=target, payload=payload,
                     chunks=chunks, evidence=proof, status="pending" if reason is None else "rejected",
                     reason=reason, model=model, created=now(), seq=n,
                     decided_by=None if reason is None else "librarian",
                     decided_at=None if reason is None else now())
        store.add_proposal(conn, p)
        if reason is not None:
            store.audit(conn, actor, "proposal-invalid", p.id, deposit=deposit_id, reason=reason,
                        proposal=item)
        out.append(p)
    return out


def get(store: Store, proposal_id: str) -> Proposal:
    return Proposal.from_row(by_prefix(store, "proposals", proposal_id, "proposal"))


def by_prefix(store: Store, table: Literal["proposals", "batches"], given: str, what: str):
    """The row whose ID is `given` or starts with it (when only one does)."""
    from ..errors import NotFound, OrgkitError

    found = store.rows_by_prefix(table, given)
    if not found:
        raise NotFound(f"no {what} {given}")
    if len(found) > 1:
        raise OrgkitError(f"{given!r} is the start of more than one {what} ID; give more of it")
    return found[0]


def listing(store: Store, status: str | None = "pending") -> list[Proposal]:
    return store.proposals_in(status)
