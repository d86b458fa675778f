"""Context for an agent: both retrieval stages, then a deep read within a budget.

Candidates are search's hits in search's order (hybrid: meaning and words),
down to the first that the relevance floor marks not relevant: the same
`relevant` a search shows (none: no notes, reason "nothing relevant"). They are
read in that order: a short note that fits in what is left of the token budget
whole, a longer one as the passage search showed for it (`passages.py`), cut
to at most a quarter of the budget: every note gives its best passage before
any gives a second, for the note that answers is not always the first; when
a note's best passage no longer fits, no note ranked below it comes in
instead. What is left goes to the notes the included text links to that the
floor marked relevant, then widens the excerpts, in rank order, by their
passages that match nearly as well as their best. What nothing relevant
fills stays unspent. The result says what was included, what was left out
and why, so an agent can ask for more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..embed import Embedder
from ..index.store import Index
from ..locator import Locator
from ..texts import KeptFiles, TextCache
from ..vault import require_dir
from .filters import within
from .locate import index_locator
from .passages import Excerpt, PassageScores, excerpt
from .read import ReadDoc, read
from .scope import Scope, narrow
from .search import VectorCache, search

CANDIDATES = 20
SHARES = 4  # a long note's first turn takes at most a quarter of the budget...
WHOLE_TOKENS = 250  # ...unless it is this short: then it stays whole
NOTHING_RELEVANT = "nothing relevant"  # the reason given when no candidate passes the relevance floor


@dataclass
class ContextResult:
    query: str
    budget: int
    included: list[dict] = field(default_factory=list)
    omitted: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    mode: str = "hybrid"  # how the search candidates were ranked
    reason: str | None = None  # why not hybrid, when not
    corrected: str | None = None  # the query as its mistyped words were taken, when any was

    @property
    def tokens(self) -> int:
        return sum(d["tokens"] for d in self.included)

    def to_json(self) -> dict:
        out = {"query": self.query, "budget": self.budget, "tokens": self.tokens,
               "included": self.included, "omitted": self.omitted, "warnings": self.warnings,
               "mode": self.mode, "reason": self.reason}
        return out | {"corrected": self.corrected} if self.corrected else out


def context(
    index: Index,
    query: str,
    *,
    budget: int = 4000,
    embedder: Embedder | None = None,
    cache: VectorCache | None = None,
    scope: Scope | None = None,
    kept: KeptFiles | None = None,
    exact: bool = False,
) -> ContextResult:
    """The best notes and passages for `query` within `budget` tokens, from the notes in `scope` (None: all).

    `kept` is a warm process's files, read and parsed in an earlier call (None: read each file here);
    with `exact`, no word of the query is corrected.
    """
    with index.snapshot():  # one read transaction: every query of the call sees one state of the index
        result = ContextResult(query=query, budget=budget)
        found = search(index, query, limit=CANDIDATES, embedder=embedder, cache=cache, scope=scope, exact=exact)
        result.warnings.extend(found.warnings)
        result.mode, result.reason, result.corrected = found.mode, found.reason, found.corrected
        candidates = []
        for hit in found.hits:
            if not hit.relevant:
                break
            candidates.append(hit)
        if not candidates:  # nothing passed the floor, or nothing matched at all (words only, or no notes)
            result.reason = NOTHING_RELEVANT
            nearest = f"; the nearest miss was {found.hits[0].title!r} ({found.hits[0].id})" if found.hits else ""
            only = within(scope.filters if scope else None)
            result.warnings.append(f"nothing in the notes is relevant to {query!r}{only}{nearest}")
            return result
        locator = index_locator(index)
        docs = read(index.root, [c.id for c in candidates], locator=locator, texts=_texts(index, kept))
        result.warnings.extend(docs.warnings)
        by_id = {d.id: d for d in docs.docs}
        # the passages are scored for the query as search read it: a slip counts as the word it was taken for
        gather = _Gatherer(index, found.corrected or query, budget, embedder, cache, result, scope, kept)
        gather.scores.read(docs.docs)
        for candidate in candidates:
            doc = by_id.get(candidate.id)
            if doc is not None and gather.offer(doc, round(candidate.score, 6), ["search"], candidate.line) is None \
                    and gather.full:
                break  # what ranks below never takes the place of what did not fit
        gather.add_linked(locator, {h.id for h in found.hits if h.relevant})
        gather.widen()
        return result


def _texts(index: Index, kept: KeptFiles | None) -> TextCache | None:
    """Where a read takes the files' text: the database's copy where the notes are not here, else the
    warm process's kept files (None: `read` reads them itself)."""
    stored = index.stored_texts()
    if stored is not None or kept is None:
        return stored
    require_dir(index.root)
    return TextCache(index.root, kept=kept)


@dataclass
class _Taken:
    """An included note (whole or an excerpt) and the lines of its file it gave."""

    doc: ReadDoc
    entry: dict
    ranges: list[tuple[int, int]]
    lead: int | None = None  # the line of the passage search showed for it, which its excerpt keeps first


class _Gatherer:
    """Fills the budget in rank order: a short note whole when it fits, else its best passage, then more of it."""

    def __init__(self, index: Index, query: str, budget: int, embedder: Embedder | None,
                 cache: VectorCache | None, result: ContextResult, scope: Scope | None,
                 kept: KeptFiles | None) -> None:
        self.index, self.budget = index, budget
        self.embedder, self.cache, self.result, self.scope = embedder, cache, result, scope
        self.kept = kept
        self.scores = PassageScores(index, query, embedder=embedder, cache=cache)  # every note's, read at once
        self.taken: list[_Taken] = []
        self.full = False  # a note's best passage did not fit: the budget is spent
        # A note longer than this gives its best passage first, cut to this, so that the notes ranked
        # after it get room too; what they leave widens the excerpts (`widen`).
        self.share = max(budget // SHARES, WHOLE_TOKENS)

    def offer(self, doc: ReadDoc, score: float | None, found_by: list[str],
              lead: int | None = None) -> dict | None:
        """Include `doc` whole or as an excerpt (its entry), otherwise say why not. No text is included twice.

        An excerpt starts with the passage at line `lead` (the one search showed), else the best scored.

        A doc inside one already included whole is left out. A doc that
        overlaps what is included (a file after one of its heading nodes, or
        after an excerpt of itself) gives only the lines not yet given: what
        ranked higher keeps its place and its ID.
        """
        result = self.result
        brief = {"id": doc.id, "title": doc.title, "file": doc.file, "tokens": doc.tokens}
        same_file = [t for t in self.taken if t.doc.file == doc.file]
        inside = next((t for t in same_file if not t.entry.get("excerpt") and _contains(t.doc, doc)), None)
        if inside is not None:
            result.omitted.append({**brief, "reason": f"inside {inside.doc.id}, already included"})
            return None
        first, last = doc.line, doc.last_line
        overlapping = [t for t in same_file if any(a <= last and first <= b for a, b in t.ranges)]
        if not overlapping and result.tokens + doc.tokens <= self.budget and doc.tokens <= self.share:
            entry = doc.to_json() | {"tokens": doc.tokens, "found_by": found_by, "excerpt": False}
            return self._take(_Taken(doc, entry, [(first, last)]), score)
        skip = [r for t in same_file for r in t.ranges]
        if overlapping and _given(doc, skip):  # its lines came with notes ranked higher: nothing of it is left
            result.omitted.append({**brief, "reason": f"given with {overlapping[0].doc.id}, already included"})
            return None
        part = excerpt(self.scores, doc, min(self.budget - result.tokens, self.share), skip=skip, best_only=True,
                       lead=lead)
        if part is None:
            result.omitted.append({**brief, "reason": "over budget"})
            self.full = True
            return None
        return self._take(_excerpted(doc, part, found_by, lead), score)

    def widen(self) -> None:
        """Spend what is left of the budget on more of each excerpt, in rank order.

        An excerpt first takes only its note's best passage, within its share,
        so the notes ranked after it get room; what none of them needed goes
        back to the excerpts, for the passages near their best (the rest of a
        note is not relevant: it stays out).
        """
        for at, t in enumerate(self.taken):
            room = self.budget - self.result.tokens
            if not t.entry["excerpt"] or room <= 0:
                continue
            skip = [r for o in self.taken if o is not t and o.doc.file == t.doc.file for r in o.ranges]
            part = excerpt(self.scores, t.doc, room + t.entry["tokens"], skip=skip, lead=t.lead)
            if part is None or part.tokens <= t.entry["tokens"]:
                continue
            wider = _excerpted(t.doc, part, t.entry["found_by"], t.lead)
            wider.entry |= {k: t.entry[k] for k in ("score", "via", "depth") if k in t.entry}
            self.taken[at] = wider
            self.result.included[at] = wider.entry

    def _take(self, taken: _Taken, score: float | None) -> dict:
        """Put `taken` in the result, after what ranked higher."""
        if score is not None:
            taken.entry["score"] = score
        self.taken.append(taken)
        self.result.included.append(taken.entry)
        return taken.entry

    def add_linked(self, locator: Locator, relevant: set[str]) -> None:
        """Notes linked from the included text that reach the hit floor (`relevant`), nearest first,
        while the budget lasts."""
        result = self.result
        seen = {t.doc.id for t in self.taken}
        first_via: dict[str, str] = {}
        for t in list(self.taken):
            for dest in t.entry["links"]:
                if dest not in seen and dest in relevant:
                    first_via.setdefault(dest, t.doc.id)
        inside = narrow(self.index, [*seen, *first_via], self.scope, by="id")
        linked = [(dest, via) for dest, via in first_via.items() if dest in inside]
        if not linked or result.tokens >= self.budget:
            if linked:
                result.omitted.extend({"id": dest, "via": via, "reason": "over budget"} for dest, via in linked)
            return
        docs = read(self.index.root, [dest for dest, _ in linked], locator=locator, texts=_texts(self.index, self.kept))
        result.warnings.extend(docs.warnings)
        via_of = dict(linked)
        self.scores.read(docs.docs)
        for doc in docs.docs:
            entry = self.offer(doc, None, [f"link from {via_of[doc.id]}"])
            if entry is not None:
                entry["via"] = via_of[doc.id]
                entry["depth"] = 1
        result.omitted.extend({"id": m, "via": via_of[m], "reason": "no note has this ID"} for m in docs.missing)


def _excerpted(doc: ReadDoc, part: Excerpt, found_by: list[str], lead: int | None = None) -> _Taken:
    """An excerpt's entry: the note's fields, its passages' text and labels, and how long the whole note is."""
    text = part.content
    entry = doc.to_json() | {"content": text, "links": [d for d in doc.links if f"id:{d}" in text],
                             "tokens": part.tokens, "found_by": found_by, "excerpt": True,
                             "whole_tokens": doc.tokens, "passages": part.to_json()}
    return _Taken(doc, entry, [(p.first, p.last) for p in part.pieces], lead)


def _given(doc: ReadDoc, ranges: list[tuple[int, int]]) -> bool:
    """Whether every line of `doc` with text on it lies in one of `ranges` (lines already included)."""
    return all(not text.strip() or any(a <= at <= b for a, b in ranges)
               for at, text in enumerate(doc.content.split("\n"), doc.line))


def _contains(outer: ReadDoc, inner: ReadDoc) -> bool:
    """Whether `inner`'s text is part of `outer`'s (a heading node inside a read file or subtree)."""
    return outer.level < inner.level and inner.content in outer.content or outer.id == inner.id
