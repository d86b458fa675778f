"""Words of the language, beyond the notes' own: what tells a misspelling from a word the notes lack.

A query word that no passage holds is either a slip ("flashcrd") or a real
word the notes never use ("sourdough", "espresso", "afterwards"). Only a slip
may be corrected into a word of the notes; a real word kept as it is tells the
relevance floor that the question is about something the notes do not hold.
A word is real when a general dictionary knows it: pyspellchecker's word
lists (built from subtitles and web text; English, Spanish, French, German,
Italian, Portuguese, Russian, Dutch and more, no dependencies). LANGUAGES
names the lists read. A list is read the first time a query word is missing
from the notes (about a tenth of a second for English), then kept for the
process, so a query whose words the notes hold never pays for it.

A capitalised word no dictionary knows is taken for a name ("Haming",
"Karpathy"): a name is not a slip of a common word, so it is not corrected
either.
"""

from __future__ import annotations

import functools

LANGUAGES = ("en",)  # pyspellchecker's language codes whose words count as real


def is_real(word: str, *, capitalised: bool = False) -> bool:
    """Whether `word` is a word of the language (any of LANGUAGES) or, `capitalised`, a name."""
    return capitalised or any(word.lower() in _words(language) for language in LANGUAGES)


@functools.cache
def _words(language: str):
    """The word list of `language` (read once per process, on the first word the notes lack)."""
    from spellchecker import SpellChecker

    return SpellChecker(language=language, distance=1).word_frequency
