"""What a process remembers of one index between calls, each memo with its one rule of staleness.

An `Index` carries an `IndexMemo`. A warm process (ops/warm.py) hands the same
memo to every connection of one notes directory, so calls share what earlier
calls found; another notes directory served by the same process gets a memo of
its own, so nothing one index holds is ever read as the other's. A one-shot
`Index` gets a fresh memo, which lives as long as the command. Only the word
lists of the language (lexicon.py), which belong to no index, are shared by
every memo of a process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Generic, Hashable, TypeVar

from .lexicon import Lexicon

COUNTS_KEPT = 100_000  # stems whose counts a memo keeps for one generation of the index
STEMS_KEPT = 20_000  # texts whose stems are remembered (braindump has 3,126 passages)
BASELINES_KEPT = 4  # (model, generation) scales a memo keeps
FACTS_KEPT = 64  # (generation, name) facts of the index a memo keeps (Index.fact)
CUT_CHARS = 4_000_000  # note text whose pieces a memo keeps (each call excerpts the same notes again)

Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class WordCounts:
    """How many passages hold each stem, and the stems by first letter, for one generation of the index.

    Stale when the index's generation (or the vocabulary it is read from) moves
    on: everything is dropped at once, and counted afresh as queries ask. fts5vocab
    counts a term's documents by reading its whole list, so a warm server would
    otherwise pay for it on every query.
    """

    def __init__(self, kept: int = COUNTS_KEPT) -> None:
        self.kept = kept
        self._lock = threading.Lock()
        self._key: Any = None  # (vocabulary, generation) the entries belong to
        self.counts: dict[str, int] = {}  # stem -> documents (0: none holds it)
        self.ranges: dict[str, list[tuple[str, int]]] = {}  # first letter -> [(stem, documents)]

    def _current(self, key: Any) -> None:
        if self._key != key or len(self.counts) > self.kept:
            self._key, self.counts, self.ranges = key, {}, {}

    def known(self, key: Any, stems: set[str]) -> dict[str, int]:
        """The counts of `stems` remembered for `key`, the index as it is now."""
        with self._lock:
            self._current(key)
            return {s: self.counts[s] for s in stems if s in self.counts}

    def learn(self, key: Any, counts: dict[str, int]) -> None:
        with self._lock:
            if self._key == key:
                self.counts.update(counts)

    def range(self, key: Any, first: str, read: Callable[[], list[tuple[str, int]]]) -> list[tuple[str, int]]:
        """The stems starting with `first`, read once per generation."""
        with self._lock:
            self._current(key)
            if first not in self.ranges:
                self.ranges[first] = read()
            return self.ranges[first]


class Kept(Generic[Key, Value]):
    """A pure function's answers by their arguments, the least recently used dropped past `limit`
    of `cost` (entries, or characters of text): never stale, since the key holds all the answer
    depends on (a changed note's text is a new key)."""

    def __init__(self, limit: int, cost: Callable[[Key], int] = lambda key: 1) -> None:
        self.limit, self.cost, self.spent = limit, cost, 0
        self._kept: OrderedDict[Key, Value] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: Key) -> Value | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: Key, value: Value) -> None:
        cost = self.cost(key)
        if cost > self.limit:
            return
        with self._lock:
            if key not in self._kept:
                self._kept[key] = value
                self.spent += cost
            while self.spent > self.limit:
                dropped, _ = self._kept.popitem(last=False)
                self.spent -= self.cost(dropped)


Stems = Kept[str, frozenset[str]]  # a text -> the stems the passage index's tokenizer finds in it


class IndexMemo:
    """The memos of one notes directory's index: word counts (stale with the generation), the stems
    of texts and the cuts of notes (pure, keyed by their text), and the language's word lists (the
    process's: lexicon.py)."""

    def __init__(self) -> None:
        self.counts = WordCounts()
        self.stems: Stems = Kept(STEMS_KEPT)
        # (file, first line, text, cuts) -> the note's pieces; a text and its pieces' text are kept
        self.cuts: Kept[tuple[str, int, str, frozenset[int]], Any] = Kept(CUT_CHARS, lambda key: 2 * len(key[2]))
        self.lexicon = Lexicon()
        # (model fingerprint, generation) -> the corpus's scale for a top cosine (retrieve/probes.py): keyed
        # by all it depends on, so never stale; an older generation's falls out past a few
        self.baselines: Kept[tuple[str, int], Any] = Kept(BASELINES_KEPT)
        # (generation, {path: FileState}): the indexed files' states, stale with the generation, or
        # forgotten by a writer of this process that changed them without moving it (Index.file_states)
        self.files: tuple[int, Any] | None = None
        # (generation, name) -> a fact of the index at that generation (Index.fact): never stale
        self.facts: Kept[tuple[int, str], Any] = Kept(FACTS_KEPT)
