"""Context for an agent: both retrieval stages, then a deep read within a budget.

Candidates come from the headline scan (exact words in titles) and from hybrid
search (meaning and words), fused by reciprocal rank. The best candidates are
read whole, in rank order, while they fit in the token budget; what is left
of it goes to the notes they link to. The result says what was included, what
was left out and why, so an agent can ask for more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..embed import Embedder
from ..index.store import Index
from .candidates import find_candidates, scan_ranked, search_ranker
from .locate import index_locator
from .read import Locator, ReadDoc, read
from .search import VectorCache

CANDIDATES = 20


@dataclass
class ContextResult:
    query: str
    budget: int
    included: list[dict] = field(default_factory=list)
    omitted: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    mode: str = "hybrid"  # how the search candidates were ranked
    reason: str | None = None  # why not hybrid, when not

    @property
    def tokens(self) -> int:
        return sum(d["tokens"] for d in self.included)

    def to_json(self) -> dict:
        return {"query": self.query, "budget": self.budget, "tokens": self.tokens,
                "included": self.included, "omitted": self.omitted, "warnings": self.warnings,
                "mode": self.mode, "reason": self.reason}


def context(
    index: Index,
    query: str,
    *,
    budget: int = 4000,
    embedder: Embedder | None = None,
    cache: VectorCache | None = None,
) -> ContextResult:
    result = ContextResult(query=query, budget=budget)
    searcher = search_ranker(index, embedder, cache)
    found = find_candidates(index.root, query, limit=CANDIDATES, rankers={"search": searcher, "scan": scan_ranked})
    result.warnings.extend(found.warnings)
    if searcher.last is not None:
        result.mode, result.reason = searcher.last.mode, searcher.last.reason
    locator = index_locator(index)
    docs = read(index.root, [c.id for c in found.candidates], locator=locator)
    result.warnings.extend(docs.warnings)
    by_id = {d.id: d for d in docs.docs}
    taken: list[ReadDoc] = []
    for candidate in found.candidates:
        doc = by_id.get(candidate.id)
        if doc is not None:
            _offer(result, taken, doc, budget, round(candidate.score, 6), candidate.sources)
    _add_linked(index, result, taken, budget, locator)
    return result


def _offer(result: ContextResult, taken: list[ReadDoc], doc: ReadDoc, budget: int,
           score: float | None, found_by: list[str]) -> dict | None:
    """Include `doc` if it is new and fits (its entry), otherwise say why not. No text is included twice.

    A doc inside one already included is left out; a doc that holds included
    ones (a file after one of its heading nodes) takes their place, in the
    rank of the first, when the budget allows it.
    """
    inside = next((t for t in taken if t.file == doc.file and _contains(t, doc)), None)
    brief = {"id": doc.id, "title": doc.title, "file": doc.file, "tokens": doc.tokens}
    held = [t for t in taken if t.file == doc.file and _contains(doc, t)]
    freed = sum(t.tokens for t in held)
    if inside is not None:
        result.omitted.append({**brief, "reason": f"inside {inside.id}, already included"})
        return None
    if result.tokens - freed + doc.tokens > budget:
        result.omitted.append({**brief, "reason": "over budget"})
        return None
    entry = doc.to_json() | {"tokens": doc.tokens, "found_by": found_by}
    if score is not None:
        entry["score"] = score
    at = len(taken)
    if held:
        at = min(taken.index(t) for t in held)
        for t in held:
            gone = taken.index(t)
            del taken[gone]
            old = result.included.pop(gone)
            result.omitted.append({"id": old["id"], "title": old["title"], "file": old["file"],
                                   "tokens": old["tokens"], "reason": f"inside {doc.id}, included instead"})
        at = min(at, len(taken))
    taken.insert(at, doc)
    result.included.insert(at, entry)
    return entry


def _contains(outer: ReadDoc, inner: ReadDoc) -> bool:
    """Whether `inner`'s text is part of `outer`'s (a heading node inside a read file or subtree)."""
    return outer.level < inner.level and inner.content in outer.content or outer.id == inner.id


def _add_linked(index: Index, result: ContextResult, taken: list[ReadDoc], budget: int,
                locator: Locator) -> None:
    """Notes linked from the included ones, nearest first, while the budget lasts."""
    seen = {d.id for d in taken}
    first_via: dict[str, str] = {}
    for doc in list(taken):
        for dest in doc.links:
            if dest not in seen:
                first_via.setdefault(dest, doc.id)
    linked = list(first_via.items())
    if not linked or result.tokens >= budget:
        if linked:
            result.omitted.extend({"id": dest, "via": via, "reason": "over budget"} for dest, via in linked)
        return
    docs = read(index.root, [dest for dest, _ in linked], locator=locator)
    result.warnings.extend(docs.warnings)
    via_of = dict(linked)
    for doc in docs.docs:
        entry = _offer(result, taken, doc, budget, None, [f"link from {via_of[doc.id]}"])
        if entry is not None:
            entry["via"] = via_of[doc.id]
            entry["depth"] = 1
    result.omitted.extend({"id": m, "via": via_of[m], "reason": "no note has this ID"} for m in docs.missing)
