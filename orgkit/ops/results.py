"""An operation's result as a JSON Schema, read from the shape the registry declares for it.

Each `Op` declares its result once, in the short notation every surface already
shows (`[{id, title, line}]`, `{query, included: [{id, ...}], omitted}`); this
module reads that notation into the JSON Schema MCP publishes as the tool's
`outputSchema`, so the description, `orgkit ops --json` and the schema a client
validates against cannot drift apart. The notation:

- `{a, b?, c: VALUE}`: an object with these fields (`?`: not always there);
  `...` (with any words after it) says more fields come. Any object may carry
  fields beyond those named, so a result that grows a field stays valid.
- `[VALUE]`: a list of VALUE; `[A, B]`: a list (a pair, as in `[FROM, TO]`).
- `{KEY: VALUE}` (a name in capitals): an object whose every field is a VALUE.
- `VALUE (word: OTHER)`: VALUE, or OTHER when the call asks for `word`.

A field's JSON type comes from `FIELDS`, the names results share with one
meaning everywhere (`line` is always a line number, `excerpt` whether a note
is given in part); a field not there may hold anything.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_TEXT = {"type": "string"}
_MAYBE_COUNT = {"type": ["integer", "null"]}
_MAYBE_TEXT = {"type": ["string", "null"]}
_TEXTS = {"type": "array", "items": {"type": "string"}}

# Fields with one meaning and type in every result that carries them.
FIELDS: dict[str, dict[str, Any]] = {
    "id": _MAYBE_TEXT, "title": _MAYBE_TEXT, "file": _MAYBE_TEXT, "path": _MAYBE_TEXT,
    "snippet": _MAYBE_TEXT, "content": _MAYBE_TEXT, "query": _TEXT, "locator": _TEXT,
    "line": _MAYBE_COUNT, "end_line": _MAYBE_COUNT, "pos": _MAYBE_COUNT, "depth": _MAYBE_COUNT,
    "tokens": _MAYBE_COUNT, "budget": _MAYBE_COUNT,
    "score": {"type": ["number", "null"]}, "relevant": {"type": ["boolean", "null"]},
    "excerpt": {"type": "boolean"}, "warnings": _TEXTS, "olp": _TEXTS, "tags": _TEXTS, "aliases": _TEXTS,
}

_TOKEN = re.compile(r"\s*(\.\.\.[^,\]}]*|[A-Za-z_][\w]*\??|[{}\[\],:()])")


class NotationError(ValueError):
    """A declared result shape this module cannot read (a programming error in the registry)."""


@lru_cache(maxsize=None)
def result_schema(notation: str) -> dict[str, Any]:
    """The JSON Schema of a result declared as `notation` ({} for an undeclared one: anything)."""
    text = notation.strip()
    if not text:
        return {}
    tokens = _tokens(text)
    try:
        schema, at = _value(tokens, 0)
        alternatives = [schema]
        while at < len(tokens):
            if tokens[at] != "(" or at + 2 >= len(tokens) or tokens[at + 2] != ":":
                raise NotationError(f"unexpected {tokens[at]!r} in {notation!r}")
            other, at = _value(tokens, at + 3)
            alternatives.append(other)
            at = _expect(tokens, at, ")")
    except IndexError:
        raise NotationError(f"{notation!r} ends before its brackets close") from None
    return alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            if text[at:].strip():
                raise NotationError(f"cannot read {text[at:at + 20]!r} in {text!r}")
            break
        out.append(match.group(1).strip())
        at = match.end()
    return out


def _expect(tokens: list[str], at: int, token: str) -> int:
    if at >= len(tokens) or tokens[at] != token:
        raise NotationError(f"expected {token!r} at {' '.join(tokens[at:at + 3]) or 'the end'}")
    return at + 1


def _value(tokens: list[str], at: int) -> tuple[dict[str, Any], int]:
    if at >= len(tokens):
        raise NotationError("a value is missing at the end")
    token = tokens[at]
    if token == "{":
        return _object(tokens, at + 1)
    if token == "[":
        items: list[dict[str, Any]] = []
        at += 1
        while True:
            item, at = _value(tokens, at)
            items.append(item)
            if tokens[at] != ",":
                break
            at += 1
        at = _expect(tokens, at, "]")
        return {"type": "array", "items": items[0] if len(items) == 1 else {}}, at
    return dict(FIELDS.get(token.rstrip("?"), {})), at + 1


def _object(tokens: list[str], at: int) -> tuple[dict[str, Any], int]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    every: dict[str, Any] | None = None
    while tokens[at] != "}":
        token = tokens[at]
        if token.startswith("..."):
            at += 1
        else:
            name, optional = token.rstrip("?"), token.endswith("?")
            at += 1
            value = dict(FIELDS.get(name, {}))
            if at < len(tokens) and tokens[at] == ":":
                value, at = _value(tokens, at + 1)
            if name.isupper():
                every = value
            else:
                properties[name] = value
                if not optional:
                    required.append(name)
        if tokens[at] == ",":
            at += 1
        elif tokens[at] != "}":
            raise NotationError(f"expected ',' or '}}' at {' '.join(tokens[at:at + 3])}")
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if every is not None:
        schema["additionalProperties"] = every
    return schema, at + 1
