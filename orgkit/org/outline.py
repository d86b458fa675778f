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


_HEADING_START = re.compile(r"^\*+ ", re.M)


class Outline:
    """A file's heading lines, levels and parents, found once, for many lookups.

    Headings are found with one regexp pass over the text, and each
    heading's ID and title are read at most once, however many lines of the
    file are looked up: a broad scan resolves thousands of hits in a few
    hundred files.
    """

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.pattern = sx.heading_pattern(todo_keywords(text))
        self.heading_lines: list[int] = []
        self.levels: list[int] = []
        self.parents: list[int] = []  # index (into heading_lines) of each heading's parent, or -1
        stack: list[int] = []
        line, offset = 0, 0
        for m in _HEADING_START.finditer(text):
            line += text.count("\n", offset, m.start())
            offset = m.start()
            level = m.end() - m.start() - 1
            while stack and self.levels[stack[-1]] >= level:
                stack.pop()
            self.parents.append(stack[-1] if stack else -1)
            stack.append(len(self.heading_lines))
            self.heading_lines.append(line)
            self.levels.append(level)
        self._titles: dict[int, str | None] = {}
        self._ids: dict[int, str | None] = {}
        self._file_id: list[str | None] = []

    def place(self, index: int) -> Place:
        """The place of line `index`: a heading there, or e.g. the file's title line."""
        k = bisect.bisect_right(self.heading_lines, index) - 1
        own_level = self.levels[k] if k >= 0 and self.heading_lines[k] == index else 0
        chain: list[int] = []  # headings, innermost first
        while k >= 0:
            chain.append(k)
            k = self.parents[k]
        node_id = next((nid for k in chain if self._title(k) is not None
                        for nid in [self._heading_id(k)] if nid), None)
        if node_id is None:
            node_id = self._top_id()
        ancestors = chain[1:] if own_level else chain
        return Place(
            id=node_id, level=own_level,
            title=sx.link_display(self._title(chain[0]) or "") if own_level else "",
            olp=[sx.olp_title(self._title(k)) for k in reversed(ancestors)],
        )

    def _title(self, k: int) -> str | None:
        """The raw title of heading k (None for a heading without one)."""
        if k not in self._titles:
            m = self.pattern.match(self.lines[self.heading_lines[k]])
            self._titles[k] = m.group(4) if m else None
        return self._titles[k]

    def _top_id(self) -> str | None:
        """The ID in the file's top property drawer (none when a heading opens the file)."""
        if not self._file_id:
            drawer = None
            if not (self.heading_lines and self.heading_lines[0] == 0):
                drawer = property_drawer_at(self.lines, 0, len(self.lines), True)
            self._file_id.append(entry_node_id(drawer_properties(self.lines, *drawer)) if drawer else None)
        return self._file_id[0]

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

    def _heading_id(self, k: int) -> str | None:
        if k not in self._ids:
            drawer = property_drawer_at(self.lines, self.heading_lines[k] + 1, len(self.lines), False)
            self._ids[k] = entry_node_id(drawer_properties(self.lines, *drawer)) if drawer else None
        return self._ids[k]
