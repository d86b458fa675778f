"""`orgkit doctor`'s check of the memory flow: audit records and accepted proposals.

Read-only: it reports what the next `orgkit deposits` would repair (interrupted
deposits and batches) and what no run can repair (a deposited note without its
audit record, an accepted proposal whose change is gone from the notes).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..config import load
from ..errors import OrgkitError
from ..vault import Vault
from .deposit import VIAS
from .store import ProposedChange, Reads, reading

if TYPE_CHECKING:
    from ..diagnosis import Report, Setup


def check_memory(setup: "Setup", report: "Report") -> None:
    try:
        cfg = load(setup.root, {"state_dir": setup.state_dir})
    except OrgkitError as exc:
        report.add("error", "memory", str(exc))
        return
    try:
        with reading(cfg) as reads:
            if reads is None:
                report.facts["memory"] = None
                return
            _check(reads, Vault.load(setup.root), report)
    except OrgkitError as exc:
        report.add("error", "memory", str(exc))


def _check(reads: Reads, vault: Vault, report: "Report") -> None:
    audited = reads.audited_deposits()
    deposits = reads.deposit_states()
    known = {d.id for d in deposits}
    for d in deposits:
        if d.status == "writing":
            report.add("warning", "memory", f"deposit {d.id} was interrupted; `orgkit deposits` "
                       "repairs it, or says why it will not", d.path)
        elif d.id not in audited:
            report.add("error", "memory", f"deposit {d.id} has no audit record", d.path)
    for node in vault.nodes:
        if node.level == 0 and node.properties.get("DEPOSITED_VIA") in VIAS and node.id not in known:
            report.add("error", "memory", f"deposited note {node.id} has no deposit record", node.file, node.line)
    accepted = reads.accepted_changes()
    for p in accepted:
        missing = _missing(p, vault)
        if missing:
            report.add("error", "memory", f"accepted proposal {p.id} ({p.kind}): {missing}")
    stuck = reads.interrupted_batches()
    if stuck:
        report.add("warning", "memory", f"{stuck} interrupted batch(es); `orgkit review` finishes them, "
                   "or says why it will not")
    report.facts["memory"] = {
        "deposits": len(deposits),
        "pending": reads.pending_proposals(),
        "accepted": len(accepted),
        "failed": sum(d.status == "failed" for d in deposits),
        "refused": sum(d.status == "refused" for d in deposits),
    }


def _missing(p: ProposedChange, vault: Vault) -> str | None:
    """What of an accepted proposal's change is no longer in the notes."""
    payload = json.loads(p.payload)
    node_id = payload.get("id") if p.kind == "new" else p.target
    node = vault.by_id.get(node_id or "")
    if node is None:
        return f"note {node_id} is missing"
    if p.kind == "link" and not any(link.source == node_id and link.dest == payload["dest"]
                                         for link in vault.links):
        return f"{node.file} no longer links to {payload['dest']}"
    if p.kind == "tag" and payload["tag"] not in node.tags:
        return f"{node.file} is no longer tagged {payload['tag']}"
    if p.kind == "append":
        text = (vault.root / node.file).read_text(encoding="utf-8", errors="replace")
        if payload["text"].strip() not in text:
            return f"{node.file} no longer holds the appended text"
    return None
