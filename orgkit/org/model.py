"""The org-roam data model: nodes and links, as org-roam's database holds them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(slots=True)
class Node:
    """A file or heading with an ID (org-roam's definition of a node).

    `end` and `end_line` bound the node's text (a file node: the whole file; a
    heading node: its subtree) so a deep read can slice it without re-parsing.
    """

    id: str
    file: str
    level: int
    pos: int
    line: int
    title: str
    todo: str | None = None
    priority: str | None = None
    olp: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)
    start: int = 0
    end: int = 0
    end_line: int = 0

    def to_json(self) -> dict:
        """The public JSON shape of `orgkit nodes` (internal offsets left out)."""
        data = asdict(self)
        for key in ("start", "end", "end_line"):
            del data[key]
        return data


@dataclass(slots=True)
class Link:
    """A link found in a file; `source` is the ID of the nearest enclosing node."""

    source: str
    dest: str
    type: str
    pos: int
    line: int = 0
    file: str = ""

    def to_json(self) -> dict:
        return {"source": self.source, "dest": self.dest, "type": self.type, "pos": self.pos}


@dataclass(frozen=True, slots=True)
class ParseWarning:
    """Something in a file that was kept or dropped differently from what it says."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass(slots=True)
class OrgFile:
    """What one file contributes to the graph, plus what went wrong reading it."""

    path: str
    title: str
    nodes: list[Node] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    units: list[Node] = field(default_factory=list)  # what retrieval finds outside every node (units.py)
    warnings: list[ParseWarning] = field(default_factory=list)
