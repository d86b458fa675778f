"""Searchable units: every file and heading, ID or not, and the locator that names one without an ID.

org-roam's nodes are the entries with an ID; most org folders (agenda files,
project notes, a documentation tree) have few or none. For retrieval, text
outside every node belongs to a unit: the heading it sits under, or the file
for the text before the first heading. A unit is a `Node` whose `id` is its
locator; inside a node the node stays the unit, so an ID is the handle
wherever there is one.

A locator is org's own `file:` search-option syntax without the `file:`:
`dir/notes.org` (the file), `dir/notes.org::*Heading` (the heading of that
title, as `org-link-search` finds it: it survives edits above the heading),
and `dir/notes.org::123` (the heading at or around line 123: the form a
title shared by two headings of the file gets). The path is relative to the
notes directory with forward slashes.
"""

from __future__ import annotations

import re
from typing import Iterable

from ..errors import NotFound
from .model import Node, OrgFile

SEPARATOR = "::"
_LOCATOR = re.compile(r"(?s)(?P<path>.+?\.org)(?:::(?P<option>.*))?")
_UNSAFE_TITLE = re.compile(r"[\[\]\n\r]")


def is_locator(text: str) -> bool:
    """Whether `text` names a file (and maybe a heading in it) rather than an ID."""
    return _LOCATOR.fullmatch(text) is not None


def no_node(key: str) -> NotFound:
    """The error for a key that no node has as its ID. A locator names a file or heading without one,
    which no id link leads to or from: say so, rather than call it an unknown ID."""
    if is_locator(key):
        return NotFound(f"{key} is a locator, not an ID: id links lead to and from nodes with an ID only "
                        "(`orgkit id add` gives one)")
    return NotFound(f"unknown ID: {key}")


def split_locator(text: str) -> tuple[str, str | None]:
    """(path, search option or None) of a locator; a ValueError when it names no org file."""
    m = _LOCATOR.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a locator (FILE.org, FILE.org::*Heading or FILE.org::LINE)")
    return m.group("path"), m.group("option")


def title_counts(raw_titles: Iterable[str | None]) -> dict[str, int]:
    """How many of a file's headings have each title, case folded (what `heading_locator` takes)."""
    counts: dict[str, int] = {}
    for title in raw_titles:
        key = (title or "").strip().casefold()
        counts[key] = counts.get(key, 0) + 1
    return counts


def heading_locator(path: str, raw_title: str | None, line: int, titles: dict[str, int]) -> str:
    """The locator of a heading: by its title when no other heading of the file has it (`titles`:
    how many headings have each title, case folded), else by its line."""
    title = (raw_title or "").strip()
    if title and not _UNSAFE_TITLE.search(title) and titles.get(title.casefold(), 0) == 1:
        return f"{path}{SEPARATOR}*{title}"
    return f"{path}{SEPARATOR}{line}"


def find_unit(parsed: OrgFile, option: str | None, locator: str) -> Node | None:
    """The node or unit of `parsed` a locator's search option names (None: none).

    No option: the file. `*Title`: the first heading with that title (case
    folded, as `org-link-search` finds it). `N`: the innermost entry whose text
    holds line N.
    """
    entries = parsed.nodes + parsed.units
    if not option:
        return next((e for e in entries if e.level == 0), None)
    exact = next((e for e in parsed.units if e.id == locator), None)
    if exact is not None:
        return exact
    if option.isdigit():
        line = int(option)
        holding = [e for e in entries if e.line <= line <= max(e.end_line, e.line)]
        return max(holding, key=lambda e: (e.line, e.level), default=None)
    if option.startswith("*"):
        wanted = option[1:].strip().casefold()
        return next((e for e in sorted(entries, key=lambda e: e.line)
                     if e.level and e.title.strip().casefold() == wanted), None)
    return None
