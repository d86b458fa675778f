"""Excerpts of a long note: its best-matching sections, within what is left of a budget.

A note cut into pieces on its outline (each heading's section, and a long
section on the passage boundaries the index already cut it at, so never
mid-line) is scored piece by piece with the passages' vectors and BM25 from
the index, against the query that found it. The best pieces that fit are
kept (those near the note's best: the rest of the budget is worth more to
the next note), neighbours merged, and given back in file order, each labelled with its
line range and outline path; `read ID` gives the rest. A note's back matter
(its footnotes, references, bibliography) names the works the note is about,
so it matches the query's words and meaning well and answers nothing: it
counts at BACK_MATTER_WEIGHT, after the passages that say something.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence, Set as AbstractSet
from dataclasses import dataclass, field

from ..embed import Embedder
from ..index.memo import Kept
from ..index.store import Index
from ..org import syntax as sx
from ..org.outline import Outline
from ..texts import estimate_tokens
from .read import ReadDoc
from ..index.words import query_terms
from .search import HEADING_WEIGHT, VectorCache

LEXICAL_SHARE = 0.2  # BM25's weight (scaled to the note's best) beside the cosine, as in search's fusion
MIN_TOKENS = 12  # less room than this makes no useful excerpt
NEAR_BEST = 0.7  # a piece scoring under this share of the note's best is not worth the room
GAP = "\n…\n"  # between passages that are not neighbours in the note
BACK_MATTER = frozenset({"footnotes", "references", "bibliography", "sources", "further reading", "see also"})
BACK_MATTER_WEIGHT = 0.5


@dataclass(slots=True)
class Piece:
    """Lines `first`..`last` (1-based, in the file) of a note, under `olp` (headings within the note)."""

    first: int
    last: int
    olp: list[str]
    text: str
    score: float = 0.0

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass
class Excerpt:
    pieces: list[Piece] = field(default_factory=list)  # merged neighbours, in file order

    @property
    def content(self) -> str:
        return GAP.join(p.text for p in self.pieces)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.content)

    def to_json(self) -> list[dict]:
        return [{"line": p.first, "end_line": p.last, "olp": p.olp, "tokens": p.tokens} for p in self.pieces]


# (first line, last line, outline path, text) of each piece of a note
_Cuts = tuple[tuple[int, int, tuple[str, ...], str], ...]


def pieces(doc: ReadDoc, cuts: AbstractSet[int] = frozenset(), kept: Kept | None = None) -> list[Piece]:
    """The note cut at its headings and at `cuts` (file lines where a passage starts), in file order.

    With `kept` (an index's memo: `IndexMemo.cuts`), an unchanged note is not cut
    again: its text is part of the key, so a changed one is a new key.
    """
    key = (doc.file, doc.line, doc.content, frozenset(cuts))
    made: _Cuts | None = kept.get(key) if kept is not None else None
    if made is None:
        made = _cut(doc.content, doc.line, key[3])
        if kept is not None:
            kept.put(key, made)
    return [Piece(first, last, list(olp), text) for first, last, olp, text in made]


def _cut(content: str, line: int, cuts: frozenset[int]) -> _Cuts:
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    outline = Outline(content)
    starts = sorted({0, *outline.heading_lines, *(c - line for c in cuts if 0 < c - line < len(lines))})
    heads = {at: k for k, at in enumerate(outline.heading_lines)}
    out = []
    bare: int | None = None  # the first line of headings with no text of their own, waiting for a body
    for a, b in zip(starts, starts[1:] + [len(lines)]):
        first = a if bare is None else bare
        if all(i in heads or not lines[i].strip() for i in range(a, b)) and _opens(outline, heads, a, b, len(lines)):
            bare = first  # a heading alone says little: it goes with the section under it
            continue
        bare = None
        place = outline.place(first)
        olp = place.olp + [place.title] if place.level else place.olp
        out.append((line + first, line + b - 1, tuple(olp), "\n".join(lines[first:b])))
    return tuple(out)


def _opens(outline: Outline, heads: dict[int, int], a: int, b: int, end: int) -> bool:
    """Whether the section of lines `a`..`b` (`heads`: each heading's line and index), headings with no
    text of their own, opens what follows it: text of its own (a cut inside its body) or a heading under
    it. A heading with none under it is a leaf, an agenda's "TODO Call the plumber", whose words are all
    it says."""
    if b >= end:
        return False
    return b not in heads or a not in heads or outline.has_children(heads[a])


class PassageScores:
    """The passages of a call's notes scored for its query (line in the file: best score), read for
    many notes at once (one query each for their passages, BM25 and cosines) and kept for the call,
    whose excerpts are widened later from the same scores."""

    def __init__(self, index: Index, query: str, *, embedder: Embedder | None = None,
                 cache: VectorCache | None = None) -> None:
        self.index, self.query, self.embedder, self.cache = index, query, embedder, cache
        self._scores: dict[tuple[str, int, int], dict[int, float]] = {}

    def read(self, docs: Iterable[ReadDoc]) -> None:
        """Score the passages of every note of `docs` not scored yet."""
        spans = [s for s in dict.fromkeys(_span(d) for d in docs) if s not in self._scores]
        if not spans:
            return
        found = self.index.passages_within(spans)
        rowids = sorted({rowid for rows in found for rowid, _ in rows})
        lexical = self.index.passage_bm25(query_terms(self.query), HEADING_WEIGHT, rowids)
        embedder = self.embedder
        if self.index.backend.dense_in_database and embedder is not None and embedder.loaded:
            # the database ranks its vectors itself: its cosines cost less than the vector cache
            dense = self.index.passage_cosines(embedder.fingerprint, embedder.embed_query(self.query), rowids)
        else:
            dense = _dense(self.query, rowids, embedder, self.cache)
        for span, rows in zip(spans, found):
            top = max((lexical.get(rowid, 0.0) for rowid, _ in rows), default=0.0) or 1.0
            score_at: dict[int, float] = {}
            for rowid, line in rows:
                score = dense.get(rowid, 0.0) + LEXICAL_SHARE * lexical.get(rowid, 0.0) / top
                score_at[line] = max(score_at.get(line, score), score)
            self._scores[span] = score_at

    def of(self, doc: ReadDoc) -> dict[int, float]:
        """The best score of the passages starting at each line of `doc`."""
        self.read([doc])
        return self._scores[_span(doc)]


def _span(doc: ReadDoc) -> tuple[str, int, int]:
    """The file and the first and last lines of a note."""
    return doc.file, doc.line, doc.last_line


def excerpt(scores: PassageScores, doc: ReadDoc, room: int, *,
            skip: Sequence[tuple[int, int]] = (), best_only: bool = False,
            lead: int | None = None) -> Excerpt | None:
    """The best pieces of `doc` for the query `scores` rank by within `room` tokens (None when not even one fits).

    The piece holding line `lead` comes first when one does (the passage
    search showed for the note, chosen by the ranking the query trusted),
    then the pieces scoring at least NEAR_BEST of the best one, best first;
    with `best_only` only the first. Lines in `skip` (ranges already given)
    are left out. When the first piece is too long, its first lines that
    fit stand for it.
    """
    if room < MIN_TOKENS:
        return None
    score_at = scores.of(doc)
    cut = [p for p in pieces(doc, set(score_at), scores.index.memo.cuts) if not _covered(p, skip) and p.text.strip()]
    scored = sorted(score_at)
    for piece in cut:
        inside = scored[bisect.bisect_left(scored, piece.first):bisect.bisect_right(scored, piece.last)]
        piece.score = max((score_at[line] for line in inside), default=0.0)
        if piece.olp and piece.olp[-1].strip().lower() in BACK_MATTER:
            piece.score *= BACK_MATTER_WEIGHT
    best = max((p.score for p in cut), default=0.0)
    shown = [p for p in cut if lead is not None and p.first <= lead <= p.last][:1]
    near = [p for p in cut if p.score >= NEAR_BEST * best] if best > 0 else cut[:1]
    worth = shown + sorted((p for p in near if p not in shown), key=lambda p: (-p.score, p.first))
    worth = worth[:1] if best_only else worth
    chosen: list[Piece] = []
    used = 0
    for piece in worth:
        cost = piece.tokens + (estimate_tokens(GAP) if chosen else 0)
        if used + cost <= room:
            chosen.append(piece)
            used += cost
        elif not chosen:  # the first piece is never dropped for being long: its first lines stand for it
            trimmed = _trimmed(piece, room)
            if trimmed.tokens < MIN_TOKENS:
                return None
            chosen.append(trimmed)
            used += trimmed.tokens
    return Excerpt(_merged(sorted(chosen, key=lambda p: p.first))) if chosen else None


def _covered(piece: Piece, skip: Sequence[tuple[int, int]]) -> bool:
    return any(a <= piece.first and piece.last <= b for a, b in skip)


def _trimmed(piece: Piece, room: int) -> Piece:
    """The first whole lines of `piece` that fit in `room` tokens; when not even its first line of text
    fits (a paragraph on one line), that line's first words, so a note's best passage is never dropped
    for being long (empty only when nothing but headings fits)."""
    kept: list[str] = []
    for line in piece.text.split("\n"):
        if estimate_tokens("\n".join([*kept, line])) > room:
            if line.strip() and not sx.HEADING.match(line) and _only_headings(kept):
                kept.append(_words_that_fit(line, room - estimate_tokens("\n".join([*kept, ""]))))
            break
        kept.append(line)
    if _only_headings(kept):
        kept = []
    return Piece(piece.first, piece.first + max(len(kept), 1) - 1, piece.olp, "\n".join(kept), piece.score)


def _only_headings(lines: list[str]) -> bool:
    return all(not line.strip() or sx.HEADING.match(line) for line in lines)


def _words_that_fit(line: str, room: int) -> str:
    """The first words of `line` that fit in `room` tokens, marked as cut ("" when not even one does)."""
    words, count, length = line.split(" "), 0, 0
    for word in words:
        if estimate_tokens(line[:length + len(word)] + " …") > room:
            break
        count, length = count + 1, length + len(word) + 1
    return " ".join(words[:count]) + " …" if count else ""


def _merged(chosen: list[Piece]) -> list[Piece]:
    """Neighbouring pieces as one passage (labelled with the first one's outline path)."""
    out: list[Piece] = []
    for piece in chosen:
        if out and out[-1].last + 1 == piece.first:
            prev = out[-1]
            out[-1] = Piece(prev.first, piece.last, prev.olp, prev.text + "\n" + piece.text,
                            max(prev.score, piece.score))
        else:
            out.append(piece)
    return out


def _dense(query: str, rowids: list[int], embedder: Embedder | None,
           cache: VectorCache | None) -> dict[int, float]:
    """Cosine of the note's passages with the query, from the vectors search has loaded (none: {})."""
    vectors = cache.vectors if cache is not None else None
    if embedder is None or vectors is None or not rowids or not embedder.loaded:
        return {}
    import numpy as np

    rows = np.flatnonzero(np.isin(vectors.chunks, rowids))
    if not len(rows):
        return {}
    scores = vectors.matrix[rows] @ embedder.embed_query(query).astype(np.float32)
    return dict(zip(vectors.chunks[rows].tolist(), scores.tolist()))
