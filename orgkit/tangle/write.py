"""Writing all targets of a tangle, or none of them.

Each target is first written to a temporary file in its own directory and only
renamed into place once every target is ready, so an error (a missing
directory, a full disk) leaves the previous files untouched.  Modes follow
Emacs: a new file gets 0666 minus the umask, then `:tangle-mode` (or 0755 for
a shebang) is applied as is.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import TangleError
from .plan import Target


def current_umask() -> int:
    """The process umask, read without changing it where the system allows."""
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


def final_mode(target: Target, umask: int) -> int:
    """The mode the target ends up with."""
    return target.mode if target.mode is not None else 0o666 & ~umask


def write_targets(targets: list[Target]) -> None:
    """Write every target atomically; on any failure, write none."""
    umask = current_umask()
    made_dirs = _make_directories(targets, umask)
    staged: list[tuple[str, Path]] = []
    try:
        for target in _last_write_wins(targets):
            staged.append((_stage(target, umask), target.path))
    except OSError as exc:
        _discard(staged, made_dirs)
        raise TangleError(f"cannot write {target.path}: {exc.strerror or exc}") from exc
    except BaseException:
        _discard(staged, made_dirs)
        raise
    for temp, path in staged:
        os.replace(temp, path)


def _last_write_wins(targets: list[Target]) -> list[Target]:
    """Two names for one file: Emacs writes both in turn, so the last one stays."""
    by_path: dict[Path, Target] = {}
    for target in targets:
        by_path.pop(target.path, None)
        by_path[target.path] = target
    return list(by_path.values())


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
                _discard([], created)
                raise TangleError(f"cannot create directory {directory}: {exc.strerror}") from exc
            created.append(directory)
    return created


def _stage(target: Target, umask: int) -> str:
    directory = target.path.parent
    if not directory.is_dir():
        raise TangleError(
            f"cannot write {target.path}: directory {directory} does not exist (add :mkdirp yes to create it)"
        )
    fd, temp = tempfile.mkstemp(prefix=f".{target.path.name}.", suffix=".orgkit-tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(target.content)
        os.chmod(temp, final_mode(target, umask))
    except BaseException:
        os.unlink(temp)
        raise
    return temp


def _discard(staged: list[tuple[str, Path]], made_dirs: list[Path]) -> None:
    for temp, _ in staged:
        try:
            os.unlink(temp)
        except OSError:
            pass
    for directory in reversed(made_dirs):
        try:
            directory.rmdir()
        except OSError:
            pass
