"""Checking a model's reply against the format a skill asked for.

Replies come from a model (or an agent relaying one): a string where a list
was asked for must be an error, never a list of its characters. The formats
skills declare use a small part of JSON Schema, checked here: `type`,
`properties`, `required`, `items` and `enum`.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import OrgkitError

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}


class BadReply(OrgkitError):
    """A reply that is not what the skill asked the model for."""


def parse_reply(text: str) -> dict:
    """A reply given as JSON text (`--reply`): an object, or a clear error."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadReply(f"the reply is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadReply(f"the reply must be a JSON object, not {_kind(data)}")
    return data


def check_reply(reply: Any, schema: dict, where: str = "reply") -> None:
    """Raise BadReply naming the first place where `reply` does not fit `schema`."""
    expected = schema.get("type")
    if expected is not None:
        allowed = _TYPES.get(expected, ())
        wrong_bool = isinstance(reply, bool) and expected in ("integer", "number")
        if not isinstance(reply, allowed) or wrong_bool:
            raise BadReply(f"{where} must be {'an' if expected[0] in 'aeiou' else 'a'} {expected}, "
                           f"not {_kind(reply)}")
    if "enum" in schema and reply not in schema["enum"]:
        raise BadReply(f"{where} must be one of {schema['enum']}, not {reply!r}")
    if isinstance(reply, dict):
        for key in schema.get("required", []):
            if key not in reply:
                raise BadReply(f"{where} lacks {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in reply:
                check_reply(reply[key], sub, f"{where}.{key}")
    if isinstance(reply, list) and "items" in schema:
        for i, item in enumerate(reply):
            check_reply(item, schema["items"], f"{where}[{i}]")


def _kind(value: Any) -> str:
    for name, kinds in _TYPES.items():
        if isinstance(value, kinds) and not (isinstance(value, bool) and name != "boolean"):
            return f"{'an' if name[0] in 'aeiou' else 'a'} {name} ({json.dumps(value)[:40]})"
    return type(value).__name__
