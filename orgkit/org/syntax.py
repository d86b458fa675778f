"""Org syntax as regular expressions, translated from Org 9.5's own.

Each pattern mirrors the Emacs regexp org-roam relies on (`org-complex-heading-
regexp`, `org-link-any-re`, `org-property-drawer-re`, `org-verbatim-re`), so
that orgkit sees the same headings, links and drawers that Emacs sees.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from functools import lru_cache

from .emacs_chars import ALNUM_NOT_WORD, NO_WORD_START, NON_WORD, WORD_NOT_ALNUM, char_class

HEADING = re.compile(r"\*+ ")


def reduced_level(stars: int, odd_levels: bool) -> int:
    """`org-reduced-level`: the level Org reports for a heading of `stars` stars. With
    `#+STARTUP: odd` (`org-odd-levels-only`) only odd star counts are levels: `***` is
    level 2 and `*****` level 3."""
    return 1 + stars // 2 if odd_levels and stars else stars

DEFAULT_TODO = ("TODO", "DONE")  # a file's TODO keywords when it declares none
# A tag's characters, Org's `[[:alnum:]_@#%]` with Emacs' `[:alnum:]` (see `emacs_chars`):
# `:हिंदी:` is a tag, `:x²:` is not.
_TAG_CHAR = rf"(?:(?![{char_class(WORD_NOT_ALNUM)}])[\w@#%]|[{char_class(ALNUM_NOT_WORD)}])"
TAG = re.compile(rf"{_TAG_CHAR}+")  # one tag, as `TAG.fullmatch(tag)` tests it
TAGS = rf"(:(?:{_TAG_CHAR}|:)+:)"  # the tags at the end of a heading line

# Link types known to Emacs with Org, org-id, org-roam and the default `org-modules`.
LINK_TYPES = (
    "attachment", "bbdb", "bibtex", "doi", "docview", "elisp", "eww", "file",
    "file+emacs", "file+sys", "ftp", "gnus", "help", "http", "https", "id", "info",
    "irc", "mailto", "mhe", "news", "rmail", "roam", "shell", "w3m",
)
# Emacs searches with `case-fold-search' on, so `ID:x` and `HTTPS://x` are links too
# (of types "ID" and "HTTPS", as written).
_TYPES_RE = "(?i:" + "|".join(sorted((re.escape(t) for t in LINK_TYPES), key=len, reverse=True)) + ")"

# A link target's characters: Org's `(?:[^][\\]|\\(?:\\\\)*[][]|\\+[^][])+`, written so
# that every run of backslashes splits one way only (Org's form backtracks
# exponentially over a long run): pairs, then an escaped bracket or character.
_TARGET_CHARS = r"(?:[^\]\[\\]|(?:\\\\)+(?!\\)|(?:\\\\)*\\[^\\])+"
_ANGLE = rf"<(?P<angle_type>{_TYPES_RE}):(?P<angle_path>[^>\n]*(?:\n[ \t]*[^> \t\n][^>\n]*)*)>"
_NB = r"[^\]\[ \t\n()<>]"
_PAREN = rf"\((?:{_NB}|\({_NB}*\))*\)"
_PUNCT = re.escape(string.punctuation)
# `word-start` and `[^[:punct:] \t\n]` of `org-link-plain-re`, by Emacs' syntax table (see
# `emacs_chars`): no link type starts right after a latin letter or digit, `$`, `%` or `'`;
# and a link does not end on ASCII punctuation nor on a character Emacs does not see as
# part of a word (a curly quote, a CJK full stop, a dash).
_WORD_START = rf"(?<![{char_class(NO_WORD_START)}])"
_PATH_END = rf"[^{_PUNCT}{char_class(NON_WORD)} \t\n]"
_PLAIN = (rf"(?=[A-Za-z][-+A-Za-z]*:){_WORD_START}(?P<plain_type>{_TYPES_RE}):"
          rf"(?P<plain_path>(?:{_NB}|{_PAREN})+(?:{_PATH_END}|/|{_PAREN}))")
# Objects whose contents are not parsed, so the links inside them do not count:
# verbatim and code markup (org-verbatim-re), inline source blocks and babel calls, LaTeX
# fragments (`\(..\)`, `\[..\]`, `$$..$$`, `$..$`), export snippets, macros and
# targets (`<<x>>`, `<<<x>>>`; radio links themselves are not recorded by org-roam).
# Each alternative starts with a literal or a cheap test and checks its context
# after: the combined regexp runs over all the text, and that keeps it fast.
_VERBATIM = r"(?P<mark>[=~])(?<![^-\s('\"{][=~])(?:\S|\S.*?(?:\n.*?)?\S)(?P=mark)(?=[-\s.,:!?;'\")}\[]|$)"
_INLINE_SRC = r"src_(?<!\wsrc_)[^\s\[{]+(?:\[[^\]\n]*\])?\{(?:[^{}\n]|\{[^{}\n]*\})*\}"
# An inline babel call, `call_f[header](args)[header]`: its arguments are not parsed either.
_INLINE_CALL = r"call_(?<!\wcall_)[^\s\[(]+(?:\[[^\]\n]*\])?\((?:[^()\n]|\([^()\n]*\))*\)(?:\[[^\]\n]*\])?"
_DOLLAR = r"\$(?<!\$\$)(?![\s,.;$])[^$]*(?<![\s,.])\$(?=[^\w$]|$)"
_TARGET = r"<<<?(?:[^<>\n\r \t]|[^<>\n\r \t][^<>\n\r]*[^<>\n\r \t])>>>?"

# Objects that end at a closing delimiter anywhere further on. When the
# closer is missing, trying each opener would read to the end of the text
# again (quadratic on a paragraph of 20,000 unclosed `\(`). So each such
# alternative also matches "opener, then everything to the end" in a group
# `open_NAME`: that tells the caller that no later opener of NAME can close
# either, and the search goes on from the opener without that alternative
# (see `link_matches`). Each entry: (closed form, unclosed form).
_CLOSING: dict[str, tuple[str, str]] = {
    "bracket": (
        rf"\[\[(?P<target>{_TARGET_CHARS})\](?:\[(?P<desc>(?s:.)+?)\]\]|\])",
        rf"\[\[{_TARGET_CHARS}\]\[(?s:.)*\Z",
    ),
    "lparen": (r"\\\((?s:.*?)\\\)", r"\\\((?s:.*)\Z"),
    "lbracket": (r"\\\[(?s:.*?)\\\]", r"\\\[(?s:.*)\Z"),
    "dollars": (r"\$\$(?s:.*?)\$\$", r"\$\$(?s:.*)\Z"),
    "snippet": (r"@@[-A-Za-z0-9]+:(?s:.*?)@@", r"@@[-A-Za-z0-9]+:(?s:.*)\Z"),
    "macro": (r"\{\{\{[A-Za-z][-\w]*\((?s:.*?)\)\}\}\}", r"\{\{\{[A-Za-z][-\w]*\((?s:.*)\Z"),
}
_MACRO_PLAIN = r"\{\{\{[A-Za-z][-\w]*\}\}\}"


@lru_cache(maxsize=128)
def _links_pattern(opaque: bool, dead: frozenset[str]) -> re.Pattern[str]:
    """Links (and, with `opaque`, objects that hide links), without the `dead` closers."""

    def closing(name: str) -> str:
        if name in dead:
            return ""
        closed, unclosed = _CLOSING[name]
        return f"{closed}|(?P<open_{name}>{unclosed})"

    bracket = closing("bracket")
    # A dead bracket keeps its group, matching nothing, so callers can ask for it.
    parts = [f"(?P<bracket>{bracket or '(?!)'})", f"(?P<angle>{_ANGLE})", f"(?P<plain>{_PLAIN})"]
    if opaque:
        latex = [closing("lparen"), closing("lbracket"), closing("dollars"), _DOLLAR]
        macro = [closing("snippet"), closing("macro"), _MACRO_PLAIN]
        hidden = "|".join(p for p in [_VERBATIM, _INLINE_SRC, _INLINE_CALL, *latex, *macro, _TARGET] if p)
        parts.append(f"(?P<opaque>{hidden})")
    return re.compile("|".join(parts), re.M)


def matched(m: re.Match[str] | None) -> re.Match[str]:
    """A match the caller knows is there (a line it has already classified): a miss is a bug, said as one."""
    if m is None:
        raise AssertionError("a line classified earlier no longer matches its pattern")
    return m


def link_matches(text: str, *, opaque: bool = True) -> Iterator[re.Match[str]]:
    """Every link in `text`, left to right, as one `finditer` of Org's regexps would find them.

    With `opaque`, verbatim, code, LaTeX, snippets, macros and targets are
    matched too (group `opaque`), so that the links inside them can be skipped; and a
    plain link that starts inside a subscript is no link (`_in_subscript`).
    Linear in the text: an opener without a closer is tried once, not once per
    opener (see `_CLOSING`).
    """
    dead: frozenset[str] = frozenset()
    pattern = _links_pattern(opaque, dead)
    pos = 0
    while pos <= len(text):
        m = pattern.search(text, pos)
        if m is None:
            return
        unclosed = None
        if m.end() == len(text):  # an unclosed form runs to the end (`\Z`): only then can one match
            unclosed = next((name for name in _CLOSING if name not in dead
                             and m.groupdict().get(f"open_{name}") is not None), None)
        if unclosed is not None:
            dead = dead | {unclosed}
            pattern = _links_pattern(opaque, dead)
            pos = m.start()
            continue
        if opaque and m.group("plain") is not None and _in_subscript(text, m.start()):
            pos = m.start() + 1
            continue
        yield m
        pos = m.end() if m.end() > m.start() else m.end() + 1


_SUBSCRIPT_RUN = frozenset(".,\\")  # what a bare subscript holds besides letters and digits


def _in_subscript(text: str, start: int) -> bool:
    r"""Whether position `start` lies in a bare subscript or superscript, `x_1` or `a^b`
    (Org's `\S-[_^][+-]?[[:alnum:].,\]*[[:alnum:]]`): `snake_id:x` is the subscript `_id`,
    and the plain link that would start at its `i` is no link.

    Asked only where a plain link starts, rather than matched with the links: a subscript
    hides nothing else, and most of the `_` in file names and identifiers start one.
    """
    i = start
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in _SUBSCRIPT_RUN):
        i -= 1
    if i > 0 and text[i - 1] in "+-":
        i -= 1
    return i > 1 and text[i - 1] in "_^" and not text[i - 2].isspace()


PLAIN_LINK = re.compile(_PLAIN)
LINK_TYPE_PREFIX = re.compile(rf"({_TYPES_RE}):")
FILE_TYPE = re.compile(r"file(?:\+.+)?", re.I)

KEYWORD = re.compile(r"[ \t]*#\+(\S+?):[ \t]*(.*?)[ \t]*$")
COMMENT = re.compile(r"[ \t]*#(?: |$)")
FIXED_WIDTH = re.compile(r"[ \t]*:(?: |$)")
BLOCK_BEGIN = re.compile(r"[ \t]*#\+begin_(\S+)", re.I)
DRAWER_BEGIN = re.compile(r"[ \t]*:([\w-]+):[ \t]*$")
DRAWER_END = re.compile(r"[ \t]*:END:[ \t]*$", re.I)
LATEX_BEGIN = re.compile(r"[ \t]*\\begin\{([A-Za-z0-9*]+)\}")
# Emacs matches these with `case-fold-search' on: `scheduled:` and `clock:` count too.
PLANNING = re.compile(r"[ \t]*(?:DEADLINE|SCHEDULED|CLOSED):", re.I)
CLOCK = re.compile(r"[ \t]*CLOCK:", re.I)
PROPERTIES_BEGIN = re.compile(r"[ \t]*:PROPERTIES:[ \t]*$", re.I)
PROPERTY_LINE = re.compile(r"[ \t]*:\S+:(?: .*|[ \t]*)$")
PROPERTY_VALUE = re.compile(r"[ \t]*:(\S+):(?:[ \t]+(.*?))?[ \t]*$")
STATS_COOKIE = re.compile(r"\[[0-9]+%\]|\[[0-9]+/[0-9]+\]")


def lead(line: str) -> str:
    """A line's first character after spaces and tabs ("" for a blank line).

    Every line pattern above starts with `[ \t]*` and a fixed character, so
    one look at this character rules most patterns out before any is tried.
    """
    return line.lstrip(" \t")[:1]


# The characters a planning or clock line can start with (with `re.I`, Python
# also folds the long s "ſ" to "s").
PLANNING_LEADS = frozenset("DSCdscſ")
CLOCK_LEADS = frozenset("Cc")


def is_drawer_end(line: str) -> bool:
    """Whether `line` is an `:END:` line (`DRAWER_END`), trying the pattern only when
    the fifth character after blanks is the closing colon."""
    return line.lstrip(" \t")[4:5] == ":" and DRAWER_END.match(line) is not None

# Blocks whose contents are code or raw text: no keywords, no links inside.
OPAQUE_BLOCKS = frozenset({"src", "example", "export", "comment"})
# Affiliated keywords (`org-element-affiliated-keywords`, plus ATTR_*): they belong
# to the element that follows them; only CAPTION's value is parsed for objects.
AFFILIATED = frozenset({
    "CAPTION", "DATA", "HEADER", "HEADERS", "LABEL", "NAME", "PLOT", "RESNAME",
    "RESULT", "RESULTS", "SOURCE", "SRCNAME", "TBLNAME",
})
_DUAL = ("CAPTION", "RESULTS")  # the affiliated keywords that take an optional `[...]` value
_DUAL_AFFILIATED = re.compile(rf"({'|'.join(_DUAL)})\[.*\]")
_ATTR = re.compile(r"ATTR_[-_A-Za-z0-9]+")
# `org-element--affiliated-re`: an affiliated keyword line up to its value. Groups: 1 a
# dual keyword, 2 its `[...]` value, 3 another affiliated keyword, 4 an ATTR_ keyword.
AFFILIATED_LINE = re.compile(
    rf"[ \t]*#\+(?:({'|'.join(_DUAL)})(?:\[(.*)\])?"
    rf"|({'|'.join(sorted(AFFILIATED - set(_DUAL)))})"
    rf"|({_ATTR.pattern})):[ \t]*",
    re.I,
)
# Lines that end the container an element lives in (a greater block or a drawer).
CONTAINER_END = re.compile(r"[ \t]*(?:#\+end_\S+|:END:)[ \t]*$", re.I)


def affiliated_name(key: str) -> str | None:
    """The affiliated keyword an upper-cased `#+KEY` is (`CAPTION[short]` -> CAPTION)."""
    if key in AFFILIATED or _ATTR.fullmatch(key):
        return key
    m = _DUAL_AFFILIATED.fullmatch(key)
    return m.group(1) if m else None


def block_end(name: str) -> re.Pattern[str]:
    """The line that closes a `#+begin_NAME` block."""
    return _block_end(name.lower())


@lru_cache(maxsize=64)
def _block_end(name: str) -> re.Pattern[str]:
    return re.compile(rf"[ \t]*#\+end_{re.escape(name)}[ \t]*$", re.I)


class HeadingPattern:
    """`org-complex-heading-regexp` for a file's TODO keywords; `match` as a pattern's.

    Groups: 1 stars, 2 TODO keyword, 3 priority cookie, 4 title, 5 tags.
    """

    __slots__ = ("tagged", "untagged")

    def __init__(self, todo_keywords: tuple[str, ...]) -> None:
        todo = "|".join(re.escape(k) for k in sorted(todo_keywords, key=len, reverse=True))
        head = rf"(\*+)(?: +({todo}))?(?: +(\[#.\]))?(?: +(.*?))??"
        self.tagged = re.compile(rf"{head}(?:[ \t]+{TAGS})?[ \t]*$")
        # Group 5 kept, never taking part: the same groups as `tagged` gives such a line.
        self.untagged = re.compile(rf"{head}(?:(?!)(.))?[ \t]*$")

    def match(self, line: str) -> re.Match[str] | None:
        # Tags end the line (before blanks): a line that does not end in ":" has none,
        # and the pattern without them skips trying tags after each character of the title.
        if line.rstrip(" \t\n")[-1:] == ":":
            return self.tagged.match(line)
        return self.untagged.match(line)


@lru_cache(maxsize=32)
def heading_pattern(todo_keywords: tuple[str, ...]) -> HeadingPattern:
    """`org-complex-heading-regexp` for a file's TODO keywords."""
    return HeadingPattern(todo_keywords)


def link_display(text: str) -> str:
    """`org-link-display-format`: each bracket link shown as its description."""
    if "[[" not in text:
        return text
    out: list[str] = []
    pos = 0
    for m in link_matches(text, opaque=False):
        if m.group("bracket") is None:
            continue
        out.append(text[pos:m.start()])
        out.append(m["desc"] if m["desc"] is not None else m["target"])
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def olp_title(title: str | None) -> str:
    """A heading as it appears in an outline path (statistics cookies removed)."""
    if title is None:
        return ""
    if "[" not in title:  # no cookie, no link: most titles
        return title.strip()
    return link_display(STATS_COOKIE.sub("", title)).strip()
