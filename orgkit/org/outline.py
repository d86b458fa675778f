"""Where a line sits in its file's outline, found without parsing the file.

The sparse scan finds single lines with ripgrep; this walks up from such a
line through its ancestor headings (reading only their property drawers) to
name the node that encloses it and the outline path above it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from . import syntax as sx
from .drawers import drawer_properties, entry_node_id, property_drawer_at
from .parse import DEFAULT_TODO

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
    if "odo:" not in text and "ODO:" not in text:  # cheap test before the regexp
        return DEFAULT_TODO
    words = [
        re.sub(r"\(.*\)$", "", w)
        for value in _TODO_LINE.findall(text)
        for w in value.split()
        if w != "|"
    ]
    return tuple(dict.fromkeys(w for w in words if w)) or DEFAULT_TODO


class Outline:
    """A file's heading lines and levels, found once, for many lookups."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.pattern = sx.heading_pattern(todo_keywords(text))
        self.heading_lines: list[int] = []
        self.levels: list[int] = []
        for i, line in enumerate(self.lines):
            if line.startswith("*") and sx.HEADING.match(line):
                self.heading_lines.append(i)
                self.levels.append(len(line) - len(line.lstrip("*")))

    def place(self, index: int) -> Place:
        """The place of line `index`: a heading there, or e.g. the file's title line."""
        k = bisect.bisect_right(self.heading_lines, index) - 1
        own_level = self.levels[k] if k >= 0 and self.heading_lines[k] == index else 0
        chain: list[tuple[int, str | None]] = []  # (line, raw title), innermost first
        bound = 10**9
        while k >= 0:
            if self.levels[k] < bound:
                m = self.pattern.match(self.lines[self.heading_lines[k]])
                chain.append((self.heading_lines[k], m.group(4) if m else None))
                bound = self.levels[k]
                if bound == 1:
                    break
            k -= 1
        node_id = next((nid for i, title in chain if title is not None
                        for nid in [self._heading_id(i)] if nid), None)
        if node_id is None and not (self.heading_lines and self.heading_lines[0] == 0):
            drawer = property_drawer_at(self.lines, 0, len(self.lines), True)
            if drawer:
                node_id = entry_node_id(drawer_properties(self.lines, *drawer))
        ancestors = chain[1:] if own_level else chain
        return Place(
            id=node_id, level=own_level,
            title=sx.link_display(chain[0][1] or "") if own_level else "",
            olp=[sx.olp_title(t) for _, t in reversed(ancestors)],
        )

    def in_block(self, index: int) -> bool:
        """Whether line `index` is inside a block, where `#+title:` is not a keyword."""
        k = bisect.bisect_right(self.heading_lines, index) - 1
        i = self.heading_lines[k] + 1 if k >= 0 else 0
        while i < index:
            m = sx.BLOCK_BEGIN.match(self.lines[i])
            if m:
                closing = sx.block_end(m.group(1))
                end = next((j for j in range(i + 1, len(self.lines)) if closing.match(self.lines[j])
                            or sx.HEADING.match(self.lines[j])), None)
                if end is not None and not sx.HEADING.match(self.lines[end]):
                    if end > index:
                        return True
                    i = end
            i += 1
        return False

    def _heading_id(self, index: int) -> str | None:
        drawer = property_drawer_at(self.lines, index + 1, len(self.lines), False)
        return entry_node_id(drawer_properties(self.lines, *drawer)) if drawer else None
