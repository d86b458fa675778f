"""The tangle operations the CLI, `tangle.py` and other callers share."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..files import process_umask
from .errors import TangleError
from .journal import locked, record_path, recover, shipped_journals
from .plan import Options, Target, named_targets, plan_file
from .write import check_directories, final_mode, write_targets


@dataclass
class TangleResult:
    """What a tangle wrote (or, in a dry run, would write)."""

    targets: list[Target]
    written: bool
    recovered: list[str] = field(default_factory=list)  # interrupted runs finished or undone first
    kept: list[str] = field(default_factory=list)  # previous bytes of targets orgkit did not write, kept


@dataclass
class CheckResult:
    """Targets whose file on disk differs from what the org sources produce."""

    targets: list[Target]
    stale: list[tuple[Target, str]]  # (target, reason)
    recovered: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.stale


def plan(files: list[Path], options: Options | None = None, confine: bool = False) -> list[Target]:
    """Targets of all FILES, in order; with CONFINE, refuse any outside its org file's tree."""
    targets: list[Target] = []
    for path in files:
        targets.extend(plan_file(Path(path), options))
    if confine:
        outside = [t for t in targets if t.outside]
        if outside:
            names = ", ".join(f"{t.path} (from {t.source.name})" for t in outside)
            raise TangleError(f"refusing targets outside the org file's directory (--confine): {names}")
    return targets


def tangle(files: list[Path], options: Options | None = None, dry_run: bool = False, confine: bool = False,
           force: bool = False) -> TangleResult:
    """Tangle FILES like `org-babel-tangle-file`: every target is written, or none.

    An interrupted earlier run of these files is finished or undone first (also
    in a dry run); a target edited since orgkit wrote it is refused unless `force`;
    the previous bytes of a target orgkit did not write are kept (see `journal`).
    """
    recovered = finish_interrupted(files)
    targets = plan(files, options, confine)
    check_directories(targets)  # a dry run fails where Emacs would, as the run would
    kept = [] if dry_run else write_targets(targets, force=force)
    return TangleResult(targets, written=not dry_run, recovered=recovered, kept=kept)


def finish_interrupted(files: list[Path]) -> list[str]:
    """Complete or roll back an interrupted tangle of any of FILES; what was done, in words."""
    orgs = [Path(os.path.abspath(f)) for f in files]
    shipped = shipped_journals(orgs)  # journals that came with the notes: named, never replayed
    if not any(record_path(org).exists() for org in orgs):
        return shipped  # never tangled by orgkit here: nothing to finish
    with locked(orgs):
        return shipped + recover(orgs, named_targets)


def check(files: list[Path], options: Options | None = None) -> CheckResult:
    """Compare each target on disk with what tangling FILES would write."""
    recovered = finish_interrupted(files)
    targets = plan(files, options)
    umask = process_umask()
    stale: list[tuple[Target, str]] = []
    for target in targets:
        reason = _difference(target, final_mode(target, umask))
        if reason:
            stale.append((target, reason))
    return CheckResult(targets, stale, recovered)


def _difference(target: Target, mode: int) -> str | None:
    try:
        data = target.path.read_bytes()
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if data != target.content:
        return "content differs"
    actual = target.path.stat().st_mode & 0o7777
    if target.mode is not None and actual != mode:
        return f"mode is {actual:o}, expected {mode:o}"
    return None
