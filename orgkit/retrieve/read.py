"""The deep read: the org text of chosen nodes, then the notes they link to.

Nodes are found by ID with one ripgrep pass per depth level (no index needed);
only the files that hold them are parsed. Linked notes are read breadth-first,
each once, nearest first, while they fit in the token budget.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..confine import confined
from ..errors import OrgkitError
from ..locator import Locator, rg_locator
from ..org import Node
from ..org.units import find_unit, is_locator, split_locator
from ..texts import TextCache, estimate_tokens
from ..vault import follow_roots, in_walked_folders, is_org_file, require_dir


@dataclass(slots=True)
class ReadDoc:
    id: str
    title: str
    file: str
    line: int
    level: int
    content: str
    links: list[str]
    depth: int
    via: str | None
    duplicates: list[dict] = field(default_factory=list)  # other nodes holding the ID: {file, line}
    unit: bool = False  # a file or heading without an ID: `id` is its locator (org/units.py)
    olp: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.content)

    @property
    def last_line(self) -> int:
        """The file's line the note's text ends on (its last newline ends that line; it starts none)."""
        return self.line + self.content.rstrip("\n").count("\n")

    def to_json(self) -> dict:
        out = {"id": self.id, "title": self.title, "file": self.file, "line": self.line,
               "level": self.level, "content": self.content, "links": self.links,
               "depth": self.depth, "via": self.via, "duplicates": self.duplicates}
        return out | {"id": None, "locator": self.id, "olp": self.olp} if self.unit else out


@dataclass
class ReadResult:
    docs: list[ReadDoc] = field(default_factory=list)
    omitted: list[dict] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(d.tokens for d in self.docs)


@dataclass
class _Reader:
    root: Path
    locate: Locator
    cache: TextCache

    def nodes(self, node_id: str, files: list[str]) -> list[tuple[Node, str]]:
        """The node in each file that really holds it (not merely an `:ID:` line in a block),
        in the locator's order: the first is the one the ID resolves to."""
        found: list[tuple[Node, str]] = []
        for rel in files:
            text, parsed = self.cache.text(rel), self.cache.parsed(rel)
            if text is not None and parsed is not None:
                found.extend((n, text) for n in parsed.nodes if n.id == node_id)
        return found

    def unit(self, locator: str) -> tuple[Node, str, bool] | None:
        """The entry a locator names (a unit, or a node when it names one), its file's text, and
        whether it is a unit (None: no such file or heading)."""
        path, option = split_locator(locator)
        rel = locator_file(self.root, path)
        text, parsed = self.cache.text(rel), self.cache.parsed(rel)
        if text is None or parsed is None:
            return None
        found = find_unit(parsed, option, f"{rel}::{option}" if option else rel)
        return (found, text, any(found is u for u in parsed.units)) if found is not None else None

    def links_in(self, node: Node) -> list[str]:
        """Distinct id-link targets inside the node's text, in order."""
        parsed = self.cache.parsed(node.file)
        links = parsed.links if parsed is not None else []
        targets = (link.dest for link in links if link.type == "id" and node.start < link.pos <= node.end)
        return list(dict.fromkeys(t for t in targets if t != node.id))


def locator_file(root: Path, path: str) -> str:
    """A locator's file, relative to the notes: refused (one line) when it could lead outside them.

    A locator comes from agents too: an absolute path, `..` or a symlink out
    is refused for every caller, as the notes boundary (confine.py) refuses it.
    """
    if path.startswith(("/", "~", "\\")) or ".." in path.split("/"):
        raise OrgkitError(f"locator {path!r}: give a path inside the notes dir, relative to it")
    rel = posixpath.normpath(path)
    confined(root / rel, [root, *(Path(r) for r in follow_roots())], "locator")
    if not is_org_file(rel) or not in_walked_folders(rel):  # the state dir's files are no notes
        raise OrgkitError(f"locator {path!r}: not a note file of the notes dir")
    return rel


def bare_id(text: str) -> str:
    """`id:UUID` (a link target) as the ID itself; anything else unchanged."""
    stripped = text.strip()
    return stripped[3:].strip() if stripped[:3].lower() == "id:" else stripped


def read(
    root: Path,
    ids: Iterable[str],
    *,
    depth: int = 0,
    budget: int | None = None,
    locator: Locator | None = None,
    texts: TextCache | None = None,
) -> ReadResult:
    """Read `ids` (always included) and, up to `depth` hops away, what they link to.

    Linked notes that would overflow `budget` tokens are left out and listed in
    `omitted`; smaller ones further down the queue may still fit. An ID may be
    written as a link target (`id:UUID`), as it is copied from a note.
    `texts` gives the files' text from elsewhere (a database, where the notes are not).
    """
    if texts is None:
        require_dir(root)
        texts = TextCache(root)
    reader = _Reader(root, locator or rg_locator(root), texts)
    result = ReadResult()
    frontier: list[tuple[str, str | None]] = [(i, None) for i in dict.fromkeys(bare_id(i) for i in ids)]
    seen = {i for i, _ in frontier}
    used = 0
    for level in range(depth + 1):
        if not frontier:
            break
        where = reader.locate([i for i, _ in frontier if not is_locator(i)])
        next_frontier: list[tuple[str, str | None]] = []
        for node_id, via in frontier:
            named = reader.unit(node_id) if is_locator(node_id) else None
            holders = [named[:2]] if named else reader.nodes(node_id, where.get(node_id, []))
            if len(holders) > 1:
                others = ", ".join(f"{n.file}:{n.line}" for n, _ in holders[1:])
                result.warnings.append(f"duplicate ID {node_id}: {holders[0][0].file}:{holders[0][0].line} "
                                       f"is read, also held by {others}")
            if not holders:
                if level == 0:
                    result.missing.append(node_id)
                else:
                    result.omitted.append({"id": node_id, "via": via, "depth": level,
                                           "reason": "no note has this ID"})
                continue
            node, text = holders[0]
            doc = ReadDoc(id=node.id, title=node.title, file=node.file, line=node.line,
                          level=node.level, content=text[node.start:node.end],
                          links=reader.links_in(node), depth=level, via=via,
                          duplicates=[{"file": n.file, "line": n.line} for n, _ in holders[1:]],
                          unit=named is not None and named[2], olp=node.olp)
            if level and budget is not None and used + doc.tokens > budget:
                result.omitted.append({"id": doc.id, "title": doc.title, "file": doc.file,
                                       "via": via, "depth": level, "tokens": doc.tokens,
                                       "reason": "over budget"})
                continue
            used += doc.tokens
            result.docs.append(doc)
            for dest in doc.links:
                if dest not in seen:
                    seen.add(dest)
                    next_frontier.append((dest, doc.id))
        frontier = next_frontier
    if budget is not None and used > budget:
        result.warnings.append(f"the requested notes alone take ~{used} tokens, over the budget of {budget}")
    result.warnings.extend(reader.cache.warnings)
    return result
