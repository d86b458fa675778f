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

from .context import OpContext

HIDDEN = "(hidden)"
_URL_HOST = re.compile(r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<host>[^/\s?#'\"]+)")
_DATABASE_HOST = re.compile(r"\b(?P<scheme>postgres(?:ql)?://)(?P<host>[^/\s?#'\"]+)", re.I)
# How libpq names a host in its messages: `failed to resolve host 'h'`, `could not translate host name "h"`,
# `connection to server at "h" (10.0.0.5), port 5432 failed`, `... on socket "/run/postgresql/..."`.
_LIBPQ_HOST = re.compile(r"(?i)(?P<head>\b(?:host(?: name)?|server at|server on socket)\s+)(?P<q>[\"'])[^\"']*(?P=q)"
                         r"(?P<ip>\s*\([0-9a-f.:]+\))?")
_HOST_KEY = re.compile(r"(?i)(?<![\w])(?P<key>host|hostaddr)(?P<eq>\s*=\s*)(?P<host>'[^']*'|[^\s&#'\"]+)")
_ABSOLUTE = re.compile(r"(?<![\w:/.*~)-])(?:/[^\s'\"`:,;()\[\]?&#]+)+")


def private(ctx: OpContext) -> bool:
    """Whether the caller sees the reader's view: neither the command line nor an admin's token."""
    identity = ctx.identity
    return not ctx.trusted and not (identity is not None and identity.may("admin"))


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


def without_hosts(text: str, pattern: re.Pattern = _DATABASE_HOST) -> str:
    """`text` with the host of every database URL (with `_URL_HOST`: every URL) and `host=` masked."""
    text = pattern.sub(lambda m: m.group("scheme") + HIDDEN, text)
    text = _LIBPQ_HOST.sub(lambda m: m.group("head") + HIDDEN, text)
    return _HOST_KEY.sub(lambda m: m.group("key") + m.group("eq") + HIDDEN, text)


def _text(text: str, roots: list[str]) -> str:
    """Hosts masked, paths in the notes made relative (the notes dir itself: `.`), other paths hidden."""
    text = without_hosts(text, _URL_HOST)
    for root in roots:
        text = re.sub(rf"{re.escape(root)}(?:/|(?![^\s'\"`:,;()]))", lambda m: "" if m.group().endswith("/") else ".",
                      text)
    return _ABSOLUTE.sub(HIDDEN, text)
