"""Giving headings an ID the way Emacs does (`org-id-get-create`).

Emacs inserts a property drawer right after the heading (and its planning
line), or adds the ID line at the end of an existing drawer, with the value
aligned by `org-property-format` ("%-10s %s"). Only those bytes change: the
text is handled as lines with their own line endings, BOM included.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from . import syntax as sx
from .drawers import drawer_properties, entry_property, property_drawer_at
from .parse import DEFAULT_TODO


def new_id() -> str:
    """A fresh ID, as `org-id-method` 'uuid does (lowercase UUID4)."""
    return str(uuid.uuid4())


def id_line(node_id: str) -> str:
    return f"{':ID:':<10} {node_id}"


@dataclass(slots=True)
class Added:
    """An ID given to the heading (or file, at line 1) at `line` (1-based)."""

    id: str
    line: int
    title: str


def add_ids(text: str, targets: list[int] | None, *, top: bool = False) -> tuple[str, list[Added]]:
    """Give an ID to each target line's entry (None: every heading without one); with `top`, to the
    file itself too (its top property drawer, before any heading).

    A target line is taken to its heading, as Emacs does at point; a line
    before the first heading means the file itself.
    """
    nl = "\r\n" if "\r\n" in text and text.count("\r\n") == text.count("\n") else "\n"
    lines = text.split("\n")
    plain = [line.rstrip("\r") for line in lines]
    heads = [i for i, line in enumerate(plain) if sx.HEADING.match(line)]
    if targets is None:
        entries = list(heads)
    else:
        entries = sorted({_entry_of(heads, t - 1) for t in targets})
    if top and -1 not in entries:
        entries.insert(0, -1)
    added: list[tuple[Added, int]] = []
    for entry in sorted(entries, reverse=True):  # bottom-up keeps earlier indices valid
        before = len(lines)
        result = _give_id(lines, plain, heads, entry, nl)
        if result:
            added.append((result, len(lines) - before))
    shift = 0
    for result, grown in reversed(added):  # report lines as they are in the new text
        result.line += shift
        shift += grown
    return "\n".join(lines), [result for result, _ in reversed(added)]


def _entry_of(heads: list[int], index: int) -> int:
    """The heading at or above line `index`, or -1 for the file-level entry."""
    above = [h for h in heads if h <= index]
    return above[-1] if above else -1


def _give_id(lines: list[str], plain: list[str], heads: list[int], entry: int, nl: str) -> Added | None:
    top = entry < 0
    start = 0 if top else entry + 1
    end = next((h for h in heads if h > entry), len(plain))
    drawer = property_drawer_at(plain, start, end, top)
    m = sx.heading_pattern(DEFAULT_TODO).match(plain[entry]) if not top else None
    title = sx.link_display(m.group(4) or "") if m else ""
    line_no = 1 if top else entry + 1
    node_id = new_id()
    if drawer:
        props = drawer_properties(plain, *drawer)
        if (entry_property(props, "ID") or "").strip():
            return None
        cr = "\r" if nl == "\r\n" else ""
        lines.insert(drawer[1], id_line(node_id) + cr)
        _shift(plain, heads, drawer[1])
        return Added(node_id, line_no, title)
    at = start
    if top:
        while at < len(plain) and sx.COMMENT.match(plain[at]):
            at += 1
    elif at < end and sx.PLANNING.match(plain[at]):
        at += 1
    block = [":PROPERTIES:", id_line(node_id), ":END:"]
    cr = "\r" if nl == "\r\n" else ""
    if at >= len(lines):  # the entry ends the file without a final newline
        lines[-1] += cr
        lines.extend([*(line + cr for line in block), ""])
    else:
        lines[at:at] = [line + cr for line in block]
    return Added(node_id, line_no, title)


def _shift(plain: list[str], heads: list[int], at: int) -> None:
    """Keep `plain` in step with `lines` after inserting one line at `at`."""
    plain.insert(at, "")
    for k, h in enumerate(heads):
        if h >= at:
            heads[k] = h + 1
