"""The guardrail: a distilled bullet that recommends a negative-value pattern is dropped.

Corrections must never teach the extractor to say less. A bullet matching one of
the patterns of the `feedback.guardrail` setting (regular expressions, matched
case-insensitively against the bullet) is not written to the guidance file, and
`evolve` reports it with the pattern it matched. The default list (in
`orgkit/config.py`) catches: extract fewer claims, skip a dimension, drop or
shorten quotes, paraphrase instead of quoting, link less.
"""

from __future__ import annotations

from typing import Any

from ..config import Config
from ..errors import OrgkitError
from ..patterns import linear


def patterns(config: Config) -> list[Any]:
    """The configured patterns, compiled for RE2 (the setting may come from the notes' own
    orgkit.toml, so it runs in linear time like any pattern orgkit did not write); a bad one
    is a one-line error naming it."""
    out = []
    for text in config["feedback.guardrail"]:
        try:
            out.append(linear(text, ignore_case=True))
        except OrgkitError as exc:
            raise OrgkitError(f"feedback.guardrail: not a regular expression orgkit matches: {exc}") from None
    return out


def offending(bullet: str, compiled: list[Any]) -> str | None:
    """The first pattern the bullet matches (its text), else None."""
    for pattern in compiled:
        if pattern.search(bullet):
            return pattern.pattern
    return None
