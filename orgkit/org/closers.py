"""Where blocks, LaTeX environments and drawers close: every closing line, found once."""

from __future__ import annotations

import bisect
import re

from . import syntax as sx


class Closers:
    """Where blocks, LaTeX environments and drawers close, found in one pass.

    Looking for the closing line from each opening line would read to the end
    of the section again for every unclosed opener; instead the lines that
    can close something are listed once, by name, and looked up by bisection.
    The pass runs at the first lookup: a file without blocks or drawers
    (outside property drawers) never pays for it.
    """

    _BLOCK = re.compile(r"[ \t]*#\+end_(\S+)[ \t]*$", re.I)
    _LATEX = re.compile(r"[ \t]*\\end\{([A-Za-z0-9*]+)\}[ \t]*$")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._found = False
        self.blocks: dict[str, list[int]] = {}
        self.latex: dict[str, list[int]] = {}
        self.drawers: list[int] = []

    def _find(self) -> None:
        self._found = True
        for j, line in enumerate(self.lines):
            stripped = line.lstrip(" \t")
            if stripped[:2] == "#+":
                m = self._BLOCK.match(line)
                if m:
                    self.blocks.setdefault(m.group(1).lower(), []).append(j)
            elif stripped[:5] == "\\end{":
                m = self._LATEX.match(line)
                if m:
                    self.latex.setdefault(m.group(1), []).append(j)
            elif stripped[:1] == ":" and stripped[4:5] == ":" and sx.DRAWER_END.match(line):  # ":END:"
                self.drawers.append(j)

    def block_end(self, name: str, start: int, end: int) -> int | None:
        if not self._found:
            self._find()
        return _first_in(self.blocks.get(name.lower(), []), start, end)

    def latex_end(self, name: str, start: int, end: int) -> int | None:
        if not self._found:
            self._find()
        return _first_in(self.latex.get(name, []), start, end)

    def drawer_end(self, start: int, end: int) -> int | None:
        if not self._found:
            self._find()
        return _first_in(self.drawers, start, end)


def _first_in(rows: list[int], start: int, end: int) -> int | None:
    """The first of the sorted `rows` in [start, end)."""
    k = bisect.bisect_left(rows, start)
    return rows[k] if k < len(rows) and rows[k] < end else None
