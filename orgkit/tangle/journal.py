"""What a tangle wrote, and the journal that makes a run all-or-nothing.

Each org file has a small record in `.orgkit/tangle/NAME.json` beside it (the
org file's directory, like the notes' state dir: hidden, deletable, ignored by
git). It holds the SHA-256 of every target as orgkit last wrote it, so a target
edited by hand since is refused rather than overwritten, and, while a run is
in flight, the journal of that run:

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
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Iterator

from ..files import fsync_dir, replace_file, unlink_quietly
from .errors import TangleError

RECORD_DIR = Path(".orgkit") / "tangle"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_path(org: Path) -> Path:
    org = Path(os.path.abspath(org))
    return org.parent / RECORD_DIR / f"{org.name}.json"


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
    replace_file(record_path(org), json.dumps(record, indent=1, sort_keys=True).encode("utf-8"),
                 prefix=".record-")


@contextlib.contextmanager
def locked(orgs: list[Path]) -> Iterator[None]:
    """Hold the tangle lock of each org file's directory (one tangle of a file at a time)."""
    handles = []
    try:
        for directory in sorted({record_path(o).parent for o in orgs}):
            directory.mkdir(parents=True, exist_ok=True)
            handle = open(directory / "lock", "a+")
            handles.append(handle)
            fcntl.flock(handle, fcntl.LOCK_EX)
            for stray in directory.glob(".record-*"):  # a record write that was killed
                stray.unlink(missing_ok=True)
        yield
    finally:
        for handle in handles:
            handle.close()


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
        raise TangleError("a tangle journal is damaged; delete the .orgkit/tangle records beside the org files")
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
