"""Finding the files that hold node IDs on disk, with ripgrep (or a Python walk without rg).

The deep read follows IDs to files with a locator; the note writer asks one
before it gives an ID, to keep one ID one note. Both work without an index:
the index's own locator (retrieve/locate.py) falls back to this one.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Callable

from .org.unique import NoteIds
from .rg import org_files_matching
from .vault import older_first

# Maps IDs to the files that may hold them (a superset is fine), in the order a duplicate
# ID resolves: the first file's node is the one read (the index's first-seen order, else
# `older_first`).
Locator = Callable[[list[str]], dict[str, list[str]]]


def rg_locator(root: Path) -> Locator:
    """Find `:ID:` lines with one ripgrep call (or a Python walk without rg)."""

    def locate(ids: list[str]) -> dict[str, list[str]]:
        alternatives = "|".join(re.escape(i) for i in ids)
        pattern = rf"^[ \t]*:[Ii][Dd]:[ \t]+({alternatives})[ \t]*$"
        found: dict[str, list[str]] = {}
        compiled = re.compile(pattern)
        unread: list[str] = []  # the reader names a file it cannot read when it needs it
        for rel, lines in org_files_matching(root, [pattern], unread):
            for _, text in lines:
                m = compiled.match(text)
                if m and rel not in found.setdefault(m.group(1), []):
                    found[m.group(1)].append(rel)
        return {i: older_first(root, files) if len(files) > 1 else files for i, files in found.items()}

    return locate


def note_ids(root: Path) -> NoteIds:
    """What the note writer needs to keep one ID one note in `root`: the files holding IDs
    now, found with ripgrep (an index could miss a note written since it was updated)."""
    return NoteIds(root, rg_locator(root))


def run_note_ids(root: Path) -> NoteIds:
    """`note_ids` for an operation that writes many notes (an extraction run): every `:ID:`
    line of the notes is read with one ripgrep pass at its first ID-adding write, then
    looked up in memory. A note another process gives one of those IDs meanwhile is not
    seen; the duplicate then resolves to the older node, as any duplicate on disk does."""
    lock = threading.Lock()
    held: dict[str, list[str]] = {}
    loaded = False

    def locate(ids: list[str]) -> dict[str, list[str]]:
        nonlocal loaded
        with lock:
            if not loaded:
                held.update(_every_id(root))
                loaded = True
        return {i: held[i] for i in ids if i in held}

    def noted(rel: str, ids: list[str]) -> None:
        with lock:
            for node_id in ids:
                if rel not in held.setdefault(node_id, []):
                    held[node_id].append(rel)

    return NoteIds(root, locate, noted)


_ID_VALUE = re.compile(r"[ \t]*:[Ii][Dd]\+?:[ \t]+(\S(?:.*\S)?)[ \t]*$")


def _every_id(root: Path) -> dict[str, list[str]]:
    """Every `:ID:` value of the notes and the files holding it (each candidate file is
    parsed by the writer before it counts)."""
    found: dict[str, list[str]] = {}
    unread: list[str] = []
    for rel, lines in org_files_matching(root, [r"^[ \t]*:[Ii][Dd]\+?:[ \t]+\S"], unread):
        for _, text in lines:
            m = _ID_VALUE.match(text)
            if m and rel not in found.setdefault(m.group(1), []):
                found[m.group(1)].append(rel)
    return {i: older_first(root, files) if len(files) > 1 else files for i, files in found.items()}
