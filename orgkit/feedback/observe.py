"""Compare generated notes with the notes as they are now, and record the corrections.

Run by `orgkit index` after every update (and callable on its own): for each
generated node, the current fields are read with the org parser from the one
file that holds the node now (found through the index, so a renamed or moved
note is still found) and compared with the generation record. Differences
become events; event IDs make a difference seen again by a later run the same
event, so running this twice records nothing new. With no generation record
it returns at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

from ..config import Config, ensure_state_dir
from ..org.names import slugify
from ..errors import OrgkitError
from ..files import replace_file
from ..org import parse_org
from ..vault import Vault, read_org_text
from .events import Event, append_events, link_change_id, load_events, override_id, sha256
from .fields import FIELDS, NoteFields, normalized, note_fields, prose
from .generated import GenerationRecord, latest_records, now
from .paths import events_path, generated_path


class NoteLookup(Protocol):
    """Where the current notes are: the file of each node ID, and node titles."""

    def files(self, ids: list[str]) -> dict[str, str]: ...

    def title(self, node_id: str) -> str | None: ...

    def hashes(self, paths: list[str]) -> dict[str, str]:
        """Content hashes of files, so files compared before and unchanged since are skipped."""
        ...


@dataclass
class ObserveResult:
    """What a comparison found: nodes compared, events new to the record, problems."""

    compared: int = 0
    events: list[Event] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"compared": self.compared, "new_events": len(self.events), "warnings": self.warnings}


class IndexLookup:
    """Node files and titles from the SQLite index (brought up to date by the caller)."""

    def __init__(self, index) -> None:
        self.index = index

    def files(self, ids: list[str]) -> dict[str, str]:
        return {node_id: sorted(files)[0] for node_id, files in self.index.locate(ids).items()}

    def title(self, node_id: str) -> str | None:
        return self.index.title_of(node_id)

    def hashes(self, paths: list[str]) -> dict[str, str]:
        wanted = set(paths)
        return {path: state.hash for path, state in self.index.file_states().items() if path in wanted}


class VaultLookup:
    """Node files and titles from a full parse of the notes (when there is no index)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def files(self, ids: list[str]) -> dict[str, str]:
        return {i: self.vault.by_id[i].file for i in ids if i in self.vault.by_id}

    def title(self, node_id: str) -> str | None:
        node = self.vault.by_id.get(node_id)
        return node.title if node else None

    def hashes(self, paths: list[str]) -> dict[str, str]:
        return {}  # no index: every file is compared


def observe(config: Config, lookup: NoteLookup | None = None) -> ObserveResult:
    """Record the corrections made to generated notes since they were written."""
    result = ObserveResult()
    if not generated_path(config).exists():
        return result
    records = latest_records(config)
    if not records:
        return result
    lookup = lookup or VaultLookup(Vault.load(config.notes))
    where = lookup.files(sorted(records))
    by_file: dict[str, list[GenerationRecord]] = {}
    for record in records.values():
        by_file.setdefault(where.get(record.node_id, ""), []).append(record)
    slugs = _recorded_slugs(config)
    seen = _Compared(config)
    hashes = lookup.hashes(sorted(by_file))
    found: list[Event] = []
    for rel, group in sorted(by_file.items()):
        if not rel:
            found += [e for r in group for e in _deleted(config, r)]
            continue
        stamp = seen.stamp(hashes.get(rel), group)
        if stamp is not None and seen.old.get(rel) == stamp:
            result.compared += len(group)
            seen.new[rel] = stamp
            continue
        try:
            text = read_org_text(config.notes, rel)
        except OrgkitError as exc:
            result.warnings.append(str(exc))
            continue
        parsed = parse_org(text, rel)
        for record in group:
            current = note_fields(parsed, text, record.node_id)
            if current is None:
                continue
            result.compared += 1
            found += _field_events(record, current)
            found += _link_events(record, current, lookup, slugs)
        stamp = seen.stamp(hashes.get(rel), group)
        if stamp is not None:
            seen.new[rel] = stamp
    result.events = append_events(config, found)
    seen.save()
    return result


class _Compared:
    """Files already compared, by content hash and generation records (derived, in the state dir).

    A file whose content and records are as they were when it was last compared
    cannot hold a new correction, so it is not read again; deleting the file
    only costs one full comparison. Saved after the events are appended, so a
    run killed in between compares again.
    """

    def __init__(self, config: Config) -> None:
        self.path = config.state_dir / "feedback-compared.json"
        self.config = config
        try:
            old = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        # Without an events file (a first run, or the user removed it) everything is compared.
        keep = isinstance(old, dict) and events_path(config).exists()
        self.old: dict[str, str] = old if keep else {}
        self.new: dict[str, str] = {}

    @staticmethod
    def stamp(file_hash: str | None, group: list[GenerationRecord]) -> str | None:
        if file_hash is None:
            return None
        return sha256(file_hash, *sorted(f"{r.node_id} {r.time} {r.file}" for r in group))

    def save(self) -> None:
        if self.new == self.old:
            return
        ensure_state_dir(self.config)
        replace_file(self.path, json.dumps(self.new, sort_keys=True).encode("utf-8"))


def _event(record: GenerationRecord, **values) -> dict:
    return dict(extractor=record.generator.role, node_type=record.node_type, source_path=record.source_path,
                schema=record.generator.schema, schema_version=record.generator.schema_version,
                node_id=record.node_id, time=now(), **values)


def _field_events(record: GenerationRecord, current: NoteFields) -> list[Event]:
    out = []
    for name in FIELDS:
        before, after = record.fields.value(name), current.value(name)
        if normalized(before) == normalized(after):
            continue
        if isinstance(before, str) and isinstance(after, str) and name == "body" \
                and normalized(prose(before)) == normalized(prose(after)):
            continue  # only links changed: link change events say so
        action = "delete" if normalized(after) == "" else "edit"
        out.append(Event(id=override_id(record.generator.schema_version, record.source_path, record.node_id,
                                        name, action, before, after),
                         source="override", **_event(record, field=name, action=action, before=before, after=after)))
    return out


def _deleted(config: Config, record: GenerationRecord) -> list[Event]:
    """A generated node that no longer exists: one `note` override (deleted).

    A node whose last file still holds its ID (unreadable right now, or a
    duplicate ID) is not taken for deleted.
    """
    try:
        if record.node_id.encode() in (config.notes / record.file).read_bytes():
            return []
    except OSError:
        pass
    before = record.fields.title
    return [Event(id=override_id(record.generator.schema_version, record.source_path, record.node_id, "note",
                                 "delete", before, None),
                  source="override", **_event(record, field="note", action="delete", before=before, after=None))]


def _link_events(record: GenerationRecord, current: NoteFields, lookup: NoteLookup,
                 slugs: dict[tuple[str, str, str, str], str]) -> list[Event]:
    before, after = set(record.fields.links), set(current.links)
    out = []
    for action, links in (("add", sorted(after - before)), ("remove", sorted(before - after))):
        for link in links:
            kind, _, dest = link.partition(":")
            target_node_id = dest if kind == "id" else ""
            key = (record.source_path, record.node_id, action, target_node_id)
            if kind == "id":
                slug = slugs.get(key) or slugify(lookup.title(dest) or "")
            else:
                slug = slugify(link)
            out.append(Event(
                id=link_change_id(record.source_path, record.node_id, action, slug, target_node_id),
                source="link_change", target_slug=slug, target_node_id=target_node_id,
                **_event(record, field="links", action=action, before=link if action == "remove" else None,
                         after=link if action == "add" else None)))
    return out


def _recorded_slugs(config: Config) -> dict[tuple[str, str, str, str], str]:
    """The target slug each recorded id-link change was first recorded with.

    A later run reuses it, so retitling the link's target does not make the
    same link change a second event.
    """
    out: dict[tuple[str, str, str, str], str] = {}
    for event in load_events(config):
        if event.source == "link_change" and event.target_node_id:
            out.setdefault((event.source_path, event.node_id, event.action, event.target_node_id),
                           event.target_slug)
    return out
