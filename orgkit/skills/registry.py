"""Collecting skills: from orgkit itself, from other packages, from the notes.

Three sources, later ones overriding earlier ones by skill name:
1. first-party capabilities, listed here so an editable install needs no
   entry-point metadata;
2. capabilities other installed packages contribute through the entry-point
   group `orgkit.capabilities`;
3. project-local capabilities: Python files in the notes directory's
   `skills/` folder, each defining `capability()`.
A capability is a zero-argument callable returning {name, enabled, skills,
schemas}; the skills of a disabled capability are absent everywhere.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..errors import NotFound, OrgkitError
from .model import Capability, Request, Skill

if TYPE_CHECKING:
    from ..config import Config

ENTRY_POINT_GROUP = "orgkit.capabilities"
FIRST_PARTY = ("orgkit.skills.atomic_notes:capability", "orgkit.extract.capability:capability")
LOCAL_DIR = "skills"


@dataclass
class Registry:
    skills: dict[str, Skill] = field(default_factory=dict)
    disabled: dict[str, str] = field(default_factory=dict)  # skill name -> capability
    capabilities: list[Capability] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add(self, capability: Capability) -> None:
        self.capabilities.append(capability)
        for skill in capability.skills:
            if capability.enabled:
                self.skills[skill.name] = skill
                self.disabled.pop(skill.name, None)
            elif skill.name not in self.skills:  # an enabled provider still wins
                self.disabled[skill.name] = capability.name

    def get(self, name: str) -> Skill:
        if name in self.skills:
            return self.skills[name]
        if name in self.disabled:
            raise OrgkitError(f"skill {name!r} belongs to the disabled capability "
                              f"{self.disabled[name]!r}")
        raise NotFound(f"unknown skill: {name!r} (see `orgkit skills list`)")

    def ordered(self) -> list[Skill]:
        return sorted(self.skills.values(), key=lambda s: (-s.priority, s.name))

    def matching(self, request: Request) -> list[Skill]:
        """The skills whose trigger accepts the request, highest priority first."""
        return [s for s in self.ordered() if s.trigger(request)]


def _load_target(target: str) -> Callable[[], dict]:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _capability(factory: Callable[..., dict], source: str, config: "Config | None" = None) -> Capability:
    """Call a capability factory; a first-party one that takes the resolved config gets it."""
    takes_config = source == "package" and bool(inspect.signature(factory).parameters)
    return Capability.from_mapping(factory(config) if takes_config else factory(), source)


def first_party_enabled(name: str, config: "Config | None") -> bool:
    """Whether the first-party capability `name` is on under `config` (unknown names are on)."""
    for target in FIRST_PARTY:
        capability = _capability(_load_target(target), "package", config)
        if capability.name == name:
            return capability.enabled
    return True


def _local_factories(notes: Path) -> list[tuple[Callable[[], dict], str]]:
    folder = notes / LOCAL_DIR
    found = []
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        spec = importlib.util.spec_from_file_location(f"orgkit_local_skill_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not hasattr(module, "capability"):
            raise OrgkitError(f"{path}: a project-local skill file must define capability()")
        found.append((module.capability, f"local:{path.name}"))
    return found


def load_registry(notes: Path | None = None, config: "Config | None" = None) -> Registry:
    """Every skill that applies here, in precedence order package < contributed < local."""
    registry = Registry()
    for target in FIRST_PARTY:
        registry.add(_capability(_load_target(target), "package", config))
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.value in FIRST_PARTY:
            continue
        try:
            registry.add(_capability(ep.load(), f"entry-point:{ep.name}"))
        except Exception as exc:  # a broken plug-in must not take orgkit down
            registry.warnings.append(f"capability {ep.name} ({ep.value}) not loaded: {exc}")
    if notes is not None:
        for factory, source in _local_factories(notes):
            registry.add(_capability(factory, source))
    return registry
