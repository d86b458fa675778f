"""Passage-level evidence: which chunk of a deposit matches which passage of which note.

The librarian proposes a link only on evidence a reviewer can check: a chunk of
the deposit and a passage of the target that share rare words (or the chunk
names the target by its title). Words are the index's own: the deposit's
chunks and the candidate passages go through the same FTS5 tokenizer as the
index (`vocab.stems_of`), and each word weighs its inverse document frequency
over the index's passages (read through the index backend's vocabulary, and
passages found by its BM25, so SQLite and PostgreSQL agree), so a chunk that
shares only common words with a note ("system", "time") scores near zero and a
chunk about something the notes never mention (its words absent from the index)
scores near zero against every note. That is what makes one threshold hold for
every deposit: the score is a cosine of idf-weighted word sets, between 0 and 1.

The work is bounded per chunk (its rarest words query the index, a fixed number
of passages come back) and at most MAX_CHUNKS chunks are looked at, so a large
deposit costs time in proportion to its size up to that cap, and no more.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from ..index.store import note_passage_bodies, passage_words_in, passages_of_notes
from ..index.memo import Stems
from ..index.vocab import stems_of
from ..storage.backend import IndexBackend
from ..storage.vocabulary import Vocabulary
from ..storage.db import Connection

MAX_CHUNKS = 200  # chunks of a deposit looked at (the first ones)
QUERY_TERMS = 24  # a chunk's rarest words that query the index
PASSAGES_PER_CHUNK = 12  # passages each chunk brings back
HEADING_WEIGHT = 3.0  # BM25's weight of a passage's heading against its body
SHINGLE = 5  # words per shingle for near-duplicate detection
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Match:
    """One chunk of the deposit against one passage of a note."""

    chunk: int
    passage: int  # the passage's row in the index
    score: float


@dataclass
class NoteEvidence:
    """Everything one note has going for it as a link target of the deposit."""

    id: str
    title: str
    file: str
    tags: list[str]
    matches: list[Match] = field(default_factory=list)
    named_in: list[int] = field(default_factory=list)  # chunks naming the note's title
    overlap: float = 0.0  # share of the deposit's word shingles found in the note

    @property
    def best(self) -> float:
        return max((m.score for m in self.matches), default=0.0)

    @property
    def chunks(self) -> list[int]:
        """The deposit's chunks this evidence rests on, best first, each once."""
        ranked = [m.chunk for m in sorted(self.matches, key=lambda m: (-m.score, m.chunk))]
        return list(dict.fromkeys(self.named_in + ranked))


def gather(conn: Connection, backend: IndexBackend, chunks: list[tuple[int, str]],
           exclude: set[str], kept: Stems | None = None) -> list[NoteEvidence]:
    """Evidence for every note a chunk of the deposit reaches, strongest first; notes whose
    ID or file is in `exclude` (the deposit itself) are left out. `conn` reads the index,
    whose `backend` knows its words; `kept` remembers texts' stems (the index's memo)."""
    chunks = chunks[:MAX_CHUNKS]
    if not chunks:
        return []
    vocabulary = backend.vocabulary(conn)
    own = stems_of(passage_words_in(conn, backend, sorted(exclude)), kept)
    chunk_terms = stems_of(dict(chunks), kept)
    total = backend.passage_count(conn)
    idf, known = _idf(total, conn, vocabulary, {t for terms in chunk_terms.values() for t in terms}, own)
    hits = _passages_for(conn, backend, chunk_terms, idf, known)
    rows = passages_of_notes(conn, backend, sorted({p for ps in hits.values() for p in ps}))
    rows = {p: r for p, r in rows.items() if r.id not in exclude and r.file not in exclude}
    passage_terms = stems_of({p: f"{r.heading}\n{r.body}" for p, r in rows.items()}, kept)
    idf |= _idf(total, conn, vocabulary, {t for terms in passage_terms.values() for t in terms} - idf.keys(),
                own)[0]
    notes: dict[str, NoteEvidence] = {}
    for n, passages in hits.items():
        best: dict[str, Match] = {}
        for p in passages:
            if p not in rows:
                continue
            score = _cosine(chunk_terms[n], passage_terms.get(p, frozenset()), idf)
            row = rows[p]
            if row.id not in best or score > best[row.id].score:
                best[row.id] = Match(n, p, score)
        for node_id, match in best.items():
            row = rows[match.passage]
            note = notes.setdefault(node_id, NoteEvidence(node_id, row.title, row.file, row.tags))
            note.matches.append(match)
    deposit_shingles = {n: _shingles(text) for n, text in chunks}
    for note in notes.values():
        note.named_in = [n for n, text in chunks if _names(text, note.title)]
        note.overlap = _overlap(deposit_shingles, _note_shingles(conn, backend, note.id))
    return sorted(notes.values(), key=lambda e: (-e.best, e.id))


def _idf(passages: int, conn: Connection, vocabulary: Vocabulary, terms: set[str],
         own: dict[int, frozenset[str]]) -> tuple[dict[str, float], set[str]]:
    """Inverse document frequency over the index's passages, and the words the index holds;
    a word the index never saw weighs as much as the rarest (it is what makes an off-topic
    chunk match nothing). The deposit's own passages (`own`, already in the index) do not count
    among the index's `passages`."""
    total = passages - len(own)
    df = vocabulary.documents(conn, terms)
    for word, n in Counter(t for words in own.values() for t in words).items():
        if word in df:
            df[word] -= n
    df = {word: n for word, n in df.items() if n > 0}
    return {t: _idf_of(total, max(df.get(t, 0), 1)) for t in terms}, set(df) & terms


def _idf_of(total: int, df: int) -> float:
    """BM25's idf (never negative, so a tiny index still tells shared words apart)."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _cosine(a: frozenset[str], b: frozenset[str], idf: dict[str, float]) -> float:
    """Cosine of two word sets weighted by idf (squared, as tf-idf vectors with tf 1)."""
    if not a or not b:
        return 0.0
    shared = sum(idf[t] ** 2 for t in a & b)
    norm = math.sqrt(sum(idf[t] ** 2 for t in a) * sum(idf[t] ** 2 for t in b))
    return shared / norm if norm else 0.0


def _passages_for(conn: Connection, backend: IndexBackend, chunk_terms: dict[int, frozenset[str]],
                  idf: dict[str, float], known: set[str]) -> dict[int, list[int]]:
    """The passages each chunk's rarest words known to the index reach by BM25."""
    out: dict[int, list[int]] = {}
    for n, terms in chunk_terms.items():
        rare = sorted((t for t in terms if t in known), key=lambda t: (-idf[t], t))[:QUERY_TERMS]
        out[n] = [passage for _, passage, _ in backend.lexical(conn, rare, HEADING_WEIGHT, PASSAGES_PER_CHUNK)
                  ] if rare else []
    return out


def _names(text: str, title: str) -> bool:
    """Whether the chunk names the title as words of its own (case aside)."""
    words = [w.lower() for w in _WORD.findall(title)]
    if not words or len("".join(words)) < 4:
        return False
    pattern = r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)"
    return re.search(pattern, text.lower()) is not None


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORD.findall(text)]
    return {tuple(words[i:i + SHINGLE]) for i in range(max(0, len(words) - SHINGLE + 1))}


def _note_shingles(conn: Connection, backend: IndexBackend, node_id: str) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for body in note_passage_bodies(conn, backend, node_id):
        out |= _shingles(body)
    return out


def _overlap(deposit: dict[int, set[tuple[str, ...]]], note: set[tuple[str, ...]]) -> float:
    """The share of the deposit's shingles the note holds too."""
    total = sum(len(s) for s in deposit.values())
    return sum(len(s & note) for s in deposit.values()) / total if total else 0.0
