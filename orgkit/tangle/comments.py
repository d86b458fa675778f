"""The comments Emacs writes around tangled code, character for character.

Emacs builds them with `comment-region` in the language's major mode, so the
comment markers, padding, the column they start at and the handling of blank
lines all follow that command's `indent` (or `plain`) style.
"""

from __future__ import annotations

import re

from ..org.syntax import matched
from .document import SRC_BLOCK_RE, OrgDocument
from .langs import CommentSyntax

LINK_FORMAT_BEGIN = "[[%link][%source-name]]"
LINK_FORMAT_END = "%source-name ends here"


class NoCommentSyntax(Exception):
    """`comment-region` in a mode without comment syntax (Emacs prompts, then fails)."""


class OwnCommentRegion(Exception):
    """The mode comments through its own `comment-region-function` (its name is the
    message), which orgkit does not reproduce: Emacs succeeds, orgkit refuses."""


def comment_region(text: str, syntax: CommentSyntax | None) -> str:
    """What `comment-region` turns TEXT into."""
    if syntax is None or syntax.start is None:
        raise NoCommentSyntax
    if syntax.own_region_function:
        raise OwnCommentRegion(syntax.own_region_function)
    start = syntax.start.rstrip(" \t")
    prefix = start + start[-1:] * syntax.add + " "
    end = syntax.end.lstrip(" \t")
    suffix = " " + end if end else ""
    lines = text.split("\n")
    if end:
        lines = [_quote_nested(line, start, end) for line in lines]
    indents = [_indent_width(line) for line in lines if line.strip(" \t")]
    column = 0 if syntax.style == "plain" or not indents else min(indents)
    out = []
    for line in lines:
        if not line.strip(" \t"):
            out.append(line)
            continue
        head, rest = _split_at_column(line, column)
        out.append(head + prefix + rest + suffix)
    return "\n".join(out)


def _quote_nested(line: str, start: str, end: str) -> str:
    """`comment-quote-nested`: make inner comment delimiters inert (`/*` -> `/\\*`)."""
    for delim in (start, end):
        if len(delim) < 2:
            continue
        pattern = re.escape(delim[0]) + r"(\\*)" + re.escape(delim[1:])
        line = re.sub(pattern, lambda m: delim[0] + m.group(1) + "\\" + delim[1:], line)
    return line


def _indent_width(line: str) -> int:
    column = 0
    for char in line:
        if char == " ":
            column += 1
        elif char == "\t":
            column = (column // 8 + 1) * 8
        else:
            break
    return column


def _split_at_column(line: str, column: int) -> tuple[str, str]:
    """Split a line where `move-to-column` (with force) would put point."""
    current = 0
    for i, char in enumerate(line):
        if current >= column:
            return line[:i], line[i:]
        width = (current // 8 + 1) * 8 - current if char == "\t" else 1
        if current + width > column:
            return line[:i] + " " * (column - current), " " * (current + width - column) + line[i + 1 :]
        current += width
    return line, ""


def insert_comment(text: str, syntax: CommentSyntax | None) -> str:
    """The inserted form of one comment: commented text plus a newline, if not blank."""
    if not re.search(r"[^ \r\t\n]", text):
        return ""
    return comment_region(text, syntax) + "\n"


def fill_template(template: str, data: dict[str, str]) -> str:
    """`org-fill-template`: substitute %keys, shortest key first, as Org does."""
    for key in sorted(data, key=len):
        template = template.replace("%" + key, data[key])
    return template


def remove_indentation(text: str) -> str:
    """`org-remove-indentation`: remove the common indentation, or leave TEXT as is.

    Org starts its search for the common indentation from the buffer's size (point-max),
    so it never removes more columns than TEXT has characters plus one: a short tab-indented
    line such as "\tls" keeps four columns ("    ls").  Blank lines lose their blanks, and
    text of blank lines only is emptied.
    """
    lines = text.split("\n")
    n = min([len(text) + 1] + [_indent_width(line) for line in lines if not _blank(line)])
    if n == 0:
        return text
    return "\n".join("" if _blank(line) else _drop_columns(line, n) for line in lines)


def _blank(line: str) -> bool:
    return not line.strip(" \t")


def _drop_columns(line: str, n: int) -> str:
    """`indent-line-to (- ind n)` on a line indented by `ind` >= n columns."""
    width = _indent_width(line)
    stripped = line.lstrip(" \t")
    indentation = line[: len(line) - len(stripped)]
    head, _ = _split_at_column(indentation, width - n)
    return head + stripped


def org_comment_text(doc: OrgDocument, line: int) -> str:
    """The org text that `:comments org`/`both` turns into a comment, with point at LINE.

    Emacs takes it from the end of the heading's stars (or the end of the
    previous block, whichever is later) up to point, which is at the block's
    `#+begin_src` line unless a noweb reference to a heading has left it on that
    heading's line: the text is then the heading's stars, between point and their end.
    """
    point = doc.line_starts[line]
    begin = 0
    heading_index = doc.heading_at(line)
    if heading_index is not None:
        heading = doc.headings[heading_index]
        stars = matched(re.match(r"\*+ ", doc.lines[heading.line])).end()
        begin = doc.line_starts[heading.line] + stars
    start = max(begin, _previous_block_end(doc.text, point))
    return remove_indentation(doc.text[min(start, point) : max(start, point)])


def _previous_block_end(text: str, point: int) -> int:
    """End of the nearest `org-babel-src-block-regexp` match that ends before POINT."""
    head = text[:point]
    starts = [m.start() for m in re.finditer(r"^[ \t]*#\+begin_src", head, re.IGNORECASE | re.MULTILINE)]
    for start in reversed(starts):
        match = SRC_BLOCK_RE.match(head, start)
        if match:
            return match.end()
    return 0
