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
    fd, tmp = tempfile.mkstemp(prefix=prefix or f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


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
