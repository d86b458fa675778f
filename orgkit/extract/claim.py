"""What counts as a claim: one complete statement, not a piece of the source's scaffolding.

Extraction quotes the source, and a quote is only worth a note when it says
something on its own. A claim is a statement: it has a verb that is not
buried in a relative clause ("Integrations that integrate devices." names a
kind of thing, it says nothing about it), it is not a question, not a lead-in
that ends in a colon, not a subordinate clause standing alone ("When
contributing a new integration."), and not an option's pro or con lifted out
of its frame ("Good, because it allows us to run experiments early" says
nothing about which option). A short list label ("HTTP routes and
middleware") is a fragment. Both extractors apply the same test: the offline
one to the units it ranks, the model path to the quotes a model proposes.

The test reads English with closed word lists, no tagger: modal and auxiliary
verbs, a past tense after its subject, a verb in -s before its object, an
imperative opening ("Delete the database file"). It errs towards keeping a
sentence that may be a statement; fragments are short and have none of these.
"""

from __future__ import annotations

import re

MIN_WORDS = 4  # a shorter unit is a label ("Sorting", "Single point of failure"), not a point

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?|`[^`]*`|\[")
_AUX = frozenset(
    "am is are was were will would shall should can cannot could may might must has have had do does did "
    "need needs needed seems seem keeps becomes become remains remain means".split())
_NEGATED = re.compile(r"(?:n['’]t|['’](?:re|ll|ve|d|m))$")
_PRONOUN_IS = frozenset("it's that's there's here's what's he's she's who's".split())
_DET = frozenset("a an the this that these those its their our his her my your all every each some any no "
                 "both either neither one two three several many much more most per".split())
_PREP = frozenset("to for on in with from by at as into upon over under about through via against between "
                  "across up out off until".split())
_PRON = frozenset("us them it him her me you we they i he she there".split())
_PERSONAL = frozenset("we they i you".split())
_ADVERB = frozenset("well better best only also not still never always often already now then just".split())
_VERB_PREP = frozenset("at into upon through across via against between".split())  # after a verb, seldom a noun
_PARTICIPLE_NEXT = frozenset("by as with in for from under via".split())
_SUBJECT = frozenset("we they it he she i you this that there which who".split())
_RELATIVE = frozenset("that which who whose whom where".split())
_SUBORDINATE = frozenset("when if while because although though unless since once whether after before "
                         "until whenever wherever".split())
_NOUN_ENDING = re.compile(r"(?:tion|sion|ity|ness|ment|ance|ence|ism|ship|ure|ics|ing)$")
_NOT_VERB_S = re.compile(r"(?:ss|us|is|ics|'s|’s)$")
_ENUMERATOR = re.compile(r"^(?:[(\[]?(?:[A-Za-z]\d*|\d{1,3}|[ivx]{1,4})[.):\]]\s+|Option\s+\w+\s*:\s*)", re.I)
_ASIDE = re.compile(r"\([^()]*\)")  # a parenthesis is an aside: its verb is not the sentence's
_MARKUP = re.compile(r"[*_~=]+")
_PRO_CON = re.compile(
    r"^(?:good|bad|neutral|pros?|cons?|positive|negative|plus|minus|upside|downside)\b\s*[,:;—–-]", re.I)


def plain(text: str) -> str:
    """`text` on one line without emphasis marks, list enumerators or a leading `Option 2:`."""
    flat = _MARKUP.sub("", " ".join(text.split())).strip()
    return _ENUMERATOR.sub("", flat).strip()


def not_a_claim(text: str, questions: bool = False) -> str | None:
    """Why `text` is not a claim ("question", "lead-in", "pro/con", "subordinate", "fragment"),
    or None when it is one. `questions`: the dimension asks for questions (a paper's research
    question), so a question is its claim."""
    flat = plain(text)
    bare = flat.rstrip(" \"'”’)")
    if bare.endswith("?") and not questions:
        return "question"
    if bare.endswith(":"):
        return "lead-in"
    if _PRO_CON.match(flat):
        return "pro/con"
    words = [w for w in _WORD.findall(_ASIDE.sub(" ", flat)) if w != "["]
    if len([w for w in words if w[0].isalnum() or w[0] == "`"]) < MIN_WORDS:
        return "fragment"
    if words[0].lower() in _SUBORDINATE and "," not in flat:
        return "subordinate"
    if all(w[0].isupper() for w in words if w[0].isalpha()):
        return "fragment"  # a name in title case ("Amazon Simple Queue Service"), not a statement
    if bare.endswith("?"):
        return None
    return None if has_verb(words) else "fragment"


def has_verb(words: list[str]) -> bool:
    """Whether `words` (as written) hold a verb of a main clause (see the module's note)."""
    lower = [w.lower() for w in words]
    relative = _relative_positions(lower)
    for i, word in enumerate(lower):
        if i in relative:
            continue
        after = lower[i + 1] if i + 1 < len(lower) else ""
        before = lower[i - 1] if i else ""
        if word in _AUX or word in _PRONOUN_IS or _NEGATED.search(word):
            return True
        if i and len(word) > 4 and word.endswith("ed") and before not in _DET and not _NOUN_ENDING.search(word) \
                and (after not in _PARTICIPLE_NEXT or before in _SUBJECT):
            return True  # "the team decided", not "integrations marked as internal"
        named = i + 1 < len(words) and words[i + 1][:1].isupper() and words[i][:1].islower()
        if _verb_s(word, before, after, i, named):
            return True
        if before in _PERSONAL and word.isalpha() and word not in _ADVERB:
            return True  # "we keep", "they want"
        if i > 1 and _plural_verb(word, lower[i - 2], before, after):
            return True
    return _imperative(lower, words)


def _relative_positions(words: list[str]) -> set[int]:
    """Positions of the verb of a relative clause: the word after `that`/`which`/`who` (and
    after one adverb in -ly: "that solely provides")."""
    out = set()
    for i, word in enumerate(words[:-1]):
        if word in _RELATIVE and i:
            j = i + 1
            if words[j].endswith("ly") and j + 1 < len(words):
                out.add(j)
                j += 1
            out.add(j)
    return out


def _verb_s(word: str, before: str, after: str, i: int, named: bool) -> bool:
    """A verb in -s: after a subject pronoun, before its object (an article, a pronoun, a name:
    `named`), a preposition or an adverb, or opening a sentence whose subject is understood
    ("Removes confusion ...")."""
    if len(word) < 4 or not word.endswith("s") or _NOT_VERB_S.search(word) or not word.isalpha():
        return False
    if before in _SUBJECT:
        return True
    if i == 0 and (after in _RELATIVE | {"and", "or", "of"} or _NOUN_ENDING.search(word[:-1])):
        return False  # "Integrations that ...", "Contributions to ..."
    if (after in _DET or (after in _PREP and (i == 0 or after in _VERB_PREP)) or after in _PRON or after in _ADVERB
            or (after.endswith("ly") and len(after) > 5) or after.startswith("`") or named):
        return after not in ("of", "and", "or")
    if i == 0:
        return bool(after) and after.isalpha()
    # "the intermediary adds latency", not "of experiments early"
    return (after.isalpha() and after not in _RELATIVE | _PREP | {"and", "or", "of"}
            and before not in _PREP | _DET | {"of", "and", "or"})


def _plural_verb(word: str, two_before: str, before: str, after: str) -> bool:
    """A verb in its plain form after a plural subject: "these rules apply to", "these
    integrations allow users" (not "contributions to integrations marked as ...")."""
    if not before.endswith("s") or not word.isalpha() or word in _DET | _PREP | _RELATIVE | {"and", "or"}:
        return False
    return two_before in _DET - {"of"} or (after in _DET | _PREP and two_before not in _PREP | {"of"})


def _imperative(lower: list[str], words: list[str]) -> bool:
    """A sentence opened by a verb in its plain form ("Keep per-extension providers", "Use X",
    "Bundle Experiment data"): a word that is not a noun by its ending, before an article,
    preposition, pronoun, code span or name."""
    if len(lower) < 2 or not lower[0].isalpha():
        return False
    first, second = lower[0], lower[1]
    if first in _DET or first in _PREP or first in _SUBORDINATE or _NOUN_ENDING.search(first):
        return False
    if first.endswith("s") and not first.endswith("ss"):
        return False
    return (second in _DET or (second in _PREP and second != "of") or second in _PRON
            or second.startswith("`") or (words[1][:1].isupper() and not words[0].isupper()))
