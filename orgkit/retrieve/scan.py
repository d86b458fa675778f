"""The sparse scan: headlines, file titles and node aliases matching a query, via ripgrep.

ripgrep finds candidate lines across the whole directory; only the files that
matched are opened, and only to walk up from each match to its enclosing node.
A headline matches by the text a reader sees (a link by its description, not
its target); a node matches by any one of its `ROAM_ALIASES` too, as Emacs'
org-roam-node-find offers it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import OrgkitError
from ..org.lisp import LispReadError, split_string_and_unquote
from ..org.outline import Outline
from ..org import OrgFile
from ..org.syntax import HEADING, link_display
from ..org.units import find_unit
from ..patterns import linear
from ..rg import Lines, org_files_matching
from ..vault import read_org_file, read_org_text, require_dir
from .filters import Filters

_HEADLINE = r"^(?:\*+ |[ \t]*#\+[Tt][Ii][Tt][Ll][Ee]:)"
_ALIASES = r"^[ \t]*:ROAM_ALIASES\+?:"


@dataclass(slots=True)
class ScanHit:
    id: str | None
    title: str
    file: str
    line: int
    level: int
    olp: list[str] = field(default_factory=list)
    locator: str | None = None  # outside every node: how to read it (org/units.py), as search names it

    def to_json(self) -> dict:
        out = {"id": self.id, "title": self.title, "file": self.file, "line": self.line,
               "level": self.level, "olp": self.olp}
        return out if self.id else out | {"locator": self.locator}


@dataclass
class ScanResult:
    hits: list[ScanHit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    matches: int | None = None  # when the limit cut the hits short: how many headlines match in all


def term_patterns(query: str, regex: bool) -> list[str]:
    """The query as regexps that must all match (case-insensitively); a regex RE2 refuses is an OrgkitError."""
    if regex:
        linear(query)
        return [query]
    terms = query.split()
    if not terms:
        raise OrgkitError("empty query: give at least one word to scan for")
    return [re.escape(t) for t in terms]


def scan(root: Path, query: str, *, limit: int | None = None, regex: bool = False,
         rank: Callable[[str], float] | None = None, count: bool = False,
         filters: Filters | None = None) -> ScanResult:
    """Headlines and `#+title` lines matching every term of `query`.

    Hits come in file and line order, or best first by `rank` (smallest first) of
    the matched line's headline text. Resolving a line to its node and outline
    path is the costly part: with a limit only the first `limit` matching lines
    are resolved, and without one each file is resolved as ripgrep hands it
    over, while it searches on. With `count`, a limit still resolves them all, to
    say how many headlines match (`matches`) when the limit cuts them short.
    `filters` (filters.py) keep only the headlines of the notes they admit.
    """
    require_dir(root)
    keep = _Kept(root, filters) if filters else None
    patterns = term_patterns(query, regex)
    checks = [linear(p, ignore_case=True) for p in patterns]  # a caller's pattern: never backtracking
    result = ScanResult()
    every = limit is None and rank is None
    found = org_files_matching(root, _rg_patterns(patterns[0]), result.warnings, ignore_case=True,
                               caller_first=every)
    files = ((rel, wanted) for rel, lines in found
             if (wanted := [(n, text) for n, text in lines if _wanted(text, checks)]))
    if every:
        for rel, lines in files:
            outline = _outline(root, rel, lines, result.warnings)
            result.hits.extend(hit for number, text in lines if (hit := _hit(outline, rel, number, text))
                               and (keep is None or keep(outline, hit)))
        result.hits = sorted(_distinct(result.hits), key=lambda h: (h.file, h.line))
        return result
    by_file: dict[str, Lines] = {}
    for rel, lines in files:
        by_file.setdefault(rel, []).extend(lines)
    candidates = sorted((rel, number, text) for rel, lines in by_file.items() for number, text in lines)
    if rank is not None:
        candidates.sort(key=lambda c: rank(_searchable(c[2])))
    outlines: dict[str, Outline | None] = {}
    seen: set[tuple[str, int]] = set()
    for rel, number, text in candidates:
        if rel not in outlines:
            outlines[rel] = _outline(root, rel, by_file[rel], result.warnings)
        hit = _hit(outlines[rel], rel, number, text)
        if hit is not None and (hit.file, hit.line) not in seen and (keep is None or keep(outlines[rel], hit)):
            seen.add((hit.file, hit.line))
            if limit is None or len(result.hits) < limit:
                result.hits.append(hit)
            elif not count:
                break
    if count and len(seen) > len(result.hits):
        result.matches = len(seen)
    return result


class _Kept:
    """Whether a headline passes the filters: its file's folder and dates, its own TODO state, and its
    tags with those it inherits (the file's and its ancestor headings', org-roam's inheritance)."""

    def __init__(self, root: Path, filters: Filters) -> None:
        self.root, self.filters = root, filters
        self.file_tags: dict[str, list[str]] = {}

    def __call__(self, outline: Outline | None, hit: ScanHit) -> bool:
        if not self.filters.admits_file(self.root, hit.file):
            return False
        if outline is None or not (self.filters.tags or self.filters.todo):
            return True
        k = bisect.bisect_right(outline.heading_lines, hit.line - 1) - 1 if hit.level else -1
        tags = self._file_tags(hit.file) + (outline.tags(k) if k >= 0 else []) if self.filters.tags else []
        return self.filters.admits(self.root, hit.file, tags, outline.todo(k) if k >= 0 else None)

    def _file_tags(self, rel: str) -> list[str]:
        """The file's `#+filetags` (what its top entry holds), parsed once a file and only for a tag filter."""
        if rel not in self.file_tags:
            try:
                parsed: OrgFile | None = read_org_file(self.root, rel)
            except OrgkitError:
                parsed = None
            top = find_unit(parsed, None, rel) if parsed is not None else None
            self.file_tags[rel] = top.tags if top is not None else []
        return self.file_tags[rel]


def _distinct(hits: list[ScanHit]) -> list[ScanHit]:
    """One hit per headline (a node found by its title and by an alias counts once)."""
    seen: set[tuple[str, int]] = set()
    out = []
    for h in hits:
        if (h.file, h.line) not in seen:
            seen.add((h.file, h.line))
            out.append(h)
    return out


def _wanted(text: str, checks: list[Any]) -> bool:
    """Whether a line ripgrep found is a headline whose shown text, or one of whose aliases, holds every term."""
    if _ALIAS_LINE.match(text):
        return any(all(c.search(alias) for c in checks) for alias in _aliases(text))
    lead = _LEAD.match(text)
    return lead is not None and all(c.search(link_display(text[lead.end():])) for c in checks)


def _aliases(line: str) -> list[str]:
    """The aliases on a `:ROAM_ALIASES:` line (none when its Lisp text does not read)."""
    try:
        return split_string_and_unquote(_ALIAS_LINE.sub("", line, count=1))
    except LispReadError:
        return []


def _outline(root: Path, rel: str, lines: Lines, warnings: list[str]) -> Outline | None:
    """A matching file's outline as far as its last matching line, or whole when an alias
    matched (None, with a warning, when it cannot be read)."""
    aliased = any(_ALIAS_LINE.match(text) for _, text in lines)  # a file's title line may follow its drawer
    try:
        return Outline(read_org_text(root, rel), through=None if aliased else max(n for n, _ in lines) - 1)
    except OrgkitError as exc:
        warnings.append(str(exc))
        return None


def _rg_patterns(first: str) -> list[str]:
    """Candidate headline and alias lines for ripgrep; a regex anchored with ^ is checked in Python."""
    return [_HEADLINE, _ALIASES] if "^" in first else [f"{_HEADLINE}.*(?:{first})", f"{_ALIASES}.*(?:{first})"]


_LEAD = re.compile(_HEADLINE + r"[ \t]*")
_TITLE = re.compile(r"^[ \t]*#\+title:", re.I)
_ALIAS_LINE = re.compile(_ALIASES + r"[ \t]*", re.I)


def _searchable(text: str) -> str:
    """The part of a matched line that the query is about (not the stars, keyword or spaces after them).

    So `^X` matches a heading or a `#+title:` value that starts with X; a link
    counts by its description; an alias line by its aliases.
    """
    if _ALIAS_LINE.match(text):
        return " ".join(_aliases(text))
    return link_display(_LEAD.sub("", text, count=1))


def _hit(outline: Outline | None, rel: str, number: int, text: str = "") -> ScanHit | None:
    """The hit for line `number` of a file (None when the file is unreadable).

    An alias line (`text`) stands for its node: the heading above it, or the
    file's title line.
    """
    if outline is None or number - 1 >= len(outline.lines):
        return None
    if _ALIAS_LINE.match(text):
        node_line = _node_line(outline, number - 1)
        if node_line is None:
            return None
        number = node_line
    if not HEADING.match(outline.lines[number - 1]) and outline.in_opaque(number - 1):
        return None
    place = outline.place(number - 1)
    if place.level:
        title = place.title
    else:
        title = link_display(_searchable(outline.lines[number - 1]).strip())
    locator = None
    if place.id is None:
        k = bisect.bisect_right(outline.heading_lines, number - 1) - 1
        locator = outline.locator(rel, k) if place.level else rel
    return ScanHit(id=place.id, title=title, file=rel, line=number, level=place.level, olp=place.olp,
                   locator=locator)


def _node_line(outline: Outline, index: int) -> int | None:
    """The 1-based line naming the node whose drawer holds line `index`: its heading, or the `#+title:` line."""
    k = bisect.bisect_right(outline.heading_lines, index) - 1
    if k >= 0:
        return outline.heading_lines[k] + 1
    first = outline.heading_lines[0] if outline.heading_lines else len(outline.lines)
    return next((i + 1 for i in range(first) if _TITLE.match(outline.lines[i])), None)

