"""Extraction schemas: org files that are at once the rubric and the comparison index.

A schema file has a top property drawer with `:ID:`, `:ORGKIT_SCHEMA: NAME` and
`:GROUNDED: t` (or `nil`), a `#+title:`, and one level-1 heading per
dimension. Each dimension heading carries a `:TAG:` property (the org tag its
claim and quote notes get, so search, scan and backlinks can compare one
dimension across many sources) and optionally `:HEADINGS:` (comma-separated
section headings that usually hold this dimension in a source document). The
heading's body is the rubric.

Where schemas come from, in order: a file path given directly (needs no
registration), the notes dir's overlay `NOTES/schemas/*.org` (the user's,
versioned with the notes), then the templates shipped in the package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection

from ..confine import looks_like_path
from ..errors import NotFound, OrgkitError
from ..instructions import SCHEMAS_DIR
from ..org import parse_org
from ..org import syntax as sx
from ..org.drawers import drawer_properties, property_drawer_at
from ..org.outline import Outline
from ..org.text import decode_org

TEMPLATE_DIR = Path(__file__).with_name("templates")
_TRUE, _FALSE = {"t", "true", "yes"}, {"nil", "false", "no"}


class SchemaError(OrgkitError):
    """A schema file that is not a valid schema; the message names file and line."""


@dataclass(frozen=True)
class Dimension:
    name: str
    tag: str
    rubric: str
    headings: tuple[str, ...] = ()
    line: int = 0

    def to_json(self) -> dict:
        return {"name": self.name, "tag": self.tag, "rubric": self.rubric, "headings": list(self.headings)}


@dataclass(frozen=True)
class Schema:
    id: str
    name: str
    title: str
    grounded: bool
    dimensions: tuple[Dimension, ...]
    path: Path
    origin: str  # "overlay", "template" or "file"
    description: str = ""
    text: str = field(default="", repr=False)
    min_score: float | None = None  # :MIN_SCORE:, the score a claim of the offline extractor needs

    def dimension(self, name: str) -> Dimension | None:
        return next((d for d in self.dimensions if d.name == name), None)

    def tags(self) -> dict[str, str]:
        return {d.tag: d.name for d in self.dimensions}

    def summary(self) -> dict:
        return {"name": self.name, "id": self.id, "title": self.title, "grounded": self.grounded,
                "origin": self.origin, "path": str(self.path),
                "dimensions": [d.name for d in self.dimensions]}

    def to_json(self) -> dict:
        return {**self.summary(), "description": self.description,
                "dimensions": [d.to_json() for d in self.dimensions]}


def parse_schema(text: str, path: Path, origin: str) -> Schema:
    """The schema in `text`, or a SchemaError naming the file and line of the first fault."""
    parsed = parse_org(text, str(path))
    outline = Outline(text)
    lines = outline.lines
    top = property_drawer_at(lines, 0, outline.heading_lines[0] if outline.heading_lines else len(lines), True)
    props = {k.upper(): v.strip() for k, v in drawer_properties(lines, *top)} if top else {}

    def fail(line: int, message: str) -> SchemaError:
        return SchemaError(f"{path}:{line}: {message}")

    if not props.get("ORGKIT_SCHEMA"):
        raise fail(1, "not a schema: the top property drawer needs :ORGKIT_SCHEMA: NAME")
    if not props.get("ID"):
        raise fail(1, "the schema's top property drawer needs an :ID:")
    grounded_raw = props.get("GROUNDED", "t").lower()
    if grounded_raw not in _TRUE | _FALSE:
        raise fail(1, f":GROUNDED: must be t or nil, not {props['GROUNDED']!r}")
    min_score = _score(props.get("MIN_SCORE"), lambda: fail(1, ":MIN_SCORE: must be a number from 0 to 1"))
    dimensions = _dimensions(outline, fail)
    if not dimensions:
        raise fail(1, "a schema needs at least one level-1 heading (a dimension) with a :TAG: property")
    first_heading = outline.heading_lines[0] if outline.heading_lines else len(lines)
    description = _body(lines, (top[1] + 1) if top else 0, first_heading)
    return Schema(id=props["ID"], name=props["ORGKIT_SCHEMA"], title=parsed.title, grounded=grounded_raw in _TRUE,
                  dimensions=tuple(dimensions), path=path, origin=origin, description=description, text=text,
                  min_score=min_score)


def _score(raw: str | None, fail: Callable[[], SchemaError]) -> float | None:
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        raise fail() from None
    if not 0 <= value <= 1:
        raise fail()
    return value


def _dimensions(outline: Outline, fail) -> list[Dimension]:
    lines = outline.lines
    found: list[Dimension] = []
    level_one = [(i, k) for k, (i, lvl) in enumerate(zip(outline.heading_lines, outline.levels)) if lvl == 1]
    for n, (i, _) in enumerate(level_one):
        end = level_one[n + 1][0] if n + 1 < len(level_one) else len(lines)
        m = outline.pattern.match(lines[i])
        name = (m.group(4) if m else lines[i].lstrip("* ")).strip()
        drawer = property_drawer_at(lines, i + 1, end, False)
        props = {k.upper(): v.strip() for k, v in drawer_properties(lines, *drawer)} if drawer else {}
        tag = props.get("TAG", "")
        if not tag:
            raise fail(i + 1, f"dimension {name!r} has no :TAG: property")
        if not sx.TAG.fullmatch(tag):
            raise fail(i + 1, f"dimension {name!r}: tag {tag!r} is not an org tag (letters, digits, _@#%)")
        if any(d.tag == tag for d in found):
            raise fail(i + 1, f"tag {tag!r} is used by two dimensions")
        if any(d.name == name for d in found):
            raise fail(i + 1, f"two dimensions are named {name!r}")
        headings = tuple(h.strip() for h in props.get("HEADINGS", "").split(",") if h.strip())
        body_start = (drawer[1] + 1) if drawer else i + 1
        found.append(Dimension(name=name, tag=tag, rubric=_body(lines, body_start, end),
                               headings=headings, line=i + 1))
    return found


def _body(lines: list[str], start: int, end: int) -> str:
    kept = [line for line in lines[start:end] if not line.lstrip().startswith("#+")]
    return "\n".join(kept).strip()


def read_schema(path: Path, origin: str) -> Schema:
    try:
        text = decode_org(path.read_bytes())
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise SchemaError(f"{path}: {exc}") from None
    return parse_schema(text, path, origin)


def overlay_dir(notes: Path) -> Path:
    return notes / SCHEMAS_DIR


def waiting_in_overlay(notes: Path, pending: Callable[[], Collection[str]]) -> Collection[str]:
    """`pending()` (the deposits waiting for review), asked only when the overlay holds a file."""
    folder = overlay_dir(notes)
    return pending() if folder.is_dir() and any(folder.glob("*.org")) else ()


def overlay_schemas(notes: Path, waiting: Collection[str] = ()) -> list[Schema]:
    """Every schema in the notes dir's overlay (a broken one is an error naming it), but for
    the `waiting` files (paths relative to the notes: the memory flow's deposits no person
    has admitted): those are notes waiting for review, not schemas."""
    folder = overlay_dir(notes)
    files = sorted(folder.glob("*.org")) if folder.is_dir() else []
    return [read_schema(p, "overlay") for p in files if f"{SCHEMAS_DIR}/{p.name}" not in waiting]


def templates() -> list[Schema]:
    return [read_schema(p, "template") for p in sorted(TEMPLATE_DIR.glob("*.org"))]


def list_schemas(notes: Path, waiting: Collection[str] = ()) -> list[Schema]:
    """Overlay schemas, then the templates not shadowed by an overlay schema of the same name."""
    overlay = overlay_schemas(notes, waiting)
    names = {s.name for s in overlay}
    return overlay + [t for t in templates() if t.name not in names]


def resolve_schema(notes: Path, spec: str, waiting: Collection[str] = ()) -> Schema:
    """`--schema S`: a file path, else an overlay schema by name, else a template by name.

    The chosen schema's tags are checked against every overlay schema's: a clash
    is an error naming both schemas.
    """
    schema = _find(notes, spec, waiting)
    check_tags(notes, schema, waiting)
    return schema


def _find(notes: Path, spec: str, waiting: Collection[str]) -> Schema:
    candidate = Path(spec).expanduser()
    if looks_like_path(spec):
        if not candidate.is_file():
            raise NotFound(f"schema file not found: {spec}")
        return read_schema(candidate, "file")
    for schema in list_schemas(notes, waiting):
        if schema.name == spec:
            return schema
    known = ", ".join(sorted(s.name for s in list_schemas(notes, waiting))) or "none"
    raise NotFound(f"unknown schema {spec!r} (known: {known}; or give a file path)")


def check_tags(notes: Path, schema: Schema, waiting: Collection[str] = ()) -> None:
    """Tags are unique across the overlay's schemas plus `schema`."""
    owners: dict[str, Schema] = {}
    others = [s for s in overlay_schemas(notes, waiting) if s.path.resolve() != schema.path.resolve()]
    for current in [*others, schema]:
        for dim in current.dimensions:
            other = owners.get(dim.tag)
            if other is not None and other.path.resolve() != current.path.resolve():
                raise SchemaError(f"tag {dim.tag!r} is used by schema {other.name!r} ({other.path}) "
                                  f"and by schema {current.name!r} ({current.path})")
            owners[dim.tag] = current


def init_schema(notes: Path, template: str) -> Schema:
    """Copy template `template` into the overlay with a fresh ID; never overwrites."""
    from ..org.ids import new_id
    from ..org.write import atomic_write
    from ..locator import note_ids

    source = next((t for t in templates() if t.name == template), None)
    if source is None:
        known = ", ".join(t.name for t in templates())
        raise NotFound(f"unknown schema template {template!r} (templates: {known})")
    dest = overlay_dir(notes) / f"{source.name}.org"
    if dest.exists():
        raise OrgkitError(f"{dest}: already exists; not overwritten")
    text = re.sub(r"(?m)^(:ID:[ \t]+)\S+", lambda m: m.group(1) + new_id(), source.text, count=1)
    dest.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(dest, text.encode("utf-8"), expected=None, ids=note_ids(notes))
    schema = read_schema(dest, "overlay")
    check_tags(notes, schema)
    return schema


def with_template_vocabulary(schema: Schema) -> Schema:
    """`schema` with what its dimensions leave unsaid borrowed from same-named template dimensions.

    A dimension without `:HEADINGS:` takes the headings of a shipped template's
    dimension of the same name (or named by one of its words: "alternatives considered") (so a
    home-made "problem" still knows that ADRs call it "Context"), and a rubric without quoted cue phrases takes that
    dimension's. The schema's own words always come first.
    """
    from dataclasses import replace

    known: dict[str, Dimension] = {}
    for template in templates():
        for dim in template.dimensions:
            known.setdefault(" ".join(dim.name.lower().split()), dim)
    dims = []
    for dim in schema.dimensions:
        name = " ".join(re.sub(r"[^\w]+", " ", dim.name.lower()).split())
        twin = known.get(name) or next((d for key, d in known.items() if f" {key} " in f" {name} "), None)
        if twin is None:
            dims.append(dim)
            continue
        headings = dim.headings or twin.headings
        rubric = dim.rubric
        if '"' not in rubric and "“" not in rubric:
            cues = re.findall(r"\"[^\"]{2,40}\"", twin.rubric)
            rubric = f"{rubric}\n{' '.join(cues)}".strip()
        dims.append(replace(dim, headings=headings, rubric=rubric))
    return replace(schema, dimensions=tuple(dims))
