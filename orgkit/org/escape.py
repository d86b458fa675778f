"""Text from outside (an agent, a model, a source file) made safe to put in a note.

Whatever such text holds, it must never become org structure in the note that
receives it: no heading, no drawer or property line, no `#+` keyword (a
`#+title` or `#+filetags` anywhere in a file changes the file node). Multi-line
text is escaped the way org escapes code in blocks (`org-escape-code-in-string`:
a comma before a line that would otherwise be read as syntax, and before a line
that already starts with such a comma); single-line fields (titles,
descriptions, dimensions) are folded to one line.
"""

from __future__ import annotations

import re
import unicodedata

# A line org would read as structure: a heading, a keyword or block line, a
# drawer or property line, or one that already carries escape commas.
_STRUCTURE = re.compile(r"^(?:\*|[ \t]*#\+|[ \t]*:[^\s:]*:(?:[ \t]|$)|[ \t]*,+(?:\*|#\+|:))")
_LINK_BRACKETS = str.maketrans({"[": "(", "]": ")"})


def one_line(text: str, limit: int = 0) -> str:
    """`text` as one line: control characters and line breaks folded to single spaces.

    With `limit`, a longer result is cut and ends in an ellipsis.
    """
    folded = "".join(" " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c for c in text)
    flat = re.sub(r"\s+", " ", folded).strip()
    if limit and len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


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
