"""Cutting an org file into passages to embed and rank, along its outline.

Every heading's section (its text up to the next heading) is cut on its own,
so a passage never straddles two topics; it belongs to the nearest enclosing
node (or, outside every node, unit: org/units.py), and its embedded text starts with where it sits ("Title > Parent >
Child: ..."), because a section's words often only make sense under their
heading. Property drawers, other drawers, `#+keyword:` lines, block fences and
planning lines say nothing about the topic and are left out. Long sections
are cut on paragraph boundaries, carrying a short paragraph over as overlap.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from itertools import accumulate

from ..org import Node, OrgFile
from ..org import syntax as sx
from ..org.acyclic import collector_paused
from ..org.outline import Outline

MAX_CHARS = 1000  # about 250 tokens: the window of small sentence-embedding models
OVERLAP_CHARS = 200

_FENCE = re.compile(r"^[ \t]*#\+(?:begin|end)_\S*", re.I)


@dataclass(eq=False, slots=True)
class Section:
    """A heading in the outline; the index stores each once, linked to its parent.

    `title` is the heading as outline paths show it (`olp`); `label` is how a
    passage's path names it (the title, or the raw line of an untitled heading).
    """

    line: int  # 0-based line of the heading
    title: str
    label: str
    parent: "Section | None"


@dataclass(slots=True)
class Chunk:
    """A passage: the node it belongs to, its first line, and its text in two forms."""

    node: Node
    line: int
    heading: str  # the outline path, ranked as a title
    body: str  # the passage itself
    section: Section | None = None  # the heading it sits under (None: the preamble)

    @property
    def text(self) -> str:
        """What is embedded: the outline path, then the passage."""
        return f"{self.heading}: {self.body}" if self.body else self.heading

    @property
    def hash(self) -> str:
        return hashlib.sha1(self.text.encode("utf-8")).hexdigest()


@collector_paused()
def chunk_file(parsed: OrgFile, text: str, outline: Outline | None = None) -> list[Chunk]:
    """The passages of one file, in file order; text outside every node is skipped.

    `outline` is the file's outline when the caller has it (`parse_outlined`).
    """
    entries = parsed.nodes + parsed.units
    if not entries:
        return []
    if outline is None:
        outline = Outline(text)
    lines = outline.lines
    starts = _line_starts(lines)
    enclosing = _Enclosing(entries)
    chunks: list[Chunk] = []
    sections: list[Section] = []  # by heading, parents first
    for first, end, level in _sections(outline):
        body_from = first
        section = None
        leaf = False
        if level:
            k = len(sections)
            raw = outline.title(k)
            title = sx.olp_title(raw)
            label = title if raw else lines[first].lstrip("* ")
            parent = outline.parents[k]
            section = Section(first, title, label, sections[parent] if parent >= 0 else None)
            sections.append(section)
            body_from = first + 1
            leaf = not outline.has_children(k)
        node = enclosing.at(starts[first])
        if node is None:
            continue
        heading = outline_path(parsed.title, section)
        packed = _pack(_paragraphs(lines, body_from, end))
        # a heading with no text of its own is a passage when it starts its node, or when nothing under it
        # carries its words in its path: a leaf, an agenda's "TODO Call the plumber", says all on its line
        if not packed and (node.start == starts[first] or not level or leaf):
            chunks.append(Chunk(node, first + 1, heading, "", section))
        for i, (line, body) in enumerate(packed):
            chunks.append(Chunk(node, first + 1 if level and i == 0 else line, heading, body, section))
    return chunks


def outline_path(file_title: str, section: Section | None) -> str:
    """A passage's heading: "File title > Parent > Child"."""
    labels: list[str] = []
    while section is not None:
        labels.append(section.label)
        section = section.parent
    return " > ".join([file_title, *reversed(labels)])


def _sections(outline: Outline) -> list[tuple[int, int, int]]:
    """(first line, end line, heading level) of the preamble and of every heading."""
    heads = outline.heading_lines
    levels = dict(zip(heads, outline.levels))
    bounds = ([0] if heads[:1] != [0] else []) + heads + [len(outline.lines)]
    return [(a, b, levels.get(a, 0)) for a, b in zip(bounds, bounds[1:])]


def _line_starts(lines: list[str]) -> list[int]:
    return list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))


class _Enclosing:
    """The innermost node around each of a rising series of offsets, in one pass.

    Nodes nest (a file holds its headings, a subtree its children), so the
    nodes open at an offset form a stack; walking offsets in file order pushes
    each node once and pops it once.
    """

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = sorted(nodes, key=lambda n: (n.start, -n.end))
        self.next = 0
        self.open: list[Node] = []

    def at(self, offset: int) -> Node | None:
        nodes, opened = self.nodes, self.open
        while self.next < len(nodes) and nodes[self.next].start <= offset:
            opened.append(nodes[self.next])
            self.next += 1
        while opened and offset >= opened[-1].end and offset > opened[-1].start:  # past its end
            opened.pop()
        return opened[-1] if opened else None


def _paragraphs(lines: list[str], first: int, end: int) -> list[tuple[int, str]]:
    """(1-based line, text) of each paragraph of a section, without org's scaffolding."""
    out: list[tuple[int, str]] = []
    current: list[str] = []
    start = first
    in_drawer = False
    for i in range(first, end):
        line = lines[i]
        if in_drawer:
            in_drawer = not sx.is_drawer_end(line)
            continue
        lead = line.lstrip(" \t")[:1]  # each pattern below needs its own first character
        if lead == ":" and sx.DRAWER_BEGIN.match(line) and not sx.is_drawer_end(line):
            in_drawer = True
            continue
        skip = ((lead == "#" and (sx.KEYWORD.match(line) or _FENCE.match(line)))
                or (lead in sx.PLANNING_LEADS and sx.PLANNING.match(line)))
        if skip or not line.strip():
            if current:
                out.append((start + 1, sx.link_display("\n".join(current))))
                current = []
            continue
        if not current:
            start = i
        current.append(line.rstrip())
    if current:
        out.append((start + 1, sx.link_display("\n".join(current))))  # a link may span lines
    return out


def _pack(paragraphs: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Join paragraphs into passages of at most MAX_CHARS, overlapping a little."""
    if len(paragraphs) < 2 and (not paragraphs or len(paragraphs[0][1]) <= MAX_CHARS):
        return paragraphs  # nothing to join or cut: most sections
    pieces = [p for line, text in paragraphs for p in _split_long(line, text)]
    out: list[tuple[int, str]] = []
    current: list[tuple[int, str]] = []
    size = 0
    for piece in pieces:
        if current and size + len(piece[1]) > MAX_CHARS:
            out.append((current[0][0], "\n\n".join(t for _, t in current)))
            tail = current[-1]
            carried = len(current) > 1 and len(tail[1]) <= OVERLAP_CHARS
            current = [tail] if carried else []
            size = len(tail[1]) if carried else 0
        current.append(piece)
        size += len(piece[1]) + 2
    if current:
        out.append((current[0][0], "\n\n".join(t for _, t in current)))
    return out


def _split_long(line: int, text: str) -> list[tuple[int, str]]:
    """A paragraph longer than MAX_CHARS, cut at line ends, else at spaces."""
    if len(text) <= MAX_CHARS:
        return [(line, text)]
    out: list[tuple[int, str]] = []
    current = ""
    first = line
    for offset, row in enumerate(text.split("\n")):
        while len(row) > MAX_CHARS:
            cut = row.rfind(" ", 0, MAX_CHARS)
            cut = cut if cut > MAX_CHARS // 2 else MAX_CHARS
            if current:
                out.append((first, current))
                current = ""
            out.append((line + offset, row[:cut]))
            row = row[cut:].lstrip()
        if current and len(current) + len(row) + 1 > MAX_CHARS:
            out.append((first, current))
            current = ""
        if not current:
            first = line + offset
        current = f"{current}\n{row}" if current else row
    if current:
        out.append((first, current))
    return out
