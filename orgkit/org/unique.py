"""One ID, one note: the check the note writer makes before every write.

A write may not give an ID to a node when another node already holds it:
otherwise any text that reaches a note (a deposit, a new note, a proposal, a
model's output) could take over an existing note's ID, and `read ID` would
return the newcomer. The check costs little: only the file written is parsed
(before and after, and only when it has an `:ID:` line at all, so an `:ID:`
line inside a block does not count), and only the IDs its nodes gain are looked
up among the notes, through a locator (ripgrep or the index) that names the
candidate files; each candidate is parsed to confirm. A node rewritten in place
keeps its ID: IDs the file's nodes held before do not count.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import OrgkitError
from .text import UndecodableFile, decode_org

# A property line that gives an entry its ID (org reads keys case-insensitively; `:ID+:`
# adds to the value), with its value.
ID_KEY = re.compile(r"^[ \t]*:ID\+?:", re.I | re.M)
ID_LINE = re.compile(r"^[ \t]*:ID(\+?):[ \t]+(\S(?:.*\S)?)[ \t]*$", re.I | re.M)

Locate = Callable[[list[str]], dict[str, list[str]]]


class DuplicateId(OrgkitError):
    """A write would give a node an ID that another node already holds."""


def _forget(rel: str, ids: list[str]) -> None:
    """A locator that reads the notes afresh each time needs no word of what was written."""


@dataclass(frozen=True)
class NoteIds:
    """The notes directory a write lands in, and how to find its files that may hold given
    IDs (a superset is fine: each candidate file is parsed before it counts). `noted` hears
    the IDs each checked write gives its file, so a locator that read the notes once (one
    extraction run writing many notes) still sees what the same run wrote since."""

    root: Path
    locate: Locate
    noted: Callable[[str, list[str]], None] = _forget


def check_unique_ids(target: Path, data: bytes, before: bytes | None, notes: NoteIds | None) -> None:
    """Refuse (`DuplicateId`) a write of `data` over `before` that introduces an ID another
    node holds, in this file or (with `notes`) anywhere among the notes."""
    rel = _display(target, notes)
    new = _introduced(data, before, rel, alone=notes is None)
    if not new:
        return
    for node_id, lines in new.items():
        if len(lines) > 1:
            raise DuplicateId(f"{rel}: ID {node_id} would be held by two nodes of this file "
                              f"(lines {lines[0]} and {lines[1]}); not written")
    if notes is None:
        return
    holders = notes.locate(sorted(new))
    for node_id in sorted(new):
        for other in holders.get(node_id, []):
            path = notes.root / other
            if os.path.realpath(path) == str(target):
                continue
            node = _node_in(path, other, node_id)
            if node is not None:
                raise DuplicateId(f"{rel}: ID {node_id} is already held by {node.title!r} "
                                  f"({other}:{node.line}); not written")
    notes.noted(rel, sorted(new))  # a write that then fails leaves a candidate its parse rules out


def _introduced(data: bytes, before: bytes | None, rel: str, *, alone: bool) -> dict[str, list[int]]:
    """The node IDs `data` holds more often than `before` did, each with the lines of its nodes
    (`alone`: only when it repeats an ID, all a file outside the notes can clash with).

    Nodes are compared, not `:ID:` lines: a write can also give a node an ID by changing
    the structure around a line (`:ID+:`, a block or `:ROAM_EXCLUDE:` removed)."""
    text = _text(data)
    if text is None or not ID_KEY.search(text) or (alone and not _repeats(text)):
        return {}
    from .parse import parse_org  # only a file with `:ID:` lines pays for the parser

    lines: dict[str, list[int]] = {}
    for node in parse_org(text, rel).nodes:
        lines.setdefault(node.id, []).append(node.line)
    old_text = _text(before) if before is not None else None
    held: Counter[str] = Counter()
    if old_text is not None and ID_KEY.search(old_text):
        held = Counter(n.id for n in parse_org(old_text, rel).nodes if n.id in lines)
    return {i: at for i, at in lines.items() if len(at) > held[i] and (len(at) > 1 or not alone)}


def _repeats(text: str) -> bool:
    """Whether `text` may hold an ID twice: a repeated `:ID:` value, or an `:ID+:` line."""
    values = Counter(m.group(2) for m in ID_LINE.finditer(text))
    return any(m.group(1) for m in ID_LINE.finditer(text)) or any(n > 1 for n in values.values())


def _text(data: bytes) -> str | None:
    try:
        return decode_org(data)
    except UndecodableFile:  # not a note orgkit reads: it holds no node
        return None


def _node_in(path: Path, rel: str, node_id: str):
    from .parse import parse_org

    try:
        text = decode_org(path.read_bytes())
    except (OSError, UndecodableFile):
        return None
    return next((n for n in parse_org(text, rel).nodes if n.id == node_id), None)


def _display(target: Path, notes: NoteIds | None) -> str:
    if notes is not None:
        root = os.path.realpath(notes.root)
        if str(target).startswith(root + os.sep):
            return str(target)[len(root) + 1:]
    return str(target)
