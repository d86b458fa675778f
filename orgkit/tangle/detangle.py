"""Carry edits made in tangled code back into the org blocks they came from.

This is `org-babel-detangle` for files tangled with `:comments link` or `both`:
each `[[link][name]]` ... `name ends here` region is matched to its block by the
link and name Emacs wrote.  A region is only written back when the block tangles
to exactly its own text; a block whose tangled form was assembled (noweb) or
rewritten (a language wrapper) is reported instead of guessed at.  The org file
is replaced atomically, and not at all if it changed while we worked.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..org.write import ChangedUnderneath, atomic_write
from .comments import remove_indentation
from .document import decode
from .errors import TangleError
from .plan import Options, Spec, plan_file

_LINK_RE = re.compile(r"\[\[((?:[^\]\[\\]|\\(?:\\\\)*[\]\[]|\\+[^\]\[])+)\](?:\[([\s\S]+?)\])?\]")
_ESCAPE_RE = re.compile(r"^([ \t]*)(,*)(\*|#\+)", re.MULTILINE)


@dataclass
class Region:
    """A block's code as found between its link comments in the tangled file."""

    link: str
    name: str
    line: int  # 1-based line of the opening comment
    body: str


@dataclass
class DetangleResult:
    """What detangling changed, left alone, and could not map back."""

    updated: list[tuple[Path, str, int]] = field(default_factory=list)  # (org file, block, line)
    unchanged: int = 0
    unmapped: list[tuple[int, str, str]] = field(default_factory=list)  # (code line, name, reason)


def regions(text: str) -> list[Region]:
    """Link-comment regions of a tangled file, in order (as `org-babel-detangle` scans)."""
    found: list[Region] = []
    pos = 0
    while True:
        match = _LINK_RE.search(text, pos)
        if not match:
            return found
        name = match.group(2)
        end = re.compile(" " + re.escape(name) + " ends here").search(text, match.end()) if name else None
        if not end:
            pos = match.end()
            continue
        body_start = text.find("\n", match.end()) + 1
        end_line_start = text.rfind("\n", 0, end.start()) + 1
        line = text.count("\n", 0, match.start()) + 1
        found.append(Region(match.group(1), name, line, text[body_start:end_line_start] if body_start else ""))
        pos = end.end()


def detangle(code_file: Path, options: Options | None = None) -> DetangleResult:
    """Write edits in CODE_FILE back to the org blocks its link comments point to."""
    options = options or Options()
    code_file = Path(os.path.abspath(code_file))
    try:
        text = decode(code_file.read_bytes())
    except OSError as exc:
        raise TangleError(f"cannot read {code_file}: {exc.strerror}") from exc
    result = DetangleResult()
    edits: dict[Path, list[tuple[Spec, str]]] = {}
    specs_cache: dict[Path, list[Spec]] = {}
    for region in regions(text):
        org = _org_file(region.link, code_file)
        if org is None or not org.exists():
            result.unmapped.append((region.line, region.name, f"link {region.link} does not name an org file"))
            continue
        if org not in specs_cache:
            specs_cache[org] = [s for t in plan_file(org, options) if t.path == code_file for s in t.specs]
        matches = [s for s in specs_cache[org] if s.source_name == region.name and s.link == region.link]
        if len(matches) != 1:
            reason = "no block in the org file tangles here with that name" if not matches else "several blocks match"
            result.unmapped.append((region.line, region.name, reason))
            continue
        spec = matches[0]
        if region.body == spec.body + "\n":
            result.unchanged += 1
            continue
        if not _tangles_verbatim(spec, options):
            result.unmapped.append(
                (region.line, region.name,
                 "the block's code is assembled or rewritten when tangled (noweb or a language wrapper)")
            )
            continue
        edits.setdefault(org, []).append((spec, region.body))
    for org, changes in edits.items():
        _rewrite(org, changes, options)
        result.updated.extend((org, spec.source_name, spec.block.line) for spec, _ in changes)
    return result


def _org_file(link: str, code_file: Path) -> Path | None:
    if not link.startswith("file:"):
        return None
    path = re.sub(r"\\([\[\]\\])", r"\1", link[len("file:") :]).split("::", 1)[0]
    return Path(os.path.normpath(code_file.parent / os.path.expanduser(path)))


def _tangles_verbatim(spec: Spec, options: Options) -> bool:
    """Whether the tangled body is just the block's own text, so an edit maps back 1:1."""
    block = spec.block
    value = block.value[:-1] if block.value.endswith("\n") else block.value
    if not (options.preserve_indentation or block.preserve_indent):
        value = remove_indentation(value)
    own = remove_indentation(value).strip(" \t\n\r")
    return spec.body == own and "<<" not in value


def _rewrite(org: Path, changes: list[tuple[Spec, str]], options: Options) -> None:
    original = org.read_bytes()
    lines = decode(original).split("\n")
    for spec, body in sorted(changes, key=lambda c: -c[0].block.begin_line):
        block = spec.block
        begin = lines[block.begin_line]
        indent = len(begin) - len(begin.lstrip(" \t"))
        new = body
        if not (options.preserve_indentation or block.preserve_indent):
            pad = begin[:indent] + " " * 2
            new = "\n".join(pad + line if line.strip() else "" for line in remove_indentation(body).split("\n"))
        new = re.sub(r"(\n[ \t]*)*\Z", "\n", new, count=1) if new else ""
        new = _ESCAPE_RE.sub(r"\1\2,\3", new)
        lines[block.begin_line + 1 : block.end_line] = new[:-1].split("\n") if new else []
    data = "\n".join(lines).encode("utf-8", errors="surrogateescape")
    _replace_if_unchanged(org, original, data)


def _replace_if_unchanged(path: Path, original: bytes, data: bytes) -> None:
    try:
        # Only block bodies change (comma-escaped): no node can be added, and the org file
        # may live outside any notes directory, so it is checked against itself alone.
        atomic_write(path, data, expected=original, ids=None)
    except ChangedUnderneath:
        raise TangleError(f"{path} changed while detangling; nothing was written, run detangle again") from None
