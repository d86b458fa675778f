"""Header arguments: parsing, property inheritance and merging, as ob-core does them.

A block's parameters are Org's defaults, then `header-args` and
`header-args:LANG` (from property drawers, inherited up the outline, with
`+` accumulation, and from #+PROPERTY), then the `#+begin_src` line, then the
#+HEADER lines.  Later values win, except for `:results` and `:exports`, whose
words merge within exclusive groups.
"""

from __future__ import annotations

import re
from typing import Iterable

from .document import OrgDocument, SrcBlock
from .elisp import babel_read
from .evaluate import Environment

Params = list[tuple[str, object]]

DEFAULT_PARAMS: Params = [
    (":session", "none"),
    (":results", "replace"),
    (":exports", "code"),
    (":cache", "no"),
    (":noweb", "no"),
    (":hlines", "no"),
    (":tangle", "no"),
]
_RESULTS_GROUPS = [
    ["file", "list", "vector", "table", "scalar", "verbatim"],
    ["raw", "html", "latex", "org", "code", "pp", "drawer", "link", "graphics"],
    ["replace", "silent", "none", "append", "prepend"],
    ["output", "value"],
]
_EXPORTS_GROUPS = [["code", "results", "both", "none"]]
_ARG_RE = re.compile(r"([^ \f\t\n\r\v]+)[ \f\t\n\r\v]+([^ \f\t\n\r\v]+.*)")


def balanced_split(string: str, on_space: bool = False) -> list[str]:
    """`org-babel-balanced-split`, respecting () [] and "...".

    Header arguments split on a blank followed by a colon (both dropped); `:var`
    lists split on single spaces (`on_space`).
    """
    result: list[str] = []
    partial: list[str] = []
    i = 0
    n = len(string)
    while i < n:
        char = string[i]
        before = string[i - 1] if i > 0 else None
        split_here = char == " " if on_space else (before in (" ", "\t") and char == ":")
        if split_here:
            if partial and not on_space:
                partial.pop()
            if partial:
                result.append("".join(partial))
                partial = []
            i += 1
        elif char in "([":
            end = _balanced_end(string, i)
            if end is None:
                partial.append(char)
                i += 1
            else:
                partial.extend(string[i:end])
                i = end
        elif char == '"' and before != "\\":
            match = re.compile(r'[^\\]"').search(string, i)
            if match:
                partial.extend(string[i : match.end()])
                i = match.end()
            else:
                partial.append(char)
                i += 1
        else:
            partial.append(char)
            i += 1
    if partial:
        result.append("".join(partial))
    return result


def _balanced_end(string: str, start: int) -> int | None:
    openings = [string[start]]
    i = start + 1
    while openings:
        match = re.compile(r"[\]()\[]").search(string, i)
        if not match:
            return None
        char = match.group(0)
        i = match.end()
        if char in "[(":
            openings.append(char)
        elif char == "]":
            if openings[-1] == "[":
                openings.pop()
        elif openings[-1] == "(":
            openings.pop()
    return i


def parse_header_arguments(string: str | None, env: Environment | None) -> Params:
    """`org-babel-parse-header-arguments`: an alist of (":key", value).

    ENV is the buffer that pure Lisp values are evaluated in; None reads them "light".
    """
    if not string or not re.search(r"[^ \r\t\n]", string):
        return []
    raw = balanced_split(string)
    args = raw[:1] + [":" + r for r in raw[1:]]
    params: Params = []
    for arg in args:
        match = _ARG_RE.search(arg)
        if match:
            params.append((match.group(1), babel_read(_chomp(match.group(2)), env)))
        else:
            params.append((_chomp(arg), None))
    return _split_vars(params)


def _chomp(string: str) -> str:
    return string.rstrip(" \f\t\n\r\v")


def _split_vars(params: Params) -> Params:
    """`org-babel-parse-multiple-vars`: `:var a=1, b=2` becomes two :var entries."""
    out: Params = []
    for key, value in params:
        if key == ":var" and isinstance(value, str):
            pieces = _join_near_equals(balanced_split(value, on_space=True))
            out.extend((":var", p.strip()) for p in pieces)
        else:
            out.append((key, value))
    return out


def _join_near_equals(parts: list[str]) -> list[str]:
    joined: list[str] = []
    for part in parts:
        if joined and (joined[-1].endswith("=") or part.startswith("=")):
            joined[-1] += part
        else:
            joined.append(part)
    return joined


def _property_re(name: str) -> re.Pattern[str]:
    return re.compile(r"^[ \t]*:" + re.escape(name) + r":(?:()$|[ \t]+(.*?))[ \t]*$", re.IGNORECASE)


def local_values(doc: OrgDocument, heading: int | None, name: str) -> list[str | None] | None:
    """`org--property-local-values`: base value then `NAME+` values, or None."""
    lines = doc.drawer_lines(heading)
    if not lines:
        return None
    base_re, plus_re = _property_re(name), _property_re(name + "+")
    base: str | None = None
    for line in lines:
        match = base_re.match(line)
        if match:
            base = match.group(2) if match.group(2) is not None else ""
            break
    if base == "nil":
        base = None
    extra = []
    for line in lines:
        match = plus_re.match(line)
        if match:
            extra.append(match.group(2) if match.group(2) is not None else "")
    values = [base] + extra
    return None if values == [None] else values


def inherited_property(doc: OrgDocument, heading: int | None, name: str) -> str | None:
    """`org-entry-get` with inheritance: drawers up the outline, then the file's keywords.

    HEADING None stands for the top of the file (its property drawer), which Org
    treats as a level-0 parent of the first-level headings.
    """
    value: str | None = None
    entry = heading
    while True:
        local = local_values(doc, entry, name)
        if local:
            joined = " ".join(v for v in local if v is not None)
            value = joined + (" " + value if value is not None else "")
            if local[0] is not None:
                break
        moved, entry = _up_heading_or_point_min(doc, entry)
        if not moved:
            glob = _keyword_property(doc, name)
            if glob is not None:
                value = glob if value is None else glob + " " + value
            break
    return None if value == "nil" else value


def _up_heading_or_point_min(doc: OrgDocument, entry: int | None) -> tuple[bool, int | None]:
    """`org-up-heading-or-point-min`: whether Org climbs from ENTRY, and to which entry.

    A sub-heading climbs to its parent (an orphan one stops).  A first-level heading
    climbs to the start of the file, a level-0 entry whose drawer is the file's top
    drawer, unless the file starts with a heading: then Org 9.5 reads that heading's
    drawer, so every first-level heading inherits the first heading's properties.
    """
    if entry is None:
        return False, None
    heading = doc.headings[entry]
    if heading.level > 1:
        return heading.parent is not None, heading.parent
    if heading.line == 0:
        return False, None
    return True, 0 if doc.headings[0].line == 0 else None


def _keyword_property(doc: OrgDocument, name: str) -> str | None:
    for key, val in doc.keyword_properties:
        if key.lower() == name.lower():
            return None if val == "nil" else val
    return None


def merge_params(*alists: Iterable[tuple[str, object]]) -> Params:
    """`org-babel-merge-params` for the arguments tangling reads."""
    params: Params = []
    results: list[str] = []
    exports: list[str] = []
    variables: list[tuple[str, tuple[str, object]]] = []
    for alist in alists:
        for key, value in alist:
            if key == ":var":
                name_match = re.match(r"^([^= \f\t\n\r\v]+)[ \t]*=", value) if isinstance(value, str) else None
                name = name_match.group(1) if name_match else str(value)
                variables = [v for v in variables if v[0] != name] + [(name, (key, value))]
            elif key == ":results":
                results = _merge_words(_RESULTS_GROUPS, results, str(value).split() if value is not None else [])
            elif key == ":exports":
                exports = _merge_words(_EXPORTS_GROUPS, exports, str(value).split() if value else [])
            else:
                params = [(key, value)] + [p for p in params if p[0] != key]
    return [(":results", " ".join(results)), (":exports", " ".join(exports))] + [v[1] for v in variables] + params


def _merge_words(groups: list[list[str]], output: list[str], new: list[str]) -> list[str]:
    # Emacs keeps OUTPUT newest-first and reverses it through `delete-dups`.
    rev = list(reversed(output))
    for word in new:
        for group in groups:
            if word in group:
                rev = [o for o in rev if o not in group]
        rev.insert(0, word)
    seen: list[str] = []
    for word in rev:
        if word not in seen:
            seen.append(word)
    return list(reversed(seen))


def get(params: Params, key: str) -> object:
    """`(cdr (assq key params))`."""
    for k, v in params:
        if k == key:
            return v
    return None


def block_params(doc: OrgDocument, block: SrcBlock, evaluate: bool, machine: bool = False) -> Params:
    """The merged parameters of a block (`org-babel-get-src-block-info`); with `evaluate`, header
    Lisp evaluated (reading the machine only with `machine`: the owner's command line)."""
    lang = block.language or ""
    env = Environment.for_file(str(doc.path), machine) if evaluate else None
    from_props = [
        parse_header_arguments(inherited_property(doc, block.heading, "header-args"), env),
        parse_header_arguments(inherited_property(doc, block.heading, "header-args:" + lang), env) if lang else [],
    ]
    own = [parse_header_arguments(h, env) for h in [block.parameters, *block.headers]]
    merged = merge_params(DEFAULT_PARAMS, *from_props, *own)
    if evaluate:
        results = get(merged, ":results")
        merged.append((":result-params", str(results).split() if results else []))
    return merged
