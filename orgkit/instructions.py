"""The places in a notes dir that orgkit reads instructions and configuration from.

A deposit (and any note an agent or the librarian makes) is a note, never an
instruction: it can never land where orgkit takes its personas, skills or
schemas from, in the state or data dir, in a hidden directory, or on the
configuration file. The folders are named here once, for the code that reads
them and for the check that keeps notes out of them.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Callable, Collection

from .config import CONFIG_FILE, Config

PERSONAS_DIR = "personas"  # the roles' system prompts (llm/prompts.py)
SKILLS_DIR = "skills"  # skill files (skills/registry.py)
SCHEMAS_DIR = "schemas"  # extraction schemas (extract/schema.py)
INSTRUCTION_DIRS = {
    PERSONAS_DIR: "the roles' system prompts",
    SKILLS_DIR: "skills",
    SCHEMAS_DIR: "extraction schemas",
}

Waiting = Callable[[Config], Collection[str]]  # the notes (paths relative to the notes dir) that are deposits
_waiting: list[Waiting] = []                   # no person admitted


def deposits_waiting_from(provider: Waiting) -> None:
    """Learn which notes are deposits waiting for review from `provider`: the memory flow knows,
    and the layers under it may not ask it, so the operations layer hands its answer in on loading."""
    _waiting[:] = [provider]


def deposits_waiting(config: Config) -> Collection[str]:
    """The notes that are deposits no person admitted: never read as a persona, schema or skill.
    None where no provider was handed in (the library used without its operations, and so
    without the memory flow)."""
    return _waiting[0](config) if _waiting else ()


def instruction_place(rel: PurePosixPath, real: Path, state_dir: Path, data_dir: Path) -> str | None:
    """Why `rel` (relative to the notes dir; `real`: it resolved) is a place orgkit reads
    instructions or configuration from, or None when a note may go there (the rule, in words)."""
    parts = rel.parts
    for name, inside in (("state", state_dir), ("data", data_dir)):
        guard = Path(inside).resolve()
        if real == guard or guard in real.parents:
            return f"it is inside the {name} dir {inside}"
    first = parts[0].casefold() if parts else ""  # `Personas/` is `personas/` where names fold
    if first in INSTRUCTION_DIRS:
        return f"{first}/ holds {INSTRUCTION_DIRS[first]}, not notes"
    if any(part.startswith(".") for part in parts):
        return "a hidden file or directory (a name starting with '.') is not a note's place"
    if parts and parts[-1].casefold() == CONFIG_FILE:
        return f"{CONFIG_FILE} is the notes' configuration"
    return None


def refused_place(rel: PurePosixPath, real: Path, root: Path, state_dir: Path, data_dir: Path) -> str | None:
    """`instruction_place` for the path as named and for where its links lead (`real`, inside the
    resolved notes dir `root`): a link `notes/link -> notes/personas` is no way in."""
    if real != root and root not in real.parents:
        return "it leads outside the notes dir"
    return instruction_place(rel, real, state_dir, data_dir) or instruction_place(
        PurePosixPath(real.relative_to(root).as_posix()), real, state_dir, data_dir)
