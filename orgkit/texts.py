"""Decoded note texts, each file read at most once per request (the deep read, the index's stored texts),
and what a text costs of a token budget."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import OrgkitError
from .vault import read_org_text


@dataclass
class TextCache:
    """Decoded file texts by relative path; failures remembered as warnings."""

    root: Path
    texts: dict[str, str | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def text(self, rel: str) -> str | None:
        if rel not in self.texts:
            try:
                self.texts[rel] = read_org_text(self.root, rel)
            except OrgkitError as exc:
                self.warnings.append(str(exc))
                self.texts[rel] = None
        return self.texts[rel]


def estimate_tokens(text: str) -> int:
    """About four characters a token: close enough for budgeting English and org."""
    return (len(text) + 3) // 4
