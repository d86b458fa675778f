"""The corpus's own words, for query terms that match nothing: misspellings.

FTS5 keeps the vocabulary of the passage index (porter stems), and a
`fts5vocab` table reads it with each term's document count without a copy.
A query word that no passage holds, and that is no word of the language
either (lexicon.py: "sourdough" is not a slip of "source"), is taken for the
words one edit from it as typed (a swap of neighbouring letters counts one, as
typing slips do) whose stems the notes hold, words of the language first, then
those it is a slip people often make of (`likely`: "statuc" is "static" with a
neighbouring key, not "status" with a far one), then the commonest; when
there are none, its stem is compared with the stems that start with the same
letter and are about as long, the closest within a small edit distance; then
it may be spelt by ear ("funcshun"), then its first letter may be the slip.
Up to three are searched for in its place. Before all of these, such a word
may be two words of the notes run together ("bikeshare" for their "bike-share"):
then it is searched for as those two.
A word the language uses, if rarely ("matcha", "hangry": lexicon.py), is a
slip only when its correction is far commoner in the language (MORE_USED:
"flie" for "file"); else it is `doubtful`, and search takes the correction
only where the query's other words bear it out (retrieve/search.py); so is
such a word cut in two ("livestream").
Words that match something are left alone, so a correct query is ranked
exactly as before, but for one kind of slip: a word no list knows that the
stemmer cut to a stem the notes hold ("noeds" to "no") is a slip the stemmer
hid when a word of the language one edit away has a stem they hold ("nodes")
and no passage holding its stem writes it as typed (`hidden_slip`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..storage.terms import tokenizer
from .lexicon import spellings
from .memo import IndexMemo, Stems
from ..storage.vocabulary import Vocabulary
from ..storage.db import Connection
from .store import generation, passage_text
from .words import WORD

SHORTEST = 4  # shorter words (and stems) are too close to too many others to correct
LONGEST = 40  # longer words are no slips to look for: a word's edits grow with its length
MOST_SLIPS = 8  # words of one query looked at as slips (each costs milliseconds): the rest are kept as typed
MAX_ALTERNATIVES = 3  # equally close stems all searched for
FIRST_LETTER_FROM = 6  # letters from which a word's first letter may be its slip ("vterm" is no "xterm")
SHORTEST_PART = 3  # letters of each word a compound is cut into ("keymap": "key map")
# Zipf steps by which a correction must be commoner than a word the language uses, for the word to be
# its slip: "flie" (1.1) for "file" (4.8), not "matcha" (2.7) for "match" (5.1) (bench/README.md)
MORE_USED = 2.5
WRITTEN_AMONG = 2000  # passages holding a stem searched for a word as typed (the notes' own jargon): bounds the work


@dataclass(frozen=True, slots=True)
class Term:
    """A query word as the index sees it: its stem, how many passages hold it, and its correction."""

    word: str
    stem: str
    docs: int
    corrections: tuple[str, ...] = ()  # the corpus's stems it may have meant, when `docs` is 0
    joined: str = ""  # the word as typed, when this is a part of it the notes write apart ("bikeshare")
    doubtful: bool = False  # a word the language uses: corrected only where the query's other words say so
    docs_as_typed: int = 0  # a slip the stemmer hid (`hidden_slip`): its `docs` if it is read as typed after all


def stems_of(texts: dict[int, str], kept: Stems | None = None) -> dict[int, frozenset[str]]:
    """The stems each text holds, keyed as given (the passage index's tokenizer, in memory).

    Remembered by text in `kept` (an index's memo: `IndexMemo.stems`): a warm
    server's searches judge the same passages again and again, and tokenizing
    them afresh for every call, one call at a time through the one tokenizer,
    was the largest cost of a search under load that was not its own work.
    """
    out: dict[int, frozenset[str]] = {}
    todo: dict[int, str] = {}
    for key, text in texts.items():
        known = kept.get(text) if kept is not None else None
        if known is None:
            todo[key] = text
        else:
            out[key] = known
    if todo:
        found = {key: frozenset(stems) for key, stems in tokenizer().stems(todo).items()}
        out |= found
        if kept is not None:
            for key, stems in found.items():
                kept.put(todo[key], stems)
    return out


def stem(words: list[str], kept: Stems | None = None) -> list[str]:
    """Each word as the passage index's tokenizer stores it (the word itself when it has no token)."""
    found = stems_of(dict(enumerate(words)), kept)
    return [next(iter(found[i])) if len(found[i]) == 1 else word for i, word in enumerate(words)]


def matchable(stems: list[str], kept: Stems | None = None) -> list[str]:
    """A word for each of `stems` that the passage index's tokenizer cuts to it, for a search that
    tokenizes what it is given: the stem itself, or, where the tokenizer would cut it again
    ("respons" loses its "s" to it), the stem with the final e it took off ("response"). A stem
    neither gives stays itself."""
    if not stems:
        return []
    plain, with_e = stem(stems, kept), stem([s + "e" for s in stems], kept)
    return [s + "e" if p != s and e == s else s for s, p, e in zip(stems, plain, with_e)]


def terms(conn: Connection, words: list[str], vocabulary: Vocabulary, backend: Any, memo: IndexMemo, *,
          names: frozenset[str] = frozenset(), correct: bool = True) -> list[Term]:
    """The query's words with their document counts, each unmatched one corrected when it can be.

    A word is corrected only when it is a slip: neither the notes nor the
    language know it; with `correct` False (`--exact`) none is. One of
    `names` (capitalised as typed, lower case here) is taken for a name
    ("Karpathy"): a name is no slip of a word of the language ("Haming" is
    not "having"), so it is corrected only into a word of the notes it was
    typed for (`typed_for`): with its very letters ("Persto" is "Presto",
    "BigQueyr" "BigQuery": two keys swapped, a letter doubled or a double
    dropped, the commonest slips), or with a key beside one of them ("Dara").
    A query's first MOST_SLIPS unknown words are looked at, each of at most
    LONGEST letters, and its first MOST_SLIPS words the stemmer cut are asked
    whether they are slips it hid (`hidden_slip`): what a caller sends bounds
    the work it costs. Before
    any of that, a word the notes lack but spell the other way (British or
    American: "colour", "color") is taken for the notes' spelling, held as
    theirs: it is the same word, no slip.
    """
    out: list[Term] = []
    stems = stem(words, memo.stems)
    counts = _documents(conn, set(stems), vocabulary, memo)
    looked = asked = 0
    for word, stemmed in zip(words, stems):
        docs = counts.get(stemmed, 0)
        if correct and not docs and SHORTEST <= len(word) <= LONGEST:
            word, stemmed, docs = spelt_otherwise(conn, word, vocabulary, memo) or (word, stemmed, docs)
        looks = correct and SHORTEST <= len(word) <= LONGEST and looked < MOST_SLIPS
        # a word the stemmer cut nothing from hid nothing ("kubectl"); `backend.writes` finds ASCII words
        cut = looks and docs and stemmed != word and word.isascii() and word not in names and asked < MOST_SLIPS
        asked += cut
        hidden = hidden_slip(conn, word, stemmed, vocabulary, backend, memo) if cut else ()
        slip = looks and not docs and not memo.lexicon.is_real(word)
        looked += slip or bool(hidden)
        parts = written_apart(conn, word, vocabulary, backend, memo) if slip else []
        if parts:
            unsure = memo.lexicon.used(word) > 0  # "livestream": a word, or "live stream" run together
            out.extend(Term(part, part_stem, part_docs, joined=word, doubtful=unsure)
                       for part, part_stem, part_docs in parts)
            continue
        fixes = hidden or ((one_slip_away(conn, word, vocabulary, memo) or nearest(conn, stemmed, vocabulary, memo)
                            or sounded_alike(conn, word, vocabulary, memo)
                            or one_slip_away(conn, word, vocabulary, memo, first=True)) if slip else ())
        if fixes and word in names:
            fixes = tuple(f for f in fixes if typed_for(word, surface(conn, word, f, backend, memo)))
        unsure = bool(fixes) and doubtful(conn, word, fixes[0], backend, memo)
        # a slip the stemmer hid is read as its corrections, its own stem's passages kept for `_borne_out`
        out.append(Term(word, stemmed, 0 if hidden else docs, fixes, doubtful=unsure,
                        docs_as_typed=docs if hidden else 0))
    return out


def written_apart(conn: Connection, word: str, vocabulary: Vocabulary, backend: Any,
                  memo: IndexMemo) -> list[tuple[str, str, int]]:
    """`word` as two words the notes write side by side, as (word, stem, passages holding it) each ([]: none).

    A compound no list knows ("bikeshare", "homeserver") where the notes write
    "bike-share" or "home server" is their word with its space or hyphen left
    out, no slip of a word one edit away. The cuts leaving two words of at
    least SHORTEST_PART letters, both held by the notes, are tried, the most
    even first (MAX_ALTERNATIVES of them: each asks the index once); the first
    whose two words some passage holds in a row is it.
    """
    cuts = sorted(range(SHORTEST_PART, len(word) - SHORTEST_PART + 1), key=lambda at: (abs(len(word) - 2 * at), at))
    pairs = [(word[:at], word[at:]) for at in cuts]
    stems = stem([w for pair in pairs for w in pair])  # not remembered, as a slip's edits are not (`_held`)
    counts = _documents(conn, set(stems), vocabulary, memo)
    held = [(first, second, first_stem, second_stem)
            for (first, second), first_stem, second_stem in zip(pairs, stems[::2], stems[1::2])
            if first_stem in counts and second_stem in counts]
    for first, second, first_stem, second_stem in held[:MAX_ALTERNATIVES]:
        if backend.lexical(conn, [f"{first} {second}"], 1.0, 1):
            return [(first, first_stem, counts[first_stem]), (second, second_stem, counts[second_stem])]
    return []


def hidden_slip(conn: Connection, word: str, stemmed: str, vocabulary: Vocabulary, backend: Any,
                memo: IndexMemo) -> tuple[str, ...]:
    """The stems the notes hold of words of the language one edit from `word`, a word no list knows
    that the stemmer cut to `stemmed`, a stem of the notes ("noeds" to "no", "initalized" to the
    code's "init", "raeds" to "ra"): a slip it hid. () when no such word is near, or when the notes
    write `word` itself in a passage holding its stem (their jargon: "orgs", "alloc"; the first
    WRITTEN_AMONG of those passages are searched for it), or when the language knows it.

    The notes are asked before the language's lists, so that a query whose words the notes write
    never reads the lists (a cold search would pay a quarter of a second for them). Only words of
    the language are weighed (a handful of its hundreds of edits, looked up together), in `_held`'s
    order.
    """
    if backend.writes(conn, word, WRITTEN_AMONG) or memo.lexicon.is_real(word):
        return ()
    edits = memo.lexicon.real(e for e in one_edit(word) if e[0] == word[0] and len(e) >= SHORTEST)
    if stemmed in stem(sorted(edits)):  # the stemmer read it as the word meant: "signning" is "signing" to it
        return ()
    return _held(conn, edits, vocabulary, memo, word)


def doubtful(conn: Connection, word: str, fix: str, backend: Any, memo: IndexMemo) -> bool:
    """Whether `word`, which the language uses (lexicon.py `used`), may be no slip of the word it was
    taken for: unless that word is MORE_USED Zipf steps commoner, either may be meant. The word taken
    for is the commonest with the stem `fix` of those one edit from `word` as typed ("acheivement":
    achievement) and the one the notes write (`surface`: they may write only "achievable")."""
    used = memo.lexicon.used(word)
    if not used:
        return False
    edits = sorted(memo.lexicon.usable(one_edit(word)))  # of the others, none is used more than never
    meant = [e for e, s in zip(edits, stem(edits)) if s == fix] + [surface(conn, word, fix, backend, memo)]
    return max(map(memo.lexicon.used, meant)) - used < MORE_USED


def one_slip_away(conn: Connection, word: str, vocabulary: Vocabulary, memo: IndexMemo, *,
                  first: bool = False) -> tuple[str, ...]:
    """The stems the notes hold of the words one edit from `word` as typed, in `_held`'s order: those
    of words of the language first, then of the slips people often make, then the commonest.

    The stemmer reads a slip its own way ("keyys" keeps its "yy", "rnage" is
    no "range" to it, "linearziation" keeps a "zi" that puts it one letter from
    "linearly"), so the word as typed is compared first: each word one deletion,
    swap of neighbours, change or insertion away is stemmed and looked up. An
    edit that is no word may still stem to one ("compuation" less its "u" stems
    as "compatible" does), so the stems of real words ("computation") come
    first. Edits keep the first letter (people rarely miss it); with `first`,
    only edits of the first letter are tried, for a word nothing else is near:
    in a word shorter than FIRST_LETTER_FROM only a swap of the first two
    letters, as short jargon often differs from a word by its first letter alone.
    """
    if first and len(word) < FIRST_LETTER_FROM:  # a short word's first letter changed is often a word of its own
        return _held(conn, {word[1] + word[0] + word[2:]}, vocabulary, memo)  # ("vterm" is no "xterm"): swapped
    edits = one_edit(word)
    return _held(conn, {e for e in edits if len(e) >= SHORTEST and (e[0] == word[0]) != first}, vocabulary, memo,
                 word)


def one_edit(word: str) -> set[str]:
    """The strings one deletion, swap of neighbours, change or insertion of a letter from `word`."""
    letters = sorted(set("abcdefghijklmnopqrstuvwxyz") | set(word))
    cuts = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits = {a + b[1:] for a, b in cuts if b} | {a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1}
    edits |= {a + c + b[1:] for a, b in cuts if b for c in letters}
    return edits | {a + c + b for a, b in cuts for c in letters}


def spelt_otherwise(conn: Connection, word: str, vocabulary: Vocabulary,
                    memo: IndexMemo) -> tuple[str, str, int] | None:
    """`word` as the other side of the Atlantic spells it, when the notes hold that spelling: (the word,
    its stem, how many passages hold it; the most held of several), else None. The stemmer keeps the two
    apart ("organisation" stems as "organis", "organization" as "organ")."""
    others = sorted(spellings(word))
    if not others:
        return None
    stems = stem(others, memo.stems)
    counts = _documents(conn, set(stems), vocabulary, memo)
    held = [(counts[s], o, s) for o, s in zip(others, stems) if s in counts]
    if not held:
        return None
    docs, other, stemmed = max(held)
    return other, stemmed, docs


# Spellings by ear and the spellings they stand for, each more than one edit apart ("funcshun", "sekwence")
SOUNDS = (("shun", "tion"), ("shun", "sion"), ("kw", "qu"), ("f", "ph"), ("ks", "x"), ("ow", "ough"), ("t", "ght"))


def sounded_alike(conn: Connection, word: str, vocabulary: Vocabulary, memo: IndexMemo) -> tuple[str, ...]:
    """The stems the notes hold of `word` with one spelling by ear put right (SOUNDS: "funcshun" is
    "function", "sekwence" "sequence"), for a word nothing one edit or one stem away matched."""
    respelt = {word[:at] + written + word[at + len(heard):] for heard, written in SOUNDS
               for at in range(len(word)) if word.startswith(heard, at)}  # a first sound too ("fysics")
    return _held(conn, respelt, vocabulary, memo)


def _held(conn: Connection, words: set[str], vocabulary: Vocabulary, memo: IndexMemo,
          typed: str = "") -> tuple[str, ...]:
    """The stems the notes hold of `words`, those of words of the language first, then those of a
    slip people often make of `typed` (`likely`), then the commonest (at most MAX_ALTERNATIVES)."""
    tried = sorted(words)
    stems = stem(tried)  # not remembered: a slip's hundreds of edits would push out the passages' stems
    counts = _documents(conn, set(stems), vocabulary, memo)
    real = {s for e, s in zip(tried, stems) if s in counts and memo.lexicon.is_real(e)}
    often = {s for e, s in zip(tried, stems) if s in counts and likely(typed, e)}
    return tuple(sorted(counts, key=lambda s: (s not in real, s not in often, -counts[s], s))[:MAX_ALTERNATIVES])


# Each key's neighbours on a QWERTY keyboard: its row's and the rows' beside it within a key's width, each
# row a quarter key and then half a key further right than the one above
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_PLACE = {key: (row, col + (0.0, 0.25, 0.75)[row]) for row, keys in enumerate(_ROWS) for col, key in enumerate(keys)}
_NEAR = {key: {other for other, (row2, x2) in _PLACE.items() if other != key and abs(row - row2) <= 1
               and abs(x - x2) <= 1.0} for key, (row, x) in _PLACE.items()}
_VOWELS = frozenset("aeiou")


def typed_for(name: str, meant: str) -> bool:
    """Whether `name`, a word typed capitalised that no list knows, is a slip of the notes' `meant` made
    at the keyboard: with its very letters (two keys swapped, one doubled or a double dropped:
    "Persto", "BigQueyr"), or a likely slip that is no vowel for another ("Dara" for "Data", the key
    beside; not "Haming" for "having"): a name is typed as it is known, not spelt by ear."""
    return set(meant) == set(name) or likely(name, meant, by_ear=False)


def likely(typed: str, meant: str, by_ear: bool = True) -> bool:
    """Whether `typed` is a slip people often make of `meant`, one edit from it: two neighbours
    swapped, a letter missed, a letter typed twice or beside a neighbouring key, a neighbouring key
    or a vowel for another typed in a letter's place ("exceds" of "exceeds", "statuc" of "static";
    not "status", "c" for "s"; a vowel only `by_ear`). Among the words a slip may be, these are the
    ones it most often is."""
    if not typed or typed == meant or abs(len(typed) - len(meant)) > 1:
        return False
    at = next((i for i, (a, b) in enumerate(zip(typed, meant)) if a != b), min(len(typed), len(meant)))
    if len(typed) < len(meant):  # meant[at] is the letter missed
        return meant[:at] + meant[at + 1:] == typed
    if len(typed) > len(meant):  # typed[at] is the letter too many
        beside = typed[max(at - 1, 0):at] + typed[at + 1:at + 2]
        return typed[:at] + typed[at + 1:] == meant \
            and any(typed[at] == key or typed[at] in _NEAR.get(key, ()) for key in beside)
    if typed[at + 1:] != meant[at + 1:]:
        return typed[at:at + 2] == meant[at + 1::-1][:2] and typed[at + 2:] == meant[at + 2:]  # swapped
    typo, key = typed[at], meant[at]
    return typo in _NEAR.get(key, ()) or (by_ear and typo in _VOWELS and key in _VOWELS)


def _documents(conn: Connection, stems: set[str], vocabulary: Vocabulary, memo: IndexMemo) -> dict[str, int]:
    """How many passages hold each of `stems`: counted once per generation of the index in the memo
    (fts5vocab reads a term's whole list to count it), the others asked of the database."""
    key = (vocabulary.key, generation(conn))
    known = memo.counts.known(key, stems)
    missing = stems - known.keys()
    if missing:
        found = vocabulary.documents(conn, missing)
        memo.counts.learn(key, {s: found.get(s, 0) for s in missing})
        known |= found
    return {s: n for s, n in known.items() if n}


def corrected(conn: Connection, query: str, terms: list[Term], backend: Any, memo: IndexMemo) -> str | None:
    """The query (lower case) with each mistyped word replaced by the word the notes use for what it
    was taken for, so a person sees what was searched and the model embeds real words (None: no word
    was corrected)."""
    fixes = {t.word: surface(conn, t.word, t.corrections[0], backend, memo) for t in terms
             if not t.docs and t.corrections}
    for t in terms:  # a compound the notes write apart, as they write it: "bike share"
        if t.joined:
            fixes[t.joined] = f"{fixes[t.joined]} {t.word}" if t.joined in fixes else t.word
    if not fixes:
        return None
    return WORD.sub(lambda m: fixes.get(m.group(0), m.group(0)), query.lower())


def surface(conn: Connection, typed: str, stemmed: str, backend: Any, memo: IndexMemo) -> str:
    """The word the notes write, with the stem `stemmed`, closest to what was `typed` (read from the
    best passage holding the stem: "flashcrd" is "flashcard", not the "Flashcards" of a title)."""
    found = backend.lexical(conn, matchable([stemmed], memo.stems), 1.0, 1)
    if not found:
        return stemmed
    words = list(dict.fromkeys(w.lower() for w in WORD.findall(passage_text(conn, backend, found[0][1]))))
    stems = stems_of(dict(enumerate(words)), memo.stems)
    same = [w for i, w in enumerate(words) if stems[i] == {stemmed}]
    return min(same, key=lambda w: edit_distance(typed, w, len(w) + len(typed))) if same else stemmed




def allowed_distance(stemmed: str) -> int:
    """Edits a word of this length may carry: one slip in a short word, two in a long one."""
    return 1 if len(stemmed) < 8 else 2


def nearest(conn: Connection, stemmed: str, vocabulary: Vocabulary, memo: IndexMemo) -> tuple[str, ...]:
    """The corpus stems closest to `stemmed` (same first letter), at most MAX_ALTERNATIVES.

    Among equally close stems, one with the same letters comes first (two
    swapped keys are the commonest slip), then the commonest.

    A stem is not taken for the start of a longer word: a slip in a suffix
    ("samplign") is one edit from the word as typed (`one_slip_away`), while a
    word that carries letters past a stem of the notes is most often a word
    or a name of its own ("graphql", "lightgbm", "changelog").
    """
    limit = allowed_distance(stemmed)
    shortest, longest = max(SHORTEST, len(stemmed) - limit), len(stemmed) + limit
    found: list[tuple[int, int, int, str]] = []  # (distance, letters not shared, -docs, term)
    letters = set(stemmed)
    for term, docs in _starting_with(conn, stemmed[0], vocabulary, memo):
        if not shortest <= len(term) <= longest:
            continue
        if len(letters.symmetric_difference(term)) > 2 * limit:
            continue  # an edit changes at most two letters of the set: too far apart to compute
        distance = edit_distance(stemmed, term, limit)
        if distance <= limit:
            found.append((distance, len(letters.symmetric_difference(term)), -docs, term))
    found.sort()
    return tuple(term for distance, _, _, term in found if distance == found[0][0])[:MAX_ALTERNATIVES]


def _starting_with(conn: Connection, first: str, vocabulary: Vocabulary, memo: IndexMemo) -> list[tuple[str, int]]:
    """The index's stems that start with `first`, with their document counts.

    fts5vocab counts a term's documents by reading its whole list, so a range
    of terms costs more the larger the index: the memo keeps each range read
    until the index changes (its generation moves on).
    """
    key = (vocabulary.key, generation(conn))
    return memo.counts.range(key, first, lambda: vocabulary.starting_with(conn, first))


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a swap of neighbours is one edit), or limit + 1 past the limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1]

