"""The one writer of note files, safe while an editor or another orgkit writes too.

Every write of a note goes through here:

- only org files (`NOTE_SUFFIXES`) are written, so a slip of the path cannot
  add a drawer to a README or a script;
- a symlinked note is written through its link: the link stays a link and its
  target gets the new bytes (the temporary file lives beside the target);
- writers of one directory take an exclusive `flock` on the directory itself
  (cross-process, released by the kernel when a writer dies, and leaving no
  lock file among the notes), then compare the bytes they read with the bytes
  on disk, so a change made since the read (by Emacs, by another process) is
  never overwritten;
- one ID, one note: a write that would give a node an ID another node already
  holds is refused, naming that node (`unique.check_unique_ids`; the caller
  says where the notes are with `ids`, None only for a file outside any notes
  directory, which is then checked against itself alone);
- the new bytes go to a temporary file beside the target, are fsynced, renamed
  over the target (keeping its mode), and the directory is fsynced, so a crash
  leaves the old file or the new one, never half of one; the temporary files a
  killed writer left (`.orgkit-*.tmp`) are removed by the next writer of the
  directory, under the lock, when no live writer can own one.

`update_note` runs a whole read-modify-write under the lock, so concurrent
orgkit writers of one file serialise instead of failing.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import OrgkitError
from ..files import file_lock, fsync_dir, process_umask, staged_copy, unlink_quietly
from .unique import NoteIds, check_unique_ids

NOTE_SUFFIXES = (".org",)
TEMPORARY_PREFIX = ".orgkit-"
# The writer's temporary files exactly (mkstemp's eight random characters): another
# writer's `.orgkit-NAME.XXXXXXXX.tmp` beside a file called `orgkit-NAME` is not one.
TEMPORARY = re.compile(r"\.orgkit-[a-z0-9_]{8}\.tmp")


class ChangedUnderneath(OrgkitError):
    """The file changed between reading it and writing it back."""


class AlreadyExists(OrgkitError):
    """A new note's file name is taken."""


def atomic_write(path: Path, data: bytes, *, expected: bytes | None, ids: NoteIds | None) -> None:
    """Replace `path` with `data`; `expected` is what it held when read (None: new file).

    A new file is created exclusively (`AlreadyExists` when the name is taken).
    `ids` names the notes the file belongs to, for the one-ID-one-note check.
    """
    target = note_target(path)
    with directory_lock(target.parent):
        remove_stale_temporaries(target.parent)
        check_unique_ids(target, data, expected, ids)
        if expected is None:
            _create(target, data)
            return
        _replace(target, data, expected)


def update_note(path: Path, change: Callable[[bytes], bytes | None], *,
                ids: NoteIds | None) -> bytes | None:
    """Read `path` and write `change(bytes)` back, all under the directory's lock.

    `change` returns None to leave the file alone. Returns what was written.
    """
    target = note_target(path)
    with directory_lock(target.parent):
        remove_stale_temporaries(target.parent)
        original = _read(target)
        data = change(original)
        if data is not None:
            check_unique_ids(target, data, original, ids)
            _replace(target, data, original)
        return data


def note_target(path: Path) -> Path:
    """The file a note path writes to: an org file, its symlinks followed."""
    path = Path(path)
    if not path.name.endswith(NOTE_SUFFIXES):
        raise OrgkitError(f"{path}: not an org file ({', '.join(NOTE_SUFFIXES)}); not written")
    target = Path(os.path.realpath(path))
    if target != path.absolute() and not target.name.endswith(NOTE_SUFFIXES):
        raise OrgkitError(f"{path}: links to {target}, not an org file; not written")
    if target.exists() and not target.is_file():
        raise OrgkitError(f"{path}: not a regular file; not written")
    return target


@contextlib.contextmanager
def directory_lock(directory: Path) -> Iterator[None]:
    """Hold the exclusive write lock of a notes directory (blocking): a lock on the directory
    itself, so no lock file sits among the notes."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(file_lock(directory, flags=os.O_RDONLY | os.O_DIRECTORY))
        except OSError as exc:
            raise OrgkitError(f"{directory}: cannot open ({exc.strerror or exc})") from None
        yield


def remove_note(path: Path, expected: bytes | None, shown: str) -> None:
    """Remove a note only if it still holds `expected` (None: whatever it holds), under the
    directory's write lock so no concurrent write slips in between; gone already is fine."""
    with directory_lock(path.parent):
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            return
        if expected is not None and current != expected:
            raise OrgkitError(f"{shown}: changed since it was read; not removed")
        os.unlink(path)
        fsync_dir(path.parent)


def remove_stale_temporaries(directory: Path) -> None:
    """Remove the temporary files killed writers left in `directory`; the caller holds its
    lock, so no live writer owns one."""
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(TEMPORARY_PREFIX) and TEMPORARY.fullmatch(entry.name):
                unlink_quietly(entry.path)


def _read(target: Path) -> bytes:
    try:
        return target.read_bytes()
    except OSError as exc:
        raise OrgkitError(f"{target}: cannot read ({exc.strerror or exc})") from None


def _replace(target: Path, data: bytes, expected: bytes) -> None:
    """Rename `data` over `target` if it still holds `expected` (checked last thing)."""
    mode = os.stat(target).st_mode & 0o7777
    tmp = _temp_copy(target, data, mode)
    try:
        if _read(target) != expected:  # an editor that takes no lock wrote meanwhile
            raise ChangedUnderneath(f"{target}: changed since it was read; nothing written")
        os.replace(tmp, target)
    except OSError as exc:
        unlink_quietly(tmp)
        raise OrgkitError(f"{target}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        unlink_quietly(tmp)
        raise
    fsync_dir(target.parent)


def _create(target: Path, data: bytes) -> None:
    tmp = _temp_copy(target, data, 0o666 & ~process_umask())
    try:
        os.link(tmp, target)  # fails if the name exists: never a clobber
    except FileExistsError:
        raise AlreadyExists(f"{target}: already exists; not overwritten") from None
    except OSError as exc:
        raise OrgkitError(f"{target}: cannot create ({exc.strerror or exc})") from None
    finally:
        unlink_quietly(tmp)
    fsync_dir(target.parent)


def _temp_copy(target: Path, data: bytes, mode: int) -> str:
    """`data` in a fsynced temporary file beside `target`, with `mode`."""
    try:
        return staged_copy(target.parent, data, TEMPORARY_PREFIX, mode)
    except OSError as exc:
        raise OrgkitError(f"{target}: cannot write ({exc.strerror or exc})") from None
