"""What a tangle wrote, and the journal that makes a run all-or-nothing.

A tangle leaves nothing but its targets beside the org file. Each org file has
a small record elsewhere, keyed by the file's resolved path (`records_dir`):

- in the user's state dir, `$XDG_STATE_HOME/orgkit/tangle/` (default
  `~/.local/state/orgkit/tangle/`);
- for an org file inside a notes dir (a directory holding `orgkit.toml` or an
  `orgkit-data/` dir), in that notes dir's data dir, `orgkit-data/tangle/`,
  keyed by the path relative to the notes dir, so it moves with the notes.

The record is not derived data: it is the only memory of what orgkit wrote, so
it never lives in the deletable state dir (`.orgkit/`); deleting the index
keeps the hand-edit protection. It holds the SHA-256 of every target as orgkit
last wrote it, so a target edited by hand since is refused rather than
overwritten, and, while a run is in flight, the journal of that run:

1. `prepare`: the temporary files the run will create beside its targets are
   listed before any is created;
2. `commit`: every temporary file is written and fsynced; from here the run
   is done, whatever happens next;
3. each temporary file is renamed over its target; the record is rewritten
   with the new digests and no journal.

A run killed at any moment leaves a journal; the next tangle of any of its org
files (also `--dry-run` and `--check`) first finishes it (`commit`: the renames
not yet done) or undoes it (`prepare`: the temporary files are removed), so
every target holds all its old bytes or all its new ones. A run over several
org files keeps its journal in the first file's record; the others point there.
The previous bytes of a target orgkit did not write (or that `--force`
overwrites) are kept in `backups/` beside the records.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Iterator

from ..config import CONFIG_FILE, DATA_DIR_NAME
from ..files import file_lock, fsync_dir, replace_file, unlink_quietly
from .errors import TangleError

TANGLE_DIR = "tangle"
BACKUP_DIR = "backups"


def state_home() -> Path:
    """The user's state dir (XDG): where the records of org files outside a notes dir live."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "orgkit"


def _notes_root(org: Path) -> Path | None:
    """The nearest directory above `org` that is a notes dir (it holds `orgkit.toml` or a data dir)."""
    for parent in org.parents:
        if (parent / CONFIG_FILE).is_file() or (parent / DATA_DIR_NAME).is_dir():
            return parent
    return None


def records_dir(org: Path) -> tuple[Path, str]:
    """Where the record of `org` lives, and its name there (the file's key, readable and unique)."""
    resolved = Path(org).resolve()
    notes = _notes_root(resolved)
    if notes is not None:
        directory, keyed = notes / DATA_DIR_NAME / TANGLE_DIR, resolved.relative_to(notes).as_posix()
    else:
        directory, keyed = state_home() / TANGLE_DIR, str(resolved)
    return directory, f"{resolved.name}-{hashlib.sha256(keyed.encode()).hexdigest()[:16]}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_path(org: Path) -> Path:
    directory, name = records_dir(org)
    return directory / f"{name}.json"


def backup_path(org: Path, stamp: str, target: Path) -> Path:
    """Where the previous bytes of `target` go when a tangle of `org` replaces them."""
    directory, name = records_dir(org)
    return directory / BACKUP_DIR / name / stamp / target.name


def read_record(org: Path) -> dict:
    """The record of an org file: `{"written": {target: sha256}, "journal": ...}`."""
    path = record_path(org)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"written": {}}
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise TangleError(f"{path}: unreadable tangle record ({exc}); delete it to start afresh") from None
    if not isinstance(data, dict) or not isinstance(data.get("written", {}), dict):
        raise TangleError(f"{path}: not a tangle record; delete it to start afresh")
    data.setdefault("written", {})
    return data


def write_record(org: Path, record: dict) -> None:
    """Replace the record atomically (temp file, fsync, rename, fsync the directory)."""
    replace_file(record_path(org), json.dumps(record, indent=1, sort_keys=True).encode("utf-8"))


@contextlib.contextmanager
def locked(orgs: list[Path]) -> Iterator[None]:
    """Hold the tangle lock of each org file (one tangle of a file at a time), in a fixed order."""
    with contextlib.ExitStack() as stack:
        for path in sorted({record_path(o) for o in orgs}):
            path.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(file_lock(path.with_suffix(".lock"), wait=True))
            for stray in path.parent.glob(f".{path.name}.*.tmp"):  # a record write that was killed
                stray.unlink(missing_ok=True)
        yield


def recover(orgs: list[Path]) -> list[str]:
    """Finish or undo the interrupted runs that involve `orgs`; what was done, in words."""
    done: list[str] = []
    seen: set[Path] = set()
    for org in orgs:
        primary = _primary(org)
        if primary is None or primary in seen:
            continue
        seen.add(primary)
        record = read_record(primary)
        journal = record.get("journal")
        if not isinstance(journal, dict):
            continue
        if journal.get("state") == "commit":
            failed = _roll_forward(journal)
            done.append(f"finished an interrupted tangle of {primary}" +
                        (f" except {'; '.join(failed)}" if failed else ""))
        else:
            discard_staged(journal)
            done.append(f"undid an interrupted tangle of {primary}")
        close(primary, journal, committed=journal.get("state") == "commit")
    return done


def _primary(org: Path) -> Path | None:
    """The org file whose record holds the journal of a run involving `org`, if any."""
    journal = read_record(org).get("journal")
    if not isinstance(journal, dict):
        return None
    if "primary" in journal:
        return Path(journal["primary"])
    return Path(os.path.abspath(org))


def _entries(journal: dict) -> list[dict]:
    entries = journal.get("entries")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise TangleError(f"a tangle journal is damaged; delete the org files' records in {state_home() / TANGLE_DIR} "
                          f"(or, in a notes dir, {DATA_DIR_NAME}/{TANGLE_DIR}/)")
    return entries


def _roll_forward(journal: dict) -> list[str]:
    """Rename the run's staged files into place; the targets that could not be, in words.

    A target that became something else since the crash (a directory, a read-only
    place) keeps what is there now; its staged file is removed so the run can close."""
    failed = []
    for entry in _entries(journal):
        temp, target = Path(entry["temp"]), Path(entry["target"])
        if not temp.exists():
            continue
        try:
            os.replace(temp, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            failed.append(f"{target}: {exc.strerror or exc}")
            continue
        fsync_dir(target.parent)
    return failed


def discard_staged(journal: dict) -> None:
    """Remove the run's staged files: the run is undone (targets were never touched)."""
    for entry in _entries(journal):
        unlink_quietly(entry["temp"])


def close(primary: Path, journal: dict, *, committed: bool) -> None:
    """Clear the journal from every record of the run; on a commit, record the new digests."""
    orgs = [Path(o) for o in journal.get("orgs", [str(primary)])]
    for org in orgs:
        record = read_record(org)
        if committed:
            for entry in _entries(journal):
                if entry.get("org") == str(org):
                    record["written"][entry["key"]] = entry["digest"]
        record.pop("journal", None)
        write_record(org, record)
