"""Org syntax as regular expressions, translated from Org 9.5's own.

Each pattern mirrors the Emacs regexp org-roam relies on (`org-complex-heading-
regexp`, `org-link-any-re`, `org-property-drawer-re`, `org-verbatim-re`), so
that orgkit sees the same headings, links and drawers that Emacs sees.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

HEADING = re.compile(r"\*+ ")
TAGS = r"(:[\w@#%:]+:)"

# Link types known to Emacs with Org, org-id, org-roam and the default `org-modules`.
LINK_TYPES = (
    "attachment", "bbdb", "bibtex", "doi", "docview", "elisp", "eww", "file",
    "file+emacs", "file+sys", "ftp", "gnus", "help", "http", "https", "id", "info",
    "irc", "mailto", "mhe", "news", "rmail", "roam", "shell", "w3m",
)
_TYPES_RE = "|".join(sorted((re.escape(t) for t in LINK_TYPES), key=len, reverse=True))

_BRACKET = r"\[\[(?P<target>(?:[^\]\[\\]|\\(?:\\\\)*[\]\[]|\\+[^\]\[])+)\](?:\[(?P<desc>(?s:.)+?)\])?\]"
_ANGLE = rf"<(?P<angle_type>{_TYPES_RE}):(?P<angle_path>[^>\n]*(?:\n[ \t]*[^> \t\n][^>\n]*)*)>"
_NB = r"[^\]\[ \t\n()<>]"
_PAREN = rf"\((?:{_NB}|\({_NB}*\))*\)"
_PUNCT = re.escape(string.punctuation)
_PLAIN = rf"\b(?P<plain_type>{_TYPES_RE}):(?P<plain_path>(?:{_NB}|{_PAREN})+(?:[^{_PUNCT}\s]|/|{_PAREN}))"
# Verbatim and code markup hide the links inside them (org-verbatim-re).
_VERBATIM = r"(?:(?<=[-\s('\"{])|^)(?P<mark>[=~])(?:\S|\S.*?(?:\n.*?)?\S)(?P=mark)(?=[-\s.,:!?;'\")}\[]|$)"

LINK_OR_VERBATIM = re.compile(
    rf"(?P<bracket>{_BRACKET})|(?P<angle>{_ANGLE})|(?P<plain>{_PLAIN})|(?P<verb>{_VERBATIM})",
    re.M,
)
LINK_ANY = re.compile(rf"(?P<bracket>{_BRACKET})|(?P<angle>{_ANGLE})|(?P<plain>{_PLAIN})")
BRACKET_LINK = re.compile(_BRACKET)
PLAIN_LINK = re.compile(_PLAIN)
LINK_TYPE_PREFIX = re.compile(rf"({_TYPES_RE}):")

KEYWORD = re.compile(r"[ \t]*#\+(\S+?):[ \t]*(.*?)[ \t]*$")
COMMENT = re.compile(r"[ \t]*#(?: |$)")
FIXED_WIDTH = re.compile(r"[ \t]*:(?: |$)")
BLOCK_BEGIN = re.compile(r"[ \t]*#\+begin_(\S+)", re.I)
DRAWER_BEGIN = re.compile(r"[ \t]*:([\w-]+):[ \t]*$")
DRAWER_END = re.compile(r"[ \t]*:END:[ \t]*$", re.I)
LATEX_BEGIN = re.compile(r"[ \t]*\\begin\{([A-Za-z0-9*]+)\}")
PLANNING = re.compile(r"[ \t]*(?:DEADLINE|SCHEDULED|CLOSED):")
PROPERTIES_BEGIN = re.compile(r"[ \t]*:PROPERTIES:[ \t]*$", re.I)
PROPERTY_LINE = re.compile(r"[ \t]*:\S+:(?: .*|[ \t]*)$")
PROPERTY_VALUE = re.compile(r"[ \t]*:(\S+):(?:[ \t]+(.*?))?[ \t]*$")
STATS_COOKIE = re.compile(r"\[[0-9]+%\]|\[[0-9]+/[0-9]+\]")

# Blocks whose contents are code or raw text: no keywords, no links inside.
OPAQUE_BLOCKS = frozenset({"src", "example", "export", "comment"})
# Affiliated keywords whose values Org does not parse for objects.
UNPARSED_AFFILIATED = frozenset({
    "NAME", "HEADER", "HEADERS", "RESULTS", "RESULT", "RESNAME", "SRCNAME",
    "TBLNAME", "DATA", "LABEL", "SOURCE", "PLOT",
})


def block_end(name: str) -> re.Pattern[str]:
    """The line that closes a `#+begin_NAME` block."""
    return _block_end(name.lower())


@lru_cache(maxsize=64)
def _block_end(name: str) -> re.Pattern[str]:
    return re.compile(rf"[ \t]*#\+end_{re.escape(name)}[ \t]*$", re.I)


def latex_end(name: str) -> re.Pattern[str]:
    return re.compile(rf"[ \t]*\\end\{{{re.escape(name)}\}}[ \t]*$")


@lru_cache(maxsize=32)
def heading_pattern(todo_keywords: tuple[str, ...]) -> re.Pattern[str]:
    """`org-complex-heading-regexp` for a file's TODO keywords."""
    todo = "|".join(re.escape(k) for k in sorted(todo_keywords, key=len, reverse=True))
    return re.compile(
        rf"(\*+)(?: +({todo}))?(?: +(\[#.\]))?(?: +(.*?))??(?:[ \t]+{TAGS})?[ \t]*$"
    )


def link_display(text: str) -> str:
    """`org-link-display-format`: each bracket link shown as its description."""
    return BRACKET_LINK.sub(lambda m: m["desc"] if m["desc"] is not None else m["target"], text)


def olp_title(title: str | None) -> str:
    """A heading as it appears in an outline path (statistics cookies removed)."""
    if title is None:
        return ""
    return link_display(STATS_COOKIE.sub("", title)).strip()
