"""One model call for a role, with the reply checked before anyone uses it.

The reply must be JSON of the requested schema when one is given. A reply
that is not gets exactly one corrective retry: the bad reply and the error
are appended to the conversation and the model is asked again. A reply cut
off by the token limit is a failure, never a short answer. Transport errors
are not retried at all (no retry storms against a struggling server).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..config import Config
from . import gguf, http
from .errors import ModelFailure
from .prompts import announce
from .target import Target, resolve
from .validate import InvalidReply, check, check_schema, parse_json

CORRECTION = ("Your reply could not be used: {error}. Reply again with only a JSON value "
              "that matches the requested schema, and nothing else.")


@dataclass(frozen=True)
class Reply:
    """A checked reply: its text, the parsed JSON (when a schema was given) and the model."""

    text: str
    data: Any = None
    model: str = ""
    attempts: int = 1
    finish_reason: str = "stop"
    messages: list[dict] = field(default_factory=list)


def complete(config: Config, role: str, messages: list[dict],
             json_schema: dict | None = None) -> Reply:
    """Ask the model configured for `role`; ModelUnavailable or ModelFailure otherwise."""
    target = resolve(config, role)
    if json_schema is not None:
        check_schema(json_schema)
    return complete_with(target, messages, json_schema)


def complete_with(target: Target, messages: list[dict], json_schema: dict | None) -> Reply:
    """`complete` for an already resolved backend (a warm caller resolves once)."""
    sent = list(messages)
    error = ""
    for attempt in (1, 2):
        if attempt == 2:
            sent = sent + [{"role": "user", "content": CORRECTION.format(error=error)}]
        text, finish, model = _send(target, sent, json_schema)
        if finish == "length":
            raise ModelFailure(f"{target.role}: the reply was cut off at llm.max_tokens="
                               f"{target.max_tokens} (raise it, or shorten the input)")
        if json_schema is None:
            return Reply(text=text, model=model, attempts=attempt, finish_reason=finish, messages=sent)
        try:
            data = parse_json(text)
            check(data, json_schema)
            return Reply(text=text, data=data, model=model, attempts=attempt,
                         finish_reason=finish, messages=sent)
        except InvalidReply as exc:
            error = str(exc)
            sent = sent + [{"role": "assistant", "content": text}]
    raise ModelFailure(f"{target.role}: invalid reply after one corrective retry: {error}")


def _send(target: Target, messages: list[dict], json_schema: dict | None) -> tuple[str, str, str]:
    announce(target.role, target.describe(), messages)
    backend = http.chat if target.kind == "http" else gguf.chat
    return backend(target, messages, json_schema)
