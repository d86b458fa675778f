"""The small part of Emacs Lisp reading that header arguments need.

Org reads header values with `org-babel-read`: numbers become numbers, a
double-quoted value is read as a Lisp string, and anything that looks like Lisp
(starts with `(`, `'`, backquote or `[`) is evaluated.  orgkit evaluates nothing,
except the literal file-mode forms people write for `:tangle-mode`, such as
`(identity #o755)`, whose value needs no evaluator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER_CHARS = re.compile(r"^[0-9e.+ -]+$")
_INT = re.compile(r"^[+-]?[0-9]+\.?$")
_FLOAT = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]+)?e[+-]?[0-9]+|[0-9]*\.[0-9]+(?:e[+-]?[0-9]+)?)$")
_RADIX_INT = re.compile(r"^#([obx])([+-]?[0-9a-fA-F]+)$", re.IGNORECASE)
_MODE_FORM = re.compile(r"^\(\s*identity\s+(\S+?)\s*\)$")
_LISP_START = ("(", "'", "`", "[")


@dataclass(frozen=True)
class LispForm:
    """A header value Emacs would evaluate; kept as text so the error can quote it."""

    text: str


def read_number(text: str) -> int | float | None:
    """The number Emacs' reader makes of `text`, or None when it reads as a symbol."""
    if _INT.match(text):
        return int(text.rstrip("."))
    if _FLOAT.match(text):
        return float(text)
    return None


def string_to_number(text: str) -> int | float | None:
    """`org-babel--string-to-number`: a value made only of digit-like characters."""
    if re.search(r"\s", text.strip()) or not _NUMBER_CHARS.match(text):
        return None
    return read_number(text.strip())


def read_integer_literal(text: str) -> int | None:
    """An integer in Lisp syntax: `493`, `#o755`, `#x1ed`, `#b111101101`."""
    match = _RADIX_INT.match(text)
    if match:
        base = {"o": 8, "b": 2, "x": 16}[match.group(1).lower()]
        try:
            return int(match.group(2), base)
        except ValueError:
            return None
    number = read_number(text)
    return number if isinstance(number, int) else None


def read_string(text: str) -> str:
    """Read the first Lisp string literal in `text` (which starts with a double quote)."""
    out: list[str] = []
    i = 1
    escapes = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "e": "\x1b", "a": "\a", "s": " ", "d": "\x7f"}
    while i < len(text):
        char = text[i]
        if char == '"':
            return "".join(out)
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            i += 2
            if nxt == "\n":
                continue
            out.append(escapes.get(nxt, nxt))
            continue
        out.append(char)
        i += 1
    raise ValueError("end of file during parsing")


def babel_read(cell: str, evaluate: bool) -> object:
    """`org-babel-read`: a header value as Org stores it after parsing."""
    if not re.search(r"[^ \r\t\n]", cell):
        return cell
    number = string_to_number(cell)
    if number is not None:
        return number
    if evaluate and (cell.startswith(_LISP_START) or cell == "*this*"):
        return evaluate_literal(cell)
    if cell.startswith('"'):
        return read_string(cell)
    return cell


def evaluate_literal(cell: str) -> object:
    """The value of the few Lisp forms that need no evaluator; others stay LispForm."""
    match = _MODE_FORM.match(cell.strip())
    if match:
        value = read_integer_literal(match.group(1))
        if value is not None:
            return value
    return LispForm(cell)
