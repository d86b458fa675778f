"""What a tangle wrote, and the journal that makes a run all-or-nothing.

A tangle leaves nothing but its targets beside the org file. Each org file has
a small record in the user's state dir, `$XDG_STATE_HOME/orgkit/tangle/`
(default `~/.local/state/orgkit/tangle/`), keyed by the file's resolved path
(`records_dir`); an org file inside a notes dir (a directory holding
`orgkit.toml` or an `orgkit-data/` dir) has its record in a folder of that dir
keyed by the notes dir's resolved path. The record never travels with the
notes: a journal is replayed as renames and deletes, so only one this user's
own orgkit wrote is trusted. A record found where earlier versions kept it, in
the notes' `orgkit-data/tangle/`, is never replayed (one line says so).

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
every target holds all its old bytes or all its new ones. Even then the
journal is input, not instruction: an entry is replayed only when its target
is one the org file names now (derived again from the org file) and its
temporary file is one orgkit names beside that target; any other entry is
refused in one line and left as it is. A run over several org files keeps its
journal in the first file's record; the others point there. The previous
bytes of a target orgkit did not write (or that `--force` overwrites) are
kept in `backups/` beside the records.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Callable, Iterator

from ..config import CONFIG_FILE, DATA_DIR_NAME, user_dir
from ..files import file_lock, fsync_dir, replace_file, unlink_quietly
from .errors import TangleError

TANGLE_DIR = "tangle"
BACKUP_DIR = "backups"


def state_home() -> Path:
    """The user's state dir (XDG): where the records of tangled org files live."""
    return user_dir("state")


def _notes_root(org: Path) -> Path | None:
    """The nearest directory above `org` that is a notes dir (it holds `orgkit.toml` or a data dir)."""
    for parent in org.parents:
        if (parent / CONFIG_FILE).is_file() or (parent / DATA_DIR_NAME).is_dir():
            return parent
    return None


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def records_dir(org: Path) -> tuple[Path, str]:
    """Where the record of `org` lives, and its name there (the file's key, readable and unique)."""
    resolved = Path(org).resolve()
    notes = _notes_root(resolved)
    if notes is not None:
        directory = state_home() / TANGLE_DIR / f"{notes.name}-{_key(str(notes))}"
        keyed = resolved.relative_to(notes).as_posix()
    else:
        directory, keyed = state_home() / TANGLE_DIR, str(resolved)
    return directory, f"{resolved.name}-{_key(keyed)}"


def shipped_record_path(org: Path) -> Path | None:
    """Where earlier versions kept the record of an org file in a notes dir: in its data dir,
    which travels with the notes (so a record there may come from anyone)."""
    resolved = Path(org).resolve()
    notes = _notes_root(resolved)
    if notes is None:
        return None
    name = f"{resolved.name}-{_key(resolved.relative_to(notes).as_posix())}.json"
    return notes / DATA_DIR_NAME / TANGLE_DIR / name


_told: set[Path] = set()  # shipped journals already named in this process


def shipped_journals(orgs: list[Path]) -> list[str]:
    """One line for each journal found in the notes' data dir (once per process): never replayed."""
    out = []
    for org in orgs:
        path = shipped_record_path(org)
        if path is None or path in _told or not path.is_file():
            continue
        try:
            journal = json.loads(path.read_text(encoding="utf-8")).get("journal")
        except (OSError, ValueError, UnicodeDecodeError, AttributeError):
            journal = None
        if journal is not None:
            _told.add(path)
            out.append(f"{path}: a tangle journal inside the notes' data dir is never replayed "
                       "(it travels with the notes); left as it is")
    return out


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


Derive = Callable[[Path], list[Path]]  # an org file -> the targets it names now


def recover(orgs: list[Path], derive: Derive) -> list[str]:
    """Finish or undo the interrupted runs that involve `orgs`; what was done, in words.

    Only the entries `_trusted` passes are replayed (`derive`: the targets an org
    file names now); each other one is named in a line and left untouched."""
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
        entries, refused = _trusted(primary, journal, derive)
        done += refused
        if journal.get("state") == "commit":
            failed = _roll_forward(entries)
            done.append(f"finished an interrupted tangle of {primary}" +
                        (f" except {'; '.join(failed)}" if failed else ""))
        else:
            _discard(entries)
            done.append(f"undid an interrupted tangle of {primary}")
        close(primary, journal, committed=journal.get("state") == "commit", entries=entries)
    return done


_TEMP_NAME = re.compile(r"\.orgkit-tmp-[0-9A-Za-z]+-[0-9]+")


def _trusted(primary: Path, journal: dict, derive: Derive) -> tuple[list[dict], list[str]]:
    """The journal's entries that may be replayed, and one line for each refused.

    An entry passes when its target is one of the targets its org file (one of
    the run's, each of whose records points at this run) names now, and its
    temporary file is named as orgkit names them, beside that target, and is no
    symlink; or when its temporary file is gone (nothing is left to do). The
    journal's own word for a path is never enough."""
    orgs = {str(primary)} | {o for o in journal.get("orgs", []) if isinstance(o, str) and _points_at(Path(o), primary)}
    named: dict[str, set[str]] = {}
    passed, refused = [], []
    for entry in _entries(journal):
        org, target, temp = (entry.get(k) for k in ("org", "target", "temp"))
        if not (isinstance(org, str) and isinstance(target, str) and isinstance(temp, str)):
            refused.append(f"{primary}: a tangle journal entry without its paths was refused; left as it is")
            continue
        if org not in named:
            named[org] = {os.path.abspath(t) for t in derive(Path(org))} if org in orgs else set()
        target_path, temp_path = Path(os.path.abspath(target)), Path(os.path.abspath(temp))
        if not os.path.lexists(temp_path):  # renamed already, or never made: nothing to replay
            passed.append(entry)
            continue
        if str(target_path) not in named[org] or temp_path.parent != target_path.parent \
                or not _TEMP_NAME.fullmatch(temp_path.name) or temp_path.is_symlink():
            refused.append(f"{primary}: refused the tangle journal entry {target[:200]!r} (temporary file "
                           f"{temp[:200]!r}): not a target {Path(org).name} names beside a file orgkit made; "
                           "left as it is")
            continue
        passed.append(entry)
    return passed, refused


def _points_at(org: Path, primary: Path) -> bool:
    """Whether `org`'s own record says it took part in the run `primary` holds."""
    try:
        journal = read_record(org).get("journal")
    except TangleError:
        return False
    return isinstance(journal, dict) and journal.get("primary") == str(primary)


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


def _roll_forward(entries: list[dict]) -> list[str]:
    """Rename the run's staged files into place; the targets that could not be, in words.

    A target that became something else since the crash (a directory, a read-only
    place) keeps what is there now; its staged file is removed so the run can close."""
    failed = []
    for entry in entries:
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
    """Remove the staged files of a run this process is making: the run is undone (targets
    were never touched)."""
    _discard(_entries(journal))


def _discard(entries: list[dict]) -> None:
    for entry in entries:
        unlink_quietly(entry["temp"])


def close(primary: Path, journal: dict, *, committed: bool, entries: list[dict] | None = None) -> None:
    """Clear the journal from every record of the run; on a commit, record the new digests
    (of `entries`: by default all of the journal's)."""
    orgs = [Path(o) for o in journal.get("orgs", [str(primary)])]
    for org in orgs:
        record = read_record(org)
        if committed:
            for entry in _entries(journal) if entries is None else entries:
                if entry.get("org") == str(org):
                    record["written"][entry["key"]] = entry["digest"]
        record.pop("journal", None)
        write_record(org, record)
