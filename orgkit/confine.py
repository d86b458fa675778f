"""Whether a path lies inside given directories, symlinks followed: the boundary agents stay behind.

What `serve` and MCP clients (agents) name must lie inside the notes dir (or,
for extraction sources, inside the user's `extract.source_roots`), and every
path read back from a file orgkit keeps (a run's `run.json`) must lie where
orgkit put it. Both checks resolve the path first, so `..` and a symlink
pointing out are seen for what they are.
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
