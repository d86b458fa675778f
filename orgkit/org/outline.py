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
from .closers import Closers
from .drawers import drawer_properties, entry_node_id, property_drawer_at
from .syntax import DEFAULT_TODO
from .units import heading_locator, title_counts

_TODO_LINE = re.compile(r"^[ \t]*#\+(?:SEQ_|TYP_)?TODO:", re.I | re.M)
_STARTUP_ODD_LINE = re.compile(r"^[ \t]*#\+STARTUP:.*\bodd", re.I | re.M)


@dataclass(slots=True)
class Place:
    """The node enclosing a line, and the heading (if any) on that line."""

    id: str | None
    level: int
    title: str
    olp: list[str] = field(default_factory=list)


def todo_keywords(text: str) -> tuple[str, ...]:
    """The TODO keywords a file declares, else Org's defaults.

    Few files declare any, so a cheap test comes first; for those that may,
    the parser reads them, by its rules of where a `#+TODO:` line counts (not
    inside a source or example block), so both always agree.
    """
    if "todo:" not in text.lower() or not _TODO_LINE.search(text):
        return DEFAULT_TODO
    from .parse import todo_keywords_of  # only for the few files that declare keywords

    return todo_keywords_of(text)


def odd_levels(text: str) -> bool:
    """Whether a file sets `#+STARTUP: odd` (headings then report `sx.reduced_level`).

    Few files say `odd` at all, so a cheap test comes first; the parser decides for the rest.
    """
    if "odd" not in text.lower() or not _STARTUP_ODD_LINE.search(text):
        return False
    from .parse import odd_levels_of  # only for the few files that may set it

    return odd_levels_of(text)


def _opens_opaque(line: str) -> bool:
    """Whether `line` may open a block or LaTeX environment (the cheap test before the patterns)."""
    lead = line.lstrip(" \t")[:1]
    return (lead == "#" and sx.BLOCK_BEGIN.match(line) is not None) or (
        lead == "\\" and sx.LATEX_BEGIN.match(line) is not None)


class Outline:
    """A file's heading lines, levels and parents, found once, for many lookups.

    Each lookup costs the depth of the line's outline (its answer's size),
    never the number of headings above it: parents are linked once, and each
    heading's title and ID are read at most once.
    """

    # Read lazily, at most once (`_caches` empties them).
    _pattern: sx.HeadingPattern | None
    _odd_levels: bool | None
    _titles: dict[int, str | None]
    _ids: dict[int, str | None]
    _olp_titles: dict[int, str]
    _file_id: list[str | None]
    _closers: Closers | None
    _opaque: dict[int, list[tuple[int, int]]]
    _counts: dict[str, int] | None  # how many headings of the whole file have each title (locators)

    def __init__(self, text: str, through: int | None = None) -> None:
        """The outline of `text`, or with `through`, only of its lines up to line `through`.

        A lookup of a line reads what lies above it (its ancestors, their
        drawers, the blocks opened around it); only a drawer or block that runs
        on past `through` needs more, and then the rest of that section is
        split. So a scan whose hits sit near the top of long files reads
        little more than their tops.
        """
        self._text = text
        self.lines = text.split("\n", -1 if through is None else through + 1)
        self._rest = self.lines.pop() if through is not None and len(self.lines) > through + 1 else None
        self.heading_lines: list[int] = []
        self.levels: list[int] = []
        self.parents: list[int] = []  # index (in heading_lines) of each heading's parent, or -1
        stack: list[int] = []
        lines = self.lines
        for i in [i for i, line in enumerate(lines) if line[:1] == "*"]:  # few lines start with a star
            line = lines[i]
            after = line.lstrip("*")
            if after[:1] == " ":  # sx.HEADING: stars, then a space
                level = len(line) - len(after)
                while stack and self.levels[stack[-1]] >= level:
                    stack.pop()
                self.parents.append(stack[-1] if stack else -1)
                stack.append(len(self.heading_lines))
                self.heading_lines.append(i)
                self.levels.append(level)
        self._caches()

    def has_children(self, k: int) -> bool:
        """Whether the `k`th heading has a heading under it (the next one is its child)."""
        return k + 1 < len(self.parents) and self.parents[k + 1] == k

    @property
    def pattern(self) -> sx.HeadingPattern:
        """How this file's headings read; its TODO keywords are looked for when a title is first read."""
        if self._pattern is None:
            self._pattern = sx.heading_pattern(todo_keywords(self._text))
        return self._pattern

    @classmethod
    def of_headings(cls, text: str, lines: list[str], heading_lines: list[int], levels: list[int],
                    parents: list[int], titles: list[str | None], todo: tuple[str, ...]) -> "Outline":
        """The outline of `text` from its headings and titles as the parser read them with the
        file's TODO keywords `todo`, without reading the text again."""
        self = cls.__new__(cls)
        self._text, self.lines, self._rest = text, lines, None
        self.heading_lines, self.levels, self.parents = heading_lines, levels, parents
        self._caches()
        self._pattern = sx.heading_pattern(todo)
        self._titles = dict(enumerate(titles))
        return self

    def _section_rest(self) -> None:
        """Split the rest of the last section (up to the next heading): a drawer or block there runs on."""
        if self._rest is None:
            return
        rest, self._rest = self._rest, None
        if sx.HEADING.match(rest):
            return
        end = rest.find("\n*")
        while end != -1 and not sx.HEADING.match(rest, end + 1):
            end = rest.find("\n*", end + 1)
        self.lines += (rest if end == -1 else rest[:end]).split("\n")
        self._closers = None  # the closing lines found so far stopped at `through`

    def _caches(self) -> None:
        self._pattern = None
        self._odd_levels = None
        self._titles = {}
        self._ids = {}
        self._olp_titles = {}
        self._file_id = []
        self._closers = None
        self._opaque = {}
        self._counts = None

    def place(self, index: int) -> Place:
        """The place of line `index`: a heading there, or e.g. the file's title line."""
        k = bisect.bisect_right(self.heading_lines, index) - 1
        own_level = self.levels[k] if k >= 0 and self.heading_lines[k] == index else 0
        chain: list[int] = []  # headings, innermost first
        while k >= 0:
            chain.append(k)
            k = self.parents[k]
        node_id = None
        for h in chain:  # the innermost heading that is a node
            if self._title(h) is not None and (node_id := self._heading_id(h)):
                break
        if not node_id:  # else the file's node, unless the file starts with a heading
            node_id = None if self.heading_lines and self.heading_lines[0] == 0 else self._top_id()
        ancestors = chain[1:] if own_level else chain
        if own_level and self._odd_levels is None:
            self._odd_levels = odd_levels(self._text)
        return Place(
            id=node_id, level=sx.reduced_level(own_level, bool(self._odd_levels)),
            title=sx.link_display(self._title(chain[0]) or "") if own_level else "",
            olp=[self._olp_title(h) for h in reversed(ancestors)],
        )

    def in_opaque(self, index: int) -> bool:
        """Whether line `index` lies inside a block or LaTeX environment whose contents Org does
        not parse (a source or example block, say), where a `#+title:` line is not a keyword.

        The parser's rule: quote and other greater blocks, and drawers, are parsed inside.
        """
        k = bisect.bisect_right(self.heading_lines, index) - 1
        start = self.heading_lines[k] + 1 if k >= 0 else 0
        if not any(_opens_opaque(line) for line in self.lines[start:index]):
            return False  # nothing opens above it in its section (a file's title lines, mostly)
        spans = self._section_opaque(k)
        at = bisect.bisect_right(spans, (index, len(self.lines))) - 1
        return at >= 0 and spans[at][0] < index < spans[at][1]

    def _section_opaque(self, k: int) -> list[tuple[int, int]]:
        """(begin, end) lines of the section's closed blocks and environments that Org does not parse."""
        if k in self._opaque:
            return self._opaque[k]
        if k == len(self.heading_lines) - 1:
            self._section_rest()
        if self._closers is None:
            self._closers = Closers(self.lines)
        closers = self._closers
        start = self.heading_lines[k] + 1 if k >= 0 else 0
        end = self.heading_lines[k + 1] if k + 1 < len(self.heading_lines) else len(self.lines)
        spans: list[tuple[int, int]] = []
        i = start
        while i < end:
            close = self._opaque_end(closers, self.lines[i], i, end)
            if close is not None:
                spans.append((i, close))
                i = close
            i += 1
        self._opaque[k] = spans
        return spans

    @staticmethod
    def _opaque_end(closers: Closers, line: str, i: int, end: int) -> int | None:
        """The closing line of the unparsed block or environment that line `i` opens, if any."""
        if not _opens_opaque(line):
            return None
        block = sx.BLOCK_BEGIN.match(line)
        if block:
            if block.group(1).lower() not in sx.OPAQUE_BLOCKS:
                return None  # a greater block: its contents are read
            return closers.block_end(block.group(1), i + 1, end)
        latex = sx.LATEX_BEGIN.match(line)
        return closers.latex_end(latex.group(1), i + 1, end) if latex else None

    def locator(self, path: str, k: int) -> str:
        """The locator of heading `k` of the file at `path` (units.py), the same the index gives it:
        its title when no other heading of the whole file has it."""
        if self._counts is None:
            whole = self if len(self.lines) == self._text.count("\n") + 1 else Outline(self._text)
            self._counts = title_counts(whole.title(j) for j in range(len(whole.heading_lines)))
        return heading_locator(path, self._title(k), self.heading_lines[k] + 1, self._counts)

    def title(self, k: int) -> str | None:
        """The title of heading `k` (None: a heading line with nothing after its stars)."""
        return self._title(k)

    def todo(self, k: int) -> str | None:
        """The TODO keyword of heading `k` (None: it has none)."""
        m = self.pattern.match(self.lines[self.heading_lines[k]])
        return m.group(2) if m else None

    def tags(self, k: int) -> list[str]:
        """The tags of heading `k` with those it inherits from its ancestors, outermost first (the
        file's own `#+filetags` are the parser's: parse.py)."""
        out: list[str] = []
        while k >= 0:
            m = self.pattern.match(self.lines[self.heading_lines[k]])
            out[:0] = [t for t in (m.group(5) or "").split(":") if t] if m else []
            k = self.parents[k]
        return out

    def _title(self, k: int) -> str | None:
        if k not in self._titles:
            m = self.pattern.match(self.lines[self.heading_lines[k]])
            self._titles[k] = m.group(4) if m else None
        return self._titles[k]

    def _olp_title(self, k: int) -> str:
        if k not in self._olp_titles:
            self._olp_titles[k] = sx.olp_title(self._title(k))
        return self._olp_titles[k]

    def _heading_id(self, k: int) -> str | None:
        if k not in self._ids:
            if k == len(self.heading_lines) - 1:
                self._section_rest()
            drawer = property_drawer_at(self.lines, self.heading_lines[k] + 1, len(self.lines), False)
            self._ids[k] = entry_node_id(drawer_properties(self.lines, *drawer)) if drawer else None
        return self._ids[k]

    def _top_id(self) -> str | None:
        if not self._file_id:
            last = self.lines[-1]
            if not self.heading_lines and (sx.COMMENT.match(last) or last.lstrip(" \t")[:1] == ":"):
                self._section_rest()  # the top drawer may run on: its comments and drawer lines reach the end
            drawer = property_drawer_at(self.lines, 0, len(self.lines), True)
            self._file_id.append(entry_node_id(drawer_properties(self.lines, *drawer)) if drawer else None)
        return self._file_id[0]
