"""What a skill is: a name, a priority, a trigger, and its stages.

A skill answers one kind of request in two halves: a symbolic stage that is
deterministic and returns data (search results, parsed notes), and a neuro
stage that turns that data into the prompt a language model would get, with
the reply format it must follow. Extra stages (such as a deep read of what the
model chose) take the request and the model's reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable


@dataclass(frozen=True)
class Request:
    """What a skill is asked: a query over a notes directory, plus options.

    `rankers` lets a warm caller (the server) lend its loaded model and vectors
    to retrieval stages; None means each stage sets up its own.
    """

    query: str
    notes: Path
    options: dict[str, Any] = field(default_factory=dict)
    rankers: dict[str, Callable] | None = None


@dataclass(frozen=True)
class Prompt:
    """The text a model would be given, and the shape its reply must take."""

    text: str
    reply_format: dict[str, Any]

    def to_json(self) -> dict:
        return {"text": self.text, "reply_format": self.reply_format}


@dataclass(frozen=True)
class Skill:
    name: str
    priority: int
    description: str
    trigger: Callable[[Request], bool]
    symbolic: Callable[[Request], dict]
    neuro: Callable[[Request, dict], Prompt]
    # Stages run after the model replied: name -> f(request, reply) -> data.
    stages: dict[str, Callable[[Request, dict], dict]] = field(default_factory=dict)
    source: str = "package"
    # The JSON shape the later stages expect of the model's reply (checked before they run).
    reply_format: dict[str, Any] | None = None

    def describe(self) -> dict:
        return {"name": self.name, "priority": self.priority, "description": self.description,
                "stages": ["symbolic", "neuro", *self.stages], "source": self.source}


@dataclass(frozen=True)
class Capability:
    """A named set of skills (and extraction schemas) that can be switched off."""

    name: str
    enabled: bool
    skills: tuple[Skill, ...] = ()
    schemas: dict[str, Any] = field(default_factory=dict)
    roles: dict[str, Any] = field(default_factory=dict)  # model role -> its persona

    @classmethod
    def from_mapping(cls, data: dict, source: str) -> "Capability":
        """Read a capability callable's `{name, enabled, skills, schemas, roles}`."""
        if not isinstance(data, dict):
            raise ValueError(f"capability() returned {type(data).__name__}, not a dict")
        missing = {"name", "enabled", "skills"} - set(data)
        if missing:
            raise ValueError(f"capability from {source} lacks {', '.join(sorted(missing))}")
        if not isinstance(data["skills"], (list, tuple)) or not all(isinstance(s, Skill) for s in data["skills"]):
            raise ValueError(f"capability from {source}: 'skills' must be a list of Skill")
        skills = tuple(replace(s, source=source) for s in data["skills"])
        return cls(name=data["name"], enabled=bool(data["enabled"]), skills=skills,
                   schemas=dict(data.get("schemas") or {}), roles=dict(data.get("roles") or {}))
