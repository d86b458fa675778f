"""The changes a proposal makes to org text: append, link, tag, a new note.

Each function takes a file's text and returns the new text; only the lines the
change needs are touched. The text a proposal brings (appended text, a new
note's title and body, a link's description) comes from a model or an agent:
it is escaped (`org.escape`) so it never becomes structure in the note. Nodes are found with the
org layer (`parse_org`), so a heading node is changed at the end of its own section (before its first
child heading), a file node at the end of its top section or its keywords.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..errors import OrgkitError
from ..org import parse_org
from ..org import syntax as sx
from ..org.escape import escape_lines, inert_line, link_description
from ..org.ids import id_line

TAG = sx.TAG
_HEADING_TAGS = re.compile(rf"([ \t]+){sx.TAGS}[ \t]*$")


def _crlf(text: str) -> bool:
    """Whether every line ends in CRLF (a file Emacs reads with DOS line ends)."""
    return "\r\n" in text and text.count("\r\n") == text.count("\n")


def _lines(text: str) -> tuple[list[str], str]:
    nl = "\r\n" if _crlf(text) else "\n"
    return text.split(nl), nl


def parse_text(text: str, rel: str):
    """`parse_org` of a file's text as read (a BOM and DOS line ends as Emacs sees them);
    its line numbers match `_lines`."""
    seen = text[1:] if text.startswith("\ufeff") else text
    return parse_org(seen.replace("\r\n", "\n") if _crlf(seen) else seen, rel)


def _node(text: str, rel: str, node_id: str):
    for node in parse_text(text, rel).nodes:
        if node.id == node_id:
            return node
    raise OrgkitError(f"{rel}: no node {node_id} in it any more")


def _section_end(lines: list[str], node) -> int:
    """Index of the line after the node's own text: its first child heading, or its end."""
    start = node.line if node.level > 0 else 0  # a heading's text starts after its line
    for i in range(start, len(lines)):
        if sx.HEADING.match(lines[i]):
            return i
    return len(lines)


def _insert_block(text: str, rel: str, node_id: str, block: str) -> str:
    """`block` as a paragraph at the end of the node's own section."""
    lines, nl = _lines(text)
    node = _node(text, rel, node_id)
    end = _section_end(lines, node)
    before = lines[:end]
    while before and not before[-1].strip() and len(before) > max(node.line, 1):
        before.pop()
    after = lines[end:]
    new = before + [""] + block.strip("\n").split("\n")
    if after and after != [""]:
        new += [""] + after
    else:
        new += [""]
    return nl.join(new)


def append(text: str, rel: str, node_id: str, addition: str) -> str:
    if not addition.strip():
        raise OrgkitError("nothing to append")
    return _insert_block(text, rel, node_id, escape_lines(addition))


def link_line(dest: str, description: str) -> str:
    return f"- [[id:{dest}][{link_description(description, 0) or dest}]]"


def add_link(text: str, rel: str, node_id: str, dest: str, description: str) -> str:
    line = link_line(dest, description)
    if f"[[id:{dest}]" in text and any(link.source == node_id and link.dest == dest
                                        for link in parse_text(text, rel).links):
        raise OrgkitError(f"{rel}: already links to {dest}")
    return _insert_block(text, rel, node_id, line)


def add_tag(text: str, rel: str, node_id: str, tag: str) -> str:
    if not TAG.fullmatch(tag):
        raise OrgkitError(f"invalid tag {tag!r}: tags are letters, digits, _ @ # %")
    lines, nl = _lines(text)
    node = _node(text, rel, node_id)
    if node.level > 0:
        i = node.line - 1
        m = _HEADING_TAGS.search(lines[i])
        own = m.group(2).strip(":").split(":") if m else []
        if tag in own:
            raise OrgkitError(f"{rel}:{node.line}: already tagged {tag}")
        if m:
            lines[i] = lines[i][:m.start(2)] + ":" + ":".join(own + [tag]) + ":"
        else:
            lines[i] = lines[i].rstrip() + f" :{tag}:"
        return nl.join(lines)
    for i, line in enumerate(lines):
        m = sx.KEYWORD.match(line)
        if m and m.group(1).lower() == "filetags":
            tags = [t for t in m.group(2).split(":") if t]
            if tag in tags:
                raise OrgkitError(f"{rel}: already tagged {tag}")
            lines[i] = f"{line[:line.lower().index('#+filetags:')]}#+filetags: :{':'.join(tags + [tag])}:"
            return nl.join(lines)
    at = next((i + 1 for i, line in enumerate(lines)
               if (m := sx.KEYWORD.match(line)) and m.group(1).lower() == "title"), None)
    if at is None:
        at = next((i + 1 for i, line in enumerate(lines) if line.strip().upper() == ":END:"), 0)
    lines.insert(at, f"#+filetags: :{tag}:")
    return nl.join(lines)


def new_note_text(node_id: str, title: str, body: str, lane: str, deposit_id: str) -> str:
    """A note the librarian proposed from a deposit; it names the deposit it came from."""
    title = inert_line(title)
    if not title:
        raise OrgkitError("a new note needs a title")
    created = datetime.now().astimezone().strftime("[%Y-%m-%d %a %H:%M]")
    props = [id_line(node_id), f"{':LANE:':<10} {lane}", f"{':CREATED:':<10} {created}",
             ":DEPOSITED_VIA: librarian", f":DEPOSIT:  {deposit_id}"]
    head = "\n".join([":PROPERTIES:", *props, ":END:", f"#+title: {title}"])
    return f"{head}\n\n{escape_lines(body).strip(chr(10))}\n"
