"""Whole-or-nothing writes of files that are not notes, and the small system facts they need.

Notes go through `org.write` (locked, compared, through links); the data dir's
records, the tangle journal and caches only need a write that a crash leaves
old or new, never half: a temporary file beside the target, fsync, rename,
fsync of the directory.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def replace_file(path: Path, data: bytes, *, prefix: str | None = None) -> None:
    """Put `data` at `path` in one rename (the temporary file is named `prefix`…`.tmp`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = staged_copy(path.parent, data, prefix or f".{path.name}.")
    try:
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise
    fsync_dir(path.parent)


def staged_copy(directory: Path, data: bytes, prefix: str, mode: int | None = None) -> str:
    """`data` in a fsynced temporary file in `directory` (with `mode`, if given), ready to
    be renamed or linked into place; nothing is left behind when this fails."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        unlink_quietly(tmp)
        raise
    return tmp


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
