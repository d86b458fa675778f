"""The stage a deposit is really in, from the librarian's status and the decisions on its proposals.

A deposit's `status` says how far the librarian got with it (`pending`,
`processing`, `failed`, `refused` when its note is no longer a node, `proposed`,
or `no-model` when the deterministic librarian proposed); once it has proposed, what happens next is the
reviewers': its `stage` says where that stands.
"""

from __future__ import annotations

from .store import Store

def stages(store: Store) -> dict[str, str]:
    """Each deposit's stage by ID."""
    decisions: dict[str, list[tuple[str, str]]] = {}
    for p in store.proposal_outcomes():
        decisions.setdefault(p.deposit, []).append((p.kind, p.status))
    return {d.id: stage(d.status, d.superseded_by, decisions.get(d.id, [])) for d in store.deposit_states()}


def stage(status: str, superseded_by: str | None, proposals: list[tuple[str, str]]) -> str:
    """The stage of a deposit with librarian `status` whose proposals are (kind, status) pairs."""
    if superseded_by:
        return "superseded"
    if status in ("pending", "processing", "failed", "refused", "writing"):
        return "pending" if status == "writing" else status
    if ("admit", "rejected") in proposals:
        return "rejected"  # the deposited note was removed
    statuses = {s for _, s in proposals}
    if "pending" in statuses:
        return "in-review"
    if "accepted" in statuses:
        return "accepted"
    return "rejected" if statuses else "nothing-proposed"
