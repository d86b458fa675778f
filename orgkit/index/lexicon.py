"""Words of the language, beyond the notes' own: what tells a misspelling from a word the notes lack.

A query word that no passage holds is either a slip ("flashcrd") or a real
word the notes never use ("sourdough", "espresso", "afterwards"). Only a slip
may be corrected into a word of the notes; a real word kept as it is tells the
relevance floor that the question is about something the notes do not hold.
A word is real when a general dictionary knows it: pyspellchecker's word
lists (built from subtitles and web text, no dependencies; it ships more
languages than LANGUAGES reads: Italian, Portuguese, Russian, Dutch...), or
wordfreq's short list of English (every word used at least once in a
million, from subtitles, books, news, the web and social media, pooled): the
dictionary lists date from older subtitles and lack the words of everyday
life that came later or from elsewhere ("app", "wifi", "selfie", "emoji",
"hashtag"), which without them were slips of a word the notes hold ("wifi"
read as "wiki"). wordfreq's bar of one use in a million leaves out nearly
every misspelling its sources hold ("recieve", "seperate"). The lists of a
language are read in LANGUAGES' order, each the first time a query word is
missing from the notes and from the lists before it (English: about a tenth
of a second; all four: about a second on a busy machine), then kept by the
process, so a query whose words the notes hold never pays for them, and no
query pays twice.

A capitalised word no dictionary knows is taken for a name ("Haming",
"Karpathy"): a name is not a slip of a common word, so it is corrected only
into a word of the notes with its very letters (vocab.py).

The lists also count how often each word is used (`count`): a word the
language barely uses ("paxos", "homology") names a particular thing, and a
question naming a thing the notes lack is not answered by them (floor.py).
A count is the highest of every list (English's "identifier" is rare,
French's is not), so it reads them all; it is asked only for a question's
words the notes lack, which `is_real` has mostly read them for already.
Only pyspellchecker's lists count: a word wordfreq alone knows counts 0,
as before it did (the floor's bar for a rare word is on their scale). German's
list counts most German nouns at its floor, however common ("stadt"), so a
word it holds counts as used once in a million words when wordfreq's small
German list holds it too (NOUNS_UNCOUNTED).

Below those lists' bar the language still uses words a search may meet:
"matcha", "hangry", "glamping" are used less than once in a million words,
and so were slips of "match", "hungry", "clamp". wordfreq's large list of
English (words used at least once in a hundred million) knows them, but it
knows the web's commonest misspellings as well ("recieve", "tring"), so it
cannot say real from slip; what it gives is how often (`used`, on the Zipf
scale: 3 is once in a million), which vocab.py weighs against the correction's.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
from importlib import resources
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import numpy

LANGUAGES = ("en", "fr", "de", "es")  # pyspellchecker's language codes whose words count as real
# wordfreq's lists read beside them: English alone, as the web text of the others drops accents, and
# "expresion", "funcion" (Spanish without its accent) are slips of English words
EVERYDAY = ("en",)
USAGE = "en-large"  # wordfreq's large English list, kept apart: its words are no evidence a word is real
# Languages whose dictionary list counts most of their nouns at its floor, however common: German writes
# every noun with a capital, and 1,514 of wordfreq's 4,000 commonest German words ("stadt", "minuten",
# "beispiel") count under the floor's bar for a rare word there, against 139 of English's 4,000 (numbers
# and letters). A word such a list holds counts, too, as often as wordfreq's small list of the language
# says: at least ONCE_IN_A_MILLION when that list holds it.
NOUNS_UNCOUNTED = ("de",)
ONCE_IN_A_MILLION = 600  # what English's list counts a word used once in a million words (its median at Zipf 3: 614)
SMALL = "-small"  # the key of a language's small wordfreq list beside its dictionary's (NOUNS_UNCOUNTED)


# Each language's lists as `_read` gives them, read once a process: they are the installed package's
# data, never stale, and belong to no index, so every index's memo (and every Lexicon) shares them.
_LISTS: dict[str, tuple["numpy.ndarray", "numpy.ndarray"]] = {}
_LISTS_LOCK = threading.Lock()


class Lexicon:
    """The words of LANGUAGES: each language's lists read the first time a word is missing from the lists
    before it, then kept by the process (`_LISTS`)."""

    def is_real(self, word: str) -> bool:
        """Whether `word` is a word of the language (in any of LANGUAGES' lists, EVERYDAY's included)."""
        key = hash(word.lower())
        return any(self._count_in(language, key) is not None for language in LANGUAGES)

    def real(self, words: Iterable[str]) -> set[str]:
        """Those of `words` that are words of the language, looked up together: a slip's hundreds of
        edits cost a fraction of a millisecond this way, a few milliseconds one `is_real` at a time."""
        return self._among(words, LANGUAGES)

    def usable(self, words: Iterable[str]) -> set[str]:
        """Those of `words` that wordfreq's large list knows (`used` above 0), looked up together."""
        return self._among(words, (USAGE,))

    def _among(self, words: Iterable[str], languages: tuple[str, ...]) -> set[str]:
        import numpy as np

        tried = sorted(set(words))
        keys = np.fromiter((hash(word.lower()) for word in tried), dtype=np.int64, count=len(tried))
        found = np.zeros(len(tried), dtype=bool)
        for language in languages:
            listed, _ = self._words(language)
            at = np.minimum(listed.searchsorted(keys), len(listed) - 1)
            found |= listed[at] == keys
        return {word for word, known in zip(tried, found) if known}

    def count(self, word: str) -> int:
        """How often the language uses `word`: its highest count in any of LANGUAGES' lists (0: in none),
        a British spelling the count of its American form (the English list spells the American way:
        "honour" is "honor" to it), a plural or verb form at least its word's (the lists count
        "asterisks" barely, "asterisk" often)."""
        word = word.lower()
        return max(map(self._listed, {word, *american(word), *_uninflected(word)}))

    def used(self, word: str) -> float:
        """How often English uses `word`, on the Zipf scale (log10 of uses in a billion words; 0: less
        than once in a hundred million): wordfreq's large list, read the first time it is asked."""
        return (self._count_in(USAGE, hash(word.lower())) or 0) / 100

    def _listed(self, word: str) -> int:
        key = hash(word)
        return max(self._counted(language, key) for language in LANGUAGES)

    def _counted(self, language: str, key: int) -> int:
        """The count of the word hashed as `key` in `language` (0: not listed), a noun of a language whose
        list leaves its nouns uncounted (NOUNS_UNCOUNTED) at least ONCE_IN_A_MILLION when wordfreq's
        small list of the language holds it too."""
        count = self._count_in(language, key)
        if count is None:
            return 0
        if language not in NOUNS_UNCOUNTED or count >= ONCE_IN_A_MILLION:
            return count
        return ONCE_IN_A_MILLION if self._count_in(language + SMALL, key) is not None else count

    def _count_in(self, language: str, key: int) -> int | None:
        """The count of the word hashed as `key` in `language`'s lists (None: not listed, 0: listed uncounted)."""
        words, counts = self._words(language)
        at = int(words.searchsorted(key))
        return int(counts[at]) if at < len(words) and words[at] == key else None

    def _words(self, language: str) -> tuple["numpy.ndarray", "numpy.ndarray"]:
        with _LISTS_LOCK:
            if language not in _LISTS:
                _LISTS[language] = _read(language)
            return _LISTS[language]


# One word's British and American spellings: (British, American, what comes before, what comes after)
_SPELLINGS = (
    ("our", "or", r"\w{2,}", r"(?:s|ed|ing|ite|ites|able|er|ers|hood|ful|less)?"),  # honour, colour, favourite
    ("is", "iz", r"\w*[aeiouy]\w", r"(?:e|es|ed|ing|ation|ations|er|ers)"),  # organise, realised, civilisation
    ("ys", "yz", r"\w+", r"(?:e|es|ed|ing)"),  # analyse, paralysed
    ("re", "er", r"\w+[tb]", r"s?"),  # centre, fibres, metre (not "genre": "general" stems as "gener" does)
    ("ogue", "og", r"\w+", r"s?"),  # catalogue, dialogues
    ("ll", "l", r"\w*[aeiou]", r"(?:ed|ing|er|ers)"),  # travelling, modelled, labeller
    ("ence", "ense", r"\w+", r"s?"),  # defence, licences
)
_AMERICAN = tuple((re.compile(f"({before}){british}({after})"), rf"\g<1>{american}\g<2>")
                  for british, american, before, after in _SPELLINGS)
_BRITISH = tuple((re.compile(f"({before}){american}({after})"), rf"\g<1>{british}\g<2>")
                 for british, american, before, after in _SPELLINGS)


def american(word: str) -> set[str]:
    """The American spellings a British-spelt `word` may have (none for a word with no British ending)."""
    return _respelt(word, _AMERICAN)


def spellings(word: str) -> set[str]:
    """The other spellings `word` may have across the Atlantic, either way ("colour": "color"; "color":
    "colour")."""
    return _respelt(word, _AMERICAN) | _respelt(word, _BRITISH)


def _respelt(word: str, rules: tuple[tuple[re.Pattern[str], str], ...]) -> set[str]:
    return {m.expand(other) for pattern, other in rules if (m := pattern.fullmatch(word))} - {word}


_INFLECTIONS = (("ies", ("y",)), ("es", ("", "e")), ("s", ("",)), ("ed", ("", "e")), ("ing", ("", "e")))


def _uninflected(word: str) -> set[str]:
    """The words an English plural or verb form may be of ("asterisks": "asterisk"; "parsing": "pars",
    "parse"), for a word of five letters or more that ends as one (no "ss": "class" is no plural)."""
    if len(word) < 5 or word.endswith("ss"):
        return set()
    return next(({word[:-len(ending)] + base for base in bases} for ending, bases in _INFLECTIONS
                 if word.endswith(ending)), set())


def _read(language: str) -> tuple["numpy.ndarray", "numpy.ndarray"]:
    """The words of `language`'s lists as their sorted hashes (this process's string hash) and their
    counts in the same order (0 for a word wordfreq alone lists): a lookup is a binary search, and
    four languages take about 10 MB instead of 60 as Python strings."""
    if language == USAGE:
        return _usage()
    if language.endswith(SMALL):
        import wordfreq

        return _hashed(dict.fromkeys(wordfreq.iter_wordlist(language.removesuffix(SMALL), "small"), 0))
    with resources.files("spellchecker").joinpath(f"resources/{language}.json.gz").open("rb") as packed:
        words: dict[str, int] = json.loads(gzip.decompress(packed.read()))
    if language in EVERYDAY:
        import wordfreq

        words |= {word: 0 for word in wordfreq.iter_wordlist(language, "small") if word not in words}
    return _hashed(words)


def _usage() -> tuple["numpy.ndarray", "numpy.ndarray"]:
    """wordfreq's large English list as `_hashed` keeps it, each word's count its Zipf value times 100
    (its buckets are a hundredth of a Zipf step apart: bucket i holds the words used 10^(-i/100) of the time)."""
    import wordfreq

    buckets = wordfreq.get_frequency_list("en", "large")
    return _hashed({word: 900 - i for i, bucket in enumerate(buckets) for word in bucket})


def _hashed(words: dict[str, int]) -> tuple["numpy.ndarray", "numpy.ndarray"]:
    """`words` as their sorted hashes (this process's string hash) and their counts in the same order."""
    import numpy as np

    keys = np.fromiter((hash(word) for word in words), dtype=np.int64, count=len(words))
    counts = np.fromiter(words.values(), dtype=np.int32, count=len(words))
    order = np.argsort(keys, kind="stable")
    return keys[order], counts[order]
