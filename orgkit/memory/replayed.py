"""Paths read back from the memory database, checked before anything is written or removed there.

The database is input like any other: `memory.sqlite` travels with the notes in
their data dir, and a team's PostgreSQL is written by every process that
reaches it. So a path it holds (a batch's plan, a deposit's file) is checked
exactly as an agent's path is: a relative path that lies inside the notes dir,
symlinks followed, and outside its state and data dirs. An ID it holds (a
deposit's, a batch's) names lock files, so it is checked against the form orgkit
gives IDs before any use. A record that fails is refused in one line naming it
and left as it is, for the person to look at.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from ..config import Config
from ..confine import inside, resolved
from ..errors import OrgkitError
from ..instructions import refused_place


# The IDs orgkit gives (UUIDs, as org-id makes them) and a watched note's own ID in the forms org-id
# makes (UUID, timestamp) or a person types: a file name's worth of letters, digits and . _ : -
# that starts with a letter or digit, so no ID is a path or leads out of the locks' dir.
ID_FORMAT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")


def stored_id(value: object, what: str) -> str:
    """`value` when it is an ID of the form orgkit gives; an OrgkitError naming `what` otherwise
    (a `../` or a separator in a shipped database's row never reaches a file name)."""
    if not isinstance(value, str) or not ID_FORMAT.fullmatch(value):
        raise OrgkitError(f"{what} {str(value)[:80]!r} is not an ID (letters, digits and . _ : -); "
                          "refused and left as it is")
    return value


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
    why = refused_place(PurePosixPath(str(rel)), resolved(path), resolved(cfg.notes), cfg.state_dir, cfg.data_dir)
    if why is not None:
        raise OrgkitError(f"{what}: {str(rel)[:200]!r} is not a note's place ({why}); refused and left as it is")
    return path
