"""Words of the language, beyond the notes' own: what tells a misspelling from a word the notes lack.

A query word that no passage holds is either a slip ("flashcrd") or a real
word the notes never use ("sourdough", "espresso", "afterwards"). Only a slip
may be corrected into a word of the notes; a real word kept as it is tells the
relevance floor that the question is about something the notes do not hold.
A word is real when a general dictionary knows it: pyspellchecker's word
lists (built from subtitles and web text, no dependencies; it ships more
languages than LANGUAGES reads: Italian, Portuguese, Russian, Dutch...). The
lists are read in LANGUAGES' order, each the first time a query word is
missing from the notes and from the lists before it (English: about a tenth
of a second; all four: about a second on a busy machine), then kept by the
process (`Lexicon`), so a query whose words the notes hold never pays for them.

A capitalised word no dictionary knows is taken for a name ("Haming",
"Karpathy"): a name is not a slip of a common word, so it is not corrected
either.
"""

from __future__ import annotations

import gzip
import json
import threading
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy

LANGUAGES = ("en", "fr", "de", "es")  # pyspellchecker's language codes whose words count as real


class Lexicon:
    """The word lists of LANGUAGES, each read the first time a word is missing from the lists before it,
    then kept: never stale (they are the installed package's data). A process holds one (ops/warm.py),
    shared by the memos of every index it serves, as the words of a language belong to no index."""

    def __init__(self) -> None:
        self._lists: dict[str, "numpy.ndarray"] = {}
        self._lock = threading.Lock()

    def is_real(self, word: str, *, capitalised: bool = False) -> bool:
        """Whether `word` is a word of the language (any of LANGUAGES) or, `capitalised`, a name."""
        if capitalised:
            return True
        key = hash(word.lower())
        for language in LANGUAGES:
            words = self._words(language)
            at = int(words.searchsorted(key))
            if at < len(words) and words[at] == key:
                return True
        return False

    def _words(self, language: str) -> "numpy.ndarray":
        with self._lock:
            if language not in self._lists:
                self._lists[language] = _read(language)
            return self._lists[language]


def _read(language: str) -> "numpy.ndarray":
    """The words of `language`'s list as their sorted hashes (this process's string hash): a lookup
    is a binary search, and four lists take about 6 MB instead of 60 as Python strings."""
    import numpy as np

    with resources.files("spellchecker").joinpath(f"resources/{language}.json.gz").open("rb") as packed:
        words = json.loads(gzip.decompress(packed.read()))
    return np.sort(np.fromiter((hash(word) for word in words), dtype=np.int64, count=len(words)))
