"""Recall: context for a task, each note with where it came from.

The two-stage context of the notes (`retrieve.context`), where every returned
note carries its provenance: for a deposited note, the deposit ID, lane, who
deposited it, who admitted it and when, and what it rests on; for a note that
accepted proposals changed or created, each change with its deposit, approver,
time, the chunks it cites and its evidence notes. A deposited note not (yet)
admitted by review, or superseded by a newer deposit, is left out with the
reason. The call (query, caller, returned IDs) is written to the audit log
before the answer is given.
"""

from __future__ import annotations

import json
from dataclasses import replace

from ..config import ensure_state_dir
from ..embed import Embedder
from ..index import Index, refresh
from ..retrieve.context import ContextResult, context
from ..retrieve.scope import Scope
from ..retrieve.search import VectorCache
from ..texts import KeptFiles
from .store import AcceptedChange, DepositOrigin, Store


def provenances(store: Store, notes: list[tuple[str, str]]) -> dict[str, dict]:
    """Where each of `notes` (node ID, file) came from, as far as the memory flow knows, by node ID:
    the memory store is asked once for them all."""
    origins = store.origins_of(notes)
    return {node: provenance(origins.deposits.get(node), origins.changes.get(node, []), node)
            for node, _ in notes}


def provenance(dep: DepositOrigin | None, candidates: list[AcceptedChange], node_id: str) -> dict:
    """Where a note came from: the deposit it is (if any) and the accepted changes that concern it."""
    watched = dep is not None and dep.via == "watch"
    out: dict = {"origin": "notes" if dep is None or watched else "deposit"}
    if dep is not None and not watched:
        accepted = dep.review == "accepted"
        out |= {"deposit": dep.id, "lane": dep.lane, "via": dep.via, "deposited_by": dep.actor,
                "deposited_at": dep.created, "meta": json.loads(dep.meta),
                "supersedes": dep.supersedes, "superseded_by": dep.superseded_by,
                "review": dep.review or "pending",
                "approved_by": dep.decided_by if accepted else None,
                "approved_at": dep.decided_at if accepted else None,
                "evidence": [{"kind": "deposit", "file": dep.path, "meta": json.loads(dep.meta)}]}
    changes = []
    # A new note's ID is in its payload: the store narrows by text (in both engines), Python reads the JSON.
    for p in candidates:
        if p.target != node_id and json.loads(p.payload).get("id") != node_id:
            continue
        changes.append({"proposal": p.id, "kind": p.kind, "deposit": p.deposit, "lane": p.lane,
                        "approved_by": p.decided_by, "approved_at": p.decided_at, "batch": p.batch,
                        "model": p.model, "chunks": json.loads(p.chunks),
                        "evidence": json.loads(p.evidence)})
    if changes:
        out["changes"] = changes
        if out["origin"] == "notes" and any(c["kind"] == "new" for c in changes):
            first = next(c for c in changes if c["kind"] == "new")
            out |= {"origin": "librarian", "deposit": first["deposit"], "lane": first["lane"],
                    "review": "accepted", "approved_by": first["approved_by"],
                    "approved_at": first["approved_at"], "evidence": first["evidence"]}
    return out


def _withheld(prov: dict, scope: Scope | None) -> str | None:
    """Why a deposited note stays out of the answer: superseded or not admitted (unless the scope asks for those)."""
    if prov.get("origin") != "deposit" or (scope is not None and not scope.withholds_pending):
        return None
    if prov.get("superseded_by"):
        return f"superseded by deposit {prov['superseded_by']}"
    if prov.get("review") != "accepted":
        return f"deposit not admitted ({prov.get('review')})"
    return None


def recall(store: Store, query: str, *, budget: int = 4000, caller: str = "",
           embedder: Embedder | None = None, index: Index | None = None,
           cache: VectorCache | None = None, scope: Scope | None = None,
           kept: KeptFiles | None = None, exact: bool = False) -> ContextResult:
    """Context for `query` with provenance, from the notes in `scope`; the call is audited before it returns.

    `index` is a caller's up-to-date index (a server's); without one, the index of
    the notes is brought up to date here. `kept` is a warm process's read files;
    with `exact`, no word is corrected."""
    if index is not None:
        with index.snapshot():  # one read transaction for every gathering of the call
            result = _gather(store, index, query, budget, embedder, cache, scope, kept, exact)
    else:
        index = Index.of(store.cfg, ensure_state_dir(store.cfg))
        try:
            warnings = refresh(index, embedder=embedder).warnings
            result = _gather(store, index, query, budget, embedder, cache, scope, kept, exact)
        finally:
            index.close()
        result.warnings[:0] = warnings
    with store.tx() as conn:
        store.audit(conn, caller or "unknown", "recall", None, query=query, budget=budget,
                    returned=[e["id"] for e in result.included])
    return result


def _gather(store: Store, index: Index, query: str, budget: int, embedder: Embedder | None,
            cache: VectorCache | None, scope: Scope | None, files: KeptFiles | None = None,
            exact: bool = False) -> ContextResult:
    """The context without the withheld notes, whose share of the budget goes to the next
    notes in rank (the context is gathered again with that much more room). Deposits the
    scope leaves out for want of admission are gathered and withheld here, with the reason."""
    offered = replace(scope, offer_pending=True) if scope is not None and scope.withholds_pending else scope
    room = 0
    known: dict[str, dict] = {}  # each note's provenance, asked for once over the call's gatherings
    for _ in range(3):
        result = context(index, query, budget=budget + room, embedder=embedder, cache=cache, scope=offered,
                         kept=files, exact=exact)
        kept, withheld = [], []
        known |= provenances(store, [(e["id"], e["file"]) for e in result.included if e["id"] not in known])
        for entry in result.included:
            prov = known[entry["id"]]
            why = _withheld(prov, scope)
            if why:
                withheld.append({"id": entry["id"], "title": entry["title"], "file": entry["file"],
                                 "tokens": entry["tokens"], "reason": why})
            else:
                kept.append(entry | {"provenance": prov})
        freed = sum(w["tokens"] for w in withheld)
        if freed == room:
            break
        room = freed
    while kept and sum(e["tokens"] for e in kept) > budget:
        last = kept.pop()
        withheld.append({"id": last["id"], "title": last["title"], "file": last["file"],
                         "tokens": last["tokens"], "reason": "over budget"})
    result.budget = budget
    result.included = kept
    result.omitted = withheld + result.omitted
    return result
