"""Writing all targets of a tangle, or none of them.

Each target is first written to a temporary file in its own directory and only
renamed into place once every target is ready and the run's journal says so,
so an error (a missing directory, a full disk) or a kill leaves the previous
files untouched, or the next run completes the renames (see `journal`).  Modes follow
Emacs: a new file gets 0666 minus the umask, then `:tangle-mode` (or 0755 for
a shebang) is applied as is.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from urllib.parse import quote

from ..files import fsync_dir, process_umask, replace_file, staged_copy
from .errors import TangleError
from .journal import backup_path, close, digest, discard_staged, locked, read_record, recover, write_record
from .plan import Target, named_targets


def final_mode(target: Target, umask: int) -> int:
    """The mode the target ends up with."""
    return target.mode if target.mode is not None else 0o666 & ~umask


def write_targets(targets: list[Target], *, force: bool = False) -> list[str]:
    """Write every target, or none, even if the process is killed (see `journal`).

    A target changed since orgkit last wrote it is refused unless `force`. The
    previous bytes of a target orgkit did not write (or that `force` overwrites)
    are kept beside the records first; returns one line for each kept.
    """
    umask = process_umask()
    targets = _last_write_wins(targets)
    orgs = list(dict.fromkeys(Path(os.path.abspath(t.source)) for t in targets))
    with locked(orgs):
        recover(orgs, named_targets)
        if not targets:
            return []
        kept = _keep_previous(_previous_bytes(targets, force))
        made_dirs = _make_directories(targets, umask)
        primary = orgs[0]
        run = secrets.token_hex(6)
        entries = [{"org": str(Path(os.path.abspath(t.source))), "key": _key(t), "target": str(t.path),
                    "temp": str(t.path.parent / f".orgkit-tmp-{run}-{k}"), "digest": digest(t.content)}
                   for k, t in enumerate(targets)]
        journal = {"state": "prepare", "entries": entries,
                   "orgs": [str(o) for o in orgs[1:]] + [str(primary)]}
        _open_journal(primary, orgs[1:], journal)
        try:
            for target, entry in zip(targets, entries):
                _stage(target, Path(entry["temp"]), umask)
        except BaseException as exc:
            discard_staged(journal)
            close(primary, journal, committed=False)
            _remove_made_dirs(made_dirs)
            if isinstance(exc, OSError):
                raise TangleError(f"cannot write {exc.filename or 'a target'}: {exc.strerror or exc}") from exc
            raise
        journal["state"] = "commit"
        record = read_record(primary)
        record["journal"] = journal
        write_record(primary, record)  # the run is done from here on
        for entry in entries:
            os.replace(entry["temp"], entry["target"])
        for directory in {Path(e["target"]).parent for e in entries}:
            fsync_dir(directory)
        close(primary, journal, committed=True)
    return kept


def _key(target: Target) -> str:
    """How the org file's record names a target: relative to the org file's directory."""
    return Path(os.path.relpath(target.path, os.path.abspath(target.source.parent))).as_posix()


def _previous_bytes(targets: list[Target], force: bool) -> list[tuple[Target, bytes]]:
    """The existing targets this run replaces with other bytes that orgkit did not write, with
    those bytes: targets it has no record of, and (with `force`) targets edited by hand.

    Without `force`, a target that differs from what orgkit last wrote there (and
    from the new bytes) refuses the whole run.
    """
    records: dict[Path, dict] = {}
    previous: list[tuple[Target, bytes]] = []
    for target in targets:
        org = Path(os.path.abspath(target.source))
        if org not in records:
            records[org] = read_record(org)
        recorded = records[org]["written"].get(_key(target))
        try:
            data = target.path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            continue
        except OSError as exc:
            raise TangleError(f"cannot read {target.path}: {exc.strerror or exc}") from None
        current = digest(data)
        if current in (recorded, digest(target.content)):
            continue
        if recorded is None or force:
            previous.append((target, data))
        else:
            raise TangleError(
                f"{target.path} changed since orgkit tangled it; nothing written "
                f"(`orgkit detangle {target.path}` brings the edit back into {target.source.name}, "
                "--force overwrites it)")
    return previous


def _keep_previous(previous: list[tuple[Target, bytes]]) -> list[str]:
    """Copy each target's previous bytes beside the records (fsynced, before any target is
    touched); one line for each, naming where the bytes are."""
    stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{secrets.token_hex(3)}"
    kept = []
    for target, data in previous:
        backup = backup_path(target.source, stamp, Path(quote(_key(target), safe="")))
        try:
            replace_file(backup, data)
        except OSError as exc:
            raise TangleError(f"cannot keep the previous bytes of {target.path} in {backup}: "
                              f"{exc.strerror or exc}; nothing written") from None
        kept.append(f"{target.path} was not written by orgkit; its previous bytes are kept in {backup}")
    return kept


def _open_journal(primary: Path, others: list[Path], journal: dict) -> None:
    """Record the run's temporary files before creating any (the others point at the primary)."""
    for org in others:
        record = read_record(org)
        record["journal"] = {"primary": str(primary)}
        write_record(org, record)
    record = read_record(primary)
    record["journal"] = journal
    write_record(primary, record)


def _last_write_wins(targets: list[Target]) -> list[Target]:
    """Two names for one file: Emacs writes both in turn, so the last one stays."""
    by_path: dict[Path, Target] = {}
    for target in targets:
        by_path.pop(target.path, None)
        by_path[target.path] = target
    return list(by_path.values())


def check_directories(targets: list[Target]) -> None:
    """Fail, before anything is written, where Emacs fails on a missing folder.

    Emacs writes the targets in turn (in the order they first appear), making a
    target's folder only when that target says `:mkdirp`: a folder that only a
    later target makes does not exist yet when an earlier one without `:mkdirp` is written.
    """
    made: set[Path] = set()
    for target in targets:
        directory = target.path.parent
        if target.mkdirp:
            made.update((directory, *directory.parents))
        elif directory not in made and not directory.is_dir():
            later = any(t.mkdirp and directory in (t.path.parent, *t.path.parent.parents) for t in targets)
            why = (": a later target's :mkdirp makes it only after this one is written, as in Emacs"
                   if later else "")
            raise TangleError(f"cannot write {target.path}: directory {directory} does not exist{why} "
                              "(add :mkdirp yes to create it)")


def _make_directories(targets: list[Target], umask: int) -> list[Path]:
    """Create `:mkdirp` directories; return those created, to remove them on failure."""
    created: list[Path] = []
    for target in targets:
        if not target.mkdirp:
            continue
        missing = []
        parent = target.path.parent
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        for directory in reversed(missing):
            try:
                directory.mkdir(mode=0o777)
            except OSError as exc:
                _remove_made_dirs(created)
                raise TangleError(f"cannot create directory {directory}: {exc.strerror}") from exc
            created.append(directory)
    return created


def _stage(target: Target, temp: Path, umask: int) -> None:
    """The target's bytes in `temp` beside it, fsynced, with the target's final mode (its folder is
    there: `check_directories`)."""
    staged_copy(target.path.parent, target.content, mode=final_mode(target, umask), name=temp.name)


def _remove_made_dirs(made_dirs: list[Path]) -> None:
    """Remove the directories this run created (deepest first), where they are still empty."""
    for directory in reversed(made_dirs):
        try:
            directory.rmdir()
        except OSError:
            pass
