"""An org file seen the way Org's tangler sees it: headings, drawers, keywords, blocks.

Emacs finds source blocks with `org-babel-src-block-regexp` and then asks the
element parser whether each match is a real block; both steps are reproduced so
that odd files (a `#+begin_src` inside an example block, an unterminated block)
tangle exactly as in Emacs.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

from ..org.drawers import property_drawer_at
from ..org.syntax import AFFILIATED_LINE, BLOCK_BEGIN, HEADING, KEYWORD, block_end, heading_pattern, matched
from .errors import TangleError

# `org-babel-src-block-regexp`, searched case-insensitively as Emacs does.
SRC_BLOCK_RE = re.compile(
    r"^([ \t]*)#\+begin_src[ \t]+([^ \f\t\n\r\v]+)[ \t]*"
    r"([^\":\n]*\"[^\"\n*]*\"[^\":\n]*|[^\":\n]*)"
    r"([^\n]*)\n"
    r"([\s\S]*?\n)??[ \t]*#\+end_src",
    re.IGNORECASE | re.MULTILINE,
)
_ELEMENT_BEGIN_RE = re.compile(
    r"^[ \t]*#\+BEGIN_SRC"
    r"(?: +(\S+))?"
    r"((?: +(?:-(?:l \".+\"|[ikr])|[-+]n(?: *[0-9]+)?))+)?"
    r"(.*)[ \t]*$",
    re.IGNORECASE,
)
_NAME_ALIASES = {"DATA", "LABEL", "NAME", "RESNAME", "SOURCE", "SRCNAME", "TBLNAME"}
_LESSER_BLOCKS = {"src", "example", "export", "comment", "verse"}
_UNESCAPE_RE = re.compile(r"^([ \t]*,*)(,)(\*|#\+)", re.MULTILINE)


@dataclass
class Heading:
    """A headline with the parts Org's tangler reads from it."""

    line: int
    level: int
    title: str | None
    tags: list[str]
    parent: int | None
    drawer: tuple[int, int] | None = None  # first and last+1 line of the property drawer


@dataclass
class SrcBlock:
    """One real source block, with its affiliated keywords and raw contents."""

    index: int
    begin_line: int  # 0-based line of `#+begin_src`
    end_line: int  # 0-based line of `#+end_src`
    regex_end: int  # where Emacs' regexp match ends (it resumes searching there)
    language: str | None
    switches: str | None
    parameters: str | None
    name: str | None
    headers: list[str]  # in Emacs' order: the last #+HEADER line first
    value: str
    heading: int | None
    counter: int = 0

    @property
    def line(self) -> int:
        """1-based line of the `#+begin_src` line, for messages."""
        return self.begin_line + 1

    @property
    def preserve_indent(self) -> bool:
        """The `-i` switch."""
        return bool(self.switches and re.search(r"-i\b", self.switches))

    @property
    def label_format(self) -> str | None:
        """The `-l "fmt"` switch."""
        match = self.switches and re.search(r"-l +\"([^\"\n]+)\"", self.switches)
        return match.group(1) if match else None


@dataclass
class OrgDocument:
    """A parsed org file: enough structure to tangle and detangle it like Emacs."""

    path: Path
    text: str
    lines: list[str]
    line_starts: list[int]
    headings: list[Heading]
    blocks: list[SrcBlock]
    keyword_properties: list[tuple[str, str]]
    top_drawer: tuple[int, int] | None
    heading_lines: list[int] = field(default_factory=list)
    # Lines of `#+begin_src` that start no block but whose regexp match ends inside one
    # (an unterminated block before a real one): Emacs takes the match for a block,
    # finds none where it begins and fails.
    unreadable: list[int] = field(default_factory=list)

    @property
    def utf8(self) -> bool:
        """Whether the file is valid UTF-8 (`decode` keeps other bytes as lone surrogates)."""
        return not re.search("[\udc80-\udcff]", self.text)

    def line_of(self, pos: int) -> int:
        """0-based line index of character offset `pos`."""
        return bisect_right(self.line_starts, pos) - 1

    def heading_at(self, line: int) -> int | None:
        """Index of the nearest heading at or above `line` (the entry it belongs to)."""
        idx = bisect_right(self.heading_lines, line) - 1
        return idx if idx >= 0 else None

    def ancestors(self, heading: int | None) -> list[int]:
        """The heading and its ancestors, nearest first."""
        chain: list[int] = []
        while heading is not None:
            chain.append(heading)
            heading = self.headings[heading].parent
        return chain

    def commented(self, heading: int | None) -> bool:
        """`org-in-commented-heading-p`: COMMENT on this heading or any ancestor."""
        return any(
            (title := self.headings[h].title) is not None and re.match(r"COMMENT(?: |$)", title)
            for h in self.ancestors(heading)
        )

    def archived(self, heading: int | None) -> bool:
        """`org-in-archived-heading-p`: the ARCHIVE tag on this heading or an ancestor."""
        return any("ARCHIVE" in self.headings[h].tags for h in self.ancestors(heading))

    def drawer_lines(self, heading: int | None) -> list[str]:
        """Lines inside the property drawer of an entry (None: the file's top drawer)."""
        span = self.top_drawer if heading is None else self.headings[heading].drawer
        return self.lines[span[0] : span[1]] if span else []


def decode(data: bytes) -> str:
    """Text as Emacs visits it: UTF-8, and CRLF files read as DOS (lines end in LF)."""
    text = data.decode("utf-8", errors="surrogateescape")
    if "\r\n" in text and not re.search(r"(?<!\r)\n", text):
        text = text.replace("\r\n", "\n")
    return text


def load(path: Path, todo_keywords: list[str] | None = None, setup_within: Path | None = None) -> OrgDocument:
    """Read and parse an org file (`setup_within`: see `parse`)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TangleError(f"cannot read {path}: {exc.strerror}") from exc
    return parse(path, decode(data), todo_keywords, setup_within)


def parse(path: Path, text: str, todo_keywords: list[str] | None = None,
          setup_within: Path | None = None) -> OrgDocument:
    """Parse `text` (the contents of `path`).

    `#+SETUPFILE:` files are followed anywhere when `setup_within` is None (the owner,
    as Emacs follows them for its user), else only to a file inside that directory, outside
    hidden and data folders: a note never makes orgkit read `/etc/passwd`, a file beside
    the notes or the state dir for a caller who may not read the machine."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    heading_lines = [i for i, line in enumerate(lines) if HEADING.match(line)]
    kinds = _classify(lines, heading_lines)
    keywords = _keywords(path, lines, kinds, setup_within=setup_within)
    todo = todo_keywords if todo_keywords is not None else _todo_keywords(keywords)
    headings = _headings(lines, heading_lines, todo)
    top = _top_drawer(lines, heading_lines[0] if heading_lines else len(lines))
    doc = OrgDocument(
        path=path,
        text=text,
        lines=lines,
        line_starts=starts,
        headings=headings,
        blocks=[],
        keyword_properties=_property_keywords(keywords),
        top_drawer=top,
        heading_lines=heading_lines,
    )
    doc.blocks, doc.unreadable = _src_blocks(doc, kinds)
    return doc


def _section_end(heading_lines: list[int], line: int, total: int) -> int:
    idx = bisect_right(heading_lines, line)
    return heading_lines[idx] if idx < len(heading_lines) else total


def _classify(lines: list[str], heading_lines: list[int]) -> dict[int, tuple[str, int]]:
    """Lines that begin real lesser blocks, and lines hidden inside blocks or drawers.

    Maps a line index to ("begin", end_line) for a lesser block's first line and
    ("inside", 0) for lines that cannot start an element.
    """
    kinds: dict[int, tuple[str, int]] = {}
    total = len(lines)
    i = 0
    while i < total:
        line = lines[i]
        if HEADING.match(line):
            i = _skip_meta(lines, i, kinds)
            continue
        match = BLOCK_BEGIN.match(line)
        if match:
            name = match.group(1)
            end = _find_block_end(lines, i, name, _section_end(heading_lines, i, total))
            if end is not None and name.lower() in _LESSER_BLOCKS:
                kinds[i] = ("begin", end)
                for j in range(i + 1, end + 1):
                    kinds[j] = ("inside", 0)
                i = end + 1
                continue
        i += 1
    return kinds


def _skip_meta(lines: list[str], heading: int, kinds: dict[int, tuple[str, int]]) -> int:
    """Mark the property drawer after a heading as hidden; return the next line to scan."""
    span = property_drawer_at(lines, heading + 1, len(lines), False)
    if span:
        for j in range(span[0], span[1] + 1):
            kinds[j] = ("inside", 0)
        return span[1] + 1
    return heading + 1


def _find_block_end(lines: list[str], begin: int, name: str, limit: int) -> int | None:
    end_re = block_end(name)
    for j in range(begin + 1, limit):
        if end_re.match(lines[j]):
            return j
    return None


def _keywords(path: Path, lines: list[str], kinds: dict[int, tuple[str, int]],
              seen: frozenset[Path] = frozenset(), setup_within: Path | None = None) -> list[tuple[str, str]]:
    """Keyword elements in document order, following local #+SETUPFILE files like Org."""
    found: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        if i in kinds:
            continue
        match = KEYWORD.match(line)
        if not match:
            continue
        key = match.group(1).upper()
        value = match.group(2).strip()
        if key == "SETUPFILE":
            found.extend(_setupfile_keywords(path, value, seen, setup_within))
        else:
            found.append((key, value))
    return found


def _setupfile_keywords(path: Path, value: str, seen: frozenset[Path],
                        setup_within: Path | None) -> list[tuple[str, str]]:
    uri = value.strip()
    if len(uri) >= 2 and uri[0] == uri[-1] == '"':
        uri = uri[1:-1]
    if not uri or re.match(r"^[a-z][a-z0-9+.-]*://", uri, re.IGNORECASE):
        return []
    target = Path(uri).expanduser()
    if not target.is_absolute():
        target = path.parent / target
    if target in seen or (setup_within is not None and not _setup_place(target, setup_within)):
        return []
    try:
        text = decode(target.read_bytes())
    except OSError:
        return []
    lines = text.split("\n")
    heading_lines = [i for i, line in enumerate(lines) if HEADING.match(line)]
    return _keywords(target, lines, _classify(lines, heading_lines), seen | {path, target}, setup_within)


def _setup_place(target: Path, within: Path) -> bool:
    """Whether `target`, symlinks followed, is a file inside `within` and outside its hidden
    folders (the state dir, .git) and data folders."""
    real, root = Path(os.path.realpath(target)), Path(os.path.realpath(within))
    if not real.is_relative_to(root) or real == root:
        return False
    parts = real.relative_to(root).parts
    return not any(part.startswith(".") for part in parts) and "data/" not in "/".join(parts)


def _todo_keywords(keywords: list[tuple[str, str]]) -> list[str]:
    words: list[str] = []
    for key, value in keywords:
        if key in ("TODO", "SEQ_TODO", "TYP_TODO"):
            for word in value.split():
                if word != "|":
                    words.append(re.sub(r"\(.*\)$", "", word))
    return words or ["TODO", "DONE"]


def _property_keywords(keywords: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`org-keyword-properties`: #+PROPERTY values, with `NAME+` appended as Org does."""
    props: list[tuple[str, str]] = []
    for key, value in keywords:
        if key != "PROPERTY":
            continue
        match = re.match(r"(\S+)[ \t]+(.*)", value)
        if not match:
            continue
        name, val = match.group(1), match.group(2)
        appending = name.endswith("+")
        name = name[:-1] if appending else name
        for idx, (old_name, old_val) in enumerate(props):
            if old_name.lower() == name.lower():
                props[idx] = (old_name, f"{old_val} {val}" if appending else val)
                break
        else:
            props.append((name, val))
    return props


def _headings(lines: list[str], heading_lines: list[int], todo: list[str]) -> list[Heading]:
    complex_re = heading_pattern(tuple(todo))
    headings: list[Heading] = []
    stack: list[int] = []
    for idx, line_no in enumerate(heading_lines):
        line = lines[line_no]
        match = complex_re.match(line)
        level = len(line) - len(line.lstrip("*"))
        title = match.group(4) if match else None
        tags = [t for t in match.group(5).split(":") if t] if match and match.group(5) else []
        while stack and headings[stack[-1]].level >= level:
            stack.pop()
        heading = Heading(line_no, level, title, tags, stack[-1] if stack else None)
        span = property_drawer_at(lines, line_no + 1, len(lines), False)
        heading.drawer = (span[0] + 1, span[1]) if span else None
        headings.append(heading)
        stack.append(idx)
    return headings


def _top_drawer(lines: list[str], first_heading: int) -> tuple[int, int] | None:
    """The file-level property drawer: at the top, after comment lines only."""
    span = property_drawer_at(lines, 0, first_heading, True)
    return (span[0] + 1, span[1]) if span else None


def _src_blocks(doc: OrgDocument, kinds: dict[int, tuple[str, int]]) -> tuple[list[SrcBlock], list[int]]:
    """Real source blocks in the order Emacs visits them, and the unreadable matches.

    Emacs keeps a regexp match when the element where the match ends is a source
    block, then reads the block where the match begins.
    """
    spans = {line: end for line, (kind, end) in kinds.items()
             if kind == "begin" and matched(BLOCK_BEGIN.match(doc.lines[line])).group(1).lower() == "src"}
    blocks: list[SrcBlock] = []
    unreadable: list[int] = []
    pos = 0
    last_heading: object = object()
    counter = 0
    while True:
        match = SRC_BLOCK_RE.search(doc.text, pos)
        if not match:
            break
        pos = match.end()
        begin = doc.line_of(match.start())
        if begin not in spans:
            stop = doc.line_of(match.end())
            if any(first <= stop <= last and not first <= begin <= last for first, last in spans.items()):
                unreadable.append(begin)
            continue
        block = _element(doc, begin, spans[begin], match.end(), len(blocks))
        heading = doc.heading_at(begin)
        if heading == last_heading:
            counter += 1
        else:
            counter, last_heading = 1, heading
        block.counter = counter
        blocks.append(block)
    return blocks, unreadable


def _element(doc: OrgDocument, begin: int, end: int, regex_end: int, index: int) -> SrcBlock:
    head = matched(_ELEMENT_BEGIN_RE.match(doc.lines[begin]))
    language = head.group(1)
    switches = head.group(2)
    parameters = head.group(3)
    name, headers = _affiliated(doc.lines, begin)
    value = "".join(line + "\n" for line in doc.lines[begin + 1 : end])
    value = _UNESCAPE_RE.sub(r"\1\3", value)
    return SrcBlock(
        index=index,
        begin_line=begin,
        end_line=end,
        regex_end=regex_end,
        language=language,
        switches=switches.strip() if switches and switches.strip() else None,
        parameters=parameters.strip() if parameters and parameters.strip() else None,
        name=name,
        headers=headers,
        value=value,
        heading=doc.heading_at(begin),
    )


def _affiliated(lines: list[str], begin: int) -> tuple[str | None, list[str]]:
    """NAME and HEADER keywords directly above a block (the last NAME wins)."""
    first = begin
    while first > 0 and AFFILIATED_LINE.match(lines[first - 1]):
        first -= 1
    name: str | None = None
    headers: list[str] = []
    for line in lines[first:begin]:
        match = matched(AFFILIATED_LINE.match(line))
        key = (match.group(1) or match.group(3) or match.group(4)).upper()
        value = line[match.end() :].rstrip(" \t").strip()
        if key in _NAME_ALIASES:
            name = value
        elif key in ("HEADER", "HEADERS"):
            headers.insert(0, value)
    return name, headers
