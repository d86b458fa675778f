"""Paths read back from the memory database, checked before anything is written or removed there.

The database is input like any other: `memory.sqlite` travels with the notes in
their data dir, and a team's PostgreSQL is written by every process that
reaches it. So a path it holds (a batch's plan, a deposit's file) is checked
exactly as an agent's path is: a relative path that lies inside the notes dir,
symlinks followed, and outside its state and data dirs. A record that fails is
refused in one line naming it and left as it is, for the person to look at.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ..config import Config
from ..confine import inside
from ..errors import OrgkitError
from ..instructions import instruction_place


def note_file(cfg: Config, rel: object, what: str) -> Path:
    """The file `rel` names inside the notes dir; an OrgkitError naming `what` when it names
    anything else (an absolute path, one leading out, into the state or data dir)."""
    shown = repr(str(rel)[:200])
    if not isinstance(rel, str) or not rel.strip() or PurePosixPath(rel).is_absolute() or Path(rel).is_absolute():
        raise OrgkitError(f"{what}: {shown} is not a path inside the notes dir; refused and left as it is")
    path = cfg.notes / rel
    if not inside(path, cfg.notes):
        raise OrgkitError(f"{what}: {shown} is outside the notes dir; refused and left as it is")
    if inside(path, cfg.state_dir) or inside(path, cfg.data_dir):
        raise OrgkitError(f"{what}: {shown} is inside orgkit's state or data dir; refused and left as it is")
    return path


def batch_file(cfg: Config, rel: object, what: str) -> Path:
    """`note_file`, and nowhere orgkit reads instructions or configuration from (personas/, skills/,
    schemas/, hidden places, orgkit.toml): what a batch changes is a note, as a deposit is."""
    path = note_file(cfg, rel, what)
    why = instruction_place(PurePosixPath(str(rel)), path.resolve(), cfg.state_dir, cfg.data_dir)
    if why is not None:
        raise OrgkitError(f"{what}: {str(rel)[:200]!r} is not a note's place ({why}); refused and left as it is")
    return path
