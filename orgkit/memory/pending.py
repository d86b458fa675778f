"""What retrieval needs to know of the memory flow: the deposits not admitted.

Retrieval's scopes (retrieve/scope.py) leave out deposits review has not
admitted; which those are is the memory database's answer, so it is asked
here, and the operations layer hands this function to the scope.
"""

from __future__ import annotations

from ..config import Config
from ..errors import OrgkitError
from .store import reading, tables_to_come


def pending_deposits(config: Config) -> frozenset[str]:
    """Deposits review has not admitted, or that a newer one supersedes: their IDs and paths."""
    try:
        with reading(config) as conn:
            if conn is None:
                return frozenset()
            rows = conn.execute(
                """SELECT d.id, d.path FROM deposits d
                   WHERE d.status != 'writing' AND d.via != 'watch' AND (d.superseded_by IS NOT NULL OR NOT EXISTS (
                       SELECT 1 FROM proposals p WHERE p.deposit = d.id AND p.kind = 'admit'
                       AND p.status = 'accepted'))""").fetchall()
    except OrgkitError as exc:
        if tables_to_come(exc):
            return frozenset()
        raise
    return frozenset(x for row in rows for x in row)
