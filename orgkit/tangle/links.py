"""The link and name that `:comments link` writes around each block.

Emacs makes the link with `org-store-link` at the `#+begin_src` line (a file link
with a search option: the block's name, the heading, or the line itself before
the first heading), then rewrites the file part relative to the target.
"""

from __future__ import annotations

import re

from .document import OrgDocument, SrcBlock
from .headers import local_values
from .paths import abbreviate_file_name, file_name_directory, file_relative_name

_TARGET_RE = re.compile(r"[^<]<<([^<>]+)>>[^>]")
_COOKIE_RE = re.compile(r"\[[0-9]*(?:%|/[0-9]*)\]")


def source_name(doc: OrgDocument, block: SrcBlock) -> str:
    """The block's name, else `Heading:N` (N counts blocks under that heading)."""
    if block.name is not None:
        return block.name
    title = doc.headings[block.heading].title if block.heading is not None else None
    return f"{title if title is not None else 'No heading'}:{block.counter}"


def normalize(string: str, context: bool = False) -> str:
    """`org-link--normalize-string`."""
    string = _trim(re.sub(r"[ \t]+", " ", _COOKIE_RE.sub(" ", string)))
    while context:
        if string.startswith("(") and string.endswith(")"):
            string = _trim(string[1:-1])
        elif lead := re.match(r"[#*]+[ \t]*", string):
            string = string[lead.end() :]
        else:
            break
    return string


def escape(link: str) -> str:
    """`org-link-escape`: backslash-protect brackets (and the backslashes before them)."""
    return re.sub(r"(\\*)(\Z|[\[\]])", lambda m: m.group(1) * 2 + ("\\" if m.group(2) else "") + m.group(2), link)


def _trim(text: str) -> str:
    return re.sub(r"\A[ \t\n\r]+", "", re.sub(r"[ \t\n\r]+\Z", "", text))


def stored_link(doc: OrgDocument, block: SrcBlock) -> str:
    """The link `org-store-link` makes at the block's first line (without brackets)."""
    return _store(doc, block.heading, block.name, block.begin_line)[0]


def link_string(doc: OrgDocument, heading: int | None, name: str | None, line: int, column: int = 0) -> str:
    """What `org-store-link` returns with point on LINE at COLUMN: `[[link][description]]`.

    HEADING is the entry LINE belongs to, NAME the name of the element at point.
    """
    link, desc = _store(doc, heading, name, line, column)
    if desc is not None:
        desc = _display_format(desc)
    desc_text = ""
    if desc is not None and re.search(r"[^ \r\t\n]", desc):
        desc = re.sub(r"\]\Z", "]\u200b", _trim(desc))
        desc_text = "[" + re.sub(r"(\])(\])", "\\1\u200b\\2", desc) + "]"
    return f"[[{escape(link)}]{desc_text}]"


def _display_format(text: str) -> str:
    """`org-link-display-format`: bracket links shown as their descriptions."""
    return re.sub(r"\[\[((?:[^][\\]|\\(?:\\\\)*[][]|\\+[^][])+)\](?:\[([\s\S]+?)\])?\]",
                  lambda m: m.group(2) if m.group(2) is not None else m.group(1), text)


def _store(doc: OrgDocument, heading: int | None, name: str | None, line: int,
           column: int = 0) -> tuple[str, str | None]:
    """`org-store-link` in a file buffer: the link and its description (None: no description)."""
    path = "file:" + abbreviate_file_name(str(doc.path))
    target = _target_at(doc, line, column)
    if target is not None:
        return f"{path}::{target}", f"{path}::{target}"
    custom = local_values(doc, heading, "CUSTOM_ID")
    if custom and custom[0] is not None:
        link = f"{path}::#{' '.join(v for v in custom if v is not None)}"
        return link, link
    heading_desc = None
    if name is not None:
        context = name
    elif heading is None:
        context = normalize(doc.lines[line], context=True)
    else:
        title = re.sub(r"\ACOMMENT[ \t]+", "", doc.headings[heading].title or "")
        context = "*" + normalize(title)
        heading_desc = normalize(title)
    if not re.search(r"[^ \r\t\n]", context):
        return path, path
    return f"{path}::{context}", name or heading_desc


def _target_at(doc: OrgDocument, line: int, column: int = 0) -> str | None:
    """`org-in-regexp` for a <<target>> around point, at COLUMN of LINE (one line each way).

    A target whose match ends before point (it may end at the start of LINE) is not at point.
    """
    first = max(line - 1, 0)
    start = doc.line_starts[first]
    end_line = min(line + 1, len(doc.lines) - 1)
    end = doc.line_starts[end_line] + len(doc.lines[end_line])
    point = doc.line_starts[line] + column
    pos = start
    while True:
        match = _TARGET_RE.search(doc.text, pos, end)
        if not match:
            return None
        if match.start() <= point <= match.end():
            return match.group(1)
        if match.start() > point:
            return None
        pos = match.end()


def block_link(doc: OrgDocument, block: SrcBlock, tangle: str, directory: str) -> str:
    """The `%link` of a block's comments: the stored link, relative to the target's directory."""
    link = escape(stored_link(doc, block))
    if link.startswith("file:"):
        target_dir = file_name_directory(tangle) or directory
        return "file:" + file_relative_name(link[len("file:") :], target_dir, directory)
    return link
