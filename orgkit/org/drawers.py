"""Property drawers: where Org finds them, and what `org-entry-get` reads there."""

from __future__ import annotations

from . import syntax as sx


def drawer_line(lines: list[str], start: int, end: int, top: bool) -> int:
    """The line where this section's property drawer must begin, if it has one.

    At the top of the file only comment lines may precede it; under a heading
    it comes right after the heading, or after a planning line.
    """
    i = start
    if top:
        while i < end and sx.lead(lines[i]) == "#" and sx.COMMENT.match(lines[i]):
            i += 1
    elif i < end and sx.lead(lines[i]) in sx.PLANNING_LEADS and sx.PLANNING.match(lines[i]):
        i += 1
    return i


def property_drawer_at(lines: list[str], start: int, end: int, top: bool) -> tuple[int, int] | None:
    """Where `org-get-property-block` finds the drawer of this section, if any."""
    i = drawer_line(lines, start, end, top)
    if i >= end or not opens_property_drawer(lines[i]):
        return None
    return property_drawer_from(lines, i, end)


def opens_property_drawer(line: str) -> bool:
    """Whether `line` is a `:PROPERTIES:` line."""
    return line.lstrip(" \t")[:1] == ":" and sx.PROPERTIES_BEGIN.match(line) is not None


def property_drawer_from(lines: list[str], i: int, end: int) -> tuple[int, int] | None:
    """The drawer opened by the `:PROPERTIES:` line `i`, if only property lines and `:END:` follow."""
    for j in range(i + 1, end):
        if sx.is_drawer_end(lines[j]):
            return i, j
        if not sx.PROPERTY_LINE.match(lines[j]):
            return None
    return None


def body_text(text: str) -> str:
    """An org file's text without its top property drawer and leading `#+` keyword lines:
    what a model is shown of a note or a persona."""
    lines = text.split("\n")
    drawer = property_drawer_at(lines, 0, len(lines), True)
    start = drawer[1] + 1 if drawer else 0
    while start < len(lines) and (lines[start].lstrip().startswith("#+") or not lines[start].strip()):
        start += 1
    return "\n".join(lines[start:]).strip()


def drawer_properties(lines: list[str], first: int, last: int) -> list[tuple[str, str]]:
    """(key, value) of each property line between the PROPERTIES and END lines."""
    props = []
    for j in range(first + 1, last):
        m = sx.PROPERTY_VALUE.match(lines[j])
        if m:
            props.append((m.group(1), m.group(2) or ""))
    return props


def first_values(props: list[tuple[str, str]]) -> dict[str, str]:
    """Each property's first value, by upper-cased key: what org-roam stores as a node's
    properties, and what lets `entry_property` answer without reading the drawer again."""
    out: dict[str, str] = {}
    for key, value in props:
        out.setdefault(key.upper(), value)
    return out


def entry_property(props: list[tuple[str, str]], name: str,
                   first: dict[str, str] | None = None) -> str | None:
    """`org-entry-get` without inheritance: first NAME, then every NAME+.

    `first` is `first_values(props)`, when the caller asks for several names.
    """
    if not props:
        return None
    if first is None:
        first = first_values(props)
    upper = name.upper()
    base = first.get(upper)
    if upper + "+" not in first:  # the common case: one value or none
        return None if base is None or base == "nil" else base
    values = [base] + [v for k, v in props if k.upper() == upper + "+"]
    kept = [v for v in values if v is not None and v != "nil"]
    return " ".join(kept) if kept else None


def entry_node_id(props: list[tuple[str, str]], first: dict[str, str] | None = None) -> str | None:
    """The ID of an entry that org-roam counts as a node (ROAM_EXCLUDE respected)."""
    if not props:
        return None
    if first is None:
        first = first_values(props)
    value = entry_property(props, "ID", first)
    if not value or not value.strip():
        return None
    if entry_property(props, "ROAM_EXCLUDE", first) is not None:
        return None
    return value
