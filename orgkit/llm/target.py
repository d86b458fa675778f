"""Which model a role talks to, resolved from the configuration.

Each role (extractor, scribe, auditor, librarian, guidance) may name its own
endpoint, model or GGUF file (`llm.ROLE.*`), falling back to the shared
`llm.*` settings; the auditor is meant to run on another model family than
the extractor. A role-level endpoint or GGUF wins over the shared one of
either kind, so a role can move from an embedded model to a server alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..config import LLM_ROLES, Config
from .errors import ModelUnavailable


@dataclass(frozen=True)
class Target:
    """One role's backend: `kind` is "http" or "gguf"; the rest says where and how."""

    role: str
    kind: str
    model: str
    endpoint: str | None = None
    gguf: Path | None = None
    api_key: str | None = None
    timeout: float = 300.0
    max_tokens: int = 2048

    def describe(self) -> str:
        where = self.endpoint if self.kind == "http" else str(self.gguf)
        return f"{self.role}: {self.model} ({self.kind} {where})"


def resolve(config: Config, role: str) -> Target:
    """The backend for `role`, or ModelUnavailable saying in one line what to set."""
    if role not in LLM_ROLES:
        raise ValueError(f"unknown model role {role!r} (roles: {', '.join(LLM_ROLES)})")
    endpoint = config[f"llm.{role}.endpoint"]
    gguf = config[f"llm.{role}.gguf"]
    if not endpoint and not gguf:
        endpoint, gguf = config["llm.endpoint"], config["llm.gguf"]
    model = config[f"llm.{role}.model"] or config["llm.model"]
    common = dict(role=role, timeout=config["llm.timeout"], max_tokens=config["llm.max_tokens"])
    if endpoint:
        key_env = config["llm.api_key_env"]
        api_key = os.environ.get(key_env) if key_env else None
        return Target(kind="http", endpoint=endpoint.rstrip("/"), model=model or "default",
                      api_key=api_key or None, **common)
    if gguf:
        if not Path(gguf).is_file():
            raise ModelUnavailable(f"no model for the {role}: GGUF file not found: {gguf}")
        return Target(kind="gguf", gguf=Path(gguf), model=model or Path(gguf).stem, **common)
    raise ModelUnavailable(f"no model configured for the {role} "
                           f"(set llm.endpoint or llm.gguf, or llm.{role}.endpoint|gguf)")
