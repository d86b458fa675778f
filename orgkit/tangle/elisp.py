"""Header values read as Org reads them (`org-babel-read`).

Numbers become numbers, a double-quoted value is read as a Lisp string, and
anything that looks like Lisp (starts with `(`, `'`, backquote or `[`) is
evaluated.  orgkit evaluates only pure forms (see `evaluate`); any other form
stays a `LispForm`, which the tangler refuses, naming the form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..org.lisp import LispReadError, read, read_number
from .evaluate import Environment, LispSignal, NotPure, Unreachable, evaluate

_NUMBER_CHARS = re.compile(r"^[0-9e.+ -]+$")
_LISP_START = ("(", "'", "`", "[")


@dataclass(frozen=True)
class LispForm:
    """A header value Emacs would evaluate and orgkit does not; kept as text for the error.

    `reason` says why: the part that is not pure, or the error Emacs would signal
    (`signals` true: Emacs fails too), or (`refused` true) the part that reads the
    machine for a caller who may not. Without the `machine` capability a signal's
    own words are left out: they may carry a value the caller may not see.
    """

    text: str
    reason: str
    signals: bool = False
    refused: bool = False


def string_to_number(text: str) -> int | float | None:
    """`org-babel--string-to-number`: a value made only of digit-like characters."""
    if re.search(r"\s", text.strip()) or not _NUMBER_CHARS.match(text):
        return None
    number = read_number(text.strip())
    return number if isinstance(number, (int, float)) else None


def babel_read(cell: str, env: Environment | None) -> object:
    """`org-babel-read`: a header value as Org stores it; ENV None inhibits evaluation."""
    if not re.search(r"[^ \r\t\n]", cell):
        return cell
    number = string_to_number(cell)
    if number is not None:
        return number
    if env is not None and (cell.startswith(_LISP_START) or cell == "*this*"):
        return evaluate_cell(cell, env)
    if cell.startswith('"'):
        try:
            return read(cell)[0]
        except LispReadError as exc:
            return LispForm(cell, f"Emacs cannot read it ({exc})", signals=True)
    return cell


def evaluate_cell(cell: str, env: Environment) -> object:
    """`(eval (read cell) t)` for pure forms; a LispForm naming what is not."""
    try:
        form = read(cell)[0]
    except LispReadError as exc:
        return LispForm(cell, f"Emacs cannot read it ({exc})", signals=True)
    try:
        return evaluate(form, env)
    except NotPure as exc:
        return LispForm(cell, f"{exc} is not a pure form orgkit evaluates")
    except Unreachable as exc:
        return LispForm(cell, str(exc), refused=True)
    except LispSignal as exc:
        said = f": {exc}" if env.machine else ""
        return LispForm(cell, f"Emacs signals an error evaluating it{said}", signals=True)
