"""A source document as rankable units: sentences, list items, table rows, headings.

Each unit keeps its exact character span in the source text (0-based, end
exclusive, in characters of the decoded text), so any unit can be quoted with
`text[start:end]` and is grounded by construction. Units also carry the
section path they sit under (the headings above them), their list depth and
whether they lead their paragraph or item: the offline extractor ranks on
all of these. Markdown, org and plain text are read by the same line walker;
fenced code, org blocks, drawers, front matter and keyword lines are skipped
(org's own lines recognised by the parser's patterns, `orgkit/org/syntax.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..org import syntax

_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_ITEM = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,3}[.)]|[A-Za-z][.)])[ \t]+(?=\S)")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_RULE = re.compile(r"^[ \t]*(?:-{3,}|\*{3,}|_{3,}|={3,})[ \t]*$")
_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}")
_QUOTE_MARK = re.compile(r"^[ \t]*>[ \t]?")
# A sentence ends at . ! ? (and any closing marks) followed by space and a likely start.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]*_]*(?=\s+[\"'“‘(\[*_`]*[A-Z0-9])")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Dr|Fig|No|approx)|\b[A-Z])\.$")
_MARKUP_EDGE = " \t\n"


@dataclass
class Unit:
    """One quotable span of the source and where it sits."""

    start: int
    end: int
    text: str
    kind: str  # "sentence", "item", "row", "heading"
    section: tuple[str, ...]  # heading titles above the unit, outermost first
    depth: int = 0  # list nesting (0: top-level item or not in a list)
    lead: bool = False  # first sentence of its paragraph or item
    block: int = 0  # index of the paragraph, item, row or heading it came from
    order: int = 0  # position in the document
    extra: dict = field(default_factory=dict)


@dataclass
class Document:
    text: str
    title: str
    units: list[Unit]
    headings: list[Unit]


def segment(text: str, fmt: str = "markdown") -> Document:
    """Split `text` into units; `fmt` is "markdown", "org" or "text"."""
    return _Walker(text, fmt).run()


class _Walker:
    def __init__(self, text: str, fmt: str) -> None:
        self.text = text
        self.fmt = fmt
        self.lines = text.split("\n")
        self.offsets = []
        pos = 0
        for line in self.lines:
            self.offsets.append(pos)
            pos += len(line) + 1
        self.stack: list[tuple[int, str]] = []  # (level, title)
        self.units: list[Unit] = []
        self.headings: list[Unit] = []
        self.blocks = 0
        self.title = ""

    def section(self) -> tuple[str, ...]:
        return tuple(title for _, title in self.stack)

    def run(self) -> Document:
        lines, i, n = self.lines, 0, len(self.lines)
        i = self._skip_front_matter()
        while i < n:
            line = lines[i]
            if not line.strip() or _RULE.match(line):
                i += 1
                continue
            heading = self._heading(line)
            if heading:
                self._add_heading(i, *heading)
                i += 1
                continue
            skipped = self._skip_opaque(i)
            if skipped is not None:
                i = skipped
                continue
            if line.lstrip().startswith("|"):
                i = self._table(i)
                continue
            item = _ITEM.match(line)
            if item:
                i = self._item(i, item)
                continue
            i = self._paragraph(i)
        return Document(self.text, self.title, self.units, self.headings)

    def _skip_front_matter(self) -> int:
        lines = self.lines
        if lines and lines[0].strip() == "---":
            for j in range(1, min(len(lines), 200)):
                if lines[j].strip() in ("---", "..."):
                    return j + 1
        return 0

    def _heading(self, line: str) -> tuple[int, str, int] | None:
        """(level, title, column where the title starts) of a heading line."""
        if self.fmt == "org":
            m = syntax.heading_pattern(syntax.DEFAULT_TODO).match(line) if syntax.HEADING.match(line) else None
            title = 4
        else:
            m, title = _MD_HEADING.match(line), 2
        if not m or not (m.group(title) or "").strip():
            return None
        return len(m.group(1)), m.group(title).strip(), m.start(title)

    def _add_heading(self, i: int, level: int, title: str, column: int) -> None:
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        start = self.offsets[i] + column
        unit = Unit(start, start + len(title), title, "heading", self.section(), block=self._block(),
                    lead=True, order=len(self.units), extra={"level": level})
        if not self.title and not self.headings and level == 1:
            self.title = title
            unit.extra["title"] = True
        self.headings.append(unit)
        self.units.append(unit)
        self.stack.append((level, title))

    def _block(self) -> int:
        self.blocks += 1
        return self.blocks

    def _skip_opaque(self, i: int) -> int | None:
        """The line after a code fence, org block, drawer or keyword line starting at `i`."""
        line, lines = self.lines[i], self.lines
        fence = _FENCE.match(line)
        if fence:
            for j in range(i + 1, len(lines)):
                if lines[j].lstrip().startswith(fence.group(1)):
                    return j + 1
            return len(lines)
        if self.fmt == "org":
            block = syntax.BLOCK_BEGIN.match(line)
            if block and block.group(1).lower() not in ("quote", "verse", "center"):
                end = syntax.block_end(block.group(1))
                return next((j + 1 for j in range(i + 1, len(lines)) if end.match(lines[j])), i + 1)
            keyword = syntax.KEYWORD.match(line)
            if keyword or block or syntax.CONTAINER_END.match(line):
                if keyword and keyword.group(1).lower() == "title" and not self.title:
                    self.title = keyword.group(2)
                return i + 1
            if syntax.DRAWER_BEGIN.match(line):
                return next((j + 1 for j in range(i + 1, len(lines)) if syntax.DRAWER_END.match(lines[j])), i + 1)
            if syntax.COMMENT.match(line):
                return i + 1
        return None

    def _ends_block(self, line: str) -> bool:
        return (not line.strip() or bool(self._heading(line)) or bool(_ITEM.match(line))
                or line.lstrip().startswith("|") or bool(_FENCE.match(line)) or bool(_RULE.match(line))
                or (self.fmt == "org" and bool(syntax.KEYWORD.match(line) or syntax.BLOCK_BEGIN.match(line))))

    def _paragraph(self, i: int) -> int:
        j = i + 1
        while j < len(self.lines) and not self._ends_block(self.lines[j]):
            j += 1
        start = self.offsets[i]
        end = self.offsets[j - 1] + len(self.lines[j - 1])
        depth = self._indent_depth(self.lines[i])
        self._sentences(start, end, "sentence", depth)
        return j

    def _indent_depth(self, line: str) -> int:
        indent = len(line) - len(line.lstrip(" \t"))
        return indent // 2 if indent else 0

    def _item(self, i: int, m: re.Match[str]) -> int:
        indent = len(m.group(1).expandtabs(4))
        j = i + 1
        while j < len(self.lines) and not self._ends_block(self.lines[j]):
            j += 1
        start = self.offsets[i] + m.end()
        end = self.offsets[j - 1] + len(self.lines[j - 1])
        depth = indent // 2 if indent < 8 else 4
        self._sentences(start, end, "item", depth)
        return j

    def _table(self, i: int) -> int:
        j = i
        rows = []
        while j < len(self.lines) and self.lines[j].lstrip().startswith("|"):
            rows.append(j)
            j += 1
        header = len(rows) > 1 and _TABLE_SEP.match(self.lines[rows[1]].replace("|", " |", 1))
        for k, row in enumerate(rows):
            line = self.lines[row]
            if _TABLE_SEP.match(line.strip().lstrip("|").strip() and line.strip().lstrip("|")) or set(
                    line.strip()) <= set("|-: +"):
                continue
            if header and k == 0:
                continue
            body = line.strip().strip("|")
            left = line.index(body) if body else 0
            self._add(self.offsets[row] + left, self.offsets[row] + left + len(body), "row", 0, True,
                      self._block())
        return j

    def _add(self, start: int, end: int, kind: str, depth: int, lead: bool, block: int) -> None:
        raw = self.text[start:end]
        quote = _QUOTE_MARK.match(raw)
        if quote:
            start += quote.end()
            raw = self.text[start:end]
        stripped_left = len(raw) - len(raw.lstrip(_MARKUP_EDGE))
        start += stripped_left
        end = start + len(raw.strip(_MARKUP_EDGE))
        if end <= start:
            return
        self.units.append(Unit(start, end, self.text[start:end], kind, self.section(), depth=depth,
                               lead=lead, block=block, order=len(self.units)))

    def _sentences(self, start: int, end: int, kind: str, depth: int) -> None:
        """Add the sentences of the block text[start:end]; an item's first sentence keeps kind "item"."""
        block = self._block()
        body = self.text[start:end]
        cuts = [0]
        for m in _SENTENCE_END.finditer(body):
            if _ABBREV.search(body[max(0, m.start() - 6):m.start() + 1]):
                continue
            cuts.append(m.end())
        cuts.append(len(body))
        pieces = [(cuts[k], cuts[k + 1]) for k in range(len(cuts) - 1) if body[cuts[k]:cuts[k + 1]].strip()]
        for k, (a, b) in enumerate(pieces):
            self._add(start + a, start + b, kind if k == 0 else "sentence", depth, k == 0, block)
