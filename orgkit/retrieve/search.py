"""Search by meaning and by words over the index, ranked per node, judged against a floor.

Dense: one matrix product of the query vector with every passage vector, the
top rows by argpartition, each node ranked by its best passage (in PostgreSQL,
pgvector finds the nearest rows). Lexical: FTS5 BM25 over passages (in
PostgreSQL, the same BM25 from stored terms), matches in the outline path
weighted up; a query word no passage holds and no dictionary knows (a slip,
index/lexicon.py) is replaced by its closest words in the index
(index/vocab.py), and both rankings and the relevance floor read the query
as corrected (only slips are corrected, so a paraphrase keeps its own words
for the model); a real word no passage holds raises the floor. Hybrid:
weighted reciprocal-rank fusion (fusion.py), each ranking weighted per query
by the probability that its top note is right, read from the evidence for
it: BM25's from the idf-weighted share of the query its top passage holds
(and each of its other notes by the share its own passage holds),
dense's from how its top cosine stands against the model's floors
(floor.py); when the two disagree on the top note, each by the chance that
it is right and the other wrong; a question at a larger k, so that a note
both rankings hold near their tops counts for more than either's first. A
note that holds every rare word of a query is not buried by a dense ranking
that found nothing sure, and a paraphrase no passage shares words with
follows the dense ranking. A node
that BM25 ranks near the top and whose title is the query's words (as
stems) comes first. Every hit is then judged against the relevance floor
(floor.py) and points at its best passage's line.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from ..embed import Embedder, ModelUnavailable
from ..errors import OrgkitError
from ..index import vocab
from ..storage.backend import IndexBackend, any_phrase, backend_for, first_of_each_node
from ..storage.db import Connection
from ..index.store import HitPassage, Index
from ..index.vector_store import VectorStore
from ..index.vectors import VectorSet, load_vectors
from ..index.lexicon import Lexicon
from ..index.memo import IndexMemo
from ..index.vocab import Term
from ..index.words import STOPWORDS as _STOPWORDS
from ..index.words import CONTRACTION_TAILS, NUMBER, WORD, query_terms
from . import floor, fusion, probes
from .scope import Scope, scoped

MODES = ("hybrid", "dense", "lexical")
AGREEMENT = 5  # dense's top nodes among which BM25's top one counts as agreed on
RRF_K = 1.0  # reciprocal-rank fusion's k: small, the top of a trusted ranking counts most...
QUESTION_RRF_K = 3.0  # ...and for a question, a note both rankings hold near their tops counts more than either's first
TITLE_WINDOW = 3  # BM25's top hits looked at for a title that is the query
HEADING_WEIGHT = 3.0  # BM25 weight of the outline path against the passage's 1.0
POOL = 50  # nodes each ranking contributes to the fusion
FILTERED_POOL = 10  # times more, when filters (scope.py) will leave out most of them
DENSE_TAKE = 2 * POOL  # nearest texts asked of the database first (more when they hold fewer than POOL nodes)
SNIPPET_CHARS = 240
_SENTENCE = re.compile(r"[.!?:;]\s+")  # where a sentence (or a clause that starts as one) begins in a query
# English function words no other language the lexicon reads writes: a query holding one is English
_ENGLISH = frozenset({"the", "is", "are", "does", "do", "did", "how", "what", "which", "why", "where", "who",
                      "of", "to", "with", "can", "should", "my", "there", "this", "that", "it", "you", "i"})


@dataclass(slots=True)
class SearchHit:
    id: str
    title: str
    file: str
    line: int
    level: int
    score: float
    snippet: str
    chunk: int = field(default=0, repr=False)  # the best passage's row, for callers that read on
    mode: str = "hybrid"  # the ranking that found it: hybrid, dense or lexical
    relevance: float = 0.0  # on the relevance floor's scale (floor.py)
    relevant: bool = True  # False below the floor: nothing here answers the query
    node: int = field(default=0, repr=False)  # the node's row in the index
    corrected: str | None = None  # the query as its mistyped words were taken, when any was
    unit: bool = False  # a file or heading without an ID: `id` is its locator (org/units.py)
    olp: list[str] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        out = {"id": self.id, "title": self.title, "file": self.file, "line": self.line,
               "level": self.level, "score": round(self.score, 6), "snippet": self.snippet,
               "mode": self.mode, "relevance": round(self.relevance, 4), "relevant": self.relevant}
        if self.unit:
            out |= {"id": None, "locator": self.id, "olp": self.olp}
        return out | {"corrected": self.corrected} if self.corrected else out


@dataclass
class SearchResult:
    """Hits, the mode that ranked them, and why it is not the mode asked for (if it is not)."""

    hits: list[SearchHit] = field(default_factory=list)
    mode: str = "hybrid"
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    relevant: bool = False  # whether the query passes the relevance floor
    signals: floor.Signals | None = None  # what the query was judged by (None: no hits)
    corrected: str | None = None  # the query as its mistyped words were taken (None: none was)


@dataclass
class VectorCache:
    """Vectors kept in memory between queries (the server), reloaded when the index changes."""

    fingerprint: str | None = None
    vectors: VectorSet | None = None

    def get(self, index: Index, fingerprint: str, conn: Connection) -> VectorSet:
        current = self.vectors
        if current is None or fingerprint != self.fingerprint or current.generation != index.generation(conn):
            import numpy as np

            loaded = load_vectors(index, fingerprint, conn)
            loaded.matrix = np.ascontiguousarray(loaded.matrix)
            self.fingerprint, self.vectors = fingerprint, loaded
        return self.vectors  # type: ignore[return-value]


@dataclass
class DatabaseVectors:
    """Vectors the database ranks itself (`dense_in_database`): how many there are, and the query that ranks them."""

    backend: IndexBackend
    conn: Connection
    fingerprint: str
    count: int
    generation: int  # the index's, which the count and `indexed` were read at
    indexed: bool  # the model's vectors have their HNSW index

    def nearest(self, query_vector, take: int, nodes: int | None = None) -> list[tuple[int, int, float]]:
        return self.backend.dense(self.conn, self.fingerprint, query_vector, take, self.indexed, nodes)


@dataclass
class Cosines:
    """The query's cosines as the floor reads them: the best over every passage, and a node's best; and
    the corpus's scale for the best (None: not measured, and its words judge the query)."""

    top: float
    of_node: Callable[[int], float]
    baseline: floor.Baseline | None = None

    @classmethod
    def in_memory(cls, vectors: VectorSet, scores) -> "Cosines":
        """From the product with every vector."""
        return cls(float(scores.max(initial=-1.0)),
                   lambda node: float(scores[vectors.nodes == node].max(initial=-1.0)))

    @classmethod
    def in_database(cls, vectors: DatabaseVectors, query_vector, dense: Ranking, nodes: list[int]) -> "Cosines":
        """From pgvector: the nearest passage's cosine, and each shown node's (asked for at once)."""
        best = {node: score for node, _, score in dense}
        best |= vectors.backend.cosines(vectors.conn, vectors.fingerprint, query_vector,
                                        [n for n in nodes if n not in best])
        return cls(dense[0][2] if dense else -1.0, lambda node: best.get(node, -1.0))


# (node row, passage row, score), best first, one entry per node
Ranking = list[tuple[int, int, float]]


def search(
    index: Index,
    query: str,
    *,
    mode: str = "hybrid",
    limit: int = 10,
    embedder: Embedder | None = None,
    cache: VectorCache | None = None,
    min_score: float = 0.0,
    scope: Scope | None = None,
    exact: bool = False,
) -> SearchResult:
    """The `limit` best nodes for `query` within `scope` (None: every note), each judged against
    the relevance floor.

    Without a usable model, lexical ranking. Hits whose relevance is below
    `min_score` are left out. With `exact`, no word is corrected.
    """
    if mode not in MODES:
        raise OrgkitError(f"unknown search mode {mode!r} (choose from {', '.join(MODES)})")
    if not query.strip():
        raise OrgkitError("empty query: give at least one word to search for")
    result = SearchResult(mode=mode)
    pool = max(limit, POOL) * (FILTERED_POOL if scope is not None and scope.filters else 1)
    question = floor.asks(query)
    with index.snapshot() as conn:
        terms = lexical_terms(conn, query, index.backend, index.memo, exact=exact)
        lexical = lexical_ranking(conn, query, pool, terms, index.backend, index.memo) if mode != "dense" else None
        terms, lexical = _as_read(index, conn, query, pool, terms, lexical)
        result.corrected = vocab.corrected(conn, query, terms, index.backend, index.memo)
        vectors, query_vector, scores = None, None, None
        if mode != "lexical":
            vectors, query_vector = _dense_inputs(index, conn, result.corrected or query, embedder, cache, result)
        if lexical is None and result.mode != "dense":  # no model to rank by meaning: words alone
            lexical = lexical_ranking(conn, query, pool, terms, index.backend, index.memo)
        if vectors is not None and not isinstance(vectors, DatabaseVectors):
            scores = dense_scores(vectors, query_vector)
        dense = dense_ranking(vectors, query_vector, pool, scores) if vectors is not None else None
        floors = floor.floors_for(embedder.name) if embedder is not None else None
        total = index.fact(conn, "passages", lambda: index.backend.passage_count(conn))
        agree = not lexical or not dense or lexical[0][0] in {node for node, _, _ in dense[:AGREEMENT]}
        if lexical is not None and dense is not None:
            coverages = _lexical_evidence(index, terms, lexical, total)
            confidence = floor.dense_confidence(floors, dense[0][2]) if dense else 0.0
            trust = fusion.trust(coverages[0] if coverages else 0.0, confidence, agree)
            fused = fuse(lexical, dense, title_match(index, lexical, query, terms), trust,
                         fusion.note_weights(coverages, confidence, agree), QUESTION_RRF_K if question else RRF_K)
        else:
            fused = lexical if lexical is not None else dense or []
        fused = scoped(index, fused, scope)
        result.hits = _hits(index, fused, query, limit)
        cosines = None
        if scores is not None and vectors is not None:
            cosines = Cosines.in_memory(vectors, scores)
        elif isinstance(vectors, DatabaseVectors):
            cosines = Cosines.in_database(vectors, query_vector, dense or [], [h.node for h in result.hits])
        if cosines is not None and floors is not None and embedder is not None and vectors is not None:
            cosines.baseline = _baseline(index, conn, embedder, vectors)  # only a calibrated floor reads it
        dense_floors = floors if cosines is not None else None
        result.signals = _judge(index, result.hits, terms, lexical or [], cosines, dense_floors, total,
                                question, typed_as_names(query) if question else [])
        result.relevant = result.signals is not None and floor.judge(result.signals, dense_floors).relevant
    for hit in result.hits:
        hit.mode = result.mode
        hit.corrected = result.corrected
    if min_score > 0:
        result.hits = [h for h in result.hits if h.relevance >= min_score]
    return result


def _baseline(index: Index, conn: Connection, embedder: Embedder,
              vectors: "VectorSet | DatabaseVectors") -> floor.Baseline:
    """The corpus's scale for a top cosine (probes.py), kept in the index's memo per model and generation."""
    if isinstance(vectors, DatabaseVectors):
        import numpy as np

        key = (embedder.fingerprint, vectors.generation)
        return probes.baseline(index.memo.baselines, key, embedder, lambda probed: np.array(
            [max((score for _, _, score in vectors.nearest(vector, 1, nodes=1)), default=-1.0) for vector in probed]))
    key = (embedder.fingerprint, vectors.generation)
    return probes.baseline(index.memo.baselines, key, embedder, lambda probed: (vectors.matrix @ probed.T).max(axis=0))


def _lexical_evidence(index: Index, terms: list[Term], lexical: Ranking, total: int) -> list[float]:
    """The idf-weighted share of the query's words each of BM25's passages holds, in its order (none
    without a match)."""
    if not lexical or not terms:
        return []
    covered = _coverages(index, terms, sorted({chunk for _, chunk, _ in lexical}), total)
    return [covered[chunk] for _, chunk, _ in lexical]


def _coverages(index: Index, terms: list[Term], passages: list[int], total: int) -> dict[int, float]:
    """Each passage's share of the query's word weight (idf, a corrected word at its credit) that it holds."""
    held = _words_held(index, terms, passages)
    weights = [floor.idf(t.docs, total) for t in terms]
    credit = [_credit(t) for t in terms]
    return {p: floor.coverage([(w, credit[i] if p in held[i] else 0.0) for i, w in enumerate(weights)])
            for p in passages}


def known(terms: list[Term]) -> float:
    """The share of the query's meaningful words the notes hold at all, a corrected slip counted as
    the word it was taken for: a real word no note uses is evidence that the question is about
    something else (floor.py). A query of no word at all ("--", "???") holds none the notes hold:
    its cosine alone, which the model gives any text, is no evidence it is about them."""
    return sum(1 for t in terms if t.docs or t.corrections) / len(terms) if terms else 0.0


def unnamed(terms: list[Term], lexicon: Lexicon, names: Sequence[frozenset[str]] = ()) -> bool:
    """Whether the query names a thing the notes lack: a word no note holds, that is no slip of a word
    they hold, and that the language barely uses (floor.py), or a name typed as one (`names`,
    `typed_as_names`) no word of which the notes hold: "Telegram", "Looker", "Runge-Kutta", but not
    "Bay Area" where they speak of an area. A number names nothing alone (a version, an error code the
    notes need not spell out; "40th", "1990s"), nor does a contraction's tail."""
    lacked = {t.word for t in terms if not t.docs and not t.corrections and not NUMBER.fullmatch(t.word)
              and t.word not in CONTRACTION_TAILS}
    return any(floor.rare(lexicon.count(word)) for word in lacked) or any(name <= lacked for name in names)


def typed_as_names(query: str) -> list[frozenset[str]]:
    """The names `query` types: each run of words capitalised where no sentence starts, lower-cased and
    without stopwords ("is there a Telegram client", "to the Bay Area", "what is TLS"). A query typed
    in Title Case or in capitals is one long run, which names nothing the notes lack once they hold
    a word of it (`unnamed`). Only English writes its nouns in lower case, so a capital marks a name
    only in a query written in English, holding one of its function words (`_ENGLISH`): in German
    every noun has one ("wie entlüfte ich die Heizung").
    """
    if _ENGLISH.isdisjoint(w.lower() for w in WORD.findall(query)):
        return []
    names: list[set[str]] = []
    for sentence in _SENTENCE.split(query):
        run = False
        for place, word in enumerate(WORD.findall(sentence)):
            capital = place > 0 and word[:1].isupper()
            if capital and not run:
                names.append(set())
            if capital and word.lower() not in _STOPWORDS:
                names[-1].add(word.lower())
            run = capital
    return [frozenset(name) for name in names if name]


def _credit(term: Term) -> float:
    """What holding a query word counts: the word itself fully, a correction of a mistyped one less."""
    return 1.0 if term.docs else floor.CORRECTED_WEIGHT


def _judge(index: Index, hits: list[SearchHit], terms: list[Term], lexical: Ranking,
           cosines: Cosines | None, dense_floors: floor.Floors | None, total: int,
           asks: bool = False, names: Sequence[frozenset[str]] = ()) -> floor.Signals | None:
    """Mark each hit relevant or not (floor.py); the signals the query was judged by (None: no hits).

    A hit's cosine is its best passage's; its coverage is read from the
    passage BM25 ranked it by (the one shown, when BM25 did not rank it). The
    query is judged by the best of each: the top cosine over every passage and
    the best coverage among the hits, and the top hit's coverage (what a
    question's first note must hold). A hit of a query that passes is relevant
    when it reaches the hit floor, or when its words alone would pass: the one
    judgment search shows and `context` reads its candidates by. A query of
    function words alone ("the of and", "how do i?") is ranked by them, as
    nothing else is left to rank by, and judged without them: every note holds
    them, and holding them says nothing of what the query is about.
    """
    if not hits:
        return None
    terms = [term for term in terms if term.word not in _STOPWORDS]
    lexical_passage = {node: chunk for node, chunk, _ in lexical}
    passages = {h.node: lexical_passage.get(h.node, h.chunk) for h in hits}
    covered = _coverages(index, terms, sorted(set(passages.values())), total)
    signals = [floor.Signals(cosines.of_node(hit.node) if cosines is not None else None, covered[passages[hit.node]])
               for hit in hits]
    best = floor.Signals(cosines.top if cosines is not None else None,
                         max(signal.coverage for signal in signals), known(terms),
                         cosines.baseline if cosines is not None else None, asks,
                         signals[0].coverage if terms else 1.0,
                         asks and unnamed(terms, index.memo.lexicon, names))
    passes = floor.judge(best, dense_floors).relevant  # the query's verdict, as search() records it
    for hit, signal in zip(hits, signals):
        verdict = floor.judge(signal, dense_floors, hit=True)
        by_words = floor.judge(floor.Signals(None, signal.coverage)).relevant
        hit.relevance = verdict.relevance
        hit.relevant = passes and (verdict.relevant or by_words)
    return best


def _in_context(terms: list[Term], held: frozenset[str]) -> list[Term]:
    """`terms` with each mistyped word's corrections held by BM25's top passage (`held`: the stems of
    the one that best matches the whole query, each correction searched for) put first, the others
    in their order (closest, then commonest): "modl training" is read as "model", not "mold", where
    the notes train models. A passage holding no other word of the query is no context: BM25 put it
    first for its correction's rarity alone. What the query is shown and embedded as is the first
    correction."""
    if not any(len(t.corrections) > 1 for t in terms) or sum(_holds(held, t) for t in terms) < 2:
        return terms  # nothing to order, or no word beside the slip's: a rarer correction alone put it first
    return [replace(t, corrections=tuple(sorted(t.corrections, key=lambda stem: stem not in held)))
            if len(t.corrections) > 1 else t for t in terms]


def _as_read(index: Index, conn: Connection, query: str, pool: int, terms: list[Term],
             lexical: Ranking | None) -> tuple[list[Term], Ranking | None]:
    """The query's words as BM25's top passage reads them (`_in_context`, `_borne_out`), and BM25's
    ranking of them (None stays None: dense mode asks BM25 only to read a doubtful word, as the
    other modes do, so every mode embeds the query as read). The passage's stems are read once."""
    doubtful = any(t.doubtful for t in terms)
    asked = lexical and (doubtful or any(len(t.corrections) > 1 for t in terms))
    held = _top_stems(index, lexical) if asked else frozenset()
    terms = _in_context(terms, held)
    if not doubtful:
        return terms, lexical
    if lexical is None:
        held = _top_stems(index, lexical_ranking(conn, query, pool, terms, index.backend, index.memo))
    borne = _borne_out(index, terms, held)
    if borne == terms or lexical is None:
        return borne, lexical
    return borne, lexical_ranking(conn, query, pool, borne, index.backend, index.memo)


def _top_stems(index: Index, ranking: Ranking | None) -> frozenset[str]:
    """The stems BM25's top passage holds (none without one)."""
    if not ranking:
        return frozenset()
    return _stems_in(index, [ranking[0][1]]).get(ranking[0][1], frozenset())


def _borne_out(index: Index, terms: list[Term], held: frozenset[str]) -> list[Term]:
    """`terms` with each doubtful reading of a word the language uses (vocab.doubtful: a correction, or
    two words it was cut into) undone unless BM25's top passage, ranked with it (`held`: its stems),
    holds it beside another word of the query: "matcha" alone, or where no passage holds "match"
    beside the query's "tea", is kept as typed, a word the notes lack, and so is "livestream" alone
    where they say "live stream"; "recieve the parcel" is read as "receive" where the notes receive
    parcels."""
    out: list[Term] = []
    for reading in _readings(terms):
        others = [t for t in terms if all(t is not r for r in reading)]
        if not reading[0].doubtful or (all(_holds(held, t) for t in reading) and any(_holds(held, t) for t in others)):
            out += reading
        elif reading[0].joined:
            word = reading[0].joined
            out.append(Term(word, vocab.stem([word], index.memo.stems)[0], 0))
        else:
            out.append(replace(reading[0], corrections=(), doubtful=False, docs=reading[0].docs_as_typed))
    return out


def _readings(terms: list[Term]) -> list[list[Term]]:
    """`terms` as each typed word was read: one term, or the words a compound was cut into (in a row)."""
    groups: list[list[Term]] = []
    for term in terms:
        if term.joined and groups and groups[-1][0].joined == term.joined:
            groups[-1].append(term)
        else:
            groups.append([term])
    return groups


def _words_held(index: Index, terms: list[Term], passages: list[int]) -> list[set[int]]:
    """For each query word, which of `passages` hold it (or, for a mistyped word, one of its corrections)."""
    held = _stems_in(index, passages)
    return [{p for p, stems in held.items() if _holds(stems, t)} for t in terms]


def _holds(stems: frozenset[str], term: Term) -> bool:
    """Whether a passage with these `stems` holds the query word `term` (a mistyped one: a correction)."""
    return bool(({term.stem} if term.docs else set(term.corrections)) & stems)


def _stems_in(index: Index, passages: list[int]) -> dict[int, frozenset[str]]:
    """The stems each of `passages` holds (heading and body, as BM25 reads them), by row: stemmed
    in memory, one query and one tokenizer pass instead of a search per word."""
    return vocab.stems_of(index.passage_words(passages), index.memo.stems)


def _dense_inputs(index: Index, conn: Connection, query: str, embedder: Embedder | None,
                  cache: VectorCache | None, result: SearchResult):
    """(vectors, `query`'s vector) for dense ranking, or (None, None) with the reason in `result`.

    The stored vectors are looked at first: with none from this model there is
    nothing to rank by meaning, and the model is not even loaded.
    """
    if embedder is None:
        return _words_only(result, "no embedding model configured")
    backend = index.backend
    if backend.dense_in_database:
        fingerprint = embedder.fingerprint
        count = index.fact(conn, f"vectors {fingerprint}", lambda: VectorStore(conn, backend).count(fingerprint))
        indexed = count > 0 and index.fact(conn, f"vector index {fingerprint}",
                                           lambda: backend.has_vector_index(conn, fingerprint))
        vectors: DatabaseVectors | VectorSet = DatabaseVectors(backend, conn, fingerprint, count,
                                                               index.generation(conn), indexed)
    else:
        cached = (cache or VectorCache()).get(index, embedder.fingerprint, conn)
        vectors, count = cached, len(cached.chunks)
    missing = embedder.missing() if count == 0 else None
    if missing is not None:
        return _words_only(result, missing)
    if count == 0:
        return _words_only(result, f"no passage has a vector from {embedder.name} yet "
                                   "(run `orgkit index` to embed them)")
    try:
        return vectors, embedder.embed_query(query)
    except ModelUnavailable as exc:
        return _words_only(result, str(exc))


def _words_only(result: SearchResult, reason: str) -> tuple[None, None]:
    result.mode, result.reason = "lexical", reason
    result.warnings.append(f"{reason}; ranking by words only")
    return None, None


def fts_match(query: str) -> str | None:
    """The FTS5 MATCH expression of a query: any of its meaningful words (None when it has none)."""
    terms = query_terms(query)
    return any_phrase(terms) if terms else None


def lexical_ranking(conn: Connection, query: str, pool: int, terms: list[Term] | None = None,
                    backend: IndexBackend = backend_for(None), memo: IndexMemo | None = None) -> Ranking:
    """Nodes by their best passage's BM25 (any query word may match, or what a mistyped one meant).

    The heading column (the note's title, outline path and aliases) weighs
    HEADING_WEIGHT times the passage's text, so a note about a word outranks a
    note that mentions it. Without `terms`, the query's are found through `memo` (None: a memo of this call's).
    """
    memo = memo or IndexMemo()
    wanted = wanted_words(terms if terms is not None else lexical_terms(conn, query, backend, memo), memo)
    if not wanted:
        return []
    return _best_per_node(backend.lexical(conn, wanted, HEADING_WEIGHT, pool * 8), pool)


def lexical_terms(conn: Connection, query: str, backend: IndexBackend, memo: IndexMemo,
                  exact: bool = False) -> list[Term]:
    """The query's meaningful words as the passage index knows them (mistyped ones corrected, unless `exact`;
    a word typed capitalised is taken for a name, corrected only into a word of the notes with its letters)."""
    names = frozenset(w.lower() for w in WORD.findall(query) if w[:1].isupper())
    return vocab.terms(conn, query_terms(query), backend.vocabulary(conn), backend, memo, names=names,
                       correct=not exact)


def wanted_words(terms: list[Term], memo: IndexMemo) -> list[str]:
    """The words to match: each that some passage holds, and the corrections of one that none does
    (stems: each as a word the tokenizer cuts to it, `vocab.matchable`)."""
    fixes = vocab.matchable(list(dict.fromkeys(c for t in terms for c in t.corrections)), memo.stems)
    return list(dict.fromkeys([t.word for t in terms if t.docs] + fixes))


def dense_ranking(vectors: VectorSet | DatabaseVectors, query_vector, pool: int, scores=None) -> Ranking:
    """Nodes by their best passage's cosine similarity: one product, one partial sort.

    `scores` is the product when the caller has computed it (`dense_scores`).
    """
    import numpy as np

    if isinstance(vectors, DatabaseVectors):
        return _nearest_per_node(vectors, query_vector, pool)
    total = len(vectors.chunks)
    if total == 0:
        return []
    if scores is None:
        scores = dense_scores(vectors, query_vector)
    take = min(total, pool * 8)
    while True:
        top = np.argpartition(scores, total - take)[total - take:] if take < total else np.arange(total)
        top = top[np.argsort(-scores[top], kind="stable")]
        ranking = _best_per_node(
            zip(vectors.nodes[top].tolist(), vectors.chunks[top].tolist(), scores[top].tolist()), pool)
        if len(ranking) >= pool or take >= total:
            return ranking
        take = min(total, take * 4)


def dense_scores(vectors: VectorSet, query_vector):
    """The query's cosine with every passage (one matrix product)."""
    import numpy as np

    return vectors.matrix @ query_vector.astype(np.float32)


def _nearest_per_node(vectors: DatabaseVectors, query_vector, pool: int) -> Ranking:
    """`dense_ranking` in the database: the nearest passages, more of them until `pool` nodes are found.

    The first request is small (an HNSW search costs with the length of its
    candidate list); one that finds fewer than `pool` nodes asks for four times more.
    """
    take = min(vectors.count, max(pool, DENSE_TAKE))
    while True:
        ranking = _best_per_node(vectors.nearest(query_vector, take, pool), pool)
        if len(ranking) >= pool or take >= vectors.count:
            return ranking
        take = min(vectors.count, take * 4)


def _best_per_node(rows, pool: int) -> Ranking:
    return [(node, chunk, float(score)) for node, chunk, score in first_of_each_node(rows, pool)]


def fuse(lexical: Ranking, dense: Ranking, title_match: int | None = None,
         trust: fusion.Trust = fusion.Trust(1.0, 1.0), lexical_weights: Sequence[float] = (),
         k: float = RRF_K) -> Ranking:
    """Weighted reciprocal-rank fusion of the two rankings, each at its `trust` (BM25's notes each at
    its own weight in `lexical_weights`, when given), at `k`; `title_match` (a node) first.

    A question is fused at a larger k (QUESTION_RRF_K): both rankings read
    its full words, and the note that answers it is often near the top of
    each and first in neither, where k = 1 gives the stronger ranking's
    first note the place.

    The title match's score is raised by the most any node can have, so the
    list stays sorted by the score it shows. A node keeps the passage of the
    ranking that gave it more of its score (its weight over its rank): in a
    long file, the passage a trusted ranking found, not the one a ranking
    with little evidence put at the same rank.
    """
    lexical_weights = list(lexical_weights) or [trust.lexical] * len(lexical)
    dense_weights = [trust.dense] * len(dense)
    scores = fusion.reciprocal_rank([(dense_weights, [n for n, _, _ in dense]),
                                     (lexical_weights, [n for n, _, _ in lexical])], k)
    if title_match in scores:
        scores[title_match] += (max(lexical_weights, default=0.0) + trust.dense) / (k + 1)
    best: dict[int, tuple[float, int, int]] = {}  # node -> (its share of the score, rank, passage)
    for weights, ranking in ((lexical_weights, lexical), (dense_weights, dense)):
        for rank, ((node, chunk, _), weight) in enumerate(zip(ranking, weights), 1):
            share = weight / (k + rank)
            if node not in best or share > best[node][0]:
                best[node] = (share, rank, chunk)
    order = sorted(scores, key=lambda n: (-scores[n], best[n][1]))
    return [(n, best[n][2], scores[n]) for n in order]


def title_match(index: Index, lexical: Ranking, query: str, terms: list[Term]) -> int | None:
    """The best of BM25's top TITLE_WINDOW nodes whose title is the query's words, in any order.

    A query that names a note is a request for that note, whatever else means
    something close; a title that merely contains the words is not. Words
    are compared as the index stems them, a mistyped one by what it was taken
    for, so "gaussian filtering" and "gausian filter" both name "Gaussian Filter",
    and a stem that starts another counts as the same word ("argue against"
    names "Arguments Against"). Of two titles alike as stems, the one closer to
    the query as typed.
    """
    top = [node for node, _, _ in lexical[:TITLE_WINDOW]]
    if not terms or not top:
        return None
    wanted = [{t.stem} if t.docs else set(t.corrections) for t in terms]
    if not all(wanted):
        return None
    titles = index.node_titles(top)
    named = []
    for node in top:
        stems = set(vocab.stem(query_terms(titles.get(node) or ""), index.memo.stems))
        if len(stems) == len(wanted) and all(any(_same_word(s, alternatives) for s in stems)
                                             for alternatives in wanted):
            named.append(node)
    if len(named) < 2:
        return named[0] if named else None
    typed = _surface(query)  # titles alike as stems ("C++ Language", "The C Language"): the one as typed
    return min(named, key=lambda node: vocab.edit_distance(typed, _surface(titles.get(node) or ""), len(typed)))


def _surface(text: str) -> str:
    """Text as typed, lower-cased and without stopwords, its other characters kept ("c++ language")."""
    return " ".join(w for w in text.lower().split() if w.strip(string.punctuation) not in _STOPWORDS)


def _same_word(stem: str, alternatives: set[str]) -> bool:
    """Whether a title's stem is one of a query word's: equal, or one the start of the other when
    the shorter has SHORTEST letters (the stemmer keeps "argu" from "argue" and "argument" from
    "arguments")."""
    return any(stem == a or (min(len(stem), len(a)) >= vocab.SHORTEST and (stem.startswith(a) or a.startswith(stem)))
               for a in alternatives)


def _hits(index: Index, ranking: Ranking, query: str, limit: int) -> list[SearchHit]:
    """Ranked nodes as hits; a node ID held by two files counts once."""
    nodes = index.nodes_by_rowid([n for n, _, _ in ranking[: limit * 2]])
    passages = index.hit_passages([c for _, c, _ in ranking[: limit * 2]])
    terms = query_terms(query)
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for node_row, chunk, score in ranking:
        node = nodes.get(node_row)
        if node is None or node["id"] in seen:
            continue
        seen.add(node["id"])
        heading, body, line = passages.get(chunk, HitPassage("", "", 0))
        hits.append(SearchHit(id=node["id"], title=node["title"], file=node["file"], line=max(node["line"], line),
                              level=node["level"], score=score, snippet=snippet(body or heading, terms),
                              chunk=chunk, node=node_row, unit=node["unit"], olp=node["olp"]))
        if len(hits) >= limit:
            break
    return hits


def snippet(text: str, terms: list[str]) -> str:
    """A window of the passage around the query words it contains, on one line."""
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    lowered = flat.lower()
    found = [p for p in (lowered.find(t[:5]) for t in terms) if p >= 0]
    start = max(0, min(found) - SNIPPET_CHARS // 4) if found else 0
    if start:
        space = flat.rfind(" ", 0, start)
        start = space + 1 if space >= 0 else start
    end = min(len(flat), start + SNIPPET_CHARS)
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > start else end
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
