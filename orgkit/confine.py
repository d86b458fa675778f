"""Whether a path lies inside given directories, symlinks followed: the boundary agents stay behind,
and the one place every path orgkit writes or deletes is confined to its root.

What `serve` and MCP clients (agents) name must lie inside the notes dir (or,
for extraction sources, inside the user's `extract.source_roots`), and every
path read back from a file orgkit keeps (a run's `run.json`) must lie where
orgkit put it. Both checks resolve the path first, so `..` and a symlink
pointing out are seen for what they are.

Writes are confined the same way, once: the settings register each root orgkit
writes under (the notes dir with the user's `notes.follow_roots`, the state and
data dirs) and every file writer, lock and database open asks `writable` first.
A path named under a root must still lie inside it with every symlink followed,
so a received folder whose `.orgkit`, `orgkit-data`, lock file or database is a
link out is refused in one line instead of written through.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import OrgkitError

MAX_PATH_CHARS = 4096  # PATH_MAX: a longer name cannot be a file


def looks_like_path(text: str) -> bool:
    """Whether a name-or-file value names a file rather than a name (a schema by name or by file).

    One rule for the boundary that checks the value and the code that opens it,
    so a bare name is never opened as a file in the server's working directory.
    """
    return "/" in text or "\\" in text or text.endswith(".org") or text.startswith((".", "~"))


def resolved(path: Path) -> Path:
    """`path` absolute with every symlink followed (as far as it exists); an OrgkitError when it cannot be."""
    text = str(path)
    if "\0" in text:
        raise OrgkitError("a path must not contain a NUL character")
    if len(text) > MAX_PATH_CHARS or any(len(os.fsencode(part)) > 255 for part in path.parts):
        raise OrgkitError(f"path too long: {text[:60]}... ({len(text)} characters)")
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name the file system refuses
        raise OrgkitError(f"{text[:200]}: cannot resolve: {getattr(exc, 'strerror', None) or exc}") from None


def inside(path: Path, *roots: Path) -> bool:
    """Whether `path` (resolved) lies in one of `roots` (resolved), or is one of them."""
    real = resolved(path)
    return any(real.is_relative_to(resolved(root)) for root in roots)


def confined(path: Path, roots: list[Path], what: str) -> Path:
    """`path` resolved, or an OrgkitError naming `what` when it lies outside every root."""
    real = resolved(path)
    if not any(real.is_relative_to(resolved(root)) for root in roots):
        where = "the notes dir" if len(roots) == 1 else "the notes dir and " + ", ".join(str(r) for r in roots[1:])
        raise OrgkitError(f"{what!r}: {str(path)[:300]!r} is outside {where} (a server's clients may name only "
                          "files inside it)")
    return real


# Each root orgkit writes under, as named (absolute, not resolved), and where paths under it may lead.
_WRITE_ROOTS: dict[Path, tuple[Path, ...]] = {}
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")  # what SQLite opens beside a database, links followed


def confine_writes(root: Path, *leads_to: Path, closed: bool = False) -> None:
    """Make `writable` hold every path named under `root` to `root` resolved (or to `leads_to`,
    the directories the user let links lead to); a `closed` root refuses every path under it."""
    _WRITE_ROOTS[Path(os.path.abspath(root))] = () if closed else tuple(resolved(p) for p in (root, *leads_to))


def writable(path: Path, *side_files: str) -> Path:
    """`path` when it (and each `path`+suffix in `side_files`) lies, symlinks followed, inside the
    innermost registered root it is named under; an OrgkitError in one line otherwise. A path
    under no registered root (the user's own cache, config or output) is the user's to name."""
    named = Path(os.path.abspath(path))
    roots = [root for root in _WRITE_ROOTS if named.is_relative_to(root)]
    if not roots:
        return path
    root = max(roots, key=lambda r: len(r.parts))
    for probe in (path, *(path.with_name(path.name + s) for s in side_files)):
        real = resolved(probe)
        if not any(real.is_relative_to(target) for target in _WRITE_ROOTS[root]):
            raise OrgkitError(f"{probe} leads outside {root} through a symlink (to {real}); "
                              "refused, nothing written there")
    return path


def leaves_through_link(path: Path, root: Path) -> bool:
    """Whether `path`, named inside `root`, lies outside it once symlinks are followed."""
    named = Path(os.path.abspath(path))
    return named.is_relative_to(Path(os.path.abspath(root))) and not inside(path, root)
