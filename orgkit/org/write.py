"""Writing note files safely while an editor may have them open.

A write goes to a temporary file in the same directory and is renamed over the
original (so readers see the old or the new file, never half of one), keeps
the file's mode, and is refused when the file changed since it was read.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import OrgkitError


class ChangedUnderneath(OrgkitError):
    """The file changed between reading it and writing it back."""


def atomic_write(path: Path, data: bytes, *, expected: bytes | None) -> None:
    """Replace `path` with `data`; `expected` is what it held when read (None: new file)."""
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if expected is None:
            _link_new(tmp, path)
            return
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        if path.read_bytes() != expected:
            raise ChangedUnderneath(f"{path}: changed since it was read; nothing written")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _link_new(tmp: str, path: Path) -> None:
    """Move the temporary file to `path` only if nothing exists there yet."""
    os.chmod(tmp, 0o666 & ~_umask())
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise OrgkitError(f"{path}: already exists; not overwritten") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
