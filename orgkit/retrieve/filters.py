"""Filters people reach for: a note's tags, its folder, its TODO state, when its file last changed.

One `Filters` value, built once from a call's arguments (ops/retrieve.py), is
judged the same way wherever notes are answered from: search and context
carry it in their scope (scope.py), the headline scan applies it to each
headline. Tags are a note's own and inherited ones (org-roam's inheritance),
compared without regard to case, every tag asked for must be there; the
folder is a glob over the path relative to the notes (`projects/*`), or a
folder's path, which holds everything below it (`./projects/` is `projects`,
`.` the whole notes dir; a path outside the notes is refused); dates are the file's
modification time, given as an ISO date or time (`2026-12-01`,
`2026-12-01T09:30`) or as a span back from now (`7d`, `12h`, `2w`).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from ..errors import BadParameter

_GLOB = re.compile(r"[*?\[]")  # what makes a folder a pattern (fnmatch)
_SPAN = re.compile(r"(\d+)\s*([mhdwy])")
_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


def when(text: str, param: str, *, end: bool = False, now: float | None = None) -> float:
    """`text` (an ISO date or time, or a span back from now like `7d`) as seconds since the epoch.

    With `end`, a date alone means the end of that day (`--until 2026-12-01` includes that day).
    """
    value = text.strip().lower()
    if m := _SPAN.fullmatch(value):
        return (now if now is not None else time.time()) - int(m.group(1)) * _SECONDS[m.group(2)]
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadParameter(param, f" {text!r} is not a date: give an ISO date (2026-12-01), a time "
                                  "(2026-12-01T09:30) or a span back from now (30m, 12h, 7d, 2w, 1y)") from None
    if end and len(text.strip()) == 10:
        moment += timedelta(days=1)
    return moment.timestamp()


@dataclass(frozen=True)
class Filters:
    tags: tuple[str, ...] = ()
    folder: str | None = None
    todo: str | None = None
    since: float | None = None  # seconds since the epoch
    until: float | None = None
    # each file's mtime as first read: one `stat` a file per call, however many of its notes are judged
    _modified: dict[str, float | None] = field(default_factory=dict, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.tags or self.folder or self.todo or self.since is not None or self.until is not None)

    def admits_file(self, root: Path, file: str) -> bool:
        """Whether `file` (relative to the notes) lies in the folder and changed within the dates."""
        if self.folder and not _in_folder(file, self.folder):
            return False
        if self.since is None and self.until is None:
            return True
        modified = self.modified(root, file)
        if modified is None:
            return False
        return (self.since is None or modified >= self.since) and (self.until is None or modified < self.until)

    def modified(self, root: Path, file: str) -> float | None:
        """When `file` (relative to the notes) last changed (None: it is gone), read once a call."""
        if file not in self._modified:
            try:
                self._modified[file] = os.stat(os.path.join(root, file)).st_mtime
            except OSError:
                self._modified[file] = None
        return self._modified[file]

    def admits(self, root: Path, file: str, tags: list[str], todo: str | None) -> bool:
        """Whether a note of `file` with these tags and TODO state passes every filter."""
        if self.todo and (todo or "").casefold() != self.todo.casefold():
            return False
        held = {t.casefold() for t in tags}
        return all(t.casefold() in held for t in self.tags) and self.admits_file(root, file)


def _moment(seconds: float) -> str:
    """A filter's date as the local time it stands for (`2026-12-01T00:00`)."""
    return datetime.fromtimestamp(seconds).isoformat(timespec="minutes")


def within(filters: Filters | None) -> str:
    """What `filters` let through, for a message that nothing was found (" (only notes tagged x, in y)";
    "" without filters): a search that finds nothing within them says so, not that the notes lack it."""
    if not filters:
        return ""
    parts = [f"tagged :{':'.join(filters.tags)}:"] if filters.tags else []
    if filters.folder:
        parts.append(f"in {filters.folder}")
    if filters.todo:
        parts.append(f"in TODO state {filters.todo}")
    if filters.since is not None:
        parts.append(f"changed since {_moment(filters.since)}")
    if filters.until is not None:
        parts.append(f"changed before {_moment(filters.until)}")
    return f" (only notes {', '.join(parts)})"


def _in_folder(file: str, folder: str) -> bool:
    return fnmatch.fnmatchcase(file, folder) or file.startswith(folder + "/")


def folder_of(text: str | None, root: Path | None = None) -> str | None:
    """`text` as a path relative to the notes (None: every folder), the way a shell user types it.

    A path or glob is read relative to the notes dir: `./projects/` is
    `projects`, and `.` is the whole dir. One that leaves it (absolute, or
    climbing out with `..`) could hold none of the notes and is refused, and
    so is a path (no glob) that names nothing in `root`: a mistyped folder
    is said to be one, not answered as a folder without notes.
    """
    value = (text or "").strip()
    if not value:
        return None
    if posixpath.isabs(value) or os.path.isabs(value):
        raise BadParameter("folder", f" {text!r} is an absolute path: give a folder relative to the notes dir "
                                     "(projects) or a glob (projects/*.org)")
    folder = posixpath.normpath(value.replace(os.sep, "/"))
    if folder == ".." or folder.startswith("../"):
        raise BadParameter("folder", f" {text!r} is outside the notes dir: give a folder inside it (projects) "
                                     "or a glob (projects/*.org)")
    if folder == ".":
        return None
    if root is not None and not _GLOB.search(folder) and not os.path.lexists(os.path.join(root, folder)):
        raise BadParameter("folder", f" {text!r} names nothing in the notes dir: give a folder inside it "
                                     "(projects) or a glob (projects/*.org)")
    return folder


def from_args(args: dict, root: Path | None = None) -> Filters:
    """The filters a call asked for (`tag`, `folder`, `todo`, `since`, `until`), a folder checked against
    the notes dir `root`."""
    since, until = args.get("since"), args.get("until")
    start = when(since, "since") if since else None
    end = when(until, "until", end=True) if until else None
    if start is not None and end is not None and start >= end:
        raise BadParameter("since", f" {since!r} is not before the until date {until!r}: no file changed "
                                    "in between")
    return Filters(tags=tuple(t for t in args.get("tag") or () if t.strip()),
                   folder=folder_of(args.get("folder"), root), todo=args.get("todo") or None, since=start, until=end)
