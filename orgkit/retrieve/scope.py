"""Which notes a search, context or recall answers from: the person's, or generated ones too.

By default (`notes`) the person's notes and admitted memory: deposits review
has admitted; `extractions` adds the claim, quote, hub, run and source notes
extraction writes, `pending` the deposits still waiting for review (or
superseded), `all` everything. A note's kind is decided when it is indexed
(index/kinds.py); whether a deposit is admitted is the memory database's
answer, which the caller passes in when the scope is resolved. A claim and its
quote say the same thing: only the first of the two in rank keeps its place.
A scope also carries the filters a call asked for (filters.py: tags, folder,
TODO state, dates), so whatever answers from a scope answers within them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from ..errors import OrgkitError
from ..index.kinds import DEPOSIT, EXTRACTION_KINDS, NOTE
from .filters import Filters

if TYPE_CHECKING:
    from ..config import Config
    from ..index.store import Index

SCOPES = ("notes", "extractions", "pending", "all")
DEFAULT = "notes"


@dataclass(frozen=True)
class Scope:
    name: str = DEFAULT
    pending: frozenset[str] = frozenset()  # IDs and paths of deposits not admitted (or superseded)
    offer_pending: bool = False  # let them through to a caller that withholds them itself, saying why (recall)
    filters: Filters = field(default_factory=Filters)
    root: Path = Path(".")  # the notes, whose files' dates the filters read

    def admits(self, kind: str, node_id: str, file: str) -> bool:
        """Whether a node of `kind` (its ID and file) is inside this scope."""
        if self.name == "all" or kind == NOTE:
            return True
        if kind == DEPOSIT:
            waiting = node_id in self.pending or file in self.pending
            return self.name == "pending" or self.offer_pending or not waiting
        return self.name == "extractions" and kind in EXTRACTION_KINDS

    @property
    def withholds_pending(self) -> bool:
        """Whether deposits not admitted stay out (recall withholds them, with the reason)."""
        return self.name in ("notes", "extractions")


def resolve(name: str | None, config: "Config", pending: Callable[["Config"], frozenset[str]],
            filters: Filters | None = None) -> Scope:
    """The scope asked for, or the configured default (`search.scope`), with the pending deposits.

    `pending` answers which deposits review has not admitted: the memory flow
    knows that (`pending_deposits` of memory/store.py), and the caller passes it in, so retrieval
    never reads memory's tables.
    """
    chosen = name or config["search.scope"]
    if chosen not in SCOPES:
        raise OrgkitError(f"unknown scope {chosen!r} (choose from {', '.join(SCOPES)})")
    return Scope(chosen, frozenset() if chosen == "all" else pending(config), filters=filters or Filters(),
                 root=config.notes)


def scoped(index: "Index", ranking: list[tuple], scope: Scope | None) -> list[tuple]:
    """A search's ranking (node row first in each entry) without the nodes outside `scope`."""
    kept = narrow(index, [entry[0] for entry in ranking], scope)
    return [entry for entry in ranking if entry[0] in kept]


def narrow(index: "Index", keys: Iterable, scope: Scope | None, *, by: str = "rowid") -> set:
    """The `keys` (node rows, or IDs with `by="id"`), in rank order, that `scope` keeps.

    A claim after its quote, or a quote after its claim, is dropped; a key the
    index does not know (a file not indexed yet) is kept.
    """
    keys = list(keys)
    if scope is None or not keys:
        return set(keys)
    known: dict = {}
    for key, node_id, file, kind, properties, tags, todo in index.node_kinds(keys, by=by):
        quote = json.loads(properties).get("QUOTE") if kind == "claim" else None
        passes = not scope.filters or scope.filters.admits(scope.root, file, json.loads(tags), todo)
        known.setdefault(key, (node_id, file, kind, quote, passes))
    kept: set = set()
    said: set[str] = set()  # the quote IDs whose claim or quote already has a place
    for key in keys:
        if key not in known:
            kept.add(key)
            continue
        node_id, file, kind, quote, passes = known[key]
        pair = quote if kind == "claim" else node_id if kind == "quote" else None
        if not passes or not scope.admits(kind, node_id, file) or (pair is not None and pair in said):
            continue
        if pair is not None:
            said.add(pair)
        kept.add(key)
    return kept
