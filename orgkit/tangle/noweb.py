"""Noweb expansion (`org-babel-expand-noweb-references`) without evaluating anything.

A reference `<<id>>` is looked up as Org does, in this order: a heading whose
CUSTOM_ID or ID is `id` (its text is inserted), the first block named `id`,
then every block whose `:noweb-ref` is `id`, joined by their `:noweb-sep`.
Text before the reference on its line is repeated on every inserted line.
A call such as `<<id(x=1)>>` runs code in Emacs, so it is refused here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ..org import syntax as sx
from .document import SRC_BLOCK_RE, OrgDocument, SrcBlock
from .errors import NeedsEvaluation, TangleError, located
from .headers import Params, block_params, get

NOWEB_RE = re.compile(r"(.*?)(<<([^ \t\n](?:.*?[^ \t\n])?)>>)")


def noweb_p(params: Params, context: str) -> bool:
    """`org-babel-noweb-p`: whether `:noweb` asks for expansion in CONTEXT."""
    allowed = {
        "tangle": {"yes", "tangle", "no-export", "strip-export"},
        "eval": {"yes", "no-export", "strip-export", "eval"},
    }[context]
    value = get(params, ":noweb")
    return bool(set(str(value or "").split()) & allowed)


@dataclass
class Info:
    """What `org-babel-get-src-block-info` returns, for the parts noweb needs."""

    block: SrcBlock
    body: str
    params: Params


@dataclass(frozen=True)
class Point:
    """Where point is in Emacs during an expansion: the entry, the element's name, the line
    and the column on it."""

    heading: int | None
    name: str | None
    line: int
    column: int = 0


@dataclass
class NowebExpander:
    """Expands references in one document; caches lookups across blocks."""

    doc: OrgDocument
    normalize: Callable[[SrcBlock], str]
    # Wraps an expansion in link comments (`:comments noweb`): (body, referenced block,
    # expanding block, point) where point is the line and element name `org-store-link` sees.
    comment_wrap: Callable[[str, Info, Info, "Point"], str] | None = None
    _light: dict[int, Info] = field(default_factory=dict)
    # Where Emacs' point is: the expanded block's start, moved by references to headings
    # (Emacs does not move it back, so the rest of the tangle of the block sees it there).
    point: "Point | None" = None
    _refs: dict[object, list[Info]] | None = None
    _named: dict[str, tuple[Info, int] | None] = field(default_factory=dict)

    def light_info(self, block: SrcBlock) -> Info:
        """Block info without evaluating header values (`light`)."""
        if block.index not in self._light:
            self._light[block.index] = Info(block, self.normalize(block), block_params(self.doc, block, evaluate=False))
        return self._light[block.index]

    def expand(self, info: Info, stack: tuple[int, ...] = ()) -> str:
        """INFO's body with its references expanded."""
        if not stack:
            # Emacs expands with point at the start of the tangled block.
            self.point = Point(info.block.heading, info.block.name, info.block.begin_line)
        if info.block.index in stack:
            raise TangleError(
                located(str(self.doc.path), info.block.line, _label(info.block), "noweb references form a cycle")
            )
        stack = stack + (info.block.index,)

        def replace(match: re.Match[str]) -> str:
            prefix, ref = match.group(1), match.group(3)
            expansion = self._resolve(ref, info, stack)
            return prefix + ("\n" + prefix).join(re.split(r"[\n\r]", expansion))

        return NOWEB_RE.sub(replace, info.body)

    def _resolve(self, ref: str, info: Info, stack: tuple[int, ...]) -> str:
        if re.search(r"\(.*\)", ref):
            raise NeedsEvaluation(
                located(
                    str(self.doc.path),
                    info.block.line,
                    _label(info.block),
                    f"noweb reference <<{ref}>> calls a block, which needs evaluation (orgkit never runs code)",
                )
            )
        heading = self._headline(ref)
        if heading is not None:
            # `org-babel-ref-goto-headline-id` leaves point on the heading.
            self.point = Point(heading, None, self.doc.headings[heading].line)
            return self._subtree_body(heading)
        found = self._named_block(ref)
        if found is not None:
            # Found by a regexp search, which leaves point after the block's `#+end_src`.
            named, end = found
            saved = self.point
            line = self.doc.line_of(end)
            self.point = Point(named.block.heading, named.block.name, line, end - self.doc.line_starts[line])
            try:
                return self._expand_body(named, info, stack)
            finally:
                self.point = saved
        refs = self._noweb_refs().get(ref)
        if not refs:
            return ""
        pieces: list[str] = []
        for i, item in enumerate(refs):
            pieces.append(self._expand_body(item, info, stack))
            if i < len(refs) - 1:
                sep = get(item.params, ":noweb-sep")
                pieces.append("\n" if sep is None else str(sep))
        return "".join(pieces)

    def _expand_body(self, item: Info, outer: Info, stack: tuple[int, ...]) -> str:
        body = self.expand(item, stack) if noweb_p(item.params, "eval") else item.body
        if get(outer.params, ":comments") == "noweb" and self.comment_wrap and self.point is not None:
            return self.comment_wrap(body, item, outer, self.point)
        return body

    def _named_block(self, ref: str) -> tuple[Info, int] | None:
        """The first block named REF, and where the regexp search that finds it ends."""
        if ref in self._named:
            return self._named[ref]
        pattern = re.compile(
            r"^[ \t]*#\+name:[ \t]*" + re.escape(ref) + r"[ \t]*(?:\n[ \t]*#\+\S+:.*)*?\n" + SRC_BLOCK_RE.pattern[1:],
            re.IGNORECASE | re.MULTILINE,
        )
        match = pattern.search(self.doc.text)
        found: tuple[Info, int] | None = None
        if match:
            line = self.doc.line_of(match.end())
            block = next((b for b in self.doc.blocks if b.begin_line <= line <= b.end_line), None)
            if block is not None and not self.doc.commented(block.heading):
                found = (self.light_info(block), match.end())
        self._named[ref] = found
        return found

    def _noweb_refs(self) -> dict[object, list[Info]]:
        if self._refs is None:
            self._refs = {}
            for block in self.doc.blocks:
                if self.doc.commented(block.heading):
                    continue
                info = self.light_info(block)
                self._refs.setdefault(get(info.params, ":noweb-ref"), []).append(info)
        return self._refs

    def headline_body(self, ref: str) -> str | None:
        """`org-babel-ref-headline-body` of the heading whose CUSTOM_ID or ID is REF, or None."""
        heading = self._headline(ref)
        return None if heading is None else self._subtree_body(heading)

    def _headline(self, ref: str) -> int | None:
        """The heading whose CUSTOM_ID (first) or ID is REF."""
        for prop in ("CUSTOM_ID", "ID"):
            prop_re = re.compile(r"^[ \t]*:" + prop + r":[ \t]+" + re.escape(ref) + r"[ \t]*$", re.IGNORECASE)
            for idx, heading in enumerate(self.doc.headings):
                if any(prop_re.match(line) for line in self.doc.drawer_lines(idx)):
                    return idx
        return None

    def _subtree_body(self, idx: int) -> str:
        heading = self.doc.headings[idx]
        end = len(self.doc.lines)
        for other in self.doc.headings[idx + 1 :]:
            if other.level <= heading.level:
                end = other.line
                break
        start = heading.line + 1
        if start < end and sx.PLANNING.match(self.doc.lines[start]):
            start += 1
        if heading.drawer:
            start = heading.drawer[1] + 1
        lines = len(self.doc.lines)
        start_pos = self.doc.line_starts[min(start, lines - 1)] if start < lines else len(self.doc.text)
        # `org-narrow-to-subtree` stops before the newline that ends the subtree.
        end_pos = self.doc.line_starts[end] - 1 if end < len(self.doc.lines) else len(self.doc.text)
        return self.doc.text[start_pos:end_pos]


def _label(block: SrcBlock) -> str:
    return block.name or f"at line {block.line}"
