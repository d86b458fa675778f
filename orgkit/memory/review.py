"""Review: list, show (as a unified diff), accept, edit, reject and undo proposals.

Decisions go through the one resolver (`resolver.apply`), so each is a batch
recorded with who decided, when, and each file's text before and after; `undo`
reverts a batch when its files were not edited since and puts its proposals
back to pending, so a person can decide again (accept, or reject the deposit's
`admit` to remove the deposited note), and tells the feedback loop that the
undone decisions no longer stand.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ..errors import OrgkitError
from . import proposals as props
from .proposals import Proposal, check
from .resolver import Files, Plan, apply, checked_plan, plan_for, repair_batches, unified_diff
from .store import Store, loads


@dataclass
class Shown:
    proposal: Proposal
    diff: str
    error: str | None = None

    def to_json(self) -> dict:
        return self.proposal.to_json() | {"diff": self.diff, "error": self.error}


def _pending(store: Store, ids: list[str]) -> list[Proposal]:
    if not ids:
        raise OrgkitError("name at least one proposal")
    out, seen = [], set()
    for pid in ids:
        p = props.get(store, pid)
        if p.status != "pending":
            raise OrgkitError(f"proposal {p.id} is {p.status}, not pending")
        if p.id not in seen:
            seen.add(p.id)
            out.append(p)
    return sorted(out, key=lambda p: (p.deposit, p.seq))


def show(store: Store, proposal_id: str) -> Shown:
    """The proposal and the unified diff accepting it would make to the notes now."""
    p = props.get(store, proposal_id)
    try:
        if p.kind in ("admit", "duplicate-of"):
            files = Files(store.cfg.notes)
            rel = files.file_of(p.deposit, store.deposit_path(p.deposit))
            return Shown(p, unified_diff(rel, None, files.read(rel)))
        plan = plan_for(store, [p], "accept")
    except OrgkitError as exc:
        return Shown(p, "", str(exc))
    return Shown(p, "".join(unified_diff(rel, plan.first[rel], plan.last[rel]) for rel in plan.first))


def accept(store: Store, ids: list[str], actor: str, *, edited: dict[str, dict] | None = None,
           why: str | None = None, action: str = "accept") -> str:
    """Accept proposals as one batch; `edited` maps a proposal ID to its edited payload."""
    with store.writer():
        repair_batches(store)
        return accept_locked(store, ids, actor, edited=edited, why=why, action=action)


def accept_locked(store: Store, ids: list[str], actor: str, *, edited: dict[str, dict] | None = None,
                  why: str | None = None, action: str = "accept") -> str:
    """`accept` for a caller that already holds the writer lock."""
    chosen = _pending(store, ids)
    originals = {p.id: copy.deepcopy(p.payload) for p in chosen}
    for p in chosen:
        if edited and p.id in edited:
            p.payload = edited[p.id]
            reason = check(p.kind, p.target, p.payload, p.chunks, set(p.chunks), _notes_of(p))
            if reason:
                raise OrgkitError(f"edited proposal {p.id}: {reason}")
    plan = plan_for(store, chosen, "accept")
    decisions = [_decision("edit" if edited and c.proposal.id in edited else action, c,
                           originals[c.proposal.id]) for c in plan.changes]
    batch = apply(store, "accept", plan, actor, {p.id: "accepted" for p in chosen}, decisions,
                  why=why, payloads={p.id: p.payload for p in chosen if edited and p.id in edited})
    _feedback(store, plan, decisions, human=action != "auto-accept")
    return batch


def _notes_of(p: Proposal) -> set[str]:
    return {n for n in (p.target, p.payload.get("dest")) if n} if p.kind != "new" else set()


def _decision(action: str, change, original: dict) -> dict:
    p = change.proposal
    return {"action": action, "proposal": p.id, "deposit": p.deposit, "kind": p.kind,
            "before": {"payload": original, "files": change.before},
            "after": {"payload": p.payload, "files": change.after}}


def reject(store: Store, ids: list[str], actor: str, *, why: str | None = None) -> str:
    """Reject proposals as one batch; rejecting `admit` removes the deposited note."""
    with store.writer():
        repair_batches(store)
        chosen = _pending(store, ids)
        for p in chosen:
            if p.kind == "admit":
                used = store.batch_of_accepted_change(p.deposit)
                if used is not None:
                    raise OrgkitError(f"deposit {p.deposit} has accepted proposals (batch {used}); "
                                      "undo that batch before rejecting the deposit")
        plan = plan_for(store, chosen, "reject")
        decisions = [_decision("reject", c, c.proposal.payload) for c in plan.changes]
        batch = apply(store, "reject", plan, actor, {p.id: "rejected" for p in chosen}, decisions,
                      why=why)
        _feedback(store, plan, decisions, human=True)
        return batch


def _feedback(store: Store, plan: Plan, decisions: list[dict], *, human: bool) -> None:
    """Tell the feedback loop what was decided: new notes the librarian wrote, and people's decisions."""
    from ..feedback.review import record_decisions

    paths = {c.proposal.id: store.deposit_path(c.proposal.deposit) or "" for c in plan.changes}
    record_decisions(store.cfg, [{"action": d["action"], "proposal": d["proposal"], "kind": d["kind"],
                                  "target": c.proposal.target, "deposit_path": paths[c.proposal.id],
                                  "before": d["before"]["payload"], "after": d["after"]["payload"],
                                  "files": d["after"]["files"]}
                                 for c, d in zip(plan.changes, decisions)], human=human)


def undo(store: Store, batch_id: str, actor: str, *, why: str | None = None) -> str:
    """Revert an applied batch if none of its files was edited since."""
    with store.writer():
        repair_batches(store)
        row = props.by_prefix(store, "batches", batch_id, "batch")
        if row["action"] == "undo":
            raise OrgkitError(f"batch {row['id']} is itself an undo")
        if row["state"] != "applied":
            raise OrgkitError(f"batch {row['id']} is {row['state']}, not applied")
        if row["undone_by"]:
            raise OrgkitError(f"batch {row['id']} was already undone by {row['undone_by']}")
        files = Files(store.cfg.notes)
        plan = Plan()
        for item in checked_plan(store.cfg, row["id"], row["plan"]):
            rel = item["path"]
            if files.read(rel) != item["after"]:
                raise OrgkitError(f"{rel} was edited since batch {row['id']}; nothing undone")
            plan.first[rel], plan.last[rel] = item["after"], item["before"]
        info = loads(row["proposals"])
        decisions = [{"action": "undo", "proposal": pid, "deposit": store.proposal(pid).deposit,
                      "kind": store.proposal(pid).kind, "before": {"files": plan.first},
                      "after": {"files": plan.last}} for pid in info["statuses"]]
        first = {d["proposal"]: d["before"]["payload"] for d in info["decisions"] if d["action"] == "edit"}
        batch = apply(store, "undo", plan, actor, {pid: "pending" for pid in info["statuses"]}, decisions,
                      undoes=row["id"], why=why, payloads=first)
        _feedback_undo(store, info["decisions"])
        return batch


def _feedback_undo(store: Store, undone: list[dict]) -> None:
    """Cancel, in the feedback events, the decisions people made in an undone batch (auto-admission
    made none)."""
    from ..feedback.review import record_undo

    people = [d for d in undone if d["action"] in ("accept", "edit", "reject")]
    paths = {d["proposal"]: store.deposit_path(d["deposit"]) or "" for d in people}
    record_undo(store.cfg, [{"proposal": d["proposal"], "kind": d["kind"], "deposit_path": paths[d["proposal"]],
                             "target": store.proposal(d["proposal"]).target, "payload": d["after"]["payload"]}
                            for d in people])


def edit_in_editor(text: str) -> str:
    """`text` edited by the user in $VISUAL or $EDITOR (a temporary .org file); unsaved is an error."""
    import os
    import shlex
    import subprocess
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    fd, name = tempfile.mkstemp(prefix="orgkit-proposal-", suffix=".org")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        before = os.stat(name).st_mtime_ns
        try:
            done = subprocess.run([*shlex.split(editor), name])
        except OSError as exc:
            raise OrgkitError(f"cannot run the editor {editor!r}: {exc.strerror or exc}") from None
        if done.returncode != 0:
            raise OrgkitError(f"the editor {editor!r} exited with status {done.returncode}; nothing accepted")
        with open(name, encoding="utf-8") as edited:
            result = edited.read()
        if os.stat(name).st_mtime_ns == before and result == text:
            raise OrgkitError("the proposal was not changed; nothing accepted (use `review accept`)")
        return result
    finally:
        os.unlink(name)


def batches(store: Store) -> list[dict]:
    """Every batch, oldest first, each with a `title` saying what it did."""
    every = {p.id: p for p in store.proposals_in(None)}
    summaries = {pid: p.summary() for pid, p in every.items()}
    deposits = store.deposit_titles()
    out = []
    for r in store.batches_in_order():
        proposals = sorted(loads(r.proposals)["statuses"])
        of = dict.fromkeys(every[p].deposit for p in proposals if p in every)
        out.append({"id": r.id, "action": r.action, "state": r.state, "actor": r.actor, "at": r.at,
                    "files": [p["path"] for p in loads(r.plan)], "proposals": proposals,
                    "deposits": [{"id": d, "title": deposits.get(d)} for d in of],
                    "undoes": r.undoes, "undone_by": r.undone_by,
                    "title": batch_title(r.action, r.undoes, [summaries.get(p, p) for p in proposals])})
    return out


def batch_title(action: str, undoes: str | None, summaries: list[str]) -> str:
    """What a batch did, in a line: `accepted 2 proposals: link A to 'B', append 40 characters to C`."""
    count = f"{len(summaries)} proposal{'s' if len(summaries) != 1 else ''}"
    done = {"accept": f"accepted {count}", "reject": f"rejected {count}",
            "undo": f"undid batch {undoes} ({count} back to pending)"}.get(action, f"{action} {count}")
    return f"{done}: {', '.join(summaries)}" if summaries else done
