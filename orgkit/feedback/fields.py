"""The fields of a note that corrections are measured on: title, body, tags, links.

The same function reads them when a note is generated and when it is compared
later, so an untouched note never looks edited. Values are compared (and hashed
into event IDs) through `normalized`, so re-filling a paragraph or re-ordering
tags is not a correction.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..org import OrgFile, parse_org
from ..org import syntax as sx
from ..org.drawers import property_drawer_at

FIELDS = ("title", "body", "tags")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-+*]|\d+[.)])[ \t]+")  # links are compared one by one (link_change events)


@dataclass(frozen=True)
class NoteFields:
    """A node's title, body (its own text, without drawers or child nodes), tags and links."""

    title: str
    body: str
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # `link_key`s, sorted, each once

    def value(self, name: str) -> str | list[str]:
        return list(self.tags) if name == "tags" else getattr(self, name)

    def to_json(self) -> dict:
        return {"title": self.title, "body": self.body, "tags": list(self.tags), "links": list(self.links)}

    @classmethod
    def from_json(cls, data: dict) -> "NoteFields":
        return cls(title=data.get("title", ""), body=data.get("body", ""),
                   tags=tuple(data.get("tags", ())), links=tuple(data.get("links", ())))


def normalized(value: str | list[str] | tuple[str, ...] | None) -> str:
    """The comparable form of a field value, as hashed into event IDs.

    A string: Unicode NFC, then every run of whitespace (spaces, tabs, line
    breaks) made one space, then stripped. A list (tags, links): each item
    normalized, empty items dropped, duplicates removed, sorted, joined with one
    newline. None (a deleted field or note): the empty string.
    """
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "\n".join(sorted({normalized(item) for item in value} - {""}))
    return " ".join(unicodedata.normalize("NFC", value).split())


def prose(body: str) -> str:
    """A body as a reader sees it without its links: list items that hold only a link left
    out, other links shown as their descriptions. A body whose prose is unchanged was not
    edited: a link added or removed is its own (link change) event, not a body edit too."""
    kept = []
    for line in body.split("\n"):
        item = _LIST_ITEM.match(line)
        rest = line[item.end():].strip() if item else ""
        if rest:
            links = [m for m in sx.link_matches(rest, opaque=False) if m.group("bracket") is not None]
            if len(links) == 1 and links[0].span() == (0, len(rest)):
                continue
        kept.append(line)
    return sx.link_display("\n".join(kept))


def link_key(link_type: str, dest: str) -> str:
    """A link as compared: "id:UUID", a URL as written, else "TYPE:DEST" ("file:./x.org")."""
    return dest if dest.startswith(f"{link_type}:") else f"{link_type}:{dest}"


def note_fields(parsed: OrgFile, text: str, node_id: str) -> NoteFields | None:
    """The fields of node `node_id` in a parsed file (None when the file has no such node)."""
    node = next((n for n in parsed.nodes if n.id == node_id), None)
    if node is None:
        return None
    inner = sorted((n.start, n.end) for n in parsed.nodes if n is not node and node.start <= n.start < node.end
                   and (n.level > node.level))
    parts: list[str] = []
    at = node.start
    for start, end in inner:
        if start >= at:
            parts.append(text[at:start])
            at = end
    parts.append(text[at:node.end])
    links = sorted({link_key(link.type, link.dest) for link in parsed.links if link.source == node_id})
    body = (_without_preamble(parts[0], node.level) + "".join(parts[1:])).strip("\n")
    return NoteFields(title=node.title, body=body,
                      tags=tuple(node.tags), links=tuple(links))


def fields_of_text(text: str, rel: str, node_id: str) -> NoteFields | None:
    """`note_fields` of org text not yet parsed."""
    return note_fields(parse_org(text, rel), text, node_id)


def _without_preamble(own: str, level: int) -> str:
    """A node's own text without its heading, planning line and property drawer.

    For a file node, the top drawer and the keyword and comment lines before the
    first text (`#+title:`, `#+filetags:` ...) are left out too.
    """
    lines = own.split("\n")
    if level == 0:
        drawer = property_drawer_at(lines, 0, len(lines), True)
        i = drawer[1] + 1 if drawer else 0
        while i < len(lines) and (not lines[i].strip() or sx.KEYWORD.match(lines[i])
                                  or sx.COMMENT.match(lines[i])):
            i += 1
    else:
        drawer = property_drawer_at(lines, 1, len(lines), False)
        i = drawer[1] + 1 if drawer else (2 if len(lines) > 1 and sx.PLANNING.match(lines[1]) else 1)
    return "\n".join(lines[i:])
