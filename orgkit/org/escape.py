"""Text from outside (an agent, a model, a source file) made safe to put in a note.

Whatever such text holds, it must never become org structure in the note that
receives it: no heading, no drawer or property line, no `#+` keyword (a
`#+title` or `#+filetags` anywhere in a file changes the file node). Multi-line
text is escaped the way org escapes code in blocks (`org-escape-code-in-string`:
a comma before a line that would otherwise be read as syntax, and before a line
that already starts with such a comma); single-line fields (titles,
descriptions, dimensions) are folded to one line, and a field that is no
place for a link (a deposit's title) has its link syntax
broken with a zero-width space, org's own escape for markup: `[[` and a link
type's colon, so org-roam reads no link in it while it still reads the same.
"""

from __future__ import annotations

import re
import unicodedata

from . import syntax

# A line org would read as structure: a heading, a keyword or block line, a
# drawer or property line, or one that already carries escape commas.
_STRUCTURE = re.compile(r"^(?:\*|[ \t]*#\+|[ \t]*:[^\s:]*:(?:[ \t]|$)|[ \t]*,+(?:\*|#\+|:))")
_LINK_BRACKETS = str.maketrans({"[": "(", "]": ")"})
_ZWSP = "\u200b"
_OPENING = re.compile(r"\[(?=\[)")
_TYPE_COLON = re.compile(syntax.LINK_TYPE_PREFIX.pattern + r"(?=\S)")
_ID_COLON = re.compile(r"(?<![A-Za-z0-9])id:(?=\S)", re.I)


# Property names org, org-babel or org-roam act on (org's special and inherited-setting properties,
# `header-args`, `ROAM_EXCLUDE` and the other `ROAM_` ones): a property drawer line under such a
# name is structure, so text from outside never names one.
_MEANINGFUL = frozenset({
    "ALLTAGS", "APPT_WARNTIME", "ARCHIVE", "ATTACH_DIR", "ATTACH_DIR_INHERIT", "BLOCKED", "CATEGORY",
    "CLOCKSUM", "CLOCKSUM_T", "CLOSED", "COLUMNS", "COOKIE_DATA", "CUSTOM_ID", "DEADLINE", "DIR",
    "EFFORT", "FILE", "ID", "ITEM", "LAST_REPEAT", "LOGGING", "NOBLOCKING", "ORDERED", "PRIORITY",
    "SCHEDULED", "STYLE", "TAGS", "TIMESTAMP", "TIMESTAMP_IA", "TODO", "UNNUMBERED", "VISIBILITY",
})
_MEANINGFUL_PREFIXES = ("ROAM_", "HEADER-ARGS", "EXPORT_", "ATTACH_", "ARCHIVE_", "HTML_", "LATEX_")


def meaningful_property(name: str) -> bool:
    """Whether org, org-babel or org-roam give the property `name` a meaning (a `_ALL` name
    lists another property's allowed values)."""
    upper = name.upper()
    return upper in _MEANINGFUL or upper.startswith(_MEANINGFUL_PREFIXES) or upper.endswith("_ALL")


def one_line(text: str, limit: int = 0) -> str:
    """`text` as one line: control characters and line breaks folded to single spaces.

    With `limit`, a longer result is cut and ends in an ellipsis.
    """
    folded = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text)
    flat = re.sub(r"\s+", " ", folded).strip()
    if limit and len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def inert_line(text: str, limit: int = 0) -> str:
    """`text` as one line (`one_line`) in which org reads no link: a zero-width space after
    each `[` that opens `[[`, and before the colon of a link type (`id:`, `https:`, `file:`...)
    that something follows."""
    return _TYPE_COLON.sub(lambda m: m.group(1) + _ZWSP + ":", _OPENING.sub("[" + _ZWSP, one_line(text, limit)))


def inert_property(text: str) -> str:
    """`text` as one property value in which org reads no link to a note: a zero-width space
    after each `[` that opens `[[`, and before the colon of `id:`; a plain web address
    (a deposit's `:SOURCE:`) stays a link to where it points."""
    return _ID_COLON.sub("id" + _ZWSP + ":", _OPENING.sub("[" + _ZWSP, one_line(text)))


def escape_lines(text: str) -> str:
    """`text` with every line org would read as structure comma-escaped.

    Line breaks other than LF (a lone CR, Unicode line separators) are made LF
    first, so no hidden break can start a line the escape did not see; a NUL
    (which would make the whole file unreadable as org) becomes U+FFFD.
    """
    text = re.sub(r"\r\n?|[\u2028\u2029\x0b\x0c\x85]", "\n", text).replace("\0", "\ufffd")
    return "\n".join("," + line if _STRUCTURE.match(line) else line for line in text.split("\n"))


def link_description(text: str, limit: int = 80) -> str:
    """`text` fit to stand between a link's brackets: one line, no brackets."""
    return one_line(text, limit).translate(_LINK_BRACKETS)


_HASH_PLUS = re.compile(r"[ \t]*#\+")
_FIXED_WIDTH = re.compile(r"^:(?: (.*))?$")


def _not_text(line: str) -> bool:
    """Whether org reads `line` as something other than text inside a quote block: a heading,
    a keyword, block or comment line, a drawer or property line. Org does not unescape commas
    in a quote block, so such a line cannot be comma-escaped there without the reader seeing
    a comma the text lacks."""
    return bool(syntax.HEADING.match(line) or _HASH_PLUS.match(line) or syntax.COMMENT.match(line)
                or syntax.DRAWER_BEGIN.match(line) or syntax.PROPERTY_LINE.match(line))


def verbatim_block(text: str) -> str:
    """`text` as org shows it verbatim: a quote block when every line is plain text, else a
    fixed-width area (`: ` before each line), whose lines org never reads as structure.

    Either way what the reader sees between the markers is `text` itself, with
    no escape character added (line breaks other than LF made LF).
    """
    lines = re.sub(r"\r\n?|[\u2028\u2029\x0b\x0c\x85]", "\n", text).split("\n")
    if any(_not_text(line) for line in lines):
        return "\n".join(f": {line}" if line else ":" for line in lines) + "\n"
    return "#+begin_quote\n" + "\n".join(lines) + "\n#+end_quote\n"


def read_verbatim_block(text: str) -> str | None:
    """The text of the first block `verbatim_block` wrote in `text`; None when there is none."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip().lower() == "#+begin_quote":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().lower() == "#+end_quote"), None)
            return None if end is None else "\n".join(lines[i + 1:end])
        if _FIXED_WIDTH.match(line):
            area = []
            for other in lines[i:]:
                m = _FIXED_WIDTH.match(other)
                if not m:
                    break
                area.append(m.group(1) or "")
            return "\n".join(area)
    return None
