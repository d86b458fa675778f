"""What a caller other than the machine's own user sees of the machine: no absolute paths, no hosts.

`doctor`, `config` and `db status` describe the set-up: where the notes, the
index and the model are, which database server holds the index. The user at
the command line and an admin of the team server may see all of it; any other
caller (a reader's token, an agent over MCP or `serve`) gets the same answer
with paths relative to the notes dir (others left out) and database hosts
masked, so an answer tells nothing about the machine beyond the notes. Every
operation's errors and warnings (a database that cannot be reached, a file
tangle or read could not open) are shown to such a caller the same way.
"""

from __future__ import annotations

import re
from typing import Any

from ..redact import HIDDEN, URL_HOST, without_hosts
from ..roles import token_of
from .context import OpContext

_ABSOLUTE = re.compile(r"(?<![\w:/.*~)-])(?:/[^\s'\"`:,;()\[\]?&#]+)+")


def private(ctx: OpContext) -> bool:
    """Whether the caller sees the reader's view: neither the command line nor an admin's token."""
    token = token_of(ctx.identity)
    return not ctx.trusted and not (token is not None and token.may("admin"))


def for_caller(ctx: OpContext, value: Any) -> Any:
    """`value` (a result document) as `ctx`'s caller may see it: the reader's view when `private(ctx)`."""
    if not private(ctx):
        return value
    return _masked(value, _roots(ctx))


def error_for_caller(ctx: OpContext, exc: BaseException) -> BaseException:
    """`exc` with its message as `ctx`'s caller may see it (the file an OSError names, too)."""
    if not private(ctx):
        return exc
    roots = _roots(ctx)
    if isinstance(exc, OSError):
        exc.filename = None if exc.filename is None else _text(str(exc.filename), roots)
        exc.filename2 = None if exc.filename2 is None else _text(str(exc.filename2), roots)
        if not exc.strerror:
            exc.args = (_text(str(exc), roots),)
    else:
        exc.args = (_text(str(exc), roots),)
    return exc


def texts_for_caller(ctx: OpContext, texts: list[str]) -> list[str]:
    """Warnings or errors as `ctx`'s caller may see them."""
    return [_text(text, _roots(ctx)) for text in texts] if private(ctx) else list(texts)


def _roots(ctx: OpContext) -> list[str]:
    """The notes dir as named and resolved (longest first), or none when the settings do not load."""
    try:
        root = ctx.loaded_config().notes
    except Exception:  # noqa: BLE001 - no notes to name: every absolute path is hidden
        return []
    return sorted({str(root.absolute()), str(root.resolve())}, key=len, reverse=True)


def _masked(value: Any, roots: list[str]) -> Any:
    if isinstance(value, dict):
        return {key: _masked(item, roots) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(item, roots) for item in value]
    if isinstance(value, str):
        return _text(value, roots)
    return value


def _text(text: str, roots: list[str]) -> str:
    """Hosts masked, paths in the notes made relative (the notes dir itself: `.`), other paths hidden."""
    text = without_hosts(text, URL_HOST)
    for root in roots:
        text = re.sub(rf"{re.escape(root)}(?:/|(?![^\s'\"`:,;()]))", lambda m: "" if m.group().endswith("/") else ".",
                      text)
    return _ABSOLUTE.sub(HIDDEN, text)
