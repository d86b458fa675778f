"""The sparse scan: headlines and file titles matching a query, via ripgrep.

ripgrep finds candidate lines across the whole directory; only the files that
matched are opened, and only to walk up from each match to its enclosing node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import OrgkitError
from ..org.outline import Outline
from ..org.syntax import HEADING, link_display
from ..rg import Lines, org_files_matching
from ..vault import read_org_text, require_dir

_HEADLINE = r"^(?:\*+ |[ \t]*#\+[Tt][Ii][Tt][Ll][Ee]:)"


@dataclass(slots=True)
class ScanHit:
    id: str | None
    title: str
    file: str
    line: int
    level: int
    olp: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "file": self.file, "line": self.line,
                "level": self.level, "olp": self.olp}


@dataclass
class ScanResult:
    hits: list[ScanHit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def term_patterns(query: str, regex: bool) -> list[str]:
    """The query as regexps that must all match (case-insensitively)."""
    if regex:
        try:
            re.compile(query)
        except re.error as exc:
            raise OrgkitError(f"invalid regex {query!r}: {exc}") from None
        return [query]
    terms = query.split()
    if not terms:
        raise OrgkitError("empty query: give at least one word to scan for")
    return [re.escape(t) for t in terms]


def scan(root: Path, query: str, *, limit: int | None = None, regex: bool = False,
         rank: Callable[[str], float] | None = None) -> ScanResult:
    """Headlines and `#+title` lines matching every term of `query`.

    Hits come in file and line order, or best first by `rank` (smallest first) of
    the matched line's headline text. Resolving a line to its node and outline
    path is the costly part: with a limit only the first `limit` matching lines
    are resolved, and without one each file is resolved as ripgrep hands it
    over, while it searches on.
    """
    require_dir(root)
    patterns = term_patterns(query, regex)
    checks = [re.compile(p, re.I) for p in patterns]
    result = ScanResult()
    every = limit is None and rank is None
    found = org_files_matching(root, [_rg_pattern(patterns[0])], result.warnings, ignore_case=True,
                               caller_first=every)
    files = ((rel, wanted) for rel, lines in found
             if (wanted := [(n, text) for n, text in lines if _wanted(text, checks)]))
    if every:
        for rel, lines in files:
            outline = _outline(root, rel, lines, result.warnings)
            result.hits.extend(hit for number, _ in lines if (hit := _hit(outline, rel, number)))
        result.hits.sort(key=lambda h: (h.file, h.line))
        return result
    by_file: dict[str, Lines] = {}
    for rel, lines in files:
        by_file.setdefault(rel, []).extend(lines)
    candidates = sorted((rel, number, text) for rel, lines in by_file.items() for number, text in lines)
    if rank is not None:
        candidates.sort(key=lambda c: rank(_searchable(c[2])))
    outlines: dict[str, Outline | None] = {}
    for rel, number, _ in candidates:
        if rel not in outlines:
            outlines[rel] = _outline(root, rel, by_file[rel], result.warnings)
        hit = _hit(outlines[rel], rel, number)
        if hit is not None:
            result.hits.append(hit)
            if len(result.hits) == limit:
                break
    return result


def _wanted(text: str, checks: list[re.Pattern]) -> bool:
    """Whether a line ripgrep found is a headline whose text holds every term."""
    lead = _LEAD.match(text)
    return lead is not None and all(c.search(text[lead.end():]) for c in checks)


def _outline(root: Path, rel: str, lines: Lines, warnings: list[str]) -> Outline | None:
    """A matching file's outline as far as its last matching line (None, with a warning, when it cannot be read)."""
    try:
        return Outline(read_org_text(root, rel), through=max(n for n, _ in lines) - 1)
    except OrgkitError as exc:
        warnings.append(str(exc))
        return None


def _rg_pattern(first: str) -> str:
    """Candidate lines for ripgrep; a regex anchored with ^ is checked in Python."""
    return _HEADLINE if "^" in first else f"{_HEADLINE}.*(?:{first})"


_LEAD = re.compile(_HEADLINE + r"[ \t]*")


def _searchable(text: str) -> str:
    """The part of a matched line that the query is about (not the stars, keyword or spaces after them).

    So `^X` matches a heading or a `#+title:` value that starts with X.
    """
    return _LEAD.sub("", text, count=1)


def _hit(outline: Outline | None, rel: str, number: int) -> ScanHit | None:
    """The hit for line `number` of a file (None when the file is unreadable)."""
    if outline is None or number - 1 >= len(outline.lines):
        return None
    if not HEADING.match(outline.lines[number - 1]) and outline.in_opaque(number - 1):
        return None
    place = outline.place(number - 1)
    if place.level:
        title = place.title
    else:
        title = link_display(_searchable(outline.lines[number - 1]).strip())
    return ScanHit(id=place.id, title=title, file=rel, line=number, level=place.level, olp=place.olp)

