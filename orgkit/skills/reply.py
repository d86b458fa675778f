"""Checking a model's reply against the format a skill asked for.

Replies come from a model (or an agent relaying one): a string where a list
was asked for must be an error, never a list of its characters. The formats
skills declare are JSON Schema, checked by `jsonschema` (the validator the
model seam uses too); this module only words the first error the way the
other surfaces' parameter errors read (`reply.read[0] must be a string`).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from ..errors import OrgkitError

_KINDS: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}
# Which of several errors at one place is named: the reply's kind before its value or its keys.
_FIRST = {"type": 0, "enum": 1, "required": 2}


class BadReply(OrgkitError):
    """A reply that is not what the skill asked the model for."""


def check_reply(reply: Any, schema: dict, where: str = "reply") -> None:
    """Raise BadReply naming the first place where `reply` does not fit `schema`."""
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(reply),
                    key=lambda e: (list(e.absolute_path), _FIRST.get(str(e.validator), len(_FIRST))))
    if errors:
        raise BadReply(_words(errors[0], where))


def _words(error: jsonschema.ValidationError, where: str) -> str:
    """One error as a sentence naming its place (`reply.key[2]`)."""
    place = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    value, instance = error.validator_value, error.instance
    if error.validator == "type" and isinstance(value, str):
        return f"{place} must be {_article(value)} {value}, not {_kind(instance)}"
    if error.validator == "enum":
        return f"{place} must be one of {value}, not {instance!r}"
    if error.validator == "required":
        missing = next(key for key in value if key not in instance)
        return f"{place} lacks {missing!r}"
    return f"{place}: {error.message}"


def _article(name: str) -> str:
    return "an" if name[0] in "aeiou" else "a"


def _kind(value: Any) -> str:
    for name, kinds in _KINDS.items():
        if isinstance(value, kinds) and not (isinstance(value, bool) and name != "boolean"):
            return f"{_article(name)} {name} ({json.dumps(value)[:40]})"
    return type(value).__name__
