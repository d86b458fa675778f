"""Whole-or-nothing writes of files that are not notes, the one file lock, and the small
system facts they need.

Notes go through `org.write` (locked, compared, through links); the data dir's
records, the tangle journal and caches only need a write that a crash leaves
old or new, never half: a temporary file beside the target, fsync, rename,
fsync of the directory. Every writer that must run alone takes `file_lock`.
Each asks `confine.writable` first: nothing is written through a link out of
its root.
`fcntl` makes orgkit POSIX-only.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator, Union

from .confine import writable

# What a whole-file write takes: the bytes, or byte-like parts (numpy arrays' views included).
Data = Union[bytes, Iterable["bytes | memoryview"]]


class LockBusy(Exception):
    """A lock asked for without waiting is held by a live process."""


@contextlib.contextmanager
def file_lock(path: Path, *, wait: bool = True, on_wait: Callable[[], None] | None = None,
              flags: int = os.O_RDWR | os.O_CREAT, mode: int = 0o666) -> Iterator[int]:
    """Hold an exclusive `flock` on `path` (a lock file, made if missing; with `flags`, a data
    file or a directory, created with `mode`); yields the open descriptor.

    The kernel releases the lock when its holder dies, so a crash never leaves a
    stale lock, and a free lock on unfinished work means that work was interrupted.
    Without `wait`, a held lock raises `LockBusy`; with it, `on_wait` is called
    once before blocking (to tell the user why nothing happens).
    """
    if flags & os.O_CREAT:
        writable(path)
    fd = os.open(path, flags, mode)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            if not wait:
                raise LockBusy(str(path)) from None
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


def replace_file(path: Path, data: Data, *, prefix: str | None = None, sync: bool = True,
                 mode: int | None = None) -> None:
    """Put `data` at `path` in one rename (the temporary file is named `prefix`…`.tmp`, with
    `mode` when given, so the file never shows another).

    A derived cache that a crash may lose passes `sync=False`: no fsync of the file or
    its directory (the rename still means a reader sees the old file or the new one).
    """
    made_dir(writable(path).parent)
    tmp = staged_copy(path.parent, data, prefix or f".{path.name}.", mode, sync=sync)
    try:
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise
    if sync:
        fsync_dir(path.parent)


def staged_copy(directory: Path, data: Data, prefix: str = ".orgkit-", mode: int | None = None, *,
                name: str | None = None, sync: bool = True) -> str:
    """`data` in a temporary file in `directory` (with `mode`, if given), ready to be renamed
    or linked into place; nothing is left behind when this fails. `data` is the bytes, or
    byte-like parts written in turn (a large cache is never joined in memory).

    The file is named `prefix`…`.tmp`, or exactly `name` when the caller must record the
    name before the file exists (it must not exist yet). A derived cache that a crash may
    lose passes `sync=False` to skip the fsync.
    """
    if name is None:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    else:
        tmp = os.path.join(directory, name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
                out.write(part)
            if sync:
                out.flush()
                os.fsync(out.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        unlink_quietly(tmp)
        raise
    return tmp


@contextlib.contextmanager
def staged_directory(target: Path, name: str) -> Iterator[Path]:
    """A fresh directory `name` beside `target` to fill; when the block ends without an error
    it is renamed to `target` in one step (an empty directory there is replaced, one with
    files refuses with OSError), so a reader finds a whole directory or none. The staging
    directory is removed in every case."""
    made_dir(writable(target).parent)
    staging = target.parent / name
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir()
        yield staging
        os.rename(staging, target)
        fsync_dir(target.parent)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def made_dir(path: Path, mode: int = 0o777) -> Path:
    """`path` as a directory (made with its parents when missing), refused when it leads out of its root."""
    writable(path)
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    return path


def unlink_quietly(path: str | Path) -> None:
    """Remove a file that may already be gone."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def fsync_dir(directory: Path) -> None:
    """Make a rename durable (some file systems refuse to fsync a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def process_umask() -> int:
    """The process umask, read without changing it where the system allows (threads may be
    creating files meanwhile)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
