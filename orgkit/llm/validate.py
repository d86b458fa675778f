"""Reading a model's reply as JSON and checking it against the requested schema.

Small models wrap JSON in code fences or add a sentence around it; the first
JSON value in the reply is taken. The error text is what the corrective retry
sends back to the model, so it names the failing path and the reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

_FENCE = re.compile(r"^\s*```[A-Za-z]*\s*\n(.*?)\n\s*```\s*$", re.S)


class InvalidReply(ValueError):
    """The reply is not JSON, or not JSON of the requested shape."""


def parse_json(text: str) -> Any:
    """The JSON value in `text` (fences and surrounding prose tolerated)."""
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        first = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
        if first >= 0:
            try:
                value, _ = json.JSONDecoder().raw_decode(body[first:])
                return value
            except json.JSONDecodeError:
                pass
        raise InvalidReply(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def check(value: Any, schema: dict) -> None:
    """Raise InvalidReply naming the first place where `value` breaks `schema`."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise InvalidReply(f"JSON does not match the schema at {where}: {err.message}")


def check_schema(schema: dict) -> None:
    """Fail early (a programming error) when the schema itself is malformed."""
    jsonschema.Draft202012Validator.check_schema(schema)
