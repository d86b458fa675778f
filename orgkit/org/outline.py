"""Where a line sits in its file's outline, found without parsing the file.

The sparse scan finds single lines with ripgrep; this walks up from such a
line through its ancestor headings (reading only their property drawers) to
name the node that encloses it and the outline path above it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import syntax as sx
from .parse import DEFAULT_TODO, _drawer_properties, _node_id, _property_drawer_at

_TODO_LINE = re.compile(r"^[ \t]*#\+(?:SEQ_|TYP_)?TODO:(.*)$", re.I | re.M)


@dataclass(slots=True)
class Place:
    """The node enclosing a line, and the heading (if any) on that line."""

    id: str | None
    level: int
    title: str
    olp: list[str] = field(default_factory=list)


def todo_keywords(text: str) -> tuple[str, ...]:
    """The TODO keywords a file declares, else Org's defaults."""
    words = [
        re.sub(r"\(.*\)$", "", w)
        for value in _TODO_LINE.findall(text)
        for w in value.split()
        if w != "|"
    ]
    return tuple(dict.fromkeys(w for w in words if w)) or DEFAULT_TODO


def heading_level(line: str) -> int:
    return len(line) - len(line.lstrip("*")) if sx.HEADING.match(line) else 0


def locate(lines: list[str], index: int, todo: tuple[str, ...] = DEFAULT_TODO) -> Place:
    """The place of line `index`: a heading there, or the file's title line."""
    pattern = sx.heading_pattern(todo)
    chain: list[tuple[int, str | None]] = []  # (line index, raw title), innermost first
    level = heading_level(lines[index]) or 10**9
    for i in range(index, -1, -1):
        lvl = heading_level(lines[i])
        if lvl and lvl < level or (i == index and lvl):
            m = pattern.match(lines[i])
            chain.append((i, m.group(4) if m else None))
            level = lvl
            if lvl == 1:
                break
    own_level = heading_level(lines[index])
    node_id = next((nid for i, title in chain if title is not None
                    for nid in [_heading_id(lines, i)] if nid), None)
    if node_id is None and not (lines and sx.HEADING.match(lines[0])):
        drawer = _property_drawer_at(lines, 0, len(lines), True)
        if drawer:
            node_id = _node_id(_drawer_properties(lines, *drawer))
    ancestors = chain[1:] if own_level else chain
    title = sx.link_display(chain[0][1] or "") if own_level else ""
    return Place(
        id=node_id, level=own_level, title=title,
        olp=[sx.olp_title(t) for _, t in reversed(ancestors)],
    )


def _heading_id(lines: list[str], index: int) -> str | None:
    drawer = _property_drawer_at(lines, index + 1, len(lines), False)
    return _node_id(_drawer_properties(lines, *drawer)) if drawer else None
