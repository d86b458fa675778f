"""`:var` values as org-babel computes them when tangling (`org-babel-process-params`).

Each `:var NAME=VALUE` is read with `org-babel-read` (numbers, strings, pure Lisp),
and anything else names data in the same file, optionally indexed (`tbl[1,0:2]`): a
named table, plain list, block (example, export, quote, verse, special), paragraph,
fixed-width area, or a heading by CUSTOM_ID or ID.  Org runs a named source block or
`#+call:` to get its value; orgkit refuses those (NeedsEvaluation).
Tables then lose their column names and hlines as `org-babel-disassemble-tables` says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..org.lisp import NIL, Symbol, read
from ..org.syntax import matched
from .assign import HLINE, Var
from .comments import remove_indentation
from .document import OrgDocument
from .elisp import LispForm, babel_read, string_to_number
from .evaluate import Environment

_AFFILIATED = re.compile(
    r"^[ \t]*#\+(?:CAPTION|RESULTS|DATA|HEADERS?|LABEL|NAME|PLOT|RESNAME|RESULT|SOURCE|SRCNAME|TBLNAME"
    r"|ATTR_[-_A-Za-z0-9]+)(?:\[.*\])?:",
    re.IGNORECASE,
)
_ITEM = re.compile(r"^([ \t]*)([-+]|(?<=[ \t])\*|[0-9]+[.)])([ \t]+|$)(.*)$")
_UNESCAPE = re.compile(r"^([ \t]*,*)(,)(\*|#\+)", re.MULTILINE)


class VarError(Exception):
    """A `:var` orgkit cannot compute; `needs_evaluation` when Org would run code for it."""

    def __init__(self, message: str, needs_evaluation: bool = False) -> None:
        super().__init__(message)
        self.needs_evaluation = needs_evaluation


def resolve(doc: OrgDocument, params: list[tuple[str, object]], env: Environment,
            headline_body: Callable[[str], str | None]) -> list[tuple[str, object]]:
    """PARAMS with each `:var` replaced by a `Var`, and `:colname-names` added.

    HEADLINE_BODY(ref) gives the text of a heading whose CUSTOM_ID or ID is ref (or None).
    """
    resolver = _Resolver(doc, env, headline_body)
    variables = [resolver.assignment(value) for key, value in params if key == ":var"]
    variables, colnames = _disassemble(variables, params)
    others = [(k, v) for k, v in params if k != ":var"]
    return [(":var", v) for v in variables] + [(":colname-names", colnames)] + others


@dataclass
class _Resolver:
    doc: OrgDocument
    env: Environment
    headline_body: Callable[[str], str | None]

    def assignment(self, assignment: object) -> Var:
        """`org-babel-ref-parse`."""
        if not isinstance(assignment, str):
            raise VarError(f":var {assignment!r} is not NAME=VALUE")
        match = re.match(r"(.+?)=", assignment)
        if not match:
            raise VarError(f":var {assignment} is not NAME=VALUE")
        name = match.group(1).strip(" \t\n\r")
        ref = assignment[match.end() :].strip(" \t\n\r")
        value = babel_read(ref, self.env)
        if isinstance(value, LispForm):
            raise VarError(f":var {name}={value.text}: {value.reason}",
                           needs_evaluation=not (value.signals or value.refused))
        if value != ref:
            return Var(name, value)
        if ref.startswith('"') and ref.endswith('"') and len(ref) > 1:
            return Var(name, read(ref)[0])
        try:
            return Var(name, self.reference(ref))
        except VarError as exc:
            raise VarError(f":var {name}={ref}: {exc}", exc.needs_evaluation) from None

    def reference(self, ref: str) -> object:
        """`org-babel-ref-resolve` for the references that need no evaluation."""
        index = re.search(r"\[([^\[]+)\]$", ref)
        if index and ref[: index.start()].count("(") == ref[: index.start()].count(")"):
            value = self.reference(ref[: index.start()])
            return index_list(index.group(1), value) if _is_list(value) else value
        if re.match(r"^(.+?)(\[(.*)\]|())\((.*)\)$", ref, re.DOTALL):
            raise VarError("a call of a block needs evaluation (orgkit never runs code)", needs_evaluation=True)
        if re.match(r"^(.+):(.+)$", ref):
            raise VarError(f"the reference {ref} into another file is not supported by orgkit")
        found = self._named(ref)
        if found is not None:
            return found
        body = self.headline_body(ref)
        if body is not None:
            return body
        raise VarError(f"Reference `{ref}' not found in this buffer (Emacs fails too)")

    def _named(self, ref: str) -> object | None:
        doc = self.doc
        name_re = re.compile(r"^[ \t]*#\+(?:name|tblname):[ \t]*" + re.escape(ref) + r"[ \t]*$", re.IGNORECASE)
        inside = {line for block in doc.blocks for line in range(block.begin_line + 1, block.end_line)}
        for number, line in enumerate(doc.lines):
            if number in inside or not name_re.match(line) or doc.commented(doc.heading_at(number)):
                continue
            first = number
            while first < len(doc.lines) and _AFFILIATED.match(doc.lines[first]):
                first += 1
            if first >= len(doc.lines) or not doc.lines[first].strip() or _is_heading(doc.lines[first]):
                continue  # an orphaned keyword names nothing
            if self._last_name(number, first) != ref:
                continue
            return self._element_value(first, ref)
        return None

    def _last_name(self, start: int, first: int) -> str | None:
        """The element's name: the last NAME keyword among its affiliated keywords."""
        begin = start
        while begin > 0 and _AFFILIATED.match(self.doc.lines[begin - 1]):
            begin -= 1
        name = None
        for line in self.doc.lines[begin:first]:
            match = re.match(r"^[ \t]*#\+(?:data|label|name|resname|source|srcname|tblname):[ \t]*(.*?)[ \t]*$",
                             line, re.IGNORECASE)
            if match:
                name = match.group(1)
        return name

    def _element_value(self, first: int, ref: str) -> object:
        """`org-babel-read-element` for the element starting at line FIRST."""
        line = self.doc.lines[first]
        lower = line.strip().lower()
        if re.match(r"^[ \t]*\|", line):
            return _read_table(self.doc.lines, first)
        if re.match(r"^[ \t]*\+-", line):
            raise VarError(f"{ref} is a table.el table, which orgkit does not read")
        if lower.startswith("#+begin_src"):
            raise VarError(f"{ref} is a source block, whose value needs evaluation (orgkit never runs code)",
                           needs_evaluation=True)
        if lower.startswith("#+call:"):
            raise VarError(f"{ref} is a #+call line, whose value needs evaluation (orgkit never runs code)",
                           needs_evaluation=True)
        if re.match(r"#\+begin_comment\b", lower):
            raise VarError(f"Reference not found: {ref} is a comment block (Emacs fails too)")
        if re.match(r"#\+begin_\S", lower):
            return self._block_value(first, ref)
        if re.match(r"^[ \t]*:( |$)", line):
            return _read_fixed_width(self.doc.lines, first)
        if _ITEM.match(line) and not _is_heading(line):
            return _read_list(self.doc.lines, first, ref)
        if not re.match(r"^[ \t]*(#\+|:[\w-]+:[ \t]*$|-{5,}[ \t]*$|\\begin\{|\[fn:)", line):
            return self._paragraph_value(first, ref)
        raise VarError(f"{ref} names an element orgkit does not read as a :var value (a table, list, block, "
                       "fixed-width area or paragraph)")

    def _paragraph_value(self, first: int, ref: str) -> str:
        """A paragraph's text up to its last line (with that line's newline)."""
        lines = self.doc.lines
        end = first + 1
        while end < len(lines) and lines[end].strip() and not _starts_element(lines[end]):
            end += 1
        text = "".join(line + "\n" for line in lines[first:end])
        if re.fullmatch(r"[ \t]*\[\[[^\]]+\](?:\[[^\]]*\])?\][ \t\n]*", text):
            raise VarError(f"{ref} is a link, whose target Org reads as the value; orgkit does not follow links")
        return text

    def _block_value(self, first: int, ref: str) -> str:
        kind = matched(re.match(r"^[ \t]*#\+begin_(\S+)", self.doc.lines[first], re.IGNORECASE)).group(1)
        end_re = re.compile(r"^[ \t]*#\+end_" + re.escape(kind) + r"[ \t]*$", re.IGNORECASE)
        for end in range(first + 1, len(self.doc.lines)):
            if end_re.match(self.doc.lines[end]):
                break
        else:
            raise VarError(f"{ref}: the block has no #+end_{kind}")
        value = "".join(line + "\n" for line in self.doc.lines[first + 1 : end])
        if kind.lower() not in ("example", "export"):  # contents, as written
            if not value:
                raise VarError(f"{ref}: an empty {kind} block has no contents (Emacs fails too)")
            return remove_indentation(value)
        value = _UNESCAPE.sub(r"\1\3", value)
        preserve = re.search(r"(^|\s)-i\b", self.doc.lines[first]) and kind.lower() == "example"
        return value if preserve else remove_indentation(value)


def _is_list(value: object) -> bool:
    return isinstance(value, list) or value == NIL


def index_list(index: str, items: object) -> object:
    """`org-babel-ref-index-list`: `tbl[1,0:2]` picks rows, then columns (0-based, negative from the end)."""
    lis = items if isinstance(items, list) else []
    match = re.match(r"^([^,]*),?", index)
    if not index or not match:
        return items
    portion, remainder = match.group(1), index[match.end() :]
    count = len(lis)

    def wrap(number: int) -> int:
        return number + count if number < 0 else number

    def nth(n: int) -> object:
        n = max(n, 0)
        return lis[n] if n < count else NIL

    ranged = re.search(r"(([-0-9]+):([-0-9]+)|\*)", portion)
    if not portion or ranged:
        if portion and ranged and ranged.group(2) is not None:
            start, end = wrap(_string_to_int(ranged.group(2))), wrap(_string_to_int(ranged.group(3)))
        else:
            start, end = wrap(0), wrap(-1)
        picked = [nth(n) for n in ([start] if start == end else range(start, end + 1))]
    else:
        picked = [nth(wrap(_string_to_int(portion)))]
    result = [index_list(remainder, item) if _is_list(item) else item for item in picked]
    if len(result) == 1:
        return result[0]
    return result if result else NIL


def _string_to_int(text: str) -> int:
    """`string-to-number` for the integers of an index (0 when there is none)."""
    match = re.match(r"[ \t]*([-+]?[0-9]+)", text)
    return int(match.group(1)) if match else 0


def _starts_element(line: str) -> bool:
    """Whether LINE begins an element that ends a paragraph before it."""
    return bool(
        _is_heading(line)
        or _ITEM.match(line)
        or re.match(r"^[ \t]*(\||#\+\S|#( |$)|:( |$)|:[\w-]+:[ \t]*$|-{5,}[ \t]*$|\\begin\{|\[fn:)", line)
    )


def _is_heading(line: str) -> bool:
    return bool(re.match(r"^\*+ ", line))


def _cell(text: str) -> object:
    """`org-babel-read` with Lisp evaluation inhibited."""
    value = babel_read(text, None)
    if isinstance(value, LispForm):
        raise VarError(f"table cell {text}: {value.reason}")
    return value


def _read_table(lines: list[str], first: int) -> list[object]:
    """`org-babel-read-table` (`org-table-to-lisp`, then each cell read)."""
    table: list[object] = []
    for line in lines[first:]:
        match = re.match(r"^[ \t]*\|", line)
        if not match:
            break
        rest = line[match.end() :]
        if rest.startswith("-"):
            table.append(HLINE)
            continue
        row: list[object] = []
        pos = 0
        while True:
            pos += len(rest[pos:]) - len(rest[pos:].lstrip(" \t"))
            if pos >= len(rest):
                break
            end = matched(re.compile(r"[ \t]*(\||$)").search(rest, pos))  # `$` always matches
            row.append(_cell(rest[pos : end.start()]))
            pos = end.end()
        table.append(row)
    return table


def _read_fixed_width(lines: list[str], first: int) -> object:
    values = []
    for line in lines[first:]:
        match = re.match(r"^[ \t]*:( |$)", line)
        if not match:
            break
        values.append(line[match.end() :])
    text = "\n".join(values).strip(" \t\n\r")
    number = string_to_number(text)
    return number if number is not None else text


def _read_list(lines: list[str], first: int, ref: str) -> list[object]:
    """`org-babel-read-list`: each item as `org-list-to-lisp` gives it, (text [sublist...])."""
    items, _ = _list_items(lines, first, _indent_width(lines[first]))
    return [_item_value(lines, item) for item in items]


def _indent_width(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip(" "))


def _list_items(lines: list[str], first: int, indent: int) -> tuple[list[tuple[int, int]], int]:
    """The items (first line, end line) of the list whose bullets sit at INDENT; and its end."""
    items: list[tuple[int, int]] = []
    i = first
    while i < len(lines):
        line = lines[i]
        if not line.strip() or _is_heading(line) or _indent_width(line) != indent or not _ITEM.match(line):
            break
        j = i + 1
        while j < len(lines):
            if not lines[j].strip():
                if j + 1 < len(lines) and lines[j + 1].strip() and _indent_width(lines[j + 1]) > indent \
                        and not _is_heading(lines[j + 1]):
                    j += 1
                    continue
                break
            if _is_heading(lines[j]) or _indent_width(lines[j]) <= indent:
                break
            j += 1
        items.append((i, j))
        i = j
        while i < len(lines) and not lines[i].strip() and i + 1 < len(lines) and lines[i + 1].strip() \
                and _indent_width(lines[i + 1]) == indent and _ITEM.match(lines[i + 1]):
            i += 1  # one blank line between items keeps the list going
    # An item runs to the next one, blank lines included; the last stops at its text.
    items = [(start, items[k + 1][0] if k + 1 < len(items) else end) for k, (start, end) in enumerate(items)]
    return items, i


def _item_value(lines: list[str], item: tuple[int, int]) -> list[object]:
    """One item: its text (bullet blanked, indentation removed), then its sublists."""
    start, end = item
    head = matched(re.match(r"[ \t]*\S+[ \t]*", lines[start]))
    indent = _indent_width(lines[start])
    body: list[object] = []
    text_lines: list[str] | None = [" " * len(head.group(0).expandtabs(8)) + lines[start][head.end() :]]
    i = start + 1
    while i < end:
        line = lines[i]
        if line.strip() and _ITEM.match(line) and _indent_width(line) > indent:
            if text_lines is not None:
                body.append(_list_text(text_lines))
                text_lines = None
            sub, i = _list_items(lines, i, _indent_width(line))
            body.append([_list_type(lines, sub[0][0]), *(_item_value(lines, s) for s in sub)])
            if i < end and not any(lines[k].strip() for k in range(i, end)):
                break
            if i < end and lines[i].strip():
                text_lines = []
            continue
        if text_lines is None:
            text_lines = []
        text_lines.append(line)
        i += 1
    if text_lines:
        body.append(_list_text(text_lines))
    return body


def _list_text(text_lines: list[str]) -> str:
    """The text with its final newline dropped and its indentation removed (blank lines kept)."""
    return remove_indentation("\n".join(text_lines))


def _list_type(lines: list[str], first: int) -> Symbol:
    """`org-list-get-list-type`: ordered (numbered), descriptive (a tag) or unordered."""
    bullet = matched(_ITEM.match(lines[first])).group(2)
    if re.search(r"[0-9A-Za-z]", bullet):
        return Symbol("ordered")
    if re.search(r"\s::(\s|$)", lines[first]):
        return Symbol("descriptive")
    return Symbol("unordered")


def _disassemble(variables: list[Var], params: list[tuple[str, object]]) -> tuple[list[Var], object]:
    """`org-babel-disassemble-tables`: column names, row names and hlines of table values."""
    get = dict(params).get
    hlines, colnames, rownames = get(":hlines"), get(":colnames"), get(":rownames")
    names: list[object] = []
    result = []
    for var in variables:
        value = var.value
        if isinstance(value, list):
            hlined = len(value) > 1 and value[1] == HLINE and HLINE not in value[2:]
            if colnames != "no" and (_truthy(colnames) or hlined):
                names.append([Symbol(var.name), *(value[0] if isinstance(value[0], list) else [value[0]])])
                value = value[2:] if len(value) > 1 and value[1] == HLINE else value[1:]
            if _truthy(rownames) and rownames != "no":
                value = [row[1:] if isinstance(row, list) else row for row in value]
            if _truthy(hlines) and hlines != "yes":
                value = [row for row in value if row != HLINE]
        result.append(Var(var.name, value))
    return result, names or NIL


def _truthy(value: object) -> bool:
    return value is not None and value != NIL

