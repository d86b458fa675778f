"""Reading property values the way Emacs Lisp does (`split-string-and-unquote`).

org-roam reads ROAM_ALIASES and ROAM_REFS with `split-string-and-unquote`:
whitespace-separated words, where a double-quoted part is read as a Lisp string
literal (with its backslash escapes).
"""

from __future__ import annotations

import re

_SIMPLE_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "f": "\f", "a": "\a", "b": "\b",
    "e": "\x1b", "s": " ", "d": "\x7f", "v": "\v",
}
_WS = re.compile(r"\s+")


class LispReadError(ValueError):
    """A value that Emacs' reader would reject (an unterminated string)."""


def read_lisp_string(text: str, start: int) -> tuple[str, int]:
    """Read the string literal whose opening quote is at `start`.

    Returns the string and the index just past its closing quote.
    """
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= n:
            break
        esc = text[i]
        if esc in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[esc])
            i += 1
        elif esc in " \n":
            i += 1  # an escaped space or newline is dropped
        elif esc == "x":
            m = re.match(r"[0-9A-Fa-f]+", text[i + 1:])
            digits = m.group(0) if m else ""
            out.append(chr(int(digits, 16)) if digits else "")
            i += 1 + len(digits)
        elif esc in "uU":
            width = 4 if esc == "u" else 8
            digits = text[i + 1:i + 1 + width]
            if len(digits) != width or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                raise LispReadError(f"invalid \\{esc} escape in string")
            out.append(chr(int(digits, 16)))
            i += 1 + width
        elif esc in "01234567":
            m = re.match(r"[0-7]{1,3}", text[i:])
            assert m is not None
            out.append(chr(int(m.group(0), 8)))
            i += len(m.group(0))
        else:
            out.append(esc)
            i += 1
    raise LispReadError("unterminated string (missing closing double quote)")


def split_string_and_unquote(text: str) -> list[str]:
    """Split on whitespace; read double-quoted parts as Lisp strings."""
    result: list[str] = []
    while True:
        quote = text.find('"')
        if quote < 0:
            result.extend(w for w in _WS.split(text) if w)
            return result
        result.extend(w for w in _WS.split(text[:quote]) if w)
        value, end = read_lisp_string(text, quote)
        result.append(value)
        text = text[end:]
