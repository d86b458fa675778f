"""Admission: whether a deposit's proposals wait for a person or are applied by policy.

The `admission` setting maps folders (relative to the notes dir, "" for all) to a
policy per lane, `review` or `auto`; the deepest folder containing the deposit
wins, and `review` is the default for every lane. Auto-approval goes through the
same resolver as a person's, and is refused for a proposal whose evidence (the
notes it rests on) was deleted or changed since it was made: it stays pending,
with the reason. A deposit the librarian found to repeat an existing note (a
`duplicate-of` proposal) is never admitted by policy: a person decides.
"""

from __future__ import annotations

import json

from ..config import Config
from ..errors import OrgkitError
from .deposit import LANES
from .proposals import Proposal
from .resolver import Files, digest, plan_for, repair_batches
from .review import accept_locked
from .store import Store

POLICIES = ("review", "auto")
AUTO_ACTOR = "admission policy"
LEFT_FOR_A_PERSON = "left for a person to decide, not accepted by the auto policy"  # and why, after a colon


def policy(cfg: Config, rel: str, lane: str) -> str:
    """The policy for a note at `rel` deposited in `lane`."""
    table = cfg["admission"] or {}
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    best, best_depth = "review", -1
    for key, lanes in table.items():
        prefix = key.strip("/").strip(".")
        if prefix and folder != prefix and not folder.startswith(prefix + "/"):
            continue
        if not isinstance(lanes, dict):
            raise OrgkitError(f"admission.{key} must be a table of lane = policy")
        for name, value in lanes.items():
            if name not in LANES or value not in POLICIES:
                raise OrgkitError(f"admission.{key}.{name} = {value!r}: lanes are {', '.join(LANES)}, "
                                  f"policies {', '.join(POLICIES)}")
        depth = len(prefix.split("/")) if prefix else 0
        if lane in lanes and depth > best_depth:
            best, best_depth = lanes[lane], depth
    return best


def evidence_problem(files: Files, p: Proposal) -> str | None:
    """Why `p`'s evidence no longer holds: a note it rests on was deleted or changed."""
    for item in p.evidence:
        try:
            rel = files.file_of(item["id"], item.get("file"))
        except OrgkitError:
            return f"evidence note {item['id']} ({item.get('file')}) was deleted"
        if digest(files.read(rel)) != item["sha"]:
            return f"evidence note {item['id']} ({rel}) changed since the proposal was made"
    return None


def _duplicate_problem(payload: str) -> str:
    twin = json.loads(payload)
    return (f"the deposit repeats note {twin['dest']} ({twin.get('overlap', 0):.0%} of its word sequences); "
            "a person decides")


def admit_by_policy(store: Store) -> list[str]:
    """Apply pending proposals whose deposit's policy is `auto`, one batch per deposit."""
    out = []
    for dep in store.awaiting_review():
        if policy(store.cfg, dep.path, dep.lane) != "auto":
            continue
        out += _admit_deposit(store, dep.id)
    return out


def _admit_deposit(store: Store, deposit_id: str) -> list[str]:
    with store.writer():
        repair_batches(store)
        pending = store.pending_proposals_of(deposit_id)
        files = Files(store.cfg.notes)
        refused: dict[str, str] = {}
        ok: list[Proposal] = []
        twin = store.duplicate_claim(deposit_id)
        for p in pending:
            problem = _duplicate_problem(twin) if twin is not None else evidence_problem(files, p)
            if problem is None:
                try:
                    plan_for(store, ok + [p], "accept")
                except OrgkitError as exc:
                    problem = str(exc)
            if problem is None:
                ok.append(p)
            else:
                refused[p.id] = problem
        with store.tx() as conn:
            for pid, why in refused.items():
                if store.set_reason(conn, pid, f"{LEFT_FOR_A_PERSON}: {why}"):
                    store.audit(conn, AUTO_ACTOR, "auto-refused", pid, deposit=deposit_id, reason=why)
        out = [f"proposal {pid}: {LEFT_FOR_A_PERSON}: {why}" for pid, why in refused.items()]
        if ok:
            batch = accept_locked(store, [p.id for p in ok], AUTO_ACTOR, action="auto-accept")
            out.append(f"deposit {deposit_id}: {len(ok)} proposal(s) accepted by policy in batch {batch}")
    return out
