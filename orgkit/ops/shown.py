"""What a caller other than the machine's own user sees of the machine: no absolute paths, no hosts.

`doctor`, `config` and `db status` describe the set-up: where the notes, the
index and the model are, which database server holds the index. The user at
the command line and an admin of the team server may see all of it; any other
caller (a reader's token, an agent over MCP or `serve`) gets the same answer
with paths relative to the notes dir (others left out) and database hosts
masked, so an answer tells nothing about the machine beyond the notes. Its
errors and warnings (a database that cannot be reached) name no host either.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..redact import HIDDEN, URL_HOST, without_hosts
from .context import OpContext

_ABSOLUTE = re.compile(r"(?<![\w:/.*~)-])(?:/[^\s'\"`:,;()\[\]?&#]+)+")


def private(ctx: OpContext) -> bool:
    """Whether the caller sees the reader's view: neither the command line nor an admin's token."""
    identity = ctx.identity
    return not ctx.trusted and not (identity is not None and not identity.local and identity.may("admin"))


def for_caller(ctx: OpContext, value: Any) -> Any:
    """`value` (a result document) as `ctx`'s caller may see it: the reader's view when `private(ctx)`."""
    if not private(ctx):
        return value
    roots = sorted({str(ctx.root), str(Path(ctx.root).resolve())}, key=len, reverse=True)
    return _masked(value, roots)


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
