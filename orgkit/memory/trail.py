"""The audit trail as a reviewer reads it: the latest records first."""

from __future__ import annotations

from .store import Store, loads


def trail(store: Store, limit: int) -> list[dict]:
    """The `limit` most recent audit records (deposits, decisions, recalls), newest first."""
    return [{"seq": r.seq, "at": r.at, "actor": r.actor, "action": r.action, "subject": r.subject,
             "detail": loads(r.detail)}
            for r in store.latest_audit(limit)]
