"""The scribe's notes: source, hub, claim, quote and run notes, written through the one note writer.

Layout under `NOTES/extractions/` (ordinary notes: indexed, searchable, linked):
- `sources/NAME-SHA8.org`: one source note per source content (hash), reused by later runs;
- `RUN/hub-NAME.org`: per run and source, the hub linking every claim, by dimension;
- `RUN/claims/…`: one note per claim, tagged with the dimension's tag (a note without a
  tag of the schema is refused); the claim is the file's node and its quote the note's
  one heading, a node of its own (`:quote:`) holding the source offsets and the text
  verbatim. One file per claim rather than two keeps a run to about one note per claim;
- `RUN/run.org`: what the run extracted, its coverage, and links to every hub.
IDs are derived from the run, the source hash and the span, so a resumed run
finds the notes it already wrote instead of writing them twice.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import OrgkitError
from ..org import parse_org
from ..org.escape import escape_lines, link_description, one_line, verbatim_block
from ..org.write import atomic_write
from ..org.unique import NoteIds
from ..locator import note_ids
from .schema import Schema

NOTES_DIR = "extractions"
_NAMESPACE = uuid.UUID("6f2b5d1e-8c3a-4e7f-9b20-4a1d0c9e7f55")


class NoteRejected(OrgkitError):
    """A note the scribe refuses to write (no tag of the schema)."""


@dataclass(frozen=True)
class Written:
    id: str
    path: Path
    created: bool


def stable_id(*parts: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\0".join(parts)))


def slug(text: str, limit: int = 40) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:limit].rstrip("-") or "note"


def link(node_id: str, description: str) -> str:
    return f"[[id:{node_id}][{link_description(description)}]]"


def drawer(props: list[tuple[str, str]]) -> str:
    lines = [":PROPERTIES:"] + [f"{':' + k + ':':<10} {v}" for k, v in props] + [":END:"]
    return "\n".join(lines) + "\n"


def write_note(ids: NoteIds, path: Path, text: str, node_id: str) -> Written:
    """Write a new note; an existing file holding the same ID is left as it is (a resumed run)."""
    if path.exists():
        existing = path.read_text(encoding="utf-8")
        if node_id in existing:
            return Written(node_id, path, False)
        raise OrgkitError(f"{path}: exists and holds another note; not overwritten")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"), expected=None, ids=ids)
    return Written(node_id, path, True)


def replace_note(ids: NoteIds, path: Path, text: str, node_id: str) -> Written:
    """Write or rewrite a note the run owns (hub and run notes), refusing when it changed underneath."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_bytes() if path.exists() else None
    data = text.encode("utf-8")
    if old != data:
        atomic_write(path, data, expected=old, ids=ids)
    return Written(node_id, path, old is None)


def check_tags(text: str, path: Path, schema: Schema) -> None:
    """Refuse a claim note whose file node carries no tag of the schema."""
    parsed = parse_org(text, str(path))
    tags = {t for node in parsed.nodes if node.level == 0 for t in node.tags}
    if not tags & set(schema.tags()):
        raise NoteRejected(f"{path.name}: note has no tag of schema {schema.name!r} "
                           f"(tags: {', '.join(sorted(tags)) or 'none'}); not written")


def source_note(notes: Path, name: str, sha256: str, copy: str, original: str) -> Written:
    node_id = stable_id("source", sha256)
    path = notes / NOTES_DIR / "sources" / f"{slug(Path(name).stem)}-{sha256[:8]}.org"
    text = (drawer([("ID", node_id), ("SOURCE_SHA256", sha256), ("SOURCE_COPY", copy), ("ORIGINAL", original)])
            + f"#+title: Source: {one_line(name)}\n#+filetags: :source:\n\n"
            + f"A source document, copied by content hash into the data dir ({copy}).\n")
    return write_note(note_ids(notes), path, text, node_id)


def hub_path(notes: Path, run: str, index: int, name: str) -> Path:
    return notes / NOTES_DIR / run / f"hub-{index:02d}-{slug(Path(name).stem)}.org"


def hub_text(hub_id: str, run: str, schema: Schema, source: dict, claims: list[dict],
             vanished: Sequence[dict] = ()) -> str:
    """The hub of one source in one run: a link to every claim by dimension (a claim whose quote
    the audit lost says so), the earlier run's claims no longer found, and the hub it supersedes."""
    name = source["name"]
    parts = [drawer([("ID", hub_id), ("SOURCE", source["source_id"]), ("RUN", run), ("SCHEMA", schema.name)]),
             f"#+title: Claims from {one_line(name)} ({schema.name})\n#+filetags: :extraction:\n\n",
             f"Source: {link(source['source_id'], name)}\n"]
    earlier = source.get("supersedes")
    if earlier:
        parts.append(f"Supersedes: {link(earlier['hub_id'], 'Claims from ' + name + ' (run ' + earlier['run'] + ')')}"
                     f"; claims found again keep their notes.\n")
    for dim in schema.dimensions:
        mine = [c for c in claims if c["dimension"] == dim.name]
        parts.append(f"\n* {dim.name} ({len(mine)})\n")
        parts.extend(f"- {'(quote lost) ' if c.get('stale') else ''}{link(c['claim_id'], c['claim'])}\n"
                     for c in mine)
    if vanished:
        parts.append(f"\n* No longer found ({len(vanished)})\n")
        parts.extend(f"- {link(c['claim_id'], c['claim'])}\n" for c in vanished)
    return "".join(parts)


def quote_section(quote_id: str, source: dict, candidate: dict, tag: str, run: str,
                  stale: bool = False) -> str:
    """The quote as the claim note's one heading: its own node, with offsets, hash and the verbatim text.

    Written whole by the scribe and again by the audit when the quote moves or
    is lost, so the offsets in the drawer and in the sentence always agree.
    """
    props = [("ID", quote_id), ("SOURCE", source["source_id"]), ("START", str(candidate["start"])),
             ("END", str(candidate["end"])), ("SOURCE_SHA256", source["sha256"]),
             ("DIMENSION", one_line(candidate["dimension"])), ("RUN", run)]
    if stale:
        props.append(("STALE", "t"))
    tags = f":{tag}:quote:" if tag else ":quote:"
    where = (f"characters {candidate['start']}-{candidate['end']}" if not stale
             else f"no longer found in the source (was at characters {candidate['start']}-{candidate['end']})")
    return (f"* Quote from {one_line(source['name'], 60)} {tags}\n" + drawer(props)
            + f"From {link(source['source_id'], source['name'])}, {where}.\n\n"
            + verbatim_block(candidate["quote"]))


def claim_and_quote(notes: Path, run: str, schema: Schema, source: dict, hub_id: str,
                    candidate: dict) -> tuple[str, str, str]:
    """The (claim id, quote id, note text) of one grounded candidate: the claim as the file's
    node, its quote as the note's one heading (one file per claim, two nodes)."""
    dim = schema.dimension(candidate["dimension"])
    tag = dim.tag if dim else ""
    key = (run, source["sha256"], candidate["dimension"], str(candidate["start"]), str(candidate["end"]),
           candidate["claim"])
    claim_id, quote_id = stable_id("claim", *key), stable_id("quote", *key)
    claim = one_line(candidate["claim"])
    text = (drawer([("ID", claim_id), ("DIMENSION", one_line(candidate["dimension"])), ("SCHEMA", schema.name),
                    ("RUN", run), ("QUOTE", quote_id)])
            + f"#+title: {one_line(claim, 120)}\n"
            + (f"#+filetags: :{tag}:claim:\n" if tag else "#+filetags: :claim:\n")
            + f"\n{escape_lines(claim)}\n\n"
            + f"- quote: {link(quote_id, 'Quote: ' + candidate['quote'])}\n"
            + f"- hub: {link(hub_id, 'Claims from ' + source['name'])}\n\n"
            + quote_section(quote_id, source, candidate, tag, run))
    return claim_id, quote_id, text


def claim_path(notes: Path, run: str, index: int, candidate: dict, claim_id: str) -> Path:
    stem = f"{index:02d}-{slug(candidate['dimension'], 20)}-{candidate['start']}-{claim_id[:8]}.org"
    return notes / NOTES_DIR / run / "claims" / stem


def run_note_text(run_id: str, run: str, schema: Schema, sources: list[dict], audits: list[dict],
                  failed: list[dict]) -> str:
    parts = [drawer([("ID", run_id), ("RUN", run), ("SCHEMA", schema.name)]),
             f"#+title: Extraction run {run} ({schema.name})\n#+filetags: :extraction:\n\n",
             f"Schema {schema.name!r} ({schema.title}) over {len(sources)} source(s).\n\n* Sources\n"]
    for source, audit in zip(sources, audits):
        coverage = ", ".join(f"{d}: {n}" for d, n in (audit or {}).get("coverage", {}).items())
        parts.append(f"- {link(source['hub_id'], 'Claims from ' + source['name'])}: "
                     f"{(audit or {}).get('quotes', 0)} quote(s) ({coverage or 'not audited'})\n")
    if failed:
        parts.append("\n* Failed tasks\n")
        parts.extend(f"- {f['task']} ({f['source']}): {one_line(f['error'], 200)}\n" for f in failed)
    return "".join(parts)
