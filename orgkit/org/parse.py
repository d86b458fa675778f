"""Parse the text of one org file into org-roam nodes and links.

The parser is line-based and single-pass over the structure that matters to
org-roam: headings, property drawers, keywords, blocks and the lines where
links do not count. It follows what org-roam 2.2 stores in its database (see
`org-roam-db-update-file`), with a few deliberate differences where org-roam
drops data: those keep the rest of the file and add a warning instead.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from itertools import accumulate
from urllib.parse import quote

from . import syntax as sx
from .acyclic import collector_paused
from .closers import Closers
from .drawers import (drawer_line, drawer_properties, entry_node_id, entry_property, first_values,
                      opens_property_drawer, property_drawer_from)
from .lisp import LispReadError, split_string_and_unquote
from .model import Link, Node, OrgFile, ParseWarning
from .syntax import DEFAULT_TODO
from .units import heading_locator, title_counts
_Where = tuple[str, int]  # (file, 1-based line) a warning is about
_LINK_ABBREV = re.compile(r"(\S+)[ \t]+(.+)")
_CITATION = re.compile(r"\[cite(?:/[/_a-z0-9-]+)?:")
_CITE_KEY = re.compile(r"@([-.:?!`'/*@+|(){}<>&_^$#%~\w]+)")


@dataclass(slots=True)
class _Heading:
    """A heading line and what its property drawer says."""

    index: int
    number: int  # its place among the file's headings
    level: int
    parent: "_Heading | None"
    end: int = 0  # the line after its subtree
    todo: str | None = None
    priority: str | None = None
    title: str | None = None
    title_span: tuple[int, int] | None = None
    tags: list[str] = field(default_factory=list)
    props: list[tuple[str, str]] = field(default_factory=list)
    node: Node | None = None
    olp_title: str | None = None  # as its descendants' outline paths show it, once computed


@dataclass(slots=True)
class _Lines:
    """The file split into lines, with where each line starts (in characters)."""

    text: str
    lines: list[str]
    starts: list[int]

    @classmethod
    def of(cls, text: str) -> "_Lines":
        lines = text.split("\n")
        starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        return cls(text, lines, starts)

    def line_of(self, offset: int) -> int:
        """0-based line index of a 0-based character offset."""
        return bisect.bisect_right(self.starts, offset) - 1


@dataclass(slots=True)
class _Scan:
    """What the structural pass found, before nodes are assembled."""

    headings: list[_Heading] = field(default_factory=list)
    file_props: list[tuple[str, str]] = field(default_factory=list)
    keywords: list[tuple[str, str, int]] = field(default_factory=list)
    # (first line, last line) runs of text where links count at their position.
    text_runs: list[tuple[int, int]] = field(default_factory=list)
    # (line, what) of blocks and drawers that do not close, and of broken property drawers.
    problems: list[tuple[int, str]] = field(default_factory=list)
    # Lines whose links org-roam reads out of context (keywords, node properties).
    extra_link_lines: list[int] = field(default_factory=list)


def parse_org(text: str, path: str) -> OrgFile:
    """Parse `text` (already decoded) of the file at relative `path`."""
    return _parse(text, path)[0]


def odd_levels_of(text: str) -> bool:
    """Whether `text` sets `#+STARTUP: odd`, read where Org reads keywords."""
    return _odd_levels_only(_scan_structure(_Lines.of(text)).keywords)


def todo_keywords_of(text: str) -> tuple[str, ...]:
    """The TODO keywords `text` declares (else Org's defaults), read where Org reads keywords."""
    return _todo_keywords(_scan_structure(_Lines.of(text)).keywords)


# What `Outline.of_headings` takes after the text: the lines, each heading's line, level,
# parent (index among the headings, or -1) and title, and the file's TODO keywords.
HeadingsRead = tuple[list[str], list[int], list[int], list[int], "list[str | None]", tuple[str, ...]]


def parse_with_headings(text: str, path: str) -> "tuple[OrgFile, HeadingsRead]":
    """`parse_org`, and the headings as the parse read them, so that the file's outline is
    built without reading the text again (`outlined.py`)."""
    out, doc, scan, todo = _parse(text, path)
    headings = scan.headings
    return out, (doc.lines, [h.index for h in headings], [h.level for h in headings],
                 [h.parent.number if h.parent else -1 for h in headings], [h.title for h in headings], todo)


@collector_paused()
def _parse(text: str, path: str) -> tuple[OrgFile, "_Lines", "_Scan", tuple[str, ...]]:
    doc = _Lines.of(text)
    scan = _scan_structure(doc)
    todo = _todo_keywords(scan.keywords)
    warnings: list[ParseWarning] = []
    out = OrgFile(path=path, title=_file_title(scan.keywords, path), warnings=warnings)
    filetags = _file_tags(scan.keywords)
    odd_levels = _odd_levels_only(scan.keywords)

    file_node = _file_node(doc, scan, out.title, filetags, path, warnings)
    heading_pattern = sx.heading_pattern(todo)
    for h in scan.headings:
        _parse_heading_line(doc.lines[h.index], h, heading_pattern)
    for h in scan.headings:
        h.node = _heading_node(doc, h, filetags, odd_levels, path, warnings)
    out.nodes = ([file_node] if file_node else []) + [h.node for h in scan.headings if h.node]
    if file_node is None:
        out.units = _units(doc, scan, out.title, filetags, odd_levels, path)
    out.links = _links(doc, scan, file_node, path, _link_abbrevs(scan.keywords))
    warnings.extend(_problem_warnings(scan.problems, path))
    return out, doc, scan, todo


MAX_PROBLEMS = 10  # per file: a file with thousands of unclosed blocks gets a count, not a flood


def _problem_warnings(problems: list[tuple[int, str]], path: str) -> list[ParseWarning]:
    problems = sorted(set(problems))
    out = [ParseWarning(path, line + 1, message) for line, message in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        line = problems[MAX_PROBLEMS][0] + 1
        out.append(ParseWarning(path, line, f"and {len(problems) - MAX_PROBLEMS} more unclosed "
                                            "blocks or drawers from here on"))
    return out


# --- structure -------------------------------------------------------------


def _scan_structure(doc: _Lines) -> _Scan:
    """Classify every line: headings, drawers, blocks, keywords, text runs."""
    lines = doc.lines
    scan = _Scan()
    heading_idx: list[int] = []
    stack: list[_Heading] = []
    for i in [i for i, line in enumerate(lines) if line[:1] == "*"]:
        after = lines[i].lstrip("*")
        if after[:1] != " ":  # sx.HEADING: stars, then a space
            continue
        heading_idx.append(i)
        level = len(lines[i]) - len(after)
        while stack and stack[-1].level >= level:
            stack.pop().end = i
        h = _Heading(index=i, number=len(scan.headings), level=level, parent=stack[-1] if stack else None)
        scan.headings.append(h)
        stack.append(h)
    for h in stack:
        h.end = len(lines)

    closers = Closers(lines)
    markup: set[int] = set()  # delimiter lines of greater blocks and drawers
    bounds = [0] + [i + 1 for i in heading_idx]
    ends = heading_idx + [len(lines)]
    for section, (start, end) in enumerate(zip(bounds, ends)):
        owner = scan.headings[section - 1] if section else None
        i = drawer_line(lines, start, end, owner is None)
        drawer = None
        if i < end and lines[i].lstrip(" \t")[:1] == ":" and opens_property_drawer(lines[i]):
            drawer = property_drawer_from(lines, i, end)
            if drawer is None and closers.drawer_end(i + 1, end) is not None:
                scan.problems.append((i, "property drawer holds a line that is not a property; "
                                         "its properties are ignored, as Emacs does"))
        if drawer:
            first, last = drawer
            props = drawer_properties(lines, first, last)
            if owner:
                owner.props = props
            else:
                scan.file_props = props
            scan.extra_link_lines.extend(
                [first + 1 + k for k, (key, _) in enumerate(props) if key.upper() != "ROAM_REFS"]
            )
        _scan_section(lines, start, end, drawer, scan, closers, markup)
    return scan


def _scan_section(
    lines: list[str], start: int, end: int, drawer: tuple[int, int] | None, scan: _Scan,
    closers: Closers, markup: set[int],
) -> None:
    """Find keywords and the runs of text where links count, within one section.

    `markup` collects the delimiter lines of greater blocks and drawers (shared
    by the file's sections: a line number belongs to one section only).
    """
    runs = scan.text_runs
    run_start: int | None = None
    # The line after affiliated keywords that belong to it (`#+name:`): a comment or clock
    # line there is neither, as Org looks for those before affiliated keywords; it is read
    # as the paragraph they belong to.
    attached = -1
    # The closing lines of the greater blocks and drawers open around line `i`: a block
    # inside one must close before it does, as Org parses a container's contents apart.
    containers: list[int] = []
    i = start
    while i < end:
        while containers and i > containers[-1]:
            containers.pop()
        if drawer and i == drawer[0]:
            if run_start is not None:
                runs.append((run_start, i - 1))
                run_start = None
            i = drawer[1] + 1
            continue
        line = lines[i]
        lead = line.lstrip(" \t")[:1]  # sx.lead, inlined: this loop sees every line
        if lead in _OPAQUE_LEADS and not (i == attached and sx.COMMENT.match(line)):
            limit = containers[-1] if containers else end
            skip_to = _opaque_end(lines, i, limit, lead, markup, closers, scan.problems, containers)
            if skip_to is not None:
                if run_start is not None:
                    runs.append((run_start, i - 1))
                    run_start = None
                i = skip_to + 1
                continue
        clock = lead in sx.CLOCK_LEADS and i != attached and sx.CLOCK.match(line)
        if i in markup or not line.strip() or clock or (
            i == start > 0 and lead in sx.PLANNING_LEADS and sx.PLANNING.match(line)
        ):  # planning only right below a heading
            if run_start is not None:
                runs.append((run_start, i - 1))
                run_start = None
            i += 1
            continue
        kw = sx.KEYWORD.match(line) if lead == "#" else None
        if kw:
            if run_start is not None:
                runs.append((run_start, i - 1))
                run_start = None
            key = kw.group(1).upper()
            if key not in _NOT_KEYWORDS:
                scan.keywords.append((key, kw.group(2), i))
                affiliated = sx.affiliated_name(key)
                if affiliated and not _orphaned(lines, i, end, markup):
                    attached = i + 1
                    if affiliated == "CAPTION":
                        runs.append((i, i))
                elif key != "TRANSCLUDE":
                    scan.extra_link_lines.append(i)
            i += 1
            continue
        if run_start is None:
            run_start = i
        i += 1
    if run_start is not None:
        runs.append((run_start, end - 1))


def _orphaned(lines: list[str], i: int, end: int, markup: set[int]) -> bool:
    """Whether the affiliated keywords from line `i` on have no element to attach to.

    Org then parses each of them as a plain keyword (see
    `org-element--collect-affiliated-keywords`): when a blank line, the end of
    the section or the end of the enclosing block or drawer follows them. Only a
    real end (`markup`, the delimiters of the blocks and drawers that close): a stray
    `#+end_quote` is the paragraph they attach to.
    """
    j = i + 1
    while j < end:
        kw = sx.KEYWORD.match(lines[j])
        if not (kw and sx.affiliated_name(kw.group(1).upper())):
            break
        j += 1
    return j >= end or not lines[j].strip() or (j in markup and bool(sx.CONTAINER_END.match(lines[j])))


# `#+KEY:` lines Org does not parse as keywords: a dynamic block's delimiters, and a babel
# call (`#+call: f()`), whose text holds no links for org-roam.
_NOT_KEYWORDS = frozenset({"BEGIN", "END", "CALL"})

_OPAQUE_LEADS = frozenset("#:\\%")  # the first characters of what `_opaque_end` looks for


def _opaque_end(lines: list[str], i: int, end: int, lead: str, markup: set[int], closers: Closers,
                problems: list[tuple[int, str]], containers: list[int]) -> int | None:
    """If line `i` (starting with `lead` after blanks) starts something whose contents hide links,
    its last line.

    Greater blocks and drawers are not opaque: their delimiter lines are
    recorded in `markup`, their closing line pushed on `containers`, and their
    contents scanned as text. Blocks and drawers that do not close before `end`
    (the next heading, or the end of the drawer or block around them) are read
    as text, as Org reads them, and noted in `problems`.
    """
    line = lines[i]
    before = "inside the drawer or block around it" if containers else "before the next heading"
    if lead == "#":
        if sx.COMMENT.match(line):
            return i
        m = sx.BLOCK_BEGIN.match(line)
        if m:
            j = closers.block_end(m.group(1), i + 1, end)
            if j is None:
                problems.append((i, f"#+begin_{m.group(1)} has no #+end_{m.group(1)} {before}; "
                                    "read as text"))
                return None
            if m.group(1).lower() in sx.OPAQUE_BLOCKS:
                return j
            markup.update((i, j))
            containers.append(j)
        return None
    if lead == "%":  # a diary sexp, `%%(diary-anniversary ...)`, only at the start of a line
        return i if line.startswith("%%(") else None
    if lead == "\\":
        m = sx.LATEX_BEGIN.match(line)
        return closers.latex_end(m.group(1), i + 1, end) if m else None
    if sx.FIXED_WIDTH.match(line):
        return i
    m = sx.DRAWER_BEGIN.match(line)
    if m and m.group(1).upper() != "END":
        j = closers.drawer_end(i + 1, end)
        if j is not None:
            markup.update((i, j))
            containers.append(j)
        elif m.group(1).upper() == "PROPERTIES":
            problems.append((i, f"property drawer has no :END: {before}; "
                                "its properties are ignored, as Emacs does"))
        else:
            problems.append((i, f"drawer :{m.group(1)}: has no :END: {before}; read as text"))
    return None


# --- keywords and properties -------------------------------------------------


def _todo_keywords(keywords: list[tuple[str, str, int]]) -> tuple[str, ...]:
    """The file's TODO keywords (`#+TODO:` and friends replace the defaults)."""
    found: list[str] = []
    for key, value, _ in keywords:
        if key in ("TODO", "SEQ_TODO", "TYP_TODO"):
            for word in value.split():
                if word != "|":
                    found.append(re.sub(r"\(.*\)$", "", word))
    return tuple(dict.fromkeys(k for k in found if k)) or DEFAULT_TODO


def _odd_levels_only(keywords: list[tuple[str, str, int]]) -> bool:
    """Whether the file's `#+STARTUP:` options turn on `org-odd-levels-only`: each `odd` turns
    it on and each `oddeven` off, in order, as `org-set-regexps-and-options` applies them."""
    odd = False
    for key, value, _ in keywords:
        if key == "STARTUP":
            for word in value.lower().split():
                if word in ("odd", "oddeven"):
                    odd = word == "odd"
    return odd


def _file_title(keywords: list[tuple[str, str, int]], path: str) -> str:
    """The first `#+title`, else the file's relative path without extension."""
    for key, value, _ in keywords:
        if key == "TITLE":
            return sx.link_display(value)
    return path[:-4] if path.endswith(".org") else path


def _file_tags(keywords: list[tuple[str, str, int]]) -> list[str]:
    """`#+filetags` across the file; like Org, a later line's tags come first."""
    tags: list[str] = []
    for key, value, _ in keywords:
        if key == "FILETAGS" and value.strip():
            new = [t for word in value.split() for t in word.split(":") if t]
            tags = new + tags
    return tags


def _link_abbrevs(keywords: list[tuple[str, str, int]]) -> dict[str, str]:
    """The file's link abbreviations (`#+LINK: key replacement`), as `org-set-regexps-and-options`
    reads them: the first word is the key, the rest the replacement; a later line wins."""
    abbrevs: dict[str, str] = {}
    for key, value, _ in keywords:
        if key == "LINK":
            m = _LINK_ABBREV.match(value)
            if m:
                abbrevs[m.group(1)] = m.group(2)
    return abbrevs


def _expand_abbrev(raw: str, abbrevs: dict[str, str]) -> str:
    """`org-link-expand-abbrev`: `key:tag` (or `key::tag`, or `key`) with the key's
    replacement, its first `%s` (or else `%h`, URL-encoded) replaced by the tag, or the
    tag appended.

    A replacement that calls a function (`%(f)`) is left unexpanded: Emacs calls only
    functions the user's configuration marks safe, and refuses the rest with a warning.
    """
    key, colon, tag = raw.partition(":")
    if key not in abbrevs:
        return raw
    if colon and tag.startswith(":"):
        tag = tag[1:]
    replacement = abbrevs[key]
    if "%(" in replacement and re.search(r"%\([^)]+\)", replacement):
        return raw
    if "%s" in replacement:
        return replacement.replace("%s", tag, 1)
    if "%h" in replacement:
        return replacement.replace("%h", quote(tag, safe=""), 1)
    return replacement + tag


def _aliases_and_refs(
    props: list[tuple[str, str]], first: dict[str, str], where: _Where, warnings: list[ParseWarning]
) -> tuple[list[str], list[str]]:
    aliases = _lisp_words(props, first, "ROAM_ALIASES", where, warnings)
    refs: list[str] = []
    for ref in _lisp_words(props, first, "ROAM_REFS", where, warnings):
        parsed = _parse_ref(ref)
        if parsed:
            refs.extend(parsed)
        else:
            warnings.append(ParseWarning(*where, f"invalid ref {ref!r}, skipped"))
    return aliases, refs


def _lisp_words(props: list[tuple[str, str]], first: dict[str, str], name: str, where: _Where,
                warnings: list[ParseWarning]) -> list[str]:
    if name not in first and name + "+" not in first:  # most drawers: no aliases, no refs
        return []
    value = entry_property(props, name, first)
    if value is None:
        return []
    try:
        return split_string_and_unquote(value)
    except LispReadError as exc:
        warnings.append(ParseWarning(*where, f"{name} not read ({exc}); node kept without it"))
        return []


def _parse_ref(ref: str) -> list[str]:
    """A ROAM_REFS entry as `@citekey` or `type:path` (org-roam's refs table)."""
    if ref.startswith("@"):
        return [ref]
    if ref.startswith("[cite:"):
        return ["@" + k for k in _cite_keys(ref)]
    m = sx.PLAIN_LINK.search(ref)
    if m:
        return [f"{m['plain_type']}:{m['plain_path']}"]
    return []


def _cite_keys(ref: str) -> list[str]:
    """The keys of the org-cite citations in `ref`, as `org-cite-parse-objects` reads them.

    A citation needs its closing bracket: ROAM_REFS is split at spaces, so in
    `[cite:@a; @b]` the piece `[cite:@a;` holds no citation (and `@b]` is a key of its own).
    Each `;`-separated reference gives its first key; parts without one are the
    citation's prefix or suffix.
    """
    keys: list[str] = []
    pos = 0
    while m := _CITATION.search(ref, pos):
        depth, close = 0, None
        for i in range(m.start(), len(ref)):
            if ref[i] in "[]":
                depth += 1 if ref[i] == "[" else -1
                if depth == 0:
                    close = i
                    break
        if close is None:
            break
        for part in ref[m.end():close].split(";"):
            key = _CITE_KEY.search(part)
            if key:
                keys.append(key.group(1))
        pos = close + 1
    return keys


# --- nodes -------------------------------------------------------------------


def _file_node(
    doc: _Lines, scan: _Scan, title: str, filetags: list[str], path: str, warnings: list[ParseWarning]
) -> Node | None:
    if scan.headings and scan.headings[0].index == 0:
        return None
    first = first_values(scan.file_props)
    node_id = entry_node_id(scan.file_props, first)
    if node_id is None:
        return None
    aliases, refs = _aliases_and_refs(scan.file_props, first, (path, 1), warnings)
    return Node(
        id=node_id, file=path, level=0, pos=1, line=1, title=title,
        tags=list(dict.fromkeys(filetags)), aliases=aliases, refs=refs,
        properties=first,
        start=0, end=len(doc.text), end_line=len(doc.lines),
    )


def _parse_heading_line(line: str, h: _Heading, pattern: sx.HeadingPattern) -> None:
    m = pattern.match(line)
    if not m:  # cannot happen: the pattern accepts any heading line
        return
    _, h.todo, priority, h.title, tags = m.groups()
    h.priority = priority[2] if priority else None
    h.title_span = m.span(4) if h.title is not None else None
    h.tags = [t for t in tags.split(":") if t] if tags else []


def _heading_node(
    doc: _Lines, h: _Heading,
    filetags: list[str], odd_levels: bool, path: str, warnings: list[ParseWarning],
) -> Node | None:
    if not h.props:  # most headings: no property drawer, so no ID
        return None
    first = first_values(h.props)
    node_id = entry_node_id(h.props, first)
    if node_id is None:
        return None
    where = (path, h.index + 1)
    if h.title is None:
        warnings.append(ParseWarning(*where, "heading with an ID but no title, not a node"))
        return None
    aliases, refs = _aliases_and_refs(h.props, first, where, warnings)
    return _entry(doc, h, node_id, first, filetags, odd_levels, path, aliases, refs)


def _entry(doc: _Lines, h: _Heading, node_id: str, first: dict[str, str], filetags: list[str],
           odd_levels: bool, path: str, aliases: list[str], refs: list[str]) -> Node:
    """A heading as a node (or a unit), its subtree's bounds and what it inherits."""
    ancestors: list[_Heading] = []
    parent = h.parent
    while parent is not None:
        ancestors.append(parent)
        parent = parent.parent
    ancestors.reverse()
    inherited = filetags + [t for a in ancestors for t in a.tags]
    end_index = h.end
    return Node(
        id=node_id, file=path, level=sx.reduced_level(h.level, odd_levels), pos=doc.starts[h.index] + 1,
        line=h.index + 1,
        title=sx.link_display(h.title or ""), todo=h.todo, priority=h.priority,
        olp=[_olp_title(a) for a in ancestors],
        tags=_dedupe_keep_last(inherited + h.tags) if inherited or h.tags else [],
        aliases=aliases, refs=refs, properties=first,
        start=doc.starts[h.index],
        end=doc.starts[end_index] if end_index < len(doc.lines) else len(doc.text),
        end_line=end_index,
    )


def _units(doc: _Lines, scan: _Scan, title: str, filetags: list[str], odd_levels: bool,
           path: str) -> list[Node]:
    """The searchable units of a file without a file node (units.py): the file, and each heading
    that is no node and lies in none."""
    units = [Node(id=path, file=path, level=0, pos=1, line=1, title=title, tags=list(dict.fromkeys(filetags)),
                  properties=first_values(scan.file_props), start=0, end=len(doc.text), end_line=len(doc.lines))]
    titles = title_counts(h.title for h in scan.headings)
    inside: set[int] = set()  # headings inside a heading node
    for h in scan.headings:
        if h.node is not None or (h.parent is not None and h.parent.index in inside):
            inside.add(h.index)
            continue
        locator = heading_locator(path, h.title, h.index + 1, titles)
        units.append(_entry(doc, h, locator, first_values(h.props) if h.props else {}, filetags, odd_levels,
                            path, [], []))
    return units


def _olp_title(h: _Heading) -> str:
    """A heading's title in outline paths, computed once however many descendants show it."""
    if h.olp_title is None:
        h.olp_title = sx.olp_title(h.title)
    return h.olp_title


def _dedupe_keep_last(tags: list[str]) -> list[str]:
    """Org's tag order: a tag that repeats keeps its most local position."""
    seen: set[str] = set()
    out: list[str] = []
    for tag in reversed(tags):
        if tag not in seen:
            seen.add(tag)
            out.append(tag)
    out.reverse()
    return out


# --- links -------------------------------------------------------------------


def _links(doc: _Lines, scan: _Scan, file_node: Node | None, path: str,
           abbrevs: dict[str, str]) -> list[Link]:
    """Every link org-roam records, with the node it belongs to (`abbrevs`: the file's
    link abbreviations, which bracket links expand)."""
    owner = _link_owner(scan, file_node)
    links: list[Link] = []
    # Only text holding "[[" (a bracket link) or ":" (the `type:` of an angle or plain link)
    # is searched: most titles and paragraphs hold neither.
    chunks = [(doc.starts[h.index] + h.title_span[0], h.title) for h in scan.headings
              if h.title_span and h.title and (":" in h.title or "[[" in h.title)]
    for first, last in scan.text_runs:
        if first == last:
            chunk = doc.lines[first]
        else:
            chunk = doc.text[doc.starts[first]:doc.starts[last] + len(doc.lines[last])]
        if ":" in chunk or "[[" in chunk:
            chunks.append((doc.starts[first], chunk))
    for base, chunk in chunks:
        for m in sx.link_matches(chunk):
            if m.group("opaque") is not None:
                continue
            line = doc.line_of(base + m.start())
            source = owner(line)
            if source is not None:
                links.append(_make_link(m, source, base + m.start() + 1, line + 1, path, abbrevs))
    top_source = owner(0)
    if top_source is not None:
        # org-roam reads these links again in an empty buffer, without the file's abbreviations.
        for i in scan.extra_link_lines:
            for m in sx.link_matches(doc.lines[i], opaque=False):
                links.append(_make_link(m, top_source, doc.starts[i] + m.start() + 1, i + 1, path, {}))
    links.sort(key=lambda link: link.pos)
    return links


def _link_owner(scan: _Scan, file_node: Node | None):
    """A function from a line index to the ID that owns links there.

    Mirrors `org-roam-id-at-point`: the heading around the line, then its
    ancestors, and finally whatever is at the start of the buffer (the file
    node, or the first heading when the file starts with one).
    """
    headings = scan.headings
    starts = [h.index for h in headings]
    if headings and headings[0].index == 0:
        top = headings[0].node.id if headings[0].node else None
    else:
        top = file_node.id if file_node else None
    cache: dict[int, str | None] = {}

    def owner(line: int) -> str | None:
        k = bisect.bisect_right(starts, line) - 1
        if k < 0:
            return top
        if k not in cache:
            h: _Heading | None = headings[k]
            while h is not None and h.node is None:
                h = h.parent
            cache[k] = h.node.id if h is not None and h.node else top
        return cache[k]

    return owner


def _make_link(m: re.Match[str], source: str, pos: int, line: int, path: str,
               abbrevs: dict[str, str]) -> Link:
    kind, target = _link_target(m, abbrevs)
    return Link(source=source, dest=target, type=kind, pos=pos, line=line, file=path)


def _link_target(m: re.Match[str], abbrevs: dict[str, str]) -> tuple[str, str]:
    """(type, dest) of a link match, classified as `org-element-link-parser` does (a bracket
    link's abbreviation expanded first; plain and angle links are never abbreviations)."""
    if m.group("angle") is not None:
        kind, path = m.group("angle_type"), re.sub(r"[ \t]*\n[ \t]*", "", m.group("angle_path"))
    elif m.group("plain") is not None:
        kind, path = m.group("plain_type"), m.group("plain_path")
    else:
        raw = re.sub(r"[ \t]*\n[ \t]*", " ", m.group("target"))
        raw = re.sub(r"\\([\]\[])", r"\1", raw)
        return _classify_raw(_expand_abbrev(raw, abbrevs) if abbrevs else raw)
    return _typed(kind, path)


def _classify_raw(raw: str) -> tuple[str, str]:
    if raw.startswith(("/", "~", "./", "../")):
        return _file_link(raw)
    m = sx.LINK_TYPE_PREFIX.match(raw)
    if m:
        return _typed(m.group(1), raw[m.end():])
    if raw.startswith("(") and raw.endswith(")"):
        return "coderef", raw
    if raw.startswith("#"):
        return "custom-id", raw
    return "fuzzy", raw


def _typed(kind: str, path: str) -> tuple[str, str]:
    """(type, dest) of a link with an explicit type; the type keeps its case."""
    if sx.FILE_TYPE.fullmatch(kind):
        return _file_link(path)
    if kind == "id":
        return "id", path
    return kind, f"{kind}:{path}"


def _file_link(path: str) -> tuple[str, str]:
    """A file link's dest: its search option (`::...`) dropped, `file:///x` as `/x`."""
    path = path.split("::", 1)[0]
    return "file", re.sub(r"^//+([A-Za-z]:)?/", r"\1/", path)
