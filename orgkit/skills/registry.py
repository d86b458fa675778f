"""Collecting skills: from orgkit itself, from other packages, from the notes.

Three sources, later ones overriding earlier ones by skill name:
1. first-party capabilities, listed here so an editable install needs no
   entry-point metadata;
2. capabilities other installed packages contribute through the entry-point
   group `orgkit.capabilities`;
3. project-local capabilities: Python files in the notes directory's
   `skills/` folder, each defining `capability()`. Loading them runs code
   from the notes directory, so they are loaded only when the user allowed
   it (`skills.allow_local = true` in the user's config file, or
   `ORGKIT_ALLOW_LOCAL_SKILLS=1`; never from the notes' own orgkit.toml);
   otherwise one warning says they were skipped and why.
A capability is a zero-argument callable returning {name, enabled, skills,
schemas}; the skills of a disabled capability are absent everywhere. A
capability that fails to load is a one-line warning naming it; the others
still work.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import NotFound, OrgkitError
from ..instructions import SKILLS_DIR
from .model import Capability, Request, Skill

if TYPE_CHECKING:
    from ..config import Config

ENTRY_POINT_GROUP = "orgkit.capabilities"
FIRST_PARTY = ("orgkit.skills.atomic_notes:capability", "orgkit.extract.capability:capability")
# The switch of each first-party capability that can be off: a cheap function of the config,
# so a command listing, `--help` and shell completion run no factory (a factory imports what
# its skills need: the retriever, the model seam). A capability not listed here is always on.
FIRST_PARTY_SWITCHES = {"grounded-extraction": "orgkit.extract.capability:enabled"}
LOCAL_DIR = SKILLS_DIR  # Python skill files of the notes dir (see `instructions`)


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


def _load_target(target: str) -> Callable[..., Any]:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _capability(factory: Callable[..., dict], source: str, config: "Config | None" = None) -> Capability:
    """Call a capability factory; a first-party one that takes the resolved config gets it."""
    takes_config = source == "package" and bool(inspect.signature(factory).parameters)
    return Capability.from_mapping(factory(config) if takes_config else factory(), source)


def first_party_enabled(name: str, config: "Config | None") -> bool:
    """Whether the first-party capability `name` is on under `config` (unknown names are on),
    read from its switch without running its factory."""
    switch = FIRST_PARTY_SWITCHES.get(name)
    return True if switch is None else bool(_load_target(switch)(config))


def _local_capabilities(notes: Path, registry: Registry) -> None:
    """Load each `NOTES/skills/*.py`; a failing file is a warning naming it, not an error."""
    folder = notes / LOCAL_DIR
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        source = f"local:{path.name}"
        try:
            spec = importlib.util.spec_from_file_location(f"orgkit_local_skill_{path.stem}", path)
            if spec is None or spec.loader is None:
                raise ValueError("it cannot be loaded as a module")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            if not callable(getattr(module, "capability", None)):
                raise ValueError("it defines no capability()")
            registry.add(_capability(module.capability, source))
        except Exception as exc:  # code from the notes dir: whatever it raises, report it and go on
            registry.warnings.append(f"{path}: skill file not loaded: {_one_line(exc)}")


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


def load_registry(notes: Path | None = None, config: "Config | None" = None, *,
                  allow_local: bool | None = None) -> Registry:
    """Every skill that applies here, in precedence order package < contributed < local.

    Project-local skill files run only when allowed (`allow_local`, else the
    config's `skills.allow_local`): they are code from the notes dir.
    """
    if allow_local is None:
        allow_local = bool(config is not None and config["skills.allow_local"])
    from importlib.metadata import entry_points  # 50 ms of imports that `--help` must not pay

    registry = Registry()
    for target in FIRST_PARTY:
        registry.add(_capability(_load_target(target), "package", config))
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.value in FIRST_PARTY:
            continue
        try:
            registry.add(_capability(ep.load(), f"entry-point:{ep.name}"))
        except Exception as exc:  # a broken plug-in must not take orgkit down
            registry.warnings.append(f"capability {ep.name} ({ep.value}) not loaded: {_one_line(exc)}")
    if notes is not None:
        if allow_local:
            _local_capabilities(notes, registry)
        elif (notes / LOCAL_DIR).is_dir() and any((notes / LOCAL_DIR).glob("*.py")):
            registry.warnings.append(
                f"{notes / LOCAL_DIR}: Python skill files not run (they are code from the notes dir); "
                "allow them with skills.allow_local = true in your config file (~/.config/orgkit/config.toml) "
                "or ORGKIT_ALLOW_LOCAL_SKILLS=1")
    return registry
