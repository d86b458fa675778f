"""Errors raised while tangling: each names the org file, the line and the block."""

from __future__ import annotations

from ..errors import OrgkitError


class TangleError(OrgkitError):
    """A tangle that cannot be done as Emacs would do it; nothing has been written."""


class NeedsEvaluation(TangleError):
    """Emacs would evaluate Lisp (or run a block) here; orgkit never evaluates code."""


def located(path: str, line: int, block: str, message: str) -> str:
    """One line naming where the problem is, so the user can jump to it."""
    return f"{path}:{line}: block {block}: {message}"
