"""The one Emacs Lisp reader (and printer) in orgkit.

Org stores some values as Lisp text: org-roam reads ROAM_ALIASES and ROAM_REFS with
`split-string-and-unquote`, and Babel reads header arguments with `read` (then
`org-babel-read` evaluates the forms it finds).  Both need Emacs' exact reading of
string escapes (`"\\x41"`, `"\\101"`, `"a\\ b"`), numbers and symbols, and the tangler
needs `prin1` to write values back as Emacs would.

Lisp data map to Python values: strings to `str` (a raw byte such as `"\\xe9"` is a
surrogate-escaped character, as orgkit decodes undecodable bytes), integers and floats
to `int` and `float`, symbols to `Symbol` (`nil` is `NIL`, and `()` reads as `NIL`),
proper lists to `list`, dotted pairs to `Cons`, vectors to `Vector`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

_SIMPLE_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "f": "\f", "a": "\a", "b": "\b",
    "e": "\x1b", "s": " ", "d": "\x7f", "v": "\v",
}
_WS = re.compile(r"\s+")
_INT = re.compile(r"^[+-]?[0-9]+\.?$")
_FLOAT = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]+)?e[+-]?(?:[0-9]+|INF|NaN)|[0-9]*\.[0-9]+(?:e[+-]?[0-9]+)?)$")
_RADIX_INT = re.compile(r"^#([obx])([+-]?[0-9a-zA-Z]+)$", re.IGNORECASE)
# Characters that end a symbol (or number) token.
_DELIMITERS = set(" \t\n\r\f\v()[]\";'`,")


class LispReadError(ValueError):
    """Text that Emacs' reader would reject (an unterminated string, a bad escape)."""


@dataclass(frozen=True)
class Symbol:
    """An interned Lisp symbol."""

    name: str

    def __repr__(self) -> str:
        return self.name


NIL = Symbol("nil")
T = Symbol("t")
QUOTE = Symbol("quote")
FUNCTION = Symbol("function")
BACKQUOTE = Symbol("`")


@dataclass(frozen=True)
class Cons:
    """A dotted list `(a b . c)`: its proper elements and the final cdr."""

    items: tuple[object, ...]
    tail: object


@dataclass(frozen=True)
class Vector:
    """A vector `[a b]`, which evaluates to itself."""

    items: tuple[object, ...]


def raw_byte(value: int) -> str:
    """A raw byte (0x80-0xff) in a string, as orgkit's surrogate-escaped text holds it."""
    return chr(0xDC00 + value)


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
        if i + 1 >= n:
            break
        char, i = _read_escape(text, i + 1)
        out.append(char)
    raise LispReadError("unterminated string (missing closing double quote)")


def _read_escape(text: str, i: int) -> tuple[str, int]:
    """The character an escape stands for (its letter is at `i`) and where reading resumes."""
    if i >= len(text):
        raise LispReadError("end of input during parsing")
    esc = text[i]
    i += 1
    if esc in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[esc], i
    if esc in " \n":
        return "", i  # an escaped space or newline is dropped
    if esc == "x":
        match = re.compile(r"[0-9A-Fa-f]*").match(text, i)
        digits = match.group(0) if match else ""
        return _code_char(int(digits, 16) if digits else 0), i + len(digits)
    if esc in "01234567":
        match = re.compile(r"[0-7]{0,2}").match(text, i)
        digits = esc + (match.group(0) if match else "")
        return _code_char(int(digits, 8)), i + len(digits) - 1
    if esc in "uU":
        width = 4 if esc == "u" else 8
        digits = text[i : i + width]
        if len(digits) != width or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
            raise LispReadError(f"invalid \\{esc} escape in string")
        return chr(int(digits, 16)), i + width
    if esc == "N" and text[i : i + 1] == "{":
        close = text.find("}", i)
        if close < 0:
            raise LispReadError("invalid \\N escape in string")
        name = text[i + 1 : close]
        try:
            char = chr(int(name[2:], 16)) if name.upper().startswith("U+") else unicodedata.lookup(name)
        except (ValueError, KeyError):
            raise LispReadError(f"invalid character name \\N{{{name}}}") from None
        return char, close + 1
    if esc in "C^" and (esc == "^" or text[i : i + 1] == "-"):
        i += 0 if esc == "^" else 1
        base, i = (_read_escape(text, i + 1) if text[i : i + 1] == "\\" else (text[i : i + 1], i + 1))
        return _control(base), i
    if esc == "M" and text[i : i + 1] == "-":
        base, i = (_read_escape(text, i + 2) if text[i + 1 : i + 2] == "\\" else (text[i + 1 : i + 2], i + 2))
        if not base or ord(base) > 0x7F:
            raise LispReadError("invalid meta character in string")
        return raw_byte(ord(base) | 0x80), i
    if esc == "S" and text[i : i + 1] == "-":
        return text[i + 1 : i + 2].upper(), i + 2
    if esc in "HA" and text[i : i + 1] == "-":
        raise LispReadError("invalid modifier in string")
    return esc, i


def _code_char(code: int) -> str:
    """A character given by code: 0x80-0xff are raw bytes, as in Emacs' strings."""
    return raw_byte(code) if 0x80 <= code <= 0xFF else chr(code)


def _control(base: str) -> str:
    if base == "?":
        return "\x7f"
    if base and ("@" <= base <= "_" or "a" <= base <= "z"):
        return chr(ord(base) & 0x1F)
    raise LispReadError("invalid control character in string")


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


def read_number(text: str) -> int | float | None:
    """The number Emacs' reader makes of a token, or None when it reads as a symbol."""
    if _INT.match(text):
        return int(text.rstrip("."))
    if _FLOAT.match(text):
        if text.endswith("INF"):
            return -math.inf if text.startswith("-") else math.inf
        if text.endswith("NaN"):
            return math.nan
        return float(text)
    match = _RADIX_INT.match(text)
    if match:
        base = {"o": 8, "b": 2, "x": 16}[match.group(1).lower()]
        try:
            return int(match.group(2), base)
        except ValueError:
            return None
    return None


def read(text: str, start: int = 0) -> tuple[object, int]:
    """Read one datum from TEXT at START, as Emacs' `read` does; return it and its end."""
    i = _skip_blank(text, start)
    if i >= len(text):
        raise LispReadError("end of input during parsing")
    char = text[i]
    if char == '"':
        return read_lisp_string(text, i)
    if char == "(":
        return _read_list(text, i + 1)
    if char == "[":
        items, end = _read_sequence(text, i + 1, "]")
        return Vector(tuple(items)), end
    if char in ")]":
        raise LispReadError(f"unexpected {char!r}")
    if char in "'`":
        datum, end = read(text, i + 1)
        return [QUOTE if char == "'" else BACKQUOTE, datum], end
    if char == "#" and text[i + 1 : i + 2] == "'":
        datum, end = read(text, i + 2)
        return [FUNCTION, datum], end
    if char == "?":
        return _read_character(text, i + 1)
    if char == "," or (char == "#" and not _RADIX_INT.match(_token(text, i)[0])):
        raise LispReadError(f"syntax Emacs reads but orgkit does not: {text[i:i + 20]!r}")
    token, end = _token(text, i)
    number = read_number(token)
    if number is not None:
        return number, end
    return Symbol(re.sub(r"\\(.)", r"\1", token, flags=re.DOTALL)), end


def read_all(text: str) -> object:
    """Read TEXT as exactly one datum (trailing blanks and comments allowed)."""
    datum, end = read(text)
    if _skip_blank(text, end) != len(text):
        raise LispReadError(f"trailing text after the form: {text[end:].strip()[:40]!r}")
    return datum


def _skip_blank(text: str, i: int) -> int:
    while i < len(text):
        if text[i] in " \t\n\r\f\v":
            i += 1
        elif text[i] == ";":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline + 1
        else:
            break
    return i


def _token(text: str, i: int) -> tuple[str, int]:
    start = i
    while i < len(text) and text[i] not in _DELIMITERS:
        i += 2 if text[i] == "\\" else 1
    return text[start:i], min(i, len(text))


def _read_sequence(text: str, i: int, close: str) -> tuple[list[object], int]:
    items: list[object] = []
    while True:
        i = _skip_blank(text, i)
        if i >= len(text):
            raise LispReadError("end of input during parsing")
        if text[i] == close:
            return items, i + 1
        datum, i = read(text, i)
        items.append(datum)


def _read_list(text: str, i: int) -> tuple[object, int]:
    items: list[object] = []
    while True:
        i = _skip_blank(text, i)
        if i >= len(text):
            raise LispReadError("end of input during parsing")
        if text[i] == ")":
            return (items if items else NIL), i + 1
        if text[i] == "." and i + 1 < len(text) and text[i + 1] in _DELIMITERS and items:
            tail, i = read(text, i + 1)
            i = _skip_blank(text, i)
            if text[i : i + 1] != ")":
                raise LispReadError("invalid dotted list")
            return (Cons(tuple(items), tail) if tail != NIL else items), i + 1
        datum, i = read(text, i)
        items.append(datum)


def _read_character(text: str, i: int) -> tuple[int, int]:
    if i >= len(text):
        raise LispReadError("end of input during parsing")
    if text[i] == "\\":
        char, end = _read_escape(text, i + 1)
        if not char:
            raise LispReadError("invalid character syntax")
    else:
        char, end = text[i], i + 1
    code = ord(char)
    return (code - 0xDC00 + 0x3FFF00 if 0xDC80 <= code <= 0xDCFF else code), end


# Printing (`prin1`), for writing values back as Emacs does.

_SYMBOL_ESCAPES = set("\"\\;#()[]'`,?.")


def prin1(value: object) -> str:
    """`prin1-to-string` with Emacs 28's defaults (quote forms as 'x, no escaped newlines)."""
    if isinstance(value, bool):
        raise TypeError("booleans are not Lisp data; use T or NIL")
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, Symbol):
        return _print_symbol(value.name)
    if isinstance(value, Vector):
        return "[" + " ".join(prin1(v) for v in value.items) + "]"
    if isinstance(value, Cons):
        return "(" + " ".join(prin1(v) for v in value.items) + " . " + prin1(value.tail) + ")"
    if isinstance(value, list):
        if len(value) == 2 and value[0] in (QUOTE, FUNCTION, BACKQUOTE):
            prefix = {QUOTE: "'", FUNCTION: "#'", BACKQUOTE: "`"}[value[0]]
            return prefix + prin1(value[1])
        return "(" + " ".join(prin1(v) for v in value) + ")" if value else "nil"
    raise TypeError(f"not Lisp data: {value!r}")


def princ(value: object) -> str:
    """`princ`: strings and symbols without quoting, other data as `prin1`."""
    if isinstance(value, str):
        return value
    if isinstance(value, Symbol):
        return value.name
    return prin1(value)


def _print_symbol(name: str) -> str:
    if not name:
        return "##"
    out = "".join("\\" + c if c in _SYMBOL_ESCAPES or c <= " " else c for c in name)
    return "\\" + out if read_number(name) is not None and not out.startswith("\\") else out


def format_float(value: float) -> str:
    """A float as Emacs prints it: the shortest `%.15g`..`%.17g` that reads back, `.0` when bare."""
    if math.isnan(value):
        return "-0.0e+NaN" if math.copysign(1, value) < 0 else "0.0e+NaN"
    if math.isinf(value):
        return "-1.0e+INF" if value < 0 else "1.0e+INF"
    for precision in (15, 16, 17):  # `dtoastr` starts at DBL_DIG
        text = f"{value:.{precision}g}"
        if float(text) == value:
            break
    if not re.search(r"[.e]", text):
        text += ".0"
    return text
